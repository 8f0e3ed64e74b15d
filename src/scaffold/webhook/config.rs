//! The kustomize configuration that deploys the webhooks: `config/webhook`,
//! `config/certmanager` (the serving certificate), the `config/default` patches and
//! replacements, and the network policy for webhook traffic.

use anyhow::Result;

use super::templates::{CertificateYaml, IssuerYaml, NetworkPolicyYaml, ServiceYaml};
use crate::model::layout;
use crate::model::project::Project;
use crate::scaffold::{File, Plan, render};

/// `config/webhook`, `config/certmanager`, the `config/default` patches and replacements, and
/// the network policy for webhook traffic.
pub(super) fn add_config(plan: &mut Plan, project: &Project) -> Result<()> {
    let p = project.project_name.as_str();
    let fixed: &[(&str, &str)] = &[
        (
            "config/webhook/kustomization.yaml",
            include_str!("../../../templates/webhook/config/webhook_kustomization.yaml"),
        ),
        (
            "config/webhook/kustomizeconfig.yaml",
            include_str!("../../../templates/webhook/config/webhook_kustomizeconfig.yaml"),
        ),
        (
            layout::WEBHOOK_MANIFESTS,
            include_str!("../../../templates/webhook/config/manifests_placeholder.yaml"),
        ),
        (
            "config/certmanager/kustomization.yaml",
            include_str!("../../../templates/webhook/config/certmanager_kustomization.yaml"),
        ),
        (
            "config/certmanager/kustomizeconfig.yaml",
            include_str!("../../../templates/webhook/config/certmanager_kustomizeconfig.yaml"),
        ),
        (
            "config/default/manager_webhook_patch.yaml",
            include_str!("../../../templates/webhook/config/manager_webhook_patch.yaml"),
        ),
    ];
    for (path, text) in fixed {
        plan.add(File::at(layout::shared(path), *text));
    }
    for (path, text) in [
        (
            "config/webhook/service.yaml",
            render(&ServiceYaml { project_name: p })?,
        ),
        (
            "config/certmanager/issuer.yaml",
            render(&IssuerYaml { project_name: p })?,
        ),
        (
            "config/certmanager/certificate.yaml",
            render(&CertificateYaml { project_name: p })?,
        ),
        (
            "config/network-policy/allow-webhook-traffic.yaml",
            render(&NetworkPolicyYaml { project_name: p })?,
        ),
    ] {
        plan.add(File::at(layout::shared(path), text));
    }
    plan.insert(
        layout::NETWORK_POLICY_KUSTOMIZATION,
        "network-policy-resources",
        "- allow-webhook-traffic.yaml",
    );
    let default = layout::DEFAULT_KUSTOMIZATION;
    plan.insert(default, "default-resources", "- ../webhook");
    plan.insert(default, "default-resources", "- ../certmanager");
    plan.insert(
        default,
        "default-patches",
        "- path: manager_webhook_patch.yaml",
    );
    let block = include_str!("../../../templates/webhook/config/default_replacements.yaml");
    // After `create apiserver`, config/default already has a `replacements:` list: the
    // webhook's entries join it (its comment lines stay above them).
    let items: String = block
        .lines()
        .filter(|l| l.trim_end() != "replacements:")
        .map(|l| format!("{l}\n"))
        .collect();
    let text = plan.read(default)?.unwrap_or_default();
    if !text.contains("name: webhook-service") {
        plan.insert(
            default,
            "default-sections",
            crate::scaffold::default_replacements_fragment(&text, block, &items)?,
        );
    }
    Ok(())
}
