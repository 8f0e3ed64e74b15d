//! kube-derive's `KubeSchema` and `#[x_kube(...)]`: CEL validation rules and merge strategies,
//! evaluated statically.

use schemars::Schema;
use serde_derive_internals::ast as serde_ast;
use serde_json::Value;

use super::{Deriver, R};
use crate::manifests::crd::attrs;
use crate::manifests::crd::defaults;
use crate::manifests::crd::resolve::{Crate, LocalItem, ModId};

impl<'c, 'a> Deriver<'c, 'a> {
    /// kube-derive's `KubeSchema`: struct rules on the whole schema, field rules and merge
    /// strategies on single-field copies merged back into the properties.
    pub(super) fn apply_x_kube(
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
            // The field was recorded when the struct was derived.
            self.site_open();
            let merge = self.struct_schema(
                m,
                std::slice::from_ref(f),
                cont.attrs.default(),
                cont.attrs.deny_unknown_fields(),
                input,
            );
            self.site_discard();
            let mut merge = merge?;
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
            Err(msg) => Err(self.undecidable(
                m,
                e.span(),
                format!("cannot evaluate this validation rule statically: {msg}"),
                Some("write the rule as a string literal, a (\"rule\", \"message\") pair, or Rule::new(\"...\").message(\"...\").reason(Reason::...)".into()),
            )),
        }
    }

    pub(super) fn merge_strategy(
        &mut self,
        m: ModId,
        e: &syn::Expr,
    ) -> R<kube_core::cel::MergeStrategy> {
        use syn::spanned::Spanned;
        match merge_strategy_expr(self.krate, m, e) {
            Some(s) => Ok(s),
            None => Err(self.undecidable(
                m,
                e.span(),
                "cannot evaluate this merge strategy statically",
                Some("use ListMerge::Atomic | ListMerge::Set | ListMerge::Map(vec![\"key\".into()]), MapMerge::Atomic | MapMerge::Granular or StructMerge::Atomic | StructMerge::Granular".into()),
            )),
        }
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
    match defaults::eval_untyped(krate, m, e)? {
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
                "optional_old_self" => match defaults::eval_untyped(krate, m, arg)? {
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
    if let syn::Expr::Call(c) = e
        && let syn::Expr::Path(p) = &*c.func
    {
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
            let keys = match defaults::eval_untyped(krate, m, arg?).ok()? {
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
