//! What the API server fixes about Kubernetes objects: `kind` and `apiVersion` are strings
//! and `metadata` an object, at the root and in every embedded resource; at the root the
//! schema may restrict only `metadata.name` and `metadata.generateName`. An embedded resource
//! (`x-kubernetes-embedded-resource`) is an object with fields; int-or-string excludes the
//! other two extensions.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use super::place::{Ctx, Level};
use super::{Sink, Step, is_true};

pub(super) fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    let embedded = is_true(s.x_kubernetes_embedded_resource);
    let int_or_string = is_true(s.x_kubernetes_int_or_string);
    let preserve = is_true(s.x_kubernetes_preserve_unknown_fields);
    if int_or_string && preserve {
        sink.schema(p, "x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string is true");
    }
    if int_or_string && embedded {
        sink.schema(
            p,
            "x-kubernetes-embedded-resource must be false if x-kubernetes-int-or-string is true",
        );
    }
    if embedded && ctx.inside_meta {
        sink.schema(
            p,
            "x-kubernetes-embedded-resource must not be used inside resource metadata",
        );
    }
    if ctx.junctor.is_some() {
        return;
    }
    if embedded {
        if s.type_.as_deref() != Some("object") {
            sink.schema(
                p,
                "type must be object if x-kubernetes-embedded-resource is true",
            )
            .help("an embedded resource is a Kubernetes object: use a struct, or `serde_json::Value` with `type: object` and x-kubernetes-preserve-unknown-fields");
        }
        if s.additional_properties.is_some() {
            sink.schema(
                p,
                "additionalProperties must not be used if x-kubernetes-embedded-resource is set",
            );
        }
        if !preserve && s.properties.as_ref().is_none_or(|p| p.is_empty()) {
            sink.schema(p, "an embedded resource without x-kubernetes-preserve-unknown-fields must specify its properties");
        }
    }
    let resource = ctx.level == Level::Root || embedded;
    if !resource {
        return;
    }
    let props = s.properties.as_ref();
    for key in ["kind", "apiVersion"] {
        if let Some(k) = props.and_then(|p| p.get(key))
            && k.type_.as_deref() != Some("string")
        {
            sink.schema(
                &p.child(Step::Property(key.into())),
                format!("`{key}` of a Kubernetes object must be of type string"),
            );
        }
    }
    let Some(meta) = props.and_then(|p| p.get("metadata")) else {
        return;
    };
    let at = p.child(Step::Property("metadata".into()));
    if meta.type_.as_deref() != Some("object") {
        sink.schema(
            &at,
            "`metadata` of a Kubernetes object must be of type object",
        );
    }
    if ctx.level == Level::Root {
        // Only name and generateName may be restricted; type and default are ignored here
        // (a default is refused where defaults are checked).
        let mut rest = meta.clone();
        let only_names = rest
            .properties
            .as_ref()
            .is_some_and(|p| !p.is_empty() && p.keys().all(|k| k == "name" || k == "generateName"));
        if only_names {
            rest.properties = None;
        }
        rest.type_ = None;
        rest.default = None;
        if rest != JSONSchemaProps::default() {
            sink.schema(&at, "the root `metadata` must not specify anything but the schemas of `name` and `generateName`")
                .help("kube-derive's root type holds the ObjectMeta; do not add a field named `metadata` to the root");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::spec_violations;
    use super::super::{check_version, test_support::crd_version};
    use serde_json::json;

    #[test]
    fn embedded_resources_are_objects_with_string_kinds() {
        let got = spec_violations(json!({"type": "object", "properties": {
            "bad": {"type": "string", "x-kubernetes-embedded-resource": true},
            "empty": {"type": "object", "x-kubernetes-embedded-resource": true},
            "ok": {"type": "object", "x-kubernetes-embedded-resource": true,
                   "x-kubernetes-preserve-unknown-fields": true},
            "typed": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "kind": {"type": "integer"},
                "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
            }},
            "both": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true},
        }}));
        assert_eq!(
            got,
            [
                ".spec.bad: type must be object if x-kubernetes-embedded-resource is true",
                ".spec.bad: an embedded resource without x-kubernetes-preserve-unknown-fields must specify its properties",
                ".spec.both: x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string is true",
                ".spec.empty: an embedded resource without x-kubernetes-preserve-unknown-fields must specify its properties",
                ".spec.typed.kind: `kind` of a Kubernetes object must be of type string",
            ]
        );
    }

    #[test]
    fn the_root_metadata_restricts_only_name_and_generate_name() {
        let with = |meta: serde_json::Value| {
            let v = crd_version(
                json!({"type": "object", "properties": {"metadata": meta}}),
                false,
            );
            check_version(&v)
                .into_iter()
                .map(|v| v.rule)
                .collect::<Vec<_>>()
        };
        assert!(
            with(json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}))
                .is_empty()
        );
        let got = with(json!({"type": "object", "properties": {"labels": {"type": "object"}}}));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains("`name` and `generateName`"), "{got:?}");
        let got = with(json!({"type": "string"}));
        assert!(got[0].contains("must be of type object"), "{got:?}");
    }
}
