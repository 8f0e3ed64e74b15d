//! `rsbuilder create api --external-api-crd <file>` and `--external-api-path <crate::path::Type>`:
//! a controller for a kind that another project defines and installs (cert-manager's
//! `Certificate`), as Kubebuilder's `--external-api-path` / `--external-api-domain` scaffold one.
//!
//! - From a CRD file: kopium turns the CRD's version into Rust types (`#[derive(CustomResource)]`
//!   with `schema = "disabled"`: the types only read and write objects, the other project owns
//!   the CRD), written to the tool-owned module `src/api/external/<group>/<version>.rs`. The
//!   group, kind, plural and scope come from the CRD. kopium runs as its binary: its library
//!   depends on another major version of kube and k8s-openapi than rsbuilder, which would build
//!   both twice (docs/create-api.md).
//! - From a type of a dependency: the crate must be in Cargo.toml's dependencies; the group,
//!   version and kind come from the flags, the domain from `--external-api-domain`.
//!
//! Either way the controller (`src/controller/<kind>_controller.rs`, the user's) is the
//! built-in-type controller's shape (no finalizer, RBAC for the kind's group and plural), and
//! PROJECT records the resource as Kubebuilder does (`external: true`, `domain`, `path`), with
//! the CRD file, for `alpha generate`, in `plugins: {external.rsbuilder.io/v1-alpha:
//! {resources: [{group, version, kind, crd}]}}`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use askama::Template;
use serde::Deserialize;
use serde_json::json;
use serde_saphyr::Spanned;

use super::{crate_name, rust_header, wire_controller};
use crate::model::layout::{self, KindLayout};
use crate::model::project::ProjectResource;
use crate::model::{NameError, Project, Resource};
use crate::scaffold::render;
use crate::scaffold::{File, Plan, Resolved};

/// The key of PROJECT's `plugins:` map that lists the kinds made from a CRD file:
/// `{resources: [{group, version, kind, crd}]}`, `crd` relative to the project root when the
/// file is inside it.
pub const PLUGIN_KEY: &str = "external.rsbuilder.io/v1-alpha";

/// Where the external kind's Rust type comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalSource {
    /// `--external-api-crd`: a CRD file, turned into types with kopium.
    Crd {
        /// The file (absolute, or relative to the working directory).
        file: PathBuf,
        /// How PROJECT names it, when it does already (`alpha generate`); else it is recorded
        /// relative to the project root when inside it, or as `file`.
        recorded: Option<String>,
    },
    /// `--external-api-path`: a type of a crate in Cargo.toml (`cert_manager::v1::Certificate`).
    Path(String),
}

/// The flags of `create api --external-api-crd` / `--external-api-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalOptions {
    /// The type's source.
    pub source: ExternalSource,
    /// `--group`: with a CRD, optional (checked against the CRD's group, the part before the
    /// first dot); with a path, the short group.
    pub group: Option<String>,
    /// `--version`: with a CRD, optional (the CRD's storage version by default).
    pub version: Option<String>,
    /// `--kind`: with a CRD, optional (checked against the CRD's kind).
    pub kind: Option<String>,
    /// `--external-api-domain`: with a path, the domain (the API group is `<group>.<domain>`).
    pub domain: Option<String>,
    /// `--plural`: with a path, when kube-derive's rule gets it wrong.
    pub plural: Option<String>,
    /// `--namespaced`: with a path, the kind's scope.
    pub namespaced: bool,
    /// `--controller`: scaffold the controller (with a CRD, `false` writes the types only).
    pub controller: bool,
    /// `--force`: generate the types and the controller again over existing files.
    pub force: bool,
    /// `alpha generate` re-creating the kind in a fresh project, whose Cargo.toml (`init`'s)
    /// does not have the dependency of `--external-api-path` yet: that check is skipped.
    pub replay: bool,
}

/// The refusal of `flag`'s `value`, with why.
fn flag_error(flag: &str, value: &str, reason: impl Into<String>) -> NameError {
    NameError {
        flag: flag.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

/// Whether PROJECT entry `r` is an external kind (Kubebuilder's `external: true`).
pub fn is_external(r: &ProjectResource) -> bool {
    r.external
}

/// The CRD file PROJECT records for the external kind `r` (relative to the project root, or
/// absolute), `None` for a kind from `--external-api-path`.
pub fn recorded_crd(project: &Project, r: &ProjectResource) -> Option<PathBuf> {
    project
        .plugin_resources(PLUGIN_KEY)
        .iter()
        .find(|e| {
            let field = |k: &str| e.get(k).and_then(|v| v.as_str());
            field("group") == Some(&r.group)
                && field("version") == Some(&r.version)
                && field("kind") == Some(&r.kind)
        })
        .and_then(|e| e.get("crd").and_then(|v| v.as_str()).map(PathBuf::from))
}

/// The flags that re-create the external kind `r` (`alpha generate`), its CRD file taken from
/// `root` (the old project). Errors: the CRD file PROJECT records is not there.
pub fn options(project: &Project, r: &ProjectResource, root: &Path) -> Result<ExternalOptions> {
    let gvk = format!("{}/{} {}", r.group, r.version, r.kind);
    let source = match recorded_crd(project, r) {
        Some(crd) => {
            check_recorded_crd(&crd, &gvk)?;
            let file = root.join(&crd);
            // A relative path is the project's own file: a link in the checkout leading out
            // of the project is not followed.
            if crd.is_relative()
                && let (Ok(real), Ok(real_root)) = (file.canonicalize(), root.canonicalize())
                && !real.starts_with(&real_root)
            {
                bail!(
                    "PROJECT records the external kind {gvk} as made from the CRD file {}, which a symbolic link leads out of the project; record the CRD's real path with `create api --external-api-crd <path> --force`, or copy the CRD into the project",
                    crd.display()
                );
            }
            if !file.is_file() {
                bail!(
                    "PROJECT records the external kind {gvk} as made from the CRD file {} (`create api --external-api-crd`), and {} is not there: put the CRD back at that path to re-create its types",
                    crd.display(),
                    file.display()
                );
            }
            ExternalSource::Crd {
                file,
                recorded: Some(crd.to_string_lossy().into_owned()),
            }
        }
        None => ExternalSource::Path(r.path.clone().with_context(|| {
            format!("PROJECT: the external kind {gvk} has no `path` (its Rust type)")
        })?),
    };
    let from_path = matches!(source, ExternalSource::Path(_));
    Ok(ExternalOptions {
        source,
        group: Some(r.group.clone()),
        version: Some(r.version.clone()),
        kind: Some(r.kind.clone()),
        domain: r.domain.clone(),
        plural: if from_path { r.plural.clone() } else { None },
        namespaced: true,
        controller: r.controller,
        force: false,
        replay: true,
    })
}

/// A `crd:` path PROJECT records (PROJECT comes with a checkout, so it is not trusted to name
/// any file): a relative path must stay inside the project (plain components, no `..`); an
/// absolute one, which `create api --external-api-crd` records for a CRD outside the project,
/// must name a `.yaml`, `.yml` or `.json` file. The file is read only after this check, and
/// errors about its contents name lines, never quote them.
fn check_recorded_crd(crd: &Path, gvk: &str) -> Result<()> {
    use std::path::Component;
    let plain = crd.components().all(|c| {
        matches!(
            c,
            Component::Normal(_) | Component::RootDir | Component::Prefix(_)
        )
    });
    let crd_like = crd
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"));
    if !plain || !crd_like || crate::engine::is_vcs_path(crd) {
        bail!(
            "PROJECT records the external kind {gvk} as made from {}, which is not a CRD file rsbuilder reads for PROJECT: the `crd:` entry must be a `.yaml`, `.yml` or `.json` file, inside the project unless it is an absolute path, with no `..`; fix that entry in PROJECT",
            crd.display()
        );
    }
    Ok(())
}

/// The fields of a CRD this command reads (serde ignores the rest; kopium reads the schema).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CrdDoc {
    api_version: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
    spec: Option<CrdSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CrdSpec {
    group: Spanned<String>,
    names: CrdNames,
    scope: String,
    versions: Vec<CrdVersion>,
}

#[derive(Debug, Deserialize)]
struct CrdNames {
    kind: Spanned<String>,
    plural: Spanned<String>,
}

#[derive(Debug, Deserialize)]
struct CrdVersion {
    name: String,
    #[serde(default)]
    storage: bool,
}

/// The kind a CRD file describes, checked.
#[derive(Debug)]
struct CrdKind {
    /// The CRD's name (`certificates.cert-manager.io`), for messages and the header.
    name: String,
    resource: Resource,
    text: String,
}

/// Reads and checks the CRD file `file` for `opts`. Errors name `file:line`: not YAML, not a
/// `apiextensions.k8s.io/v1` CustomResourceDefinition, a group without a dot, a `--version`
/// the CRD does not have, a `--group` / `--kind` that differs from the CRD's.
fn read_crd(file: &Path, opts: &ExternalOptions) -> Result<CrdKind> {
    // As the user gave it: relative to the working directory when under it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let shown = file.strip_prefix(&cwd).unwrap_or(file).display();
    let text = crate::engine::regular::read_path(file)
        .with_context(|| format!("cannot read the CRD {shown}"))?;
    // One file, one CRD: serde-saphyr's own message for a stream names its API functions.
    if serde_saphyr::from_multiple::<serde::de::IgnoredAny>(&text).is_ok_and(|docs| docs.len() > 1)
    {
        bail!(
            "{shown}: holds several YAML documents; --external-api-crd takes a file with one CustomResourceDefinition, as `kubectl get crd <name> -o yaml` prints it"
        );
    }
    let doc: CrdDoc = serde_saphyr::from_str(&text).map_err(|e| {
        let at = e
            .location()
            .map(|l| format!("{shown}:{}:{}", l.line(), l.column()))
            .unwrap_or_else(|| shown.to_string());
        // A path from PROJECT may name any file: the parser's message can quote it.
        match opts.replay {
            true => anyhow::anyhow!("{at}: cannot be read as a CustomResourceDefinition"),
            false => anyhow::anyhow!("{at}: cannot be read as a CustomResourceDefinition: {e}"),
        }
    })?;
    let at = |line: u64| format!("{shown}:{}", line.max(1));
    let kind_line = doc.kind.as_ref().map_or(1, |k| k.referenced.line());
    match (&doc.api_version, &doc.kind) {
        (Some(v), Some(k))
            if v.value == "apiextensions.k8s.io/v1" && k.value == "CustomResourceDefinition" => {}
        _ if opts.replay => bail!(
            "{}: not a CustomResourceDefinition of apiextensions.k8s.io/v1",
            at(kind_line)
        ),
        (v, k) => bail!(
            "{}: not a CustomResourceDefinition of apiextensions.k8s.io/v1 (apiVersion {:?}, kind {:?}); --external-api-crd takes a CRD file, as `kubectl get crd <name> -o yaml` prints it",
            at(kind_line),
            v.as_ref().map(|v| v.value.as_str()).unwrap_or(""),
            k.as_ref().map(|k| k.value.as_str()).unwrap_or("")
        ),
    }
    let Some(spec) = doc.spec else {
        bail!("{}: the CRD has no spec", at(kind_line));
    };
    let group = &spec.group.value;
    let Some((short, domain)) = group.split_once('.') else {
        // A path from PROJECT may name any file: its values are not quoted.
        if opts.replay {
            bail!(
                "{}: the CRD's group has no dot; the API server requires one",
                at(spec.group.referenced.line())
            );
        }
        bail!(
            "{}: the CRD's group {group:?} has no dot; the API server requires one (a domain such as cert-manager.io)",
            at(spec.group.referenced.line())
        );
    };
    let name = format!("{}.{group}", spec.names.plural.value);
    let versions: Vec<&str> = spec.versions.iter().map(|v| v.name.as_str()).collect();
    let version = match &opts.version {
        Some(v) if versions.contains(&v.as_str()) => v.clone(),
        Some(v) => {
            return Err(flag_error(
                "--version",
                v,
                format!(
                    "the CRD {name} ({shown}) has the versions {}",
                    versions.join(", ")
                ),
            )
            .into());
        }
        None => match spec
            .versions
            .iter()
            .find(|v| v.storage)
            .or(spec.versions.first())
        {
            Some(v) => v.name.clone(),
            None => bail!("{}: the CRD {name} has no versions", at(kind_line)),
        },
    };
    let kind = &spec.names.kind.value;
    for (flag, given, from_crd) in [
        ("--group", &opts.group, short),
        ("--kind", &opts.kind, kind.as_str()),
    ] {
        if let Some(given) = given
            && given != from_crd
        {
            return Err(flag_error(
                flag,
                given,
                format!(
                    "the CRD {name} ({shown}) has {from_crd:?}; drop {flag}, it is read from the CRD"
                ),
            )
            .into());
        }
    }
    let resource = Resource::custom(
        short,
        domain,
        &version,
        kind,
        Some(&spec.names.plural.value),
        spec.scope == "Namespaced",
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", at(spec.names.kind.referenced.line())))?;
    Ok(CrdKind {
        name,
        resource,
        text,
    })
}

/// Where kopium is: on `PATH`, else in cargo's bin directory (`$CARGO_HOME/bin`, `~/.cargo/bin`),
/// where `cargo install kopium` puts it.
fn find_kopium() -> Option<PathBuf> {
    let exe = format!("kopium{}", std::env::consts::EXE_SUFFIX);
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(&exe)).find(|p| p.is_file())
}

/// kopium's output for `version` of the CRD `crd` (its text on standard input), and kopium's
/// version. Errors: kopium missing (`cargo install kopium`), failing, or printing no type.
fn run_kopium(crd: &CrdKind, version: &str) -> Result<(String, String)> {
    let Some(kopium) = find_kopium() else {
        bail!(
            "kopium is not installed (looked on PATH and in ~/.cargo/bin): rsbuilder runs it to turn the CRD into Rust types; install it with `cargo install kopium`"
        );
    };
    let run = |args: &[&str], input: Option<&str>| -> Result<String> {
        let mut child = Command::new(&kopium)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", kopium.display()))?;
        let mut stdin = child.stdin.take().context("kopium's standard input")?;
        if let Some(input) = input {
            use std::io::Write as _;
            stdin
                .write_all(input.as_bytes())
                .context("writing the CRD to kopium")?;
        }
        drop(stdin);
        let out = child.wait_with_output().context("waiting for kopium")?;
        if !out.status.success() {
            bail!(
                "{} {} failed ({}): {}",
                kopium.display(),
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        String::from_utf8(out.stdout).context("kopium printed text that is not UTF-8")
    };
    let kopium_version = run(&["--version"], None)?.trim().to_owned();
    let types = run(
        &["-f", "-", "--api-version", version, "--docs"],
        Some(&crd.text),
    )
    .with_context(|| format!("generating the types of the CRD {}", crd.name))?;
    if !types.contains("CustomResource") {
        bail!(
            "kopium printed no CustomResource type for version {version} of the CRD {}",
            crd.name
        );
    }
    Ok((types, kopium_version))
}

/// The generated types file: the project's license header, a header saying what made it,
/// then kopium's code without kopium's own header lines.
fn types_file(header: &str, crd: &CrdKind, file: &str, types: &str, kopium: &str) -> String {
    let r = &crd.resource;
    let code: Vec<&str> = types
        .lines()
        .skip_while(|l| {
            l.starts_with("// WARNING: generated by kopium")
                || l.starts_with("// kopium command:")
                || l.starts_with("// kopium version:")
        })
        .skip_while(|l| l.is_empty())
        .collect();
    format!(
        "{header}//! The types of {kind} ({api_version}), from the CRD {name}.\n//!\n//! Generated with {kopium} by\n//! `rsbuilder create api --external-api-crd {file} --version {version}`:\n//! do not edit; run that command again with `--force` to regenerate. The CRD is the other\n//! project's to install, so `rsbuilder manifests` writes none for the kinds of\n//! `src/api/external/`.\n\n{code}\n",
        kind = r.kind,
        api_version = r.api_version(),
        name = crd.name,
        version = r.version,
        code = code.join("\n"),
    )
}

/// What the external controller template fills in.
struct ExternalNames {
    kind: String,
    api_version: String,
    /// The API group (`cert-manager.io`).
    group: String,
    plural: String,
    type_path: String,
    reconciler: String,
    controller_name: String,
    /// Where the type comes from, for the module docs.
    source: String,
}

#[derive(Template)]
#[template(path = "api/controller_external.rs")]
struct ExternalControllerRs<'a> {
    n: &'a ExternalNames,
}

/// How `file` is recorded in PROJECT: relative to the project root when it is inside it (so
/// the project can move), else as given.
fn recorded_path(root: &Path, file: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (root, file_abs) = (abs(root), abs(file));
    file_abs
        .strip_prefix(&root)
        .map(Path::to_path_buf)
        .unwrap_or(file_abs)
        .to_string_lossy()
        .into_owned()
}

/// Checks `--external-api-path` and the flags that go with it, and returns its resource.
/// Errors: a path that is not `crate_name::...::Type`, a path into this crate, a crate that
/// is not among Cargo.toml's dependencies (naming Cargo.toml), a missing `--group`,
/// `--version`, `--kind` or `--external-api-domain`, names breaking their rules.
fn check_path(plan: &Plan, opts: &ExternalOptions, path: &str) -> Result<Resource> {
    let segments: Vec<&str> = path.split("::").collect();
    crate::model::validate::rust_path(path)
        .ok()
        .filter(|()| segments.len() >= 2)
        .ok_or_else(|| {
            flag_error(
                "--external-api-path",
                path,
                "must be the Rust path of a type in a dependency: <crate>::<module>::<Type>, such as cert_manager_types::v1::Certificate",
            )
        })?;
    if matches!(segments[0], "crate" | "self" | "super") {
        return Err(flag_error(
            "--external-api-path",
            path,
            "names a type of this crate; a kind of this project is made with `create api` without --external-api-path",
        )
        .into());
    }
    let cargo = plan
        .read(layout::CARGO_TOML)?
        .with_context(|| format!("{} is missing", layout::CARGO_TOML))?;
    let deps = crate::engine::cargo_dep::crate_names(&cargo).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            crate::engine::cargo_dep::describe(Path::new(layout::CARGO_TOML), &e)
        )
    })?;
    if !opts.replay && !deps.iter().any(|d| d == segments[0]) {
        return Err(flag_error(
            "--external-api-path",
            path,
            format!(
                "the crate {} is not a dependency in {}; add it to [dependencies] first (`cargo add {}`)",
                segments[0],
                layout::CARGO_TOML,
                segments[0].replace('_', "-")
            ),
        )
        .into());
    }
    let need = |flag: &str, v: &Option<String>| -> Result<String> {
        v.clone().with_context(|| {
            format!("{flag} is needed with --external-api-path (the kind's API group is <group>.<external-api-domain>)")
        })
    };
    let group = need("--group", &opts.group)?;
    let version = need("--version", &opts.version)?;
    let kind = need("--kind", &opts.kind)?;
    let domain = need("--external-api-domain", &opts.domain)?;
    if segments.last() != Some(&kind.as_str()) {
        return Err(flag_error(
            "--external-api-path",
            path,
            format!("must end in the kind's type, {kind} (--kind)"),
        )
        .into());
    }
    crate::model::gvk::validate_domain(&domain).map_err(|mut e| {
        e.flag = "--external-api-domain".into();
        e
    })?;
    Ok(Resource::custom(
        &group,
        &domain,
        &version,
        &kind,
        opts.plural.as_deref(),
        opts.namespaced,
    )?)
}

/// Builds the plan for `create api --external-api-crd` / `--external-api-path` in the project
/// at `dir`, writing nothing.
///
/// Errors: those of the CRD file or the path (see [`ExternalSource`]); kopium missing or
/// failing; the kind already in PROJECT (unless `--force` on the same external kind); a kind
/// name Rust or the project's modules already use; a controller file another kind owns.
pub fn plan(dir: &Path, opts: &ExternalOptions) -> Result<Plan> {
    Ok(plan_kind(dir, opts)?.0)
}

/// [`plan`], and the resource it scaffolds.
fn plan_kind(dir: &Path, opts: &ExternalOptions) -> Result<(Plan, Resource, bool)> {
    let mut plan = Plan::new(dir, opts.force);
    let mut project = crate::scaffold::load_project_or_explain(&plan, dir)?;
    let (resource, crd) = match &opts.source {
        ExternalSource::Crd { file, .. } => {
            let crd = read_crd(file, opts)?;
            (crd.resource.clone(), Some(crd))
        }
        ExternalSource::Path(path) => (check_path(&plan, opts, path)?, None),
    };
    crate::model::reserved::check_kind(&resource.kind)?;
    let gvk = format!("{}/{} {}", resource.group, resource.version, resource.kind);
    if let Some(e) = project.find(&resource.group, &resource.version, &resource.kind) {
        if !is_external(e) {
            bail!(
                "{gvk} is already in PROJECT as a kind of this project, not an external one; an external kind needs a group, version and kind of its own"
            );
        }
        if !opts.force {
            bail!(
                "the external kind {gvk} already exists in PROJECT; re-run with --force to generate its types and controller again"
            );
        }
    }
    if project.multigroup && opts.controller {
        layout::check_group_module(&resource.group)?;
    }
    let files = KindLayout::of(&resource, project.multigroup);
    // Another version of this kind with its controller: the controller file is that one's.
    if opts.controller
        && !opts.force
        && let Some(other) = project.resources.iter().find(|r| {
            r.controller
                && r.group == resource.group
                && r.kind == resource.kind
                && r.version != resource.version
        })
    {
        bail!(
            "{} of {} already has its controller, {} (scaffolded with version {}); add version {}'s types alone with --controller=false (--force would overwrite that controller)",
            resource.kind,
            resource.qualified_group(),
            files.controller().path.display(),
            other.version,
            resource.version
        );
    }
    if opts.controller
        && let Some(other) = project.resources.iter().find(|r| {
            r.controller
                && !(r.group == resource.group && r.kind == resource.kind)
                && r.kind.to_lowercase() == files.module
                // In a multigroup project each group has a controller directory of its own.
                && !(project.multigroup && r.group != resource.group)
        })
    {
        let why = format!(
            "the kind {} of group {} already owns {}: rsbuilder names controller files by lower-case kind{}",
            other.kind,
            other.group,
            files.controller().path.display(),
            if project.multigroup {
                ""
            } else {
                "; `rsbuilder edit --multigroup=true` gives each group a controller directory of its own"
            }
        );
        return Err(match &opts.source {
            // The kind comes from the CRD file, not from a flag.
            ExternalSource::Crd { file, .. } => {
                anyhow::anyhow!("{}: its kind {}: {why}", file.display(), resource.kind)
            }
            ExternalSource::Path(_) => flag_error("--kind", &resource.kind, why).into(),
        });
    }
    let qualified = resource.qualified_group();
    let header = rust_header(&plan)?;
    let krate = crate_name(&project);
    let existing = project
        .find(&resource.group, &resource.version, &resource.kind)
        .cloned();

    let (type_path, source, crd_record) = match (&opts.source, &crd) {
        (ExternalSource::Crd { file, recorded }, Some(crd)) => {
            let (types, kopium) = run_kopium(crd, &resource.version)?;
            let recorded = recorded.clone().unwrap_or_else(|| recorded_path(dir, file));
            plan.add(File::at(
                layout::external::types(&qualified, &resource.version),
                types_file(&header, crd, &recorded, &types, &kopium),
            ));
            wire_types(
                &mut plan,
                &header,
                &qualified,
                &resource.version,
                project.multigroup,
            )?;
            (
                layout::external::type_path(&qualified, &resource.version, &resource.kind),
                format!(
                    "its Rust types are generated from the CRD {} into src/api/external/",
                    crd.name
                ),
                Some(recorded),
            )
        }
        (ExternalSource::Path(path), _) => (
            path.clone(),
            format!("its Rust type is `{path}`, from a dependency"),
            None,
        ),
        (ExternalSource::Crd { file, .. }, None) => {
            bail!("the CRD {} was not read", file.display())
        }
    };

    if opts.controller {
        let n = ExternalNames {
            kind: resource.kind.clone(),
            api_version: resource.api_version(),
            group: qualified.clone(),
            plural: resource.plural.clone(),
            type_path: type_path.clone(),
            reconciler: format!("{}Reconciler", resource.kind),
            controller_name: super::controller_name(&resource, project.multigroup),
            source,
        };
        plan.add(File::at(
            files.controller(),
            format!("{header}{}", render(&ExternalControllerRs { n: &n })?),
        ));
        if !existing.as_ref().is_some_and(|e| e.controller) {
            wire_controller(
                &mut plan,
                &header,
                &krate,
                &files,
                &files.controller_module(),
                &format!("{}Reconciler", resource.kind),
            )?;
        }
    }

    if existing.is_none() {
        let entry = ProjectResource {
            controller: opts.controller,
            domain: Some(resource.domain.clone()),
            external: true,
            group: resource.group.clone(),
            kind: resource.kind.clone(),
            path: Some(type_path),
            plural: resource.plural_overridden.then(|| resource.plural.clone()),
            version: resource.version.clone(),
            ..Default::default()
        };
        project.resources.push(entry);
        if let Some(crd) = crd_record {
            project.push_plugin_resource(
                PLUGIN_KEY,
                json!({
                    "crd": crd,
                    "group": resource.group,
                    "kind": resource.kind,
                    "version": resource.version,
                }),
            )?;
        }
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    } else if let Some(e) = existing.filter(|e| opts.controller && !e.controller) {
        if let Some(entry) = project.find_mut(&e.group, &e.version, &e.kind) {
            entry.controller = true;
        }
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    }
    let multigroup = project.multigroup;
    Ok((plan, resource, multigroup))
}

/// The module wiring of a generated types file: `src/api/mod.rs` (created when missing) with
/// `pub mod external;`, `src/api/external/mod.rs` with the group, the group's module with the
/// version, and `pub mod api;` in `src/lib.rs`.
fn wire_types(
    plan: &mut Plan,
    header: &str,
    qualified: &str,
    version: &str,
    multigroup: bool,
) -> Result<()> {
    plan.add(File::at(
        layout::shared(layout::API_MOD),
        format!("{header}{}", super::api_mod_text(multigroup)?),
    ));
    plan.insert_sorted(
        layout::API_MOD,
        "api-versions",
        layout::external::API_MOD_LINE,
    );
    plan.add(File::at(
        layout::shared(layout::external::MOD),
        format!(
            "{header}//! Types of API groups other projects define and install, generated from their CRDs by\n//! `rsbuilder create api --external-api-crd` (tool-owned). `rsbuilder manifests` writes no CRD\n//! for them.\n\n// +kubebuilder:scaffold:external-groups\n"
        ),
    ));
    plan.insert_sorted(
        layout::external::MOD,
        "external-groups",
        format!("pub mod {};", layout::external::group_module(qualified)),
    );
    let group_mod = layout::external::group_mod(qualified);
    let group_mod_path = group_mod.path.clone();
    plan.add(File::at(
        group_mod,
        format!(
            "{header}//! The versions of the API group `{qualified}`, generated from its CRDs.\n\n// +kubebuilder:scaffold:external-versions\n"
        ),
    ));
    plan.insert_sorted(
        &group_mod_path,
        "external-versions",
        format!("pub mod {};", layout::external::version_module(version)),
    );
    plan.insert_sorted(layout::LIB_RS, "modules", "pub mod api;");
    Ok(())
}

/// Runs `create api` for an external kind in `dir`: plans, then applies all-or-nothing.
/// Returns what happened to each file (for [`crate::scaffold::report`]) and what to do next.
///
/// Errors: those of [`plan`] and of the engine; nothing is written when an error is returned.
pub fn run(dir: &Path, opts: &ExternalOptions) -> Result<(Vec<Resolved>, String)> {
    let (plan, resource, multigroup) = plan_kind(dir, opts)?;
    let done = plan.apply()?;
    let mut next = String::new();
    if opts.controller {
        next.push_str(&format!(
            "Write the reconcile logic in {}; the CRD of {} must be installed in the cluster (by the project that owns it).\n",
            layout::controller_file(
                layout::group_of(multigroup, &resource.group),
                &resource.kind
            )
            .display(),
            resource.crd_name()
        ));
    }
    if let ExternalSource::Crd {
        file,
        recorded: None,
    } = &opts.source
    {
        let recorded = recorded_path(dir, file);
        if Path::new(&recorded).is_absolute() {
            next.push_str(&format!(
                "Note: the CRD {recorded} is outside the project, so PROJECT records it by that absolute path and `rsbuilder alpha generate` reads it from there; to keep the project self-contained, copy it into the project (hack/crds/, for example) and change its `crd:` entry in PROJECT to the new path.\n"
            ));
        }
    }
    Ok((done, next))
}
