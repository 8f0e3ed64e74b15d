//! The project layout: where the files rsbuilder generates live, and what to do when one is
//! already there. Commands ask this module for the project's shared files (`src/lib.rs`,
//! `config/crd/kustomization.yaml`, ...). Through [`KindLayout`] they ask it for the files of
//! one kind (types, controller, webhook, sample, CRD base, roles) and for the lines that list
//! them in module and kustomize files.
//!
//! Not every path is here. `init` lists the files it writes beside their templates in
//! `scaffold/init.rs` and asks this module only for their "if it exists" action
//! ([`init_file`]). A few scaffolds keep their own paths too: the runtime's directory
//! (`scaffold/runtime.rs`), the lock files (`scaffold/lockfile.rs`), the Grafana plugin's
//! files (`scaffold/grafana.rs`) and `alpha update`'s records (`scaffold/alpha.rs`).
//!
//! Modelled on Kubebuilder's `pkg/machinery`, where every scaffolded file is a value that
//! carries its path and its "if the file exists" action; here that value is [`FileSpec`] and
//! the action [`IfExists`]. The names follow Kubebuilder's single-group go/v4 layout
//! (`api/v1/<kind>_types.go` → `src/api/v1/<kind>_types.rs`, `config/samples/<group>_<version>_
//! <kind>.yaml`, `config/crd/bases/<group>_<plural>.yaml`).

use std::path::{Path, PathBuf};

use super::Resource;

pub use crate::engine::{FileSpec, IfExists};

/// `PROJECT`, which rsbuilder rewrites on every command that changes the project.
pub const PROJECT: &str = "PROJECT";
/// `Cargo.toml` (dependency markers).
pub const CARGO_TOML: &str = "Cargo.toml";
/// `src/lib.rs` (module markers, license header).
pub const LIB_RS: &str = "src/lib.rs";
/// `src/main.rs` (controller and webhook start markers).
pub const MAIN_RS: &str = "src/main.rs";
/// The manager's Deployment, where `create api --image` adds the operand's image variable.
pub const MANAGER_YAML: &str = "config/manager/manager.yaml";
/// The project's Rust sources, read for CRDs, RBAC markers and license headers.
pub const SRC_DIR: &str = "src";
/// The project's integration tests.
pub const TESTS_DIR: &str = "tests";
/// The directory of the API types (`src/api/mod.rs` and below).
pub const API_DIR: &str = "src/api";
/// The directory of the controllers.
pub const CONTROLLER_DIR: &str = "src/controller";
/// The directory of the webhooks.
pub const WEBHOOK_DIR: &str = "src/webhook";
/// `src/api/mod.rs`: one `pub mod <version>;` per API version (per group in a multigroup
/// project).
pub const API_MOD: &str = "src/api/mod.rs";
/// `src/controller/mod.rs`: one `pub mod <kind>_controller;` per controller.
pub const CONTROLLER_MOD: &str = "src/controller/mod.rs";
/// `src/webhook/mod.rs`: the module tree of the webhooks, one module per version (the server
/// is the runtime's).
pub const WEBHOOK_MOD: &str = "src/webhook/mod.rs";
/// `Dockerfile`: the image's build (binary build and copy markers).
pub const DOCKERFILE: &str = "Dockerfile";
/// `LICENSE`.
pub const LICENSE: &str = "LICENSE";
/// `README.md`.
pub const README: &str = "README.md";
/// The directory of every kustomize configuration (`manifests --output-dir` by default).
pub const CONFIG_DIR: &str = "config";
/// `config/crd/kustomization.yaml`: one `- bases/<file>` per CRD.
pub const CRD_KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
/// `config/samples/kustomization.yaml`: one line per sample.
pub const SAMPLES_KUSTOMIZATION: &str = "config/samples/kustomization.yaml";
/// `config/default/kustomization.yaml`: what `kubectl apply -k config/default` deploys.
pub const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
/// `config/rbac/kustomization.yaml`: the roles.
pub const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
/// `config/network-policy/kustomization.yaml`.
pub const NETWORK_POLICY_KUSTOMIZATION: &str = "config/network-policy/kustomization.yaml";

/// `config/webhook/manifests.yaml`, where `manifests` writes the webhook configurations
/// (`create webhook` puts an empty list there first).
pub const WEBHOOK_MANIFESTS: &str = "config/webhook/manifests.yaml";

/// Paths of the files `manifests` generates, relative to its output directory
/// ([`CONFIG_DIR`] unless `--output-dir` names another), as `controller-gen` writes them for
/// Kubebuilder.
pub mod generated {
    /// The directory of the CRDs (`<group>_<plural>.yaml`).
    pub const CRD_BASES: &str = "crd/bases";
    /// The CRD kustomization that lists `bases/<file>`.
    pub const CRD_KUSTOMIZATION: &str = "crd/kustomization.yaml";
    /// The prefix of a CRD's entry in the CRD kustomization (`bases/<file>`).
    pub const CRD_ENTRY_PREFIX: &str = "bases/";
    /// The manager's role, from `+kubebuilder:rbac` markers.
    pub const RBAC_ROLE: &str = "rbac/role.yaml";
    /// The webhook configurations, from `+kubebuilder:webhook` markers.
    pub const WEBHOOK_MANIFESTS: &str = "webhook/manifests.yaml";
}

/// The files only `init` writes (the shared ones, such as [`CARGO_TOML`] and [`LIB_RS`],
/// are above), in Kubebuilder's places for the Go project's equivalents.
pub mod init {
    /// The Service in front of the manager's metrics endpoint.
    pub const METRICS_SERVICE: &str = "config/default/metrics_service.yaml";
    /// The manager's ServiceAccount.
    pub const SERVICE_ACCOUNT: &str = "config/rbac/service_account.yaml";
    /// The manager's ClusterRole (or Role), which `manifests` rewrites from RBAC markers.
    pub const ROLE: &str = "config/rbac/role.yaml";
    /// Binds [`ROLE`] to the ServiceAccount.
    pub const ROLE_BINDING: &str = "config/rbac/role_binding.yaml";
    /// The Role over Leases that leader election needs.
    pub const LEADER_ELECTION_ROLE: &str = "config/rbac/leader_election_role.yaml";
    /// Binds [`LEADER_ELECTION_ROLE`].
    pub const LEADER_ELECTION_ROLE_BINDING: &str = "config/rbac/leader_election_role_binding.yaml";
    /// The ClusterRole that lets the manager check metrics callers (TokenReview,
    /// SubjectAccessReview).
    pub const METRICS_AUTH_ROLE: &str = "config/rbac/metrics_auth_role.yaml";
    /// Binds [`METRICS_AUTH_ROLE`].
    pub const METRICS_AUTH_ROLE_BINDING: &str = "config/rbac/metrics_auth_role_binding.yaml";
    /// The ClusterRole a metrics scraper is granted.
    pub const METRICS_READER_ROLE: &str = "config/rbac/metrics_reader_role.yaml";
    /// The manager kustomization (lists [`super::MANAGER_YAML`]).
    pub const MANAGER_KUSTOMIZATION: &str = "config/manager/kustomization.yaml";
    /// The Prometheus kustomization.
    pub const PROMETHEUS_KUSTOMIZATION: &str = "config/prometheus/kustomization.yaml";
    /// The ServiceMonitor of the metrics endpoint.
    pub const MONITOR: &str = "config/prometheus/monitor.yaml";
    /// The NetworkPolicy that lets labelled namespaces reach the metrics endpoint.
    pub const ALLOW_METRICS_TRAFFIC: &str = "config/network-policy/allow-metrics-traffic.yaml";
    /// What `docker build` leaves out.
    pub const DOCKERIGNORE: &str = ".dockerignore";
    /// What git leaves out.
    pub const GITIGNORE: &str = ".gitignore";
    /// The Makefile with Kubebuilder's targets.
    pub const MAKEFILE: &str = "Makefile";
    /// The end-to-end test against a cluster.
    pub const E2E_TESTS: &str = "tests/e2e.rs";
    /// The lint workflow.
    pub const LINT_WORKFLOW: &str = ".github/workflows/lint.yml";
    /// The test workflow.
    pub const TEST_WORKFLOW: &str = ".github/workflows/test.yml";
    /// The end-to-end test workflow.
    pub const TEST_E2E_WORKFLOW: &str = ".github/workflows/test-e2e.yml";
}

/// Files `init` leaves alone when the directory already has them (a fresh clone with a
/// README, a license, ignore files); every other file `init` writes must not exist yet.
pub const INIT_KEEP_IF_PRESENT: [&str; 4] = [README, LICENSE, init::GITIGNORE, init::DOCKERIGNORE];

/// The policy of a file `init` writes: [`IfExists::Skip`] for the files of
/// [`INIT_KEEP_IF_PRESENT`], [`IfExists::Error`] for the rest.
pub fn init_file(path: &str) -> FileSpec {
    let policy = if INIT_KEEP_IF_PRESENT.contains(&path) {
        IfExists::Skip
    } else {
        IfExists::Error
    };
    FileSpec::new(path, policy)
}

/// A module file shared by the kinds (`src/api/mod.rs`, `src/webhook/mod.rs`, ...): written
/// from its template when missing, otherwise kept and only added to.
pub fn shared(path: &str) -> FileSpec {
    FileSpec::new(path, IfExists::Skip)
}

/// A file rsbuilder owns and rewrites whole (PROJECT, a relicensed header, a generated
/// manifest).
pub fn owned(path: impl Into<PathBuf>) -> FileSpec {
    FileSpec::new(path, IfExists::Overwrite)
}

/// The Rust module (and directory) of a group in a multigroup project: the short group with
/// `-` and `.` as `_` (`data-store` → `data_store`), as Kubebuilder's multigroup layout puts
/// each group in a directory of its own (`api/<group>/<version>/`). Whether that is a Rust
/// identifier is checked by [`check_group_module`].
pub fn group_module(group: &str) -> String {
    group.replace(['-', '.'], "_")
}

/// Refuses a group whose module ([`group_module`]) cannot be a Rust module name: one that
/// starts with a digit or is a Rust keyword (`type`, `crate`), or that is `external`, the
/// module of other projects' kinds ([`external::MODULE`]). Errors name `--group`.
pub fn check_group_module(group: &str) -> Result<(), super::NameError> {
    let module = group_module(group);
    let reason = if !module.starts_with(|c: char| c.is_ascii_lowercase()) {
        "in a multigroup project each group is a Rust module (src/api/<group>/), so the group must start with a letter"
    } else if super::reserved::KEYWORDS.contains(&module.as_str()) {
        "in a multigroup project each group is a Rust module (src/api/<group>/), and this is a Rust keyword"
    } else if module == external::MODULE[1] {
        "in a multigroup project each group is a Rust module (src/api/<group>/), and src/api/external/ holds the types of other projects' kinds (create api --external-api-crd)"
    } else {
        return Ok(());
    };
    Err(super::NameError::new("--group", group, reason))
}

/// A source directory (`src/api`) as the layout has it: the same in a single-group project
/// (`group` is `None`), with the group's module below it in a multigroup one.
fn under(dir: &str, group: Option<&str>) -> String {
    match group {
        Some(g) => format!("{dir}/{}", group_module(g)),
        None => dir.to_owned(),
    }
}

/// A module path below the crate root (`api`, `controller`), with the group's module in a
/// multigroup project (`api::batch`).
fn module_under(module: &str, group: Option<&str>) -> String {
    match group {
        Some(g) => format!("{module}::{}", group_module(g)),
        None => module.to_owned(),
    }
}

/// The group of a kind as the layout functions take it: `Some(group)` in a multigroup
/// project (PROJECT `multigroup: true`), `None` in a single-group one.
pub fn group_of(multigroup: bool, group: &str) -> Option<&str> {
    multigroup.then_some(group)
}

/// The kind's types file (lower-cased kind): `src/api/<version>/<kind>_types.rs`, or
/// `src/api/<group>/<version>/<kind>_types.rs` in a multigroup project (`group` from
/// [`group_of`]).
pub fn types_file(group: Option<&str>, version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/{version}/{}_types.rs",
        under(API_DIR, group),
        kind.to_lowercase()
    ))
}

/// The Rust path of a kind's type, as its types file defines it (`crate::api::v1::AIJob`;
/// `crate::api::batch::v1::CronJob` in a multigroup project).
pub fn type_path(group: Option<&str>, version: &str, kind: &str) -> String {
    format!("crate::{}::{version}::{kind}", module_under("api", group))
}

/// The module of a kind's own controller: the lower-cased kind and `_controller`
/// (`aijob_controller`).
pub fn controller_module(kind: &str) -> String {
    format!("{}_controller", kind.to_lowercase())
}

/// The file of the controller module `module` (a kind's own, [`controller_module`], or a
/// named one, [`named_controller_module`]): `src/controller/<module>.rs`, or
/// `src/controller/<group>/<module>.rs` in a multigroup project.
pub fn controller_module_file(group: Option<&str>, module: &str) -> PathBuf {
    PathBuf::from(format!("{}/{module}.rs", under(CONTROLLER_DIR, group)))
}

/// The kind's controller (lower-cased kind): `src/controller/<kind>_controller.rs`, or
/// `src/controller/<group>/<kind>_controller.rs` in a multigroup project.
pub fn controller_file(group: Option<&str>, kind: &str) -> PathBuf {
    controller_module_file(group, &controller_module(kind))
}

/// The module of a named controller (`create api --controller-name aijob-backup`):
/// `aijob_backup_controller`, under the controller module of its group ([`controller_module_path`]).
pub fn named_controller_module(name: &str) -> String {
    format!("{}_controller", name.replace('-', "_"))
}

/// The file of a named controller (`-` as `_`), beside the kind's own controller:
/// `src/controller/<name>_controller.rs`, `src/controller/<group>/...` in a multigroup project.
pub fn named_controller_file(group: Option<&str>, name: &str) -> PathBuf {
    controller_module_file(group, &named_controller_module(name))
}

/// The path, below the crate root, of the controller module `module` (`controller::
/// aijob_controller`; `controller::batch::cronjob_controller` in a multigroup project).
pub fn controller_module_path(group: Option<&str>, module: &str) -> String {
    format!("{}::{module}", module_under("controller", group))
}

/// `src/webhook/<version>/<kind>_webhook.rs` (lower-cased kind), below `src/webhook/<group>/`
/// in a multigroup project.
pub fn webhook_file(group: Option<&str>, version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/{version}/{}_webhook.rs",
        under(WEBHOOK_DIR, group),
        kind.to_lowercase()
    ))
}

/// `src/webhook/<version>/<kind>_conversion.rs` (lower-cased kind), below
/// `src/webhook/<group>/` in a multigroup project.
pub fn conversion_file(group: Option<&str>, version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/{version}/{}_conversion.rs",
        under(WEBHOOK_DIR, group),
        kind.to_lowercase()
    ))
}

/// The directory of an API version's types: `src/api/<version>`, or
/// `src/api/<group>/<version>` in a multigroup project.
pub fn api_version_dir(group: Option<&str>, version: &str) -> PathBuf {
    PathBuf::from(format!("{}/{version}", under(API_DIR, group)))
}

/// The directory of an API version's webhooks: `src/webhook/<version>`, or
/// `src/webhook/<group>/<version>` in a multigroup project.
pub fn webhook_version_dir(group: Option<&str>, version: &str) -> PathBuf {
    PathBuf::from(format!("{}/{version}", under(WEBHOOK_DIR, group)))
}

/// The module file that lists the API versions: [`API_MOD`], or the group's
/// `src/api/<group>/mod.rs` in a multigroup project.
pub fn api_versions_file(group: Option<&str>) -> PathBuf {
    PathBuf::from(format!("{}/mod.rs", under(API_DIR, group)))
}

/// The module file that lists the controller modules: [`CONTROLLER_MOD`], or the group's
/// `src/controller/<group>/mod.rs` in a multigroup project.
pub fn controllers_file(group: Option<&str>) -> PathBuf {
    PathBuf::from(format!("{}/mod.rs", under(CONTROLLER_DIR, group)))
}

/// The module file that lists the webhook versions: [`WEBHOOK_MOD`], or the group's
/// `src/webhook/<group>/mod.rs` in a multigroup project.
pub fn webhook_versions_file(group: Option<&str>) -> PathBuf {
    PathBuf::from(format!("{}/mod.rs", under(WEBHOOK_DIR, group)))
}

/// The path below the crate root of an API version's module (`api::v1`; `api::batch::v1` in
/// a multigroup project).
pub fn api_version_module(group: Option<&str>, version: &str) -> String {
    format!("{}::{version}", module_under("api", group))
}

/// The path below the crate root of a version's webhook module (`webhook::v1`;
/// `webhook::batch::v1` in a multigroup project).
pub fn webhook_version_module(group: Option<&str>, version: &str) -> String {
    format!("{}::{version}", module_under("webhook", group))
}

/// The module file of one group in a multigroup project, below `dir` (`src/api`,
/// `src/controller`, `src/webhook`): `<dir>/<group>/mod.rs`, shared by the group's kinds.
pub fn group_mod(dir: &str, group: &str) -> FileSpec {
    FileSpec::new(
        format!("{dir}/{}/mod.rs", group_module(group)),
        IfExists::Skip,
    )
}

/// The `pub mod <group>;` line of a group's module in the parent module file.
pub fn group_line(group: &str) -> String {
    format!("pub mod {};", group_module(group))
}

/// The files of one kind (group, version, kind) in the project, and the lines that list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindLayout {
    /// The short group (`batch`) in a multigroup project, where it is a directory under
    /// `src/api/`, `src/controller/` and `src/webhook/`; `None` in a single-group project.
    pub group: Option<String>,
    /// Version (`v1`): a directory under `src/api/` and `src/webhook/`.
    pub version: String,
    /// Kind (`AIJob`).
    pub kind: String,
    /// Lower-case kind (`aijob`): the stem of the kind's Rust files.
    pub module: String,
    /// Plural (`aijobs`).
    pub plural: String,
    /// The sample's file stem (`ai_v1_aijob`).
    pub sample_stem: String,
    /// The CRD file name (`ai.ai.example.com_aijobs.yaml`).
    pub crd_file: String,
}

impl KindLayout {
    /// The layout of `resource`'s files in a project whose PROJECT has `multigroup:
    /// <multigroup>`.
    pub fn of(resource: &Resource, multigroup: bool) -> Self {
        Self {
            group: multigroup.then(|| resource.group.clone()),
            version: resource.version.clone(),
            kind: resource.kind.clone(),
            module: resource.module(),
            plural: resource.plural.clone(),
            sample_stem: resource.sample_stem(),
            crd_file: resource.crd_file_name(),
        }
    }

    fn group(&self) -> Option<&str> {
        self.group.as_deref()
    }

    /// The kind's types, [`types_file`] (the user edits it: refused when it exists, unless
    /// forced).
    pub fn types(&self) -> FileSpec {
        FileSpec::new(
            types_file(self.group(), &self.version, &self.kind),
            IfExists::Error,
        )
    }

    /// The Rust path of the kind's type, as the types file defines it ([`type_path`]).
    pub fn type_path(&self) -> String {
        type_path(self.group(), &self.version, &self.kind)
    }

    /// The version's module, `src/api/<version>/mod.rs` (`src/api/<group>/<version>/mod.rs`
    /// in a multigroup project), shared by the kinds of the version.
    pub fn api_version_mod(&self) -> FileSpec {
        FileSpec::new(
            api_version_dir(self.group(), &self.version).join("mod.rs"),
            IfExists::Skip,
        )
    }

    /// The module file that lists the version's module: [`API_MOD`], or the group's module
    /// (`src/api/<group>/mod.rs`) in a multigroup project.
    pub fn api_versions_file(&self) -> PathBuf {
        api_versions_file(self.group())
    }

    /// The module file that lists the kind's controller module: [`CONTROLLER_MOD`], or the
    /// group's (`src/controller/<group>/mod.rs`) in a multigroup project.
    pub fn controllers_file(&self) -> PathBuf {
        controllers_file(self.group())
    }

    /// The module file that lists the version's webhook module: [`WEBHOOK_MOD`], or the
    /// group's (`src/webhook/<group>/mod.rs`) in a multigroup project.
    pub fn webhook_versions_file(&self) -> PathBuf {
        webhook_versions_file(self.group())
    }

    /// The `pub mod <version>;` line of [`KindLayout::api_versions_file`].
    pub fn api_version_line(&self) -> String {
        format!("pub mod {};", self.version)
    }

    /// The lines of the version's module that declare and re-export the types module.
    pub fn types_lines(&self) -> String {
        format!("pub mod {m}_types;\npub use {m}_types::*;", m = self.module)
    }

    /// The kind's controller, `src/controller/<kind>_controller.rs` (one for every version
    /// of the kind; the user edits it).
    pub fn controller(&self) -> FileSpec {
        FileSpec::new(controller_file(self.group(), &self.kind), IfExists::Error)
    }

    /// The controller's module name (`aijob_controller`), under `crate::controller` (its
    /// group's module in a multigroup project).
    pub fn controller_module(&self) -> String {
        controller_module(&self.kind)
    }

    /// The path of the controller module `module` (the kind's own or a named one) below the
    /// crate root ([`controller_module_path`]).
    pub fn controller_module_path(&self, module: &str) -> String {
        controller_module_path(self.group(), module)
    }

    /// A named controller's file ([`named_controller_file`]).
    pub fn named_controller(&self, name: &str) -> FileSpec {
        FileSpec::new(named_controller_file(self.group(), name), IfExists::Error)
    }

    /// The stem of the kind's role files and names: the lower-case kind, prefixed with the
    /// group in a multigroup project (`batch_cronjob`), as Kubebuilder names them there.
    fn role_stem(&self, sep: char) -> String {
        match self.group() {
            Some(g) => format!("{g}{sep}{}", self.module),
            None => self.module.clone(),
        }
    }

    /// The name of one of the kind's roles (`aijob-admin-role`; `batch-cronjob-admin-role`
    /// in a multigroup project).
    pub fn role_name(&self, role: &str) -> String {
        format!("{}-{role}-role", self.role_stem('-'))
    }

    /// The sample object, `config/samples/<group>_<version>_<kind>.yaml` (the user edits it).
    pub fn sample(&self) -> FileSpec {
        FileSpec::new(
            format!("config/samples/{}.yaml", self.sample_stem),
            IfExists::Error,
        )
    }

    /// The sample's entry in [`SAMPLES_KUSTOMIZATION`].
    pub fn sample_entry(&self) -> String {
        format!("- {}.yaml", self.sample_stem)
    }

    /// The CRD `manifests` generates, relative to the project root (with the default output
    /// directory).
    pub fn crd_base(&self) -> PathBuf {
        Path::new(CONFIG_DIR)
            .join(generated::CRD_BASES)
            .join(&self.crd_file)
    }

    /// The CRD's entry in [`CRD_KUSTOMIZATION`].
    pub fn crd_entry(&self) -> String {
        format!("- {}{}", generated::CRD_ENTRY_PREFIX, self.crd_file)
    }

    /// One of the kind's admin / editor / viewer roles, `config/rbac/<kind>_<role>_role.yaml`
    /// (kept when present).
    pub fn role(&self, role: &str) -> FileSpec {
        FileSpec::new(
            Path::new("config/rbac").join(self.role_file(role)),
            IfExists::Skip,
        )
    }

    /// The role's entry in [`RBAC_KUSTOMIZATION`].
    pub fn role_entry(&self, role: &str) -> String {
        format!("- {}", self.role_file(role))
    }

    fn role_file(&self, role: &str) -> String {
        format!("{}_{role}_role.yaml", self.role_stem('_'))
    }

    /// The kind's webhook file, `src/webhook/<version>/<kind>_webhook.rs`: a skeleton that
    /// each webhook type adds a section to, so it is kept when present unless forced.
    pub fn webhook(&self) -> FileSpec {
        FileSpec::new(
            webhook_file(self.group(), &self.version, &self.kind),
            IfExists::SkipUnlessForced,
        )
    }

    /// The webhook module name (`aijob_webhook`), under `crate::webhook::<version>`.
    pub fn webhook_module(&self) -> String {
        format!("{}_webhook", self.module)
    }

    /// The path below the crate root of the webhook module `module` of the kind's version
    /// (`webhook::v1::aijob_webhook`; `webhook::batch::v1::...` in a multigroup project).
    pub fn webhook_module_path(&self, module: &str) -> String {
        format!(
            "{}::{module}",
            webhook_version_module(self.group(), &self.version)
        )
    }

    /// The version's webhook module, `src/webhook/<version>/mod.rs` (below
    /// `src/webhook/<group>/` in a multigroup project).
    pub fn webhook_version_mod(&self) -> FileSpec {
        FileSpec::new(
            webhook_version_dir(self.group(), &self.version).join("mod.rs"),
            IfExists::Skip,
        )
    }

    /// The kind's conversion functions, `src/webhook/<version>/<kind>_conversion.rs` (the
    /// user edits them).
    pub fn conversion(&self) -> FileSpec {
        FileSpec::new(
            conversion_file(self.group(), &self.version, &self.kind),
            IfExists::Error,
        )
    }

    /// The conversion module name (`aijob_conversion`), under `crate::webhook::<version>`.
    pub fn conversion_module(&self) -> String {
        format!("{}_conversion", self.module)
    }

    /// The CRD patch that turns conversion on, `config/crd/patches/webhook_in_<plural>.yaml`.
    pub fn conversion_patch(&self) -> FileSpec {
        FileSpec::new(
            format!("config/crd/patches/{}", self.conversion_patch_file()),
            IfExists::Skip,
        )
    }

    /// The patch's entry in [`CRD_KUSTOMIZATION`].
    pub fn conversion_patch_entry(&self) -> String {
        format!("- path: patches/{}", self.conversion_patch_file())
    }

    fn conversion_patch_file(&self) -> String {
        match self.group() {
            Some(g) => format!("webhook_in_{g}_{}.yaml", self.plural),
            None => format!("webhook_in_{}.yaml", self.plural),
        }
    }
}

/// The files of `create apiserver`: kinds served by the project's aggregated API server
/// (`rsbuilder-runtime`'s `apiserver` module) rather than installed as CRDs. Their types live
/// apart from `src/api/` so that a served kind and a CRD kind never share a module.
pub mod apiserver {
    use super::{FileSpec, IfExists};

    /// `src/apiserver/mod.rs`: one `pub mod <version>;` per version of served kinds.
    pub const MOD: &str = "src/apiserver/mod.rs";
    /// The server binary (cargo finds `src/bin/*.rs` by itself): one server for every served kind.
    pub const BIN: &str = "src/bin/apiserver.rs";
    /// The kustomize directory of the server's Deployment, Service, APIServices and RBAC.
    pub const CONFIG_DIR: &str = "config/apiserver";
    /// `config/apiserver/kustomization.yaml`.
    pub const KUSTOMIZATION: &str = "config/apiserver/kustomization.yaml";
    /// The runtime file whose presence says the project's runtime can serve an API.
    pub const RUNTIME_MODULE: &str = "rsbuilder-runtime/src/apiserver/mod.rs";

    /// The served kind's types, `src/apiserver/<version>/<kind>_types.rs` (the user edits them).
    pub fn types(version: &str, module: &str) -> FileSpec {
        FileSpec::new(
            format!("src/apiserver/{version}/{module}_types.rs"),
            IfExists::Error,
        )
    }

    /// `src/apiserver/<version>/mod.rs`, shared by the version's kinds.
    pub fn version_mod(version: &str) -> FileSpec {
        FileSpec::new(format!("src/apiserver/{version}/mod.rs"), IfExists::Skip)
    }

    /// The APIService of one group-version, `config/apiserver/apiservice_<group>_<version>.yaml`
    /// (shared by the kinds of that group-version).
    pub fn apiservice(qualified_group: &str, version: &str) -> FileSpec {
        FileSpec::new(
            format!("{CONFIG_DIR}/{}", apiservice_file(qualified_group, version)),
            IfExists::Skip,
        )
    }

    /// The file name of [`apiservice`], as `config/apiserver/kustomization.yaml` lists it.
    pub fn apiservice_file(qualified_group: &str, version: &str) -> String {
        format!(
            "apiservice_{}_{version}.yaml",
            qualified_group.replace('.', "_")
        )
    }
}

/// The tool-owned module of third-party API types (`create api --external-api-crd`):
/// `src/api/external/<group>/<version>.rs`, Rust types kopium generates from another project's
/// CRD. `manifests` writes no CRD for the kinds in it ([`external::MODULE`]).
pub mod external {
    use super::{FileSpec, IfExists};

    /// The module's path under `crate`, as segments: `manifests` skips the custom resources
    /// of this module and its children (another project installs their CRDs).
    pub const MODULE: [&str; 2] = ["api", "external"];
    /// `src/api/external/mod.rs`: one `pub mod <group>;` per API group.
    pub const MOD: &str = "src/api/external/mod.rs";
    /// The line of `src/api/mod.rs` that declares the module.
    pub const API_MOD_LINE: &str = "pub mod external;";

    /// The Rust module name of an API group (`cert-manager.io` → `cert_manager_io`).
    pub fn group_module(qualified_group: &str) -> String {
        qualified_group.replace(['.', '-'], "_")
    }

    /// The Rust module name of a version (`v1beta1`; a `-` as `_`).
    pub fn version_module(version: &str) -> String {
        version.replace('-', "_")
    }

    /// `src/api/external/<group>/mod.rs`: one `pub mod <version>;` per version.
    pub fn group_mod(qualified_group: &str) -> FileSpec {
        FileSpec::new(
            format!("src/api/external/{}/mod.rs", group_module(qualified_group)),
            IfExists::Skip,
        )
    }

    /// `src/api/external/<group>/<version>.rs`, the generated types (refused when it exists,
    /// unless forced: `--force` generates them again).
    pub fn types(qualified_group: &str, version: &str) -> FileSpec {
        FileSpec::new(
            format!(
                "src/api/external/{}/{}.rs",
                group_module(qualified_group),
                version_module(version)
            ),
            IfExists::Error,
        )
    }

    /// The Rust path of a generated kind
    /// (`crate::api::external::cert_manager_io::v1::Certificate`).
    pub fn type_path(qualified_group: &str, version: &str, kind: &str) -> String {
        format!(
            "crate::api::external::{}::{}::{kind}",
            group_module(qualified_group),
            version_module(version)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_files_follow_kubebuilder_names() {
        let r = Resource::custom("ai", "ai.example.com", "v1", "AIJob", None, true).unwrap();
        let l = KindLayout::of(&r, false);
        assert_eq!(l.types().path, Path::new("src/api/v1/aijob_types.rs"));
        assert_eq!(l.types().if_exists, IfExists::Error);
        assert_eq!(l.type_path(), "crate::api::v1::AIJob");
        assert_eq!(l.api_version_mod().path, Path::new("src/api/v1/mod.rs"));
        assert_eq!(
            l.controller().path,
            Path::new("src/controller/aijob_controller.rs")
        );
        assert_eq!(
            l.sample().path,
            Path::new("config/samples/ai_v1_aijob.yaml")
        );
        assert_eq!(l.sample_entry(), "- ai_v1_aijob.yaml");
        assert_eq!(
            l.crd_base(),
            Path::new("config/crd/bases/ai.ai.example.com_aijobs.yaml")
        );
        assert_eq!(l.crd_entry(), "- bases/ai.ai.example.com_aijobs.yaml");
        assert_eq!(
            l.role("viewer").path,
            Path::new("config/rbac/aijob_viewer_role.yaml")
        );
        assert_eq!(l.role_entry("admin"), "- aijob_admin_role.yaml");
        assert_eq!(
            l.webhook().path,
            Path::new("src/webhook/v1/aijob_webhook.rs")
        );
        assert_eq!(l.webhook().if_exists, IfExists::SkipUnlessForced);
        assert_eq!(
            l.conversion().path,
            Path::new("src/webhook/v1/aijob_conversion.rs")
        );
        assert_eq!(
            l.conversion_patch().path,
            Path::new("config/crd/patches/webhook_in_aijobs.yaml")
        );
        assert_eq!(
            l.conversion_patch_entry(),
            "- path: patches/webhook_in_aijobs.yaml"
        );
    }

    #[test]
    fn multigroup_kind_files_are_under_their_group_as_kubebuilder_puts_them() {
        let r = Resource::custom("data-store", "example.com", "v1", "Cache", None, true).unwrap();
        let l = KindLayout::of(&r, true);
        assert_eq!(
            l.types().path,
            Path::new("src/api/data_store/v1/cache_types.rs")
        );
        assert_eq!(l.type_path(), "crate::api::data_store::v1::Cache");
        assert_eq!(
            l.api_version_mod().path,
            Path::new("src/api/data_store/v1/mod.rs")
        );
        assert_eq!(
            l.api_versions_file(),
            Path::new("src/api/data_store/mod.rs")
        );
        assert_eq!(
            l.controller().path,
            Path::new("src/controller/data_store/cache_controller.rs")
        );
        assert_eq!(
            l.controller_module_path("cache_controller"),
            "controller::data_store::cache_controller"
        );
        assert_eq!(
            l.named_controller("cache-backup").path,
            Path::new("src/controller/data_store/cache_backup_controller.rs")
        );
        assert_eq!(
            l.webhook().path,
            Path::new("src/webhook/data_store/v1/cache_webhook.rs")
        );
        assert_eq!(
            l.webhook_module_path("cache_webhook"),
            "webhook::data_store::v1::cache_webhook"
        );
        assert_eq!(
            l.role("admin").path,
            Path::new("config/rbac/data-store_cache_admin_role.yaml")
        );
        assert_eq!(l.role_name("admin"), "data-store-cache-admin-role");
        assert_eq!(
            l.conversion_patch().path,
            Path::new("config/crd/patches/webhook_in_data-store_caches.yaml")
        );
        assert_eq!(
            group_mod(API_DIR, "data-store").path,
            Path::new("src/api/data_store/mod.rs")
        );
        assert_eq!(group_line("data-store"), "pub mod data_store;");
        // Single-group paths are those of the first test.
        assert_eq!(
            KindLayout::of(&r, false).webhook_module_path("cache_webhook"),
            "webhook::v1::cache_webhook"
        );
    }

    #[test]
    fn a_group_module_must_be_a_rust_identifier() {
        assert!(check_group_module("ship").is_ok());
        assert!(check_group_module("data.store").is_ok());
        for bad in ["type", "crate", "9ers"] {
            let e = check_group_module(bad).unwrap_err();
            assert_eq!(e.flag, "--group");
        }
    }

    #[test]
    fn generated_paths_are_under_the_config_dir() {
        assert_eq!(
            Path::new(CONFIG_DIR).join(generated::WEBHOOK_MANIFESTS),
            Path::new(WEBHOOK_MANIFESTS)
        );
        assert_eq!(
            Path::new(CONFIG_DIR).join(generated::CRD_KUSTOMIZATION),
            Path::new(CRD_KUSTOMIZATION)
        );
    }

    #[test]
    fn init_keeps_only_the_files_a_fresh_clone_may_have() {
        assert_eq!(init_file("README.md").if_exists, IfExists::Skip);
        assert_eq!(init_file(".gitignore").if_exists, IfExists::Skip);
        assert_eq!(init_file("src/main.rs").if_exists, IfExists::Error);
        assert_eq!(init_file(PROJECT).if_exists, IfExists::Error);
    }
}
