//! `rsbuilder create apiserver`: a kind served by the project's own aggregated (extension)
//! API server, built on `rsbuilder-runtime`'s `apiserver` module, instead of a CRD.
//!
//! Kubebuilder has no such command; the shape follows `create api` (same flags and name rules,
//! the same PROJECT entry plus an `apiServer` field that Kubebuilder's PROJECT model keeps as
//! an unknown field) and `create webhook` (a server, its Service, certificate and wiring into
//! `config/default`). What one run plans:
//!
//! - `src/apiserver/<version>/<kind>_types.rs`: the kind as kube-rs types (the server takes
//!   names, columns and schema from its `crd()`), and the module wiring in `src/apiserver/`;
//! - `src/bin/apiserver.rs`: the server, with the kind added above its `apiserver-kinds`
//!   marker (a second kind or version joins the same server);
//! - `features = ["apiserver"]` on the project's `rsbuilder-runtime` dependency;
//! - `config/apiserver/`: one APIService per group-version, the Deployment, Service,
//!   ServiceAccount, cert-manager Issuer and Certificate, and the delegated-auth RBAC; listed
//!   in `config/default` with the replacement that keeps the auth-reader RoleBinding in
//!   kube-system;
//! - a sample in `config/samples/`, and the PROJECT entry.
//!
//! Everything is planned first and applied all-or-nothing by [`Plan`]; a failed command writes
//! nothing.

use std::path::Path;

use anyhow::{Result, bail};
use askama::Template;

use crate::model::layout::{self, KindLayout, apiserver as files};
use crate::model::project::ProjectResource;
use crate::model::{NameError, Project, Resource};
use crate::scaffold::api::{crate_name, rust_header};
use crate::scaffold::{File, Plan, Resolved, render};

pub use crate::model::project::{API_SERVER_FIELD as PROJECT_FIELD, is_served};

/// What `create apiserver` was asked to do (the command-line flags, without clap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiServerOptions {
    /// `--group`: short group (`db`); the served group is `<group>.<domain>`.
    pub group: String,
    /// `--version` (`v1`).
    pub version: String,
    /// `--kind` (`Database`).
    pub kind: String,
    /// `--namespaced`: namespaced (`true`) or cluster-scoped kind.
    pub namespaced: bool,
    /// `--plural`, when kube-derive's rule gets it wrong.
    pub plural: Option<String>,
    /// `--force`: re-render the kind's types and sample over existing ones.
    pub force: bool,
}

impl ApiServerOptions {
    /// The flags that recreate PROJECT entry `r`, a served kind (`alpha generate`): its GVK,
    /// plural, and the scope its [`PROJECT_FIELD`] field records (namespaced when absent, as
    /// the flag's default); never `--force`.
    pub fn from_project_resource(r: &ProjectResource) -> Self {
        let namespaced = r
            .unknown
            .get(PROJECT_FIELD)
            .and_then(|v| v.get("namespaced"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true);
        Self {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            namespaced,
            plural: r.plural.clone(),
            force: false,
        }
    }
}

/// Names the templates use.
#[derive(Debug, Clone)]
struct Names {
    kind: String,
    module: String,
    /// The served API group (`db.example.com`).
    group: String,
    version: String,
    api_version: String,
    plural: String,
    plural_overridden: bool,
    namespaced: bool,
    project_name: String,
    /// config/default's `namespace:` (the objects' namespace once rendered).
    namespace: String,
    /// config/default's `namePrefix:`.
    prefix: String,
}

#[derive(Template)]
#[template(path = "apiserver/types.rs")]
struct TypesRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "apiserver/mod.rs")]
struct ModRs;

#[derive(Template)]
#[template(path = "apiserver/version_mod.rs")]
struct VersionModRs<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "apiserver/bin.rs")]
struct BinRs;

#[derive(Template)]
#[template(path = "apiserver/sample.yaml")]
struct SampleYaml<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "apiserver/config/apiservice.yaml")]
struct ApiServiceYaml<'a> {
    n: &'a Names,
}

/// The files of `config/apiserver/` every served kind shares: (file name, rendered text).
/// `config/network-policy/allow-apiserver-traffic.yaml`: the server's HTTPS port only.
#[derive(Template)]
#[template(path = "apiserver/config/allow-apiserver-traffic.yaml")]
struct NetworkPolicyYaml<'a> {
    n: &'a Names,
}

fn config_files(n: &Names) -> Result<Vec<(&'static str, String)>> {
    macro_rules! tpl {
        ($name:ident, $path:literal) => {{
            #[derive(Template)]
            #[template(path = $path)]
            struct $name<'a> {
                n: &'a Names,
            }
            render(&$name { n })?
        }};
    }
    Ok(vec![
        ("kustomization.yaml", render(&ConfigKustomization)?),
        (
            "kustomizeconfig.yaml",
            include_str!("../../templates/apiserver/config/kustomizeconfig.yaml").to_owned(),
        ),
        (
            "service_account.yaml",
            tpl!(ServiceAccount, "apiserver/config/service_account.yaml"),
        ),
        (
            "auth_delegator.yaml",
            tpl!(AuthDelegator, "apiserver/config/auth_delegator.yaml"),
        ),
        (
            "auth_reader.yaml",
            tpl!(AuthReader, "apiserver/config/auth_reader.yaml"),
        ),
        (
            "flowcontrol_reader.yaml",
            tpl!(
                FlowcontrolReader,
                "apiserver/config/flowcontrol_reader.yaml"
            ),
        ),
        ("issuer.yaml", tpl!(Issuer, "apiserver/config/issuer.yaml")),
        (
            "certificate.yaml",
            tpl!(Certificate, "apiserver/config/certificate.yaml"),
        ),
        (
            "service.yaml",
            tpl!(Service, "apiserver/config/service.yaml"),
        ),
        (
            "deployment.yaml",
            tpl!(Deployment, "apiserver/config/deployment.yaml"),
        ),
    ])
}

#[derive(Template)]
#[template(path = "apiserver/config/kustomization.yaml")]
struct ConfigKustomization;

/// `config/default/apiserver_replacements.yaml`: kustomize reads replacement files only from
/// the kustomization's own directory or below.
const DEFAULT_REPLACEMENTS: &str = "config/default/apiserver_replacements.yaml";
/// Its entry under `replacements:` in config/default.
const REPLACEMENTS_ENTRY: &str = "- path: apiserver_replacements.yaml";

/// The `namespace:` and `namePrefix:` of `config/default/kustomization.yaml` (init writes
/// `<project>-system` and `<project>-`), which the APIService's CA annotation and the
/// certificate's DNS names must name. Errors: the file is missing or not YAML.
fn default_namespace_and_prefix(plan: &Plan, project: &Project) -> Result<(String, String)> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Default {
        namespace: Option<String>,
        name_prefix: Option<String>,
    }
    let Some(text) = plan.read(layout::DEFAULT_KUSTOMIZATION)? else {
        bail!(
            "{} does not exist; `rsbuilder create apiserver` lists config/apiserver there. Restore it (rsbuilder init writes it), then re-run",
            layout::DEFAULT_KUSTOMIZATION
        );
    };
    let parsed: Default = serde_saphyr::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a kustomization: {e}",
            layout::DEFAULT_KUSTOMIZATION
        )
    })?;
    Ok((
        parsed
            .namespace
            .unwrap_or_else(|| format!("{}-system", project.project_name)),
        parsed.name_prefix.unwrap_or_default(),
    ))
}

/// The new text of `Cargo.toml` with the `apiserver` feature on the `rsbuilder-runtime`
/// dependency, or `None` when it has it (or `etcd`, which implies it). Only the line `init`
/// writes is rewritten; any other spelling is an error that says what to add by hand.
fn cargo_with_feature(text: &str, source: super::runtime::Source) -> Result<Option<String>> {
    use super::runtime::PACKAGE;
    let init_line = format!("{PACKAGE} = {}", source.dependency());
    let new_line = format!("{PACKAGE} = {}", source.dependency_with(&["apiserver"]));
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not valid TOML: {}",
            layout::CARGO_TOML,
            crate::engine::cargo_dep::toml_error(text, &e)
        )
    })?;
    let dep = table
        .get("dependencies")
        .and_then(|d| d.get("rsbuilder-runtime"));
    let Some(dep) = dep else {
        bail!(
            "{} has no rsbuilder-runtime dependency; the API server is built on it. Add `{init_line}` under [dependencies] (and the rsbuilder-runtime/ directory `rsbuilder init` writes), then re-run",
            layout::CARGO_TOML
        );
    };
    let has = dep
        .get("features")
        .and_then(|f| f.as_array())
        .is_some_and(|f| {
            f.iter()
                .any(|v| matches!(v.as_str(), Some("apiserver" | "etcd")))
        });
    if has {
        return Ok(None);
    }
    let lines: Vec<&str> = text.lines().filter(|l| l.trim() == init_line).collect();
    if lines.len() != 1 {
        bail!(
            "{}: the rsbuilder-runtime dependency is not written as `rsbuilder init` writes it, so rsbuilder does not edit it; add `features = [\"apiserver\"]` to it by hand, then re-run",
            layout::CARGO_TOML
        );
    }
    Ok(Some(text.replacen(&init_line, &new_line, 1)))
}

/// The Dockerfile's build of `/apiserver`, inserted at its `dockerfile-builds` marker: the
/// binary `src/bin/apiserver.rs` (its runtime feature is on the dependency, so the first stage
/// has already built it).
const DOCKERFILE_BUILD: &str =
    "# The aggregated API server (src/bin/apiserver.rs), which config/apiserver's Deployment runs.
RUN cargo build --release --bin apiserver \\
    && cp target/release/apiserver /apiserver";

/// The Dockerfile's copy of `/apiserver` into the image, inserted at its `dockerfile-binaries`
/// marker.
const DOCKERFILE_COPY: &str = "COPY --from=builder /apiserver /apiserver";

/// Whether the Dockerfile needs [`DOCKERFILE_BUILD`] and [`DOCKERFILE_COPY`]: `false` when it
/// already builds `/apiserver` (a second served kind, a re-run). Errors, before anything is
/// written: no Dockerfile, or one without the markers `init` writes (changed by the user, or
/// from an earlier rsbuilder); the message says what to add by hand.
fn dockerfile_needs_apiserver(text: Option<&str>) -> Result<bool> {
    let path = Path::new(layout::DOCKERFILE);
    let Some(text) = text else {
        bail!(
            "{}: missing; `rsbuilder create apiserver` adds the build of /apiserver to it. Restore it (rsbuilder init writes it), then re-run",
            layout::DOCKERFILE
        );
    };
    if text.contains("--bin apiserver") && text.contains(DOCKERFILE_COPY) {
        return Ok(false);
    }
    for marker in ["dockerfile-builds", "dockerfile-binaries"] {
        if let Err(e) = crate::engine::marker::locate(path, text, marker) {
            bail!(
                "{e}. Nothing was written: the image needs /apiserver, which config/apiserver's Deployment runs. `rsbuilder init` puts `# +kubebuilder:scaffold:dockerfile-builds` after the builder stage's `cargo build` of the manager and `# +kubebuilder:scaffold:dockerfile-binaries` after `COPY --from=builder /manager /manager`; or build it by hand (`cargo build --release --bin apiserver`, `cp target/release/apiserver /apiserver`, `{DOCKERFILE_COPY}`)"
            );
        }
    }
    Ok(true)
}

/// The fragment that lists [`DEFAULT_REPLACEMENTS`] in config/default (inserted at its
/// `default-sections` marker; see [`super::default_replacements_fragment`]), or `None` when
/// the entry is there.
fn replacements_fragment(text: &str) -> Result<Option<String>> {
    if text.lines().any(|l| l.trim() == REPLACEMENTS_ENTRY) {
        return Ok(None);
    }
    super::default_replacements_fragment(
        text,
        &format!("replacements:\n{REPLACEMENTS_ENTRY}"),
        REPLACEMENTS_ENTRY,
    )
    .map(Some)
}

/// Decides the resource, refusing what would clash with PROJECT: a CRD kind of the same
/// group-version (the APIService would hide it), the same kind already served (without
/// `--force`), a built-in or controller-only entry of that GVK, a `--plural` other than the
/// one a served version of the kind records. Errors name the flag.
fn resolve(project: &Project, opts: &ApiServerOptions) -> Result<(Resource, Option<usize>)> {
    let gvk = format!("{}/{} {}", opts.group, opts.version, opts.kind);
    crate::model::reserved::check_kind(&opts.kind)?;
    if let Some(crd) = project
        .resources
        .iter()
        .find(|r| r.group == opts.group && r.version == opts.version && r.api.is_some())
    {
        let group = match crd.domain.as_deref().unwrap_or(&project.domain) {
            "" => opts.group.clone(),
            domain => format!("{}.{domain}", opts.group),
        };
        bail!(
            "{group}/{} has the CRD kind {} (rsbuilder create api): its APIService would take the whole group-version from the cluster's CRDs. Serve the kind in another group or version",
            opts.version,
            crd.kind
        );
    }
    let existing = project
        .resources
        .iter()
        .position(|r| r.group == opts.group && r.version == opts.version && r.kind == opts.kind);
    if let Some(e) = existing.map(|i| &project.resources[i]) {
        if !is_served(e) {
            bail!(
                "{gvk} is in PROJECT already (a controller or a built-in type), not as a served kind; choose another kind"
            );
        }
        if !opts.force {
            bail!(
                "the kind {gvk} is already served by the API server (PROJECT); re-run with --force to re-render its types and sample files"
            );
        }
    }
    let sibling = project
        .resources
        .iter()
        .find(|r| r.group == opts.group && r.kind == opts.kind && is_served(r));
    let plural = match (sibling, opts.plural.as_deref()) {
        (Some(s), Some(p)) if p != s.plural_or_default() => {
            return Err(NameError {
                flag: "--plural".into(),
                value: p.into(),
                reason: format!(
                    "version {} of {} is served with the plural {:?}; every version of a kind shares it; drop --plural",
                    s.version,
                    s.kind,
                    s.plural_or_default()
                ),
            }
            .into());
        }
        (Some(s), _) => s.plural.clone(),
        (None, p) => p.map(str::to_owned),
    };
    let resource = Resource::custom(
        &opts.group,
        &project.domain,
        &opts.version,
        &opts.kind,
        plural.as_deref(),
        opts.namespaced,
    )?;
    Ok((resource, existing))
}

/// Builds the plan for `create apiserver` in the project at `dir`, writing nothing.
///
/// Errors: no PROJECT or another layout; invalid names (with the flag); the clashes of
/// `resolve`; a project without the runtime's `apiserver` module; a Cargo.toml or
/// config/default rsbuilder cannot edit (the message says what to add by hand). Missing
/// scaffold markers are reported by [`Plan::resolve`] / [`Plan::apply`].
pub fn plan(dir: &Path, opts: &ApiServerOptions) -> Result<Plan> {
    let mut plan = Plan::new(dir, opts.force);
    let mut project = super::load_project_or_explain(&plan, dir)?;
    let (resource, existing) = resolve(&project, opts)?;
    // The runtime's API server module, written into a project's copy of the runtime now.
    super::runtime::plan_server_part(&mut plan)?;
    let cargo = plan.read(layout::CARGO_TOML)?.unwrap_or_default();
    let cargo = cargo_with_feature(&cargo, super::runtime::Source::of(&project))?;
    let dockerfile = dockerfile_needs_apiserver(plan.read(layout::DOCKERFILE)?.as_deref())?;
    let default_text = plan
        .read(layout::DEFAULT_KUSTOMIZATION)?
        .unwrap_or_default();
    let (namespace, prefix) = default_namespace_and_prefix(&plan, &project)?;
    let replacements = replacements_fragment(&default_text)?;

    let module = resource.module();
    let n = Names {
        kind: resource.kind.clone(),
        module: module.clone(),
        group: resource.qualified_group(),
        version: resource.version.clone(),
        api_version: resource.api_version(),
        plural: resource.plural.clone(),
        plural_overridden: resource.plural_overridden,
        namespaced: resource.namespaced,
        project_name: project.project_name.clone(),
        namespace,
        prefix,
    };
    let header = rust_header(&plan)?;
    let krate = crate_name(&project);
    let kind_layout = KindLayout::of(&resource, project.multigroup);

    // The kind's own files, which the user edits.
    plan.add(File::at(
        files::types(&n.version, &module),
        format!("{header}{}", render(&TypesRs { n: &n })?),
    ));
    plan.add(File::at(
        kind_layout.sample(),
        render(&SampleYaml { n: &n })?,
    ));

    // Module wiring.
    plan.add(File::at(
        layout::shared(files::MOD),
        format!("{header}{}", render(&ModRs)?),
    ));
    plan.insert_sorted(layout::LIB_RS, "modules", "pub mod apiserver;");
    plan.insert_sorted(
        files::MOD,
        "apiserver-versions",
        format!("pub mod {};", n.version),
    );
    let version_mod = files::version_mod(&n.version);
    let version_mod_path = version_mod.path.clone();
    plan.add(File::at(
        version_mod,
        format!("{header}{}", render(&VersionModRs { n: &n })?),
    ));
    plan.insert(
        &version_mod_path,
        "apiserver-kinds",
        format!("pub mod {module}_types;\npub use {module}_types::*;"),
    );

    // The server binary and the runtime feature it needs.
    plan.add(File::at(
        layout::shared(files::BIN),
        format!("{header}{}", render(&BinRs)?),
    ));
    plan.insert(
        files::BIN,
        "apiserver-kinds",
        format!(
            "kinds.push(ApiKind::of::<{krate}::apiserver::{}::{}>().map_err(anyhow::Error::msg)?);",
            n.version, n.kind
        ),
    );
    if let Some(cargo) = cargo {
        plan.add(File::at(layout::owned(layout::CARGO_TOML), cargo));
        // The feature's crates at the versions rsbuilder pinned, not the newest: the
        // project's first build dropped them from its lock as unused.
        if let Some(lock) = super::lockfile::with_feature_pins(&plan)? {
            plan.add(File::verbatim(super::lockfile::FILE, lock));
        }
    }
    // The image holds the binary that config/apiserver's Deployment runs.
    if dockerfile {
        plan.insert(layout::DOCKERFILE, "dockerfile-builds", DOCKERFILE_BUILD);
        plan.insert(layout::DOCKERFILE, "dockerfile-binaries", DOCKERFILE_COPY);
    }

    // Manifests.
    for (name, text) in config_files(&n)? {
        plan.add(File::at(
            layout::shared(&format!("{}/{name}", files::CONFIG_DIR)),
            text,
        ));
    }
    // Opt-in with config/network-policy, as the manager's and the webhook's policies are.
    plan.add(File::at(
        layout::shared("config/network-policy/allow-apiserver-traffic.yaml"),
        render(&NetworkPolicyYaml { n: &n })?,
    ));
    plan.insert(
        layout::NETWORK_POLICY_KUSTOMIZATION,
        "network-policy-resources",
        "- allow-apiserver-traffic.yaml",
    );
    plan.add(File::at(
        files::apiservice(&n.group, &n.version),
        render(&ApiServiceYaml { n: &n })?,
    ));
    plan.insert(
        files::KUSTOMIZATION,
        "apiserver-resources",
        format!("- {}", files::apiservice_file(&n.group, &n.version)),
    );
    plan.add(File::at(
        layout::shared(DEFAULT_REPLACEMENTS),
        include_str!("../../templates/apiserver/config/default_replacements.yaml"),
    ));
    plan.insert(
        layout::DEFAULT_KUSTOMIZATION,
        "default-resources",
        "- ../apiserver",
    );
    if let Some(fragment) = replacements {
        plan.insert(layout::DEFAULT_KUSTOMIZATION, "default-sections", fragment);
    }
    plan.add(File::at(
        layout::shared(layout::SAMPLES_KUSTOMIZATION),
        include_str!("../../templates/api/samples_kustomization.yaml"),
    ));
    plan.insert(
        layout::SAMPLES_KUSTOMIZATION,
        "manifestskustomizesamples",
        kind_layout.sample_entry(),
    );

    // PROJECT.
    if existing.is_none() {
        let mut entry = ProjectResource {
            group: resource.group.clone(),
            kind: resource.kind.clone(),
            version: resource.version.clone(),
            domain: Some(resource.domain.clone()),
            path: Some(format!(
                "crate::apiserver::{}::{}",
                resource.version, resource.kind
            )),
            plural: resource.plural_overridden.then(|| resource.plural.clone()),
            ..Default::default()
        };
        entry.unknown.insert(
            PROJECT_FIELD.into(),
            serde_json::json!({ "namespaced": resource.namespaced }),
        );
        project.resources.push(entry);
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    }
    Ok(plan)
}

/// Runs `create apiserver` in `dir`: plans, then applies all-or-nothing. Errors: those of
/// [`plan`] and the engine's; nothing is written when an error is returned.
pub fn run(dir: &Path, opts: &ApiServerOptions) -> Result<Vec<Resolved>> {
    Ok(plan(dir, opts)?.apply()?)
}

/// What to do next, printed after the files.
pub fn next_steps(opts: &ApiServerOptions) -> String {
    format!(
        "Next: edit src/apiserver/{v}/{m}_types.rs, then run the server locally:\n  cargo run --bin apiserver -- --bind-address 127.0.0.1:8443 --store-path ./apiserver.redb\n  kubectl --server https://127.0.0.1:8443 --insecure-skip-tls-verify --token not-checked get {m}s\nIn a cluster, config/apiserver (listed in config/default) registers it through an APIService; it needs cert-manager, and an image that contains /apiserver.\n",
        v = opts.version,
        m = opts.kind.to_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT_CARGO: &str = "[package]\nname = \"x\"\n\n[dependencies]\nanyhow = \"1\"\nrsbuilder-runtime = { path = \"rsbuilder-runtime\" }\n";

    #[test]
    fn the_runtime_dependency_gets_the_apiserver_feature_once() {
        let once = cargo_with_feature(INIT_CARGO, Default::default())
            .unwrap()
            .unwrap();
        assert!(once.contains(
            "rsbuilder-runtime = { path = \"rsbuilder-runtime\", features = [\"apiserver\"] }"
        ));
        assert_eq!(cargo_with_feature(&once, Default::default()).unwrap(), None);
    }

    #[test]
    fn a_runtime_dependency_written_otherwise_is_left_to_the_user() {
        let text = INIT_CARGO.replace(
            "{ path = \"rsbuilder-runtime\" }",
            "{ path = \"rsbuilder-runtime\", features = [\"x\"] }",
        );
        let err = cargo_with_feature(&text, Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("add `features = [\"apiserver\"]`"), "{err}");
        let err = cargo_with_feature("[dependencies]\n", Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("has no rsbuilder-runtime dependency"), "{err}");
    }

    #[test]
    fn the_replacement_joins_a_replacements_list_that_ends_the_file() {
        let m = "# +kubebuilder:scaffold:default-sections\n";
        assert_eq!(
            replacements_fragment(&format!("patches:\n{m}"))
                .unwrap()
                .unwrap(),
            "replacements:\n- path: apiserver_replacements.yaml"
        );
        assert_eq!(
            replacements_fragment(&format!("replacements:\n- source:\n    kind: Service\n{m}"))
                .unwrap()
                .unwrap(),
            "- path: apiserver_replacements.yaml"
        );
        assert_eq!(
            replacements_fragment(&format!(
                "replacements:\n- path: apiserver_replacements.yaml\n{m}"
            ))
            .unwrap(),
            None
        );
        assert!(
            replacements_fragment(&format!("replacements:\n- a: 1\nimages:\n- b\n{m}")).is_err()
        );
    }
}
