//! `#[schemars]`, `#[validate]` and `#[garde]` attributes on the user's types, parsed the way
//! schemars_derive 1.2.3 parses them (same keys, same precedence), and the copy of schemars'
//! serde keywords into `#[serde]` that schemars_derive does before handing the type to
//! serde_derive_internals.

use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Meta, Token};

/// `schemars` keywords that serde_derive_internals parses (copied into `#[serde]`).
const SCHEMARS_KEYWORDS_PARSED_BY_SERDE: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "deny_unknown_fields",
    "tag",
    "content",
    "untagged",
    "default",
    "skip",
    "skip_serializing",
    "skip_serializing_if",
    "skip_deserializing",
    "flatten",
    "remote",
    "transparent",
    "into",
    "from",
    "try_from",
    "bound",
];

/// `serde` keywords kept for serde_derive_internals (everything else serde accepts does not
/// change the schema).
const SERDE_KEYWORDS: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "deny_unknown_fields",
    "tag",
    "content",
    "untagged",
    "default",
    "skip",
    "skip_serializing",
    "skip_serializing_if",
    "skip_deserializing",
    "flatten",
    "remote",
    "transparent",
    "into",
    "from",
    "try_from",
    "serialize_with",
    "with",
];

/// One item of an attribute list: a meta, or schemars' `!keyword` (unset).
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Item {
    /// `key`, `key(...)`, `key = value`.
    Meta(Meta),
    /// `!key`.
    Not(syn::Path),
}

impl syn::parse::Parse for Item {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        if input.peek(Token![!]) {
            let _: Token![!] = input.parse()?;
            Ok(Item::Not(input.parse()?))
        } else {
            Ok(Item::Meta(input.parse()?))
        }
    }
}

fn ident_of(path: &syn::Path) -> Option<String> {
    path.get_ident().map(|i| i.to_string())
}

/// The items of every `#[<name>(...)]` attribute, in order.
pub fn items(attrs: &[Attribute], name: &str) -> Result<Vec<Item>, syn::Error> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident(name)) {
        let list = a.parse_args_with(Punctuated::<Item, Token![,]>::parse_terminated)?;
        out.extend(list);
    }
    Ok(out)
}

/// Rewrites the `#[serde]` attributes of one container, variant or field as schemars_derive
/// does: schemars' serde keywords override serde's; unset (`!kw`) ones are dropped.
pub fn schemars_to_serde(attrs: &mut Vec<Attribute>) {
    let (serde_attrs, other): (Vec<_>, Vec<_>) =
        attrs.drain(..).partition(|a| a.path().is_ident("serde"));
    *attrs = other;
    let mut effective: Vec<TokenStream> = Vec::new();
    let mut schemars_names = std::collections::BTreeSet::new();
    let mut unset = std::collections::BTreeSet::new();
    for item in items(attrs, "schemars").unwrap_or_default() {
        match item {
            Item::Not(p) => {
                if let Some(k) = ident_of(&p) {
                    unset.insert(k);
                }
            }
            Item::Meta(m) => {
                if let Some(k) = ident_of(m.path())
                    && SCHEMARS_KEYWORDS_PARSED_BY_SERDE.contains(&k.as_str())
                {
                    schemars_names.insert(k);
                    effective.push(quote::quote!(#m));
                }
            }
        }
    }
    if schemars_names.contains("skip") {
        schemars_names.insert("skip_serializing".into());
        schemars_names.insert("skip_deserializing".into());
    }
    for item in items(&serde_attrs, "serde").unwrap_or_default() {
        if let Item::Meta(m) = item
            && let Some(k) = ident_of(m.path())
            && !schemars_names.contains(&k)
            && !unset.contains(&k)
            && SERDE_KEYWORDS.contains(&k.as_str())
        {
            effective.push(quote::quote!(#m));
        }
    }
    if !effective.is_empty() {
        let attr: Attribute = syn::parse_quote!(#[serde(#(#effective),*)]);
        attrs.push(attr);
    }
}

/// Metadata attributes shared by containers, variants and fields.
#[derive(Default, Clone)]
pub struct Common {
    /// Doc comment lines joined as schemars joins them.
    pub doc: Option<String>,
    /// The doc when a line is not a string literal (`#[doc = concat!(...)]`,
    /// `#[doc = include_str!("…")]`): the `concat!` of every line that schemars builds, for
    /// the evaluator; [`Common::doc`] is then `None`.
    pub doc_expr: Option<Expr>,
    /// `#[deprecated]`.
    pub deprecated: bool,
    /// `title = …`.
    pub title: Option<Expr>,
    /// `description = …`.
    pub description: Option<Expr>,
    /// `example = …`.
    pub examples: Vec<Expr>,
    /// `extend("k" = v, …)`.
    pub extensions: Vec<(String, TokenStream)>,
    /// `transform = …` (cannot be evaluated statically).
    pub transforms: Vec<Expr>,
}

impl Common {
    /// No metadata at all (schemars' `is_default`).
    pub fn is_default(&self) -> bool {
        self.doc.is_none()
            && self.doc_expr.is_none()
            && !self.deprecated
            && self.title.is_none()
            && self.description.is_none()
            && self.examples.is_empty()
            && self.extensions.is_empty()
            && self.transforms.is_empty()
    }
}

/// `min`/`max`/`equal` of `length(...)` / `range(...)`.
#[derive(Default, Clone)]
pub struct LengthOrRange {
    /// `min`.
    pub min: Option<Expr>,
    /// `max`.
    pub max: Option<Expr>,
    /// `equal`.
    pub equal: Option<Expr>,
}

/// Validation attributes (schemars, validator's `validate`, garde).
#[derive(Default, Clone)]
pub struct Validation {
    /// `length(...)`.
    pub length: Option<LengthOrRange>,
    /// `range(...)`.
    pub range: Option<LengthOrRange>,
    /// `pattern(...)` / `regex(pattern = …)`.
    pub pattern: Option<Expr>,
    /// `contains(...)`.
    pub contains: Option<Expr>,
    /// `required`.
    pub required: bool,
    /// `email`, `url`, `ip`, `ipv4`, `ipv6` as the schema format.
    pub format: Option<&'static str>,
    /// `inner(...)`.
    pub inner: Option<Box<Validation>>,
}

impl Validation {
    /// Nothing set.
    pub fn is_default(&self) -> bool {
        self.length.is_none()
            && self.range.is_none()
            && self.pattern.is_none()
            && self.contains.is_none()
            && !self.required
            && self.format.is_none()
            && self.inner.is_none()
    }
}

/// `with = "Type"` / `schema_with = "path"`.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum With {
    /// Another type's schema.
    Type(syn::Type),
    /// A function returning a schema.
    Function(syn::Path),
}

/// Parsed schemars attributes of a field.
#[derive(Default, Clone)]
pub struct FieldAttrs {
    /// Metadata.
    pub common: Common,
    /// `with` / `schema_with`.
    pub with: Option<With>,
    /// Validation.
    pub validation: Validation,
}

impl FieldAttrs {
    /// Nothing that changes the schema (schemars' `is_default`).
    pub fn is_default(&self) -> bool {
        self.common.is_default() && self.with.is_none() && self.validation.is_default()
    }
}

/// Parsed schemars attributes of a container.
#[derive(Default, Clone)]
pub struct ContainerAttrs {
    /// Metadata.
    pub common: Common,
    /// `with` / `schema_with`.
    pub with: Option<With>,
}

/// Parsed schemars attributes of an enum variant.
#[derive(Default, Clone)]
pub struct VariantAttrs {
    /// Metadata.
    pub common: Common,
    /// `with` / `schema_with`.
    pub with: Option<With>,
}

impl VariantAttrs {
    /// Nothing that changes the schema.
    pub fn is_default(&self) -> bool {
        self.common.is_default() && self.with.is_none()
    }
}

/// Doc comment as schemars_derive reads it: every `#[doc = "…"]` line with one leading space
/// stripped, joined with `\n`. `None` as well when a line is not a string literal: see
/// [`doc_expr`].
pub fn doc(attrs: &[Attribute]) -> Result<Option<String>, syn::Error> {
    let mut lines = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let Ok(nv) = a.meta.require_name_value() else {
            continue;
        };
        match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => {
                let v = s.value();
                lines.push(v.strip_prefix(' ').map(str::to_string).unwrap_or(v));
            }
            _ => return Ok(None),
        }
    }
    Ok(if lines.is_empty() {
        None
    } else {
        Some(lines.join("\n"))
    })
}

/// The doc of `attrs` as the expression schemars_derive writes when a line is not a string
/// literal: `concat!(line, "\n", line, ...)`, a literal line losing one leading space and any
/// other line (`concat!(...)`, `include_str!(...)`) kept as written. `None` when every line is
/// a literal (see [`doc`]).
pub fn doc_expr(attrs: &[Attribute]) -> Option<Expr> {
    let values: Vec<&Expr> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| a.meta.require_name_value().ok())
        .map(|nv| &nv.value)
        .collect();
    let literal = |e: &Expr| {
        matches!(
            e,
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(_),
                ..
            })
        )
    };
    if values.iter().all(|e| literal(e)) {
        return None;
    }
    let mut args = TokenStream::new();
    for (i, e) in values.iter().enumerate() {
        if i > 0 {
            args.extend(quote::quote!(, "\n",));
        }
        match e {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) if s.value().starts_with(' ') => {
                let trimmed = syn::LitStr::new(&s.value()[1..], s.span());
                args.extend(quote::quote!(#trimmed));
            }
            other => args.extend(quote::ToTokens::to_token_stream(other)),
        }
    }
    let span = syn::spanned::Spanned::span(values[0]);
    Some(syn::parse_quote_spanned!(span=> concat!(#args)))
}

fn value_expr(m: &Meta) -> syn::Result<Expr> {
    match m {
        Meta::NameValue(nv) => Ok(nv.value.clone()),
        _ => Err(syn::Error::new_spanned(
            m,
            format!(
                "expected `{} = ...`",
                quote::ToTokens::to_token_stream(m.path())
            ),
        )),
    }
}

fn lit_str_parse<T: syn::parse::Parse>(m: &Meta) -> syn::Result<T> {
    match value_expr(m)? {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.parse(),
        other => Err(syn::Error::new_spanned(other, "expected a string literal")),
    }
}

/// Like schemars' `parse_name_value_expr_handle_lit_str`: a string literal's contents are
/// parsed as an expression.
fn expr_handle_lit_str(m: &Meta) -> syn::Result<Expr> {
    match value_expr(m)? {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.parse(),
        other => Ok(other),
    }
}

fn nested(m: &Meta) -> syn::Result<Vec<Meta>> {
    match m {
        Meta::List(l) => Ok(l
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)?
            .into_iter()
            .collect()),
        _ => Err(syn::Error::new_spanned(
            m,
            format!(
                "expected `{}(...)`",
                quote::ToTokens::to_token_stream(m.path())
            ),
        )),
    }
}

fn length_or_range(m: &Meta, strict: bool) -> syn::Result<LengthOrRange> {
    let mut r = LengthOrRange::default();
    for n in nested(m)? {
        match ident_of(n.path()).as_deref() {
            Some("min") => r.min = Some(expr_handle_lit_str(&n)?),
            Some("max") => r.max = Some(expr_handle_lit_str(&n)?),
            Some("equal") => r.equal = Some(expr_handle_lit_str(&n)?),
            _ if strict => {
                return Err(syn::Error::new_spanned(
                    n.path(),
                    "unknown item in this schemars attribute",
                ));
            }
            _ => {}
        }
    }
    Ok(r)
}

/// Which attribute family an item came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Schemars,
    Validate,
    Garde,
}

fn validation_item(v: &mut Validation, m: &Meta, fam: Family) -> syn::Result<bool> {
    let Some(name) = ident_of(m.path()) else {
        return Ok(false);
    };
    let format = match name.as_str() {
        "email" => Some("email"),
        "url" => Some("uri"),
        "ip" => Some("ip"),
        "ipv4" => Some("ipv4"),
        "ipv6" => Some("ipv6"),
        _ => None,
    };
    if let Some(f) = format {
        v.format = Some(f);
        return Ok(true);
    }
    match name.as_str() {
        "length" => v.length = Some(length_or_range(m, fam == Family::Schemars)?),
        "range" => v.range = Some(length_or_range(m, fam == Family::Schemars)?),
        "required" => v.required = true,
        "pattern" if fam != Family::Validate => {
            let Meta::List(l) = m else {
                return Err(syn::Error::new_spanned(m, "expected `pattern(...)`"));
            };
            v.pattern = Some(l.parse_args::<Expr>()?);
        }
        "regex" if fam != Family::Garde => {
            let key = if fam == Family::Validate {
                "path"
            } else {
                "pattern"
            };
            if let Meta::NameValue(nv) = m {
                // schemars 0.8 and validator 0.16 named a `static` regex: `regex = "NAME"`.
                let name = match &nv.value {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => s.value(),
                    other => quote::ToTokens::to_token_stream(other).to_string(),
                };
                let family = if fam == Family::Validate {
                    "validate"
                } else {
                    "schemars"
                };
                return Err(syn::Error::new_spanned(
                    m,
                    format!(
                        "`regex = \"{name}\"` is the schemars 0.8 form, which schemars 1 does not read; write `#[{family}(regex({key} = {name}))]` (`{name}` a `Regex`, or a pattern string)"
                    ),
                ));
            }
            let mut found = None;
            for n in nested(m)? {
                if n.path().is_ident(key) {
                    found = Some(if fam == Family::Validate {
                        expr_handle_lit_str(&n)?
                    } else {
                        value_expr(&n)?
                    });
                } else if fam == Family::Schemars {
                    return Err(syn::Error::new_spanned(
                        n.path(),
                        "unknown item in schemars `regex` attribute (use `regex(pattern = ...)`)",
                    ));
                }
            }
            v.pattern = Some(found.ok_or_else(|| {
                syn::Error::new_spanned(m, format!("`regex(...)` requires `{key} = ...`"))
            })?);
        }
        "contains" => {
            let Meta::List(l) = m else {
                return Err(syn::Error::new_spanned(m, "expected `contains(...)`"));
            };
            let expr = match l.parse_args::<Expr>() {
                Ok(Expr::Assign(a)) => *a.right,
                Ok(e) => e,
                Err(_) => {
                    let mut found = None;
                    for n in nested(m)? {
                        if n.path().is_ident("pattern") {
                            found = Some(value_expr(&n)?);
                        }
                    }
                    found.ok_or_else(|| {
                        syn::Error::new_spanned(m, "`contains` requires `pattern = ...`")
                    })?
                }
            };
            v.contains = Some(expr);
        }
        "inner" if fam != Family::Validate => {
            let inner = v.inner.get_or_insert_with(Default::default);
            for n in nested(m)? {
                let known = validation_item(inner, &n, fam)?;
                if !known && fam == Family::Schemars {
                    return Err(syn::Error::new_spanned(
                        n.path(),
                        "unknown item in schemars `inner` attribute",
                    ));
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn common_item(c: &mut Common, m: &Meta) -> syn::Result<bool> {
    let Some(name) = ident_of(m.path()) else {
        return Ok(false);
    };
    match name.as_str() {
        "title" => c.title = Some(value_expr(m)?),
        "description" => c.description = Some(value_expr(m)?),
        "example" => {
            let e = value_expr(m)?;
            // As schemars: a string literal that reads as a path is refused (it used to name a
            // function).
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &e
                && s.parse::<syn::Path>().is_ok()
            {
                return Err(syn::Error::new_spanned(
                    &e,
                    format!(
                        "`example` string literals that read as a path are refused by schemars; write `example = {v}()` for a function or `example = &\"{v}\"` for the text",
                        v = s.value()
                    ),
                ));
            }
            c.examples.push(e)
        }
        "extend" => {
            let Meta::List(l) = m else {
                return Err(syn::Error::new_spanned(
                    m,
                    "expected `extend(\"key\" = value, ...)`",
                ));
            };
            let parsed = l.parse_args_with(|input: syn::parse::ParseStream| {
                let mut out = Vec::new();
                while !input.is_empty() {
                    let key: syn::LitStr = input.parse()?;
                    let _: Token![=] = input.parse()?;
                    let mut value = TokenStream::new();
                    while !input.is_empty() && !input.peek(Token![,]) {
                        value.extend([input.parse::<proc_macro2::TokenTree>()?]);
                    }
                    if value.is_empty() {
                        return Err(syn::Error::new(key.span(), "expected an extension value"));
                    }
                    out.push((key.value(), value));
                    if input.peek(Token![,]) {
                        let _: Token![,] = input.parse()?;
                    }
                }
                Ok(out)
            })?;
            c.extensions.extend(parsed);
        }
        "transform" => c.transforms.push(value_expr(m)?),
        _ => return Ok(false),
    }
    Ok(true)
}

fn with_item(w: &mut Option<With>, m: &Meta, allow_fn: bool) -> syn::Result<bool> {
    match ident_of(m.path()).as_deref() {
        Some("with") => *w = Some(With::Type(lit_str_parse(m)?)),
        Some("schema_with") if allow_fn => *w = Some(With::Function(lit_str_parse(m)?)),
        _ => return Ok(false),
    }
    Ok(true)
}

fn unknown(m: &Meta) -> syn::Error {
    syn::Error::new_spanned(
        m.path(),
        format!(
            "unknown schemars attribute `{}`",
            quote::ToTokens::to_token_stream(m.path())
        ),
    )
}

fn is_serde_keyword(m: &Meta) -> bool {
    ident_of(m.path()).is_some_and(|k| SCHEMARS_KEYWORDS_PARSED_BY_SERDE.contains(&k.as_str()))
}

fn common_from(attrs: &[Attribute], c: &mut Common) -> syn::Result<()> {
    c.doc = doc(attrs)?;
    c.doc_expr = doc_expr(attrs);
    c.deprecated = attrs.iter().any(|a| a.path().is_ident("deprecated"));
    Ok(())
}

/// Field attributes: schemars metadata, `with`, and validation from schemars / validate / garde.
pub fn field_attrs(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
    let mut f = FieldAttrs::default();
    common_from(attrs, &mut f.common)?;
    for item in items(attrs, "schemars")? {
        let Item::Meta(m) = item else { continue };
        if common_item(&mut f.common, &m)?
            || validation_item(&mut f.validation, &m, Family::Schemars)?
            || with_item(&mut f.with, &m, true)?
            || is_serde_keyword(&m)
        {
            continue;
        }
        return Err(unknown(&m));
    }
    for item in items(attrs, "serde").unwrap_or_default() {
        if let Item::Meta(m) = item
            && f.with.is_none()
        {
            with_item(&mut f.with, &m, false)?;
        }
    }
    for (name, fam) in [("validate", Family::Validate), ("garde", Family::Garde)] {
        for item in items(attrs, name).unwrap_or_default() {
            if let Item::Meta(m) = item {
                validation_item(&mut f.validation, &m, fam)?;
            }
        }
    }
    Ok(f)
}

/// Container attributes.
pub fn container_attrs(attrs: &[Attribute]) -> syn::Result<ContainerAttrs> {
    let mut c = ContainerAttrs::default();
    common_from(attrs, &mut c.common)?;
    for item in items(attrs, "schemars")? {
        let Item::Meta(m) = item else { continue };
        if common_item(&mut c.common, &m)?
            || with_item(&mut c.with, &m, true)?
            || is_serde_keyword(&m)
        {
            continue;
        }
        match ident_of(m.path()).as_deref() {
            Some("crate" | "inline" | "rename" | "_unstable_ref_variants") => {}
            _ => return Err(unknown(&m)),
        }
    }
    Ok(c)
}

/// Variant attributes.
pub fn variant_attrs(attrs: &[Attribute]) -> syn::Result<VariantAttrs> {
    let mut v = VariantAttrs::default();
    common_from(attrs, &mut v.common)?;
    for item in items(attrs, "schemars")? {
        let Item::Meta(m) = item else { continue };
        if common_item(&mut v.common, &m)?
            || with_item(&mut v.with, &m, true)?
            || is_serde_keyword(&m)
        {
            continue;
        }
        return Err(unknown(&m));
    }
    for item in items(attrs, "serde").unwrap_or_default() {
        if let Item::Meta(m) = item
            && v.with.is_none()
        {
            with_item(&mut v.with, &m, false)?;
        }
    }
    Ok(v)
}

/// The names in `#[derive(...)]` attributes (last path segment), in order.
///
/// Reads the attribute's tokens directly (each comma-separated path's last identifier)
/// instead of parsing them as paths: every item of every module goes through here.
pub fn derives(attrs: &[Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let mut last: Option<String> = None;
        for t in list.tokens.clone() {
            match t {
                proc_macro2::TokenTree::Ident(i) => last = Some(i.to_string()),
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => {
                    out.extend(last.take());
                }
                _ => {}
            }
        }
        out.extend(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_lists_last_segments_across_attributes() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[derive(Clone, kube::CustomResource, ::serde::Serialize)]
            #[serde(rename_all = "camelCase")]
            #[derive(schemars::JsonSchema,)]
            #[derive()]
            struct S;
        };
        assert_eq!(
            derives(&item.attrs),
            ["Clone", "CustomResource", "Serialize", "JsonSchema"]
        );
    }
}
