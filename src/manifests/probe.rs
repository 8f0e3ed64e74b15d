//! The compile fallback: kinds whose schema depends on code rsbuilder does not evaluate
//! statically (a `schema_with` function with logic, `#[kube(schema = "manual")]`, a default
//! computed at run time, a type of a crate rsbuilder does not know) are derived by compiling a
//! small probe program against the user's own crate, which prints `crd()` of exactly those
//! kinds as JSON.
//!
//! The probe is built as part of the crate's own workspace: `cargo metadata` finds the
//! workspace and its target directory, `cargo build --lib` builds the crate's library as the
//! user's `cargo build` does (the workspace's resolution and `Cargo.lock`, its features, its
//! profile, its target directory: what was compiled before is reused), and rustc compiles the
//! probe's `main` against that library and its dependencies (`--extern`, `-L dependency=`, the
//! paths from cargo's JSON messages). The probe's files are in
//! `<target>/rsbuilder-probe/<package>-<id>/`: `main.rs`, the `probe` binary, and
//! `cache/<key>.json` the output of earlier runs. The key is a SHA-256 of everything the output
//! depends on: the crate's files (and those of its path dependencies), the workspace's
//! manifests, its `Cargo.lock`, the features, `K8S_OPENAPI_ENABLED_VERSION`, rsbuilder's
//! version and the kinds asked for; a run with nothing changed reads the cache and compiles
//! nothing.
//!
//! The probe calls `<lib>::path::Kind::crd()`, so a kind must be reachable from the crate's
//! library root through `pub` modules, and the crate must have a library target; otherwise
//! the kind is refused with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::cfg::FeatureFlags;
use super::crd::storage::StorageChoice;
use super::crd::{KindOutcome, VersionSite};
use super::diag::Diagnostic;

/// How `manifests` evaluates the kinds (`--evaluate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Evaluate {
    /// Statically; a kind whose only obstacles are code rsbuilder cannot run is compiled.
    #[default]
    Auto,
    /// Statically only; such kinds are refused.
    Static,
    /// Every kind through the compiler.
    Compile,
}

/// What runs around the compiler: `manifests` releases the project lock before cargo and
/// rustc run and takes it again after, so that other commands can use the project meanwhile
/// (see [`super::run::run`], whose gate is in `manifests/gate.rs`).
pub trait CompileGate: std::fmt::Debug + Send + Sync {
    /// Called before the probe is built (only when the cache does not answer).
    fn before(&self);
    /// Called after the probe was built and run, whatever the result.
    fn after(&self);
}

/// One kind for the probe: its name, the root types of its versions, and the storage version
/// chosen outside its attributes.
#[derive(Debug, Clone)]
pub struct Request {
    /// `Kind.group`.
    pub name: String,
    /// Where each version is and how it is named.
    pub versions: Vec<VersionSite>,
    /// The storage version from a `merge_crds` call, the metadata or a flag.
    pub storage: Option<StorageChoice>,
    /// Compiled only to check the static CRD (`--verify`), not because it needs it.
    pub verify: bool,
}

impl Request {
    /// How messages start: `Foo.example.com needs compiling` or, for `--verify`,
    /// `Foo.example.com cannot be verified`.
    fn need(&self) -> String {
        if self.verify {
            format!("{} cannot be verified by compiling it", self.name)
        } else {
            format!("{} needs compiling", self.name)
        }
    }
}

impl Request {
    /// The request for a kind the static engine derived or refused.
    pub fn of<T>(k: &KindOutcome<T>) -> Self {
        Self {
            name: k.name(),
            versions: k.versions.clone(),
            storage: k.storage.clone(),
            verify: false,
        }
    }
}

/// What the probe gave: one result per request, in order.
#[derive(Debug)]
pub struct Run {
    /// The kind's CRD (versions merged as `merge_crds` does), or why there is none.
    pub kinds: Vec<Result<CustomResourceDefinition, Vec<Diagnostic>>>,
    /// Whether the output came from the cache (nothing was compiled).
    pub cached: bool,
    /// How many kinds came from the cache.
    pub cache_hits: usize,
}

/// The facts about the user's crate that the probe needs, from its `Cargo.toml`.
#[derive(Debug, Clone)]
struct CrateInfo {
    dir: PathBuf,
    package: String,
    /// The library's crate name (`[lib] name`, else the package name with `-` as `_`).
    lib_name: String,
    /// The library root, when there is a library target.
    lib_root: Option<PathBuf>,
    /// The package of kube-rs the crate depends on (`kube` or `kube-core`), whose
    /// `kube_core::CustomResourceExt` the probe calls.
    kube: Option<String>,
}

impl CrateInfo {
    fn read(dir: &Path) -> Result<Self, String> {
        let manifest = dir.join("Cargo.toml");
        let text = crate::engine::regular::read_path(&manifest).map_err(|_| {
            format!(
                "there is no Cargo.toml in {} to build a probe against (run in the crate, or pass --dir)",
                dir.display()
            )
        })?;
        let doc: toml::Table = toml::from_str(&text)
            .map_err(|e| format!("{}: not valid TOML: {e}", manifest.display()))?;
        let package = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .ok_or_else(|| {
                format!(
                    "{} has no [package] name (a workspace root?): run in the crate that declares the kinds",
                    manifest.display()
                )
            })?
            .to_string();
        let lib = doc.get("lib");
        let lib_name = lib
            .and_then(|l| l.get("name"))
            .and_then(|n| n.as_str())
            .map(String::from)
            .unwrap_or_else(|| package.replace('-', "_"));
        let autolib = doc
            .get("package")
            .and_then(|p| p.get("autolib"))
            .and_then(|a| a.as_bool())
            .unwrap_or(true);
        let lib_path = lib
            .and_then(|l| l.get("path"))
            .and_then(|p| p.as_str())
            .unwrap_or("src/lib.rs");
        let lib_root = (lib.is_some() || autolib)
            .then(|| dir.join(lib_path))
            .filter(|p| p.is_file());
        let deps = doc.get("dependencies").and_then(|d| d.as_table());
        let dep = |wanted: &str| -> Option<String> {
            let deps = deps?;
            deps.iter().find_map(|(key, v)| {
                let package = v.get("package").and_then(|p| p.as_str()).unwrap_or(key);
                (package == wanted).then(|| key.clone())
            })
        };
        let kube = dep("kube")
            .map(|_| "kube".to_string())
            .or_else(|| dep("kube-core").map(|_| "kube-core".to_string()));
        Ok(Self {
            dir: dir.to_path_buf(),
            package,
            lib_name,
            lib_root,
            kube,
        })
    }
}

/// Compiles a probe against the crate in `crate_dir` for `requests` (or reads its cached
/// output) and returns each kind's `crd()`, several versions merged as `merge_crds` does.
///
/// Per kind, errors (as diagnostics at the kind's first version): no crate directory or
/// `Cargo.toml`, no library target, a version not reachable from the library root through
/// `pub` items, a crate that depends on neither kube nor kube-core, a probe that does not
/// compile (the compiler's errors, trimmed), `crd()` panicking, versions that cannot be
/// merged.
///
/// `features` are the `manifests` feature flags, given to cargo as cargo takes them. `skip`
/// names directories left out of the cache key (the manifests' own output directory, which the
/// run itself rewrites). `gate` is called around the build (not when the cache answers).
/// `locked`: cargo builds `--locked` where the workspace has a `Cargo.lock` (`--check`);
/// otherwise, like `cargo build`, it may update the lock to fit Cargo.toml.
pub fn run(
    crate_dir: Option<&Path>,
    requests: &[Request],
    features: &FeatureFlags,
    skip: &[PathBuf],
    gate: Option<&dyn CompileGate>,
    locked: bool,
) -> Run {
    let mut results: Vec<Option<Result<CustomResourceDefinition, Vec<Diagnostic>>>> =
        vec![None; requests.len()];
    let fail_all = |reason: &str, results: &mut Vec<Option<Result<_, Vec<Diagnostic>>>>| {
        for (r, req) in results.iter_mut().zip(requests) {
            if r.is_none() {
                *r = Some(Err(vec![at_kind(
                    req,
                    format!("{}, {reason}", req.need()),
                    None,
                )]));
            }
        }
    };
    let finish = |results: Vec<Option<Result<_, _>>>, cached: bool, hits: usize| Run {
        kinds: results
            .into_iter()
            .map(|r| r.expect("every request has a result"))
            .collect(),
        cached,
        cache_hits: hits,
    };
    let Some(dir) = crate_dir else {
        fail_all(
            "and there is no crate to compile it in (no Cargo.toml: run in the crate, or pass --dir)",
            &mut results,
        );
        return finish(results, false, 0);
    };
    let info = match CrateInfo::read(dir) {
        Ok(i) => i,
        Err(e) => {
            fail_all(&format!("and {e}"), &mut results);
            return finish(results, false, 0);
        }
    };
    // Which requests the probe can name.
    let mut asked: Vec<usize> = Vec::new();
    for (i, req) in requests.iter().enumerate() {
        match nameable(&info, req) {
            Ok(()) => asked.push(i),
            Err((site, why, help)) => {
                results[i] = Some(Err(vec![at_site(
                    site,
                    format!("{}, but {why}", req.need()),
                    Some(help),
                )]))
            }
        }
    }
    if asked.is_empty() {
        return finish(results, false, 0);
    }
    if info.kube.is_none() {
        for &i in &asked {
            results[i] = Some(Err(vec![at_kind(
                &requests[i],
                format!(
                    "{}, but {}/Cargo.toml depends on neither kube nor kube-core, whose CustomResourceExt the probe calls",
                    requests[i].need(),
                    info.dir.display()
                ),
                None,
            )]));
        }
        return finish(results, false, 0);
    }
    let ws = match Workspace::read(&info, features, locked) {
        Ok(ws) => ws,
        Err(e) => {
            for &i in &asked {
                results[i] = Some(Err(vec![compile_failure(
                    &requests[i],
                    &info,
                    &info.dir,
                    &e,
                )]));
            }
            return finish(results, false, 0);
        }
    };
    let roots: Vec<Vec<String>> = {
        let mut r: Vec<Vec<String>> = asked
            .iter()
            .flat_map(|&i| requests[i].versions.iter().map(|v| v.rust_path.clone()))
            .collect();
        r.sort();
        r.dedup();
        r
    };
    let lock = find_lock(&info.dir);
    let skip: Vec<PathBuf> = skip.iter().map(|p| canonical(p)).collect();
    let inputs = cache_key(&info, &ws, &roots, features, &skip);
    let cache_dir = ws.probe_dir(&info.package).join("cache");
    let base = ws.probe_dir(&info.package);
    let cache_file = cache_dir.join(format!("{}.json", key_with_lock(&inputs, lock.as_ref())));
    let (output, cached) = match read_cache(&cache_file) {
        Some(v) => (Ok(v), true),
        None => {
            if let Some(g) = gate {
                g.before();
            }
            let built = build_probe(&info, &ws, &base, &roots, features);
            if let Some(g) = gate {
                g.after();
            }
            if let Ok(v) = &built {
                // Cached under the lock cargo left: a first build may have written it (as
                // `cargo build` does), and the next run reads that one.
                let lock = find_lock(&info.dir);
                write_cache(
                    &cache_dir.join(format!("{}.json", key_with_lock(&inputs, lock.as_ref()))),
                    v,
                );
            }
            (built, false)
        }
    };
    let output = match output {
        Ok(o) => o,
        Err(e) => {
            for &i in &asked {
                results[i] = Some(Err(vec![compile_failure(
                    &requests[i],
                    &info,
                    &base,
                    &e.text,
                )]));
            }
            return finish(results, false, 0);
        }
    };
    let hits = if cached { asked.len() } else { 0 };
    for &i in &asked {
        results[i] = Some(kind_from_output(&requests[i], &output));
    }
    finish(results, cached, hits)
}

/// The diagnostic of a kind whose probe did not compile, with the compiler's errors.
fn compile_failure(req: &Request, info: &CrateInfo, base: &Path, errors: &str) -> Diagnostic {
    at_kind(
        req,
        format!(
            "{}, and compiling the probe against {} failed ({}):\n{errors}",
            req.need(),
            info.package,
            base.display()
        ),
        Some("fix the crate so that `cargo build` passes, or run with --evaluate static to see what rsbuilder could not evaluate".into()),
    )
}

/// A probe build that failed: the compiler's errors (trimmed) and the root types the errors
/// quote (their line of the probe's `main`).
#[derive(Debug, Clone)]
struct BuildError {
    text: String,
    /// The root types the errors quote, each with the error messages that quote it.
    blamed: Vec<(Vec<String>, String)>,
}

impl From<String> for BuildError {
    fn from(text: String) -> Self {
        Self {
            text,
            blamed: Vec::new(),
        }
    }
}

/// Whether the probe can name every version of `req` from the library root: `Err` with the
/// version, the reason and the fix otherwise.
fn nameable<'r>(
    info: &CrateInfo,
    req: &'r Request,
) -> Result<(), (&'r VersionSite, String, String)> {
    let Some(first) = req.versions.first() else {
        return Ok(());
    };
    let Some(lib_root) = &info.lib_root else {
        return Err((
            first,
            format!(
                "the crate {} has no library target for a probe to depend on",
                info.package
            ),
            "move the types into a library (src/lib.rs) that the binaries use, or make the kind statically derivable".into(),
        ));
    };
    let lib = canonical(lib_root);
    for v in &req.versions {
        if canonical(&v.crate_root) != lib {
            return Err((
                v,
                format!(
                    "its version {} is in the crate root {}, not in the library {}, so a probe cannot name it",
                    v.version,
                    v.crate_root.display(),
                    lib_root.display()
                ),
                "declare the types in the library's module tree".into(),
            ));
        }
        if let Some(why) = &v.private {
            return Err((
                v,
                format!(
                    "`{}::{}` is not reachable from outside the crate: {why}",
                    info.lib_name,
                    v.rust_path.join("::")
                ),
                "make the modules on the way and the spec type `pub`".into(),
            ));
        }
    }
    Ok(())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn at_site(site: &VersionSite, message: String, help: Option<String>) -> Diagnostic {
    let mut d = Diagnostic::new(&site.file, site.line, 1, message);
    d.help = help;
    d
}

fn at_kind(req: &Request, message: String, help: Option<String>) -> Diagnostic {
    match req.versions.first() {
        Some(site) => at_site(site, message, help),
        None => {
            let mut d = Diagnostic::new(Path::new("."), 1, 1, message);
            d.help = help;
            d
        }
    }
}

/// The crate's `Cargo.lock`, or its workspace's (the nearest one above): `(path, text)`.
fn find_lock(dir: &Path) -> Option<(PathBuf, String)> {
    let dir = canonical(dir);
    dir.ancestors().find_map(|d| {
        let p = d.join("Cargo.lock");
        std::fs::read_to_string(&p).ok().map(|t| (p, t))
    })
}

/// The SHA-256 state of everything the probe's output depends on but the `Cargo.lock`, which
/// the build itself may update (see [`key_with_lock`]).
fn cache_key(
    info: &CrateInfo,
    ws: &Workspace,
    roots: &[Vec<String>],
    features: &FeatureFlags,
    skip: &[PathBuf],
) -> Sha256 {
    let mut h = Sha256::new();
    let mut field = |name: &str, bytes: &[u8]| {
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field("rsbuilder", env!("CARGO_PKG_VERSION").as_bytes());
    field("features", format!("{features:?}").as_bytes());
    field(
        "K8S_OPENAPI_ENABLED_VERSION",
        std::env::var("K8S_OPENAPI_ENABLED_VERSION")
            .unwrap_or_default()
            .as_bytes(),
    );
    for m in &ws.manifests {
        field(
            &m.display().to_string(),
            &std::fs::read(m).unwrap_or_default(),
        );
    }
    for r in roots {
        field("kind", r.join("::").as_bytes());
    }
    let mut dirs = vec![canonical(&info.dir)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(d) = dirs.pop() {
        if !seen.insert(d.clone()) {
            continue;
        }
        for (path, bytes) in crate_files(&d, skip) {
            field(&path.display().to_string(), &bytes);
        }
        dirs.extend(path_dependencies(&d));
    }
    h
}

/// The cache key: the digest of [`cache_key`]'s inputs and the `Cargo.lock` (`(path, text)`,
/// as [`find_lock`] finds it), in hex.
fn key_with_lock(inputs: &Sha256, lock: Option<&(PathBuf, String)>) -> String {
    let mut h = inputs.clone();
    let text = lock.map(|(_, t)| t.as_str()).unwrap_or_default();
    h.update(b"lock");
    h.update((text.len() as u64).to_le_bytes());
    h.update(text.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The files of the crate in `dir` that a build may read: everything but `target/`, hidden
/// entries, `Cargo.lock` (in the key apart, see [`key_with_lock`]) and the directories in
/// `skip` (canonical paths), sorted, with their bytes.
fn crate_files(dir: &Path, skip: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0 || {
                let n = e.file_name().to_string_lossy();
                !n.starts_with('.')
                    && n != "target"
                    && n != "Cargo.lock"
                    && !skip.iter().any(|s| *s == canonical(e.path()))
            }
        });
    for e in walker.flatten() {
        if e.file_type().is_file()
            && let Ok(bytes) = std::fs::read(e.path())
        {
            out.push((
                e.path().strip_prefix(dir).unwrap_or(e.path()).to_path_buf(),
                bytes,
            ));
        }
    }
    out
}

/// The directories of the `path = "…"` dependencies in `dir/Cargo.toml`.
fn path_dependencies(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = crate::engine::regular::read_path(&dir.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in ["dependencies", "build-dependencies"] {
        if let Some(deps) = doc.get(table).and_then(|d| d.as_table()) {
            for v in deps.values() {
                if let Some(p) = v.get("path").and_then(|p| p.as_str()) {
                    out.push(canonical(&dir.join(p)));
                }
            }
        }
    }
    out
}

fn read_cache(file: &Path) -> Option<BTreeMap<String, Value>> {
    let text = crate::engine::regular::read_path(file).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the cache entry through a temporary file and a rename, so a concurrent reader never
/// sees half of it. Failing to cache is not an error (the next run compiles again).
fn write_cache(file: &Path, output: &BTreeMap<String, Value>) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_string(output) else {
        return;
    };
    let tmp = dir.join(format!(".{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// What `cargo metadata` says about the crate's workspace, as far as the probe needs it.
#[derive(Debug, Clone)]
struct Workspace {
    /// The crate's `Cargo.toml`, canonical.
    manifest: PathBuf,
    /// The workspace's target directory, as cargo chose it (`CARGO_TARGET_DIR`,
    /// `build.target-dir`, else `<workspace root>/target`).
    target: PathBuf,
    /// The package ids `cargo build` selects: the crate's, then the default members of the
    /// workspace root, so that features unify as in a `cargo build` run in the root.
    select: Vec<String>,
    /// The crate's package id.
    id: String,
    /// The manifests of the workspace: the root's and every member's (they choose features).
    manifests: Vec<PathBuf>,
    /// The build runs `--locked` (asked for, and the workspace has a `Cargo.lock`):
    /// `manifests --check` changes no file of the user's, so a lock that no longer fits
    /// Cargo.toml is cargo's error there.
    locked: bool,
}

/// `cargo`, as cargo itself names it to subcommands and build scripts (`CARGO`), else from
/// `PATH`.
fn cargo_command() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// `cargo metadata --no-deps` of the package or workspace at `manifest`.
fn metadata(manifest: &Path) -> Result<Value, String> {
    let out = cargo_command()
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo metadata --manifest-path {}` failed:\n{}",
            manifest.display(),
            trim_errors(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`cargo metadata` printed no JSON object: {e}"))
}

impl Workspace {
    /// Reads the crate's workspace with `cargo metadata`. With `--all-features` or
    /// `--no-default-features` only the crate is selected (those flags would otherwise apply
    /// to every member). Errors: cargo's, trimmed.
    fn read(info: &CrateInfo, flags: &FeatureFlags, locked: bool) -> Result<Self, String> {
        let manifest = canonical(&info.dir.join("Cargo.toml"));
        let meta = metadata(&manifest)?;
        let path_of = |v: &Value| v.as_str().map(PathBuf::from);
        let packages = meta["packages"].as_array().cloned().unwrap_or_default();
        let id = packages
            .iter()
            .find(|p| path_of(&p["manifest_path"]).is_some_and(|m| canonical(&m) == manifest))
            .and_then(|p| p["id"].as_str())
            .map(String::from)
            .ok_or_else(|| {
                format!(
                    "`cargo metadata` does not list the package of {}",
                    manifest.display()
                )
            })?;
        let root = path_of(&meta["workspace_root"]).unwrap_or_else(|| info.dir.clone());
        let target = path_of(&meta["target_directory"]).unwrap_or_else(|| root.join("target"));
        let root_manifest = canonical(&root.join("Cargo.toml"));
        let mut manifests: Vec<PathBuf> = packages
            .iter()
            .filter_map(|p| path_of(&p["manifest_path"]))
            .collect();
        manifests.push(root_manifest.clone());
        manifests.sort();
        manifests.dedup();
        let mut select = vec![id.clone()];
        if !flags.all_features && !flags.no_default_features {
            // The default members of the root, as `cargo build` there selects them (the
            // crate's own view of them is only itself).
            let root_meta = if root_manifest == manifest {
                meta
            } else {
                metadata(&root_manifest)?
            };
            for m in root_meta["workspace_default_members"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !select.iter().any(|s| s == m) {
                    select.push(m.to_string());
                }
            }
        }
        Ok(Self {
            locked: locked && root.join("Cargo.lock").is_file(),
            manifest,
            target,
            select,
            id,
            manifests,
        })
    }

    /// Cargo's feature arguments for the crate: the `--features` values split at commas and
    /// spaces as cargo splits them; when other members are selected too, a plain name is
    /// spelled `<package>/<name>` so that it turns on the crate's feature only (`dep/feature`
    /// is passed as written).
    fn feature_args(&self, package: &str, flags: &FeatureFlags) -> Vec<String> {
        let names: Vec<String> = flags
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(|f| {
                if self.select.len() > 1 && !f.contains('/') {
                    format!("{package}/{f}")
                } else {
                    f.to_string()
                }
            })
            .collect();
        let mut args = Vec::new();
        if !names.is_empty() {
            args.push("--features".to_string());
            args.push(names.join(","));
        }
        if flags.all_features {
            args.push("--all-features".into());
        }
        if flags.no_default_features {
            args.push("--no-default-features".into());
        }
        args
    }

    /// The probe's own directory: `<target>/rsbuilder-probe/<package>-<hash of the crate's
    /// manifest path>`, so that crates sharing a target directory keep apart.
    fn probe_dir(&self, package: &str) -> PathBuf {
        let id: String = Sha256::digest(self.manifest.display().to_string().as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        self.target
            .join("rsbuilder-probe")
            .join(format!("{package}-{id}"))
    }
}

/// The crate's library built by cargo: what rustc needs to compile the probe against it.
#[derive(Debug, Clone)]
struct Built {
    /// The crate's rlib.
    rlib: PathBuf,
    /// `kube_core` and `serde_json` rlibs of the build (the newest version of each).
    externs: Vec<(String, PathBuf)>,
    /// The `deps` directory every dependency was compiled into.
    deps: PathBuf,
    /// The native search paths build scripts printed (`native=/…`).
    native: Vec<String>,
}

/// The crates the probe's `main` names besides the user's.
const PROBE_EXTERNS: [&str; 2] = ["kube_core", "serde_json"];

/// Builds the crate's library with cargo in its workspace (its `Cargo.lock`, profile and
/// target directory, so that what `cargo build` compiled is reused) and finds the rlibs in
/// cargo's JSON messages. Errors: cargo's rendered errors, trimmed.
fn build_lib(info: &CrateInfo, ws: &Workspace, flags: &FeatureFlags) -> Result<Built, BuildError> {
    let mut cmd = cargo_command();
    cmd.args([
        "build",
        "--lib",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
    ])
    .arg(&ws.manifest)
    .current_dir(&info.dir);
    if ws.locked {
        cmd.arg("--locked");
    }
    for id in &ws.select {
        cmd.args(["-p", id]);
    }
    cmd.args(ws.feature_args(&info.package, flags));
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(BuildError::from(trim_errors(&String::from_utf8_lossy(
            &out.stderr,
        ))));
    }
    let mut rlib = None;
    let mut found: BTreeMap<String, (semver::Version, PathBuf)> = BTreeMap::new();
    let mut deps = None;
    let mut native = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match msg["reason"].as_str() {
            Some("compiler-artifact") => {
                let files: Vec<PathBuf> = msg["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(PathBuf::from)
                    .collect();
                let Some(file) = rlib_in_deps(&files) else {
                    continue;
                };
                if deps.is_none() && file.parent().is_some_and(|p| p.ends_with("deps")) {
                    deps = file.parent().map(Path::to_path_buf);
                }
                let package_id = msg["package_id"].as_str().unwrap_or_default();
                let name = msg["target"]["name"].as_str().unwrap_or_default();
                if package_id == ws.id {
                    rlib = Some(file);
                } else if PROBE_EXTERNS.contains(&name) {
                    let version = package_version(package_id);
                    if found.get(name).is_none_or(|(v, _)| *v < version) {
                        found.insert(name.to_string(), (version, file));
                    }
                }
            }
            Some("build-script-executed") => native.extend(
                msg["linked_paths"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(String::from),
            ),
            _ => {}
        }
    }
    let rlib = rlib.ok_or_else(|| {
        BuildError::from(format!(
            "cargo built no library of {} (is it a `[lib]` of crate-type rlib?)",
            info.package
        ))
    })?;
    let missing: Vec<&str> = PROBE_EXTERNS
        .iter()
        .copied()
        .filter(|n| !found.contains_key(*n))
        .collect();
    if !missing.is_empty() {
        return Err(BuildError::from(format!(
            "the build of {} has no {} (the probe calls kube-core's CustomResourceExt and prints with serde_json)",
            info.package,
            missing.join(" and ")
        )));
    }
    let deps = deps.unwrap_or_else(|| {
        rlib.parent()
            .map_or_else(|| PathBuf::from("deps"), |p| p.join("deps"))
    });
    Ok(Built {
        rlib,
        externs: found.into_iter().map(|(n, (_, p))| (n, p)).collect(),
        deps,
        native,
    })
}

/// The rlib of an artifact's files, in the `deps` directory where there is one there: the
/// copy cargo puts beside it (`target/debug/libfoo.rlib`) is shared by every package of that
/// crate name built in the target directory, the one in `deps` carries the package's hash.
fn rlib_in_deps(files: &[PathBuf]) -> Option<PathBuf> {
    let in_deps = |f: &&PathBuf| f.parent().is_some_and(|p| p.ends_with("deps"));
    files
        .iter()
        .filter(in_deps)
        .find_map(|f| match f.extension().and_then(|x| x.to_str()) {
            Some("rlib") => Some(f.clone()),
            Some("rmeta") => Some(f.with_extension("rlib")).filter(|r| r.is_file()),
            _ => None,
        })
        .or_else(|| {
            files
                .iter()
                .find(|f| f.extension().is_some_and(|x| x == "rlib"))
                .cloned()
        })
}

/// The version in a cargo package id (`registry+https://…#serde_json@1.0.140`,
/// `path+file:///…#0.1.0`, or the older `serde_json 1.0.140 (registry+…)`); 0.0.0 when there
/// is none.
fn package_version(id: &str) -> semver::Version {
    let candidates = id
        .rsplit(['#', '@', ' '])
        .map(|s| s.trim_matches(['(', ')']));
    candidates
        .filter_map(|s| semver::Version::parse(s).ok())
        .next()
        .unwrap_or(semver::Version::new(0, 0, 0))
}

/// The probe's `main`: `crd()` of each root type, printed as one JSON object keyed by the
/// type's path in the library, `{"panic": …}` or `{"error": …}` in place of a CRD.
fn probe_main(roots: &[Vec<String>]) -> String {
    let mut main = String::from(
        "// Written by `rsbuilder manifests`: prints crd() of the kinds it compiles. Safe to delete.\n\
fn main() {\n    std::panic::set_hook(Box::new(|_| {}));\n    let mut out = serde_json::Map::new();\n",
    );
    for r in roots {
        let path = r.join("::");
        main.push_str(&format!(
            "    out.insert({path:?}.to_string(), probe(|| serde_json::to_value(<rsbuilder_probe_target::{path} as kube_core::CustomResourceExt>::crd())));\n"
        ));
    }
    main.push_str(
        "    print!(\"{}\", serde_json::Value::Object(out));\n}\n\n\
fn probe(f: impl FnOnce() -> Result<serde_json::Value, serde_json::Error> + std::panic::UnwindSafe) -> serde_json::Value {\n\
    match std::panic::catch_unwind(f) {\n\
        Ok(Ok(v)) => v,\n\
        Ok(Err(e)) => serde_json::json!({ \"error\": e.to_string() }),\n\
        Err(p) => {\n\
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();\n\
            serde_json::json!({ \"panic\": msg })\n\
        }\n\
    }\n}\n",
    );
    main
}

/// The compiler for the probe's `main`: `RSBUILDER_PROBE_RUSTC` (a test hook: the suite puts
/// a slow compiler there to run another command while the probe compiles), else `RUSTC`
/// (as cargo reads it), else `rustc` from `PATH`, run in the crate's directory so that a
/// rustup toolchain file chooses the same compiler as for cargo.
fn rustc_command(info: &CrateInfo) -> Command {
    let program = std::env::var_os("RSBUILDER_PROBE_RUSTC")
        .or_else(|| std::env::var_os("RUSTC"))
        .unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(program);
    cmd.current_dir(&info.dir);
    cmd
}

/// Compiles the probe's `main` for `roots` with rustc against the built library, runs it and
/// returns its output: root type path (`api::v1::Foo`) to `crd()` as JSON, or `{"panic": …}`.
/// Errors: rustc's, trimmed, with the roots the errors quote.
fn compile_and_run(
    info: &CrateInfo,
    dir: &Path,
    built: &Built,
    roots: &[Vec<String>],
) -> Result<BTreeMap<String, Value>, BuildError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let main = dir.join("main.rs");
    write_if_changed(&main, &probe_main(roots))?;
    let bin = dir.join(format!("probe{}", std::env::consts::EXE_SUFFIX));
    let mut cmd = rustc_command(info);
    cmd.args([
        "--edition=2021",
        "--crate-type=bin",
        "--crate-name=rsbuilder_probe",
        "-Copt-level=0",
        "-Cdebuginfo=0",
        "-Awarnings",
    ])
    .arg("-o")
    .arg(&bin)
    .arg(&main);
    let mut dependency = std::ffi::OsString::from("dependency=");
    dependency.push(&built.deps);
    cmd.arg("-L").arg(dependency);
    for n in &built.native {
        cmd.arg("-L").arg(n);
    }
    let mut extern_arg = |name: &str, path: &Path| {
        let mut a = std::ffi::OsString::from(format!("{name}="));
        a.push(path);
        cmd.arg("--extern").arg(a);
    };
    extern_arg("rsbuilder_probe_target", &built.rlib);
    for (name, path) in &built.externs {
        extern_arg(name, path);
    }
    let out = cmd.output().map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Error messages, one per block starting at an `error` line.
        let mut blocks: Vec<Vec<&str>> = Vec::new();
        for l in error_lines(&stderr) {
            if l.starts_with("error") || blocks.is_empty() {
                blocks.push(Vec::new());
            }
            blocks.last_mut().expect("one block").push(l);
        }
        let blamed = roots
            .iter()
            .filter_map(|r| {
                let quoted = format!("<rsbuilder_probe_target::{} as ", r.join("::"));
                let mine: Vec<String> = blocks
                    .iter()
                    .filter(|b| b.iter().any(|l| l.contains(&quoted)))
                    .map(|b| b.join("\n"))
                    .collect();
                (!mine.is_empty()).then(|| (r.clone(), trim_errors(&mine.join("\n"))))
            })
            .collect();
        return Err(BuildError {
            text: trim_errors(&stderr),
            blamed,
        });
    }
    let ran = Command::new(&bin)
        .current_dir(&info.dir)
        .output()
        .map_err(|e| format!("cannot run the probe {}: {e}", bin.display()))?;
    if !ran.status.success() {
        return Err(BuildError::from(format!(
            "the probe {} failed ({}):\n{}",
            bin.display(),
            ran.status,
            trim_errors(&String::from_utf8_lossy(&ran.stderr))
        )));
    }
    serde_json::from_slice(&ran.stdout)
        .map_err(|e| BuildError::from(format!("the probe printed no JSON object: {e}")))
}

/// Builds the crate's library and the probe for `roots` in `dir`, and runs it. When rustc
/// blames some kinds only (a module the features leave out), those kinds get the error and the
/// others a second compile without them.
fn build_probe(
    info: &CrateInfo,
    ws: &Workspace,
    dir: &Path,
    roots: &[Vec<String>],
    features: &FeatureFlags,
) -> Result<BTreeMap<String, Value>, BuildError> {
    let built = build_lib(info, ws, features)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Which crate this directory belongs to, for whoever looks into the target directory.
    write_if_changed(
        &dir.join("manifest-path"),
        &ws.manifest.display().to_string(),
    )?;
    let first = compile_and_run(info, dir, &built, roots);
    match first {
        Err(e) if !e.blamed.is_empty() && e.blamed.len() < roots.len() => {
            let rest: Vec<Vec<String>> = roots
                .iter()
                .filter(|r| !e.blamed.iter().any(|(b, _)| b == *r))
                .cloned()
                .collect();
            compile_and_run(info, dir, &built, &rest).map(|mut out| {
                for (r, errors) in e.blamed {
                    out.insert(r.join("::"), serde_json::json!({ "compile_error": errors }));
                }
                out
            })
        }
        other => other,
    }
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The lines of cargo's stderr that belong to error messages (not warnings).
fn error_lines(stderr: &str) -> impl Iterator<Item = &str> {
    let mut in_error = false;
    stderr.lines().filter(move |line| {
        if line.starts_with("error") {
            in_error = true;
        } else if line.starts_with("warning") {
            in_error = false;
        }
        in_error && !line.starts_with("error: could not compile")
    })
}

/// The compiler's error messages from cargo's stderr, without warnings, at most 40 lines.
pub fn trim_errors(stderr: &str) -> String {
    let mut kept: Vec<&str> = error_lines(stderr).collect();
    if kept.is_empty() {
        kept = stderr.lines().collect();
    }
    const LIMIT: usize = 40;
    let more = kept.len().saturating_sub(LIMIT);
    let mut text = kept[..kept.len().min(LIMIT)].join("\n");
    if more > 0 {
        text.push_str(&format!(
            "\n… {more} more lines (run `cargo build` in the crate for all of them)"
        ));
    }
    text
}

/// The CRD of one kind from the probe's output: its versions' `crd()` merged as `merge_crds`
/// does, with the storage version of the request's choice, else the one version `crd()`
/// marks stored.
fn kind_from_output(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_crd_the_api_server_rejects_is_refused_at_the_spec_type() {
        let site = VersionSite {
            version: "v1".into(),
            file: PathBuf::from("src/api.rs"),
            line: 7,
            crate_root: PathBuf::from("src/lib.rs"),
            rust_path: vec!["api".into(), "Thing".into()],
            private: None,
        };
        let req = Request {
            name: "Thing.t.example.com".into(),
            versions: vec![site],
            storage: None,
            verify: false,
        };
        let crd = |spec: Value| {
            serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "things.t.example.com"},
                "spec": {"group": "t.example.com", "scope": "Namespaced",
                    "names": {"kind": "Thing", "plural": "things"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
            })
        };
        let ok = BTreeMap::from([(
            "api::Thing".to_string(),
            crd(serde_json::json!({"type": "object"})),
        )]);
        assert!(kind_from_output(&req, &ok).is_ok());
        let bad = BTreeMap::from([(
            "api::Thing".to_string(),
            crd(serde_json::json!({"type": "object", "properties": {"raw": {}}})),
        )]);
        let diags = kind_from_output(&req, &bad).unwrap_err();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(
            (diags[0].line, diags[0].cause),
            (7, crate::manifests::diag::Cause::Invalid)
        );
        assert!(
            diags[0]
                .message
                .contains("gives a CRD the API server rejects")
                && diags[0].message.contains("at .spec.raw"),
            "{}",
            diags[0].message
        );
    }

    #[test]
    fn package_ids_give_their_version() {
        let v = |id: &str| package_version(id).to_string();
        assert_eq!(
            v("registry+https://github.com/rust-lang/crates.io-index#serde_json@1.0.140"),
            "1.0.140"
        );
        assert_eq!(v("path+file:///tmp/x/a#0.1.0"), "0.1.0");
        assert_eq!(v("path+file:///tmp/x/my-op#my_op@0.2.0"), "0.2.0");
        assert_eq!(
            v("kube-core 3.1.0 (registry+https://github.com/rust-lang/crates.io-index)"),
            "3.1.0"
        );
        assert_eq!(v("nonsense"), "0.0.0");
    }

    #[test]
    fn feature_flags_reach_cargo_as_cargo_takes_them() {
        let ws = |select: usize| Workspace {
            manifest: PathBuf::from("/w/op/Cargo.toml"),
            target: PathBuf::from("/w/target"),
            select: (0..select).map(|i| format!("m{i}")).collect(),
            id: "m0".into(),
            manifests: Vec::new(),
            locked: true,
        };
        let flags = FeatureFlags {
            features: vec!["a,b".into(), "k8s-openapi/schemars c".into()],
            ..Default::default()
        };
        assert_eq!(
            ws(1).feature_args("op", &flags),
            ["--features", "a,b,k8s-openapi/schemars,c"]
        );
        assert_eq!(
            ws(2).feature_args("op", &flags),
            ["--features", "op/a,op/b,k8s-openapi/schemars,op/c"]
        );
        let all = FeatureFlags {
            all_features: true,
            no_default_features: true,
            ..Default::default()
        };
        assert_eq!(
            ws(1).feature_args("op", &all),
            ["--all-features", "--no-default-features"]
        );
    }

    #[test]
    fn compiler_errors_are_trimmed_to_the_errors() {
        let stderr = "warning: unused import\n --> src/lib.rs:1:5\n\nerror[E0425]: cannot find value `x`\n --> src/lib.rs:3:9\n  |\n3 |     x\n  |     ^ not found\n\nerror: could not compile `foo` (lib) due to 1 previous error\n";
        let t = trim_errors(stderr);
        assert!(t.starts_with("error[E0425]: cannot find value `x`"), "{t}");
        assert!(t.contains(" --> src/lib.rs:3:9"), "{t}");
        assert!(
            !t.contains("unused import") && !t.contains("could not compile"),
            "{t}"
        );
        let long: String = (0..100).map(|i| format!("error: e{i}\n")).collect();
        let t = trim_errors(&long);
        assert_eq!(t.lines().count(), 41, "{t}");
        assert!(
            t.ends_with("… 60 more lines (run `cargo build` in the crate for all of them)"),
            "{t}"
        );
    }

    #[test]
    fn a_crate_without_a_library_or_kube_is_described() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"my-op\"\nversion = \"0.1.0\"\n\n[dependencies]\nk = { package = \"kube\", version = \"5\" }\n",
        )
        .unwrap();
        let info = CrateInfo::read(dir.path()).unwrap();
        assert_eq!(
            (info.package.as_str(), info.lib_name.as_str()),
            ("my-op", "my_op")
        );
        assert_eq!(info.lib_root, None);
        assert_eq!(info.kube.as_deref(), Some("kube"));
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        let info = CrateInfo::read(dir.path()).unwrap();
        assert_eq!(info.lib_root, Some(dir.path().join("src/lib.rs")));
        let err = CrateInfo::read(&dir.path().join("nope")).unwrap_err();
        assert!(err.contains("there is no Cargo.toml"), "{err}");
    }
}
