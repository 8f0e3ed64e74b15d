//! The checks `create api` makes before it plans anything: which resource the flags name
//! (a new kind, a kind of PROJECT or a built-in type), and that its CRD name, group and file
//! names are free.

use anyhow::{Result, bail};

use super::ApiOptions;
use crate::model::layout::{self, KindLayout};
use crate::model::{NameError, Project, Resource};

/// Decides which resource `opts` names, reading PROJECT for the domain and existing kinds.
///
/// Errors: invalid names (flag, value, rule); `--resource` on a built-in Kubernetes type;
/// `--resource=false` on a kind that is neither built in nor in PROJECT; a GVK already
/// scaffolded (unless `--force`); nothing to do.
pub(super) fn resolve_resource(
    project: &Project,
    opts: &ApiOptions,
) -> Result<(Resource, Option<usize>)> {
    if !opts.resource && !opts.controller {
        bail!("nothing to scaffold: --resource=false and --controller=false");
    }
    let existing = project
        .resources
        .iter()
        .position(|r| r.group == opts.group && r.version == opts.version && r.kind == opts.kind);
    let entry = existing.map(|i| &project.resources[i]);
    let gvk = format!("{}/{} {}", opts.group, opts.version, opts.kind);
    if let Some(served) = project.resources.iter().find(|r| {
        crate::model::project::is_served(r) && r.group == opts.group && r.version == opts.version
    }) {
        bail!(
            "{}/{} is served by the project's aggregated API server (the kind {}, rsbuilder create apiserver): a CRD in that group-version would clash with its APIService; choose another group or version",
            opts.group,
            opts.version,
            served.kind
        );
    }

    let resource = if let Some(e) = entry.filter(|e| e.api.is_some()) {
        // A kind this project already defines: its names come from PROJECT, so a controller
        // added later (or files re-rendered with --force) match the recorded API.
        let domain = e.domain.clone().unwrap_or_else(|| project.domain.clone());
        let namespaced = e.api.as_ref().is_some_and(|a| a.namespaced);
        Resource::custom(
            &e.group,
            &domain,
            &e.version,
            &e.kind,
            e.plural.as_deref(),
            namespaced,
        )?
    } else if opts.resource {
        // As in Kubebuilder, a group named like a built-in one (`batch`, `apps`) is the
        // project's own group under its domain when a resource is created; the built-in type
        // is meant only with --resource=false (see `builtin_namesake`).
        if entry.is_some_and(|e| e.core) {
            bail!("{gvk} is recorded in PROJECT as a built-in type; --resource cannot apply to it");
        }
        // Another version of the kind: every version of a CRD has the same plural, so a new
        // version takes the recorded one (and a different --plural is refused).
        let sibling = project
            .resources
            .iter()
            .find(|r| r.group == opts.group && r.kind == opts.kind && r.api.is_some());
        let plural = match (sibling, opts.plural.as_deref()) {
            (Some(s), Some(p)) => {
                let recorded = s.plural_or_default();
                if p != recorded {
                    return Err(NameError {
                        flag: "--plural".into(),
                        value: p.into(),
                        reason: format!(
                            "version {} of {} has the plural {recorded:?}, and all versions of a CRD share one; drop --plural",
                            s.version, s.kind
                        ),
                    }
                    .into());
                }
                Some(recorded)
            }
            (Some(s), None) => s.plural.clone(),
            (None, p) => p.map(str::to_owned),
        };
        Resource::custom(
            &opts.group,
            &project.domain,
            &opts.version,
            &opts.kind,
            plural.as_deref(),
            opts.namespaced,
        )?
    } else {
        match Resource::builtin(&opts.group, &opts.version, &opts.kind)? {
            Some(r) => r,
            None => bail!(
                "--resource=false needs an existing type, but {gvk} is neither a kind of this \
                 project (PROJECT has no API for it) nor a built-in Kubernetes type (groups \
                 core, apps, batch, networking, ...). Create the API first: \
                 rsbuilder create api --group {} --version {} --kind {}",
                opts.group,
                opts.version,
                opts.kind
            ),
        }
    };
    if let (Some(e), Some(plural)) = (entry.filter(|e| e.api.is_some()), opts.plural.as_deref())
        && plural != resource.plural
    {
        return Err(NameError {
            flag: "--plural".into(),
            value: plural.into(),
            reason: format!(
                "{gvk} exists with the plural {:?} (PROJECT{}), and --force re-renders its files with the names PROJECT records; drop --plural, or rename by hand: `plural` in PROJECT, #[kube(plural = ...)] in the types file, the resources of its RBAC markers and roles, then run `rsbuilder manifests`",
                resource.plural,
                if e.plural.is_some() { "" } else { ": the default" }
            ),
        }
        .into());
    }
    if resource.builtin.is_some() && opts.plural.is_some() {
        return Err(NameError {
            flag: "--plural".into(),
            value: opts.plural.clone().unwrap_or_default(),
            reason: format!(
                "{gvk} is a built-in type whose plural comes from k8s-openapi ({}); drop --plural",
                resource.plural
            ),
        }
        .into());
    }
    if resource.builtin.is_none() {
        crate::model::reserved::check_kind(&resource.kind)?;
    }
    Ok((resource, existing))
}

/// Refuses a new custom kind whose CRD, `<plural>.<group>`, another kind of PROJECT already
/// makes (`--plural bars` on `Foo` next to a kind `Bar`; a kind differing only in case in
/// another version): the API server keeps one CRD per name, and `manifests` refuses such
/// sources. Errors name the flag (`--plural` when given, else `--kind`) and the other kind.
pub(super) fn check_crd_name_free(
    project: &Project,
    opts: &ApiOptions,
    resource: &Resource,
) -> Result<()> {
    if !opts.resource || resource.builtin.is_some() {
        return Ok(());
    }
    for r in &project.resources {
        if r.group != opts.group || r.kind == opts.kind || r.api.is_none() {
            continue;
        }
        let plural = r.plural_or_default();
        if plural != resource.plural {
            continue;
        }
        let (flag, value) = match &opts.plural {
            Some(p) => ("--plural", p.clone()),
            None => ("--kind", opts.kind.clone()),
        };
        return Err(NameError {
            flag: flag.into(),
            value,
            reason: format!(
                "the kind {} of this group already has the plural {plural:?}, and a CRD is named <plural>.<group>: the API server keeps one per name; choose another {}",
                r.kind,
                if flag == "--plural" { "plural" } else { "kind name, or pass --plural" }
            ),
        }
        .into());
    }
    Ok(())
}

/// Refuses a new API of a second group in a single-group project, as Kubebuilder does, with the
/// command that switches the project to the multigroup layout; in a multigroup project,
/// refuses a group that cannot be a Rust module ([`layout::check_group_module`]) or whose
/// module another group of PROJECT already has (`data-store` and `data.store`). Built-in
/// types' controllers (`--resource=false`) have no API, so any group is allowed for them.
pub(super) fn check_group_allowed(
    project: &Project,
    opts: &ApiOptions,
    resource: &Resource,
) -> Result<()> {
    if project.multigroup {
        layout::check_group_module(&opts.group)?;
        if let Some(other) = project.resources.iter().find(|r| {
            r.group != opts.group
                && layout::group_module(&r.group) == layout::group_module(&opts.group)
        }) {
            return Err(NameError::new(
                "--group",
                &opts.group,
                format!(
                    "the group {} of PROJECT has the same module, src/api/{}/; choose another group",
                    other.group,
                    layout::group_module(&opts.group)
                ),
            )
            .into());
        }
        return Ok(());
    }
    if !opts.resource || resource.builtin.is_some() {
        return Ok(());
    }
    let other = project
        .resources
        .iter()
        .find(|r| r.api.is_some() && r.group != opts.group && !crate::model::project::is_served(r));
    if let Some(other) = other {
        return Err(NameError::new(
            "--group",
            &opts.group,
            format!(
                "this project's APIs are in the group {} and it has the single-group layout (src/api/<version>/), which holds one group, as in Kubebuilder; switch it to the multigroup layout (src/api/<group>/<version>/), which moves the existing files, then run this command again:\n  rsbuilder edit --multigroup=true",
                other.group
            ),
        )
        .into());
    }
    Ok(())
}

/// Refuses a kind whose files another resource of PROJECT, in another group, already owns:
/// files are named by version and lower-case kind (`src/api/v1/site_types.rs`,
/// `src/controller/site_controller.rs`), as in a single-group Kubebuilder project, so the same
/// kind in two groups (or two kinds differing only in case) would share them, and `--force`
/// would overwrite the other kind's code. Errors name `--kind`, the other group and the files.
pub(super) fn check_file_names_free(
    project: &Project,
    opts: &ApiOptions,
    files: &KindLayout,
) -> Result<()> {
    for r in &project.resources {
        if (r.group == opts.group && r.kind == opts.kind)
            || r.kind.to_lowercase() != files.module
            // In a multigroup project each group has directories of its own.
            || (project.multigroup && r.group != opts.group)
        {
            continue;
        }
        let mut shared = Vec::new();
        if opts.resource && r.api.is_some() && r.version == opts.version {
            shared.push(files.types().path.display().to_string());
        }
        if opts.controller && r.controller {
            shared.push(files.controller().path.display().to_string());
        }
        if shared.is_empty() {
            continue;
        }
        let reason = if r.group == opts.group || r.kind != opts.kind {
            format!(
                "the kind {} of group {} already owns {}: rsbuilder names these files by version and lower-case kind, so two kinds cannot differ only in case; choose another kind name",
                r.kind,
                r.group,
                shared.join(" and "),
            )
        } else {
            format!(
                "the kind {} of group {} already owns {}: rsbuilder names these files by version and kind, so one project cannot hold the same kind in two groups; choose another kind name (such as {}{}), or scaffold the other group in a project of its own",
                r.kind,
                r.group,
                shared.join(" and "),
                heck::AsUpperCamelCase(&opts.group),
                opts.kind
            )
        };
        return Err(NameError {
            flag: "--kind".into(),
            value: opts.kind.clone(),
            reason,
        }
        .into());
    }
    Ok(())
}

/// Refuses a kind whose Rust type names collide with another kind's in the same version
/// module: a kind `K` defines `K`, `KSpec` and `KStatus`, and the version module re-exports
/// every kind's types with `pub use <kind>_types::*`, so `FooSpec` next to `Foo` makes both
/// `FooSpec` types ambiguous (rustc's E0659) and the project stops building. Only kinds with
/// types (not built-in or external ones) of the same version count; in a multigroup project,
/// of the same group. Errors name `--kind` and the other kind.
pub(super) fn check_type_names_free(project: &Project, opts: &ApiOptions) -> Result<()> {
    if !opts.resource {
        return Ok(());
    }
    let names = |kind: &str| {
        [
            kind.to_string(),
            format!("{kind}Spec"),
            format!("{kind}Status"),
        ]
    };
    let ours = names(&opts.kind);
    for r in &project.resources {
        let same_module =
            r.version == opts.version && (!project.multigroup || r.group == opts.group);
        if !same_module || r.api.is_none() || r.external || r.kind == opts.kind {
            continue;
        }
        if let Some(clash) = names(&r.kind).iter().find(|n| ours.contains(n)) {
            return Err(NameError {
                flag: "--kind".into(),
                value: opts.kind.clone(),
                reason: format!(
                    "the kind {} of version {} already defines the type {clash}, and the version module re-exports both kinds' types (`pub use ..._types::*`), so the name would be ambiguous; choose a kind name that neither ends in Spec or Status of another kind nor is one",
                    r.kind, r.version
                ),
            }
            .into());
        }
    }
    Ok(())
}
