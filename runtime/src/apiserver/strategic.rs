// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Strategic merge patch (`application/strategic-merge-patch+json`), as k8s.io/apimachinery's
//! `strategicpatch` applies it to a built-in kind, its per-field strategy read from the kind's
//! merge facts ([`super::kind::ApiKind::merge_facts`]: `x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`).
//!
//! Rules: a map merges key by key, `null` deletes a key; a list whose strategy includes `merge`
//! merges its items by the merge key (a list of scalars: adds the values it lacks); any other
//! list, and every scalar, is replaced. Directives: `$patch: replace | delete | merge` in a
//! map or a list item, `{"$patch": "replace"}` as a list item (the list is replaced by the
//! other items), `$retainKeys` (keys of the original not listed are dropped),
//! `$setElementOrder/<field>` (the order of a merged list), `$deleteFromPrimitiveList/<field>`
//! (values removed from a list of scalars). Merged lists are ordered as `strategicpatch`'s
//! `normalizeElementOrder` orders them: the items the patch names (in the patch's or
//! `$setElementOrder`'s order) interleaved with the original's other items by their original
//! places. Any other `$` key is refused, never ignored.

use serde_json::{Map, Value};

use super::fieldmanager::fields::property;

/// The answer to a strategic merge patch of a kind without merge facts (a custom resource),
/// as kube-apiserver refuses it for custom resources.
pub const NO_STRATEGIC_MERGE_PATCH: &str = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// `original` with `patch` applied under `facts` (the kind's merge facts; `null`: no list
/// merges). Errors (each naming the field): a patch that is not an object, an unknown
/// directive or `$patch` value, `$patch: delete` of the whole object, a list item without its
/// merge key, a directive of the wrong type.
pub fn patch(original: &Value, patch: &Value, facts: &Value) -> Result<Value, String> {
    let Value::Object(p) = patch else {
        return Err("a strategic merge patch must be a JSON object".into());
    };
    let base = original.as_object().cloned().unwrap_or_default();
    match merge_map(base, p, facts, "")? {
        Some(m) => Ok(Value::Object(m)),
        None => Err(
            "$patch: delete at the root of a strategic merge patch would delete the whole object"
                .into(),
        ),
    }
}

/// The `$patch` directive of a map: `None` when absent. Errors: not a string, or not one of
/// `replace`, `delete`, `merge`.
fn directive<'a>(map: &'a Map<String, Value>, at: &str) -> Result<Option<&'a str>, String> {
    match map.get(PATCH) {
        None => Ok(None),
        Some(Value::String(s)) if matches!(s.as_str(), "replace" | "delete" | "merge") => {
            Ok(Some(s))
        }
        Some(other) => Err(format!(
            "{}: unknown $patch directive {other} (known: replace, delete, merge)",
            name(at)
        )),
    }
}

fn name(at: &str) -> &str {
    if at.is_empty() { "the patch" } else { at }
}

fn strategy(facts: &Value) -> &str {
    facts
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn has_strategy(facts: &Value, wanted: &str) -> bool {
    strategy(facts).split(',').any(|s| s.trim() == wanted)
}

/// `patch` merged into the map `original`; `None`: the patch deletes the map.
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    facts: &Value,
    at: &str,
) -> Result<Option<Map<String, Value>>, String> {
    match directive(patch, at)? {
        Some("delete") => return Ok(None),
        Some("replace") => original = Map::new(),
        _ => {}
    }
    if has_strategy(facts, "replace") {
        original = Map::new();
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keys = strings(retain, at, RETAIN_KEYS)?;
        original.retain(|k, _| keys.contains(&k.as_str()));
    }
    let mut orders: Vec<(&str, &Value)> = Vec::new();
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(gone) = value else {
                return Err(format!("{}: {key} must be a list", name(at)));
            };
            if let Some(Value::Array(list)) = original.get_mut(field) {
                list.retain(|v| !gone.contains(v));
            }
        } else if let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) {
            if !value.is_array() {
                return Err(format!("{}: {key} must be a list", name(at)));
            }
            orders.push((field, value));
        } else if key.starts_with('$') && key != PATCH && key != RETAIN_KEYS {
            return Err(format!(
                "{}: unknown strategic merge patch directive {key:?} (known: $patch, $retainKeys, $setElementOrder/<field>, $deleteFromPrimitiveList/<field>)",
                name(at)
            ));
        }
    }
    let order_of = |field: &str| orders.iter().find(|(f, _)| *f == field).map(|(_, v)| *v);
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        let below = format!("{at}.{key}");
        if value.is_null() {
            original.remove(key);
            continue;
        }
        let sub = property(facts, key);
        let live = original.remove(key);
        if let Some(v) = merge_value(live, value, sub, order_of(key), &below)? {
            original.insert(key.clone(), v);
        }
    }
    // A `$setElementOrder` whose list the patch does not change reorders the original's.
    for (field, order) in &orders {
        if patch.contains_key(*field) {
            continue;
        }
        if let Some(live @ Value::Array(_)) = original.remove(*field) {
            let below = format!("{at}.{field}");
            let sub = property(facts, field);
            let merged = merge_value(Some(live), &Value::Array(vec![]), sub, Some(order), &below)?;
            if let Some(v) = merged {
                original.insert((*field).to_owned(), v);
            }
        }
    }
    Ok(Some(original))
}

fn strings<'a>(value: &'a Value, at: &str, what: &str) -> Result<Vec<&'a str>, String> {
    value
        .as_array()
        .and_then(|items| items.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .ok_or_else(|| format!("{}: {what} must be a list of strings", name(at)))
}

/// `patch` merged into the value `original` (`None`: absent); `None` out: the value is deleted.
fn merge_value(
    original: Option<Value>,
    patch: &Value,
    facts: &Value,
    order: Option<&Value>,
    at: &str,
) -> Result<Option<Value>, String> {
    match patch {
        Value::Object(p) => {
            let base = match original {
                Some(Value::Object(o)) => o,
                _ => Map::new(),
            };
            Ok(merge_map(base, p, facts, at)?.map(Value::Object))
        }
        Value::Array(p) => {
            let base = match original {
                Some(Value::Array(o)) => o,
                _ => Vec::new(),
            };
            if has_strategy(facts, "merge") {
                merge_list(base, p, facts, order, at).map(|v| Some(Value::Array(v)))
            } else {
                Ok(Some(patch.clone()))
            }
        }
        _ => Ok(Some(patch.clone())),
    }
}

/// The merge key's value of a list item, or the item itself in a list of scalars.
fn identity<'a>(item: &'a Value, key: Option<&str>) -> Option<&'a Value> {
    match key {
        Some(k) => item.get(k),
        None => Some(item),
    }
}

fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    facts: &Value,
    order: Option<&Value>,
    at: &str,
) -> Result<Vec<Value>, String> {
    let key = facts
        .get("x-kubernetes-patch-merge-key")
        .and_then(Value::as_str);
    let items = facts.get("items").unwrap_or(&Value::Null);
    let replace = patch.iter().any(|item| {
        item.as_object().is_some_and(|m| {
            m.len() == 1 && m.get(PATCH).and_then(Value::as_str) == Some("replace")
        })
    });
    let mut merged = if replace {
        Vec::new()
    } else {
        original.clone()
    };
    let mut named = Vec::new();
    for (i, item) in patch.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let Some(k) = key else {
            if item.is_object() || item.is_array() {
                return Err(format!(
                    "{here}: the list merges without a merge key, so its items must be scalars"
                ));
            }
            if !merged.contains(item) {
                merged.push(item.clone());
            }
            named.push(item.clone());
            continue;
        };
        let Value::Object(m) = item else {
            return Err(format!(
                "{here}: an item of a list merged by {k:?} must be an object"
            ));
        };
        let d = directive(m, &here)?;
        if d == Some("replace") && m.len() == 1 {
            continue;
        }
        let Some(id) = m.get(k) else {
            return Err(format!(
                "{here}: the item does not contain the list's merge key {k:?}"
            ));
        };
        let position = merged.iter().position(|x| x.get(k) == Some(id));
        if d == Some("delete") {
            if let Some(p) = position {
                merged.remove(p);
            }
            merged.retain(|x| x.get(k) != Some(id));
            continue;
        }
        let base = match position {
            Some(p) => match merged.remove(p) {
                Value::Object(o) => o,
                _ => Map::new(),
            },
            None => Map::new(),
        };
        let value = merge_map(base, m, items, &here)?.map(Value::Object);
        match (value, position) {
            (Some(v), Some(p)) => merged.insert(p, v),
            (Some(v), None) => merged.push(v),
            (None, _) => {}
        }
        named.push(id.clone());
    }
    // The order of the items the patch names: `$setElementOrder`'s, else the patch's.
    let patch_order: Vec<Value> = match order {
        Some(Value::Array(list)) => {
            let mut out = Vec::new();
            for (i, entry) in list.iter().enumerate() {
                match identity(entry, key) {
                    Some(id) => out.push(id.clone()),
                    None => {
                        return Err(format!(
                            "{at}: $setElementOrder item {i} does not contain the merge key {:?}",
                            key.unwrap_or_default()
                        ));
                    }
                }
            }
            out
        }
        _ => named,
    };
    let server_order: Vec<&Value> = original.iter().filter_map(|x| identity(x, key)).collect();
    let index_in = |list: &[&Value], item: &Value| {
        identity(item, key).and_then(|id| list.iter().position(|x| *x == id))
    };
    let patch_refs: Vec<&Value> = patch_order.iter().collect();
    let (mut left, right): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| index_in(&patch_refs, item).is_some());
    left.sort_by_key(|item| index_in(&patch_refs, item));
    // Interleave: a patch item goes first only when both have an original place and its is
    // earlier; otherwise the original's item goes first.
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        match (l.peek(), r.peek()) {
            (Some(_), None) => out.extend(l.by_ref()),
            (None, Some(_)) => out.extend(r.by_ref()),
            (None, None) => break,
            (Some(a), Some(b)) => {
                let first = match (index_in(&server_order, a), index_in(&server_order, b)) {
                    (Some(i), Some(j)) => i < j,
                    _ => false,
                };
                let next = if first { l.next() } else { r.next() };
                out.extend(next);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The strategies of a Deployment's fields the cases use, as Kubernetes' OpenAPI has them.
    fn facts() -> Value {
        let by_name = |items: Value| {
            json!({"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name",
                   "items": items})
        };
        json!({"properties": {
            "metadata": {"properties": {
                "finalizers": {"x-kubernetes-patch-strategy": "merge"}}},
            "spec": {"properties": {
                "strategy": {"x-kubernetes-patch-strategy": "retainKeys",
                             "properties": {"rollingUpdate": {"properties": {}}}},
                "template": {"properties": {"spec": {"properties": {
                    "containers": by_name(json!({"properties": {
                        "env": by_name(json!({"properties": {}})),
                        "args": {"x-kubernetes-list-type": "atomic"}
                    }})),
                    "volumes": by_name(json!({"properties": {}}))
                }}}}
            }}
        }})
    }

    fn containers(list: Value) -> Value {
        json!({"spec": {"template": {"spec": {"containers": list}}}})
    }

    fn run(original: Value, p: Value) -> Result<Value, String> {
        patch(&original, &p, &facts())
    }

    #[test]
    fn list_items_merge_by_their_merge_key() {
        let original = containers(json!([
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
            {"name": "b", "image": "b:1"}
        ]));
        let out = run(
            original,
            containers(json!([{"name": "a", "env": [{"name": "Y", "value": "3"}, {"name": "Z", "value": "4"}]},
                              {"name": "c", "image": "c:1"}])),
        )
        .unwrap();
        assert_eq!(
            out,
            containers(json!([
                {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"},
                    {"name": "Y", "value": "3"}, {"name": "Z", "value": "4"}]},
                {"name": "b", "image": "b:1"},
                {"name": "c", "image": "c:1"}
            ]))
        );
    }

    #[test]
    fn patch_delete_removes_a_list_item_and_a_map() {
        let original = json!({"spec": {"strategy": {"type": "Recreate"},
            "template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}});
        let out = run(
            original,
            json!({"spec": {"strategy": {"$patch": "delete"},
                "template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "b"}]}}}})
        );
    }

    #[test]
    fn patch_replace_replaces_a_list_or_a_map_whole() {
        let original = containers(json!([{"name": "a", "image": "a:1"}, {"name": "b"}]));
        let out = run(
            original.clone(),
            containers(json!([{"name": "c"}, {"$patch": "replace"}])),
        )
        .unwrap();
        assert_eq!(out, containers(json!([{"name": "c"}])));
        let out = run(
            original,
            containers(json!([{"name": "a", "$patch": "replace", "args": ["x"]}])),
        )
        .unwrap();
        assert_eq!(
            out,
            containers(json!([{"name": "a", "args": ["x"]}, {"name": "b"}]))
        );
    }

    #[test]
    fn lists_without_a_merge_strategy_and_scalars_are_replaced_and_null_deletes() {
        let original = containers(json!([{"name": "a", "image": "a:1", "args": ["x", "y"]}]));
        let out = run(
            original,
            containers(json!([{"name": "a", "image": null, "args": ["z"]}])),
        )
        .unwrap();
        assert_eq!(out, containers(json!([{"name": "a", "args": ["z"]}])));
    }

    #[test]
    fn scalar_lists_with_merge_add_values_and_delete_from_primitive_list_removes_them() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let out = run(
            original.clone(),
            json!({"metadata": {"finalizers": ["c", "a"]}}),
        )
        .unwrap();
        assert_eq!(out, json!({"metadata": {"finalizers": ["b", "c", "a"]}}));
        let out = run(
            original,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        )
        .unwrap();
        assert_eq!(out, json!({"metadata": {"finalizers": ["b"]}}));
    }

    #[test]
    fn set_element_order_orders_the_merged_list() {
        let original = containers(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
        let p = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}],
            "containers": [{"name": "b", "image": "b:2"}]}}}});
        assert_eq!(
            run(original.clone(), p).unwrap(),
            containers(json!([{"name": "c"}, {"name": "b", "image": "b:2"}, {"name": "a"}]))
        );
        // Only the order: the original's items, reordered.
        let p = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}]}}}});
        assert_eq!(
            run(original, p).unwrap(),
            containers(json!([{"name": "b"}, {"name": "a"}, {"name": "c"}]))
        );
    }

    #[test]
    fn retain_keys_drops_the_original_keys_not_listed() {
        let original = json!({"spec": {"strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1}}}});
        let out = run(
            original,
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        )
        .unwrap();
        assert_eq!(out, json!({"spec": {"strategy": {"type": "Recreate"}}}));
    }

    #[test]
    fn unknown_directives_and_items_without_their_merge_key_are_refused() {
        let original = containers(json!([{"name": "a"}]));
        let err = run(original.clone(), json!({"spec": {"$foo": 1}})).unwrap_err();
        assert!(err.contains("\"$foo\"") && err.contains(".spec"), "{err}");
        let err = run(original.clone(), json!({"spec": {"$patch": "move"}})).unwrap_err();
        assert!(err.contains("unknown $patch directive \"move\""), "{err}");
        let err = run(original.clone(), containers(json!([{"image": "x"}]))).unwrap_err();
        assert!(
            err.contains(".spec.template.spec.containers[0]") && err.contains("\"name\""),
            "{err}"
        );
        let err = run(original.clone(), json!({"$patch": "delete"})).unwrap_err();
        assert!(err.contains("whole object"), "{err}");
        let err = run(
            original,
            json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
        )
        .unwrap_err();
        assert!(err.contains("$retainKeys must be a list"), "{err}");
        assert!(patch(&json!({}), &json!([1]), &Value::Null).is_err());
    }

    #[test]
    fn without_facts_maps_merge_and_lists_are_replaced() {
        let out = patch(
            &json!({"a": {"x": 1, "y": [1, 2]}}),
            &json!({"a": {"y": [3], "z": 2}}),
            &Value::Null,
        )
        .unwrap();
        assert_eq!(out, json!({"a": {"x": 1, "y": [3], "z": 2}}));
    }
}
