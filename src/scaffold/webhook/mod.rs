//! `rsbuilder create webhook`: defaulting and validating admission webhooks (and conversion)
//! for a kind, the HTTPS webhook server of the generated manager, and the kustomize
//! configuration that deploys them with cert-manager.
//!
//! Mirrors Kubebuilder's `create webhook`: the kind's API must exist in PROJECT (unless it is
//! a built-in Kubernetes type), the webhook file is `src/webhook/<version>/<kind>_webhook.rs`,
//! the paths are `/mutate-<group-dashed>-<version>-<kind>` and `/validate-…`, the webhook
//! names `m<kind>-<version>.kb.io` / `v<kind>-<version>.kb.io`, and PROJECT records the
//! webhooks. Where it differs: each webhook type is a section of the kind's file inserted
//! before scaffold markers, so adding a second type later keeps the code already there.
//!
//! This module resolves the kind, checks what exists, and builds the plan ([`plan`]) from its
//! parts, one file each: the flags (`options`), the template names (`names`), the template
//! structs (`templates`), the manager's webhook server (`server`), the kind's webhook files
//! (`kind`), the conversion webhook (`conversion`), the kustomize configuration (`config`),
//! and what the generated tests may assume about the spec ([`spec_sample`]).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use crate::model::layout::{self, KindLayout};
use crate::model::project::{Project, ProjectResource, ResourceWebhooks};
use crate::model::{Resource, gvk};
use crate::scaffold::{File, Plan};

mod config;
mod conversion;
mod kind;
mod names;
mod options;
mod server;
pub mod spec_sample;
mod templates;

use config::add_config;
use conversion::{add_conversion, spokes};
use kind::{add_kind, add_version_mod};
pub use names::{Names, names};
pub use options::{WebhookOptions, check_flags};
use server::add_server;

/// Resolves the kind: a built-in Kubernetes type, or an API of this project that PROJECT
/// lists. Returns the resource and the index of its PROJECT entry (if any).
fn resolve_resource(project: &Project, opts: &WebhookOptions) -> Result<(Resource, Option<usize>)> {
    gvk::validate_kind(&opts.kind)?;
    gvk::validate_version(&opts.version)?;
    let index = project
        .resources
        .iter()
        .position(|r| r.group == opts.group && r.version == opts.version && r.kind == opts.kind);
    // A kind PROJECT lists with an API is the project's own, also in a group named like a
    // built-in one (`batch` CronJob of the Kubebuilder tutorial), as `create api` made it.
    let own = index.filter(|&i| project.resources[i].api.is_some());
    if own.is_none()
        && let Some(builtin) = Resource::builtin(&opts.group, &opts.version, &opts.kind)?
    {
        return Ok((builtin, index));
    }
    if index.is_some_and(|i| crate::model::project::is_served(&project.resources[i])) {
        bail!(
            "{}/{} {} is served by this project's aggregated API server (`rsbuilder create apiserver`, PROJECT's `{}` field), not installed as a CRD: `create webhook` scaffolds admission and conversion webhooks for CRD kinds only. A served kind's admission lives in the API server (src/bin/apiserver.rs), which checks every {} write against the schema of its types in src/apiserver/{}/ (docs/apiserver.md)",
            opts.group,
            opts.version,
            opts.kind,
            crate::model::project::API_SERVER_FIELD,
            opts.kind,
            opts.version
        );
    }
    if index.is_some_and(|i| project.resources[i].external) {
        bail!(
            "{}/{} {} is an external kind (another project defines it, `create api --external-api-crd` / `--external-api-path`): rsbuilder does not scaffold webhooks for external kinds yet; the project that installs its CRD serves its webhooks",
            opts.group,
            opts.version,
            opts.kind
        );
    }
    let Some(i) = own else {
        bail!(
            "the API {}/{} {} is not in PROJECT; create it first with `rsbuilder create api --group {} --version {} --kind {}` (webhooks need the kind's type)",
            opts.group,
            opts.version,
            opts.kind,
            opts.group,
            opts.version,
            opts.kind
        );
    };
    let entry = &project.resources[i];
    let domain = entry
        .domain
        .clone()
        .unwrap_or_else(|| project.domain.clone());
    let namespaced = entry.api.as_ref().is_some_and(|a| a.namespaced);
    let resource = Resource::custom(
        &opts.group,
        &domain,
        &opts.version,
        &opts.kind,
        entry.plural.as_deref(),
        namespaced,
    )?;
    Ok((resource, Some(i)))
}

/// Builds the plan of `create webhook` in the project at `dir`: every file it creates or
/// changes, checked but not written. Errors (nothing written): no PROJECT, invalid names, an
/// API that PROJECT does not list, a webhook type that already exists for the kind without
/// `--force`, spoke versions that are not APIs of the kind.
pub fn plan(dir: &Path, opts: &WebhookOptions) -> Result<Plan> {
    Ok(plan_with_notes(dir, opts)?.0)
}

/// [`plan`], with the notes to print: when the kind's spec cannot be derived from the
/// sources, the generated tests build objects with an empty `spec` and may need a valid one.
pub fn plan_with_notes(dir: &Path, opts: &WebhookOptions) -> Result<(Plan, Vec<String>)> {
    let mut plan = Plan::new(dir, opts.force);
    let mut project = super::load_project_or_explain(&plan, dir)?;
    let (resource, index) = resolve_resource(&project, opts)?;
    if resource.builtin.is_none() {
        crate::model::reserved::check_kind(&resource.kind)?;
    }
    let existing = index
        .and_then(|i| project.resources[i].webhooks.clone())
        .unwrap_or_default();
    if project.multigroup {
        crate::model::layout::check_group_module(&opts.group)?;
    }
    let files = KindLayout::of(&resource, project.multigroup);
    let file = files.webhook().path;
    if !opts.force {
        for (asked, have, what) in [
            (opts.defaulting, existing.defaulting, "defaulting"),
            (opts.validation, existing.validation, "validating"),
            (opts.conversion, existing.conversion, "conversion"),
        ] {
            if asked && have {
                bail!(
                    "the {what} webhook for {}/{} {} already exists (PROJECT, {}); re-run with --force to scaffold {} again",
                    opts.group,
                    opts.version,
                    opts.kind,
                    file.display(),
                    file.display()
                );
            }
        }
    }
    let mut names = names(
        &project,
        &resource,
        index.map(|i| &project.resources[i]),
        opts,
    );
    let mut notes = Vec::new();
    let specs = if resource.builtin.is_none() {
        spec_facts(&plan, &files, &resource, &mut names, &mut notes)?
    } else {
        BTreeMap::new()
    };
    // With --force the kind's file is written again from the templates, with every webhook
    // type the kind has (recorded ones and new ones).
    let defaulting = opts.defaulting || (opts.force && existing.defaulting);
    let validation = opts.validation || (opts.force && existing.validation);

    let header = crate::scaffold::api::rust_header(&plan)?;
    add_server(&mut plan, &header)?;
    add_version_mod(&mut plan, &names, &files, &header)?;
    if defaulting || validation {
        add_kind(
            &mut plan,
            &names,
            &files,
            (defaulting, validation),
            opts.force,
            &header,
        )?;
    }
    add_config(&mut plan, &project)?;
    if opts.conversion {
        let spokes = spokes(&project, &resource, opts, &specs)?;

        for s in spokes.iter().filter(|s| s.differs) {
            notes.push(format!(
                "the required fields of {} {} and {} differ: the round-trip test in {} is ignored until the Convert of {} converts them (then remove its #[ignore])",
                resource.kind, s.version, resource.version, files.conversion().path.display(), s.version
            ));
        }
        add_conversion(&mut plan, &names, &resource, &files, &spokes, &header)?;
    }

    // PROJECT: record the webhooks.
    let webhooks = ResourceWebhooks {
        defaulting: existing.defaulting || opts.defaulting,
        defaulting_path: if opts.defaulting {
            opts.defaulting_path.clone()
        } else {
            existing.defaulting_path.clone()
        },
        validation: existing.validation || opts.validation,
        validation_path: if opts.validation {
            opts.validation_path.clone()
        } else {
            existing.validation_path.clone()
        },
        conversion: existing.conversion || opts.conversion,
        spoke: if opts.conversion {
            opts.spoke.clone()
        } else {
            existing.spoke.clone()
        },
        webhook_version: Some("v1".into()),
    };
    match index {
        Some(i) => project.resources[i].webhooks = Some(webhooks),
        None => {
            let b = resource
                .builtin
                .as_ref()
                .expect("only built-in types may lack a PROJECT entry");
            project.resources.push(ProjectResource {
                core: true,
                group: opts.group.clone(),
                kind: opts.kind.clone(),
                path: Some(b.rust_path.to_string()),
                version: opts.version.clone(),
                webhooks: Some(webhooks),
                ..Default::default()
            });
        }
    }
    plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    Ok((plan, notes))
}

/// Reads what the generated code may assume about the spec of a custom kind: whether its
/// types file (`src/api/<version>/<kind>_types.rs`) still has the example field `foo`, and
/// the minimal spec of each version of the kind, derived from `src/` as `rsbuilder
/// manifests` derives the CRD. Sets [`Names::example_foo`] and [`Names::spec`]; returns the
/// minimal specs by version (empty, with a note pushed, when the CRD cannot be derived).
fn spec_facts(
    plan: &Plan,
    files: &KindLayout,
    resource: &Resource,
    names: &mut Names,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, serde_json::Value>> {
    let types = files.types().path;
    names.example_foo = plan
        .read(&types)?
        .is_some_and(|text| spec_sample::has_example_foo(&text, &resource.kind));
    let specs = plan
        .read_tree(layout::SRC_DIR, "rs")
        .map_err(|e| e.to_string())
        .and_then(|sources| {
            spec_sample::minimal_specs(
                plan.root(),
                sources,
                &resource.qualified_group(),
                &resource.kind,
            )
        });
    Ok(match specs {
        Ok(specs) => {
            if let Some(spec) = specs.get(&resource.version) {
                names.spec = spec.clone();
            }
            specs
        }
        Err(e) => {
            notes.push(format!(
                "the CRD of {} could not be derived from src/ ({e}); the generated tests build objects with `\"spec\": {{}}` and may need a valid spec",
                resource.kind
            ));
            BTreeMap::new()
        }
    })
}

/// Plans and applies `create webhook` in `dir` (see [`plan_with_notes`]); returns what
/// happened to each file and the notes to print. Nothing is written when an error is
/// returned.
pub fn run(
    dir: &Path,
    opts: &WebhookOptions,
) -> Result<(Vec<crate::scaffold::Resolved>, Vec<String>)> {
    let (plan, notes) = plan_with_notes(dir, opts)?;
    Ok((plan.apply()?, notes))
}

/// What to do after `create webhook`, printed by the CLI.
pub fn next_steps(opts: &WebhookOptions, multigroup: bool) -> String {
    let group = layout::group_of(multigroup, &opts.group);
    let mut out = String::from("\nNext:\n");
    if opts.defaulting || opts.validation {
        out.push_str(&format!(
            "  edit {}, then run `rsbuilder manifests` to write {}/{};\n",
            layout::webhook_file(group, &opts.version, &opts.kind).display(),
            layout::CONFIG_DIR,
            layout::generated::WEBHOOK_MANIFESTS,
        ));
    }
    if opts.conversion {
        out.push_str(&format!(
            "  edit the hub/spoke functions in {};\n",
            layout::conversion_file(group, &opts.version, &opts.kind).display()
        ));
    }
    out.push_str("  deploying needs cert-manager in the cluster (config/certmanager issues the serving certificate).\n");
    out
}
