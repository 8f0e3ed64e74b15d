//! Server-side apply's list and map semantics: `x-kubernetes-list-type` (atomic, set, map)
//! only on arrays, set items atomic and not nullable, map lists keyed by scalar item fields
//! that are required or defaulted and never null; `x-kubernetes-map-type` (atomic, granular)
//! only on objects. kube-derive writes these from `#[x_kube(merge_strategy = ...)]` and
//! `#[schemars(extend(...))]`, and checks none of them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};

use super::place::Ctx;
use super::{Sink, Step, is_true, items};

pub(super) fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    let ty = s.type_.as_deref().unwrap_or("");
    if let Some(mt) = &s.x_kubernetes_map_type {
        if ty != "object" {
            sink.schema(
                p,
                format!(
                    "x-kubernetes-map-type ({mt}) is only allowed on objects, not on {}",
                    or_untyped(ty)
                ),
            )
            .help("put the map type on a struct or map field");
        }
        if mt != "atomic" && mt != "granular" {
            sink.schema(
                p,
                format!("x-kubernetes-map-type {mt:?} is neither \"atomic\" nor \"granular\""),
            );
        }
    }
    let keys = s.x_kubernetes_list_map_keys.as_deref().unwrap_or_default();
    let Some(lt) = s.x_kubernetes_list_type.as_deref() else {
        if !keys.is_empty() {
            sink.schema(
                p,
                "x-kubernetes-list-map-keys needs x-kubernetes-list-type: map",
            )
            .help("use #[x_kube(merge_strategy = ListMerge::Map(vec![...]))], which sets both");
        }
        return;
    };
    if ty != "array" {
        sink.schema(
            p,
            format!(
                "x-kubernetes-list-type ({lt}) is only allowed on arrays, not on {}",
                or_untyped(ty)
            ),
        )
        .help("put the list type on a Vec field");
    } else if lt == "set"
        && let Some(is) = items(s)
    {
        match is.type_.as_deref() {
            Some("array")
                if is
                    .x_kubernetes_list_type
                    .as_deref()
                    .is_some_and(|t| t != "atomic") =>
            {
                sink.schema(&p.child(Step::Items), "the items of a list of type set that are lists must be x-kubernetes-list-type: atomic");
            }
            Some("object") if is.x_kubernetes_map_type.as_deref() != Some("atomic") => {
                sink.schema(&p.child(Step::Items), "the items of a list of type set that are objects must be x-kubernetes-map-type: atomic")
                        .help("use a set of scalars, or a list of type map keyed by a field of the items (#[x_kube(merge_strategy = ListMerge::Map(vec![\"name\".into()]))])");
            }
            _ => {}
        }
    }
    if !matches!(lt, "atomic" | "set" | "map") {
        sink.schema(
            p,
            format!("x-kubernetes-list-type {lt:?} is not one of \"atomic\", \"set\", \"map\""),
        );
    }
    if !keys.is_empty() && lt != "map" {
        sink.schema(
            p,
            format!("x-kubernetes-list-map-keys needs x-kubernetes-list-type: map, not {lt}"),
        );
    }
    if matches!(lt, "set" | "map") && items(s).is_some_and(|i| is_true(i.nullable)) {
        sink.schema(
            &p.child(Step::Items),
            format!("the items of a list of type {lt} cannot be nullable"),
        )
        .construct("list items that may be null (`Vec<Option<T>>`)")
        .help("use `Vec<T>`");
    }
    if lt == "map" {
        map_list(s, keys, ctx, sink);
    }
}

fn or_untyped(ty: &str) -> String {
    if ty.is_empty() {
        "a schema without a type".into()
    } else {
        format!("type {ty}")
    }
}

fn map_list(s: &JSONSchemaProps, keys: &[String], ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    if keys.is_empty() {
        sink.schema(p, "x-kubernetes-list-type map needs x-kubernetes-list-map-keys")
            .help("name the key fields: #[x_kube(merge_strategy = ListMerge::Map(vec![\"name\".into()]))]");
    }
    let is = match &s.items {
        None => {
            sink.schema(p, "a list of type map must have an items schema");
            return;
        }
        Some(JSONSchemaPropsOrArray::Schemas(_)) => {
            sink.schema(p, "a list of type map must have a single items schema");
            return;
        }
        Some(JSONSchemaPropsOrArray::Schema(is)) => is,
    };
    if is.type_.as_deref() != Some("object") {
        sink.schema(
            &p.child(Step::Items),
            "the items of a list of type map must be objects",
        )
        .help("key a list of structs; for a list of scalars use ListMerge::Set");
        return;
    }
    let required = is.required.as_deref().unwrap_or_default();
    let mut seen: Vec<&str> = Vec::new();
    for k in keys {
        let at = p.child(Step::Items).child(Step::Property(k.clone()));
        if seen.contains(&k.as_str()) {
            sink.schema(p, format!("x-kubernetes-list-map-keys names {k:?} twice"));
        }
        seen.push(k);
        let Some(prop) = is.properties.as_ref().and_then(|ps| ps.get(k)) else {
            sink.schema(
                p,
                format!("the list map key {k:?} is not a field of the items"),
            )
            .help("name fields of the item type as serde names them (after rename)");
            continue;
        };
        if matches!(prop.type_.as_deref(), Some("array" | "object")) {
            sink.schema(
                &at,
                format!(
                    "the list map key {k:?} must be a scalar field, not an {}",
                    prop.type_.as_deref().unwrap_or_default()
                ),
            );
        }
        if !required.contains(k) && prop.default.is_none() {
            sink.schema(
                &at,
                format!("the list map key {k:?} must be a required field or have a default"),
            )
            .construct("an optional list map key (`Option<T>`)")
            .help("make the key field a plain (non-Option) type, or give it #[serde(default)]");
        }
        if is_true(prop.nullable) {
            sink.schema(&at, format!("the list map key {k:?} cannot be nullable"))
                .construct("a list map key that may be null (`Option<T>`)")
                .help("make the key field a plain (non-Option) type");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::spec_violations;
    use serde_json::json;

    #[test]
    fn list_map_keys_must_be_required_or_defaulted_and_not_nullable() {
        let list = |name: serde_json::Value, required: serde_json::Value| {
            spec_violations(json!({"type": "object", "properties": {"ports": {
                "type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": required, "properties": {"name": name, "port": {"type": "integer"}}},
            }}}))
        };
        assert!(list(json!({"type": "string"}), json!(["name"])).is_empty());
        assert!(list(json!({"type": "string", "default": "http"}), json!([])).is_empty());
        assert_eq!(
            list(json!({"type": "string", "nullable": true}), json!([])),
            [
                ".spec.ports[*].name: the list map key \"name\" must be a required field or have a default",
                ".spec.ports[*].name: the list map key \"name\" cannot be nullable",
            ]
        );
        assert_eq!(
            list(json!({"type": "object"}), json!(["name"])),
            [
                ".spec.ports[*].name: the list map key \"name\" must be a scalar field, not an object"
            ]
        );
    }

    #[test]
    fn list_and_map_types_sit_on_arrays_and_objects() {
        let got = spec_violations(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-kubernetes-list-type": "set"},
            "b": {"type": "array", "items": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
            "c": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "set"},
            "d": {"type": "array", "items": {"type": "string", "nullable": true}, "x-kubernetes-list-type": "set"},
            "e": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"},
            "f": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                  "x-kubernetes-list-map-keys": ["k"]},
            "g": {"type": "array", "items": {"type": "object", "x-kubernetes-map-type": "atomic"}, "x-kubernetes-list-type": "set"},
        }}));
        assert_eq!(
            got,
            [
                ".spec.a: x-kubernetes-list-type (set) is only allowed on arrays, not on type string",
                ".spec.b: x-kubernetes-map-type (atomic) is only allowed on objects, not on type array",
                ".spec.c[*]: the items of a list of type set that are objects must be x-kubernetes-map-type: atomic",
                ".spec.d[*]: the items of a list of type set cannot be nullable",
                ".spec.e: x-kubernetes-list-type \"bag\" is not one of \"atomic\", \"set\", \"map\"",
                ".spec.f: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map",
            ]
        );
    }
}
