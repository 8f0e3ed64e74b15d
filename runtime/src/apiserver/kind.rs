//! What the server knows about each kind it serves, taken from the kind's Rust type: the
//! CustomResourceDefinition that kube's `CustomResourceExt::crd()` derives (the same one
//! rsbuilder's CRD engine writes), so a kind served here and the same kind served as a CRD
//! cannot disagree on names, columns, subresources or schema.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition,
};
use serde_json::Value;

/// One served kind at one version.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKind {
    /// API group (`example.com`).
    pub group: String,
    /// Version (`v1`).
    pub version: String,
    /// Kind (`Database`).
    pub kind: String,
    /// List kind (`DatabaseList`).
    pub list_kind: String,
    /// Resource name in URLs (`databases`).
    pub plural: String,
    /// Singular name (`database`).
    pub singular: String,
    /// Short names (`db`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Namespaced or cluster-wide.
    pub namespaced: bool,
    /// The printer columns after `Name`: the type's, or `Age` when it has none (as the
    /// apiextensions server defaults them).
    pub columns: Vec<CustomResourceColumnDefinition>,
    /// Whether `/status` is a subresource (status and spec are then written separately).
    pub status_subresource: bool,
    /// The version's OpenAPI v3 schema, as a JSON value (`None` if the CRD has none).
    pub schema: Option<Value>,
}

impl ApiKind {
    /// The description of the kind `K` (a `#[derive(CustomResource)]` type) from `K::crd()`.
    /// Errors: as [`ApiKind::from_crd`].
    pub fn of<K: kube_core::CustomResourceExt>() -> Result<Self, String> {
        let crd = K::crd();
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .or(crd.spec.versions.first())
            .map(|v| v.name.clone())
            .ok_or_else(|| format!("CRD {} has no version", K::crd_name()))?;
        Self::from_crd(&crd, &version)
    }

    /// The description of `crd` at `version`. Errors: the CRD has no such version.
    pub fn from_crd(crd: &CustomResourceDefinition, version: &str) -> Result<Self, String> {
        let spec = &crd.spec;
        let v = spec
            .versions
            .iter()
            .find(|v| v.name == version)
            .ok_or_else(|| {
                format!(
                    "CRD {} has no version {version}",
                    crd.metadata.name.as_deref().unwrap_or(&spec.names.plural)
                )
            })?;
        let names = &spec.names;
        let columns = match &v.additional_printer_columns {
            Some(cols) if !cols.is_empty() => cols.clone(),
            _ => vec![CustomResourceColumnDefinition {
                name: "Age".into(),
                type_: "date".into(),
                json_path: ".metadata.creationTimestamp".into(),
                description: Some(CREATION_TIMESTAMP_DOC.into()),
                ..Default::default()
            }],
        };
        Ok(Self {
            group: spec.group.clone(),
            version: version.to_string(),
            kind: names.kind.clone(),
            list_kind: names
                .list_kind
                .clone()
                .unwrap_or_else(|| format!("{}List", names.kind)),
            plural: names.plural.clone(),
            singular: names
                .singular
                .clone()
                .unwrap_or_else(|| names.kind.to_lowercase()),
            short_names: names.short_names.clone().unwrap_or_default(),
            categories: names.categories.clone().unwrap_or_default(),
            namespaced: spec.scope == "Namespaced",
            columns,
            status_subresource: v.subresources.as_ref().is_some_and(|s| s.status.is_some()),
            schema: v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .and_then(|s| serde_json::to_value(s).ok()),
        })
    }

    /// `group/version`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// `plural.group`, the name errors use for the resource (`databases.example.com`).
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }
}

/// The description the API server gives the `Age` column and `creationTimestamp` (ours, in
/// the sense of ObjectMeta's field documentation).
pub const CREATION_TIMESTAMP_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC.";

/// The description of the `Name` column.
pub const NAME_DOC: &str =
    "Name must be unique within a namespace. It is the name clients use to refer to the object.";

impl ApiKind {
    /// Removes the fields the schema does not declare, as the apiextensions server prunes a
    /// custom resource (structural schemas: `properties`, `additionalProperties`, `items`,
    /// `x-kubernetes-preserve-unknown-fields`). `metadata`, `apiVersion` and `kind` are left
    /// alone. Out: the removed fields' paths (`spec.colour`), in document order.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut removed = Vec::new();
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
