// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! What a defaulting function or a conversion changed, applied to the object exactly as the
//! API server sent it.
//!
//! The user's code sees the object through its Rust types, and serializing a typed value does
//! not give back the JSON it was read from: an absent `Vec` comes back as `[]`, `status: {}`
//! as `status: {"conditions": []}`, a `null` disappears, a timestamp loses its fractional
//! seconds, a field the types do not know is dropped. A patch from the received JSON to the
//! typed value would rewrite all of that although the user's code changed none of it.
//!
//! So the change is measured between two typed encodings, the received object read into the
//! types and written back (`before`) and the same value after the user's code (`after`), and
//! only where those two differ is the received JSON (`raw`) touched. Everywhere else `raw`
//! stays byte for byte what the API server sent.

use serde_json::{Map, Value};

/// Applies the change from `before` to `after` onto `raw` and returns the result with the
/// RFC 6902 JSON patch operations (`add`, `replace`, `remove`) that turn `raw` into it, in an
/// order that applies. `before` and `after` are typed encodings of `raw` (see the module
/// docs). Rules:
///
/// - where `before` equals `after`, `raw` is kept as it is;
/// - an object member that `after` has and `before` has not is added (replaced when `raw`
///   already has it); one that `after` drops, or sets to `null`, is removed from `raw`; a
///   member present in all three is merged recursively;
/// - an array that has in `raw` the length it has in `before` is merged element by element,
///   with elements appended or removed at its end; any other array, and any other value that
///   changed, is replaced by `after`'s.
pub fn merge(raw: &Value, before: &Value, after: &Value) -> (Value, Vec<Value>) {
    let mut ops = Vec::new();
    let merged = merge_at(raw, before, after, &mut String::new(), &mut ops);
    (merged, ops)
}

fn merge_at(
    raw: &Value,
    before: &Value,
    after: &Value,
    path: &mut String,
    ops: &mut Vec<Value>,
) -> Value {
    if before == after {
        return raw.clone();
    }
    match (raw, before, after) {
        (Value::Object(r), Value::Object(b), Value::Object(a)) => {
            Value::Object(merge_objects(r, b, a, path, ops))
        }
        (Value::Array(r), Value::Array(b), Value::Array(a)) if r.len() == b.len() => {
            let mut out = Vec::with_capacity(a.len());
            let len = path.len();
            for (i, item) in a.iter().enumerate() {
                push_segment(path, &i.to_string());
                if i < b.len() {
                    out.push(merge_at(&r[i], &b[i], item, path, ops));
                } else {
                    ops.push(op("add", path, Some(item)));
                    out.push(item.clone());
                }
                path.truncate(len);
            }
            for i in (a.len()..b.len()).rev() {
                push_segment(path, &i.to_string());
                ops.push(op("remove", path, None));
                path.truncate(len);
            }
            Value::Array(out)
        }
        _ => {
            ops.push(op("replace", path, Some(after)));
            after.clone()
        }
    }
}

fn merge_objects(
    raw: &Map<String, Value>,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    path: &mut String,
    ops: &mut Vec<Value>,
) -> Map<String, Value> {
    let mut out = raw.clone();
    let keys = before
        .keys()
        .chain(after.keys().filter(|k| !before.contains_key(*k)));
    let len = path.len();
    for key in keys {
        let (b, a) = (before.get(key), after.get(key));
        if b == a {
            continue;
        }
        push_segment(path, key);
        let a = a.filter(|v| !v.is_null());
        match (raw.get(key), b, a) {
            (Some(r), Some(b), Some(a)) => {
                let merged = merge_at(r, b, a, path, ops);
                out.insert(key.clone(), merged);
            }
            (Some(_), _, None) => {
                ops.push(op("remove", path, None));
                out.remove(key);
            }
            (None, _, None) => {}
            (Some(_), None, Some(a)) => {
                ops.push(op("replace", path, Some(a)));
                out.insert(key.clone(), a.clone());
            }
            (None, _, Some(a)) => {
                ops.push(op("add", path, Some(a)));
                out.insert(key.clone(), a.clone());
            }
        }
        path.truncate(len);
    }
    out
}

/// Appends `/segment` to a JSON pointer, escaped as RFC 6901 says (`~` as `~0`, `/` as `~1`).
fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    for c in segment.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn op(name: &str, path: &str, value: Option<&Value>) -> Value {
    let mut op = Map::new();
    op.insert("op".into(), Value::String(name.into()));
    op.insert("path".into(), Value::String(path.into()));
    if let Some(value) = value {
        op.insert("value".into(), value.clone());
    }
    Value::Object(op)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Applies RFC 6902 operations as the API server does, for the three kinds `merge` emits;
    /// an operation that does not apply fails the test.
    fn apply(mut doc: Value, ops: &[Value]) -> Value {
        for op in ops {
            let path = op["path"].as_str().unwrap();
            let (parent, last) = path.rsplit_once('/').unwrap();
            let last = last.replace("~1", "/").replace("~0", "~");
            let target = doc
                .pointer_mut(parent)
                .unwrap_or_else(|| panic!("no {parent}"));
            match (op["op"].as_str().unwrap(), target) {
                ("add", Value::Object(m)) => {
                    m.insert(last, op["value"].clone());
                }
                ("replace", Value::Object(m)) => {
                    assert!(m.contains_key(&last), "replace of absent {path}");
                    m.insert(last, op["value"].clone());
                }
                ("remove", Value::Object(m)) => {
                    m.remove(&last)
                        .unwrap_or_else(|| panic!("remove of absent {path}"));
                }
                ("add", Value::Array(a)) => a.insert(last.parse().unwrap(), op["value"].clone()),
                ("replace", Value::Array(a)) => {
                    a[last.parse::<usize>().unwrap()] = op["value"].clone()
                }
                ("remove", Value::Array(a)) => {
                    a.remove(last.parse().unwrap());
                }
                (other, _) => panic!("cannot apply {other} at {path}"),
            }
        }
        doc
    }

    fn check(raw: Value, before: Value, after: Value, expected_ops: Value) -> Value {
        let (merged, ops) = merge(&raw, &before, &after);
        assert_eq!(Value::Array(ops.clone()), expected_ops);
        assert_eq!(
            apply(raw, &ops),
            merged,
            "the operations give the merged value"
        );
        merged
    }

    #[test]
    fn what_the_types_re_encode_but_the_code_left_alone_is_not_touched() {
        let raw = json!({
            "metadata": {"name": "a", "creationTimestamp": "2026-01-02T03:04:05.123456Z"},
            "spec": {"x": 1, "unknown": true},
            "status": {},
        });
        let before = json!({
            "metadata": {"name": "a", "creationTimestamp": "2026-01-02T03:04:05Z"},
            "spec": {"x": 1},
            "status": {"conditions": []},
        });
        let mut after = before.clone();
        after["spec"]["replicas"] = json!(1);
        let merged = check(
            raw,
            before,
            after,
            json!([{"op": "add", "path": "/spec/replicas", "value": 1}]),
        );
        assert_eq!(merged["status"], json!({}));
        assert_eq!(
            merged["metadata"]["creationTimestamp"],
            "2026-01-02T03:04:05.123456Z"
        );
        assert_eq!(merged["spec"]["unknown"], true);
    }

    #[test]
    fn nothing_changed_gives_no_operations() {
        let raw = json!({"spec": {"a": null}, "status": {}});
        let typed = json!({"spec": {}, "status": {"conditions": []}});
        check(raw, typed.clone(), typed, json!([]));
    }

    #[test]
    fn a_cleared_field_is_removed_and_a_set_null_replaced() {
        let raw = json!({"spec": {"a": "x", "b": null, "c": 1}});
        let before = json!({"spec": {"a": "x", "c": 1}});
        let after = json!({"spec": {"b": "now", "c": null}});
        check(
            raw,
            before,
            after,
            json!([
                {"op": "remove", "path": "/spec/a"},
                {"op": "remove", "path": "/spec/c"},
                {"op": "replace", "path": "/spec/b", "value": "now"},
            ]),
        );
    }

    #[test]
    fn keys_are_escaped_as_json_pointers() {
        let raw = json!({"metadata": {}});
        let before = json!({"metadata": {}});
        let after = json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": "me"}}});
        check(
            raw,
            before,
            after.clone(),
            json!([{"op": "add", "path": "/metadata/labels", "value": after["metadata"]["labels"]}]),
        );
        let raw = json!({"metadata": {"labels": {"a~b": "1"}}});
        let after = json!({"metadata": {"labels": {"a~b": "1", "x/y": "2"}}});
        check(
            raw.clone(),
            raw,
            after,
            json!([{"op": "add", "path": "/metadata/labels/x~1y", "value": "2"}]),
        );
    }

    #[test]
    fn arrays_merge_element_by_element_and_grow_or_shrink_at_the_end() {
        let raw = json!({"items": [{"n": 1, "t": "1.50"}, {"n": 2}]});
        let before = json!({"items": [{"n": 1, "t": "1.5"}, {"n": 2}]});
        let after = json!({"items": [{"n": 1, "t": "1.5", "d": true}, {"n": 2}, {"n": 3}]});
        let merged = check(
            raw.clone(),
            before.clone(),
            after,
            json!([
                {"op": "add", "path": "/items/0/d", "value": true},
                {"op": "add", "path": "/items/2", "value": {"n": 3}},
            ]),
        );
        assert_eq!(merged["items"][0]["t"], "1.50");
        let after = json!({"items": []});
        check(
            raw,
            before,
            after,
            json!([
                {"op": "remove", "path": "/items/1"},
                {"op": "remove", "path": "/items/0"},
            ]),
        );
    }

    #[test]
    fn an_array_the_types_re_encode_to_another_length_is_replaced() {
        let raw = json!({"items": [1, 1]});
        let before = json!({"items": [1]});
        let after = json!({"items": [1, 2]});
        check(
            raw,
            before,
            after,
            json!([{"op": "replace", "path": "/items", "value": [1, 2]}]),
        );
    }
}
