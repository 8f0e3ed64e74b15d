//! The probe's output read back: each kind's CRD, checked and refused at its spec type when
//! the API server would reject it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use std::collections::BTreeMap;

use super::{Request, at_kind, at_site};
use crate::manifests::diag::Diagnostic;

/// The CRD of one kind from the probe's output: its versions' `crd()` merged as `merge_crds`
/// does, with the storage version of the request's choice, else the one version `crd()`
/// marks stored.
pub(super) fn kind_from_output(
    req: &Request,
    output: &BTreeMap<String, Value>,
) -> Result<CustomResourceDefinition, Vec<Diagnostic>> {
    let mut crds: Vec<CustomResourceDefinition> = Vec::new();
    for v in &req.versions {
        let key = v.rust_path.join("::");
        let Some(value) = output.get(&key) else {
            return Err(vec![at_site(
                v,
                format!("the probe printed nothing for {key}"),
                None,
            )]);
        };
        if let Some(msg) = value.get("panic").and_then(Value::as_str) {
            return Err(vec![at_site(
                v,
                format!("{}: crd() panics on this type: {msg}", req.name),
                Some(
                    "see docs/attributes.md for the shapes kube-derive cannot turn into a CRD"
                        .into(),
                ),
            )]);
        }
        if let Some(errors) = value.get("compile_error").and_then(Value::as_str) {
            return Err(vec![at_site(
                v,
                format!(
                    "{}, and the probe cannot compile `{key}` (the other kinds were compiled without it):\n{errors}",
                    req.need()
                ),
                Some("a module the crate's features leave out, or a type the library does not export: see the error".into()),
            )]);
        }
        if let Some(msg) = value.get("error").and_then(Value::as_str) {
            return Err(vec![at_site(
                v,
                format!("{}: crd() cannot be serialized: {msg}", req.name),
                None,
            )]);
        }
        match serde_json::from_value::<CustomResourceDefinition>(value.clone()) {
            Ok(c) => {
                // A compiled kind meets the API server's rules too; without the deriver's
                // source map, the diagnostics point at the spec type.
                let broken = crate::manifests::crd::apiserver_rules::check(&c);
                if !broken.is_empty() {
                    return Err(broken
                        .iter()
                        .map(|b| {
                            at_site(
                                v,
                                format!(
                                    "{}: the compiled crd() of {key} gives a CRD the API server rejects: {b}",
                                    req.name
                                ),
                                b.help.clone(),
                            )
                        })
                        .collect());
                }
                crds.push(c)
            }
            Err(e) => {
                return Err(vec![at_site(
                    v,
                    format!("the probe's crd() of {key} is not a CRD: {e}"),
                    None,
                )]);
            }
        }
    }
    if crds.len() == 1 && req.storage.is_none() {
        return Ok(crds.pop().expect("one"));
    }
    let version_of = |c: &CustomResourceDefinition| {
        c.spec
            .versions
            .first()
            .map(|v| v.name.clone())
            .unwrap_or_default()
    };
    let stored = match &req.storage {
        Some(c) => c.version.clone(),
        None => {
            let stored: Vec<String> = crds
                .iter()
                .filter(|c| c.spec.versions.first().is_some_and(|v| v.storage))
                .map(version_of)
                .collect();
            if stored.len() != 1 {
                return Err(vec![at_kind(
                    req,
                    format!(
                        "{} versions of {} are marked as storage versions ({}); a CRD stores exactly one",
                        stored.len(),
                        req.name,
                        stored.join(", ")
                    ),
                    Some(format!(
                        "add `storage = false` to #[kube(...)] on every version but the stored one, or name it: `storage-versions = {{ \"{}\" = \"v1\" }}` under [package.metadata.rsbuilder]",
                        req.name
                    )),
                )]);
            }
            stored[0].clone()
        }
    };
    if let Some(order) = req.storage.as_ref().and_then(|c| c.order.as_ref()) {
        crds.sort_by_key(|c| {
            order
                .iter()
                .position(|v| *v == version_of(c))
                .unwrap_or(usize::MAX)
        });
    }
    kube_core::crd::merge_crds(crds, &stored).map_err(|e| {
        vec![at_kind(
            req,
            format!(
                "the versions of {} cannot be merged into one CRD: {e}",
                req.name
            ),
            None,
        )]
    })
}
