// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! A custom resource's `metadata` decoded as `metav1.ObjectMeta`, as the apiextensions server
//! decodes it (`pkg/apiserver/schema/objectmeta`'s `GetObjectMetaWithOptions`): the fields
//! ObjectMeta does not have are unknown fields (pruned on every write and read, reported by
//! `fieldValidation` as the schema's unknown fields are: `unknown field "metadata.bogus"`),
//! and a field of the wrong JSON type fails the decoding (400), with the message Go's
//! `encoding/json` gives (`json: cannot unmarshal number into Go struct field ObjectMeta.name
//! of type string`).

use serde_json::{Map, Value};

/// The Go type of one field, as the decoder checks and names it.
#[derive(Clone, Copy)]
enum Go {
    /// A string (or a named string type: `types.UID`).
    Str(&'static str),
    /// `int64` (or `*int64`).
    Int64,
    /// `bool` (or `*bool`).
    Bool,
    /// `metav1.Time`, whose decoder reads a string first.
    Time,
    /// `map[string]string`.
    StrMap,
    /// `[]string`.
    StrList,
    /// A list of structs: its Go type and the struct's fields.
    Structs(&'static str, &'static str, &'static [(&'static str, Go)]),
    /// Anything (`FieldsV1` keeps the raw JSON).
    Raw,
}

const OWNER_REFERENCE: &[(&str, Go)] = &[
    ("apiVersion", Go::Str("string")),
    ("kind", Go::Str("string")),
    ("name", Go::Str("string")),
    ("uid", Go::Str("types.UID")),
    ("controller", Go::Bool),
    ("blockOwnerDeletion", Go::Bool),
];

const MANAGED_FIELDS_ENTRY: &[(&str, Go)] = &[
    ("manager", Go::Str("string")),
    ("operation", Go::Str("v1.ManagedFieldsOperationType")),
    ("apiVersion", Go::Str("string")),
    ("time", Go::Time),
    ("fieldsType", Go::Str("string")),
    ("fieldsV1", Go::Raw),
    ("subresource", Go::Str("string")),
];

/// `metav1.ObjectMeta`'s JSON fields.
const OBJECT_META: &[(&str, Go)] = &[
    ("name", Go::Str("string")),
    ("generateName", Go::Str("string")),
    ("namespace", Go::Str("string")),
    ("selfLink", Go::Str("string")),
    ("uid", Go::Str("types.UID")),
    ("resourceVersion", Go::Str("string")),
    ("generation", Go::Int64),
    ("creationTimestamp", Go::Time),
    ("deletionTimestamp", Go::Time),
    ("deletionGracePeriodSeconds", Go::Int64),
    ("labels", Go::StrMap),
    ("annotations", Go::StrMap),
    (
        "ownerReferences",
        Go::Structs("[]v1.OwnerReference", "OwnerReference", OWNER_REFERENCE),
    ),
    ("finalizers", Go::StrList),
    (
        "managedFields",
        Go::Structs(
            "[]v1.ManagedFieldsEntry",
            "ManagedFieldsEntry",
            MANAGED_FIELDS_ENTRY,
        ),
    ),
];

/// The JSON kind Go's decoder names in a type error.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

fn type_error(value: &str, strukt: &str, path: &str, go_type: &str) -> String {
    format!("json: cannot unmarshal {value} into Go struct field {strukt}.{path} of type {go_type}")
}

/// Why `metadata` does not decode as ObjectMeta, in Go's `encoding/json` words (the first
/// failure in document order, as Go reports it), or `None` when it decodes. `null` decodes
/// anywhere (the zero value). Only types are checked here; unknown fields are
/// [`prune_unknown`]'s.
pub fn decode_error(metadata: &Value) -> Option<String> {
    match metadata {
        Value::Null => None,
        Value::Object(m) => struct_error(m, "ObjectMeta", "", OBJECT_META),
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            json_kind(other)
        )),
    }
}

fn struct_error(
    m: &Map<String, Value>,
    strukt: &str,
    prefix: &str,
    fields: &[(&str, Go)],
) -> Option<String> {
    for (key, v) in m {
        let Some((_, go)) = fields.iter().find(|(f, _)| f == key) else {
            continue;
        };
        if v.is_null() {
            continue;
        }
        let path = format!("{prefix}{key}");
        let wrong = |go_type: &str| Some(type_error(json_kind(v), strukt, &path, go_type));
        let found = match *go {
            Go::Str(t) if !v.is_string() => wrong(t),
            Go::Time if !v.is_string() => wrong("string"),
            Go::Bool if !v.is_boolean() => wrong("bool"),
            Go::Int64 => match v {
                Value::Number(n) if n.as_i64().is_none() => {
                    Some(type_error(&format!("number {n}"), strukt, &path, "int64"))
                }
                Value::Number(_) => None,
                _ => wrong("int64"),
            },
            Go::StrMap => match v {
                Value::Object(items) => items
                    .values()
                    .find(|i| !i.is_string() && !i.is_null())
                    .map(|i| type_error(json_kind(i), strukt, &path, "string")),
                _ => wrong("map[string]string"),
            },
            Go::StrList => match v {
                Value::Array(items) => items
                    .iter()
                    .find(|i| !i.is_string() && !i.is_null())
                    .map(|i| type_error(json_kind(i), strukt, &path, "string")),
                _ => wrong("[]string"),
            },
            Go::Structs(list_type, item, item_fields) => match v {
                Value::Array(items) => items.iter().find_map(|i| match i {
                    Value::Object(im) => struct_error(im, item, &format!("{path}."), item_fields),
                    Value::Null => None,
                    other => Some(type_error(
                        json_kind(other),
                        strukt,
                        &path,
                        &format!("v1.{item}"),
                    )),
                }),
                _ => wrong(list_type),
            },
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Removes the fields of `metadata` that ObjectMeta (and its owner references and
/// managedFields entries) does not have, as the apiextensions server drops them when it
/// decodes a custom resource. Out: their paths (`metadata.bogus`,
/// `metadata.ownerReferences[0].bogus`), in document order, as its strict decoding names
/// them. A `metadata` that is not an object is left alone ([`decode_error`] refuses it).
pub fn prune_unknown(metadata: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    if let Value::Object(m) = metadata {
        prune_struct(m, "metadata", OBJECT_META, &mut removed);
    }
    removed
}

fn prune_struct(
    m: &mut Map<String, Value>,
    path: &str,
    fields: &[(&str, Go)],
    removed: &mut Vec<String>,
) {
    let keys: Vec<String> = m.keys().cloned().collect();
    for key in keys {
        match fields.iter().find(|(f, _)| *f == key) {
            None => {
                m.remove(&key);
                removed.push(format!("{path}.{key}"));
            }
            Some((_, Go::Structs(_, _, item_fields))) => {
                if let Some(Value::Array(items)) = m.get_mut(&key) {
                    for (i, item) in items.iter_mut().enumerate() {
                        if let Value::Object(im) = item {
                            prune_struct(im, &format!("{path}.{key}[{i}]"), item_fields, removed);
                        }
                    }
                }
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_the_wrong_type_fail_as_gos_decoder_words_it() {
        let cases = [
            (
                json!("x"),
                "json: cannot unmarshal string into Go value of type v1.ObjectMeta",
            ),
            (
                json!({"name": 5}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.name of type string",
            ),
            (
                json!({"generation": 1.5}),
                "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64",
            ),
            (
                json!({"labels": {"a": 5}}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string",
            ),
            (
                json!({"labels": ["a"]}),
                "json: cannot unmarshal array into Go struct field ObjectMeta.labels of type map[string]string",
            ),
            (
                json!({"ownerReferences": [{"uid": 5}]}),
                "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.uid of type types.UID",
            ),
            (
                json!({"ownerReferences": "x"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference",
            ),
            (
                json!({"finalizers": [true]}),
                "json: cannot unmarshal bool into Go struct field ObjectMeta.finalizers of type string",
            ),
            (
                json!({"creationTimestamp": 5}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string",
            ),
        ];
        for (meta, want) in cases {
            assert_eq!(decode_error(&meta).as_deref(), Some(want), "{meta}");
        }
        for fine in [
            json!(null),
            json!({"name": "a", "labels": {"a": "b"}, "generation": 3, "bogus": 5}),
            json!({"name": null, "ownerReferences": [{"uid": "u", "controller": true}]}),
        ] {
            assert_eq!(decode_error(&fine), None, "{fine}");
        }
    }

    #[test]
    fn unknown_metadata_fields_are_pruned_with_their_paths() {
        let mut meta = json!({
            "name": "a",
            "bogusField": {"deep": [1, 2, 3]},
            "ownerReferences": [{"uid": "u", "extra": 1}],
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}, "x": 1}],
        });
        assert_eq!(
            prune_unknown(&mut meta),
            [
                "metadata.bogusField",
                "metadata.managedFields[0].x",
                "metadata.ownerReferences[0].extra"
            ]
        );
        assert_eq!(
            meta,
            json!({
                "name": "a",
                "ownerReferences": [{"uid": "u"}],
                "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
            })
        );
    }
}
