//! What `#[derive(JsonSchema)]` (schemars_derive 1.2.3) and kube-derive's `KubeSchema` emit
//! for the user's own structs and enums, computed at rsbuilder's run time on the generator
//! `crd()` uses. Field types that are not the user's (std, serde_json, k8s-openapi) are asked
//! from schemars through [`super::known`].
//!
//! Only the `Deserialize` contract is modelled: it is the one `SchemaSettings::openapi3()`
//! selects, so fields with `skip_deserializing` are left out and `skip_serializing` ones kept.

use std::collections::{BTreeMap, HashMap};

use schemars::{Schema, SchemaGenerator};
use serde_derive_internals::ast::{self as serde_ast, Style};
use serde_derive_internals::attr::{Default as SerdeDefault, TagType};
use serde_json::Value;

use super::attrs::{self, Common, FieldAttrs, Validation, With};
use super::defaults;
use super::eval;
use super::known::{self, Eval, Generic};
use super::resolve::{Crate, LocalItem, ModId, Resolved};
use crate::manifests::diag::Diagnostic;

/// Type parameter substitutions while expanding a generic type alias.
type Subst = HashMap<String, (ModId, syn::Type)>;

/// Computes schemas of the user's types; collects every diagnostic on the way.
pub struct Deriver<'c, 'a> {
    /// The sources.
    pub krate: &'c Crate<'a>,
    /// The generator, with `crd()`'s settings.
    pub generator: SchemaGenerator,
    /// Problems found.
    pub diags: Vec<Diagnostic>,
    cache: HashMap<(ModId, String), Option<Eval>>,
    in_progress: Vec<(ModId, String)>,
    /// Type parameters of the generic user types being derived (innermost last).
    generics: Vec<HashMap<String, Eval>>,
    /// Schemas of parameterless known types (k8s-openapi, primitives), computed once per run:
    /// they depend only on the generator settings.
    leaves: HashMap<String, Eval>,
}

/// A failure already recorded in [`Deriver::diags`].
#[derive(Debug, Clone, Copy)]
pub struct Failed;

type R<T> = Result<T, Failed>;

impl<'c, 'a> Deriver<'c, 'a> {
    /// A deriver over `krate` with kube-derive's generator settings.
    pub fn new(krate: &'c Crate<'a>) -> Self {
        Self {
            krate,
            generator: known::crd_settings().into_generator(),
            diags: Vec::new(),
            cache: HashMap::new(),
            in_progress: Vec::new(),
            generics: Vec::new(),
            leaves: HashMap::new(),
        }
    }

    /// Records a diagnostic at `span` in module `m`'s file.
    pub fn error(
        &mut self,
        m: ModId,
        span: proc_macro2::Span,
        msg: impl Into<String>,
        help: Option<String>,
    ) -> Failed {
        let mut d = Diagnostic::at(&self.krate.modules[m].file.path, span, msg);
        d.help = help;
        self.diags.push(d);
        Failed
    }

    fn syn_error(&mut self, m: ModId, e: syn::Error) -> Failed {
        for one in e {
            let msg = one.to_string();
            self.error(m, one.span(), msg, None);
        }
        Failed
    }

    // ----- types -------------------------------------------------------------------------

    /// The schema of a field type written in module `m`, as `subschema_for::<T>()` gives it.
    pub fn ty(&mut self, m: ModId, ty: &syn::Type) -> R<Eval> {
        self.ty_subst(m, ty, &Subst::new())
    }

    fn ty_subst(&mut self, m: ModId, ty: &syn::Type, subst: &Subst) -> R<Eval> {
        use syn::spanned::Spanned;
        match ty {
            syn::Type::Paren(p) => self.ty_subst(m, &p.elem, subst),
            syn::Type::Group(g) => self.ty_subst(m, &g.elem, subst),
            syn::Type::Reference(r) => self.ty_subst(m, &r.elem, subst),
            syn::Type::Tuple(t) if t.elems.is_empty() => Ok(self.leaf("()")),
            syn::Type::Tuple(t) => {
                let mut args = Vec::new();
                for e in &t.elems {
                    args.push(self.ty_subst(m, e, subst)?);
                }
                match known::tuple(args.len()) {
                    Some(f) => Ok(f(&mut self.generator, args)),
                    None => Err(self.error(
                        m,
                        ty.span(),
                        "tuples of more than 8 elements are not supported",
                        None,
                    )),
                }
            }
            syn::Type::Slice(s) => {
                let inner = self.ty_subst(m, &s.elem, subst)?;
                Ok(known::slice()(&mut self.generator, vec![inner]))
            }
            syn::Type::Array(a) => {
                let len = match eval::eval(self.krate, m, &a.len) {
                    Ok(Value::Number(n)) => n.as_u64(),
                    _ => None,
                };
                let inner = self.ty_subst(m, &a.elem, subst)?;
                match len.and_then(|n| known::array(n as usize)) {
                    Some(f) => Ok(f(&mut self.generator, vec![inner])),
                    None => Err(self.error(
                        m,
                        a.len.span(),
                        "the array length must be a literal from 0 to 32 (schemars implements JsonSchema for those)",
                        None,
                    )),
                }
            }
            syn::Type::Path(p) if p.qself.is_none() => self.path_ty(m, &p.path, subst),
            other => Err(self.error(
                m,
                other.span(),
                format!(
                    "unsupported type `{}` in a custom resource",
                    quote::ToTokens::to_token_stream(other)
                ),
                Some("use a named struct or enum, a std container or a k8s-openapi type".into()),
            )),
        }
    }

    fn leaf(&mut self, name: &str) -> Eval {
        self.known_leaf(name).expect("leaf type is in the table")
    }

    /// A parameterless known type's schema, from schemars, cached for the run.
    fn known_leaf(&mut self, path: &str) -> Option<Eval> {
        if let Some(e) = self.leaves.get(path) {
            return Some(e.clone());
        }
        let f = known::leaf_type(path)?;
        let e = f(&mut self.generator);
        self.leaves.insert(path.to_string(), e.clone());
        Some(e)
    }

    fn type_args(path: &syn::Path) -> Vec<syn::Type> {
        let Some(last) = path.segments.last() else {
            return Vec::new();
        };
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => a
                .args
                .iter()
                .filter_map(|g| match g {
                    syn::GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn path_ty(&mut self, m: ModId, path: &syn::Path, subst: &Subst) -> R<Eval> {
        use syn::spanned::Spanned;
        if let Some(id) = path.get_ident() {
            if let Some((sm, sty)) = subst.get(&id.to_string()) {
                let (sm, sty) = (*sm, sty.clone());
                return self.ty_subst(sm, &sty, &Subst::new());
            }
            if let Some(e) = self.generics.last().and_then(|g| g.get(&id.to_string())) {
                return Ok(e.clone());
            }
        }
        let written = quote::ToTokens::to_token_stream(path)
            .to_string()
            .replace(' ', "");
        let Some(resolved) = self.krate.resolve_type(m, path) else {
            return Err(self.error(
                m,
                path.span(),
                format!("cannot resolve type `{written}`"),
                Some("rsbuilder reads only the files given with --paths: import the type with `use`, or add the file that defines it".into()),
            ));
        };
        let args = Self::type_args(path);
        match resolved {
            Resolved::Local(tm, name) => {
                let item = self
                    .krate
                    .item(tm, &name)
                    .expect("resolved local item exists");
                match item {
                    LocalItem::Alias(alias) => {
                        let params: Vec<String> = alias
                            .generics
                            .type_params()
                            .map(|p| p.ident.to_string())
                            .collect();
                        let mut inner = Subst::new();
                        for (i, p) in params.iter().enumerate() {
                            if let Some(a) = args.get(i) {
                                inner.insert(p.clone(), (m, a.clone()));
                            }
                        }
                        self.ty_subst(tm, &alias.ty, &inner)
                    }
                    LocalItem::Struct(_) | LocalItem::Enum(_) => {
                        let mut evals = Vec::new();
                        for a in &args {
                            evals.push(self.ty_subst(m, a, subst)?);
                        }
                        self.user_type(tm, &name, evals, m, path.span())
                    }
                }
            }
            Resolved::External(p) => {
                if let Some(e) = self.known_leaf(&p) {
                    return Ok(e);
                }
                if let Some(g) = known::std_generic(&p) {
                    match g {
                        Generic::Forward => {
                            let Some(a) = args.first() else {
                                return Err(self.error(
                                    m,
                                    path.span(),
                                    format!("`{written}` needs a type argument"),
                                    None,
                                ));
                            };
                            return self.ty_subst(m, a, subst);
                        }
                        Generic::Container(n, f) => {
                            if args.len() < n {
                                return Err(self.error(
                                    m,
                                    path.span(),
                                    format!("`{written}` needs {n} type arguments"),
                                    None,
                                ));
                            }
                            let mut evals = Vec::new();
                            for a in &args[..n] {
                                evals.push(self.ty_subst(m, a, subst)?);
                            }
                            return Ok(f(&mut self.generator, evals));
                        }
                    }
                }
                let help = if p.starts_with("k8s_openapi::") {
                    "rsbuilder knows the k8s-openapi 0.29 types of Kubernetes 1.37 (feature v1_37); check the path".to_string()
                } else {
                    "rsbuilder knows std types, serde_json::Value and k8s-openapi types; for another crate's type use #[schemars(with = \"...\")] with a known type".to_string()
                };
                Err(self.error(
                    m,
                    path.span(),
                    format!("type `{written}` (resolved to `{p}`) has no schema rsbuilder can compute statically"),
                    Some(help),
                ))
            }
            Resolved::Module(_) => Err(self.error(
                m,
                path.span(),
                format!("`{written}` is a module, not a type"),
                None,
            )),
        }
    }

    /// The schema of the user's struct or enum `name` in module `tm`, referenced from module
    /// `from` at `span`.
    fn user_type(
        &mut self,
        tm: ModId,
        name: &str,
        args: Vec<Eval>,
        from: ModId,
        span: proc_macro2::Span,
    ) -> R<Eval> {
        let key = (tm, name.to_string());
        let generics = match self.krate.item(tm, name) {
            Some(LocalItem::Struct(s)) => s.generics.clone(),
            Some(LocalItem::Enum(e)) => e.generics.clone(),
            _ => syn::Generics::default(),
        };
        let params: Vec<String> = generics
            .type_params()
            .map(|p| p.ident.to_string())
            .collect();
        if params.len() != args.len() {
            return Err(self.error(
                from,
                span,
                format!(
                    "`{name}` takes {} type argument(s), {} given",
                    params.len(),
                    args.len()
                ),
                None,
            ));
        }
        let cache_key = (
            tm,
            if args.is_empty() {
                name.to_string()
            } else {
                let fingerprint: Vec<String> = args
                    .iter()
                    .map(|a| format!("{}{}", a.is_option, a.schema.as_value()))
                    .collect();
                format!("{name}<{}>", fingerprint.join(","))
            },
        );
        if let Some(pos) = self.in_progress.iter().position(|k| *k == key) {
            let cycle: Vec<String> = self.in_progress[pos..]
                .iter()
                .map(|(_, n)| n.clone())
                .chain([name.to_string()])
                .collect();
            return Err(self.error(
                from,
                span,
                format!(
                    "recursive type `{name}` ({}): kube-derive's crd() leaves a dangling $ref for it, and a CRD schema must be structural (no references), so the API server rejects it",
                    cycle.join(" -> ")
                ),
                Some("break the cycle: type the recursive field as `serde_json::Value` with `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`, or unroll the nesting into distinct types".into()),
            ));
        }
        if let Some(cached) = self.cache.get(&cache_key) {
            return cached.clone().ok_or(Failed);
        }
        self.in_progress.push(key.clone());
        self.generics.push(params.into_iter().zip(args).collect());
        let result = match self.krate.item(tm, name) {
            Some(LocalItem::Struct(s)) => {
                let input = syn::DeriveInput::from(s.clone());
                self.derive(tm, &input, &s.attrs)
            }
            Some(LocalItem::Enum(e)) => {
                let input = syn::DeriveInput::from(e.clone());
                self.derive(tm, &input, &e.attrs)
            }
            _ => Err(Failed),
        };
        self.generics.pop();
        self.in_progress.pop();
        self.cache.insert(cache_key, result.clone().ok());
        result
    }

    // ----- derive --------------------------------------------------------------------------

    /// `#[derive(JsonSchema)]` / `#[derive(KubeSchema)]` for one item.
    fn derive(
        &mut self,
        m: ModId,
        input: &syn::DeriveInput,
        original_attrs: &[syn::Attribute],
    ) -> R<Eval> {
        use syn::spanned::Spanned;
        let derives = attrs::derives(original_attrs);
        let kube_schema = derives.iter().any(|d| d == "KubeSchema");
        if !kube_schema && !derives.iter().any(|d| d == "JsonSchema") {
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
        let cont = serde_ast::Container::from_ast(
            &ctxt,
            &input,
            serde_derive_internals::Derive::Deserialize,
        );
        if let Err(e) = ctxt.check() {
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

    fn container(
        &mut self,
        m: ModId,
        cont: &serde_ast::Container,
        cattrs: &attrs::ContainerAttrs,
        input: &syn::DeriveInput,
    ) -> R<Eval> {
        // Fully transparent: forward everything, including `is_option`.
        if let Some(With::Type(ty)) = &cattrs.with {
            if cattrs.common.is_default() {
                return self.ty(m, ty);
            }
        }
        if cont.attrs.transparent() {
            if let serde_ast::Data::Struct(_, fields) = &cont.data {
                if let Some(f) = fields.iter().find(|f| f.attrs.transparent()) {
                    let fa =
                        attrs::field_attrs(&f.original.attrs).map_err(|e| self.syn_error(m, e))?;
                    if cattrs.common.is_default() && fa.is_default() {
                        return self.ty(m, f.ty);
                    }
                }
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

    fn with_schema(&mut self, m: ModId, with: &With, at: &dyn quote::ToTokens) -> R<Eval> {
        use syn::spanned::Spanned;
        match with {
            With::Type(ty) => self.ty(m, ty),
            With::Function(path) => {
                let text = quote::ToTokens::to_token_stream(path)
                    .to_string()
                    .replace(' ', "");
                let _ = at;
                Err(self.error(
                    m,
                    path.span(),
                    format!("`schema_with = \"{text}\"` calls a function at compile time that rsbuilder cannot evaluate statically"),
                    Some("use `#[schemars(with = \"Type\")]` with a type whose schema is the one you want".into()),
                ))
            }
        }
    }

    /// `expr_for_field`: the field's type schema plus its metadata and validation.
    fn field_schema(&mut self, m: ModId, f: &serde_ast::Field, _in_struct: bool) -> R<Schema> {
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
    fn field_mutators(
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

    fn tuple_struct(&mut self, m: ModId, fields: &[serde_ast::Field]) -> R<Schema> {
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
    fn struct_schema(
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
        for f in fields.iter().filter(|f| !f.attrs.skip_deserializing()) {
            let fa = match attrs::field_attrs(&f.original.attrs) {
                Ok(fa) => fa,
                Err(e) => {
                    self.syn_error(m, e);
                    failed = true;
                    continue;
                }
            };
            if f.attrs.flatten() {
                let eval = match &fa.with {
                    Some(w) => self.with_schema(m, w, f.original),
                    None => self.ty(m, f.ty),
                };
                let Ok(eval) = eval else {
                    failed = true;
                    continue;
                };
                let flat = flatten_schema(&mut self.generator, eval, fa.validation.required);
                schemars::_private::flatten(&mut schema, flat);
                continue;
            }
            let eval = match &fa.with {
                Some(w) => self.with_schema(m, w, f.original),
                None => self.ty(m, f.ty),
            };
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
                    Err(msg) => {
                        self.error(
                            m,
                            f.original.ident.as_ref().map(|i| i.span()).unwrap_or_else(|| f.original.ty.span()),
                            format!("the #[serde(default)] value of this field cannot be computed statically: {msg}"),
                            Some("use a literal or a simple constructor in the default function (e.g. `fn default_x() -> i32 { 3 }`), or derive Default".into()),
                        );
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
        if failed { Err(Failed) } else { Ok(schema) }
    }

    /// `expr_for_enum`.
    fn enum_schema(
        &mut self,
        m: ModId,
        cont: &serde_ast::Container,
        variants: &[serde_ast::Variant],
        input: &syn::DeriveInput,
    ) -> R<Schema> {
        if variants.is_empty() {
            return Ok(Schema::from(false));
        }
        let deny = cont.attrs.deny_unknown_fields();
        let ident = &input.ident;
        let variants: Vec<&serde_ast::Variant> = variants
            .iter()
            .filter(|v| !v.attrs.skip_deserializing())
            .collect();
        let mut vattrs = Vec::new();
        for v in &variants {
            vattrs.push(attrs::variant_attrs(&v.original.attrs).map_err(|e| self.syn_error(m, e))?);
        }
        match cont.attrs.tag() {
            TagType::Internal { tag } => {
                let mut one_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let mut s = if let Some(w) = &va.with {
                            self.with_schema(m, w, v.original)?.schema
                        } else {
                            match v.style {
                                Style::Unit => self.leaf("()").schema,
                                Style::Newtype => {
                                    let fa = attrs::field_attrs(&v.fields[0].original.attrs)
                                        .map_err(|e| self.syn_error(m, e))?;
                                    let eval = match &fa.with {
                                        Some(w) => self.with_schema(m, w, v.original)?,
                                        None => self.ty(m, v.fields[0].ty)?,
                                    };
                                    let mut s = known::internal_newtype(&mut self.generator, eval);
                                    let post = self.field_mutators(m, &v.fields[0], &fa, &mut s)?;
                                    self.post_mutators(m, &post, &mut s)?;
                                    s
                                }
                                Style::Tuple => self.tuple_struct(m, &v.fields)?,
                                Style::Struct => {
                                    let dummy: syn::DeriveInput = syn::parse_quote!(
                                        struct __Variant;
                                    );
                                    self.struct_schema(
                                        m,
                                        &v.fields,
                                        &SerdeDefault::None,
                                        deny,
                                        &dummy,
                                    )?
                                }
                            }
                        };
                        let name = v.attrs.name().deserialize_name().to_string();
                        schemars::_private::apply_internal_enum_variant_tag(
                            &mut s, tag, &name, deny,
                        );
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                if probe_transforms(&schema).is_err() {
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!("enum `{ident}` is internally tagged (#[serde(tag = \"{tag}\")]): kube-derive's crd() panics on it, because its variants give the property `{tag}` different constant values and a structural schema cannot express that"),
                        Some(format!("use an externally tagged enum (remove `tag`; each variant becomes an optional property), or a struct with a `{tag}` field holding a unit enum plus one optional field per variant")),
                    ));
                }
                Ok(schema)
            }
            TagType::Adjacent { tag, content } => {
                let mut one_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let name = v.attrs.name().deserialize_name().to_string();
                        let mut props = serde_json::Map::new();
                        props.insert(
                            tag.clone(),
                            serde_json::json!({"type": "string", "const": name}),
                        );
                        let mut required = vec![Value::String(tag.clone())];
                        if !(matches!(v.style, Style::Unit) && va.with.is_none()) {
                            let c = self.untagged_variant(m, v, va, deny, false)?;
                            props.insert(content.clone(), c.to_value());
                            required.push(Value::String(content.clone()));
                        }
                        let mut obj = serde_json::Map::new();
                        obj.insert("type".into(), "object".into());
                        obj.insert("properties".into(), Value::Object(props));
                        obj.insert("required".into(), Value::Array(required));
                        if deny {
                            obj.insert("additionalProperties".into(), false.into());
                        }
                        let mut s = Schema::from(obj);
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                if probe_transforms(&schema).is_err() {
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!("enum `{ident}` is adjacently tagged (#[serde(tag = \"{tag}\", content = \"{content}\")]): kube-derive's crd() panics on it, because its variants give `{tag}` and `{content}` conflicting schemas"),
                        Some(format!("use an externally tagged enum (remove `tag` and `content`), or a struct with a `{tag}` field holding a unit enum plus one optional field per variant")),
                    ));
                }
                Ok(schema)
            }
            TagType::External => {
                let (unit, complex): (Vec<_>, Vec<_>) =
                    variants.iter().zip(&vattrs).partition(|(v, a)| {
                        matches!(v.style, Style::Unit) && a.is_default() && !v.attrs.untagged()
                    });
                let unit_schema = {
                    let names: Vec<Value> = unit
                        .iter()
                        .map(|(v, _)| Value::String(v.attrs.name().deserialize_name().to_string()))
                        .collect();
                    schemars::json_schema!({"type": "string", "enum": names})
                };
                if complex.is_empty() {
                    return Ok(unit_schema);
                }
                let data_variants = complex
                    .iter()
                    .filter(|(v, _)| !matches!(v.style, Style::Unit) && !v.attrs.untagged())
                    .count();
                let unit_like = unit.len()
                    + complex
                        .iter()
                        .filter(|(v, _)| matches!(v.style, Style::Unit) && !v.attrs.untagged())
                        .count();
                if data_variants > 0 && unit_like > 0 {
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!("enum `{ident}` mixes unit variants and variants with data: kube-derive's crd() panics on it, because the unit variants are strings and the others objects, and a structural schema has one type"),
                        Some("give every variant data (e.g. `Variant {}` or `Variant(EmptyStruct)`), or move the data into a separate optional field next to a unit enum".into()),
                    ));
                }
                let mut one_of = Vec::new();
                if !unit.is_empty() {
                    one_of.push(unit_schema.to_value());
                }
                for (v, va) in complex {
                    let name = v.attrs.name().deserialize_name().to_string();
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let mut s = if matches!(v.style, Style::Unit) && va.with.is_none() {
                            schemars::_private::new_unit_enum_variant(&name)
                        } else {
                            let sub = self.untagged_variant(m, v, va, deny, false)?;
                            schemars::_private::new_externally_tagged_enum_variant(&name, sub)
                        };
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                self.check_transforms(m, ident, &schema)?;
                Ok(schema)
            }
            TagType::None => {
                let mut any_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = self.untagged_variant(m, v, va, deny, true)?;
                    any_of.push(s.to_value());
                }
                let schema = Schema::from(serde_json::Map::from_iter([(
                    "anyOf".to_string(),
                    Value::Array(any_of),
                )]));
                let done = self.check_transforms(m, ident, &schema)?;
                let typed = [
                    "type",
                    "x-kubernetes-int-or-string",
                    "x-kubernetes-preserve-unknown-fields",
                ]
                .iter()
                .any(|k| done.get(*k).is_some());
                if !typed {
                    let scalars: Vec<String> = variants
                        .iter()
                        .filter(|v| !matches!(v.style, Style::Struct))
                        .map(|v| format!("`{}`", v.ident))
                        .collect();
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!(
                            "the untagged enum `{ident}` has no object variant ({} are not structs): kube-derive's crd() then emits a schema without `type`, which the API server rejects as not structural",
                            scalars.join(", ")
                        ),
                        Some("make the variants structs with named fields, or replace the enum with one scalar type (e.g. `IntOrString`, or `String` with a pattern)".into()),
                    ));
                }
                Ok(schema)
            }
        }
    }

    /// `expr_for_untagged_enum_variant`.
    fn untagged_variant(
        &mut self,
        m: ModId,
        v: &serde_ast::Variant,
        va: &attrs::VariantAttrs,
        deny: bool,
        actually_untagged: bool,
    ) -> R<Schema> {
        let mut s = if let Some(w) = &va.with {
            self.with_schema(m, w, v.original)?.schema
        } else {
            match v.style {
                Style::Unit => self.leaf("()").schema,
                Style::Newtype => self.field_schema(m, &v.fields[0], false)?,
                Style::Tuple => self.tuple_struct(m, &v.fields)?,
                Style::Struct => {
                    let dummy: syn::DeriveInput = syn::parse_quote!(
                        struct __Variant;
                    );
                    self.struct_schema(m, &v.fields, &SerdeDefault::None, deny, &dummy)?
                }
            }
        };
        if actually_untagged {
            self.common_mutators(m, &va.common, &mut s, &v.ident)?;
        }
        Ok(s)
    }

    /// Runs `crd()`'s transforms on an enum's schema alone (as a property of an object, where
    /// it is used), so a panic in kube-core's rewriter is reported at the enum rather than for
    /// the whole CRD. Returns the transformed enum schema.
    fn check_transforms(&mut self, m: ModId, ident: &syn::Ident, schema: &Schema) -> R<Value> {
        probe_transforms(schema).map_err(|msg| {
            self.error(
                m,
                ident.span(),
                format!("kube-derive's crd() panics on enum `{ident}`: {msg}"),
                Some("give the variants' common properties identical types, or use an externally tagged enum".into()),
            )
        })
    }

    // ----- mutators ------------------------------------------------------------------------

    fn common_mutators(
        &mut self,
        m: ModId,
        c: &Common,
        schema: &mut Schema,
        at: &dyn quote::ToTokens,
    ) -> R<()> {
        let _ = at;
        self.metadata_mutators(m, c, schema)?;
        self.post_mutators(m, c, schema)
    }

    /// title, description, deprecated, examples.
    fn metadata_mutators(&mut self, m: ModId, c: &Common, schema: &mut Schema) -> R<()> {
        use syn::spanned::Spanned;
        let (doc_title, doc_desc) = match &c.doc {
            Some(doc) => {
                let (t, d) = schemars::_private::get_title_and_description(doc);
                (Some(t.to_string()), Some(d.to_string()))
            }
            None => (None, None),
        };
        let title = match &c.title {
            Some(e) => Some(self.string_expr(m, e)?),
            None => doc_title,
        };
        let description = match &c.description {
            Some(e) => Some(self.string_expr(m, e)?),
            None => doc_desc,
        };
        if let Some(t) = title {
            schemars::_private::insert_metadata_property_if_nonempty(schema, "title", t);
        }
        if let Some(d) = description {
            schemars::_private::insert_metadata_property_if_nonempty(schema, "description", d);
        }
        if c.deprecated {
            schema.insert("deprecated".into(), true.into());
        }
        if !c.examples.is_empty() {
            let mut values = Vec::new();
            for e in &c.examples {
                match eval::eval(self.krate, m, e) {
                    Ok(v) => values.push(v),
                    Err(msg) => {
                        return Err(self.error(
                            m,
                            e.span(),
                            format!("cannot evaluate this example: {msg}"),
                            Some("write the example as a literal".into()),
                        ));
                    }
                }
            }
            schema.insert("examples".into(), Value::Array(values));
        }
        Ok(())
    }

    /// extensions, transforms.
    fn post_mutators(&mut self, m: ModId, c: &Common, schema: &mut Schema) -> R<()> {
        use syn::spanned::Spanned;
        for (k, v) in &c.extensions {
            match eval::json_tokens(v) {
                Ok(value) => {
                    schema.insert(k.clone(), value);
                }
                Err(msg) => {
                    return Err(self.error(
                        m,
                        v.span(),
                        msg,
                        Some("write the extension value as JSON literal tokens".into()),
                    ));
                }
            }
        }
        if let Some(t) = c.transforms.first() {
            return Err(self.error(
                m,
                t.span(),
                "`#[schemars(transform = ...)]` runs a function at compile time that rsbuilder cannot evaluate statically",
                Some("express the change with `extend(...)`, `with = \"Type\"` or the validation attributes".into()),
            ));
        }
        Ok(())
    }

    fn validation_mutators(&mut self, m: ModId, v: &Validation, schema: &mut Schema) -> R<()> {
        use schemars::_private::insert_validation_property as put;
        if let Some(l) = &v.length {
            if let Some(min) = l.min.as_ref().or(l.equal.as_ref()) {
                let val = self.number_expr(m, min)?;
                put(schema, "string", "minLength", val.clone());
                put(schema, "array", "minItems", val);
            }
            if let Some(max) = l.max.as_ref().or(l.equal.as_ref()) {
                let val = self.number_expr(m, max)?;
                put(schema, "string", "maxLength", val.clone());
                put(schema, "array", "maxItems", val);
            }
        }
        if let Some(r) = &v.range {
            if let Some(min) = r.min.as_ref().or(r.equal.as_ref()) {
                let val = self.number_expr(m, min)?;
                put(schema, "number", "minimum", val);
            }
            if let Some(max) = r.max.as_ref().or(r.equal.as_ref()) {
                let val = self.number_expr(m, max)?;
                put(schema, "number", "maximum", val);
            }
        }
        if let Some(p) = &v.pattern {
            let s = self.string_expr(m, p)?;
            put(schema, "string", "pattern", s);
        }
        if let Some(c) = &v.contains {
            let s = self.string_expr(m, c)?;
            schemars::_private::must_contain(schema, &s);
        }
        if let Some(f) = v.format {
            schema.insert("format".into(), f.into());
        }
        if let Some(inner) = &v.inner {
            if let Some(items) = schema.get_mut("items") {
                if let Ok(inner_schema) = <&mut Schema>::try_from(items) {
                    let mut s = inner_schema.clone();
                    self.validation_mutators(m, inner, &mut s)?;
                    *inner_schema = s;
                }
            }
        }
        Ok(())
    }

    fn string_expr(&mut self, m: ModId, e: &syn::Expr) -> R<String> {
        use syn::spanned::Spanned;
        match eval::eval(self.krate, m, e) {
            Ok(Value::String(s)) => Ok(s),
            Ok(other) => Ok(other.to_string()),
            Err(msg) => Err(self.error(
                m,
                e.span(),
                msg,
                Some("use a string literal or a const".into()),
            )),
        }
    }

    fn number_expr(&mut self, m: ModId, e: &syn::Expr) -> R<Value> {
        use syn::spanned::Spanned;
        match eval::eval(self.krate, m, e) {
            Ok(v @ Value::Number(_)) => Ok(v),
            Ok(other) => Err(self.error(
                m,
                e.span(),
                format!("expected a number, found {other}"),
                None,
            )),
            Err(msg) => Err(self.error(
                m,
                e.span(),
                msg,
                Some("use a number literal or a const".into()),
            )),
        }
    }

    // ----- x_kube --------------------------------------------------------------------------

    /// kube-derive's `KubeSchema`: struct rules on the whole schema, field rules and merge
    /// strategies on single-field copies merged back into the properties.
    fn apply_x_kube(
        &mut self,
        m: ModId,
        cont: &serde_ast::Container,
        cattrs: &attrs::ContainerAttrs,
        input: &syn::DeriveInput,
        original_attrs: &[syn::Attribute],
        schema: &mut Schema,
    ) -> R<()> {
        for rule in x_kube_items(original_attrs, "validation").map_err(|e| self.syn_error(m, e))? {
            let r = self.rule(m, &rule)?;
            let _ = kube_core::validate(schema, r);
        }
        let serde_ast::Data::Struct(_, fields) = &cont.data else {
            return Ok(());
        };
        // The original (unfiltered) fields carry the #[x_kube] attributes.
        let syn::Data::Struct(orig) =
            &syn::DeriveInput::from(match self.krate.item(m, &input.ident.to_string()) {
                Some(LocalItem::Struct(s)) => s.clone(),
                _ => return Ok(()),
            })
            .data
            .clone()
        else {
            return Ok(());
        };
        for (f, of) in fields.iter().zip(orig.fields.iter()) {
            let rules = x_kube_items(&of.attrs, "validation").map_err(|e| self.syn_error(m, e))?;
            let merges =
                x_kube_items(&of.attrs, "merge_strategy").map_err(|e| self.syn_error(m, e))?;
            if rules.is_empty() && merges.is_empty() {
                continue;
            }
            let mut merge = self.struct_schema(
                m,
                std::slice::from_ref(f),
                cont.attrs.default(),
                cont.attrs.deny_unknown_fields(),
                input,
            )?;
            self.common_mutators(m, &cattrs.common, &mut merge, &input.ident)?;
            for rule in &rules {
                let r = self.rule(m, rule)?;
                let _ = kube_core::validate_property(&mut merge, 0, r);
            }
            if let Some(ms) = merges.last() {
                let strategy = self.merge_strategy(m, ms)?;
                let _ = kube_core::merge_strategy_property(&mut merge, 0, strategy);
            }
            kube_core::merge_properties(schema, &mut merge);
        }
        Ok(())
    }

    /// A CEL rule expression: `"rule"`, `("rule", "message")`, or a `Rule::new(…)` chain.
    pub fn rule(&mut self, m: ModId, e: &syn::Expr) -> R<kube_core::Rule> {
        use syn::spanned::Spanned;
        match rule_expr(self.krate, m, e) {
            Ok(r) => Ok(r),
            Err(msg) => Err(self.error(
                m,
                e.span(),
                format!("cannot evaluate this validation rule statically: {msg}"),
                Some("write the rule as a string literal, a (\"rule\", \"message\") pair, or Rule::new(\"...\").message(\"...\").reason(Reason::...)".into()),
            )),
        }
    }

    fn merge_strategy(&mut self, m: ModId, e: &syn::Expr) -> R<kube_core::cel::MergeStrategy> {
        use syn::spanned::Spanned;
        match merge_strategy_expr(self.krate, m, e) {
            Some(s) => Ok(s),
            None => Err(self.error(
                m,
                e.span(),
                "cannot evaluate this merge strategy statically",
                Some("use ListMerge::Atomic | ListMerge::Set | ListMerge::Map(vec![\"key\".into()]), MapMerge::Atomic | MapMerge::Granular or StructMerge::Atomic | StructMerge::Granular".into()),
            )),
        }
    }

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
        let spec_eval = self.ty(m, &spec_ty)?;
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
            let e = self.ty(m, &ty)?;
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

/// `json_schema_for_flatten::<T>(generator, required)` for a computed type.
fn flatten_schema(g: &mut SchemaGenerator, eval: Eval, required: bool) -> Schema {
    known::flatten_with(g, eval, required)
}

/// Runs the transforms on `schema` used as a property of an object; the transformed schema,
/// or the panic message of kube-core's rewriter.
fn probe_transforms(schema: &Schema) -> Result<Value, String> {
    let mut probe = schemars::json_schema!({"type": "object", "properties": {"probe": schema}});
    run_transforms(&mut probe)?;
    Ok(probe
        .get("properties")
        .and_then(|p| p.get("probe"))
        .cloned()
        .unwrap_or(Value::Null))
}

/// Runs `crd()`'s transforms in order; a panic in kube-core's rewriter becomes its message
/// (and leaves `schema` empty).
pub fn run_transforms(schema: &mut Schema) -> Result<(), String> {
    let mut settings = known::crd_settings();
    let mut work = std::mem::take(schema);
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for t in settings.transforms.iter_mut() {
            t.transform(&mut work);
        }
        work
    }));
    std::panic::set_hook(prev);
    match result {
        Ok(done) => {
            *schema = done;
            Ok(())
        }
        Err(payload) => Err(payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic in the schema transforms".into())),
    }
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

/// The values of `key = …` inside `#[x_kube(...)]` attributes.
fn x_kube_items(attrs: &[syn::Attribute], key: &str) -> syn::Result<Vec<syn::Expr>> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("x_kube")) {
        let list = a.parse_args_with(
            syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
        )?;
        for meta in list {
            match &meta {
                syn::Meta::NameValue(nv) if nv.path.is_ident(key) => out.push(nv.value.clone()),
                syn::Meta::NameValue(nv)
                    if nv.path.is_ident("validation") || nv.path.is_ident("merge_strategy") => {}
                syn::Meta::Path(p) if p.is_ident("cel") => {}
                syn::Meta::List(l) if l.path.is_ident("crates") => {}
                other => {
                    return Err(syn::Error::new_spanned(
                        other.path(),
                        "unknown x_kube attribute (kube-derive accepts `validation = …` and `merge_strategy = …`)",
                    ));
                }
            }
        }
    }
    Ok(out)
}

fn lit_string(krate: &Crate<'_>, m: ModId, e: &syn::Expr) -> Result<String, String> {
    match eval::eval(krate, m, e)? {
        Value::String(s) => Ok(s),
        other => Err(format!("expected a string, found {other}")),
    }
}

/// Evaluates a `kube::core::Rule` expression.
pub fn rule_expr(krate: &Crate<'_>, m: ModId, e: &syn::Expr) -> Result<kube_core::Rule, String> {
    match e {
        syn::Expr::Paren(p) => rule_expr(krate, m, &p.expr),
        syn::Expr::Tuple(t) if t.elems.len() == 2 => {
            Ok(
                kube_core::Rule::new(lit_string(krate, m, &t.elems[0])?).message(
                    kube_core::Message::Message(lit_string(krate, m, &t.elems[1])?),
                ),
            )
        }
        syn::Expr::MethodCall(mc) => {
            let base = rule_expr(krate, m, &mc.receiver)?;
            let arg = mc.args.first().ok_or("missing argument")?;
            match mc.method.to_string().as_str() {
                "message" => Ok(base.message(message_expr(krate, m, arg)?)),
                "reason" => Ok(base.reason(reason_expr(arg)?)),
                "field_path" => Ok(base.field_path(lit_string(krate, m, arg)?)),
                "optional_old_self" => match eval::eval(krate, m, arg)? {
                    Value::Bool(b) => Ok(base.optional_old_self(b)),
                    _ => Err("expected a bool".into()),
                },
                other => Err(format!("unknown Rule method `{other}`")),
            }
        }
        syn::Expr::Call(c) => {
            let syn::Expr::Path(p) = &*c.func else {
                return Err("unsupported rule expression".into());
            };
            let last = p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            match (last.as_str(), c.args.len()) {
                ("new" | "from", 1) => Ok(kube_core::Rule::new(lit_string(krate, m, &c.args[0])?)),
                _ => Err("unsupported rule constructor".into()),
            }
        }
        syn::Expr::Struct(_) => Err("struct literals of Rule are not supported".into()),
        other => Ok(kube_core::Rule::new(lit_string(krate, m, other)?)),
    }
}

fn message_expr(krate: &Crate<'_>, m: ModId, e: &syn::Expr) -> Result<kube_core::Message, String> {
    if let syn::Expr::Call(c) = e {
        if let syn::Expr::Path(p) = &*c.func {
            let last = p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            if let Some(a) = c.args.first() {
                return match last.as_str() {
                    "Expression" => Ok(kube_core::Message::Expression(lit_string(krate, m, a)?)),
                    "Message" => Ok(kube_core::Message::Message(lit_string(krate, m, a)?)),
                    _ => Err("unsupported message".into()),
                };
            }
        }
    }
    Ok(kube_core::Message::Message(lit_string(krate, m, e)?))
}

fn reason_expr(e: &syn::Expr) -> Result<kube_core::Reason, String> {
    let syn::Expr::Path(p) = e else {
        return Err("expected Reason::…".into());
    };
    match p
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .as_deref()
    {
        Some("FieldValueInvalid") => Ok(kube_core::Reason::FieldValueInvalid),
        Some("FieldValueForbidden") => Ok(kube_core::Reason::FieldValueForbidden),
        Some("FieldValueRequired") => Ok(kube_core::Reason::FieldValueRequired),
        Some("FieldValueDuplicate") => Ok(kube_core::Reason::FieldValueDuplicate),
        _ => Err("unknown Reason".into()),
    }
}

fn merge_strategy_expr(
    krate: &Crate<'_>,
    m: ModId,
    e: &syn::Expr,
) -> Option<kube_core::cel::MergeStrategy> {
    use kube_core::{ListMerge, MapMerge, StructMerge};
    let (ty, variant, arg) = match e {
        syn::Expr::Path(p) => {
            let n = p.path.segments.len();
            if n < 2 {
                return None;
            }
            (
                p.path.segments[n - 2].ident.to_string(),
                p.path.segments[n - 1].ident.to_string(),
                None,
            )
        }
        syn::Expr::Call(c) => {
            let syn::Expr::Path(p) = &*c.func else {
                return None;
            };
            let n = p.path.segments.len();
            if n < 2 {
                return None;
            }
            (
                p.path.segments[n - 2].ident.to_string(),
                p.path.segments[n - 1].ident.to_string(),
                c.args.first(),
            )
        }
        _ => return None,
    };
    Some(match (ty.as_str(), variant.as_str()) {
        ("ListMerge", "Atomic") => ListMerge::Atomic.into(),
        ("ListMerge", "Set") => ListMerge::Set.into(),
        ("ListMerge", "Map") => {
            let keys = match eval::eval(krate, m, arg?).ok()? {
                Value::Array(a) => a
                    .into_iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()?,
                _ => return None,
            };
            ListMerge::Map(keys).into()
        }
        ("MapMerge", "Atomic") => MapMerge::Atomic.into(),
        ("MapMerge", "Granular") => MapMerge::Granular.into(),
        ("StructMerge", "Atomic") => StructMerge::Atomic.into(),
        ("StructMerge", "Granular") => StructMerge::Granular.into(),
        _ => return None,
    })
}

/// Field names in declaration order as serde names them (for the defaults module).
pub fn serde_field_names(fields: &[serde_ast::Field]) -> BTreeMap<String, String> {
    fields
        .iter()
        .filter_map(|f| match &f.member {
            syn::Member::Named(i) => {
                Some((i.to_string(), f.attrs.name().serialize_name().to_string()))
            }
            _ => None,
        })
        .collect()
}
