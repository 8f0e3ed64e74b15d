//! The conversion webhook of `create webhook --conversion`: the spoke versions converted to
//! the hub, the kind's hub/spoke functions, their registration, and the CRD patch and
//! replacements that turn conversion on.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

use super::names::Names;
use super::options::WebhookOptions;
use super::server::register;
use super::spec_sample;
use super::templates::{CrdConversionPatch, CrdConversionReplacements, KindConversion, Spoke};
use crate::model::layout::{self, KindLayout};
use crate::model::project::Project;
use crate::model::{Resource, gvk};
use crate::scaffold::{File, Plan, render};

/// The spoke versions of `--conversion`: each a valid version other than the hub, whose API
/// PROJECT lists for the same group and kind. Built-in types cannot be converted.
pub(super) fn spokes(
    project: &Project,
    hub: &Resource,
    opts: &WebhookOptions,
    specs: &BTreeMap<String, serde_json::Value>,
) -> Result<Vec<Spoke>> {
    if hub.builtin.is_some() {
        bail!(
            "--conversion: {} is a built-in Kubernetes type; only custom resources of this project have conversion webhooks",
            hub.kind
        );
    }
    let mut spokes: Vec<Spoke> = Vec::new();
    for version in &opts.spoke {
        gvk::validate_version(version).map_err(|mut e| {
            e.flag = "--spoke".into();
            e
        })?;
        if *version == hub.version {
            bail!(
                "--spoke {version}: the spoke versions must differ from the hub version --version {}",
                hub.version
            );
        }
        if spokes.iter().any(|s| s.version == *version) {
            continue;
        }
        let Some(entry) = project
            .find(&opts.group, version, &opts.kind)
            .filter(|e| e.api.is_some())
        else {
            bail!(
                "--spoke {version}: the API {}/{version} {} is not in PROJECT; create it first with `rsbuilder create api --group {} --version {version} --kind {}`",
                opts.group,
                opts.kind,
                opts.group,
                opts.kind
            );
        };
        let type_path = entry
            .path
            .clone()
            .filter(|p| p.starts_with("crate::"))
            .unwrap_or_else(|| {
                layout::type_path(
                    layout::group_of(project.multigroup, &hub.group),
                    version,
                    &hub.kind,
                )
            });
        let empty = serde_json::Value::Object(Default::default());
        let spec = specs.get(version).unwrap_or(&empty);
        // The scaffolded functions carry fields over by JSON name; when the minimal objects
        // of the two versions do not decode as each other, the round trip needs real code.
        let differs = specs.get(&hub.version).is_some_and(|hub_spec| {
            !spec_sample::carries_over(spec, hub_spec) || !spec_sample::carries_over(hub_spec, spec)
        });
        spokes.push(Spoke {
            version: version.clone(),
            ident: version.replace('-', "_"),
            api_version: format!("{}/{version}", hub.qualified_group()),
            type_path,
            spec: spec_sample::json_macro_text(spec),
            differs,
        });
    }
    Ok(spokes)
}

/// The conversion webhook: the project's `/convert` handler, the kind's hub/spoke functions,
/// the CRD patch that turns conversion on, and its Service and CA replacements.
pub(super) fn add_conversion(
    plan: &mut Plan,
    n: &Names,
    resource: &Resource,
    files: &KindLayout,
    spokes: &[Spoke],
    header: &str,
) -> Result<()> {
    plan.add(File::at(
        files.conversion(),
        format!("{header}{}", render(&KindConversion { n, spokes })?),
    ));
    plan.insert(
        &files.webhook_version_mod().path,
        "webhook-kinds",
        format!("pub mod {};", files.conversion_module()),
    );
    register(
        plan,
        format!(
            "conversion({}::{}::conversion())",
            n.crate_name,
            files.webhook_module_path(&files.conversion_module())
        ),
    );
    let crd_name = resource.crd_name();
    plan.add(File::at(
        files.conversion_patch(),
        render(&CrdConversionPatch {
            crd_name: &crd_name,
        })?,
    ));
    plan.insert(
        layout::CRD_KUSTOMIZATION,
        "crdkustomizewebhookpatch",
        files.conversion_patch_entry(),
    );
    plan.insert(
        layout::DEFAULT_KUSTOMIZATION,
        "default-replacements",
        render(&CrdConversionReplacements {
            crd_name: &crd_name,
        })?,
    );
    Ok(())
}
