//! The root object kube-derive's `crd()` builds around the spec and status types.

use schemars::Schema;
use serde_json::Value;

use super::container::flatten_schema;
use super::{Deriver, R};
use crate::manifests::crd::resolve::ModId;

impl<'c, 'a> Deriver<'c, 'a> {
    /// The root object kube-derive generates (`metadata` skipped, `spec`, optional `status`),
    /// with its doc string, CEL rules and title, before the transforms.
    #[allow(clippy::too_many_arguments)]
    pub fn root_schema(
        &mut self,
        m: ModId,
        root_name: &str,
        spec: &syn::Ident,
        status: Option<&syn::Path>,
        no_spec: bool,
        doc: &str,
        rules: &[syn::Expr],
    ) -> R<Schema> {
        let spec_ty: syn::Type = syn::parse_quote!(#spec);
        self.root_sites.clear();
        self.site_open();
        let spec_eval = self.ty(m, &spec_ty);
        self.site_close((!no_spec).then(|| "spec".to_string()), m, spec.span());
        let spec_eval = spec_eval?;
        let mut schema = schemars::json_schema!({"type": "object"});
        if no_spec {
            let flat = flatten_schema(&mut self.generator, spec_eval, false);
            schemars::_private::flatten(&mut schema, flat);
        } else {
            let optional = spec_eval.is_option;
            schemars::_private::insert_object_property(
                &mut schema,
                "spec",
                optional,
                spec_eval.schema,
            );
        }
        if let Some(status) = status {
            let ty: syn::Type = syn::parse_quote!(Option<#status>);
            self.site_open();
            let e = self.ty(m, &ty);
            self.site_close(
                Some("status".into()),
                m,
                syn::spanned::Spanned::span(status),
            );
            let e = e?;
            schemars::_private::insert_object_property(&mut schema, "status", true, e.schema);
        }
        let (t, d) = schemars::_private::get_title_and_description(doc);
        schemars::_private::insert_metadata_property_if_nonempty(
            &mut schema,
            "title",
            t.to_string(),
        );
        schemars::_private::insert_metadata_property_if_nonempty(
            &mut schema,
            "description",
            d.to_string(),
        );
        for r in rules {
            let rule = self.rule(m, r)?;
            let _ = kube_core::validate(&mut schema, rule);
        }
        schema
            .ensure_object()
            .entry("title")
            .or_insert_with(|| Value::String(root_name.to_string()));
        Ok(schema)
    }
}
