// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The set of fields an object sets, read against its kind's OpenAPI v3 schema, as
//! structured-merge-diff's `ToFieldSet` reads a typed value.
//!
//! Rules: an object with `properties` (a struct) is a member only when it sets no field; an object
//! with `additionalProperties` (a map) is a member and its keys are tracked, unless
//! `x-kubernetes-map-type: atomic`, where it is owned whole; a list of `x-kubernetes-list-type: map`
//! tracks each item under `k:` (its `x-kubernetes-list-map-keys`), of type `set` each item under
//! `v:`, any other list is atomic; a scalar is a member. Under `metadata` only `labels` and
//! `annotations` are tracked.

use serde_json::{Map, Value};

use super::fieldset::{self, FieldSet};

/// The fields `object` sets under `schema` (the kind's OpenAPI v3 schema). Errors: a list-map item
/// missing one of its key fields, named by its path.
pub fn fields_of(object: &Value, schema: &Value) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    let Value::Object(fields) = object else {
        return Ok(set);
    };
    for (name, value) in fields {
        match name.as_str() {
            "apiVersion" | "kind" => set.insert(&[&fieldset::field(name)]),
            "metadata" => {
                let mut meta = FieldSet::default();
                for tracked in ["labels", "annotations"] {
                    if let Some(Value::Object(map)) = value.get(tracked) {
                        let node = meta.child(&fieldset::field(tracked));
                        node.member = true;
                        for key in map.keys() {
                            node.insert(&[&fieldset::field(key)]);
                        }
                    }
                }
                if !meta.is_empty() {
                    set.children.insert(fieldset::field("metadata"), meta);
                }
            }
            _ => {
                let below = property(schema, name);
                let node = walk(value, below, &format!(".{name}"))?;
                set.children.insert(fieldset::field(name), node);
            }
        }
    }
    Ok(set)
}

fn property<'a>(schema: &'a Value, name: &str) -> &'a Value {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
        .unwrap_or(&Value::Null)
}

fn walk(value: &Value, schema: &Value, at: &str) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    match value {
        Value::Object(fields) => {
            if schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                set.member = true;
                return Ok(set);
            }
            for (name, item) in fields {
                let node = walk(item, property(schema, name), &format!("{at}.{name}"))?;
                set.children.insert(fieldset::field(name), node);
            }
            let is_struct = schema.get("properties").is_some();
            set.member = !is_struct || fields.is_empty();
        }
        Value::Array(items) => {
            set.member = true;
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("map") => {
                    let keys = schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array);
                    for item in items {
                        let element = fieldset::key(&item_key(item, keys, at)?);
                        let mut node = walk(item, item_schema, &format!("{at}[{element}]"))?;
                        node.member = true;
                        set.children.insert(element, node);
                    }
                }
                Some("set") => {
                    for item in items {
                        set.insert(&[&fieldset::value(item)]);
                    }
                }
                _ => {}
            }
        }
        _ => set.member = true,
    }
    Ok(set)
}

fn item_key(
    item: &Value,
    keys: Option<&Vec<Value>>,
    at: &str,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for key in keys.into_iter().flatten().filter_map(Value::as_str) {
        match item.get(key) {
            Some(v) => {
                out.insert(key.to_owned(), v.clone());
            }
            None => return Err(format!("{at}: an item is missing its key field {key:?}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"properties": {"spec": {"properties": {
            "replicas": {"type": "integer"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port"],
                      "items": {"properties": {"port": {}, "name": {}}}},
            "finalizers": {"type": "array", "x-kubernetes-list-type": "set"},
            "args": {"type": "array", "items": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "env": {"type": "object", "additionalProperties": {"type": "string"}}
        }}}})
    }

    #[test]
    fn fields_follow_the_schema_list_and_map_types() {
        let object = json!({
            "apiVersion": "v1", "kind": "Database",
            "metadata": {"name": "a", "uid": "u", "labels": {"app": "db"}},
            "spec": {"replicas": 3, "ports": [{"port": 80, "name": "http"}],
                     "finalizers": ["x"], "args": ["a", "b"],
                     "selector": {"app": "db"}, "env": {"A": "1"}}
        });
        let set = fields_of(&object, &schema()).unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:apiVersion": {}, "f:kind": {},
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:args": {},
                    "f:env": {".": {}, "f:A": {}},
                    "f:finalizers": {".": {}, "v:\"x\"": {}},
                    "f:ports": {".": {}, "k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}}},
                    "f:replicas": {},
                    "f:selector": {}
                }
            })
        );
    }

    #[test]
    fn a_list_map_item_without_its_key_is_an_error() {
        let object = json!({"spec": {"ports": [{"name": "http"}]}});
        let err = fields_of(&object, &schema()).unwrap_err();
        assert!(
            err.contains(".spec.ports") && err.contains("\"port\""),
            "{err}"
        );
    }
}
