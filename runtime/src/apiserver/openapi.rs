// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! `/openapi/v2` and `/openapi/v3` from each kind's CRD schema, named and tagged as the
//! apiextensions server publishes custom resources (`com.example.v1.Database`, with
//! `x-kubernetes-group-version-kind`), so `kubectl explain` finds them.

use std::hash::{Hash, Hasher};

use serde_json::{Map, Value, json};

use super::kind::ApiKind;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// The definition of the `/scale` subresource's body.
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The definition name of `kind` (the group reversed, then version and kind).
pub fn definition_name(kind: &ApiKind, suffix: &str) -> String {
    let group: Vec<&str> = kind.group.split('.').rev().collect();
    format!("{}.{}.{}{suffix}", group.join("."), kind.version, kind.kind)
}

fn object_meta() -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    json!({
        "type": "object",
        "description": "Standard object metadata: name, namespace, labels, annotations and what the server records.",
        "properties": {
            "name": s("The object's name, unique in its namespace."),
            "generateName": s("A prefix the server completes into a unique name when name is empty."),
            "namespace": s("The namespace the object lives in."),
            "uid": s("The server-assigned unique id of this object."),
            "resourceVersion": s("The version of this object; a write carrying an older one fails with 409 Conflict."),
            "generation": {"type": "integer", "format": "int64", "description": "Raised by the server on every change of the desired state."},
            "creationTimestamp": {"type": "string", "format": "date-time", "description": "When the server created the object (RFC 3339, UTC)."},
            "deletionTimestamp": {"type": "string", "format": "date-time", "description": "When deletion was asked for; the object stays while finalizers remain."},
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": "Seconds allowed for graceful termination."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Key/value pairs that label selectors select by."},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Key/value pairs for tools; not selectable."},
            "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Names of the parties that must finish before the object is removed."},
        },
    })
}

/// The `autoscaling/v1` Scale, in our words for its fields.
fn scale_schema(prefix: &str) -> Value {
    json!({
        "type": "object",
        "description": "The replica count of a resource that has a scale subresource.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"description": "Standard object metadata.", "allOf": [{"$ref": format!("{prefix}{OBJECT_META}")}]},
            "spec": {"type": "object", "description": "The wanted state.", "properties": {
                "replicas": {"type": "integer", "format": "int32", "description": "How many replicas are wanted."}}},
            "status": {"type": "object", "description": "The observed state.", "required": ["replicas"], "properties": {
                "replicas": {"type": "integer", "format": "int32", "description": "How many replicas were observed."},
                "selector": {"type": "string", "description": "The label selector of the replicas, in its string form."}}},
        },
        "x-kubernetes-group-version-kind": [{"group": "autoscaling", "version": "v1", "kind": "Scale"}],
    })
}

fn with_refs(kind: &ApiKind, prefix: &str) -> (Value, Value) {
    let gvk = json!([{"group": kind.group, "version": kind.version, "kind": kind.kind}]);
    let mut schema = kind
        .schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object"}));
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "metadata".into(),
            json!({"description": "Standard object metadata.", "allOf": [{"$ref": format!("{prefix}{OBJECT_META}")}]}),
        );
    }
    schema["x-kubernetes-group-version-kind"] = gvk.clone();
    let list = json!({
        "type": "object",
        "description": format!("A list of {}.", kind.kind),
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"allOf": [{"$ref": format!("{prefix}{LIST_META}")}]},
            "items": {"type": "array", "items": {"$ref": format!("{prefix}{}", definition_name(kind, ""))}},
        },
        "x-kubernetes-group-version-kind": [{"group": kind.group, "version": kind.version, "kind": kind.list_kind}],
    });
    (schema, list)
}

fn definitions<'a>(kinds: impl Iterator<Item = &'a ApiKind>, prefix: &str) -> Map<String, Value> {
    let mut defs = Map::new();
    let mut any_scale = false;
    for k in kinds {
        any_scale |= k.scale.is_some();
        let (schema, list) = with_refs(k, prefix);
        defs.insert(definition_name(k, ""), schema);
        defs.insert(definition_name(k, "List"), list);
    }
    if any_scale {
        defs.insert(SCALE.into(), scale_schema(prefix));
    }
    defs.insert(OBJECT_META.into(), object_meta());
    defs.insert(
        LIST_META.into(),
        json!({"type": "object", "properties": {
            "resourceVersion": {"type": "string"}, "continue": {"type": "string"},
            "remainingItemCount": {"type": "integer", "format": "int64"}}}),
    );
    defs
}

/// The operations of `kind`'s paths, tagged with its GVK (kubectl explain finds the kind of
/// a resource through them) and listing the `fieldValidation` parameter of the writes
/// (kubectl sends `fieldValidation=Strict` only to a server whose document lists it).
fn paths(kind: &ApiKind, into: &mut Map<String, Value>) {
    let gvk = json!({"group": kind.group, "version": kind.version, "kind": kind.kind});
    let base = if kind.namespaced {
        format!(
            "/apis/{}/{}/namespaces/{{namespace}}/{}",
            kind.group, kind.version, kind.plural
        )
    } else {
        format!("/apis/{}/{}/{}", kind.group, kind.version, kind.plural)
    };
    let schema_ref = |suffix: &str| json!({"$ref": format!("#/components/schemas/{}", definition_name(kind, suffix))});
    let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": true});
    let op = |action: &str, suffix: &str, writes: bool| {
        let mut params = vec![];
        if writes {
            params.extend([
                query("dryRun"),
                query("fieldManager"),
                query("fieldValidation"),
            ]);
        }
        json!({
            "operationId": format!("{action}{}", kind.kind),
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "parameters": params,
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema_ref(suffix)}}}},
        })
    };
    into.insert(
        base.clone(),
        json!({
            "get": op("list", "List", false),
            "post": op("post", "", true),
            "delete": op("deletecollection", "List", false),
        }),
    );
    into.insert(
        format!("{base}/{{name}}"),
        json!({
            "get": op("get", "", false),
            "put": op("put", "", true),
            "patch": op("patch", "", true),
            "delete": op("delete", "", false),
        }),
    );
    if kind.scale.is_some() {
        let scale_gvk = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
        let scale_op = |action: &str, writes: bool| {
            let mut o = op(action, "", writes);
            o["operationId"] = json!(format!("{action}{}Scale", kind.kind));
            o["x-kubernetes-group-version-kind"] = scale_gvk.clone();
            o["responses"]["200"]["content"]["application/json"]["schema"] =
                json!({"$ref": format!("#/components/schemas/{SCALE}")});
            o
        };
        into.insert(
            format!("{base}/{{name}}/scale"),
            json!({
                "get": scale_op("get", false),
                "put": scale_op("put", true),
                "patch": scale_op("patch", true),
            }),
        );
    }
    if kind.status_subresource {
        into.insert(
            format!("{base}/{{name}}/status"),
            json!({
                "get": op("get", "", false),
                "put": op("put", "", true),
                "patch": op("patch", "", true),
            }),
        );
    }
}

fn v3_document(kinds: &[ApiKind], group: &str, version: &str) -> Option<Value> {
    let selected: Vec<&ApiKind> = kinds
        .iter()
        .filter(|k| k.group == group && k.version == version)
        .collect();
    if selected.is_empty() {
        return None;
    }
    let mut all_paths = Map::new();
    for k in &selected {
        paths(k, &mut all_paths);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": all_paths,
        "components": {"schemas": definitions(selected.into_iter(), "#/components/schemas/")},
    }))
}

fn hash(v: &Value) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.to_string().hash(&mut h);
    format!("{:016X}", h.finish())
}

/// The document at `path` (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/apis/<g>/<v>`), or
/// `None` for another path.
pub fn serve(kinds: &[ApiKind], path: &str) -> Option<Value> {
    if path == "/openapi/v2" {
        return Some(json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "paths": {},
            "definitions": definitions(kinds.iter(), "#/definitions/"),
        }));
    }
    if path == "/openapi/v3" || path == "/openapi/v3/" {
        let mut paths = Map::new();
        for k in kinds {
            let gv = format!("apis/{}/{}", k.group, k.version);
            if paths.contains_key(&gv) {
                continue;
            }
            let doc = v3_document(kinds, &k.group, &k.version)?;
            paths.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", hash(&doc))}),
            );
        }
        return Some(json!({"paths": paths}));
    }
    let rest = path.strip_prefix("/openapi/v3/apis/")?;
    let (group, version) = rest.trim_end_matches('/').split_once('/')?;
    v3_document(kinds, group, version)
}
