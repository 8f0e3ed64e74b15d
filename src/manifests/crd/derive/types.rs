//! Field types to schemas: std, serde_json and k8s-openapi types through [`known`], the
//! user's own structs and enums through [`Deriver::derive`], type aliases expanded, generic
//! arguments substituted, recursion refused.

use serde_json::Value;

use super::{Deriver, Failed, R, Subst};
use crate::manifests::crd::defaults;
use crate::manifests::crd::known::{self, Eval, Generic};
use crate::manifests::crd::resolve::{LocalItem, ModId, Resolved};

impl<'c, 'a> Deriver<'c, 'a> {
    /// The schema of a field type written in module `m`, as `subschema_for::<T>()` gives it.
    pub fn ty(&mut self, m: ModId, ty: &syn::Type) -> R<Eval> {
        self.ty_subst(m, ty, &Subst::new())
    }

    pub(super) fn ty_subst(&mut self, m: ModId, ty: &syn::Type, subst: &Subst) -> R<Eval> {
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
                let len = match defaults::eval_untyped(self.krate, m, &a.len) {
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

    pub(super) fn leaf(&mut self, name: &str) -> Eval {
        self.known_leaf(name).expect("leaf type is in the table")
    }

    /// A parameterless known type's schema, from schemars, cached for the run.
    pub(super) fn known_leaf(&mut self, path: &str) -> Option<Eval> {
        if let Some(e) = self.leaves.get(path) {
            return Some(e.clone());
        }
        let f = known::leaf_type(path)?;
        let e = f(&mut self.generator);
        self.leaves.insert(path.to_string(), e.clone());
        Some(e)
    }

    pub(super) fn type_args(path: &syn::Path) -> Vec<syn::Type> {
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

    pub(super) fn path_ty(&mut self, m: ModId, path: &syn::Path, subst: &Subst) -> R<Eval> {
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
            if let Some(why) = self.krate.undecided_cause(m, path) {
                self.diags
                    .push(why.diagnostic(&format!("the type `{written}`")));
                return Err(Failed);
            }
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
                        let max = Self::MAX_ALIAS_NESTING;
                        if self.alias_depth >= max {
                            return Err(self.error(
                                m,
                                path.span(),
                                format!(
                                    "the type alias `{written}` is expanded inside {max} other type aliases; rsbuilder expands aliases at most {max} deep, so it stops here rather than risk running out of stack"
                                ),
                                Some("shorten the chain of aliases (make an alias name the final type directly)".into()),
                            ));
                        }
                        self.alias_depth += 1;
                        let r = self.ty_subst(tm, &alias.ty, &inner);
                        self.alias_depth -= 1;
                        r
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
                if let Some(g) = known::generic(&p) {
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
                        Generic::Fixed(f) => return Ok(f(&mut self.generator)),
                        Generic::ArrayElement(f) => {
                            let Some(syn::Type::Array(array)) = args.first() else {
                                return Err(self.error(
                                    m,
                                    path.span(),
                                    format!("`{written}` needs an array type argument `[T; N]`"),
                                    None,
                                ));
                            };
                            let elem = self.ty_subst(m, &array.elem, subst)?;
                            return Ok(f(&mut self.generator, vec![elem]));
                        }
                        Generic::Capped(f) => {
                            let (Some(item), Some(cap)) = (args.first(), const_arg(path)) else {
                                return Err(self.undecidable(
                                    m,
                                    path.span(),
                                    format!("the capacity of `{written}` is not an integer literal, so its `maxItems` cannot be read statically"),
                                    Some("write the capacity as a literal (`ArrayVec<T, 8>`), or give the field #[schemars(with = \"Vec<T>\")] and a length(max = ...)".into()),
                                ));
                            };
                            let item = self.ty_subst(m, item, subst)?;
                            return Ok(f(&mut self.generator, item, cap));
                        }
                    }
                }
                let help = if p.starts_with("k8s_openapi::") {
                    "rsbuilder knows the k8s-openapi 0.29 types of Kubernetes 1.37 (feature v1_37); check the path".to_string()
                } else {
                    "rsbuilder knows std types, serde_json::Value, k8s-openapi types and the types of the crates schemars has features for (chrono, jiff, url, uuid, semver, rust_decimal, bigdecimal, indexmap, either, bytes, smol_str, arrayvec, smallvec); for another crate's type use #[schemars(with = \"...\")] with a known type, or #[schemars(schema_with = \"...\")]".to_string()
                };
                Err(self.undecidable(
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

    /// How many user types deep a schema is derived (a struct whose field is a struct whose
    /// field is ...). Each level costs the deriver some stack; 500 levels overflowed it (the
    /// process aborted). Deeper nesting is refused with the reference's file:line.
    pub(super) const MAX_TYPE_NESTING: usize = 64;

    /// How many type aliases deep a field type is expanded (`type A0 = Option<A1>; type A1 =
    /// ...`), counted over the whole derivation. Each alias costs the deriver stack like a
    /// nested type; a chain of 500 overflowed it. A longer chain, or an alias that names
    /// itself, is refused with the file:line of the alias reference that goes too deep.
    pub(super) const MAX_ALIAS_NESTING: usize = 64;

    /// The schema of the user's struct or enum `name` in module `tm`, referenced from module
    /// `from` at `span`.
    pub(super) fn user_type(
        &mut self,
        tm: ModId,
        name: &str,
        args: Vec<Eval>,
        from: ModId,
        span: proc_macro2::Span,
    ) -> R<Eval> {
        // Taken at once, so that only this type, not the types it contains, counts as flattened.
        let flattened = std::mem::take(&mut self.flatten_next);
        let key = (tm, name.to_string());
        self.site_type(&key);
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
        let mut cache_key = (
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
        if flattened {
            // Derived apart: a flattened enum is checked differently (see `enum_schema`).
            cache_key.1.push_str(" (flattened)");
        }
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
        let max = Self::MAX_TYPE_NESTING;
        if self.in_progress.len() >= max {
            let chain = self.in_progress.first().map_or("", |(_, n)| n.as_str());
            return Err(self.error(
                from,
                span,
                format!(
                    "`{name}` is nested {max} user types deep (from `{chain}`); rsbuilder derives schemas at most {max} types deep, so it stops here rather than risk running out of stack"
                ),
                Some("unroll the nesting (a list of the inner type, or `serde_json::Value` with `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]` at some depth)".into()),
            ));
        }
        match self.cache.get(&cache_key) {
            Some(Ok(eval)) => return Ok(eval.clone()),
            Some(Err(diags)) => {
                let diags = diags.clone();
                self.diags.extend(diags);
                return Err(Failed);
            }
            None => {}
        }
        let first_diag = self.diags.len();
        self.in_progress.push(key.clone());
        self.generics.push(params.into_iter().zip(args).collect());
        self.site_type_open();
        let result = match self.krate.item(tm, name) {
            Some(LocalItem::Struct(s)) => {
                let input = syn::DeriveInput::from(s.clone());
                self.derive(tm, &input, &s.attrs)
            }
            Some(LocalItem::Enum(e)) => {
                let input = syn::DeriveInput::from(e.clone());
                self.flattened_enum = flattened;
                let r = self.derive(tm, &input, &e.attrs);
                self.flattened_enum = false;
                r
            }
            _ => Err(Failed),
        };
        self.site_type_close(key.clone());
        self.generics.pop();
        self.in_progress.pop();
        let cached = match &result {
            Ok(eval) => Ok(eval.clone()),
            Err(Failed) => Err(self.diags[first_diag..].to_vec()),
        };
        self.cache.insert(cache_key, cached);
        result
    }
}

/// The integer literal among the generic arguments of the last segment of `path` (the `8` of
/// `ArrayVec<T, 8>`), if there is one.
fn const_arg(path: &syn::Path) -> Option<u64> {
    let syn::PathArguments::AngleBracketed(a) = &path.segments.last()?.arguments else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        })) => i.base10_parse().ok(),
        _ => None,
    })
}
