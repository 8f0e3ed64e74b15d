//! `#[kube(...)]` on a `#[derive(CustomResource)]` type, with the keys and forms kube-derive 5
//! accepts (both the JSON-string and the list syntax of `printcolumn` and `scale`).

use std::collections::BTreeMap;

use syn::{Expr, Meta};

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

/// The `#[kube(...)]` keys of kube-derive 5's `KubeAttrs`, read with darling as kube-derive
/// reads them, so rsbuilder accepts and rejects exactly what `#[derive(CustomResource)]` does:
/// unknown or repeated keys, a `schema` other than `disabled`/`manual`/`derived`, a flag
/// written as a string. Converted into [`KubeAttrs`] by [`parse`].
#[derive(darling::FromDeriveInput)]
#[darling(attributes(kube))]
struct Raw {
    group: String,
    version: String,
    kind: String,
    doc: Option<String>,
    root: Option<String>,
    plural: Option<String>,
    singular: Option<String>,
    #[darling(default)]
    namespaced: bool,
    #[darling(default)]
    no_spec: bool,
    #[darling(multiple, rename = "derive")]
    _derives: Vec<String>,
    #[darling(multiple, rename = "attr")]
    _attributes: Vec<RootAttr>,
    schema: Option<RawSchemaMode>,
    status: Option<syn::Path>,
    #[darling(multiple, rename = "category")]
    categories: Vec<String>,
    #[darling(multiple, rename = "shortname")]
    shortnames: Vec<String>,
    #[darling(multiple, rename = "printcolumn")]
    printcolumns: Vec<PrintColumn>,
    #[darling(multiple)]
    selectable: Vec<String>,
    scale: Option<Scale>,
    #[darling(default, rename = "crates")]
    _crates: Crates,
    #[darling(multiple, rename = "annotation")]
    annotations: Vec<KeyValue>,
    #[darling(multiple, rename = "label")]
    labels: Vec<KeyValue>,
    #[darling(multiple, rename = "validation", with = darling::util::parse_expr::preserve_str_literal)]
    validations: Vec<Expr>,
    #[darling(default)]
    cel: bool,
    #[darling(default = default_true)]
    storage: bool,
    #[darling(default = default_true)]
    served: bool,
    deprecated: Option<darling::util::Override<String>>,
}

fn default_true() -> bool {
    true
}

#[derive(Clone, Copy, darling::FromMeta)]
enum RawSchemaMode {
    Disabled,
    Manual,
    Derived,
}

/// `crates(kube = ..., ...)`: paths kube-derive's generated code uses; no effect on the CRD.
#[derive(Default, darling::FromMeta)]
#[allow(dead_code)]
struct Crates {
    kube: Option<syn::Path>,
    kube_core: Option<syn::Path>,
    k8s_openapi: Option<syn::Path>,
    schemars: Option<syn::Path>,
    serde: Option<syn::Path>,
    serde_json: Option<syn::Path>,
    std: Option<syn::Path>,
}

/// `attr = "..."`: an attribute for the generated root struct. kube-derive refuses `derive`,
/// `serde` and `schemars` there; any other attribute has no effect on the CRD.
struct RootAttr;

impl darling::FromMeta for RootAttr {
    fn from_string(value: &str) -> darling::Result<Self> {
        let tokens: proc_macro2::TokenStream = value.parse().map_err(|_| {
            darling::Error::custom("`attr = \"...\"` does not hold an attribute's tokens")
        })?;
        if let Some((_, what, limit)) = crate::syntax::too_deep(tokens.clone()) {
            return Err(darling::Error::custom(format!(
                "`attr = \"...\"` has {what} nested more than {limit} deep"
            )));
        }
        let meta = syn::parse2::<Meta>(tokens)?;
        match meta.path().get_ident().map(|i| i.to_string()).as_deref() {
            Some("derive") => Err(darling::Error::custom(
                "`attr = \"...\"` cannot set derives: use `derive = \"...\"`",
            )),
            Some(a @ ("serde" | "schemars")) => Err(darling::Error::custom(format!(
                "`attr = \"...\"` cannot set `{a}` attributes (kube-derive refuses them)"
            ))),
            _ => Ok(Self),
        }
    }
}

/// `annotation("key", "value")` / `label("key", "value")`.
struct KeyValue(String, String);

impl darling::FromMeta for KeyValue {
    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        use darling::ast::NestedMeta;
        match items {
            [
                NestedMeta::Lit(syn::Lit::Str(k)),
                NestedMeta::Lit(syn::Lit::Str(v)),
            ] => Ok(Self(k.value(), v.value())),
            _ => Err(darling::Error::unsupported_format(
                "expected `\"key\", \"value\"` format",
            )),
        }
    }
}

/// The list form of `printcolumn(...)`, field names as kube-derive spells them.
#[derive(darling::FromMeta)]
struct PrintColumnList {
    description: Option<String>,
    format: Option<String>,
    json_path: String,
    name: String,
    priority: Option<i32>,
    type_: String,
}

impl darling::FromMeta for PrintColumn {
    /// The JSON form: `printcolumn = r#"{"name":…,"type":…,"jsonPath":…}"#`. Several JSON
    /// values in one string (kube-derive stops at serde_json's "trailing characters") are
    /// refused with the fix.
    fn from_string(value: &str) -> darling::Result<Self> {
        serde_json::from_str(value).map_err(|e| {
            // `{…}{…}`, `{…}, {…}` or `[{…}, {…}]`.
            let list = |text: &str| serde_json::from_str::<Vec<serde_json::Value>>(text).ok();
            let values = list(value)
                .or_else(|| list(&format!("[{value}]")))
                .map_or(0, |v| v.len())
                .max(
                    serde_json::Deserializer::from_str(value)
                        .into_iter::<serde_json::Value>()
                        .take_while(Result::is_ok)
                        .count(),
                );
            if values > 1 {
                darling::Error::custom(format!(
                    "this `printcolumn` holds {values} JSON objects, and kube-derive reads one: write one `printcolumn = r#\"{{…}}\"#` per column"
                ))
            } else {
                darling::Error::custom(format!("`printcolumn` is not one JSON object: {e}"))
            }
        })
    }

    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        let l = PrintColumnList::from_list(items)?;
        Ok(Self {
            description: l.description,
            format: l.format,
            json_path: l.json_path,
            name: l.name,
            priority: l.priority,
            type_: l.type_,
        })
    }
}

/// The list form of `scale(...)`.
#[derive(darling::FromMeta)]
struct ScaleList {
    label_selector_path: Option<String>,
    spec_replicas_path: String,
    status_replicas_path: String,
}

impl darling::FromMeta for Scale {
    /// The JSON form: `scale = r#"{"specReplicasPath":…,"statusReplicasPath":…}"#`.
    fn from_string(value: &str) -> darling::Result<Self> {
        serde_json::from_str(value).map_err(darling::Error::custom)
    }

    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        let l = ScaleList::from_list(items)?;
        Ok(Self {
            label_selector_path: l.label_selector_path,
            spec_replicas_path: l.spec_replicas_path,
            status_replicas_path: l.status_replicas_path,
        })
    }
}

/// Parses every `#[kube(...)]` attribute of the `#[derive(CustomResource)]` type `ident`, as
/// kube-derive 5 does (darling, the same keys and forms). Errors: every problem darling finds
/// (unknown keys with the near miss, duplicates, missing `group`/`version`/`kind`, values of
/// the wrong form), combined, each at its token.
pub fn parse(ident: &syn::Ident, attrs: &[syn::Attribute]) -> syn::Result<KubeAttrs> {
    use darling::FromDeriveInput;
    let input = syn::DeriveInput {
        attrs: attrs.to_vec(),
        vis: syn::Visibility::Inherited,
        ident: ident.clone(),
        generics: syn::Generics::default(),
        data: syn::Data::Struct(syn::DataStruct {
            struct_token: Default::default(),
            fields: syn::Fields::Unit,
            semi_token: None,
        }),
    };
    let raw = Raw::from_derive_input(&input).map_err(|e| {
        // darling gives missing keys no span: they are reported at the type.
        let mut all: Option<syn::Error> = None;
        for one in e.flatten() {
            let span = one.explicit_span().unwrap_or_else(|| ident.span());
            let e = syn::Error::new(span, format!("#[kube(...)]: {one}"));
            match &mut all {
                Some(a) => a.combine(e),
                None => all = Some(e),
            }
        }
        all.unwrap_or_else(|| syn::Error::new_spanned(ident, "#[kube(...)]: invalid"))
    })?;
    // kube-derive writes root `validation` rules into an `#[x_kube]` attribute that only the
    // `KubeSchema` derive of a derived schema defines: with `schema = "manual"` or
    // `"disabled"` the crate does not compile, so there is no `crd()` to equal.
    if !matches!(raw.schema, None | Some(RawSchemaMode::Derived))
        && let Some(rule) = raw.validations.first()
    {
        return Err(syn::Error::new_spanned(
            rule,
            "#[kube(validation = ...)] needs `schema = \"derived\"` (the default): kube-derive \
                 does not compile a root rule with `schema = \"manual\"` or `\"disabled\"`; remove \
                 the rule, or with a manual schema write it into that schema",
        ));
    }
    Ok(KubeAttrs {
        group: raw.group,
        version: raw.version,
        kind: raw.kind,
        doc: raw.doc,
        root: raw.root,
        plural: raw.plural,
        singular: raw.singular,
        namespaced: raw.namespaced,
        no_spec: raw.no_spec,
        schema: match raw.schema {
            None | Some(RawSchemaMode::Derived) => SchemaMode::Derived,
            Some(RawSchemaMode::Manual) => SchemaMode::Manual,
            Some(RawSchemaMode::Disabled) => SchemaMode::Disabled,
        },
        status: raw.status,
        categories: raw.categories,
        shortnames: raw.shortnames,
        printcolumns: raw.printcolumns,
        selectable: raw.selectable,
        scale: raw.scale,
        annotations: raw.annotations.into_iter().map(|k| (k.0, k.1)).collect(),
        labels: raw.labels.into_iter().map(|k| (k.0, k.1)).collect(),
        validations: raw.validations,
        cel: raw.cel,
        storage: raw.storage,
        served: raw.served,
        deprecated: raw.deprecated.map(|d| match d {
            darling::util::Override::Inherit => None,
            darling::util::Override::Explicit(w) => Some(w),
        }),
    })
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
        assert!(err.contains("Unknown field: `shortnames`"), "{err}");
    }

    /// darling decides what `#[kube]` accepts, as it does in kube-derive: flags also as
    /// strings, `schema` only in snake case, no key twice, and every missing key reported.
    #[test]
    fn accepts_and_rejects_what_kube_derive_does() {
        let parse_attrs = |tokens: proc_macro2::TokenStream| {
            let item: syn::ItemStruct = syn::parse_quote! { #[kube(#tokens)] struct FooSpec {} };
            parse(&item.ident, &item.attrs).map_err(|e| {
                e.into_iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        };
        let k = parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            kind = "Foo",
            storage = "false",
            namespaced = true,
            deprecated
        ))
        .unwrap();
        assert!(!k.storage && k.namespaced);
        assert_eq!(k.deprecated, Some(None));
        let err = parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            kind = "Foo",
            schema = "Derived"
        ))
        .unwrap_err();
        assert!(
            err.contains("Unknown value: `Derived`. Did you mean `derived`?"),
            "{err}"
        );
        let err = parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            version = "v2",
            kind = "Foo"
        ))
        .unwrap_err();
        assert!(err.contains("Duplicate field `version`"), "{err}");
        for mode in ["manual", "disabled"] {
            let err = parse_attrs(quote::quote!(
                group = "g.io",
                version = "v1",
                kind = "Foo",
                validation = "self.spec.a > 0",
                schema = #mode
            ))
            .unwrap_err();
            assert!(
                err.contains("#[kube(validation = ...)] needs `schema = \"derived\"`"),
                "{mode}: {err}"
            );
        }
        parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            kind = "Foo",
            validation = "self.spec.a > 0",
            schema = "derived"
        ))
        .unwrap();
        let err = parse_attrs(quote::quote!(version = "v1")).unwrap_err();
        assert!(
            err.contains("Missing field `group`") && err.contains("Missing field `kind`"),
            "{err}"
        );
        let err = parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            kind = "Foo",
            attr = "serde(rename_all = \"camelCase\")"
        ))
        .unwrap_err();
        assert!(err.contains("cannot set `serde` attributes"), "{err}");
        let k = parse_attrs(quote::quote!(
            group = "g.io",
            version = "v1",
            kind = "Foo",
            crates(kube = "::k"),
            attr = "allow(dead_code)",
            derive = "PartialEq"
        ))
        .unwrap();
        assert_eq!(k.kind, "Foo");
    }

    #[test]
    fn plural_rule() {
        assert_eq!(to_plural("database"), "databases");
        assert_eq!(to_plural("policy"), "policies");
        assert_eq!(to_plural("gateway"), "gateways");
        assert_eq!(to_plural("box"), "boxes");
    }
}
