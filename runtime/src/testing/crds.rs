// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The project's CRDs as the test cluster serves them: read from `config/crd/bases` (what
//! `rsbuilder manifests` writes, what `make install` applies), every served version through
//! [`ApiKind::from_crd`], with its status and scale subresources.

use std::path::Path;

use anyhow::{Context as _, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use crate::apiserver::kind::ApiKind;

/// The CRDs in the YAML files (`.yaml`, `.yml`) of `dir`, in file-name order; a file may
/// hold several documents, and documents of another kind are skipped. Errors: the directory
/// cannot be read, or a file is not YAML or holds a CRD that does not decode (file named).
pub fn read_dir(dir: &Path) -> anyhow::Result<Vec<CustomResourceDefinition>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the CRDs in {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    let mut crds = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .map_err(|e| anyhow::anyhow!("{}: not YAML: {e}", file.display()))?;
        for doc in docs {
            if doc.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                continue;
            }
            let crd: CustomResourceDefinition = serde_json::from_value(doc)
                .with_context(|| format!("{}: not a CustomResourceDefinition", file.display()))?;
            crds.push(crd);
        }
    }
    Ok(crds)
}

/// The kinds a CRD serves: one [`ApiKind`] per version with `served: true`. Errors: a CRD
/// with no served version, or no storage version.
pub fn kinds(crd: &CustomResourceDefinition) -> anyhow::Result<Vec<ApiKind>> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    if !crd.spec.versions.iter().any(|v| v.storage) {
        bail!("CRD {name} has no storage version");
    }
    let kinds: Vec<ApiKind> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| ApiKind::from_crd(crd, &v.name).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<_>>()?;
    if kinds.is_empty() {
        bail!("CRD {name} serves no version");
    }
    Ok(kinds)
}

/// The storage version of `crd` (the one with `storage: true`).
pub fn storage_version(crd: &CustomResourceDefinition) -> Option<&str> {
    crd.spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.as_str())
}
