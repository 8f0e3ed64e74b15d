//! Visits every node of a CRD's `openAPIV3Schema` with what the API server knows about its
//! place, and hands each node to the rules. The places matter: a structural schema needs a
//! `type` on fields and list items but not inside `anyOf`/`oneOf`/`allOf`/`not` (value
//! validations, where most keywords are forbidden instead), `metadata` is restricted at the
//! root and inside embedded resources, and defaults are forbidden in some places.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use super::place::{Ctx, Level};
use super::{SchemaPath, Sink, Step, additional, items};

/// Checks `root`, the `openAPIV3Schema` of a version (`status`: the version has the status
/// subresource), into `sink`.
pub fn check_schema(root: &JSONSchemaProps, status: bool, sink: &mut Sink<'_>) {
    let ctx = Ctx {
        path: SchemaPath::default(),
        level: Level::Root,
        junctor: None,
        int_or_string_branch: false,
        inside_meta: false,
        no_defaults: None,
        status,
        uncorrelatable: None,
    };
    node(root, &ctx, sink);
}

fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    super::structural::node(s, ctx, sink);
    super::metadata::node(s, ctx, sink);
    super::lists::node(s, ctx, sink);
    super::defaults::node(s, ctx, sink);
    super::cel::node(s, ctx, sink);

    let embedded = super::is_true(s.x_kubernetes_embedded_resource);
    let resource = (ctx.level == Level::Root && ctx.junctor.is_none()) || embedded;
    for (name, p) in s.properties.iter().flatten() {
        let meta = resource && matches!(name.as_str(), "metadata" | "kind" | "apiVersion");
        let child = Ctx {
            path: ctx.path.child(Step::Property(name.clone())),
            level: Level::Field,
            int_or_string_branch: false,
            inside_meta: ctx.inside_meta || meta,
            no_defaults: if meta && ctx.level == Level::Root && !embedded {
                Some(match name.as_str() {
                    "metadata" => "in top-level metadata",
                    "kind" => "in top-level kind",
                    _ => "in top-level apiVersion",
                })
            } else {
                ctx.no_defaults
            },
            ..ctx.clone()
        };
        node(p, &child, sink);
    }
    if let Some(a) = additional(s) {
        let child = Ctx {
            path: ctx.path.child(Step::AdditionalProperties),
            level: Level::Field,
            int_or_string_branch: false,
            no_defaults: if ctx.inside_meta {
                Some("inside additionalProperties applying to object metadata")
            } else {
                ctx.no_defaults
            },
            ..ctx.clone()
        };
        node(a, &child, sink);
    }
    if let Some(i) = items(s) {
        let child = Ctx {
            path: ctx.path.child(Step::Items),
            level: Level::Item,
            int_or_string_branch: false,
            uncorrelatable: ctx.uncorrelatable.clone().or_else(|| {
                (s.x_kubernetes_list_type.as_deref() != Some("map")).then(|| ctx.path.clone())
            }),
            ..ctx.clone()
        };
        node(i, &child, sink);
    }
    let int_or_string_any_of = super::structural::is_int_or_string_any_of(s.any_of.as_deref());
    let int_or_string_all_of = s.all_of.as_ref().is_some_and(|all| {
        all.first().is_some_and(|first| {
            super::structural::is_int_or_string_any_of(first.any_of.as_deref())
        })
    });
    let branches = [
        (s.all_of.as_deref(), Step::AllOf as fn(usize) -> Step),
        (s.any_of.as_deref(), Step::AnyOf),
        (s.one_of.as_deref(), Step::OneOf),
    ];
    for (list, step) in branches {
        for (i, b) in list.into_iter().flatten().enumerate() {
            let path = ctx.path.child(step(i));
            let is_any_of = matches!(step(i), Step::AnyOf(_));
            let child = Ctx {
                junctor: Some(ctx.junctor.clone().unwrap_or_else(|| path.clone())),
                path,
                int_or_string_branch: is_any_of && int_or_string_any_of,
                ..ctx.clone()
            };
            if int_or_string_all_of && matches!(step(i), Step::AllOf(0)) {
                // The first allOf branch holds the int-or-string anyOf pattern.
                int_or_string_all_of_branch(b, &child, sink);
            } else {
                node(b, &child, sink);
            }
        }
    }
    if let Some(n) = &s.not {
        let path = ctx.path.child(Step::Not);
        let child = Ctx {
            junctor: Some(ctx.junctor.clone().unwrap_or_else(|| path.clone())),
            path,
            int_or_string_branch: false,
            ..ctx.clone()
        };
        node(n, &child, sink);
    }
}

/// `allOf[0]` of an int-or-string node: its own `anyOf` branches may carry a type.
fn int_or_string_all_of_branch(b: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let mut without = b.clone();
    let any_of = without.any_of.take().unwrap_or_default();
    node(&without, ctx, sink);
    for (i, a) in any_of.iter().enumerate() {
        let child = Ctx {
            path: ctx.path.child(Step::AnyOf(i)),
            int_or_string_branch: true,
            ..ctx.clone()
        };
        node(a, &child, sink);
    }
}
