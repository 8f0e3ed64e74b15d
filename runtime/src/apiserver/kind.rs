// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! What the server knows about each kind it serves, taken from the kind's Rust type: the
//! CustomResourceDefinition that kube's `CustomResourceExt::crd()` derives (the same one
//! rsbuilder's CRD engine writes), so a kind served here and the same kind served as a CRD
//! cannot disagree on names, columns, subresources or schema.
//!
//! What the schema does to an object: `kind/prune.rs` ([`ApiKind::prune`],
//! [`ApiKind::normalize`]) and `kind/validate.rs` ([`ApiKind::validate`]).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition,
};
use serde_json::Value;

use super::admission::{Admitted, Hook, Invalid};
use super::status::Subject;
use crate::webhook::{Defaulter, Validator};

mod prune;
mod validate;

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
    /// The `/scale` subresource's paths, when the CRD asks for one (`subresources.scale`);
    /// `None`: `/scale` answers 404.
    pub scale: Option<ScalePaths>,
    /// The version's OpenAPI v3 schema, as a JSON value (`None` if the CRD has none).
    pub schema: Option<Value>,
    /// For a kind served without a schema (the test cluster's built-in kinds): the list and
    /// map types, map keys and strategic-merge-patch strategies of its fields, as Kubernetes'
    /// OpenAPI declares them (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
    /// `x-kubernetes-map-type`, `x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`
    /// under `properties` / `items` / `additionalProperties`). Read only to merge (server-side
    /// apply, strategic merge patch), never to validate, prune or default. `Some` also makes
    /// the kind accept strategic merge patches, as kube-apiserver does for built-in kinds only.
    pub merge_facts: Option<Value>,
    /// Defaulting and validation in Rust ([`super::admission`]), set with
    /// [`ApiKind::admission`], [`ApiKind::defaulting`] or [`ApiKind::validating`]; `None`: only
    /// the schema and metadata rules.
    pub admission: Option<Hook>,
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

    /// The description of `crd` at `version`, its `x-kubernetes-validations` rules compiled
    /// ([`super::cel::check`]). Errors: the CRD has no such version, or a rule does not
    /// compile (the rule and its schema path named).
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
        let schema = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok());
        super::cel::check(schema.as_ref()).map_err(|e| {
            let name = crd.metadata.name.as_deref().unwrap_or(&spec.names.plural);
            format!("CRD {name} version {version}: {e}")
        })?;
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
            scale: v
                .subresources
                .as_ref()
                .and_then(|s| s.scale.as_ref())
                .map(|s| ScalePaths {
                    spec_replicas: s.spec_replicas_path.clone(),
                    status_replicas: s.status_replicas_path.clone(),
                    label_selector: s.label_selector_path.clone().filter(|p| !p.is_empty()),
                }),
            schema,
            merge_facts: None,
            admission: None,
        })
    }

    /// The schema server-side apply merges and tracks fields by: [`Self::schema`], else
    /// [`Self::merge_facts`], else `null` (every list atomic, every object a map).
    pub fn merge_schema(&self) -> Value {
        self.schema
            .clone()
            .or_else(|| self.merge_facts.clone())
            .unwrap_or(Value::Null)
    }

    /// The kind with `admission`'s defaulting and validation run on every create, update,
    /// patch and delete ([`super::admission`]); `K` is the kind's Rust type.
    pub fn admission<K, A>(mut self, admission: A) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
        A: Defaulter<K, Invalid> + Validator<K, Admitted>,
    {
        self.admission = Some(Hook::new::<K, A>(admission));
        self
    }

    /// The kind with `defaulter` run on every create, update and patch, and no validation in
    /// Rust ([`super::admission`]).
    pub fn defaulting<K, D>(mut self, defaulter: D) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K, Invalid>,
    {
        self.admission = Some(Hook::defaulting::<K, D>(defaulter));
        self
    }

    /// The kind with `validator` run on every create, update, patch and delete, and no
    /// defaulting in Rust ([`super::admission`]).
    pub fn validating<K, V>(mut self, validator: V) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
        V: Validator<K, Admitted>,
    {
        self.admission = Some(Hook::validating::<K, V>(validator));
        self
    }

    /// `group/version`, or the version alone for the core group (`v1`), as `apiVersion`
    /// fields and the `/api/v1` path write it.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A kind's errors name its group, its plural as the resource, and its kind; its
/// [`Subject::qualified`] name is `plural.group` (`databases.example.com`; the plural alone in
/// the core group: `pods`), as `schema.GroupResource` prints it.
impl Subject for ApiKind {
    fn group(&self) -> &str {
        &self.group
    }

    fn resource(&self) -> &str {
        &self.plural
    }

    fn kind(&self) -> &str {
        &self.kind
    }
}

/// Where a kind's `autoscaling/v1` Scale reads and writes its numbers: the JSON paths of the
/// CRD's `subresources.scale` (`.spec.replicas`), dot-separated, without array notation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath`: Scale `spec.replicas`, the one field a write to `/scale` changes.
    pub spec_replicas: String,
    /// `statusReplicasPath`: Scale `status.replicas` (0 when the object has no value there).
    pub status_replicas: String,
    /// `labelSelectorPath`: Scale `status.selector` (empty when unset or absent).
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The segments of `path` (`.spec.replicas` → `["spec", "replicas"]`).
    pub fn segments(path: &str) -> Vec<&str> {
        path.trim_start_matches('.').split('.').collect()
    }

    /// The value at `path` in `obj`, if every segment is there.
    pub fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
        Self::segments(path)
            .into_iter()
            .try_fold(obj, |v, seg| v.get(seg))
    }

    /// Sets `path` in `obj` to `value`, creating the objects on the way (as unstructured's
    /// `SetNestedField` does). Errors: a segment on the way holds something other than an
    /// object (the path's text names it).
    pub fn set(obj: &mut Value, path: &str, value: Value) -> Result<(), String> {
        let segs = Self::segments(path);
        let (last, parents) = segs
            .split_last()
            .ok_or_else(|| format!("empty path {path:?}"))?;
        let mut at = obj;
        for seg in parents {
            let map = at
                .as_object_mut()
                .ok_or_else(|| format!("{path}: {seg} is not inside an object"))?;
            at = map
                .entry(seg.to_string())
                .or_insert_with(|| Value::Object(Default::default()));
        }
        at.as_object_mut()
            .ok_or_else(|| format!("{path}: the value holding {last} is not an object"))?
            .insert(last.to_string(), value);
        Ok(())
    }
}

/// The description the API server gives the `Age` column and `creationTimestamp` (ours, in
/// the sense of ObjectMeta's field documentation).
pub const CREATION_TIMESTAMP_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC.";

/// The description of the `Name` column.
pub const NAME_DOC: &str =
    "Name must be unique within a namespace. It is the name clients use to refer to the object.";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn database_example_kind() -> ApiKind {
        ApiKind {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Database".into(),
            list_kind: "DatabaseList".into(),
            plural: "databases".into(),
            singular: "database".into(),
            short_names: vec![],
            categories: vec![],
            namespaced: true,
            columns: vec![],
            status_subresource: true,
            scale: None,
            schema: Some(json!({
                "type": "object",
                "required": ["spec"],
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["engine", "version", "replicas"],
                        "properties": {
                            "engine": {"type": "string", "enum": ["postgres", "mysql"]},
                            "version": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)*$"},
                            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                    },
                    "status": {"type": "object", "properties": {"nodes": {"type": "array", "items": {"type": "string"}}}},
                },
            })),
            merge_facts: None,
            admission: None,
        }
    }

    #[test]
    fn the_database_examples_constraints_are_enforced_with_the_api_servers_causes() {
        let k = database_example_kind();
        let ok = json!({"spec": {"engine": "mysql", "version": "8.0", "replicas": 3}});
        assert_eq!(k.validate(&ok), Vec::<(String, String)>::new());
        let bad = json!({"spec": {"engine": "oracle", "version": "latest", "replicas": 11},
                         "status": {"nodes": [1]}});
        let fields: Vec<(String, String)> = k.validate(&bad);
        assert_eq!(
            fields,
            [
                ("spec.engine".to_string(), "Unsupported value: \"oracle\": supported values: \"postgres\", \"mysql\"".to_string()),
                ("spec.replicas".to_string(), "Invalid value: 11: spec.replicas in body should be less than or equal to 10".to_string()),
                ("spec.version".to_string(), "Invalid value: \"latest\": spec.version in body should match '^[0-9]+(\\.[0-9]+)*$'".to_string()),
                ("status.nodes[0]".to_string(), "Invalid value: \"integer\": status.nodes[0] in body must be of type string: \"integer\"".to_string()),
            ]
        );
        let missing = json!({"spec": {"engine": "mysql"}});
        let fields: Vec<String> = k.validate(&missing).into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["spec.version", "spec.replicas"]);
        assert_eq!(
            k.validate(&json!({}))[0],
            ("spec".to_string(), "Required value".to_string())
        );
    }

    #[test]
    fn the_scale_paths_come_from_the_crds_scale_subresource() {
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "databases.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Database", "plural": "databases"},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {},
                        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                  "labelSelectorPath": ".status.selector"}}},
                    {"name": "v2", "served": true, "storage": false, "subresources": {"status": {}}},
                ]},
        }))
        .unwrap();
        assert_eq!(
            ApiKind::from_crd(&crd, "v1").unwrap().scale,
            Some(ScalePaths {
                spec_replicas: ".spec.replicas".into(),
                status_replicas: ".status.replicas".into(),
                label_selector: Some(".status.selector".into()),
            })
        );
        assert_eq!(ApiKind::from_crd(&crd, "v2").unwrap().scale, None);
    }

    #[test]
    fn scale_paths_read_and_set_nested_fields() {
        let mut obj = json!({"spec": {"replicas": 2}, "status": "flat"});
        assert_eq!(ScalePaths::lookup(&obj, ".spec.replicas"), Some(&json!(2)));
        assert_eq!(ScalePaths::lookup(&obj, ".spec.missing"), None);
        ScalePaths::set(&mut obj, ".spec.scaling.replicas", json!(3)).unwrap();
        assert_eq!(
            obj["spec"],
            json!({"replicas": 2, "scaling": {"replicas": 3}})
        );
        let e = ScalePaths::set(&mut obj, ".status.replicas", json!(1)).unwrap_err();
        assert_eq!(
            e,
            ".status.replicas: the value holding replicas is not an object"
        );
    }

    #[test]
    fn pruning_removes_only_undeclared_fields_metadata_ones_too() {
        let k = database_example_kind();
        let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"x": 1},
            "spec": {"engine": "mysql", "colour": "blue", "labels": {"a": "b"}}, "extra": true});
        let removed = k.prune(&mut obj);
        assert_eq!(removed, ["metadata.x", "extra", "spec.colour"]);
        assert_eq!(
            obj["spec"],
            json!({"engine": "mysql", "labels": {"a": "b"}})
        );
        // ObjectMeta has no `x`: pruned as the apiextensions server drops it.
        assert_eq!(obj["metadata"], json!({}));
    }

    fn kind_with(spec: Value) -> ApiKind {
        ApiKind {
            schema: Some(json!({"type": "object", "properties": {"spec": spec}})),
            ..database_example_kind()
        }
    }

    fn causes(spec_schema: Value, spec: Value) -> Vec<(String, String)> {
        kind_with(spec_schema).validate(&json!({"spec": spec}))
    }

    fn cause(field: &str, message: &str) -> (String, String) {
        (field.to_string(), message.to_string())
    }

    #[test]
    fn formats_are_checked_with_the_api_servers_message() {
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "at": {"type": "string", "format": "date-time"},
            "mine": {"type": "string", "format": "my-own"},
            "count": {"type": "integer", "format": "int32"},
        }});
        assert_eq!(
            causes(
                schema.clone(),
                json!({"id": "a8098c1a-f86e-11da-bd1a-00112444be1e",
                "at": "2014-12-15T19:30:20Z", "mine": "anything", "count": 1})
            ),
            vec![]
        );
        assert_eq!(
            causes(schema, json!({"id": "zzz", "at": "yesterday"})),
            [
                cause(
                    "spec.at",
                    "Invalid value: \"yesterday\": spec.at in body must be of type date-time: \"yesterday\""
                ),
                cause(
                    "spec.id",
                    "Invalid value: \"zzz\": spec.id in body must be of type uuid: \"zzz\""
                ),
            ]
        );
    }

    #[test]
    fn multiple_of_and_unique_items_are_checked() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "multipleOf": 3},
            "f": {"type": "number", "multipleOf": 0.1},
            "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        }});
        assert_eq!(
            causes(
                schema.clone(),
                json!({"n": 9, "f": 0.3, "tags": ["a", "b"]})
            ),
            vec![]
        );
        assert_eq!(
            causes(schema, json!({"n": 7, "f": 0.35, "tags": ["a", "b", "a"]})),
            [
                cause(
                    "spec.f",
                    "Invalid value: 0.35: spec.f in body should be a multiple of 0.1"
                ),
                cause(
                    "spec.n",
                    "Invalid value: 7: spec.n in body should be a multiple of 3"
                ),
                cause(
                    "spec.tags",
                    "Invalid value: \"\": spec.tags in body shouldn't contain duplicates"
                ),
            ]
        );
    }

    #[test]
    fn property_counts_and_additional_properties_are_checked() {
        let schema = json!({"type": "object", "properties": {
            "labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
                       "additionalProperties": {"type": "string", "maxLength": 3}},
        }});
        assert_eq!(
            causes(schema.clone(), json!({"labels": {"a": "x"}})),
            vec![]
        );
        assert_eq!(
            causes(schema.clone(), json!({"labels": {}})),
            [cause(
                "spec.labels",
                "Invalid value: 0: spec.labels in body should have at least 1 properties"
            )]
        );
        assert_eq!(
            causes(
                schema.clone(),
                json!({"labels": {"a": "x", "b": "y", "c": "z"}})
            ),
            [cause(
                "spec.labels",
                "Too many: 3: must have at most 2 items"
            )]
        );
        assert_eq!(
            causes(schema, json!({"labels": {"a": 1, "b": "long"}})),
            [
                cause(
                    "spec.labels.a",
                    "Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\""
                ),
                cause("spec.labels.b", "Too long: may not be more than 3 bytes"),
            ]
        );
    }

    #[test]
    fn combinators_fail_with_the_api_servers_causes() {
        let schema = json!({"type": "object",
            "properties": {"ingress": {"type": "array"}, "egress": {"type": "array"},
                           "port": {"type": "integer"}},
            "anyOf": [{"required": ["ingress"]}, {"required": ["egress"]}],
        });
        assert_eq!(causes(schema.clone(), json!({"egress": []})), vec![]);
        assert_eq!(
            causes(schema, json!({})),
            [
                cause(
                    "<nil>",
                    "Invalid value: \"\": \"spec\" must validate at least one schema (anyOf)"
                ),
                cause("spec.ingress", "Required value"),
            ]
        );
        let one_of = json!({"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(causes(one_of.clone(), json!({"a": "x"})), vec![]);
        assert_eq!(
            causes(one_of.clone(), json!({"a": "x", "b": "y"})),
            [cause(
                "<nil>",
                "Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found 2 valid alternatives"
            )]
        );
        assert_eq!(
            causes(one_of, json!({})),
            [
                cause(
                    "<nil>",
                    "Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found none valid"
                ),
                cause("spec.a", "Required value"),
            ]
        );
        let all_of = json!({"type": "object", "properties": {"n": {"type": "integer",
            "allOf": [{"minimum": 1}, {"maximum": 5}], "not": {"enum": [3]}}}});
        assert_eq!(causes(all_of.clone(), json!({"n": 2})), vec![]);
        assert_eq!(
            causes(all_of.clone(), json!({"n": 9})),
            [
                cause(
                    "spec.n",
                    "Invalid value: 9: spec.n in body should be less than or equal to 5"
                ),
                cause(
                    "<nil>",
                    "Invalid value: \"\": \"spec.n\" must validate all the schemas (allOf)"
                ),
            ]
        );
        assert_eq!(
            causes(all_of, json!({"n": 3})),
            [cause(
                "<nil>",
                "Invalid value: \"\": \"spec.n\" must not validate the schema (not)"
            )]
        );
    }

    #[test]
    fn set_and_map_lists_refuse_duplicates() {
        let schema = json!({"type": "object", "properties": {
            "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        }});
        assert_eq!(
            causes(
                schema,
                json!({"hosts": ["a", "a"], "ports": [{"name": "web"}, {"name": "web"}]})
            ),
            [
                cause("spec.hosts[1]", "Duplicate value: \"a\""),
                cause(
                    "spec.ports[1]",
                    "Duplicate value: map[string]interface {}{\"name\":\"web\"}"
                ),
            ]
        );
    }

    #[test]
    fn normalizing_prunes_drops_nulls_and_fills_defaults() {
        let k = kind_with(json!({"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "image": {"type": "string"},
            "mode": {"type": "string", "default": "fast"},
            "extra": {"type": "object", "default": {"known": 1, "unknown": 2},
                      "properties": {"known": {"type": "integer"}}},
        }}));
        let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Database",
            "metadata": {"name": "a"}, "spec": {"image": null, "mode": null, "colour": "red"}});
        let removed = k.normalize(&mut obj);
        assert_eq!(removed, ["spec.colour"]);
        assert_eq!(
            obj["spec"],
            json!({"replicas": 1, "mode": "fast", "extra": {"known": 1}})
        );
        let mut bare = json!({"metadata": {"name": "b"}});
        k.normalize(&mut bare);
        assert_eq!(bare["spec"]["replicas"], json!(1));
    }

    #[test]
    fn combinators_at_the_root_name_the_root_as_an_empty_path() {
        let k = ApiKind {
            schema: Some(json!({"type": "object",
                "properties": {"spec": {"type": "object"}, "data": {"type": "string"}},
                "oneOf": [{"required": ["spec"]}, {"required": ["data"]}]})),
            ..database_example_kind()
        };
        assert_eq!(
            k.validate(&json!({"metadata": {"name": "a"}, "data": "x"})),
            vec![]
        );
        assert_eq!(
            k.validate(&json!({"metadata": {"name": "a"}})),
            [
                cause(
                    "<nil>",
                    "Invalid value: \"\": \"\" must validate one and only one schema (oneOf). Found none valid"
                ),
                cause("spec", "Required value"),
            ]
        );
    }
}
