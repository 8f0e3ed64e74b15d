// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The walk over an object: a node's rules run on the value at that node, then on the values
//! under it, each with the old value it correlates with on an update.

use serde_json::Value;

use super::compile::Node;
use super::eval::{Out, eval_rules};
use super::fields::child;

/// Evaluates `node`'s rules on `v` (at `path`, `""` for the root) and walks down. Out:
/// `Err(())` when the cost limit stopped validation (no further rule runs, as the API server
/// stops).
pub(super) fn walk(
    node: &Node,
    schema: &Value,
    path: &str,
    v: &Value,
    old: Option<&Value>,
    parent_unchanged: bool,
    out: &mut Out,
) -> Result<(), ()> {
    if v.is_null() {
        return Ok(());
    }
    let old = old.filter(|o| !o.is_null());
    // Ratcheting (`CRDValidationRatcheting`): a value equal to its correlated old value, or
    // under an unchanged one, keeps passing the rules that do not use oldSelf.
    let unchanged = match old {
        Some(o) => o == v,
        None => parent_unchanged,
    };
    if !node.rules.is_empty() {
        eval_rules(node, schema, path, v, old, unchanged, out)?;
    }
    for sub in &node.all_of {
        walk(sub, schema, path, v, old, parent_unchanged, out)?;
    }
    match v {
        Value::Object(map) => {
            // Every map type (granular or atomic) correlates by key.
            for (k, sub) in &node.properties {
                if let Some(x) = map.get(k) {
                    let s = &schema["properties"][k];
                    walk(
                        sub,
                        s,
                        &child(path, k),
                        x,
                        old.and_then(|o| o.get(k)),
                        unchanged,
                        out,
                    )?;
                }
            }
            if let Some(sub) = &node.additional {
                let s = &schema["additionalProperties"];
                for (k, x) in map {
                    let p = format!("{}[{k}]", if path.is_empty() { "<nil>" } else { path });
                    walk(sub, s, &p, x, old.and_then(|o| o.get(k)), unchanged, out)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = &node.items {
                let s = &schema["items"];
                let keys: Option<Vec<&str>> = (schema.get("x-kubernetes-list-type")
                    == Some(&Value::String("map".into())))
                .then(|| {
                    schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default()
                });
                for (i, x) in items.iter().enumerate() {
                    let old_item = match (&keys, old.and_then(Value::as_array)) {
                        (Some(keys), Some(olds)) if !keys.is_empty() => olds
                            .iter()
                            .find(|o| keys.iter().all(|k| o.get(k) == x.get(k))),
                        _ => None,
                    };
                    let p = format!("{}[{i}]", if path.is_empty() { "<nil>" } else { path });
                    walk(sub, s, &p, x, old_item, unchanged, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
