// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Validation of an object against its kind's schema, as the apiextensions server's schema
//! validation (kube-openapi's `validate`) answers it: `(field, message)` causes in the API
//! server's wording.

use serde_json::Value;

use super::ApiKind;

impl ApiKind {
    /// Checks `obj` against the kind's schema, as the apiextensions server's schema validation
    /// (kube-openapi's `validate`) does: `type`, `nullable`, `required`, `enum`, `pattern`,
    /// `minLength`/`maxLength`, `format` ([`crate::apiserver::formats`]), `minimum`/`maximum` (and
    /// exclusive), `multipleOf`, `minItems`/`maxItems`, `uniqueItems`,
    /// `minProperties`/`maxProperties` (below the root), `additionalProperties` schemas,
    /// `allOf`/`anyOf`/`oneOf`/`not`; then the `x-kubernetes-list-type` set and map rules
    /// ([`crate::apiserver::listtype`]). `metadata` is checked by the registry, not here. Out:
    /// `(field, message)` causes in the API server's wording, empty when valid.
    pub fn validate(&self, obj: &Value) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        if let (Some(schema), Some(map)) = (&self.schema, obj.as_object()) {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    if matches!(k.as_str(), "metadata" | "apiVersion" | "kind") {
                        continue;
                    }
                    if let Some(v) = map.get(k) {
                        check(sub, v, k, &mut causes);
                    }
                }
            }
            required(schema, map, "", &mut causes);
            combinators(schema, obj, "", &mut causes);
            crate::apiserver::listtype::validate(schema, map, "", &mut causes);
        }
        causes
    }
}

fn required(
    schema: &Value,
    map: &serde_json::Map<String, Value>,
    path: &str,
    causes: &mut Vec<(String, String)>,
) {
    for r in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(r) && !matches!(r, "metadata" | "apiVersion" | "kind") {
            let field = if path.is_empty() {
                r.to_string()
            } else {
                format!("{path}.{r}")
            };
            causes.push((field, "Required value".into()));
        }
    }
}

/// The path of field `k` under `path`, as kube-openapi names it (`spec.replicas`; the field
/// alone at the root).
fn child_path(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// A bound as Go's `%v` prints a float64: `10`, not `10.0`.
fn go_number(x: f64) -> String {
    crate::apiserver::listtype::go_float(x)
}

/// Whether `x` is a whole number, as kube-openapi's `IsFloat64AJSONInteger` decides it for
/// `multipleOf` (a relative error under 1e-9 counts as whole).
fn is_json_integer(x: f64) -> bool {
    if !x.is_finite() {
        return false;
    }
    let g = x.trunc();
    if x == g {
        return true;
    }
    let diff = (x - g).abs();
    diff / (x.abs() + g.abs()).min(f64::MAX) < 1e-9
}

/// The `allOf`, `anyOf`, `oneOf` and `not` of `schema` on `v`, as kube-openapi's
/// `schemaPropsValidator` checks them: each alternative is checked on `v` at the same path;
/// a failed combinator is an `Invalid value: ""` cause at field `<nil>` (the API server
/// converts these errors without a field) naming the path, followed by the causes of the
/// alternative that came closest (`anyOf`, `oneOf` when none passed: the one with the fewest
/// causes, standing in for kube-openapi's count of passed checks) or of every failed one
/// (`allOf`).
fn combinators(schema: &Value, v: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    let run = |s: &Value| {
        let mut c = Vec::new();
        check(s, v, path, &mut c);
        c
    };
    let alternatives = |k: &str| {
        schema
            .get(k)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
    };
    let quoted = Value::String(path.to_string());
    let composite = |msg: String| ("<nil>".to_string(), format!("Invalid value: \"\": {msg}"));
    let closest = |results: Vec<Vec<(String, String)>>| {
        results
            .into_iter()
            .reduce(|best, r| if r.len() < best.len() { r } else { best })
            .unwrap_or_default()
    };
    if let Some(any) = alternatives("anyOf") {
        let results: Vec<_> = any.iter().map(run).collect();
        if !results.iter().any(Vec::is_empty) {
            causes.push(composite(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
            causes.extend(closest(results));
        }
    }
    if let Some(one) = alternatives("oneOf") {
        let results: Vec<_> = one.iter().map(run).collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid != 1 {
            let found = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            causes.push(composite(format!(
                "{quoted} must validate one and only one schema (oneOf). {found}"
            )));
            if valid == 0 {
                causes.extend(closest(results));
            }
        }
    }
    if let Some(all) = alternatives("allOf") {
        let results: Vec<_> = all.iter().map(run).collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        for r in results {
            causes.extend(r);
        }
        if valid != all.len() {
            let none = if valid == 0 { ". None validated" } else { "" };
            causes.push(composite(format!(
                "{quoted} must validate all the schemas (allOf){none}"
            )));
        }
    }
    if let Some(not) = schema.get("not").filter(|n| n.is_object())
        && run(not).is_empty()
    {
        causes.push(composite(format!(
            "{quoted} must not validate the schema (not)"
        )));
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(schema: &Value, v: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    if v.is_null() {
        if schema.get("nullable") != Some(&Value::Bool(true)) && schema.get("type").is_some() {
            causes.push((
                path.into(),
                format!(
                    "Invalid value: \"null\": {path} in body must be of type {}: \"null\"",
                    schema["type"].as_str().unwrap_or("object")
                ),
            ));
        }
        return;
    }
    let int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if let Some(want) = schema.get("type").and_then(Value::as_str) {
        let got = type_name(v);
        let fits = got == want || (want == "number" && got == "integer");
        if !fits && !int_or_string {
            causes.push((
                path.into(),
                format!(
                    "Invalid value: \"{got}\": {path} in body must be of type {want}: \"{got}\""
                ),
            ));
            return;
        }
    }
    combinators(schema, v, path, causes);
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        causes.push((
            path.into(),
            format!(
                "Unsupported value: {v}: supported values: {}",
                list.join(", ")
            ),
        ));
    }
    match v {
        Value::String(s) => {
            if let Some(p) = schema.get("pattern").and_then(Value::as_str)
                && let Ok(re) = regex::Regex::new(p)
                && !re.is_match(s)
            {
                causes.push((
                    path.into(),
                    format!("Invalid value: {v}: {path} in body should match '{p}'"),
                ));
            }
            let len = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                causes.push((
                    path.into(),
                    format!(
                        "Invalid value: {v}: {path} in body should be at least {min} chars long"
                    ),
                ));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                causes.push((
                    path.into(),
                    format!("Too long: may not be more than {max} bytes"),
                ));
            }
            // The apiextensions server keeps a format only on strings (and untyped values).
            if let Some(format) = schema.get("format").and_then(Value::as_str)
                && matches!(
                    schema.get("type").and_then(Value::as_str),
                    None | Some("string")
                )
                && crate::apiserver::formats::check(format, s) == Some(false)
            {
                causes.push((
                    path.into(),
                    format!("Invalid value: {v}: {path} in body must be of type {format}: {v}"),
                ));
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let excl = |k: &str| schema.get(k) == Some(&Value::Bool(true));
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                let bad = if excl("exclusiveMinimum") {
                    x <= min
                } else {
                    x < min
                };
                if bad {
                    let rel = if excl("exclusiveMinimum") {
                        "greater than"
                    } else {
                        "greater than or equal to"
                    };
                    causes.push((
                        path.into(),
                        format!(
                            "Invalid value: {v}: {path} in body should be {rel} {}",
                            go_number(min)
                        ),
                    ));
                }
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
                let bad = if excl("exclusiveMaximum") {
                    x >= max
                } else {
                    x > max
                };
                if bad {
                    let rel = if excl("exclusiveMaximum") {
                        "less than"
                    } else {
                        "less than or equal to"
                    };
                    causes.push((
                        path.into(),
                        format!(
                            "Invalid value: {v}: {path} in body should be {rel} {}",
                            go_number(max)
                        ),
                    ));
                }
            }
            if let Some(factor) = schema.get("multipleOf").and_then(Value::as_f64)
                && factor > 0.0
            {
                let quotient = if factor < 1.0 {
                    1.0 / factor * x
                } else {
                    x / factor
                };
                if !is_json_integer(quotient) {
                    causes.push((
                        path.into(),
                        format!(
                            "Invalid value: {}: {path} in body should be a multiple of {}",
                            go_number(x),
                            go_number(factor)
                        ),
                    ));
                }
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && n < min
            {
                causes.push((
                    path.into(),
                    format!("Invalid value: {n}: {path} in body should have at least {min} items"),
                ));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && n > max
            {
                causes.push((
                    path.into(),
                    format!("Too many: {n}: must have at most {max} items"),
                ));
            }
            if schema.get("uniqueItems") == Some(&Value::Bool(true))
                && items
                    .iter()
                    .enumerate()
                    .any(|(i, a)| items[i + 1..].contains(a))
            {
                causes.push((
                    path.into(),
                    format!("Invalid value: \"\": {path} in body shouldn't contain duplicates"),
                ));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"), causes);
                }
            }
        }
        Value::Object(map) => {
            // As kube-openapi's object validator: a count out of bounds is the only cause.
            let n = map.len() as u64;
            if let Some(min) = schema.get("minProperties").and_then(Value::as_u64)
                && n < min
            {
                causes.push((
                    path.into(),
                    format!(
                        "Invalid value: {n}: {path} in body should have at least {min} properties"
                    ),
                ));
                return;
            }
            if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
                && n > max
            {
                causes.push((
                    path.into(),
                    format!("Too many: {n}: must have at most {max} items"),
                ));
                return;
            }
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, child) in map {
                    if !props.is_some_and(|p| p.contains_key(k)) {
                        check(extra, child, &child_path(path, k), causes);
                    }
                }
            }
            for (k, sub) in props.into_iter().flatten() {
                if let Some(child) = map.get(k) {
                    check(sub, child, &child_path(path, k), causes);
                }
            }
            required(schema, map, path, causes);
        }
        _ => {}
    }
}
