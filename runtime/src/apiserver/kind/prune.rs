// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Pruning and normalizing an object by its kind's schema, as the apiextensions server decodes
//! a custom resource: the fields the schema does not declare removed, nulls dropped, defaults
//! filled in.

use serde_json::Value;

use super::ApiKind;

impl ApiKind {
    /// Removes the fields the schema does not declare, as the apiextensions server prunes a
    /// custom resource (structural schemas: `properties`, `additionalProperties`, `items`,
    /// `x-kubernetes-preserve-unknown-fields`); under `metadata`, the fields ObjectMeta does
    /// not have ([`crate::apiserver::objectmeta::prune_unknown`], with or without a schema). `apiVersion`
    /// and `kind` are left alone. Out: the removed fields' paths (`metadata.bogus`,
    /// `spec.colour`).
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut removed = Vec::new();
        if let Some(meta) = obj.get_mut("metadata") {
            removed.extend(crate::apiserver::objectmeta::prune_unknown(meta));
        }
        if let (Some(schema), Some(map)) = (&self.schema, obj.as_object_mut()) {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    if matches!(k.as_str(), "metadata" | "apiVersion" | "kind") {
                        continue;
                    }
                    match props.get(&k) {
                        Some(sub) => {
                            prune_value(sub, map.get_mut(&k).expect("key"), &k, &mut removed)
                        }
                        None => {
                            map.remove(&k);
                            removed.push(k);
                        }
                    }
                }
            }
        }
        removed
    }
}

impl ApiKind {
    /// The object as the apiextensions server decodes a custom resource, on every write (the
    /// body of a create or update, the result of a patch or apply, a dry run too) and every
    /// read from storage: pruned ([`ApiKind::prune`]), its non-nullable nulls without a default
    /// dropped ([`crate::apiserver::defaulting::prune_nulls`]), defaulted
    /// ([`crate::apiserver::defaulting::default`]), and pruned again (a default the schema does not
    /// describe whole, which the apiextensions server refuses in the CRD, is cut to it). Out:
    /// the fields the first pruning removed, as [`ApiKind::prune`].
    pub fn normalize(&self, obj: &mut Value) -> Vec<String> {
        let removed = self.prune(obj);
        if let Some(schema) = &self.schema {
            crate::apiserver::defaulting::prune_nulls(Some(schema), obj);
            crate::apiserver::defaulting::default(schema, obj);
            self.prune(obj);
        }
        removed
    }
}

fn prune_value(schema: &Value, v: &mut Value, path: &str, removed: &mut Vec<String>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match v {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    let sub_path = format!("{path}.{k}");
                    match props.get(&k) {
                        Some(sub) => {
                            prune_value(sub, map.get_mut(&k).expect("key"), &sub_path, removed)
                        }
                        None => {
                            map.remove(&k);
                            removed.push(sub_path);
                        }
                    }
                }
            } else if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, sub) in map.iter_mut() {
                    prune_value(extra, sub, &format!("{path}.{k}"), removed);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_value(item_schema, item, &format!("{path}[{i}]"), removed);
                }
            }
        }
        _ => {}
    }
}
