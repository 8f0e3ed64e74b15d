//! `rsbuilder create api`: the files a new API (CRD types) and its controller add to a project,
//! and the edits to files `init` and earlier commands wrote.
//!
//! Mirrors Kubebuilder's `create api` (go/v4 plugin) on a kube-rs layout:
//!
//! - with `--resource`: `src/api/<version>/<kind>_types.rs` (a `#[derive(CustomResource)]` spec
//!   and its status), module wiring in `src/api/`, a sample in `config/samples/`, the CRD base
//!   entry in `config/crd/kustomization.yaml`, admin/editor/viewer roles in `config/rbac/`, and
//!   the PROJECT entry;
//! - with `--controller`: `src/controller/<kind>_controller.rs` (the kind's implementation of
//!   the runtime's `Reconciler`: RBAC markers, `apply`, `cleanup`, watches; the finalizer,
//!   retries, events and status machinery are `rsbuilder_runtime::controller`'s), for a kind of
//!   the project with a test that runs it on the runtime's test cluster (and the
//!   dev-dependencies the test needs in `Cargo.toml`), and its start in `src/main.rs`;
//! - `--resource=false` on a built-in type (`core/v1 Pod`, `apps/v1 Deployment`, any type
//!   k8s-openapi knows) or on a kind already in PROJECT: only the controller.
//!
//! Everything is planned first and applied all-or-nothing by [`Plan`]; a failed command writes
//! nothing.

use std::path::Path;

use anyhow::{Result, bail};
use askama::Template;

use crate::model::layout::{self, KindLayout};
use crate::model::project::{ProjectResource, ResourceApi};
use crate::model::{Project, Resource};
use crate::scaffold::{File, Plan, Resolved, ScaffoldError, render};

use checks::{
    check_crd_name_free, check_file_names_free, check_group_allowed, check_type_names_free,
    resolve_resource,
};

mod checks;
pub mod deploy_image;
pub mod external;
pub mod named;

/// What `create api` was asked to do (the command-line flags, without clap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiOptions {
    /// `--group`: short group (`ai`), or a built-in group (`core`, `apps`) with
    /// `resource == false`.
    pub group: String,
    /// `--version` (`v1`).
    pub version: String,
    /// `--kind` (`AIJob`).
    pub kind: String,
    /// `--resource`: scaffold the CRD types.
    pub resource: bool,
    /// `--controller`: scaffold the controller.
    pub controller: bool,
    /// `--namespaced`: namespaced (`true`) or cluster-scoped kind; new custom kinds only.
    pub namespaced: bool,
    /// `--plural`: the plural, when kube-derive's rule gets it wrong; new custom kinds only.
    pub plural: Option<String>,
    /// `--force`: re-render the kind's types, controller and sample files over existing ones.
    pub force: bool,
    /// `--controller-name`: a further, named controller for a kind that PROJECT already
    /// records or a built-in type (see [`named`]); `None` for the kind's own controller.
    pub controller_name: Option<String>,
    /// `--image` and its options: a controller that runs this image as an owned Deployment
    /// (see [`deploy_image`]); `None` for the usual skeleton.
    pub image: Option<deploy_image::DeployImage>,
}

impl ApiOptions {
    /// The flags that recreate PROJECT entry `r` (`alpha generate`): its GVK, `--resource`
    /// when it records an API, `--controller` as recorded, its scope (namespaced when
    /// unrecorded, as the flag's default) and its plural; never `--force`.
    pub fn from_project_resource(r: &ProjectResource) -> Self {
        Self {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            resource: r.api.is_some(),
            controller: r.controller,
            namespaced: r.api.as_ref().is_none_or(|a| a.namespaced),
            plural: r.plural.clone(),
            force: false,
            controller_name: None,
            image: None,
        }
    }
}

/// Names the templates use, computed once from the resource and the project.
#[derive(Debug, Clone)]
struct Names {
    kind: String,
    /// Lower-case kind: file and module stem (`aijob`).
    module: String,
    /// The API group as the API server knows it (`ai.ai.example.com`, `""` for core).
    group: String,
    /// The group in RBAC markers (`core` for the core group).
    rbac_group: String,
    version: String,
    api_version: String,
    plural: String,
    plural_overridden: bool,
    namespaced: bool,
    crd_file: String,
    project_name: String,
    controller_name: String,
    /// The controller's type (`AIJobReconciler`; for a named controller, the name in
    /// UpperCamelCase: `AijobBackupReconciler`).
    reconciler: String,
    /// The finalizer of a controller of the project's own kind (`ai.ai.example.com/finalizer`;
    /// `<group>/<controller name>` for a named controller, so two never share one).
    finalizer: String,
    /// The kind's sample (`config/samples/ai_v1_aijob.yaml`), which the controller's test
    /// creates; empty for a built-in type.
    sample_path: String,
    /// `create api --image`: what the deploy-image templates fill in.
    deploy: Option<deploy_image::DeployNames>,
    /// Rust path of the kind's type (`crate::api::v1::AIJob`,
    /// `k8s_openapi::api::core::v1::Pod`).
    type_path: String,
    /// Versions of the same group and kind already in PROJECT (`v1`): one of them is the
    /// stored version, so a new version gets `#[kube(storage = false)]`.
    stored_elsewhere: Vec<String>,
}

/// The `NAME` of `r`'s controller (its field manager, event reporter and metrics label):
/// `<kind>-controller`, and `<group>-<kind>-controller` in a multigroup project, where the
/// same kind may be in two groups and two controllers of one manager need distinct names (as
/// Kubebuilder's multigroup controllers are named `<group>-<kind>`). The same for the
/// project's own kinds, built-in ones and external ones.
pub(crate) fn controller_name(r: &Resource, multigroup: bool) -> String {
    let module = r.module();
    if multigroup {
        format!("{}-{module}-controller", r.group.replace('.', "-"))
    } else {
        format!("{module}-controller")
    }
}

impl Names {
    fn new(r: &Resource, project: &Project) -> Self {
        let module = r.module();
        let type_path = match &r.builtin {
            Some(b) => b.rust_path.to_string(),
            None => KindLayout::of(r, project.multigroup).type_path(),
        };
        let controller_name = controller_name(r, project.multigroup);
        Self {
            kind: r.kind.clone(),
            group: r.qualified_group(),
            rbac_group: r.rbac_group(),
            version: r.version.clone(),
            api_version: r.api_version(),
            plural: r.plural.clone(),
            plural_overridden: r.plural_overridden,
            namespaced: r.namespaced,
            crd_file: r.crd_file_name(),
            project_name: project.project_name.clone(),
            controller_name,
            reconciler: format!("{}Reconciler", r.kind),
            finalizer: format!("{}/finalizer", r.qualified_group()),
            sample_path: match &r.builtin {
                Some(_) => String::new(),
                None => KindLayout::of(r, project.multigroup)
                    .sample()
                    .path
                    .display()
                    .to_string(),
            },
            deploy: None,
            type_path,
            module,
            stored_elsewhere: project
                .resources
                .iter()
                .filter(|e| {
                    e.api.is_some()
                        && e.group == r.group
                        && e.kind == r.kind
                        && e.version != r.version
                })
                .map(|e| e.version.clone())
                .collect(),
        }
    }
}

#[derive(Template)]
#[template(path = "api/types.rs")]
struct TypesRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "api/controller.rs")]
struct ControllerRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "api/controller_builtin.rs")]
struct BuiltinControllerRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "api/controller_deploy_image.rs")]
struct DeployImageControllerRs<'a> {
    n: &'a Names,
    d: &'a deploy_image::DeployNames,
}

#[derive(Template)]
#[template(path = "api/api_mod.rs")]
struct ApiModRs {
    /// One module per group (multigroup) rather than per version.
    multigroup: bool,
}

/// The module of one group in a multigroup project (`src/api/<group>/mod.rs`,
/// `src/controller/<group>/mod.rs`, `src/webhook/<group>/mod.rs`): a doc line and the marker
/// its children are listed above.
#[derive(Template)]
#[template(path = "api/group_mod.rs")]
pub(crate) struct GroupModRs<'a> {
    /// The short group.
    pub group: &'a str,
    /// What the module holds, for its doc comment.
    pub holds: &'static str,
    /// The command that adds to it.
    pub command: &'static str,
    /// The scaffold marker (`api-versions`, `controller-modules`, `webhook-modules`).
    pub marker: &'static str,
}

impl<'a> GroupModRs<'a> {
    /// `src/api/<group>/mod.rs`.
    pub fn api(group: &'a str) -> Self {
        Self {
            group,
            holds: "the API types of the group, one module per version",
            command: "create api",
            marker: "api-versions",
        }
    }

    /// `src/controller/<group>/mod.rs`.
    pub fn controller(group: &'a str) -> Self {
        Self {
            group,
            holds: "the controllers of the group's kinds, one module per controller",
            command: "create api",
            marker: "controller-modules",
        }
    }

    /// `src/webhook/<group>/mod.rs`.
    pub fn webhook(group: &'a str) -> Self {
        Self {
            group,
            holds: "the webhooks of the group's kinds, one module per version",
            command: "create webhook",
            marker: "webhook-modules",
        }
    }
}

#[derive(Template)]
#[template(path = "api/version_mod.rs")]
struct VersionModRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "api/controller_mod.rs")]
struct ControllerModRs;

#[derive(Template)]
#[template(path = "api/sample.yaml")]
struct SampleYaml<'a> {
    n: &'a Names,
}

/// One of the admin / editor / viewer roles Kubebuilder scaffolds for each kind.
struct Role {
    name: &'static str,
    purpose: &'static str,
    verbs: &'static [&'static str],
}

const ROLES: [Role; 3] = [
    Role {
        name: "admin",
        purpose: "Admin: every verb on the objects, listed rather than `*` so a future verb is not granted; it grants no right over RBAC itself.",
        verbs: &[
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
    },
    Role {
        name: "editor",
        purpose: "Editor: create, read, update and delete the objects; read their status.",
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
    },
    Role {
        name: "viewer",
        purpose: "Viewer: read the objects and their status.",
        verbs: &["get", "list", "watch"],
    },
];

#[derive(Template)]
#[template(path = "api/role.yaml")]
struct RoleYaml<'a> {
    n: &'a Names,
    role: &'a Role,
    /// The role's name ([`KindLayout::role_name`]).
    name: String,
}

#[derive(Template)]
#[template(path = "api/crd_kustomization.yaml")]
struct CrdKustomization;

#[derive(Template)]
#[template(path = "api/samples_kustomization.yaml")]
struct SamplesKustomization;

/// The text `create api` writes into a new `src/api/mod.rs` (without the license header) for a
/// project of the multigroup layout (`multigroup`) or not. Errors: rendering the template.
pub(crate) fn api_mod_text(multigroup: bool) -> Result<String> {
    Ok(render(&ApiModRs { multigroup })?)
}

/// The names of the roles `create api` writes for each kind (`admin`, `editor`, `viewer`).
pub(crate) fn role_names() -> impl Iterator<Item = &'static str> {
    ROLES.iter().map(|r| r.name)
}

/// The license header of the project's Rust files: the leading `//` comment block of
/// `src/lib.rs` (or `src/main.rs`) that `init` wrote, followed by a blank line; empty when the
/// project has none. Like Kubebuilder's `hack/boilerplate.go.txt`, new Rust files get the same.
/// Read through the plan ([`Plan::read`]). Errors: a path that leads out of the project, an
/// unreadable file.
pub fn rust_header(plan: &Plan) -> Result<String, ScaffoldError> {
    for file in [layout::LIB_RS, layout::MAIN_RS] {
        let Some(text) = plan.read(file)? else {
            continue;
        };
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//") && !l.starts_with("//!") && !l.starts_with("///"))
            .collect();
        if header.is_empty() {
            return Ok(String::new());
        }
        return Ok(format!("{}\n\n", header.join("\n")));
    }
    Ok(String::new())
}

/// The crate name of the generated project: its project name with `-` as `_` (the name
/// `init` gives the package).
pub fn crate_name(project: &Project) -> String {
    project.project_name.replace('-', "_")
}

/// Builds the plan for `create api` in the project at `dir`, writing nothing.
///
/// Errors: no PROJECT (run `rsbuilder init` first), a PROJECT of another layout (a Go
/// Kubebuilder project), invalid names, the kind already
/// scaffolded without `--force`, and the cases of `resolve_resource`. Missing scaffold
/// markers and files are reported later, by [`Plan::resolve`] / [`Plan::apply`].
pub fn plan(dir: &Path, opts: &ApiOptions) -> Result<Plan> {
    if let Some(name) = &opts.controller_name {
        return named::plan(dir, opts, name);
    }
    let mut plan = Plan::new(dir, opts.force);
    let mut project = super::load_project_or_explain(&plan, dir)?;
    let (resource, existing) = resolve_resource(&project, opts)?;
    if let Some(e) = existing.map(|i| &project.resources[i])
        && external::is_external(e)
    {
        bail!(
            "{}/{} {} is an external kind in PROJECT (another project defines it; rsbuilder create api --external-api-crd or --external-api-path): it has no API of this project to add; re-run that command with --force to regenerate its files",
            e.group,
            e.version,
            e.kind
        );
    }
    let mut n = Names::new(&resource, &project);
    if let Some(image) = &opts.image {
        n.deploy = Some(deploy_image::check(&project, opts, &resource, image)?);
    }
    let files = KindLayout::of(&resource, project.multigroup);
    check_group_allowed(&project, opts, &resource)?;
    check_file_names_free(&project, opts, &files)?;
    check_type_names_free(&project, opts)?;
    check_crd_name_free(&project, opts, &resource)?;
    let krate = crate_name(&project);
    let gvk = format!("{}/{} {}", opts.group, opts.version, opts.kind);
    let header = rust_header(&plan)?;
    let rust = |text: String| format!("{header}{text}");

    let entry = existing.map(|i| project.resources[i].clone());
    let has_api = entry.as_ref().is_some_and(|e| e.api.is_some());
    let has_controller = entry.as_ref().is_some_and(|e| e.controller);
    if !opts.force {
        if opts.resource && has_api {
            bail!(
                "the API {gvk} already exists in PROJECT; re-run with --force to re-render its \
                 types, controller and sample files"
            );
        }
        if opts.controller && has_controller {
            bail!(
                "the controller for {gvk} already exists in PROJECT; re-run with --force to \
                 re-render its files, or add a further controller under a name of its own:\n  \
                 rsbuilder create api --group {} --version {} --kind {} --resource=false \
                 --controller-name <name>",
                opts.group,
                opts.version,
                opts.kind
            );
        }
    }
    // One controller file serves every version of a kind: a new version of a kind that has one
    // must not overwrite it (the user's reconcile logic), and --force would.
    if !opts.force && opts.controller && !has_controller && resource.builtin.is_none() {
        let sibling = project.resources.iter().find(|r| {
            r.controller
                && r.group == opts.group
                && r.kind == opts.kind
                && r.version != opts.version
        });
        if let Some(s) = sibling {
            bail!(
                "{} already has a controller, {} (scaffolded with \
                 version {}), and one controller serves every version of a kind. To add the {} \
                 types only, re-run with --controller=false:\n  rsbuilder create api --group {} \
                 --version {} --kind {} --controller=false\n(--force would overwrite that \
                 controller, and the reconcile logic you wrote in it)",
                opts.kind,
                files.controller().path.display(),
                s.version,
                opts.version,
                opts.group,
                opts.version,
                opts.kind
            );
        }
    }
    // What is new gets wired into the project; what exists is only re-rendered (--force).
    let new_api = opts.resource && !has_api;
    let new_controller = opts.controller && !has_controller;

    if opts.resource {
        plan.add(File::at(files.types(), rust(render(&TypesRs { n: &n })?)));
        plan.add(File::at(files.sample(), render(&SampleYaml { n: &n })?));
    }
    if opts.controller {
        let text = if let Some(d) = &n.deploy {
            render(&DeployImageControllerRs { n: &n, d })?
        } else if resource.builtin.is_some() {
            render(&BuiltinControllerRs { n: &n })?
        } else {
            ensure_controller_test_dependencies(&mut plan)?;
            render(&ControllerRs { n: &n })?
        };
        plan.add(File::at(files.controller(), rust(text)));
    }

    if new_api {
        wire_api(&mut plan, &n, &files, &header)?;
    }
    if new_controller {
        wire_controller(
            &mut plan,
            &header,
            &krate,
            &files,
            &files.controller_module(),
            &n.reconciler,
        )?;
    }
    if new_api || new_controller {
        if new_api {
            plan.insert_sorted(layout::LIB_RS, "modules", "pub mod api;");
        }
        update_project(
            &mut project,
            &resource,
            &n,
            existing,
            new_api,
            new_controller,
        );
        if let (Some(image), Some(d)) = (&opts.image, &n.deploy) {
            deploy_image::record(&mut project, &resource, opts, image)?;
            plan.insert(
                layout::MANAGER_YAML,
                "env",
                format!("- name: {}\n  value: {}", d.env, d.image_yaml),
            );
        }
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    }
    Ok(plan)
}

/// The `[dev-dependencies]` of the test at the end of a controller of the project's own kind
/// (templates/api/controller.rs): the runtime's in-process test cluster (its `testing`
/// feature; cargo merges it with the `[dependencies]` entry for tests alone, so the manager
/// never builds it) and the YAML reader of the kind's sample. An entry already there (a second
/// kind, or the user's own) is kept, with the feature added when it lacks it.
///
/// Errors: [`ensure_test_cluster_dependency`]'s.
pub(crate) fn ensure_controller_test_dependencies(plan: &mut Plan) -> Result<()> {
    ensure_test_cluster_dependency(plan)?;
    // The runtime's own YAML parser (its `testing` feature reads the CRDs with it).
    plan.ensure_dependency(
        layout::CARGO_TOML,
        "dev-dependencies",
        "serde-saphyr",
        "\"2\"",
        &[],
    );
    Ok(())
}

/// The `[dev-dependencies]` entry of the runtime's in-process test cluster (its `testing`
/// feature), which the scaffolded controller and webhook tests start: the copy's path or the
/// version, as PROJECT records the runtime. Kept when there, with the feature added when it
/// lacks it. A project with a copy of the runtime gets its test cluster and API server
/// modules ([`crate::scaffold::runtime::plan_server_part`]).
///
/// Errors: [`crate::scaffold::runtime::plan_server_part`]'s.
pub(crate) fn ensure_test_cluster_dependency(plan: &mut Plan) -> Result<()> {
    use crate::scaffold::runtime;
    let project = crate::model::Project::load_in(plan)?;
    plan.ensure_dependency(
        layout::CARGO_TOML,
        "dev-dependencies",
        runtime::PACKAGE,
        &runtime::Source::of(&project).dependency_with(&["testing"]),
        &["testing"],
    );
    runtime::plan_server_part(plan)
}

/// Wires a new controller into the project: `src/controller/mod.rs` (created with `header`
/// when missing) and its `pub mod <module>;` line (in a multigroup project the group's module,
/// `src/controller/<group>/mod.rs`, listed in `src/controller/mod.rs`, holds that line), its
/// start in `src/main.rs` (`<krate>::controller::[<group>::]<module>::<reconciler>`), and `pub
/// mod controller;` in `src/lib.rs`. Errors: rendering the module template.
fn wire_controller(
    plan: &mut Plan,
    header: &str,
    krate: &str,
    files: &KindLayout,
    module: &str,
    reconciler: &str,
) -> Result<()> {
    plan.add(File::at(
        layout::shared(layout::CONTROLLER_MOD),
        format!("{header}{}", render(&ControllerModRs)?),
    ));
    if let Some(group) = &files.group {
        plan.add(File::at(
            layout::group_mod(layout::CONTROLLER_DIR, group),
            format!("{header}{}", render(&GroupModRs::controller(group))?),
        ));
        plan.insert_sorted(
            layout::CONTROLLER_MOD,
            "controller-modules",
            layout::group_line(group),
        );
    }
    plan.insert_sorted(
        files.controllers_file(),
        "controller-modules",
        format!("pub mod {module};"),
    );
    plan.insert(
        layout::MAIN_RS,
        "controllers",
        format!(
            "runner.spawn(rsbuilder_runtime::controller::run(\n    runner.manager(),\n    {krate}::{}::{reconciler},\n));",
            files.controller_module_path(module)
        ),
    );
    plan.insert_sorted(layout::LIB_RS, "modules", "pub mod controller;");
    Ok(())
}

/// Module wiring, kustomize entries and roles of a new custom API.
fn wire_api(plan: &mut Plan, n: &Names, files: &KindLayout, header: &str) -> Result<()> {
    plan.add(File::at(
        layout::shared(layout::API_MOD),
        format!(
            "{header}{}",
            render(&ApiModRs {
                multigroup: files.group.is_some()
            })?
        ),
    ));
    if let Some(group) = &files.group {
        plan.add(File::at(
            layout::group_mod(layout::API_DIR, group),
            format!("{header}{}", render(&GroupModRs::api(group))?),
        ));
        plan.insert_sorted(layout::API_MOD, "api-versions", layout::group_line(group));
    }
    plan.insert_sorted(
        files.api_versions_file(),
        "api-versions",
        files.api_version_line(),
    );
    let version_mod = files.api_version_mod();
    let version_mod_path = version_mod.path.clone();
    plan.add(File::at(
        version_mod,
        format!("{header}{}", render(&VersionModRs { n })?),
    ));
    plan.insert(&version_mod_path, "api-kinds", files.types_lines());

    plan.add(File::at(
        layout::shared(layout::SAMPLES_KUSTOMIZATION),
        render(&SamplesKustomization)?,
    ));
    plan.insert(
        layout::SAMPLES_KUSTOMIZATION,
        "manifestskustomizesamples",
        files.sample_entry(),
    );
    plan.add(File::at(
        layout::shared(layout::CRD_KUSTOMIZATION),
        render(&CrdKustomization)?,
    ));
    plan.insert(
        layout::CRD_KUSTOMIZATION,
        "crdkustomizeresource",
        files.crd_entry(),
    );
    plan.insert(
        layout::DEFAULT_KUSTOMIZATION,
        "default-resources",
        "- ../crd",
    );
    for role in &ROLES {
        let name = files.role_name(role.name);
        plan.add(File::at(
            files.role(role.name),
            render(&RoleYaml { n, role, name })?,
        ));
        plan.insert(
            layout::RBAC_KUSTOMIZATION,
            "rbac-resources",
            files.role_entry(role.name),
        );
    }
    Ok(())
}

/// Adds or completes the PROJECT entry, as Kubebuilder records it.
fn update_project(
    project: &mut Project,
    resource: &Resource,
    n: &Names,
    existing: Option<usize>,
    new_api: bool,
    new_controller: bool,
) {
    let fresh = || {
        let mut entry = ProjectResource {
            group: resource.group.clone(),
            kind: resource.kind.clone(),
            version: resource.version.clone(),
            path: Some(match &resource.builtin {
                Some(b) => b.rust_path.to_string(),
                None => n.type_path.clone(),
            }),
            ..Default::default()
        };
        if resource.builtin.is_some() {
            entry.core = true;
        } else {
            entry.domain = Some(resource.domain.clone());
            if resource.plural_overridden {
                entry.plural = Some(resource.plural.clone());
            }
        }
        entry
    };
    let index = match existing {
        Some(i) => i,
        None => {
            project.resources.push(fresh());
            project.resources.len() - 1
        }
    };
    let entry = &mut project.resources[index];
    if new_api {
        entry.api = Some(ResourceApi {
            crd_version: Some("v1".into()),
            namespaced: resource.namespaced,
        });
        entry.domain = Some(resource.domain.clone());
        if resource.plural_overridden {
            entry.plural = Some(resource.plural.clone());
        }
        if entry.path.is_none() {
            entry.path = Some(n.type_path.clone());
        }
    }
    if new_controller {
        entry.controller = true;
    }
}

/// Runs `create api` in `dir`: plans, then applies all-or-nothing. Returns what happened to
/// each file (for [`crate::scaffold::report`]).
///
/// Errors: those of [`plan`], and the engine's (a scaffold marker or file missing, a file in
/// the way, an I/O error); nothing is written when an error is returned.
pub fn run(dir: &Path, opts: &ApiOptions) -> Result<Vec<Resolved>> {
    Ok(plan(dir, opts)?.apply()?)
}

/// The note `create api` prints when a new kind of the project has the group, version and
/// kind of a built-in Kubernetes type (`--group batch --kind CronJob`, as in the Kubebuilder
/// book's tutorial): the kind is the project's own, in `<group>.<domain>`, as Kubebuilder
/// makes it; the built-in type is reached with `--resource=false`. `None` for other kinds,
/// for `--resource=false`, and for a kind PROJECT already records.
pub fn builtin_namesake(opts: &ApiOptions, project: &Project) -> Option<String> {
    if !opts.resource
        || project
            .find(&opts.group, &opts.version, &opts.kind)
            .is_some()
    {
        return None;
    }
    let b = Resource::builtin(&opts.group, &opts.version, &opts.kind).ok()??;
    Some(format!(
        "{}/{} {} is also the built-in Kubernetes type {}; this creates the project's own kind in the group {}.{} (as Kubebuilder does). For a controller of the built-in type, pass --resource=false",
        opts.group,
        opts.version,
        opts.kind,
        b.builtin.map(|b| b.rust_path).unwrap_or_default(),
        opts.group,
        project.domain
    ))
}

/// What to do next, printed after a successful `create api` in a project of the multigroup
/// layout (`multigroup`) or not.
pub fn next_steps(opts: &ApiOptions, multigroup: bool) -> String {
    let group = layout::group_of(multigroup, &opts.group);
    let mut out = String::new();
    if opts.resource {
        out.push_str(&format!(
            "Next: add fields to {}, then run `rsbuilder manifests` to \
             (re)generate {}/{}/.\n",
            layout::types_file(group, &opts.version, &opts.kind).display(),
            layout::CONFIG_DIR,
            layout::generated::CRD_BASES,
        ));
    }
    if opts.controller {
        out.push_str(&format!(
            "Write the reconcile logic in {}, then `cargo build` and `make test`.\n",
            match &opts.controller_name {
                Some(name) => layout::named_controller_file(group, name),
                None => layout::controller_file(group, &opts.kind),
            }
            .display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_header_is_the_leading_line_comment_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "// Copyright 2030 Example Corp.\n//\n// Licensed under X.\n\n//! Crate docs.\npub mod manager;\n",
        )
        .unwrap();
        let plan = Plan::new(dir.path(), false);
        assert_eq!(
            rust_header(&plan).unwrap(),
            "// Copyright 2030 Example Corp.\n//\n// Licensed under X.\n\n"
        );
        std::fs::write(dir.path().join("src/lib.rs"), "//! Crate docs.\n").unwrap();
        assert_eq!(rust_header(&plan).unwrap(), "");
    }

    #[test]
    fn plan_for_a_later_version_marks_it_not_stored_and_adds_the_api_module() {
        let dir = tempfile::tempdir().unwrap();
        let mut project = Project::new("ai.example.com", "example.com/x", "x", false);
        project.resources.push(ProjectResource {
            api: Some(ResourceApi {
                crd_version: Some("v1".into()),
                namespaced: true,
            }),
            domain: Some("ai.example.com".into()),
            group: "ai".into(),
            kind: "AIJob".into(),
            version: "v1".into(),
            ..Default::default()
        });
        std::fs::write(dir.path().join("PROJECT"), project.render()).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "pub mod manager;\n// +kubebuilder:scaffold:modules\n",
        )
        .unwrap();
        let opts = ApiOptions {
            group: "ai".into(),
            version: "v2".into(),
            kind: "AIJob".into(),
            resource: true,
            controller: false,
            namespaced: true,
            plural: None,
            force: false,
            controller_name: None,
            image: None,
        };
        let plan = plan(dir.path(), &opts).unwrap();
        let types = plan
            .ops()
            .iter()
            .find_map(|op| match op {
                crate::scaffold::FileOp::Create(File { path, contents, .. })
                    if path == Path::new("src/api/v2/aijob_types.rs") =>
                {
                    Some(contents.clone())
                }
                _ => None,
            })
            .expect("types file planned");
        assert!(types.contains("    version = \"v2\",\n"), "{types}");
        assert!(types.contains("    storage = false,\n"), "{types}");
        let lib: Vec<&str> = plan
            .ops()
            .iter()
            .filter_map(|op| match op {
                crate::scaffold::FileOp::InsertSorted { path, line, .. }
                    if path == Path::new(layout::LIB_RS) =>
                {
                    Some(line.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(lib, ["pub mod api;"]);
        assert!(
            !plan.ops().iter().any(|op| matches!(
                op,
                crate::scaffold::FileOp::Insert { path, .. } if path == Path::new(layout::MAIN_RS)
            )),
            "no controller was asked for"
        );
    }
}
