//! The CRD object as kube-derive's generated `crd()` builds it: the root schema through the
//! transforms, then the typed k8s-openapi `CustomResourceDefinition`; and several versions of
//! one kind merged with `kube::core::crd::merge_crds`.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::GeneratedCrd;
use super::apiserver_rules;
use super::derive::{Deriver, Member, human_bytes, run_transforms};
use super::kube_attrs::{KubeAttrs, SchemaMode};
use super::resolve::ModId;
use super::storage::StorageChoice;

/// One `#[derive(CustomResource)]` turned into a one-version CRD.
pub struct Found {
    /// Where it was written (for merge errors).
    pub module: ModId,
    /// The spec type's identifier.
    pub ident: syn::Ident,
    /// The `#[kube]` attributes.
    pub attrs: KubeAttrs,
    /// The CRD `crd()` returns for this type.
    pub crd: apiext::CustomResourceDefinition,
}

/// Builds the CRD of the spec type `ident` (module `m`), whose `#[kube]` attributes gave
/// `parsed` ([`super::kube_attrs::parse`], called once by the caller); diagnostics go to the
/// deriver, the attributes' errors among them.
pub fn one_version(
    d: &mut Deriver<'_, '_>,
    m: ModId,
    ident: &syn::Ident,
    parsed: syn::Result<KubeAttrs>,
) -> Option<Found> {
    let k = match parsed {
        Ok(k) => k,
        Err(e) => {
            for one in e {
                let msg = one.to_string();
                d.error(m, one.span(), msg, None);
            }
            return None;
        }
    };
    let generic = match d.krate.item(m, &ident.to_string()) {
        Some(super::resolve::LocalItem::Struct(s)) => s.generics.params.len(),
        Some(super::resolve::LocalItem::Enum(e)) => e.generics.params.len(),
        _ => 0,
    };
    if generic > 0 {
        d.error(
            m,
            ident.span(),
            format!("`{ident}` is a generic spec type: #[derive(CustomResource)] does not support generic parameters on the spec (the generated root type has none)"),
            Some("make the spec concrete; generic helper types with concrete arguments inside the spec are fine".into()),
        );
        return None;
    }
    let struct_name = k.root.clone().unwrap_or_else(|| k.kind.clone());
    if *ident == struct_name {
        d.error(
            m,
            ident.span(),
            "#[derive(CustomResource)] `kind = \"...\"` must not equal the struct name (kube-derive generates that struct)",
            Some(format!("rename the struct to `{}Spec`", k.kind)),
        );
        return None;
    }
    let (name, plural) = k.names();
    if let Err((msg, help)) = check_names(&k, &name, &plural) {
        d.error(m, ident.span(), msg, Some(help));
        return None;
    }
    let docstr = k.doc.clone().unwrap_or_else(|| {
        format!(" Auto-generated derived type for {ident} via `CustomResource`")
    });
    let doc = docstr.strip_prefix(' ').unwrap_or(&docstr).to_string();

    let schema = match k.schema {
        SchemaMode::Disabled => {
            d.take_root_sites();
            None
        }
        SchemaMode::Manual => {
            d.undecidable(
                m,
                ident.span(),
                format!("#[kube(schema = \"manual\")]: crd() calls your hand-written `JsonSchema` impl of `{struct_name}`, which rsbuilder cannot run statically"),
                Some("use the derived schema (remove `schema`); for content of any shape, type the spec's fields `serde_json::Value` with #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]".into()),
            );
            return None;
        }
        SchemaMode::Derived => {
            // Before the schema is built: an exponentially inlined one would take all memory.
            if let Some(big) = d.expansion_refusal(m, ident, k.status.as_ref()) {
                let why = if big.type_name.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": crd() inlines a type's schema at every use, and `{}` ({}) is inlined {} times",
                        big.type_name, big.at, big.copies
                    )
                };
                d.error(
                    m,
                    ident.span(),
                    format!(
                        "the CRD of {}.{} would be at least {} of YAML{why}; etcd stores at most {} KiB in one request",
                        k.kind,
                        k.group,
                        human_bytes(big.bytes),
                        super::MAX_CRD_BYTES >> 10
                    ),
                    Some("a type used twice is copied twice into the schema, and so is everything it holds: hold the repeated type once (a list or map of it instead of several fields of it), or cut the copies short with a field typed `serde_json::Value` and #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))], or one given a small schema with #[schemars(schema_with = \"...\")]".into()),
                );
                return None;
            }
            let mut schema = d
                .root_schema(
                    m,
                    &struct_name,
                    ident,
                    k.status.as_ref(),
                    k.no_spec,
                    &doc,
                    &k.validations,
                )
                .ok()?;
            if let Err(msg) = run_transforms(&mut schema) {
                d.transform_panic(m, ident.span(), &msg);
                return None;
            }
            let value = schema.to_value();
            match serde_json::from_value::<apiext::JSONSchemaProps>(value) {
                Ok(p) => Some(p),
                Err(e) => {
                    d.error(
                        m,
                        ident.span(),
                        format!(
                            "the schema is not a valid JSONSchemaProps (crd() would panic): {e}"
                        ),
                        None,
                    );
                    return None;
                }
            }
        }
    };

    let opt_vec = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    let opt_map = |v: &BTreeMap<String, String>| (!v.is_empty()).then(|| v.clone());
    let printer_columns = (!k.printcolumns.is_empty()).then(|| {
        k.printcolumns
            .iter()
            .map(|p| apiext::CustomResourceColumnDefinition {
                description: p.description.clone(),
                format: p.format.clone(),
                json_path: p.json_path.clone(),
                name: p.name.clone(),
                priority: p.priority,
                type_: p.type_.clone(),
            })
            .collect()
    });
    let selectable = (!k.selectable.is_empty()).then(|| {
        k.selectable
            .iter()
            .map(|p| apiext::SelectableField {
                json_path: p.clone(),
            })
            .collect()
    });
    // As in kube-derive: subresources only with a status; `scale` alone is dropped.
    let subresources = k
        .status
        .is_some()
        .then(|| apiext::CustomResourceSubresources {
            scale: k
                .scale
                .as_ref()
                .map(|s| apiext::CustomResourceSubresourceScale {
                    label_selector_path: s.label_selector_path.clone(),
                    spec_replicas_path: s.spec_replicas_path.clone(),
                    status_replicas_path: s.status_replicas_path.clone(),
                }),
            status: Some(apiext::CustomResourceSubresourceStatus(Value::Object(
                Default::default(),
            ))),
        });
    let (deprecated, deprecation_warning) = match &k.deprecated {
        None => (None, None),
        Some(w) => (Some(true), w.clone()),
    };
    let crd = apiext::CustomResourceDefinition {
        metadata: ObjectMeta {
            annotations: opt_map(&k.annotations),
            labels: opt_map(&k.labels),
            name: Some(format!("{plural}.{}", k.group)),
            ..Default::default()
        },
        spec: apiext::CustomResourceDefinitionSpec {
            group: k.group.clone(),
            names: apiext::CustomResourceDefinitionNames {
                categories: opt_vec(&k.categories),
                kind: k.kind.clone(),
                plural,
                short_names: opt_vec(&k.shortnames),
                singular: Some(name),
                ..Default::default()
            },
            scope: if k.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
            versions: vec![apiext::CustomResourceDefinitionVersion {
                additional_printer_columns: printer_columns,
                deprecated,
                deprecation_warning,
                name: k.version.clone(),
                schema: Some(apiext::CustomResourceValidation {
                    open_api_v3_schema: schema,
                }),
                selectable_fields: selectable,
                served: k.served,
                storage: k.storage,
                subresources,
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let root_sites = d.take_root_sites();
    let violations = apiserver_rules::check(&crd);
    if !violations.is_empty() {
        for v in &violations {
            report(d, m, ident, &root_sites, v);
        }
        return None;
    }
    Some(Found {
        module: m,
        ident: ident.clone(),
        attrs: k,
        crd,
    })
}

/// Reports a rule the API server enforces and `crd()`'s CRD breaks, at the field, variant or
/// type the schema node comes from (the spec type `ident` when it cannot be told).
fn report(
    d: &mut Deriver<'_, '_>,
    m: ModId,
    ident: &syn::Ident,
    root_sites: &[Member],
    v: &apiserver_rules::Violation,
) {
    use apiserver_rules::Location;
    let (module, span) = match &v.at {
        Location::Schema(path) => d.locate(root_sites, path),
        _ => None,
    }
    .unwrap_or((m, ident.span()));
    let msg = match (&v.at, &v.construct) {
        (Location::Schema(path), Some(c)) => format!(
            "the schema of `{ident}` has {c} at {path}: the API server rejects the CRD ({})",
            v.rule
        ),
        (Location::Schema(path), None) => format!(
            "the schema of `{ident}` at {path} breaks a rule of the API server, which rejects the CRD: {}",
            v.rule
        ),
        (Location::PrinterColumn(i), _) => format!(
            "#[kube(printcolumn)] number {} of `{ident}`: {}; the API server rejects the CRD",
            i + 1,
            v.rule
        ),
        (Location::SelectableField(i), _) => format!(
            "#[kube(selectable)] number {} of `{ident}`: {}; the API server rejects the CRD",
            i + 1,
            v.rule
        ),
        (Location::Scale, _) => format!(
            "#[kube(scale)] of `{ident}`: {}; the API server rejects the CRD",
            v.rule
        ),
        (Location::Version, _) => format!(
            "version {} of `{ident}`: {}; the API server rejects the CRD",
            v.version, v.rule
        ),
        (Location::Names, _) => format!(
            "#[kube(group, kind, plural)] of `{ident}`: {}; the API server rejects the CRD",
            v.rule
        ),
    };
    d.error(module, span, msg, v.help.clone());
}

/// Checks the names `crd()` would put into the CRD against the rules the API server applies to
/// a CustomResourceDefinition (`ValidateCustomResourceDefinition`): the group a DNS-1123
/// subdomain with at least one dot, the version a DNS-1035 label, the kind, plural, singular,
/// short names and categories DNS-1035 labels once lower-cased. Without `root`, the kind also
/// names the struct kube-derive generates, so it must be a Rust identifier. Returns the
/// message and the fix.
fn check_names(k: &KubeAttrs, singular: &str, plural: &str) -> Result<(), (String, String)> {
    use crate::model::validate::{dns1035_label, dns1123_subdomain};
    let bad = |what: &str, value: &str, why: String, fix: &str| {
        Err((
            format!(
                "#[kube({what} = {value:?})]: the {what} {why}; the API server rejects the CRD"
            ),
            fix.to_string(),
        ))
    };
    if let Err(why) = dns1123_subdomain(&k.group) {
        return bad(
            "group",
            &k.group,
            why,
            "use a lower-case domain you own, like `ai.example.com`",
        );
    }
    if !k.group.contains('.') {
        return bad(
            "group",
            &k.group,
            "must contain at least one dot".into(),
            "qualify it with your domain, like `ai.example.com`",
        );
    }
    if let Err(why) = dns1035_label(&k.version) {
        return bad(
            "version",
            &k.version,
            why,
            "use a version like v1, v1beta1 or v2alpha3",
        );
    }
    if let Err(why) = dns1035_label(&k.kind.to_lowercase()) {
        return bad(
            "kind",
            &k.kind,
            format!("lower-cased {why}"),
            "use a CamelCase kind of ASCII letters and digits, like `AIJob`",
        );
    }
    if k.root.is_none() && syn::parse_str::<syn::Ident>(&k.kind).is_err() {
        return Err((
            format!(
                "#[kube(kind = {:?})]: kube-derive names the generated struct after the kind, and this is not a Rust identifier",
                k.kind
            ),
            "use a CamelCase kind like `AIJob`, or name the struct with `root = \"...\"`".into(),
        ));
    }
    for (what, value) in [("singular", singular), ("plural", plural)] {
        if let Err(why) = dns1035_label(value) {
            return bad(
                what,
                value,
                why,
                "use lower-case letters, digits and '-', starting with a letter",
            );
        }
    }
    for (what, values) in [("shortname", &k.shortnames), ("category", &k.categories)] {
        for value in values {
            if let Err(why) = dns1035_label(value) {
                return bad(
                    what,
                    value,
                    why,
                    "use lower-case letters, digits and '-', starting with a letter",
                );
            }
        }
    }
    Ok(())
}

/// Merges the one-version CRDs of one kind (source order) as `merge_crds` does: the stored
/// version is `choice`'s when a `merge_crds` call, the metadata or a flag decided (the
/// versions then in the call's order), else the one version whose `storage` is left true.
/// Diagnostics go to the deriver; `None` when the versions cannot be merged.
pub fn merge_kind(
    d: &mut Deriver<'_, '_>,
    group: &str,
    kind: &str,
    mut versions: Vec<Found>,
    choice: Option<&StorageChoice>,
) -> Option<GeneratedCrd> {
    let dup = versions.iter().enumerate().find_map(|(i, a)| {
        versions[..i]
            .iter()
            .find(|b| b.attrs.version == a.attrs.version)
            .map(|b| (a, b))
    });
    if let Some((f, first)) = dup {
        let at = first.ident.span().start();
        let first_file = d.krate.modules[first.module]
            .file
            .path
            .display()
            .to_string();
        d.error(
            f.module,
            f.ident.span(),
            format!(
                "{kind}.{group} version {} is declared twice (also by `{}` at {first_file}:{}:{})",
                f.attrs.version,
                first.ident,
                at.line,
                at.column + 1
            ),
            Some("give each #[derive(CustomResource)] of one kind a distinct version".into()),
        );
        return None;
    }
    let file_name = |crd: &apiext::CustomResourceDefinition| {
        format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
    };
    if let Some(c) = choice
        && !versions.iter().any(|f| f.attrs.version == c.version)
    {
        let f = &versions[0];
        let have: Vec<&str> = versions.iter().map(|f| f.attrs.version.as_str()).collect();
        d.error(
            f.module,
            f.ident.span(),
            format!(
                "{} makes {} the storage version of {kind}.{group}, which has no such version ({})",
                c.source,
                c.version,
                have.join(", ")
            ),
            Some("name one of the kind's versions".into()),
        );
        return None;
    }
    if versions.len() == 1 {
        let f = versions.pop().expect("one version");
        return Some(GeneratedCrd {
            file_name: file_name(&f.crd),
            crd: f.crd,
        });
    }
    let stored_version = match choice {
        Some(c) => c.version.clone(),
        None => {
            let stored: Vec<&Found> = versions.iter().filter(|f| f.attrs.storage).collect();
            if stored.len() != 1 {
                let names: Vec<String> = versions
                    .iter()
                    .map(|f| format!("{} ({})", f.attrs.version, f.ident))
                    .collect();
                let f = stored.get(1).copied().unwrap_or(&versions[0]);
                let (msg, help) = if stored.is_empty() {
                    (
                        format!(
                            "no version of {kind}.{group} is the storage version ({})",
                            names.join(", ")
                        ),
                        "keep `storage` at its default (true) on exactly one version".to_string(),
                    )
                } else {
                    (
                        format!(
                            "{} versions of {kind}.{group} are marked as storage versions ({}); a CRD stores exactly one",
                            stored.len(),
                            stored
                                .iter()
                                .map(|f| f.attrs.version.clone())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        format!(
                            "add `storage = false` to #[kube(...)] on every version but the stored one, or name the stored one: `storage-versions = {{ \"{kind}.{group}\" = \"v1\" }}` under [package.metadata.rsbuilder] in Cargo.toml, or --storage-version {kind}.{group}=v1 (a merge_crds(…, \"v1\") call in the crate is followed by itself)"
                        ),
                    )
                };
                d.error(f.module, f.ident.span(), msg, Some(help));
                return None;
            }
            stored[0].attrs.version.clone()
        }
    };
    if let Some(order) = choice.and_then(|c| c.order.as_ref()) {
        // The call's list order; versions it does not list keep source order after them.
        versions.sort_by_key(|f| {
            order
                .iter()
                .position(|v| *v == f.attrs.version)
                .unwrap_or(usize::MAX)
        });
    }
    let stored = versions
        .iter()
        .find(|f| f.attrs.version == stored_version)
        .expect("the stored version is one of the versions");
    // kube's merge_crds keeps the storage version's names; a version declaring others would
    // address a resource the API server does not serve.
    let names_of = |f: &Found| {
        let n = &f.crd.spec.names;
        (
            n.plural.clone(),
            n.singular.clone(),
            n.short_names.clone(),
            n.categories.clone(),
        )
    };
    let stored_names = names_of(stored);
    if let Some(other) = versions.iter().find(|f| names_of(f) != stored_names) {
        let (p, s, sn, c) = names_of(other);
        let (sp, ss, ssn, sc) = stored_names;
        let show =
            |p: String, s: Option<String>, sn: Option<Vec<String>>, c: Option<Vec<String>>| {
                format!(
                    "plural {p:?}, singular {:?}, shortnames {:?}, categories {:?}",
                    s.unwrap_or_default(),
                    sn.unwrap_or_default(),
                    c.unwrap_or_default()
                )
            };
        d.error(
            other.module,
            other.ident.span(),
            format!(
                "version {} of {kind}.{group} has {} but the storage version {} has {}: the CRD keeps the storage version's names, so the {} type would address a resource the API server does not serve",
                other.attrs.version,
                show(p, s, sn, c),
                stored_version,
                show(sp, ss, ssn, sc),
                other.attrs.version
            ),
            Some("give every version of a kind the same plural, singular, shortname and category attributes".into()),
        );
        return None;
    }
    let (m, ident) = (versions[0].module, versions[0].ident.clone());
    let crds: Vec<_> = versions.into_iter().map(|f| f.crd).collect();
    match kube_core::crd::merge_crds(crds, &stored_version) {
        Ok(crd) => Some(GeneratedCrd {
            file_name: file_name(&crd),
            crd,
        }),
        Err(e) => {
            d.error(
                m,
                ident.span(),
                format!("the versions of {kind}.{group} cannot be merged into one CRD: {e}"),
                Some(
                    "every version of a kind must use the same group, kind and scope (namespaced)"
                        .into(),
                ),
            );
            None
        }
    }
}
