//! The static CRD engine: from parsed Rust sources to the `CustomResourceDefinition` that
//! kube-derive's `CustomResourceExt::crd()` returns at runtime (kube 5, schemars 1.2.3,
//! k8s-openapi 0.29 with `v1_37`).
//!
//! The pipeline, one module per idea:
//! - [`resolve`]: the module tree of the sources and rustc-like path resolution
//!   (`use` items, `crate::`/`self::`/`super::`, re-exports, type aliases).
//! - `attrs`: the `#[kube]`, `#[x_kube]`, `#[serde]` and `#[schemars]` attributes, parsed the
//!   way kube-derive, serde and schemars_derive parse them.
//! - `known`: std, serde_json and k8s-openapi types, whose schemas are asked from schemars
//!   itself.
//! - `schema`: what `#[derive(JsonSchema)]` (and kube-derive's `KubeSchema`) would emit for the
//!   user's own types.
//! - `defaults`: static evaluation of `#[serde(default)]` values.
//! - `assemble`: the transforms `crd()` runs and the typed CRD object, multi-version merging.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::diag::Diagnostic;
use super::source::SourceSet;

pub mod assemble;
pub mod attrs;
pub mod defaults;
pub mod derive;
pub mod eval;
pub mod known;
pub mod kube_attrs;
pub mod resolve;

/// One CRD derived from the sources.
#[derive(Debug, Clone)]
pub struct GeneratedCrd {
    /// The CRD object, as kube-derive's `crd()` builds it (all versions of the kind merged).
    pub crd: CustomResourceDefinition,
    /// `<group>_<plural>.yaml`, the file name controller-gen and Kubebuilder use under
    /// `config/crd/bases/`.
    pub file_name: String,
}

/// Finds every `#[derive(CustomResource)]` in `sources` and builds its CRD.
///
/// Returns the CRDs sorted by file name, several versions of one (group, kind) merged into one
/// CRD with `kube::core::crd::merge_crds` semantics. On failure returns every diagnostic found
/// (file:line:column, reason, fix), never panics.
pub fn crds_from_sources(sources: &SourceSet) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
    let krate = resolve::Crate::build(sources);
    let mut deriver = derive::Deriver::new(&krate);
    let mut found: Vec<Found> = Vec::new();
    for (m, module) in krate.modules.iter().enumerate() {
        for item in module.type_order.iter().filter_map(|n| module.types.get(n)) {
            let (ident, attrs_) = match item {
                resolve::LocalItem::Struct(s) => (&s.ident, &s.attrs),
                resolve::LocalItem::Enum(e) => (&e.ident, &e.attrs),
                resolve::LocalItem::Alias(_) => continue,
            };
            if !attrs::derives(attrs_).iter().any(|d| d == "CustomResource") {
                continue;
            }
            if let Some(f) = assemble::one_version(&mut deriver, m, ident, attrs_) {
                found.push(f);
            }
        }
    }
    let crds = assemble::merge_versions(&mut deriver, found);
    let mut diags = std::mem::take(&mut deriver.diags);
    if !diags.is_empty() {
        diags.sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
        });
        diags.dedup();
        return Err(diags);
    }
    let mut crds = crds;
    crds.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(crds)
}

use assemble::Found;
