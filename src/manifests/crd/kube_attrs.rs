//! `#[kube(...)]` on a `#[derive(CustomResource)]` type, with the keys and forms kube-derive 5
//! accepts (both the JSON-string and the list syntax of `printcolumn` and `scale`).

use std::collections::BTreeMap;

use syn::punctuated::Punctuated;
use syn::{Expr, Meta, Token};

/// The schema mode of `#[kube(schema = "...")]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaMode {
    /// Derived with schemars (default).
    Derived,
    /// The user's own `JsonSchema` impl of the root type.
    Manual,
    /// No schema.
    Disabled,
}

/// A printer column (`CustomResourceColumnDefinition`).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrintColumn {
    /// `description`.
    pub description: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `jsonPath`.
    pub json_path: String,
    /// `name`.
    pub name: String,
    /// `priority`.
    pub priority: Option<i32>,
    /// `type`.
    #[serde(rename = "type")]
    pub type_: String,
}

/// The scale subresource.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scale {
    /// `labelSelectorPath`.
    pub label_selector_path: Option<String>,
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
}

/// Everything `#[kube(...)]` says.
#[derive(Debug, Clone)]
pub struct KubeAttrs {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// `doc` of the root type.
    pub doc: Option<String>,
    /// `root`: name of the generated struct.
    pub root: Option<String>,
    /// `plural`.
    pub plural: Option<String>,
    /// `singular`.
    pub singular: Option<String>,
    /// `namespaced`.
    pub namespaced: bool,
    /// `no_spec`.
    pub no_spec: bool,
    /// `schema`.
    pub schema: SchemaMode,
    /// `status = "Type"`.
    pub status: Option<syn::Path>,
    /// `category`.
    pub categories: Vec<String>,
    /// `shortname`.
    pub shortnames: Vec<String>,
    /// `printcolumn`.
    pub printcolumns: Vec<PrintColumn>,
    /// `selectable`.
    pub selectable: Vec<String>,
    /// `scale`.
    pub scale: Option<Scale>,
    /// `annotation("k", "v")`.
    pub annotations: BTreeMap<String, String>,
    /// `label("k", "v")`.
    pub labels: BTreeMap<String, String>,
    /// `validation = …` (CEL rules on the root).
    pub validations: Vec<Expr>,
    /// `cel`.
    pub cel: bool,
    /// `storage` (default true).
    pub storage: bool,
    /// `served` (default true).
    pub served: bool,
    /// `deprecated` / `deprecated = "warning"`.
    pub deprecated: Option<Option<String>>,
}

fn lit_str(e: &Expr) -> syn::Result<String> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.value()),
        other => Err(syn::Error::new_spanned(other, "expected a string literal")),
    }
}

fn nv(m: &Meta) -> syn::Result<&Expr> {
    match m {
        Meta::NameValue(nv) => Ok(&nv.value),
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "expected `{} = \"...\"`",
                quote::ToTokens::to_token_stream(other.path())
            ),
        )),
    }
}

fn flag(m: &Meta) -> syn::Result<bool> {
    match m {
        Meta::Path(_) => Ok(true),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Ok(b.value),
            other => Err(syn::Error::new_spanned(other, "expected true or false")),
        },
        other => Err(syn::Error::new_spanned(other, "expected a flag")),
    }
}

fn list_fields(m: &Meta) -> syn::Result<Vec<Meta>> {
    match m {
        Meta::List(l) => Ok(l
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)?
            .into_iter()
            .collect()),
        other => Err(syn::Error::new_spanned(other, "expected a list")),
    }
}

fn key_value(m: &Meta) -> syn::Result<(String, String)> {
    let Meta::List(l) = m else {
        return Err(syn::Error::new_spanned(
            m,
            "expected `(\"key\", \"value\")`",
        ));
    };
    let items = l.parse_args_with(Punctuated::<syn::LitStr, Token![,]>::parse_terminated)?;
    let v: Vec<_> = items.into_iter().collect();
    match v.as_slice() {
        [k, val] => Ok((k.value(), val.value())),
        _ => Err(syn::Error::new_spanned(
            m,
            "expected `\"key\", \"value\"` format",
        )),
    }
}

/// Parses every `#[kube(...)]` attribute of a `#[derive(CustomResource)]` type.
pub fn parse(ident: &syn::Ident, attrs: &[syn::Attribute]) -> syn::Result<KubeAttrs> {
    let mut k = KubeAttrs {
        group: String::new(),
        version: String::new(),
        kind: String::new(),
        doc: None,
        root: None,
        plural: None,
        singular: None,
        namespaced: false,
        no_spec: false,
        schema: SchemaMode::Derived,
        status: None,
        categories: Vec::new(),
        shortnames: Vec::new(),
        printcolumns: Vec::new(),
        selectable: Vec::new(),
        scale: None,
        annotations: BTreeMap::new(),
        labels: BTreeMap::new(),
        validations: Vec::new(),
        cel: false,
        storage: true,
        served: true,
        deprecated: None,
    };
    let (mut group, mut version, mut kind) = (None, None, None);
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for a in attrs.iter().filter(|a| a.path().is_ident("kube")) {
        let list = match a.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(l) => l,
            Err(e) => {
                push(e);
                continue;
            }
        };
        for m in list {
            let key = m
                .path()
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let r: syn::Result<()> = (|| {
                match key.as_str() {
                    "group" => group = Some(lit_str(nv(&m)?)?),
                    "version" => version = Some(lit_str(nv(&m)?)?),
                    "kind" => kind = Some(lit_str(nv(&m)?)?),
                    "doc" => k.doc = Some(lit_str(nv(&m)?)?),
                    "root" => k.root = Some(lit_str(nv(&m)?)?),
                    "plural" => k.plural = Some(lit_str(nv(&m)?)?),
                    "singular" => k.singular = Some(lit_str(nv(&m)?)?),
                    "namespaced" => k.namespaced = flag(&m)?,
                    "no_spec" => k.no_spec = flag(&m)?,
                    "cel" => k.cel = flag(&m)?,
                    "storage" => k.storage = flag(&m)?,
                    "served" => k.served = flag(&m)?,
                    "deprecated" => {
                        k.deprecated = Some(match &m {
                            Meta::Path(_) => None,
                            other => Some(lit_str(nv(other)?)?),
                        })
                    }
                    "schema" => {
                        let e = nv(&m)?;
                        k.schema = match lit_str(e)?.to_ascii_lowercase().as_str() {
                            "derived" => SchemaMode::Derived,
                            "manual" => SchemaMode::Manual,
                            "disabled" => SchemaMode::Disabled,
                            _ => {
                                return Err(syn::Error::new_spanned(
                                    e,
                                    "expected \"derived\", \"manual\" or \"disabled\"",
                                ));
                            }
                        }
                    }
                    "status" => {
                        let e = nv(&m)?;
                        // Parsed from the literal so the path keeps the literal's position.
                        k.status = Some(match e {
                            Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => s.parse()?,
                            other => {
                                return Err(syn::Error::new_spanned(
                                    other,
                                    "expected a string literal",
                                ));
                            }
                        })
                    }
                    "category" => k.categories.push(lit_str(nv(&m)?)?),
                    "shortname" => k.shortnames.push(lit_str(nv(&m)?)?),
                    "selectable" => k.selectable.push(lit_str(nv(&m)?)?),
                    "annotation" => {
                        let (a, b) = key_value(&m)?;
                        k.annotations.insert(a, b);
                    }
                    "label" => {
                        let (a, b) = key_value(&m)?;
                        k.labels.insert(a, b);
                    }
                    "validation" => k.validations.push(nv(&m)?.clone()),
                    "printcolumn" => k.printcolumns.push(printcolumn(&m)?),
                    "scale" => k.scale = Some(scale(&m)?),
                    "derive" | "attr" | "crates" => {}
                    _ => {
                        return Err(syn::Error::new_spanned(
                            m.path(),
                            format!(
                                "unknown kube attribute `{}`",
                                quote::ToTokens::to_token_stream(m.path())
                            ),
                        ));
                    }
                }
                Ok(())
            })();
            if let Err(e) = r {
                push(e);
            }
        }
    }
    for (name, v) in [("group", &group), ("version", &version), ("kind", &kind)] {
        if v.is_none() {
            push(syn::Error::new_spanned(
                ident,
                format!("#[derive(CustomResource)] needs `{name} = \"...\"` in #[kube(...)]"),
            ));
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    k.group = group.unwrap_or_default();
    k.version = version.unwrap_or_default();
    k.kind = kind.unwrap_or_default();
    Ok(k)
}

fn printcolumn(m: &Meta) -> syn::Result<PrintColumn> {
    if let Meta::NameValue(_) = m {
        let e = nv(m)?;
        return serde_json::from_str(&lit_str(e)?)
            .map_err(|err| syn::Error::new_spanned(e, format!("invalid printcolumn JSON: {err}")));
    }
    let mut p = PrintColumn::default();
    let (mut has_name, mut has_path, mut has_type) = (false, false, false);
    for f in list_fields(m)? {
        let key = f
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "description" => p.description = Some(lit_str(nv(&f)?)?),
            "format" => p.format = Some(lit_str(nv(&f)?)?),
            "json_path" => {
                p.json_path = lit_str(nv(&f)?)?;
                has_path = true;
            }
            "name" => {
                p.name = lit_str(nv(&f)?)?;
                has_name = true;
            }
            "priority" => {
                let e = nv(&f)?;
                p.priority = Some(match e {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i.base10_parse()?,
                    other => return Err(syn::Error::new_spanned(other, "expected an integer")),
                });
            }
            "type_" => {
                p.type_ = lit_str(nv(&f)?)?;
                has_type = true;
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    f.path(),
                    format!("unknown printcolumn field `{key}`"),
                ));
            }
        }
    }
    for (ok, name) in [
        (has_path, "json_path"),
        (has_name, "name"),
        (has_type, "type_"),
    ] {
        if !ok {
            return Err(syn::Error::new_spanned(
                m,
                format!("printcolumn is missing `{name}`"),
            ));
        }
    }
    Ok(p)
}

fn scale(m: &Meta) -> syn::Result<Scale> {
    if let Meta::NameValue(_) = m {
        let e = nv(m)?;
        return serde_json::from_str(&lit_str(e)?)
            .map_err(|err| syn::Error::new_spanned(e, format!("invalid scale JSON: {err}")));
    }
    let mut s = Scale::default();
    let (mut spec, mut status) = (false, false);
    for f in list_fields(m)? {
        let key = f
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "label_selector_path" => s.label_selector_path = Some(lit_str(nv(&f)?)?),
            "spec_replicas_path" => {
                s.spec_replicas_path = lit_str(nv(&f)?)?;
                spec = true;
            }
            "status_replicas_path" => {
                s.status_replicas_path = lit_str(nv(&f)?)?;
                status = true;
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    f.path(),
                    format!("unknown scale field `{key}`"),
                ));
            }
        }
    }
    if !spec || !status {
        return Err(syn::Error::new_spanned(
            m,
            "scale needs `spec_replicas_path` and `status_replicas_path`",
        ));
    }
    Ok(s)
}

/// kube-derive's plural rule, shared with the scaffolds: see
/// [`crate::model::gvk::kube_derive_plural`].
pub use crate::model::gvk::kube_derive_plural as to_plural;

impl KubeAttrs {
    /// `(singular, plural)` as kube-derive names the CRD: `singular` or the lower-case kind,
    /// `plural` or kube-derive's pluralization of the singular.
    pub fn names(&self) -> (String, String) {
        let singular = self
            .singular
            .clone()
            .unwrap_or_else(|| self.kind.to_ascii_lowercase());
        let plural = self.plural.clone().unwrap_or_else(|| to_plural(&singular));
        (singular, plural)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_syntaxes() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[kube(group = "g.io", version = "v1", kind = "Foo", namespaced, shortname = "f", shortname = "fo",
                   printcolumn = r#"{"name":"A","type":"string","jsonPath":".spec.a"}"#,
                   printcolumn(name = "B", type_ = "integer", json_path = ".spec.b", priority = 1),
                   scale(spec_replicas_path = ".spec.r", status_replicas_path = ".status.r"),
                   annotation("a", "b"), deprecated = "old", storage = false)]
            struct FooSpec {}
        };
        let k = parse(&item.ident, &item.attrs).unwrap();
        assert_eq!(k.kind, "Foo");
        assert!(k.namespaced && !k.storage);
        assert_eq!(k.shortnames, ["f", "fo"]);
        assert_eq!(k.printcolumns[0].json_path, ".spec.a");
        assert_eq!(k.printcolumns[1].priority, Some(1));
        assert_eq!(k.scale.unwrap().spec_replicas_path, ".spec.r");
        assert_eq!(k.deprecated, Some(Some("old".into())));
        let bad: syn::ItemStruct =
            syn::parse_quote! { #[kube(group = "g", kind = "K", shortnames = "x")] struct S {} };
        let err = parse(&bad.ident, &bad.attrs).unwrap_err().to_string();
        assert!(err.contains("unknown kube attribute"), "{err}");
    }

    #[test]
    fn plural_rule() {
        assert_eq!(to_plural("database"), "databases");
        assert_eq!(to_plural("policy"), "policies");
        assert_eq!(to_plural("gateway"), "gateways");
        assert_eq!(to_plural("box"), "boxes");
    }
}
