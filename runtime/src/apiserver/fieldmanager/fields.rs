// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The set of fields an object sets, read against its kind's OpenAPI v3 schema, as
//! structured-merge-diff's `ToFieldSet` reads a typed value.
//!
//! Rules: an object with `properties` (a struct) is a member only when it sets no field; an object
//! with `additionalProperties` (a map) is a member and its keys are tracked, unless
//! `x-kubernetes-map-type: atomic`, where it is owned whole; a list of `x-kubernetes-list-type: map`
//! tracks each item under `k:` (its `x-kubernetes-list-map-keys`), of type `set` each item under
//! `v:`, any other list is atomic; a scalar is a member. `apiVersion`, `kind` and the metadata
//! fields the server owns (`name`, `namespace`, `uid`, `resourceVersion`, `generation`,
//! `creationTimestamp`, `selfLink`, `managedFields`) are never tracked, as k8s.io/apiserver's
//! `stripMeta` leaves them out; the other metadata fields are read against [`meta_schema`]
//! (`labels` and `annotations` maps, `finalizers` a set, `ownerReferences` a map by `uid`).

use serde_json::{Map, Value};

use super::fieldset::{self, FieldSet};

/// The fields `object` sets under `schema` (the kind's OpenAPI v3 schema). Errors: a list-map item
/// missing one of its key fields, named by its path.
pub fn fields_of(object: &Value, schema: &Value) -> Result<FieldSet, String> {
    fields_with(object, schema, Duplicates::Allow)
}

/// [`fields_of`] for an applied configuration, which may not hold two items of one key in a
/// list of type `map` nor one value twice in a list of type `set`, as structured-merge-diff
/// refuses them in the object an apply sends (and allows them in the live object). Errors: a
/// list-map item missing a key field; a duplicate, as structured-merge-diff words it:
/// `.metadata.finalizers: duplicate entries for key [="a"]`.
pub fn applied_fields_of(object: &Value, schema: &Value) -> Result<FieldSet, String> {
    fields_with(object, schema, Duplicates::Refuse)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    Allow,
    Refuse,
}

fn fields_with(object: &Value, schema: &Value, dups: Duplicates) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    let Value::Object(fields) = object else {
        return Ok(set);
    };
    for (name, value) in fields {
        match name.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let Value::Object(meta) = value else { continue };
                let meta_schema = meta_schema();
                let mut node = FieldSet::default();
                for (field, v) in meta
                    .iter()
                    .filter(|(f, _)| !STRIPPED_META.contains(&f.as_str()))
                {
                    let below = walk(
                        v,
                        property(&meta_schema, field),
                        &format!(".metadata.{field}"),
                        dups,
                    )?;
                    node.children.insert(fieldset::field(field), below);
                }
                if !node.is_empty() {
                    set.children.insert(fieldset::field("metadata"), node);
                }
            }
            _ => {
                let below = property(schema, name);
                let node = walk(value, below, &format!(".{name}"), dups)?;
                set.children.insert(fieldset::field(name), node);
            }
        }
    }
    Ok(set)
}

/// The metadata fields the server sets, which no manager owns (k8s.io/apiserver's `stripMeta`).
pub const STRIPPED_META: [&str; 8] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "selfLink",
    "managedFields",
];

/// The list and map types of `ObjectMeta`'s fields, as its OpenAPI schema declares them:
/// `labels` and `annotations` maps of strings, `finalizers` a set, `ownerReferences` a map
/// by `uid`; the rest are scalars.
pub fn meta_schema() -> Value {
    serde_json::json!({"properties": {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ownerReferences": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["uid"],
            "items": {"type": "object", "properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                "name": {"type": "string"}, "uid": {"type": "string"},
                "controller": {"type": "boolean"}, "blockOwnerDeletion": {"type": "boolean"}}}}
    }})
}

/// The schema of field `name` under `schema`: its property, else the map's
/// `additionalProperties`, else `null` (untyped).
pub fn property<'a>(schema: &'a Value, name: &str) -> &'a Value {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
        .unwrap_or(&Value::Null)
}

fn walk(value: &Value, schema: &Value, at: &str, dups: Duplicates) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    match value {
        Value::Object(fields) => {
            if schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                set.member = true;
                return Ok(set);
            }
            for (name, item) in fields {
                let node = walk(item, property(schema, name), &format!("{at}.{name}"), dups)?;
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
                        let element = fieldset::key(&item_key(item, keys, item_schema, at)?);
                        let mut node = walk(item, item_schema, &format!("{at}[{element}]"), dups)?;
                        node.member = true;
                        if dups == Duplicates::Refuse && set.children.contains_key(&element) {
                            return Err(duplicate(at, &element));
                        }
                        set.children.insert(element, node);
                    }
                }
                Some("set") => {
                    for item in items {
                        let element = fieldset::value(item);
                        if dups == Duplicates::Refuse && set.children.contains_key(&element) {
                            return Err(duplicate(at, &element));
                        }
                        set.insert(&[&element]);
                    }
                }
                _ => {}
            }
        }
        _ => set.member = true,
    }
    Ok(set)
}

/// structured-merge-diff's error for a second item of `element` in the list at `at`.
fn duplicate(at: &str, element: &str) -> String {
    format!(
        "{at}: duplicate entries for key {}",
        super::conflicts::print_path(&[element.to_owned()])
    )
}

/// The key of a list-map item: its key fields' values; a key field the item lacks is keyed by
/// its schema `default`, as structured-merge-diff keys it. Errors: a key field missing with
/// no default, named with `at`.
pub(crate) fn item_key(
    item: &Value,
    keys: Option<&Vec<Value>>,
    item_schema: &Value,
    at: &str,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for key in keys.into_iter().flatten().filter_map(Value::as_str) {
        let default = property(item_schema, key).get("default");
        match item.get(key).or(default) {
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
            "metadata": {"name": "a", "uid": "u", "resourceVersion": "5", "labels": {"app": "db"},
                         "finalizers": ["f"], "ownerReferences": [{"uid": "o", "name": "x"}]},
            "spec": {"replicas": 3, "ports": [{"port": 80, "name": "http"}],
                     "finalizers": ["x"], "args": ["a", "b"],
                     "selector": {"app": "db"}, "env": {"A": "1"}}
        });
        let set = fields_of(&object, &schema()).unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {
                    "f:finalizers": {".": {}, "v:\"f\"": {}},
                    "f:labels": {".": {}, "f:app": {}},
                    "f:ownerReferences": {".": {}, "k:{\"uid\":\"o\"}": {".": {}, "f:name": {}, "f:uid": {}}}
                },
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
