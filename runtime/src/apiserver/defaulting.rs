// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Structural defaulting of a custom resource by its OpenAPI v3 schema, as the apiextensions
//! server does it (`pkg/apiserver/schema/defaulting`): the `default` of each object property
//! whose key is absent (or null where the property is not `nullable`) is filled in, and the
//! filled value is defaulted in turn; nulls that are not nullable and have no default are
//! dropped first ([`prune_nulls`]). [`super::kind::ApiKind::normalize`] runs both with pruning
//! on every write and every read from storage.

use serde_json::Value;

/// The schema's `default`, if it has one; a `default: null` is none, as the apiextensions
/// server's `JSON{Object: nil}` is.
fn default_of(schema: &Value) -> Option<&Value> {
    schema.get("default").filter(|d| !d.is_null())
}

fn nullable(schema: &Value) -> bool {
    schema.get("nullable") == Some(&Value::Bool(true))
}

/// The schema of field `key` of an object under `schema`: its property, or else the
/// `additionalProperties` schema (as `getSchemaForField`).
fn field_schema<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

/// Fills in `schema`'s defaults in `v`, as `structuraldefaulting.Default` does: for an object,
/// each property with a default whose key is absent, or null where the property is not
/// nullable, gets a copy of the default; then every field with a property schema (or the
/// `additionalProperties` schema, where a non-nullable null takes that schema's default) is
/// defaulted in turn, the filled-in values included. For an array, a non-nullable null item
/// takes the `items` default and every item is defaulted by `items`. Scalars are left alone.
pub fn default(schema: &Value, v: &mut Value) {
    match v {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, prop) in props.into_iter().flatten() {
                let Some(d) = default_of(prop) else { continue };
                let fill = match map.get(k) {
                    None => true,
                    Some(Value::Null) => !nullable(prop),
                    Some(_) => false,
                };
                if fill {
                    map.insert(k.clone(), d.clone());
                }
            }
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in map.iter_mut() {
                if let Some(prop) = props.and_then(|p| p.get(k)) {
                    default(prop, child);
                } else if let Some(extra) = extra {
                    if child.is_null() && !nullable(extra) {
                        *child = default_of(extra).cloned().unwrap_or(Value::Null);
                    }
                    default(extra, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
                for item in items.iter_mut() {
                    if item.is_null() && !nullable(item_schema) {
                        *item = default_of(item_schema).cloned().unwrap_or(Value::Null);
                    }
                    default(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// Removes the object fields that are null where their schema is not nullable and has no
/// default, as `PruneNonNullableNullsWithoutDefaults` does before defaulting (a null with a
/// default is left for [`default`] to fill). Fields without a schema, and null array items,
/// stay.
pub fn prune_nulls(schema: Option<&Value>, v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, child| {
                let s = schema.and_then(|s| field_schema(s, k));
                !(child.is_null() && s.is_some_and(|s| !nullable(s) && default_of(s).is_none()))
            });
            for (k, child) in map.iter_mut() {
                prune_nulls(schema.and_then(|s| field_schema(s, k)), child);
            }
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.get("items"));
            for item in items {
                prune_nulls(item_schema, item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// apiextensions-apiserver's `TestDefault` cases: (name, input, schema, expected).
    #[test]
    fn defaults_are_filled_as_the_apiextensions_server_fills_them() {
        let cases = [
            ("scalar", json!(4), json!({"default": "foo"}), json!(4)),
            (
                "scalar array",
                json!([1, 2]),
                json!({"items": {"default": "foo"}}),
                json!([1, 2]),
            ),
            (
                "object array",
                json!([{"a": 1}, {"b": 1}, {"c": 1}]),
                json!({"items": {"properties": {
                    "a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}}}}),
                json!([{"a": 1, "b": "B", "c": "C"}, {"a": "A", "b": 1, "c": "C"},
                       {"a": "A", "b": "B", "c": 1}]),
            ),
            (
                "object array object",
                json!({"array": [{"a": 1}, {"b": 2}], "object": {"a": 1},
                       "additionalProperties": {"x": {"a": 1}, "y": {"b": 2}}}),
                json!({"properties": {
                    "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
                    "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
                    "additionalProperties": {"additionalProperties": {"properties": {
                        "a": {"default": "alpha"}, "b": {"default": "beta"}}}},
                    "foo": {"default": "bar"},
                }}),
                json!({"array": [{"a": 1, "b": "B"}, {"a": "A", "b": 2}], "object": {"a": 1, "b": "O"},
                       "additionalProperties": {"x": {"a": 1, "b": "beta"}, "y": {"a": "alpha", "b": 2}},
                       "foo": "bar"}),
            ),
            (
                "empty and null",
                json!([{}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": null}, {"a": []}, {"a": {}}]),
                json!({"items": {"properties": {"a": {"default": "A"}}}}),
                json!([{"a": "A"}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": "A"}, {"a": []}, {"a": {}}]),
            ),
            (
                "null in nullable list",
                json!([null]),
                json!({"nullable": true, "items": {"properties": {"a": {"default": "A"}}}}),
                json!([null]),
            ),
            (
                "null in non-nullable list",
                json!([null]),
                json!({"items": {"default": "A"}}),
                json!(["A"]),
            ),
            (
                "null in nullable object",
                json!({"a": null}),
                json!({"properties": {"a": {"nullable": true, "default": "A"}}}),
                json!({"a": null}),
            ),
            (
                "null in non-nullable object",
                json!({"a": null}),
                json!({"properties": {"a": {"default": "A"}}}),
                json!({"a": "A"}),
            ),
            (
                "null in nullable object with additionalProperties",
                json!({"a": null}),
                json!({"additionalProperties": {"nullable": true, "default": "A"}}),
                json!({"a": null}),
            ),
            (
                "null in non-nullable object with additionalProperties",
                json!({"a": null}),
                json!({"additionalProperties": {"default": "A"}}),
                json!({"a": "A"}),
            ),
            (
                "null unknown field",
                json!({"a": null}),
                json!({"additionalProperties": true}),
                json!({"a": null}),
            ),
            (
                "a filled-in default is defaulted in turn",
                json!({}),
                json!({"properties": {"spec": {"default": {}, "properties": {
                    "replicas": {"default": 1}}}}}),
                json!({"spec": {"replicas": 1}}),
            ),
        ];
        for (name, mut input, schema, expected) in cases {
            default(&schema, &mut input);
            assert_eq!(input, expected, "{name}");
        }
    }

    /// apiextensions-apiserver's `TestPruneNonNullableNullsWithoutDefaults` cases.
    #[test]
    fn non_nullable_nulls_without_defaults_are_dropped() {
        let schema = json!({"items": {"properties": {
            "a": {"default": "A"},
            "b": {"nullable": true},
            "c": {"default": "C", "nullable": true},
            "d": {},
        }}});
        let mut v = json!([{"a": null}, {"b": null}, {"c": null}, {"d": null}, {"e": null}]);
        prune_nulls(Some(&schema), &mut v);
        assert_eq!(
            v,
            json!([{"a": null}, {"b": null}, {"c": null}, {}, {"e": null}])
        );
        let mut scalars = json!([1, null]);
        prune_nulls(None, &mut scalars);
        assert_eq!(scalars, json!([1, null]));
        let mut under_extra = json!({"m": {"x": null}});
        prune_nulls(
            Some(&json!({"properties": {"m": {"additionalProperties": {"type": "string"}}}})),
            &mut under_extra,
        );
        assert_eq!(under_extra, json!({"m": {}}));
    }
}
