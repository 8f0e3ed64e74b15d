//! `#[derive(JsonSchema)]` for one item: the container attributes, transparent and `with`
//! forwarding, newtype and tuple structs, and structs with named fields (`expr_for_struct`).

use schemars::{Schema, SchemaGenerator};
use serde_derive_internals::ast::{self as serde_ast, Style};
use serde_derive_internals::attr::Default as SerdeDefault;

use super::{Deriver, Failed, R};
use crate::manifests::crd::attrs::{self, Common, FieldAttrs, With};
use crate::manifests::crd::defaults;
use crate::manifests::crd::known::{self, Eval};
use crate::manifests::crd::resolve::ModId;

/// How the message of a hand-written `JsonSchema` impl begins; the compile note of its kind
/// reads it (see `generate::compiled_because`).
pub const HAND_WRITTEN: &str = "hand-written schema: ";

impl<'c, 'a> Deriver<'c, 'a> {
    /// `#[derive(JsonSchema)]` / `#[derive(KubeSchema)]` for one item.
    pub(super) fn derive(
        &mut self,
        m: ModId,
        input: &syn::DeriveInput,
        original_attrs: &[syn::Attribute],
    ) -> R<Eval> {
        use syn::spanned::Spanned;
        let derives = attrs::derives(original_attrs);
        let kube_schema = derives.iter().any(|d| d == "KubeSchema");
        if !kube_schema && !derives.iter().any(|d| d == "JsonSchema") {
            if let Some((im, imp)) =
                self.krate
                    .trait_impl(m, &input.ident.to_string(), "JsonSchema")
            {
                // `crd()` calls that impl: valid, but code rsbuilder does not run.
                let at = imp.self_ty.span().start();
                let file = self.krate.modules[im].file.path.display().to_string();
                return Err(self.undecidable(
                    m,
                    input.ident.span(),
                    format!(
                        "{HAND_WRITTEN}`{}` implements `JsonSchema` by hand ({file}:{}), and rsbuilder does not run that code",
                        input.ident, at.line
                    ),
                    Some("run with `--evaluate auto` (the default) to take this kind from the compiler".into()),
                ));
            }
            return Err(self.error(
                m,
                input.ident.span(),
                format!(
                    "`{}` is used in a custom resource but does not derive `JsonSchema`",
                    input.ident
                ),
                Some("add `schemars::JsonSchema` to its #[derive(...)]".into()),
            ));
        }
        let mut input = input.clone();
        if kube_schema {
            // KubeSchema re-derives JsonSchema on a copy keeping only these attributes.
            let keep = |a: &syn::Attribute| {
                ["serde", "schemars", "doc", "validate"]
                    .iter()
                    .any(|k| a.path().is_ident(k))
            };
            input.attrs.retain(keep);
            if let syn::Data::Struct(s) = &mut input.data {
                for f in s.fields.iter_mut() {
                    f.attrs.retain(keep);
                }
            } else {
                return Err(self.error(
                    m,
                    input.ident.span(),
                    "KubeSchema can only be derived for structs with named fields",
                    None,
                ));
            }
        }
        prepare_serde_attrs(&mut input);
        let ctxt = serde_derive_internals::Ctxt::new();
        // serde's `camelCase` rule slices the first byte of a name, and panics when the name
        // starts with a non-ASCII letter: serde_derive fails the same way, so the crate does
        // not compile. A diagnostic here, never a crash.
        let cont = crate::manifests::crd::quiet::quietly(|| {
            serde_ast::Container::from_ast(
                &ctxt,
                &input,
                serde_derive_internals::Derive::Deserialize,
            )
        });
        let checked = ctxt.check();
        let cont = match cont {
            Ok(cont) => cont,
            Err(panic) => {
                let span = non_ascii_name(&input).unwrap_or_else(|| input.ident.span());
                return Err(self.error(
                    m,
                    span,
                    format!(
                        "serde cannot derive this type: its `rename_all` rule fails on a name that starts with a non-ASCII letter (serde_derive panics: {panic}), so the crate does not compile"
                    ),
                    Some(
                        "give the field or variant its serialized name with `#[serde(rename = \"...\")]`, or start its name with an ASCII letter"
                            .into(),
                    ),
                ));
            }
        };
        if let Err(e) = checked {
            return Err(self.syn_error(m, e));
        }
        let Some(cont) = cont else {
            return Err(self.error(
                m,
                input.ident.span(),
                "cannot read the serde attributes of this type",
                None,
            ));
        };
        let cattrs = attrs::container_attrs(&input.attrs).map_err(|e| self.syn_error(m, e))?;
        let mut eval = self.container(m, &cont, &cattrs, &input)?;
        if kube_schema {
            self.apply_x_kube(m, &cont, &cattrs, &input, original_attrs, &mut eval.schema)?;
            eval = Eval::plain(eval.schema);
        }
        let _ = input.span();
        Ok(eval)
    }

    pub(super) fn container(
        &mut self,
        m: ModId,
        cont: &serde_ast::Container,
        cattrs: &attrs::ContainerAttrs,
        input: &syn::DeriveInput,
    ) -> R<Eval> {
        // Fully transparent: forward everything, including `is_option`.
        if let Some(With::Type(ty)) = &cattrs.with
            && cattrs.common.is_default()
        {
            return self.ty(m, ty);
        }
        if cont.attrs.transparent()
            && let serde_ast::Data::Struct(_, fields) = &cont.data
            && let Some(f) = fields.iter().find(|f| f.attrs.transparent())
        {
            let fa = attrs::field_attrs(&f.original.attrs).map_err(|e| self.syn_error(m, e))?;
            if cattrs.common.is_default() && fa.is_default() {
                return self.ty(m, f.ty);
            }
        }
        let mut schema = if let Some(with) = &cattrs.with {
            self.with_schema(m, with, &input.ident)?.schema
        } else if let Some(f) = cont
            .attrs
            .transparent()
            .then(|| match &cont.data {
                serde_ast::Data::Struct(_, fields) => fields.iter().find(|f| f.attrs.transparent()),
                _ => None,
            })
            .flatten()
        {
            self.field_schema(m, f, false)?
        } else if let Some(from) = cont.attrs.type_from().or(cont.attrs.type_try_from()) {
            self.ty(m, from)?.schema
        } else {
            match &cont.data {
                serde_ast::Data::Struct(Style::Unit, _) => self.leaf("()").schema,
                serde_ast::Data::Struct(Style::Newtype, fields) => {
                    self.field_schema(m, &fields[0], false)?
                }
                serde_ast::Data::Struct(Style::Tuple, fields) => self.tuple_struct(m, fields)?,
                serde_ast::Data::Struct(Style::Struct, fields) => self.struct_schema(
                    m,
                    fields,
                    cont.attrs.default(),
                    cont.attrs.deny_unknown_fields(),
                    input,
                )?,
                serde_ast::Data::Enum(variants) => self.enum_schema(m, cont, variants, input)?,
            }
        };
        self.common_mutators(m, &cattrs.common, &mut schema, &input.ident)?;
        Ok(Eval::plain(schema))
    }

    pub(super) fn with_schema(
        &mut self,
        m: ModId,
        with: &With,
        at: &dyn quote::ToTokens,
    ) -> R<Eval> {
        let _ = at;
        match with {
            With::Type(ty) => self.ty(m, ty),
            With::Function(path) => self.schema_fn(m, path),
        }
    }

    /// `expr_for_field`: the field's type schema plus its metadata and validation.
    pub(super) fn field_schema(
        &mut self,
        m: ModId,
        f: &serde_ast::Field,
        _in_struct: bool,
    ) -> R<Schema> {
        let fa = attrs::field_attrs(&f.original.attrs).map_err(|e| self.syn_error(m, e))?;
        let eval = match &fa.with {
            Some(w) => self.with_schema(m, w, f.original)?,
            None => self.ty(m, f.ty)?,
        };
        let mut schema = if fa.validation.required {
            eval.into_non_optional()
        } else {
            eval.schema
        };
        let post = self.field_mutators(m, f, &fa, &mut schema)?;
        self.post_mutators(m, &post, &mut schema)?;
        Ok(schema)
    }

    /// Field mutators except the post ones (extensions, transforms), which are returned.
    pub(super) fn field_mutators(
        &mut self,
        m: ModId,
        f: &serde_ast::Field,
        fa: &FieldAttrs,
        schema: &mut Schema,
    ) -> R<Common> {
        self.metadata_mutators(m, &fa.common, schema)?;
        self.validation_mutators(m, &fa.validation, schema)?;
        if f.attrs.skip_deserializing() {
            schema.insert("readOnly".into(), true.into());
        }
        if f.attrs.skip_serializing() {
            schema.insert("writeOnly".into(), true.into());
        }
        Ok(fa.common.clone())
    }

    pub(super) fn tuple_struct(&mut self, m: ModId, fields: &[serde_ast::Field]) -> R<Schema> {
        let mut prefix = Vec::new();
        for f in fields.iter().filter(|f| !f.attrs.skip_deserializing()) {
            prefix.push(self.field_schema(m, f, false)?.to_value());
        }
        let len = prefix.len();
        let mut map = serde_json::Map::new();
        map.insert("type".into(), "array".into());
        if !prefix.is_empty() {
            map.insert("prefixItems".into(), prefix.into());
            map.insert("minItems".into(), len.into());
        }
        map.insert("maxItems".into(), len.into());
        Ok(Schema::from(map))
    }

    /// `expr_for_struct`.
    pub(super) fn struct_schema(
        &mut self,
        m: ModId,
        fields: &[serde_ast::Field],
        default: &SerdeDefault,
        deny_unknown_fields: bool,
        input: &syn::DeriveInput,
    ) -> R<Schema> {
        use syn::spanned::Spanned;
        let mut schema = if deny_unknown_fields {
            schemars::json_schema!({"type": "object", "additionalProperties": false})
        } else {
            schemars::json_schema!({"type": "object"})
        };
        let container_default = !matches!(default, SerdeDefault::None);
        let mut failed = false;
        // Flattened fields whose schema is a choice (`oneOf`/`anyOf` of typed variants).
        let mut flattened_choices: Vec<(String, proc_macro2::Span)> = Vec::new();
        for f in fields.iter().filter(|f| !f.attrs.skip_deserializing()) {
            let fa = match attrs::field_attrs(&f.original.attrs) {
                Ok(fa) => fa,
                Err(e) => {
                    self.syn_error(m, e);
                    failed = true;
                    continue;
                }
            };
            let span = f
                .original
                .ident
                .as_ref()
                .map(|i| i.span())
                .unwrap_or_else(|| f.original.ty.span());
            if f.attrs.flatten() {
                self.site_open();
                let eval = match &fa.with {
                    Some(w) => self.with_schema(m, w, f.original),
                    None => {
                        self.flatten_next = true;
                        let eval = self.ty(m, f.ty);
                        self.flatten_next = false;
                        eval
                    }
                };
                self.site_close(None, m, span);
                let Ok(eval) = eval else {
                    failed = true;
                    continue;
                };
                let flat = flatten_schema(&mut self.generator, eval, fa.validation.required);
                if typed_choice(&flat) {
                    let name = f
                        .original
                        .ident
                        .as_ref()
                        .map_or_else(|| "(unnamed)".to_string(), ToString::to_string);
                    flattened_choices.push((name, span));
                }
                schemars::_private::flatten(&mut schema, flat);
                continue;
            }
            self.site_open();
            let eval = match &fa.with {
                Some(w) => self.with_schema(m, w, f.original),
                None => self.ty(m, f.ty),
            };
            let name = f.attrs.name().deserialize_name().to_string();
            self.site_close(Some(name), m, span);
            let Ok(eval) = eval else {
                failed = true;
                continue;
            };
            let is_option = eval.is_option;
            let mut sub = if fa.validation.required {
                eval.into_non_optional()
            } else {
                eval.schema
            };
            let post = match self.field_mutators(m, f, &fa, &mut sub) {
                Ok(p) => p,
                Err(_) => {
                    failed = true;
                    continue;
                }
            };
            // The default value (`field_default_expr`).
            if !f.attrs.skip_serializing() && (!f.attrs.default().is_none() || container_default) {
                match defaults::field_default(self.krate, m, input, default, f) {
                    Ok(Some(v)) => {
                        sub.insert("default".into(), v);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        match e.cause {
                            crate::manifests::diag::Cause::Invalid => self.error(
                                m,
                                span,
                                format!("the #[serde(default)] value of this field is invalid: {}", e.message),
                                Some("fix the expression: rustc rejects it, or crd() panics computing it".into()),
                            ),
                            crate::manifests::diag::Cause::NeedsCompile => self.undecidable(
                                m,
                                span,
                                format!("the #[serde(default)] value of this field cannot be computed statically: {}", e.message),
                                Some("`manifests --evaluate auto` (the default) compiles a probe for this kind; to keep it static, write the default with the forms docs/attributes.md lists under \"What the evaluator accepts\"".into()),
                            ),
                        };
                        failed = true;
                        continue;
                    }
                }
            }
            if self.post_mutators(m, &post, &mut sub).is_err() {
                failed = true;
                continue;
            }
            let has_default = container_default || !f.attrs.default().is_none();
            let optional = has_default || (!fa.validation.required && is_option);
            let name = f.attrs.name().deserialize_name().to_string();
            schemars::_private::insert_object_property(&mut schema, &name, optional, sub);
        }
        if let [(first, first_span), (second, second_span), ..] = &flattened_choices[..] {
            // Reported once, at the fields, instead of at every variant of both enums.
            let file = self.krate.modules[m].file.path.display().to_string();
            self.error(
                m,
                *second_span,
                format!(
                    "the `#[serde(flatten)]` fields `{first}` ({file}:{}) and `{second}` ({file}:{}) are both enums with data: schemars puts their variants under `allOf`, where the API server allows no `type`, so it rejects the CRD crd() returns",
                    first_span.start().line,
                    second_span.start().line
                ),
                Some(format!(
                    "flatten at most one such enum in a struct: make `{second}` a named field without `#[serde(flatten)]`, or merge the two enums into one"
                )),
            );
            failed = true;
        }
        if failed { Err(Failed) } else { Ok(schema) }
    }
}

/// Whether a flattened schema is a choice whose alternatives carry types: a second one in
/// the same struct makes schemars put both under `allOf`, where a structural schema allows
/// no `type`.
fn typed_choice(flat: &Schema) -> bool {
    ["oneOf", "anyOf"].iter().any(|k| {
        flat.get(*k).and_then(|v| v.as_array()).is_some_and(|alts| {
            alts.iter()
                .any(|a| a.get("type").is_some() || a.get("properties").is_some())
        })
    })
}

/// `json_schema_for_flatten::<T>(generator, required)` for a computed type.
pub(super) fn flatten_schema(g: &mut SchemaGenerator, eval: Eval, required: bool) -> Schema {
    known::flatten_with(g, eval, required)
}

/// Rewrites a container's serde attributes (and those of its variants and fields) the way
/// schemars_derive's `process_serde_attrs` does.
fn prepare_serde_attrs(input: &mut syn::DeriveInput) {
    attrs::schemars_to_serde(&mut input.attrs);
    match &mut input.data {
        syn::Data::Struct(s) => s
            .fields
            .iter_mut()
            .for_each(|f| attrs::schemars_to_serde(&mut f.attrs)),
        syn::Data::Enum(e) => e.variants.iter_mut().for_each(|v| {
            attrs::schemars_to_serde(&mut v.attrs);
            v.fields
                .iter_mut()
                .for_each(|f| attrs::schemars_to_serde(&mut f.attrs));
        }),
        syn::Data::Union(_) => {}
    }
}

/// The first field or variant of `input` whose name starts with a non-ASCII letter: where
/// serde's `camelCase` rule fails.
fn non_ascii_name(input: &syn::DeriveInput) -> Option<proc_macro2::Span> {
    let starts_non_ascii = |i: &syn::Ident| {
        let name = i.to_string();
        !name
            .strip_prefix("r#")
            .unwrap_or(&name)
            .starts_with(|c: char| c.is_ascii())
    };
    let fields = |f: &syn::Fields| {
        f.iter()
            .filter_map(|f| f.ident.as_ref())
            .find(|i| starts_non_ascii(i))
            .map(syn::Ident::span)
    };
    match &input.data {
        syn::Data::Struct(s) => fields(&s.fields),
        syn::Data::Enum(e) => e.variants.iter().find_map(|v| {
            if starts_non_ascii(&v.ident) {
                Some(v.ident.span())
            } else {
                fields(&v.fields)
            }
        }),
        syn::Data::Union(_) => None,
    }
}
