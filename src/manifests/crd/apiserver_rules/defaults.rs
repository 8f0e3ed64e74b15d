//! Defaults, as `ValidateDefaults` of the API server's `defaulting` package checks them: a
//! default must not be set where defaulting is undefined (top-level `metadata`, `kind`,
//! `apiVersion`; map values inside metadata; value validations), must validate against the
//! schema it sits in (type, bounds, lengths, pattern, enum, required fields, items,
//! alternatives), and must survive pruning unchanged (no fields the schema does not know).
//!
//! The validation is the subset of kube-openapi's validator a `#[serde(default)]` value can
//! meet. Where this module cannot be exact it accepts: `null` values (the API server reads a
//! `null` default as none), formats, CEL rules, `multipleOf` on fractions, patterns on
//! non-ASCII text, defaults inside embedded resources' metadata, and defaults under
//! `additionalProperties`, which the API server does not validate either.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use super::place::Ctx;
use super::{Sink, Step, additional, is_true, items};

pub(super) fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let Some(default) = &s.default else { return };
    if ctx.junctor.is_some() {
        // Refused as structure by `structural`.
        return;
    }
    let p = &ctx.path;
    if let Some(reason) = ctx.no_defaults {
        sink.schema(p, format!("a default must not be set {reason}"));
        return;
    }
    if ctx.inside_meta || p.0.contains(&Step::AdditionalProperties) || default.0.is_null() {
        return;
    }
    if let Some(at) = unknown_field(&default.0, Some(s), "") {
        sink.schema(p, format!("the default {} has the field {at} that the schema does not specify: the API server would prune it, so it refuses the default", compact(&default.0)))
            .construct("a default with fields the schema does not know")
            .help("a default is the serialized `Default` value: skip the field in the schema and in serialization alike, or give the type a schema for it");
        return;
    }
    if let Err(why) = conforms(&default.0, s) {
        sink.schema(p, format!("the default {} does not validate against its own schema: {why}", compact(&default.0)))
            .construct("a #[serde(default)] value outside the field's validation")
            .help("make the Default value satisfy the field's #[schemars(range/length/regex)] and types, or change the validation");
    }
}

/// `v` as one-line JSON, shortened to 80 characters.
fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(79).collect::<String>())
    } else {
        s
    }
}

/// The first field pruning removes from `v` under the structural schema `s` (`None`: no
/// schema, which prunes every field of an object), as `.a.b`; `None` when pruning keeps
/// `v` as it is.
fn unknown_field(v: &Value, s: Option<&JSONSchemaProps>, at: &str) -> Option<String> {
    if let Some(s) = s
        && is_true(s.x_kubernetes_preserve_unknown_fields)
    {
        return keep_unknown(v, s, at);
    }
    match v {
        Value::Object(o) => {
            let Some(s) = s else {
                return o.keys().next().map(|k| format!("{at}.{k}"));
            };
            let embedded = is_true(s.x_kubernetes_embedded_resource);
            for (k, x) in o {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let here = format!("{at}.{k}");
                if let Some(p) = s.properties.as_ref().and_then(|p| p.get(k)) {
                    if let Some(u) = unknown_field(x, Some(p), &here) {
                        return Some(u);
                    }
                } else if let Some(ap) = &s.additional_properties {
                    let sub = match ap {
                        JSONSchemaPropsOrBool::Schema(a) => Some(&**a),
                        JSONSchemaPropsOrBool::Bool(_) => None,
                    };
                    if let Some(u) = unknown_field(x, sub, &here) {
                        return Some(u);
                    }
                } else {
                    return Some(here);
                }
            }
            None
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| unknown_field(x, s.and_then(items), &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// Pruning below a node that preserves unknown fields: known fields are still pruned by
/// their own schemas.
fn keep_unknown(v: &Value, s: &JSONSchemaProps, at: &str) -> Option<String> {
    match v {
        Value::Object(o) => {
            let embedded = is_true(s.x_kubernetes_embedded_resource);
            for (k, x) in o {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let here = format!("{at}.{k}");
                let sub = match (
                    s.properties.as_ref().and_then(|p| p.get(k)),
                    &s.additional_properties,
                ) {
                    (Some(p), _) => Some(Some(p)),
                    (None, Some(JSONSchemaPropsOrBool::Schema(a))) => Some(Some(&**a)),
                    (None, Some(JSONSchemaPropsOrBool::Bool(_))) => Some(None),
                    (None, None) => None,
                };
                if let Some(sub) = sub
                    && let Some(u) = unknown_field(x, sub, &here)
                {
                    return Some(u);
                }
            }
            None
        }
        Value::Array(a) => {
            let is = items(s)?;
            a.iter()
                .enumerate()
                .find_map(|(i, x)| keep_unknown(x, is, &format!("{at}[{i}]")))
        }
        _ => None,
    }
}

/// Whether `v` validates against `s`, the checks of kube-openapi's validator that apply to
/// serialized Rust values; the reason when not.
pub fn conforms(v: &Value, s: &JSONSchemaProps) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    if let Some(ty) = s.type_.as_deref() {
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
            return Err(format!("{} is not of type {ty}", compact(v)));
        }
    }
    if let Some(e) = &s.enum_
        && !e.iter().any(|x| same(&x.0, v))
    {
        let allowed: Vec<String> = e.iter().map(|x| x.0.to_string()).collect();
        return Err(format!(
            "{} is not one of the enum values [{}]",
            compact(v),
            allowed.join(", ")
        ));
    }
    if let Some(n) = v.as_f64() {
        number(v, n, s)?;
    }
    if let Some(text) = v.as_str() {
        string(text, s)?;
    }
    if let Some(list) = v.as_array() {
        let n = list.len() as i64;
        if s.min_items.is_some_and(|m| n < m) {
            return Err(format!(
                "{n} items, fewer than minItems {}",
                s.min_items.unwrap_or(0)
            ));
        }
        if s.max_items.is_some_and(|m| n > m) {
            return Err(format!(
                "{n} items, more than maxItems {}",
                s.max_items.unwrap_or(0)
            ));
        }
        if let Some(is) = items(s) {
            for (i, x) in list.iter().enumerate() {
                conforms(x, is).map_err(|e| format!("[{i}]: {e}"))?;
            }
        }
    }
    if let Some(obj) = v.as_object() {
        let n = obj.len() as i64;
        if s.min_properties.is_some_and(|m| n < m) {
            return Err(format!("{n} fields, fewer than minProperties"));
        }
        if s.max_properties.is_some_and(|m| n > m) {
            return Err(format!("{n} fields, more than maxProperties"));
        }
        for r in s.required.iter().flatten() {
            if !obj.contains_key(r) {
                return Err(format!("the required field {r:?} is missing"));
            }
        }
        for (k, x) in obj {
            match (s.properties.as_ref().and_then(|p| p.get(k)), additional(s)) {
                (Some(ps), _) => conforms(x, ps).map_err(|e| format!(".{k}: {e}"))?,
                (None, Some(ap)) => conforms(x, ap).map_err(|e| format!(".{k}: {e}"))?,
                (None, None) => {}
            }
        }
    }
    if let Some(all) = &s.all_of {
        for (i, b) in all.iter().enumerate() {
            conforms(v, b).map_err(|e| format!("allOf[{i}]: {e}"))?;
        }
    }
    if let Some(any) = &s.any_of
        && !any.is_empty()
        && !any.iter().any(|b| conforms(v, b).is_ok())
    {
        return Err(format!(
            "{} matches none of the anyOf alternatives",
            compact(v)
        ));
    }
    if let Some(one) = &s.one_of {
        let n = one.iter().filter(|b| conforms(v, b).is_ok()).count();
        if !one.is_empty() && n != 1 {
            return Err(format!(
                "{} matches {n} of the oneOf alternatives instead of exactly one",
                compact(v)
            ));
        }
    }
    if let Some(not) = &s.not
        && conforms(v, not).is_ok()
    {
        return Err(format!("{} matches the `not` schema", compact(v)));
    }
    Ok(())
}

/// JSON equality with numbers compared by value (`1` and `1.0` are one number to Go).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

fn number(v: &Value, n: f64, s: &JSONSchemaProps) -> Result<(), String> {
    if let Some(min) = s.minimum
        && (n < min || (is_true(s.exclusive_minimum) && n == min))
    {
        return Err(format!("{v} is below the minimum {min}"));
    }
    if let Some(max) = s.maximum
        && (n > max || (is_true(s.exclusive_maximum) && n == max))
    {
        return Err(format!("{v} is above the maximum {max}"));
    }
    if let (Some(f), Some(i)) = (s.multiple_of, v.as_i64())
        && f.fract() == 0.0
        && f != 0.0
        && i % (f as i64) != 0
    {
        return Err(format!("{v} is not a multiple of {f}"));
    }
    Ok(())
}

fn string(text: &str, s: &JSONSchemaProps) -> Result<(), String> {
    let len = text.chars().count() as i64;
    if let Some(m) = s.min_length.filter(|m| len < *m) {
        return Err(format!(
            "{text:?} has {len} characters, fewer than minLength {m}"
        ));
    }
    if let Some(m) = s.max_length.filter(|m| len > *m) {
        return Err(format!(
            "{text:?} has {len} characters, more than maxLength {m}"
        ));
    }
    if let Some(pattern) = &s.pattern
        && matches_like_go(pattern, text) == Some(false)
    {
        return Err(format!("{text:?} does not match the pattern {pattern:?}"));
    }
    Ok(())
}

/// Whether Go's `regexp.MatchString(pattern, text)` is true, where the `regex` crate can
/// tell: on ASCII patterns and text, with Unicode classes off, the two engines agree (`\d`,
/// `\w`, `\s` and `\b` are ASCII in Go). `None` otherwise.
fn matches_like_go(pattern: &str, text: &str) -> Option<bool> {
    if !pattern.is_ascii() || !text.is_ascii() {
        return None;
    }
    let re = regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .ok()?;
    Some(re.is_match(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::spec_violations;
    use serde_json::json;

    fn field(schema: serde_json::Value) -> Vec<String> {
        spec_violations(json!({"type": "object", "properties": {"f": schema}}))
    }

    #[test]
    fn a_default_must_validate_against_its_schema() {
        assert!(field(json!({"type": "integer", "minimum": 1, "default": 3})).is_empty());
        let got = field(json!({"type": "integer", "minimum": 1, "default": 0}));
        assert_eq!(
            got,
            [
                ".spec.f: the default 0 does not validate against its own schema: 0 is below the minimum 1"
            ]
        );
        let got = field(json!({"type": "string", "default": 5}));
        assert!(got[0].ends_with("5 is not of type string"), "{got:?}");
        let got = field(json!({"type": "string", "maxLength": 3, "default": "abcd"}));
        assert!(got[0].contains("more than maxLength 3"), "{got:?}");
        let got = field(json!({"type": "string", "pattern": "^[a-z]+$", "default": ""}));
        assert!(got[0].contains("does not match the pattern"), "{got:?}");
        let got = field(json!({"type": "string", "enum": ["A", "B"], "default": "C"}));
        assert!(got[0].contains("not one of the enum values"), "{got:?}");
        let got = field(json!({"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}, "default": {"n": 1}}));
        assert!(
            got[0].contains("the required field \"name\" is missing"),
            "{got:?}"
        );
        let got = field(
            json!({"type": "array", "items": {"type": "integer", "maximum": 2}, "default": [1, 3]}),
        );
        assert!(got[0].contains("[1]: 3 is above the maximum 2"), "{got:?}");
        // An externally tagged enum: exactly one variant key.
        let tagged = json!({"type": "object", "properties": {"A": {"type": "object"}, "B": {"type": "string"}},
            "oneOf": [{"required": ["A"]}, {"required": ["B"]}], "default": {"B": "x"}});
        assert!(field(tagged).is_empty());
    }

    #[test]
    fn a_default_must_survive_pruning() {
        let got = field(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "default": {"a": "x", "extra": 1}}),
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].contains("has the field .extra that the schema does not specify"),
            "{got:?}"
        );
        // Preserved and map values are kept.
        assert!(field(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"x": {"y": 1}}})).is_empty());
        assert!(field(json!({"type": "object", "additionalProperties": {"type": "integer"}, "default": {"x": 1}})).is_empty());
    }

    #[test]
    fn defaults_are_forbidden_in_top_level_metadata_and_value_validations() {
        use super::super::{check_version, test_support::crd_version};
        let v = crd_version(
            json!({"type": "object", "properties": {
                "metadata": {"type": "object", "default": {}},
                "spec": {"type": "object", "properties": {"a": {"type": "string"}},
                         "anyOf": [{"properties": {"a": {"default": "x"}}}]},
            }}),
            false,
        );
        let got: Vec<String> = check_version(&v).iter().map(|v| v.rule.clone()).collect();
        assert!(
            got.contains(&"a default must not be set in top-level metadata".to_string()),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|r| r.starts_with("`default` must not be set inside anyOf")),
            "{got:?}"
        );
        // Nulls and values under additionalProperties are not judged.
        assert!(field(json!({"type": "string", "nullable": true, "default": null})).is_empty());
        assert!(field(json!({"type": "object", "additionalProperties": {"type": "integer", "default": "x"}})).is_empty());
    }
}
