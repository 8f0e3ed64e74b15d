//! The project layout: where every file rsbuilder generates lives, and what to do when it is
//! already there. Commands never build a project path themselves: they ask this module, for
//! the project's shared files (`src/lib.rs`, `config/crd/kustomization.yaml`, ...) and, through
//! [`KindLayout`], for the files of one kind (types, controller, webhook, sample, CRD base,
//! roles) and the lines that list them in module and kustomize files.
//!
//! Modelled on Kubebuilder's `pkg/machinery`, where every scaffolded file is a value that
//! carries its path and its "if the file exists" action; here that value is [`FileSpec`] and
//! the action [`IfExists`]. The names follow Kubebuilder's single-group go/v4 layout
//! (`api/v1/<kind>_types.go` → `src/api/v1/<kind>_types.rs`, `config/samples/<group>_<version>_
//! <kind>.yaml`, `config/crd/bases/<group>_<plural>.yaml`).

use std::path::{Path, PathBuf};

use super::Resource;

/// What to do when a file to create already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Fail the whole command ("already exists; use --force"), unless the plan is forced, in
    /// which case the file is overwritten. For files the user edits (types, controllers, ...).
    Error,
    /// Leave the existing file alone (shared files a previous command may have written).
    Skip,
    /// Leave the existing file alone, unless the plan is forced, in which case the file is
    /// overwritten: a skeleton that later commands add sections to (the kind's webhook file,
    /// which `--force` renders again with every webhook type).
    SkipUnlessForced,
    /// Always overwrite (files rsbuilder owns, such as PROJECT).
    Overwrite,
}

/// A file of the project: its path (relative to the project root) and its policy when it
/// exists already. The contents come from the template the command renders for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// Path relative to the project root.
    pub path: PathBuf,
    /// What to do when the file exists.
    pub if_exists: IfExists,
}

impl FileSpec {
    /// The file at `path` with the policy `if_exists`.
    pub fn new(path: impl Into<PathBuf>, if_exists: IfExists) -> Self {
        Self {
            path: path.into(),
            if_exists,
        }
    }
}

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
/// `src/api/mod.rs`: one `pub mod <version>;` per API version.
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

/// Files `init` leaves alone when the directory already has them (a fresh clone with a
/// README, a license, ignore files); every other file `init` writes must not exist yet.
pub const INIT_KEEP_IF_PRESENT: [&str; 4] = ["README.md", "LICENSE", ".gitignore", ".dockerignore"];

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

/// `src/api/<version>/<kind>_types.rs` for a kind (lower-cased) of `version`.
pub fn types_file(version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "src/api/{version}/{}_types.rs",
        kind.to_lowercase()
    ))
}

/// The Rust path of a kind's type, as its types file defines it (`crate::api::v1::AIJob`).
pub fn type_path(version: &str, kind: &str) -> String {
    format!("crate::api::{version}::{kind}")
}

/// `src/controller/<kind>_controller.rs` for a kind (lower-cased).
pub fn controller_file(kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "src/controller/{}_controller.rs",
        kind.to_lowercase()
    ))
}

/// The module of a named controller (`create api --controller-name aijob-backup`):
/// `aijob_backup_controller`, under `crate::controller`.
pub fn named_controller_module(name: &str) -> String {
    format!("{}_controller", name.replace('-', "_"))
}

/// `src/controller/<name>_controller.rs` for a named controller (`-` as `_`).
pub fn named_controller_file(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "src/controller/{}.rs",
        named_controller_module(name)
    ))
}

/// `src/webhook/<version>/<kind>_webhook.rs` for a kind (lower-cased) of `version`.
pub fn webhook_file(version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "src/webhook/{version}/{}_webhook.rs",
        kind.to_lowercase()
    ))
}

/// `src/webhook/<version>/<kind>_conversion.rs` for a kind (lower-cased) of `version`.
pub fn conversion_file(version: &str, kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "src/webhook/{version}/{}_conversion.rs",
        kind.to_lowercase()
    ))
}

/// The files of one kind (group, version, kind) in the project, and the lines that list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindLayout {
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
    /// The layout of `resource`'s files.
    pub fn of(resource: &Resource) -> Self {
        Self {
            version: resource.version.clone(),
            kind: resource.kind.clone(),
            module: resource.module(),
            plural: resource.plural.clone(),
            sample_stem: resource.sample_stem(),
            crd_file: resource.crd_file_name(),
        }
    }

    /// The kind's types, `src/api/<version>/<kind>_types.rs` (the user edits it: refused when
    /// it exists, unless forced).
    pub fn types(&self) -> FileSpec {
        FileSpec::new(types_file(&self.version, &self.kind), IfExists::Error)
    }

    /// The Rust path of the kind's type, as the types file defines it
    /// (`crate::api::v1::AIJob`).
    pub fn type_path(&self) -> String {
        type_path(&self.version, &self.kind)
    }

    /// The version's module, `src/api/<version>/mod.rs`, shared by the kinds of the version.
    pub fn api_version_mod(&self) -> FileSpec {
        FileSpec::new(format!("src/api/{}/mod.rs", self.version), IfExists::Skip)
    }

    /// The `pub mod <version>;` line of [`API_MOD`].
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
        FileSpec::new(controller_file(&self.kind), IfExists::Error)
    }

    /// The controller's module name (`aijob_controller`), under `crate::controller`.
    pub fn controller_module(&self) -> String {
        format!("{}_controller", self.module)
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
        format!("{}_{role}_role.yaml", self.module)
    }

    /// The kind's webhook file, `src/webhook/<version>/<kind>_webhook.rs`: a skeleton that
    /// each webhook type adds a section to, so it is kept when present unless forced.
    pub fn webhook(&self) -> FileSpec {
        FileSpec::new(
            webhook_file(&self.version, &self.kind),
            IfExists::SkipUnlessForced,
        )
    }

    /// The webhook module name (`aijob_webhook`), under `crate::webhook::<version>`.
    pub fn webhook_module(&self) -> String {
        format!("{}_webhook", self.module)
    }

    /// The version's webhook module, `src/webhook/<version>/mod.rs`.
    pub fn webhook_version_mod(&self) -> FileSpec {
        FileSpec::new(
            format!("src/webhook/{}/mod.rs", self.version),
            IfExists::Skip,
        )
    }

    /// The kind's conversion functions, `src/webhook/<version>/<kind>_conversion.rs` (the
    /// user edits them).
    pub fn conversion(&self) -> FileSpec {
        FileSpec::new(conversion_file(&self.version, &self.kind), IfExists::Error)
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
        format!("webhook_in_{}.yaml", self.plural)
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
        let l = KindLayout::of(&r);
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
