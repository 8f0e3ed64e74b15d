//! A second opinion on `crd()`'s output: the API server's CRD validation rules that the
//! grammar can break, checked on the JSON kube-derive produced, independently of rsbuilder's
//! own checks. It is deliberately partial (a rule missing here only hides a class from the
//! count, it never flags a valid CRD): each rule below is one apiextensions-apiserver
//! enforces when a CRD is created.
//!
//! A kind whose `crd()` breaks one of them must be refused by rsbuilder; a kind that rsbuilder
//! turns into the same CRD is a silent acceptance, counted with the mismatches.

use serde_json::{Map, Value};

/// The first rule `crd` breaks, as `"<JSON path>: <rule>"`; `None` when none of the checked
/// rules is broken.
pub fn rejects(crd: &Value) -> Option<String> {
    let versions = crd["spec"]["versions"].as_array()?;
    for (i, v) in versions.iter().enumerate() {
        let Some(schema) = v.get("schema").and_then(|s| s.get("openAPIV3Schema")) else {
            continue;
        };
        let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
        let mut errs = Vec::new();
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            errs.push(format!("{path}: the root schema must be of type object"));
        }
        walk(schema, &path, Pos::Node, false, false, &mut errs);
        if let Some(fields) = v.get("selectableFields").and_then(Value::as_array) {
            for f in fields {
                let jp = f["jsonPath"].as_str().unwrap_or_default();
                if let Err(e) = selectable(schema, jp) {
                    errs.push(format!("spec.versions[{i}].selectableFields {jp}: {e}"));
                }
            }
        }
        if let Some(e) = errs.into_iter().next() {
            return Some(e);
        }
        if let Some(scale) = v.pointer("/subresources/scale") {
            for (key, prefixes) in [
                ("specReplicasPath", &[".spec."][..]),
                ("statusReplicasPath", &[".status."][..]),
                ("labelSelectorPath", &[".spec.", ".status."][..]),
            ] {
                if let Some(p) = scale.get(key).and_then(Value::as_str)
                    && !p.is_empty()
                    && !prefixes.iter().any(|pre| p.starts_with(pre))
                {
                    return Some(format!(
                        "spec.versions[{i}].subresources.scale.{key} {p}: must be a path under {}",
                        prefixes.join(" or ")
                    ));
                }
            }
        }
    }
    None
}

#[derive(Clone, Copy, PartialEq)]
enum Pos {
    /// A node that describes values: needs a type.
    Node,
    /// A subschema of anyOf / oneOf / allOf / not (a value validation).
    Junctor,
}

fn is_true(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

/// `in_junctor`: inside anyOf / oneOf / allOf / not; `ios`: the parent node is
/// `x-kubernetes-int-or-string`, whose `anyOf: [{type: integer}, {type: string}]` is allowed.
fn walk(v: &Value, path: &str, pos: Pos, in_junctor: bool, ios: bool, errs: &mut Vec<String>) {
    let Some(s) = v.as_object() else {
        if !v.is_boolean() {
            errs.push(format!("{path}: not a schema"));
        }
        return;
    };
    if s.contains_key("$ref") {
        errs.push(format!(
            "{path}: $ref is not allowed (the definition it names is not in a CRD)"
        ));
    }
    let int_or_string = is_true(s, "x-kubernetes-int-or-string");
    let preserve = is_true(s, "x-kubernetes-preserve-unknown-fields");
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(format!(
            "{path}: x-kubernetes-preserve-unknown-fields must be true or undefined"
        ));
    }
    let ty = s.get("type").and_then(Value::as_str);
    if pos == Pos::Node && !in_junctor && ty.is_none() && !int_or_string && !preserve {
        errs.push(format!("{path}: type is required (structural schema)"));
    }
    if in_junctor {
        for key in [
            "type",
            "description",
            "default",
            "nullable",
            "additionalProperties",
        ] {
            if s.contains_key(key) && !(key == "type" && (int_or_string || ios)) {
                errs.push(format!(
                    "{path}: {key} must not be set inside anyOf/oneOf/allOf/not (structural schema)"
                ));
            }
        }
    }
    if s.get("items").is_some_and(Value::is_array) {
        errs.push(format!("{path}: items must be a single schema"));
    }
    for key in [
        "patternProperties",
        "definitions",
        "dependencies",
        "additionalItems",
        "id",
    ] {
        if s.contains_key(key) {
            errs.push(format!("{path}: {key} is not supported"));
        }
    }
    if is_true(s, "uniqueItems") {
        errs.push(format!("{path}: uniqueItems cannot be true"));
    }
    if ty == Some("null") {
        errs.push(format!("{path}: type cannot be null"));
    }
    let has_props = s
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_props && s.contains_key("additionalProperties") {
        errs.push(format!(
            "{path}: properties and additionalProperties are mutually exclusive"
        ));
    }
    if let Some(mt) = s.get("x-kubernetes-map-type") {
        if ty != Some("object") {
            errs.push(format!(
                "{path}: x-kubernetes-map-type {mt} is only allowed on objects"
            ));
        }
        if !matches!(mt.as_str(), Some("atomic" | "granular")) {
            errs.push(format!(
                "{path}: x-kubernetes-map-type {mt} is neither atomic nor granular"
            ));
        }
    }
    if let Some(lt) = s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        if ty != Some("array") {
            errs.push(format!(
                "{path}: x-kubernetes-list-type is only allowed on arrays"
            ));
        }
        list_type(s, lt, path, errs);
    } else if s.contains_key("x-kubernetes-list-map-keys") {
        errs.push(format!(
            "{path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map"
        ));
    }
    if let Some(d) = s.get("default")
        && !in_junctor
        && let Err(e) = conforms(d, v)
    {
        errs.push(format!("{path}.default: {e}"));
    }
    // Every property a junctor names must be specified outside it too.
    for j in ["anyOf", "oneOf", "allOf"] {
        for (k, sub) in s
            .get(j)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(props) = sub.get("properties").and_then(Value::as_object) {
                let outer = s.get("properties").and_then(Value::as_object);
                for name in props.keys() {
                    if !outer.is_some_and(|o| o.contains_key(name)) {
                        errs.push(format!("{path}.{j}[{k}].properties.{name}: must be specified outside {j} as well (structural schema)"));
                    }
                }
            }
            walk(
                sub,
                &format!("{path}.{j}[{k}]"),
                Pos::Junctor,
                true,
                int_or_string,
                errs,
            );
        }
    }
    if let Some(not) = s.get("not") {
        walk(not, &format!("{path}.not"), Pos::Junctor, true, false, errs);
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            walk(
                p,
                &format!("{path}.properties.{k}"),
                pos,
                in_junctor,
                false,
                errs,
            );
        }
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        walk(
            items,
            &format!("{path}.items"),
            pos,
            in_junctor,
            false,
            errs,
        );
    }
    if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
        walk(
            ap,
            &format!("{path}.additionalProperties"),
            pos,
            in_junctor,
            false,
            errs,
        );
    }
}

fn list_type(s: &Map<String, Value>, lt: &str, path: &str, errs: &mut Vec<String>) {
    let items = s.get("items").and_then(Value::as_object);
    if matches!(lt, "set" | "map") && items.is_some_and(|i| is_true(i, "nullable")) {
        errs.push(format!(
            "{path}: the items of a list of type {lt} cannot be nullable"
        ));
    }
    match lt {
        "set" => {
            let Some(items) = items else { return };
            match items.get("type").and_then(Value::as_str) {
                Some("object")
                    if items.get("x-kubernetes-map-type").and_then(Value::as_str)
                        != Some("atomic") =>
                {
                    errs.push(format!(
                        "{path}: object items of a set must be x-kubernetes-map-type atomic"
                    ));
                }
                Some("array")
                    if items
                        .get("x-kubernetes-list-type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t != "atomic") =>
                {
                    errs.push(format!(
                        "{path}: array items of a set must be x-kubernetes-list-type atomic"
                    ));
                }
                _ => {}
            }
        }
        "map" => {
            let keys: Vec<&str> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if keys.is_empty() {
                errs.push(format!(
                    "{path}: x-kubernetes-list-type map needs x-kubernetes-list-map-keys"
                ));
                return;
            }
            let Some(items) = items else { return };
            if items.get("type").and_then(Value::as_str) != Some("object") {
                errs.push(format!(
                    "{path}: x-kubernetes-list-type map needs object items"
                ));
                return;
            }
            let props = items.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = items
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for k in keys {
                let Some(p) = props.and_then(|p| p.get(k)).and_then(Value::as_object) else {
                    errs.push(format!(
                        "{path}: list map key {k} is not a property of the items"
                    ));
                    continue;
                };
                if matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("array" | "object")
                ) {
                    errs.push(format!("{path}: list map key {k} must be a scalar"));
                }
                if !required.contains(&k) && !p.contains_key("default") {
                    errs.push(format!(
                        "{path}: list map key {k} must be required or have a default"
                    ));
                }
                if is_true(p, "nullable") {
                    errs.push(format!("{path}: list map key {k} must not be nullable"));
                }
            }
        }
        "atomic" => {}
        other => errs.push(format!("{path}: unknown x-kubernetes-list-type {other}")),
    }
}

/// Whether a default value validates against its schema and survives pruning (the API
/// server checks both): type, bounds, lengths, enum, and no unknown fields.
fn conforms(v: &Value, schema: &Value) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        return Ok(());
    };
    // A null default is no default once the API server reads it, and nulls inside a default
    // are pruned where the schema is not nullable.
    if v.is_null() {
        return Ok(());
    }
    if is_true(s, "x-kubernetes-int-or-string") {
        return if v.is_string() || v.is_i64() || v.is_u64() {
            Ok(())
        } else {
            Err(format!("{v} is neither an integer nor a string"))
        };
    }
    let preserve = is_true(s, "x-kubernetes-preserve-unknown-fields");
    if let Some(ty) = s.get("type").and_then(Value::as_str) {
        let ok = match ty {
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
            "number" => v.is_number(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            _ => true,
        };
        if !ok {
            return Err(format!("{v} is not of type {ty}"));
        }
    }
    if let (Some(n), Some(min)) = (v.as_f64(), s.get("minimum").and_then(Value::as_f64)) {
        let excl = is_true(s, "exclusiveMinimum");
        if n < min || (excl && n == min) {
            return Err(format!("{v} is below the minimum {min}"));
        }
    }
    if let (Some(n), Some(max)) = (v.as_f64(), s.get("maximum").and_then(Value::as_f64)) {
        let excl = is_true(s, "exclusiveMaximum");
        if n > max || (excl && n == max) {
            return Err(format!("{v} is above the maximum {max}"));
        }
    }
    if let Some(text) = v.as_str() {
        let len = text.chars().count() as u64;
        if s.get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| len < m)
        {
            return Err(format!("{v} is shorter than minLength"));
        }
        if s.get("maxLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| len > m)
        {
            return Err(format!("{v} is longer than maxLength"));
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            // Go's RE2 and the regex crate agree on the patterns the grammar writes.
            if regex::Regex::new(p).is_ok_and(|re| !re.is_match(text)) {
                return Err(format!("{v} does not match the pattern {p}"));
            }
        }
        let format = s.get("format").and_then(Value::as_str);
        if text.is_empty()
            && matches!(
                format,
                Some("email" | "ipv4" | "ipv6" | "date-time" | "uuid" | "hostname")
            )
        {
            return Err(format!(
                "\"\" is not a valid {}",
                format.unwrap_or_default()
            ));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        return Err(format!("{v} is not one of the enum values"));
    }
    if let Some(items) = v.as_array() {
        let n = items.len() as u64;
        if s.get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
        {
            return Err("fewer items than minItems".into());
        }
        if s.get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n > m)
        {
            return Err("more items than maxItems".into());
        }
        if let Some(is) = s.get("items") {
            for (i, x) in items.iter().enumerate() {
                conforms(x, is).map_err(|e| format!("[{i}]: {e}"))?;
            }
        }
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties").filter(|a| a.is_object());
        for (k, x) in obj {
            match (props.and_then(|p| p.get(k)), additional) {
                (Some(ps), _) => conforms(x, ps).map_err(|e| format!(".{k}: {e}"))?,
                (None, Some(ap)) => conforms(x, ap).map_err(|e| format!(".{k}: {e}"))?,
                (None, None) if preserve || props.is_none() && s.get("type").is_none() => {}
                (None, None) => {
                    return Err(format!("unknown field {k} (pruned by the API server)"));
                }
            }
        }
    }
    Ok(())
}

/// A selectable field must name a scalar field (string, integer, boolean) outside arrays.
fn selectable(root: &Value, json_path: &str) -> Result<(), String> {
    let mut node = root;
    for seg in json_path.trim_start_matches('.').split('.') {
        node = node
            .get("properties")
            .and_then(|p| p.get(seg))
            .ok_or_else(|| format!("{seg} is not a field of the schema"))?;
    }
    match node.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => Ok(()),
        other => Err(format!(
            "must be a string, integer or boolean field, not {other:?}"
        )),
    }
}
