//! Structural schemas: every field and list item has a `type` (unless it is int-or-string or
//! preserves unknown fields), arrays have one `items` schema, value validations (`anyOf`,
//! `oneOf`, `allOf`, `not`) carry no structure of their own and name only fields the
//! structural part specifies, and the keywords a CRD does not support are absent. Mirrors
//! `ValidateStructural` and the keyword checks of `ValidateCustomResourceDefinitionOpenAPISchema`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use super::place::{Ctx, Level};
use super::{SchemaPath, Sink, Step, is_true, items};

/// The types a CRD schema may name.
const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

pub(super) fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    keywords(s, ctx, sink);
    match &ctx.junctor {
        None => structure(s, ctx, sink),
        Some(_) => value_validation(s, ctx, sink),
    }
}

/// Whether `any_of` is exactly `[{type: integer}, {type: string}]`, the one shape of `anyOf`
/// whose branches may carry a type.
pub(super) fn is_int_or_string_any_of(any_of: Option<&[JSONSchemaProps]>) -> bool {
    let Some([a, b]) = any_of else { return false };
    let only = |s: &JSONSchemaProps, ty: &str| {
        *s == JSONSchemaProps {
            type_: Some(ty.into()),
            ..Default::default()
        }
    };
    only(a, "integer") && only(b, "string")
}

/// Keywords checked wherever they appear.
fn keywords(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    if is_true(s.unique_items) {
        sink.schema(p, "uniqueItems cannot be set to true (the API server refuses the quadratic check)")
            .construct("`uniqueItems: true`")
            .help("drop uniqueItems; mark the list `x-kubernetes-list-type: set` (#[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]) to have the API server check uniqueness");
    }
    let has_properties = s.properties.as_ref().is_some_and(|p| !p.is_empty());
    let additional_restricts = match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(_)) | Some(JSONSchemaPropsOrBool::Bool(false)) => true,
        Some(JSONSchemaPropsOrBool::Bool(true)) | None => false,
    };
    if has_properties && additional_restricts {
        let v = sink.schema(
            &p.child(Step::AdditionalProperties),
            "additionalProperties and properties are mutual exclusive",
        );
        if matches!(
            s.additional_properties,
            Some(JSONSchemaPropsOrBool::Bool(false))
        ) {
            v.construct("`additionalProperties: false` beside `properties` (#[serde(deny_unknown_fields)])")
                .help("remove #[serde(deny_unknown_fields)]: the API server prunes unknown fields of a structural schema anyway");
        } else {
            v.construct("both `properties` and `additionalProperties` (a map flattened into a struct with #[serde(flatten)])")
                .help("give the map a field of its own (`pub extra: BTreeMap<String, String>`), or flatten a `serde_json::Value` map, which kube-derive turns into x-kubernetes-preserve-unknown-fields");
        }
    }
    if let Some(t) = &s.type_ {
        if t == "null" {
            sink.schema(
                p,
                "type cannot be set to null, use nullable as an alternative",
            )
            .construct("type `null` (a unit type such as `()`)")
            .help("remove the field, or make it an Option of a real type");
        } else if !TYPES.contains(&t.as_str()) {
            sink.schema(p, format!("type {t:?} is not one of {}", TYPES.join(", ")))
                .help("set a JSON schema type through #[schemars(...)] that the API server knows");
        }
    }
    if s.id.is_some() {
        sink.schema(p, "`id` is not supported in a CRD schema");
    }
    if s.additional_items.is_some() {
        sink.schema(p, "`additionalItems` is not supported in a CRD schema")
            .construct("a tuple (an array of fixed positions)")
            .help("use a struct with named fields, or a Vec of one type");
    }
    if s.pattern_properties.as_ref().is_some_and(|m| !m.is_empty()) {
        sink.schema(p, "patternProperties is not supported")
            .construct("a map whose keys are not strings (`patternProperties`)")
            .help("key the map by String (`BTreeMap<String, V>`) and convert the keys in code: CRD maps have string keys");
    }
    if s.definitions.as_ref().is_some_and(|m| !m.is_empty()) {
        sink.schema(p, "definitions are not supported in a CRD schema")
            .construct("`definitions`")
            .help("write the schema inline; see docs/attributes.md");
    }
    if s.dependencies.is_some() {
        sink.schema(p, "dependencies are not supported in a CRD schema")
            .construct("`dependencies`")
            .help("express the dependency as an x-kubernetes-validations rule (#[x_kube(validation = ...)])");
    }
    if let Some(r) = &s.ref_path {
        sink.schema(p, format!("$ref ({r}) is not supported: a CRD schema has no definitions to refer to"))
            .construct("a `$ref` (a recursive type)")
            .help("break the cycle with a `serde_json::Value` field marked `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`");
    }
    if let Some(JSONSchemaPropsOrArray::Schemas(_)) = &s.items {
        sink.schema(p, "items must be a schema object and not an array")
            .construct("a tuple (an array of fixed positions: `items` as a list)")
            .help("use a struct with named fields, or a Vec of one type");
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        sink.schema(
            p,
            "x-kubernetes-preserve-unknown-fields must be true or undefined",
        )
        .construct("`x-kubernetes-preserve-unknown-fields: false`")
        .help("remove the extension: pruning unknown fields is the default");
    }
    if let Some(pattern) = &s.pattern
        && let Some(why) = go_rejects_pattern(pattern)
    {
        sink.schema(p, format!("the pattern {pattern:?} is not a regular expression Go accepts ({why})"))
                .help("Go's RE2 has no look-around and no backreferences; rewrite the pattern, or check the value in an x-kubernetes-validations rule");
    }
}

/// Why Go's `regexp` (RE2) refuses `pattern`, for the constructs RE2 and the `regex` crate
/// both lack (look-around, backreferences). Other patterns the `regex` crate refuses may still
/// be valid Go, so they are not judged.
pub(super) fn go_rejects_pattern(pattern: &str) -> Option<&'static str> {
    let err = regex::Regex::new(pattern).err()?.to_string();
    if err.contains("look-around") {
        Some("look-around is not supported")
    } else if err.contains("backreferences") {
        Some("backreferences are not supported")
    } else {
        None
    }
}

/// The rules of the structural part (outside value validations).
fn structure(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    let ty = s.type_.as_deref().unwrap_or("");
    let int_or_string = is_true(s.x_kubernetes_int_or_string);
    let preserve = is_true(s.x_kubernetes_preserve_unknown_fields);
    let embedded = is_true(s.x_kubernetes_embedded_resource);
    if ty == "array" && s.items.is_none() {
        sink.schema(p, "an array must specify its items")
            .construct("an array without `items`")
            .help("give the list one item type (`Vec<T>`)");
    }
    if ctx.level == Level::Root && s.additional_properties.is_some() {
        sink.schema(
            p,
            "additionalProperties must not be used at the root of a custom resource",
        )
        .help("keep maps in fields of the spec or status");
    }
    if ty.is_empty() && !embedded && !int_or_string && !preserve {
        let rule = match ctx.level {
            Level::Root => "type: must not be empty at the root",
            Level::Item => "type: must not be empty for specified array items",
            Level::Field => "type: must not be empty for specified object fields",
        };
        let v = sink.schema(p, rule);
        let only_null = s
            .enum_
            .as_ref()
            .is_some_and(|e| e.len() == 1 && e[0].0.is_null());
        if only_null {
            v.construct("a field that can only be null (a unit type `()`), without a `type`")
                .help("remove the field: it carries no data");
        } else if s.any_of.is_some() || s.one_of.is_some() {
            v.construct("alternatives without a common `type` (an untagged enum of different shapes)")
                .help("give the variants one JSON type, or type the field as `serde_json::Value` with #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]");
        } else {
            v.construct("a field without a `type` (a `serde_json::Value` gives `{}`)")
                .help("for arbitrary JSON, mark the field #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]; else give it a concrete type");
        }
    }
    if ctx.level == Level::Root {
        if !ty.is_empty() && ty != "object" {
            sink.schema(p, format!("type: must be object at the root, not {ty}"));
        }
        if is_true(s.nullable) {
            sink.schema(p, "nullable cannot be true at the root");
        }
        if ctx.status {
            root_with_status(s, p, sink);
        }
    }
    for (j, branches) in [
        ("allOf", s.all_of.as_deref()),
        ("anyOf", s.any_of.as_deref()),
        ("oneOf", s.one_of.as_deref()),
    ] {
        for (i, b) in branches.into_iter().flatten().enumerate() {
            let step = match j {
                "allOf" => Step::AllOf(i),
                "anyOf" => Step::AnyOf(i),
                _ => Step::OneOf(i),
            };
            completeness(b, Some(s), p, &p.child(step), sink);
        }
    }
    if let Some(n) = &s.not {
        completeness(n, Some(s), p, &p.child(Step::Not), sink);
    }
}

/// With the status subresource, the root may hold only the keywords that survive taking
/// `properties.status` out of it.
fn root_with_status(s: &JSONSchemaProps, p: &SchemaPath, sink: &mut Sink<'_>) {
    let set = [
        ("allOf", s.all_of.is_some()),
        ("anyOf", s.any_of.is_some()),
        ("oneOf", s.one_of.is_some()),
        ("not", s.not.is_some()),
        ("enum", s.enum_.is_some()),
        ("default", s.default.is_some()),
        ("nullable", s.nullable.is_some()),
        ("additionalProperties", s.additional_properties.is_some()),
        ("maxProperties", s.max_properties.is_some()),
        ("minProperties", s.min_properties.is_some()),
        (
            "x-kubernetes-embedded-resource",
            s.x_kubernetes_embedded_resource.is_some(),
        ),
        (
            "x-kubernetes-int-or-string",
            s.x_kubernetes_int_or_string.is_some(),
        ),
        ("x-kubernetes-list-type", s.x_kubernetes_list_type.is_some()),
        (
            "x-kubernetes-list-map-keys",
            s.x_kubernetes_list_map_keys.is_some(),
        ),
        ("x-kubernetes-map-type", s.x_kubernetes_map_type.is_some()),
    ];
    if let Some((k, _)) = set.iter().find(|(_, on)| *on) {
        sink.schema(p, format!("with the status subresource, the root schema must not set `{k}` (only type, properties, required, descriptive keywords, value bounds, x-kubernetes-preserve-unknown-fields and x-kubernetes-validations are allowed there)"))
            .help("move the constraint into the spec type");
    }
}

/// The rules inside a value validation: no structure, no defaults, no descriptions, no
/// Kubernetes extensions, no `metadata`.
fn value_validation(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    let forbidden: [(&str, bool); 13] = [
        ("type", s.type_.is_some() && !ctx.int_or_string_branch),
        ("additionalProperties", s.additional_properties.is_some()),
        ("default", s.default.is_some()),
        ("title", s.title.as_ref().is_some_and(|t| !t.is_empty())),
        (
            "description",
            s.description.as_ref().is_some_and(|d| !d.is_empty()),
        ),
        ("nullable", is_true(s.nullable)),
        (
            "x-kubernetes-preserve-unknown-fields",
            is_true(s.x_kubernetes_preserve_unknown_fields),
        ),
        (
            "x-kubernetes-embedded-resource",
            is_true(s.x_kubernetes_embedded_resource),
        ),
        (
            "x-kubernetes-int-or-string",
            is_true(s.x_kubernetes_int_or_string),
        ),
        (
            "x-kubernetes-list-map-keys",
            s.x_kubernetes_list_map_keys
                .as_ref()
                .is_some_and(|k| !k.is_empty()),
        ),
        ("x-kubernetes-list-type", s.x_kubernetes_list_type.is_some()),
        ("x-kubernetes-map-type", s.x_kubernetes_map_type.is_some()),
        (
            "x-kubernetes-validations",
            s.x_kubernetes_validations
                .as_ref()
                .is_some_and(|v| !v.is_empty()),
        ),
    ];
    for (key, on) in forbidden {
        if on {
            sink.schema(p, format!("`{key}` must not be set inside anyOf, oneOf, allOf or not: a structural schema keeps it outside the value validations"))
                .construct("an alternative (enum variant) that carries its own schema")
                .help("give every variant the same field schemas; see docs/attributes.md on enums");
        }
    }
    if s.properties
        .as_ref()
        .is_some_and(|p| p.contains_key("metadata"))
    {
        sink.schema(
            &p.child(Step::Property("metadata".into())),
            "`metadata` must not be named inside anyOf, oneOf, allOf or not",
        );
    }
}

/// Every field and list item a value validation `v` (at `vpath`) names must also be specified
/// by the structural node `s` (at `spath`).
fn completeness(
    v: &JSONSchemaProps,
    s: Option<&JSONSchemaProps>,
    spath: &SchemaPath,
    vpath: &SchemaPath,
    sink: &mut Sink<'_>,
) {
    let Some(s) = s else {
        sink.schema(
            spath,
            format!("must be specified outside the value validation, because {vpath} names it"),
        )
        .construct("a field named only inside anyOf/oneOf/allOf/not");
        return;
    };
    for (name, vp) in v.properties.iter().flatten() {
        let here = spath.child(Step::Property(name.clone()));
        match s.properties.as_ref().and_then(|p| p.get(name)) {
            Some(sp) => completeness(
                vp,
                Some(sp),
                &here,
                &vpath.child(Step::Property(name.clone())),
                sink,
            ),
            None => {
                sink.schema(
                    &here,
                    format!(
                        "must be specified outside the value validation, because {vpath} names it"
                    ),
                )
                .construct("a field named only inside anyOf/oneOf/allOf/not");
            }
        }
    }
    if let Some(vi) = items(v) {
        completeness(
            vi,
            items(s),
            &spath.child(Step::Items),
            &vpath.child(Step::Items),
            sink,
        );
    }
    for (j, branches) in [
        ("allOf", v.all_of.as_deref()),
        ("anyOf", v.any_of.as_deref()),
        ("oneOf", v.one_of.as_deref()),
    ] {
        for (i, b) in branches.into_iter().flatten().enumerate() {
            let step = match j {
                "allOf" => Step::AllOf(i),
                "anyOf" => Step::AnyOf(i),
                _ => Step::OneOf(i),
            };
            completeness(b, Some(s), spath, &vpath.child(step), sink);
        }
    }
    if let Some(n) = &v.not {
        completeness(n, Some(s), spath, &vpath.child(Step::Not), sink);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::spec_violations;
    use serde_json::json;

    #[test]
    fn a_field_without_a_type_is_not_structural() {
        let got = spec_violations(json!({"type": "object", "properties": {
            "raw": {},
            "ok": {"x-kubernetes-preserve-unknown-fields": true},
            "q": {"x-kubernetes-int-or-string": true},
            "list": {"type": "array", "items": {}},
        }}));
        assert_eq!(
            got,
            [
                ".spec.list[*]: type: must not be empty for specified array items",
                ".spec.raw: type: must not be empty for specified object fields",
            ]
        );
    }

    #[test]
    fn forbidden_keywords_are_each_reported() {
        let got = spec_violations(json!({"type": "object", "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            "byId": {"type": "object", "patternProperties": {"^[0-9]+$": {"type": "string"}}},
            "uniq": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "u": {"type": "null"},
            "closed": {"type": "object", "x-kubernetes-preserve-unknown-fields": false},
            "r": {"$ref": "#/definitions/Node"},
        }}));
        assert_eq!(
            got,
            [
                ".spec.byId: patternProperties is not supported",
                ".spec.closed: x-kubernetes-preserve-unknown-fields must be true or undefined",
                ".spec.pair: items must be a schema object and not an array",
                ".spec.r: $ref (#/definitions/Node) is not supported: a CRD schema has no definitions to refer to",
                ".spec.r: type: must not be empty for specified object fields",
                ".spec.u: type cannot be set to null, use nullable as an alternative",
                ".spec.uniq: uniqueItems cannot be set to true (the API server refuses the quadratic check)",
            ]
        );
    }

    #[test]
    fn properties_and_additional_properties_exclude_each_other() {
        let got = spec_violations(json!({"type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "string"}}));
        assert_eq!(
            got,
            [".spec.*: additionalProperties and properties are mutual exclusive"]
        );
        // `additionalProperties: true` beside properties is allowed.
        assert!(
            spec_violations(json!({"type": "object",
            "properties": {"a": {"type": "string"}}, "additionalProperties": true}))
            .is_empty()
        );
    }

    #[test]
    fn value_validations_carry_no_structure_and_name_only_specified_fields() {
        let got = spec_violations(json!({"type": "object",
        "properties": {"a": {"type": "string"}},
        "oneOf": [
            {"required": ["a"]},
            {"required": ["b"], "properties": {"b": {"type": "string", "description": "B"}}},
        ]}));
        assert_eq!(
            got,
            [
                ".spec.b: must be specified outside the value validation, because .spec.oneOf[1] names it",
                ".spec.oneOf[1].b: `type` must not be set inside anyOf, oneOf, allOf or not: a structural schema keeps it outside the value validations",
                ".spec.oneOf[1].b: `description` must not be set inside anyOf, oneOf, allOf or not: a structural schema keeps it outside the value validations",
            ]
        );
        // The int-or-string pattern may carry types.
        assert!(
            spec_violations(json!({"type": "object", "properties": {"port": {
                "x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}}))
            .is_empty()
        );
    }

    #[test]
    fn the_root_is_an_object_without_additional_properties() {
        use super::super::{check_version, test_support::crd_version};
        let v = crd_version(
            json!({"type": "object", "additionalProperties": {"type": "string"}, "nullable": true}),
            true,
        );
        let got: Vec<String> = check_version(&v).iter().map(|v| v.rule.clone()).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("must not be used at the root"), "{got:?}");
        assert!(
            got[1].contains("nullable cannot be true at the root"),
            "{got:?}"
        );
        assert!(got[2].contains("must not set `nullable`"), "{got:?}");
    }

    #[test]
    fn look_around_patterns_are_refused_and_unknown_differences_are_not() {
        let got = spec_violations(json!({"type": "object", "properties": {
            "a": {"type": "string", "pattern": "^(?!x)"},
            "b": {"type": "string", "pattern": "^[a-z]+$"},
        }}));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains("look-around"), "{got:?}");
    }
}
