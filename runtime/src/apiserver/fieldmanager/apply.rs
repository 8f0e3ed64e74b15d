// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The value side of server-side apply, as structured-merge-diff's `typed` package computes it:
//! [`merge`] (an applied configuration over the live object), [`compare`] (what a write added,
//! changed and removed, as field sets) and [`prune`] (removing what a manager applied before
//! and applies no longer, unless someone owns it).
//!
//! Merge rules, read from the kind's OpenAPI v3 schema as [`super::fields`] reads it: an
//! object merges key by key (unless `x-kubernetes-map-type: atomic`, replaced whole); a list
//! of `x-kubernetes-list-type: map` merges its items by their keys, of type `set` adds the
//! values it lacks; live items keep their place and new ones follow in the applied order; any
//! other list and every scalar is replaced by the applied value.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::fields::{meta_schema, property};
use super::fieldset::{self, FieldSet};

/// `config` merged over `live` under `schema` (the kind's schema; `metadata` is read against
/// [`meta_schema`]). `live` `None` is a missing object or field. Errors: a list-map item missing
/// one of its keys, named by its path.
pub fn merge(live: Option<&Value>, config: &Value, schema: &Value) -> Result<Value, String> {
    let meta = meta_schema();
    let root = RootSchema {
        kind: schema,
        meta: &meta,
    };
    merge_at(live, config, &root.of(None), "", &root)
}

/// The schema of the object root: the kind's, with `metadata` typed as `ObjectMeta`.
struct RootSchema<'a> {
    kind: &'a Value,
    meta: &'a Value,
}

impl<'a> RootSchema<'a> {
    /// The schema of the root (`None`) or of one of its fields.
    fn of(&self, field: Option<&str>) -> Value {
        match field {
            None => Value::Null,
            Some("metadata") => self.meta.clone(),
            Some(name) => property(self.kind, name).clone(),
        }
    }
}

fn merge_at(
    live: Option<&Value>,
    config: &Value,
    schema: &Value,
    at: &str,
    root: &RootSchema<'_>,
) -> Result<Value, String> {
    let Some(live) = live else {
        return Ok(config.clone());
    };
    match (live, config) {
        (Value::Object(l), Value::Object(c)) if !is_atomic_map(schema) => {
            let mut out = l.clone();
            for (name, value) in c {
                let below = if at.is_empty() {
                    root.of(Some(name))
                } else {
                    property(schema, name).clone()
                };
                let merged = merge_at(l.get(name), value, &below, &format!("{at}.{name}"), root)?;
                out.insert(name.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Value::Array(l), Value::Array(c)) => match list_type(schema) {
            Some("map") => merge_list_map(l, c, schema, at, root),
            Some("set") => {
                // Values told apart by their encoding, so the merge is linear in the items.
                let mut present: HashSet<String> = l.iter().map(fieldset::value).collect();
                let mut out = l.clone();
                for item in c {
                    if present.insert(fieldset::value(item)) {
                        out.push(item.clone());
                    }
                }
                Ok(Value::Array(out))
            }
            _ => Ok(config.clone()),
        },
        _ => Ok(config.clone()),
    }
}

fn merge_list_map(
    live: &[Value],
    config: &[Value],
    schema: &Value,
    at: &str,
    root: &RootSchema<'_>,
) -> Result<Value, String> {
    let items = schema.get("items").unwrap_or(&Value::Null);
    // Items told apart by their `k:` element, looked up in maps, so the merge is linear in
    // the items (a first item of a key wins over a later duplicate).
    let mut keyed = Vec::with_capacity(config.len());
    let mut applied: HashMap<String, &Value> = HashMap::with_capacity(config.len());
    for item in config {
        let element = item_element(item, schema, at)?;
        applied.entry(element.clone()).or_insert(item);
        keyed.push((element, item));
    }
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let mut seen = HashSet::with_capacity(live.len() + config.len());
    for item in live {
        let element = item_element(item, schema, at)?;
        let merged = match applied.get(&element) {
            Some(applied) => merge_at(
                Some(item),
                applied,
                items,
                &format!("{at}[{element}]"),
                root,
            )?,
            None => item.clone(),
        };
        out.push(merged);
        seen.insert(element);
    }
    for (element, item) in keyed {
        if seen.insert(element) {
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

fn is_atomic_map(schema: &Value) -> bool {
    schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
}

fn list_type(schema: &Value) -> Option<&str> {
    schema.get("x-kubernetes-list-type").and_then(Value::as_str)
}

/// The `k:` path element of a list-map item (a missing key field is keyed by its default).
/// Errors: a key field missing with no default, named with `at`.
fn item_element(item: &Value, schema: &Value, at: &str) -> Result<String, String> {
    let names = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array);
    let items = schema.get("items").unwrap_or(&Value::Null);
    Ok(fieldset::key(&super::fields::item_key(
        item, names, items, at,
    )?))
}

/// The value at the path `elements` (encoded as in [`super::fieldset`]) of `object`; `None`
/// when it is not there.
pub fn value_at<'a>(object: &'a Value, elements: &[String]) -> Option<&'a Value> {
    let Some((first, rest)) = elements.split_first() else {
        return Some(object);
    };
    let next = if let Some(name) = first.strip_prefix("f:") {
        object.get(name)?
    } else if let Some(json) = first.strip_prefix("k:") {
        let Ok(Value::Object(key)) = serde_json::from_str::<Value>(json) else {
            return None;
        };
        let items = object.as_array()?;
        // An item that lacks a key field was keyed by that field's default ([`merge`]); an
        // item holding every key field is preferred.
        items
            .iter()
            .find(|item| key.iter().all(|(k, v)| item.get(k) == Some(v)))
            .or_else(|| {
                items.iter().find(|item| {
                    key.iter()
                        .all(|(k, v)| item.get(k).is_none_or(|have| have == v))
                })
            })?
    } else if let Some(json) = first.strip_prefix("v:") {
        let wanted: Value = serde_json::from_str(json).ok()?;
        object.as_array()?.iter().find(|item| **item == wanted)?
    } else if let Some(index) = first.strip_prefix("i:") {
        object.as_array()?.get(index.parse::<usize>().ok()?)?
    } else {
        return None;
    };
    value_at(next, rest)
}

/// What a write did to the fields, as structured-merge-diff's `Comparison`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Fields the new object sets and the old one did not.
    pub added: FieldSet,
    /// Leaf fields (scalars, atomic lists and maps) both set, to different values.
    pub modified: FieldSet,
    /// Fields the old object set and the new one does not.
    pub removed: FieldSet,
}

impl Comparison {
    /// `added` and `modified`: the fields the write set.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// Compares `old` (with its field set `old_set`) with `new` (and `new_set`), both read by
/// [`super::fields::fields_of`]. One walk over the fields both set, each list indexed once by
/// path element, so the cost is linear in the fields (not in fields times list length).
pub fn compare(old: &Value, old_set: &FieldSet, new: &Value, new_set: &FieldSet) -> Comparison {
    let mut modified = FieldSet::default();
    let both = old_set.intersection(new_set);
    modified_at(
        Some(old),
        Some(new),
        &both,
        Some(old_set),
        Some(new_set),
        &mut Vec::new(),
        &mut modified,
    );
    Comparison {
        added: new_set.difference(old_set),
        modified,
        removed: old_set.difference(new_set),
    }
}

/// The leaves of `both` (under `path`) whose values differ between `old` and `new`, into `out`.
/// A leaf is a member of `both` with no children in either set.
fn modified_at(
    old: Option<&Value>,
    new: Option<&Value>,
    both: &FieldSet,
    old_set: Option<&FieldSet>,
    new_set: Option<&FieldSet>,
    path: &mut Vec<String>,
    out: &mut FieldSet,
) {
    let leaf = |set: Option<&FieldSet>| set.is_none_or(|s| s.children.is_empty());
    if both.member && leaf(old_set) && leaf(new_set) && old != new {
        let elements: Vec<&str> = path.iter().map(String::as_str).collect();
        out.insert(&elements);
    }
    if both.children.is_empty() {
        return;
    }
    let old_items = Children::of(old, both);
    let new_items = Children::of(new, both);
    for (element, below) in &both.children {
        path.push(element.clone());
        modified_at(
            old_items.get(old, element),
            new_items.get(new, element),
            below,
            old_set.and_then(|s| s.children.get(element)),
            new_set.and_then(|s| s.children.get(element)),
            path,
            out,
        );
        path.pop();
    }
}

/// The items of a list by their `k:` or `v:` path element, built once per list so each
/// lookup is a map lookup; a first item of an element wins over a later duplicate, as
/// [`value_at`] finds it.
struct Children<'a>(HashMap<String, &'a Value>);

impl<'a> Children<'a> {
    /// The index of `value`'s items when it is a list and `set` names items by key or value.
    fn of(value: Option<&'a Value>, set: &FieldSet) -> Children<'a> {
        let mut index = HashMap::new();
        let Some(Value::Array(items)) = value else {
            return Children(index);
        };
        let first = set
            .children
            .keys()
            .find(|e| e.starts_with("k:") || e.starts_with("v:"));
        match first.map(String::as_str) {
            Some(e) if e.starts_with("v:") => {
                for item in items {
                    index.entry(fieldset::value(item)).or_insert(item);
                }
            }
            Some(e) => {
                let Some(Ok(Value::Object(key))) = e.strip_prefix("k:").map(serde_json::from_str)
                else {
                    return Children(index);
                };
                for item in items {
                    let mut fields = Map::new();
                    for name in key.keys() {
                        if let Some(v) = item.get(name) {
                            fields.insert(name.clone(), v.clone());
                        }
                    }
                    if fields.len() == key.len() {
                        index.entry(fieldset::key(&fields)).or_insert(item);
                    }
                }
            }
            None => {}
        }
        Children(index)
    }

    /// The child `element` of `value`: from the index for `k:` and `v:` elements, else (no
    /// index: not a list, or an element that does not parse) as [`value_at`] finds it.
    fn get(&self, value: Option<&'a Value>, element: &str) -> Option<&'a Value> {
        let value = value?;
        if !self.0.is_empty() && (element.starts_with("k:") || element.starts_with("v:")) {
            return self.0.get(element).copied();
        }
        value_at(value, std::slice::from_ref(&element.to_owned()))
    }
}

/// Removes from `object` the fields of `last` (what a manager applied before) that no manager
/// owns any more (`owned`: every manager's fields, the new apply's included), as
/// structured-merge-diff's `prune` does: a field owned whole in `last` (a scalar, a list or
/// map item, an atomic value, a map) goes with what is under it; a struct goes only when
/// nothing is left in it; fields under it that `last` does not name stay.
pub fn prune(object: &mut Value, last: &FieldSet, owned: &FieldSet) {
    prune_at(object, last, owned, &[]);
}

/// [`prune`] under one node; `keys` are the key fields of a list-map item, which stay while the
/// item does. A list's items are indexed once by path element and the removed ones dropped in
/// one pass, so pruning is linear in the items.
fn prune_at(object: &mut Value, last: &FieldSet, owned: &FieldSet, keys: &[String]) {
    let empty = FieldSet::default();
    let positions = Positions::of(object, last);
    let mut gone: Vec<Position> = Vec::new();
    for (element, below) in &last.children {
        if keys.contains(element) {
            continue;
        }
        let theirs = owned.children.get(element).unwrap_or(&empty);
        let item_keys = item_key_fields(element);
        let Some(position) = positions.find(object, element) else {
            continue;
        };
        let Some(child) = child_mut(object, &position) else {
            continue;
        };
        let remove = if theirs.member && theirs.children.is_empty() {
            false
        } else if !theirs.is_empty() {
            prune_at(child, below, theirs, &item_keys);
            false
        } else if below.member {
            true
        } else {
            prune_at(child, below, theirs, &item_keys);
            child.as_object().is_some_and(Map::is_empty)
        };
        if remove {
            gone.push(position);
        }
    }
    match object {
        Value::Object(map) => {
            for position in gone {
                if let Position::Key(name) = position {
                    map.remove(&name);
                }
            }
        }
        Value::Array(items) => {
            let drop: HashSet<usize> = gone
                .into_iter()
                .filter_map(|p| match p {
                    Position::Index(i) => Some(i),
                    Position::Key(_) => None,
                })
                .collect();
            if !drop.is_empty() {
                let mut index = 0;
                items.retain(|_| {
                    let keep = !drop.contains(&index);
                    index += 1;
                    keep
                });
            }
        }
        _ => {}
    }
}

/// The key fields of a `k:` element, as `f:` elements.
fn item_key_fields(element: &str) -> Vec<String> {
    match element
        .strip_prefix("k:")
        .map(serde_json::from_str::<Value>)
    {
        Some(Ok(Value::Object(key))) => key.keys().map(|k| fieldset::field(k)).collect(),
        _ => Vec::new(),
    }
}

fn child_mut<'a>(object: &'a mut Value, position: &Position) -> Option<&'a mut Value> {
    match (object, position) {
        (Value::Object(map), Position::Key(name)) => map.get_mut(name),
        (Value::Array(items), Position::Index(i)) => items.get_mut(*i),
        _ => None,
    }
}

enum Position {
    Key(String),
    Index(usize),
}

/// The positions of a list's items by `k:` or `v:` element, as [`Children`] indexes them.
struct Positions(HashMap<String, usize>);

impl Positions {
    fn of(object: &Value, set: &FieldSet) -> Positions {
        let children = Children::of(Some(object), set);
        let Value::Array(items) = object else {
            return Positions(HashMap::new());
        };
        let at: HashMap<*const Value, usize> = items
            .iter()
            .enumerate()
            .map(|(i, item)| (item as *const Value, i))
            .collect();
        Positions(
            children
                .0
                .into_iter()
                .filter_map(|(element, item)| Some((element, *at.get(&(item as *const Value))?)))
                .collect(),
        )
    }

    /// Where `element` is in `object`.
    fn find(&self, object: &Value, element: &str) -> Option<Position> {
        if let Some(name) = element.strip_prefix("f:") {
            return object.get(name).map(|_| Position::Key(name.to_owned()));
        }
        let items = object.as_array()?;
        if !self.0.is_empty() && (element.starts_with("k:") || element.starts_with("v:")) {
            return self.0.get(element).copied().map(Position::Index);
        }
        let found = value_at(object, &[element.to_owned()])?;
        items
            .iter()
            .position(|item| std::ptr::eq(item, found))
            .map(Position::Index)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fields::fields_of;
    use super::*;

    fn schema() -> Value {
        json!({"properties": {"spec": {"properties": {
            "replicas": {"type": "integer"},
            "image": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port"],
                      "items": {"properties": {"port": {}, "name": {}, "protocol": {}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set"},
            "args": {"type": "array", "items": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "env": {"type": "object", "additionalProperties": {"type": "string"}}
        }}}})
    }

    fn set(fields: Value) -> FieldSet {
        FieldSet::from_fields_v1(&fields).unwrap()
    }

    #[test]
    fn struct_fields_and_maps_merge_key_by_key() {
        let live = json!({"metadata": {"name": "a", "labels": {"x": "1"}},
                          "spec": {"replicas": 1, "image": "a", "env": {"A": "1"}}});
        let config = json!({"metadata": {"name": "a", "labels": {"y": "2"}},
                            "spec": {"replicas": 3, "env": {"B": "2"}}});
        assert_eq!(
            merge(Some(&live), &config, &schema()).unwrap(),
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}},
                   "spec": {"replicas": 3, "image": "a", "env": {"A": "1", "B": "2"}}})
        );
    }

    #[test]
    fn metadata_merges_finalizers_as_a_set_and_owner_references_by_uid() {
        let live = json!({"metadata": {"name": "a", "finalizers": ["x"],
            "ownerReferences": [{"uid": "1", "name": "p", "kind": "Parent"}]}});
        let config = json!({"metadata": {"name": "a", "finalizers": ["y", "x"],
            "ownerReferences": [{"uid": "2", "name": "q"}, {"uid": "1", "controller": true}]}});
        assert_eq!(
            merge(Some(&live), &config, &schema()).unwrap(),
            json!({"metadata": {"name": "a", "finalizers": ["x", "y"], "ownerReferences": [
                {"uid": "1", "name": "p", "kind": "Parent", "controller": true},
                {"uid": "2", "name": "q"}
            ]}})
        );
    }

    #[test]
    fn list_maps_merge_by_key_keeping_live_order_then_applied_order() {
        let live = json!({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}});
        let config = json!({"spec": {"ports": [{"port": 8080, "name": "alt"}, {"port": 80, "protocol": "TCP"}]}});
        assert_eq!(
            merge(Some(&live), &config, &schema()).unwrap(),
            json!({"spec": {"ports": [
                {"port": 80, "name": "http", "protocol": "TCP"},
                {"port": 443, "name": "https"},
                {"port": 8080, "name": "alt"}
            ]}})
        );
    }

    #[test]
    fn sets_add_values_and_atomic_lists_and_maps_are_replaced() {
        let live = json!({"spec": {"tags": ["a", "b"], "args": ["x", "y"], "selector": {"app": "db", "tier": "1"}}});
        let config =
            json!({"spec": {"tags": ["c", "a"], "args": ["z"], "selector": {"app": "web"}}});
        assert_eq!(
            merge(Some(&live), &config, &schema()).unwrap(),
            json!({"spec": {"tags": ["a", "b", "c"], "args": ["z"], "selector": {"app": "web"}}})
        );
        let config = json!({"spec": {"ports": [{"name": "nokey"}]}});
        let live = json!({"spec": {"ports": []}});
        let err = merge(Some(&live), &config, &schema()).unwrap_err();
        assert!(
            err.contains(".spec.ports") && err.contains("\"port\""),
            "{err}"
        );
    }

    #[test]
    fn comparison_reports_added_modified_removed_leaves() {
        let s = schema();
        let old = json!({"spec": {"replicas": 1, "image": "a", "ports": [{"port": 80, "name": "http"}], "args": ["x"]}});
        let new = json!({"spec": {"replicas": 2, "ports": [{"port": 80, "name": "web"}, {"port": 81}], "args": ["x"]}});
        let c = compare(
            &old,
            &fields_of(&old, &s).unwrap(),
            &new,
            &fields_of(&new, &s).unwrap(),
        );
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:spec": {"f:ports": {"k:{\"port\":81}": {".": {}, "f:port": {}}}}})
        );
        assert_eq!(
            c.modified.to_fields_v1(),
            json!({"f:spec": {"f:ports": {"k:{\"port\":80}": {"f:name": {}}}, "f:replicas": {}}})
        );
        assert_eq!(c.removed.to_fields_v1(), json!({"f:spec": {"f:image": {}}}));
    }

    #[test]
    fn prune_removes_what_was_applied_before_and_nobody_owns() {
        // Applied before: replicas, image, port 80 and label x. Applied now: replicas only;
        // another manager owns image.
        let mut object = json!({"metadata": {"name": "a", "labels": {"x": "1", "keep": "2"}},
            "spec": {"replicas": 3, "image": "a", "ports": [{"port": 80, "name": "h"}, {"port": 90}]}});
        let last = set(json!({"f:metadata": {"f:labels": {"f:x": {}}}, "f:spec": {
            "f:replicas": {}, "f:image": {}, "f:ports": {"k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}}}}}));
        let owned = set(json!({"f:spec": {"f:replicas": {}, "f:image": {}}}));
        prune(&mut object, &last, &owned);
        assert_eq!(
            object,
            json!({"metadata": {"name": "a", "labels": {"keep": "2"}},
                   "spec": {"replicas": 3, "image": "a", "ports": [{"port": 90}]}})
        );
        // An item another manager changed a field of keeps that field and its key.
        let mut object = json!({"spec": {"ports": [{"port": 80, "name": "h", "protocol": "TCP"}]}});
        let last = set(
            json!({"f:spec": {"f:ports": {"k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}}}}),
        );
        let owned = set(json!({"f:spec": {"f:ports": {"k:{\"port\":80}": {"f:name": {}}}}}));
        prune(&mut object, &last, &owned);
        assert_eq!(
            object,
            json!({"spec": {"ports": [{"port": 80, "name": "h"}]}})
        );
        // A struct whose last field goes is removed with it.
        let mut object = json!({"spec": {"image": "a"}, "status": {"x": 1}});
        prune(
            &mut object,
            &set(json!({"f:spec": {"f:image": {}}})),
            &FieldSet::default(),
        );
        assert_eq!(object, json!({"status": {"x": 1}}));
    }

    #[test]
    fn values_are_found_by_path_element() {
        let object = json!({"spec": {"ports": [{"port": 80, "name": "h"}], "tags": ["a"], "args": ["x", "y"]}});
        let at = |p: &[&str]| {
            value_at(
                &object,
                &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
            .cloned()
        };
        assert_eq!(
            at(&["f:spec", "f:ports", "k:{\"port\":80}", "f:name"]),
            Some(json!("h"))
        );
        assert_eq!(at(&["f:spec", "f:tags", "v:\"a\""]), Some(json!("a")));
        assert_eq!(at(&["f:spec", "f:args", "i:1"]), Some(json!("y")));
        assert_eq!(at(&["f:spec", "f:ports", "k:{\"port\":81}"]), None);
    }
}
