//! The compile fallback: kinds whose schema depends on code rsbuilder does not evaluate
//! statically (a `schema_with` function with logic, `#[kube(schema = "manual")]`, a default
//! computed at run time, a type of a crate rsbuilder does not know) are derived by compiling a
//! small probe program against the user's own crate, which prints `crd()` of exactly those
//! kinds as JSON.
//!
//! The probe lives in `<crate>/target/rsbuilder-probe/`: `probe/` is its Cargo package (a path
//! dependency on the crate, with the crate's features, and the crate's `Cargo.lock` copied so
//! every dependency keeps its locked version), `target/` its cargo target directory
//! (`RSBUILDER_PROBE_TARGET_DIR` overrides it, so that several crates share one build of their
//! dependencies), and `cache/<key>.json` the output of earlier runs. The key is a SHA-256 of
//! everything the output depends on: the crate's files (and those of its path dependencies),
//! its `Cargo.lock`, the features, rsbuilder's version and the kinds asked for; a run with
//! nothing changed reads the cache and compiles nothing.
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

/// The cargo features the probe selects on the user's crate, as cargo's own flags would.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Features {
    /// `--features`.
    pub features: Vec<String>,
    /// `--all-features`.
    pub all_features: bool,
    /// `--no-default-features`.
    pub no_default_features: bool,
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
    /// Where `CustomResourceExt` is reached: `kube::core` or `kube_core`, and the dependency
    /// line the probe declares for it.
    kube: Option<(String, String)>,
    /// `[features]` of the crate (for `--all-features`).
    features: Vec<String>,
}

impl CrateInfo {
    fn read(dir: &Path) -> Result<Self, String> {
        let manifest = dir.join("Cargo.toml");
        let text = crate::scaffold::engine::regular::read_path(&manifest).map_err(|_| {
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
        let dep = |wanted: &str| -> Option<(String, Option<String>)> {
            let deps = deps?;
            deps.iter().find_map(|(key, v)| {
                let package = v.get("package").and_then(|p| p.as_str()).unwrap_or(key);
                (package == wanted).then(|| {
                    let version = v
                        .as_str()
                        .or_else(|| v.get("version").and_then(|x| x.as_str()))
                        .map(String::from);
                    (key.clone(), version)
                })
            })
        };
        let kube = if let Some((_, v)) = dep("kube") {
            Some((
                "rsbuilder_probe_kube::core".to_string(),
                format!(
                    "rsbuilder_probe_kube = {{ package = \"kube\", version = \"{}\", default-features = false }}",
                    v.unwrap_or_else(|| "*".into())
                ),
            ))
        } else {
            dep("kube-core").map(|(_, v)| {
                (
                    "rsbuilder_probe_kube".to_string(),
                    format!(
                        "rsbuilder_probe_kube = {{ package = \"kube-core\", version = \"{}\", default-features = false }}",
                        v.unwrap_or_else(|| "*".into())
                    ),
                )
            })
        };
        let features = doc
            .get("features")
            .and_then(|f| f.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        Ok(Self {
            dir: dir.to_path_buf(),
            package,
            lib_name,
            lib_root,
            kube,
            features,
        })
    }
}

/// The probe's directory in the crate: `<crate>/target/rsbuilder-probe`.
pub fn probe_dir(crate_dir: &Path) -> PathBuf {
    crate_dir.join("target").join("rsbuilder-probe")
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
/// `skip` names directories left out of the cache key (the manifests' own output directory,
/// which the run itself rewrites).
pub fn run(
    crate_dir: Option<&Path>,
    requests: &[Request],
    features: &Features,
    skip: &[PathBuf],
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
    let Some((kube_path, kube_dep)) = info.kube.clone() else {
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
    let key = cache_key(
        &info,
        &roots,
        features,
        lock.as_ref().map(|(_, t)| t.as_str()),
        &skip,
    );
    let base = probe_dir(&info.dir);
    let cache_file = base.join("cache").join(format!("{key}.json"));
    let (output, cached) = match read_cache(&cache_file) {
        Some(v) => (Ok(v), true),
        None => {
            let build = |roots: &[Vec<String>]| {
                build_and_run(
                    &info,
                    &base,
                    roots,
                    &kube_path,
                    &kube_dep,
                    features,
                    lock.as_ref(),
                )
            };
            let mut built = build(&roots);
            // The compiler blames some kinds only (a module the features leave out): those
            // kinds get the error, the others a second build without them.
            if let Err(e) = &built
                && !e.blamed.is_empty()
                && e.blamed.len() < roots.len()
            {
                let rest: Vec<Vec<String>> = roots
                    .iter()
                    .filter(|r| !e.blamed.iter().any(|(b, _)| b == *r))
                    .cloned()
                    .collect();
                let failed = e.blamed.clone();
                built = build(&rest).map(|mut out| {
                    for (r, errors) in failed {
                        out.insert(r.join("::"), serde_json::json!({ "compile_error": errors }));
                    }
                    out
                });
            }
            if let Ok(v) = &built {
                write_cache(&cache_file, v);
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
            base.join("probe").display()
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

/// The SHA-256 (hex) of everything the probe's output depends on.
fn cache_key(
    info: &CrateInfo,
    roots: &[Vec<String>],
    features: &Features,
    lock: Option<&str>,
    skip: &[PathBuf],
) -> String {
    let mut h = Sha256::new();
    let mut field = |name: &str, bytes: &[u8]| {
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field("rsbuilder", env!("CARGO_PKG_VERSION").as_bytes());
    field("features", format!("{features:?}").as_bytes());
    field("lock", lock.unwrap_or_default().as_bytes());
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
    let digest = h.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The files of the crate in `dir` that a build may read: everything but `target/`, hidden
/// entries and the directories in `skip` (canonical paths), sorted, with their bytes.
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
    let Ok(text) = crate::scaffold::engine::regular::read_path(&dir.join("Cargo.toml")) else {
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
    let text = crate::scaffold::engine::regular::read_path(file).ok()?;
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

/// Writes the probe package, builds and runs it, and returns its output: root type path
/// (`api::v1::Foo`) to `crd()` as JSON, or `{"panic": …}`. Errors: cargo's, trimmed.
fn build_and_run(
    info: &CrateInfo,
    base: &Path,
    roots: &[Vec<String>],
    kube_path: &str,
    kube_dep: &str,
    features: &Features,
    lock: Option<&(PathBuf, String)>,
) -> Result<BTreeMap<String, Value>, BuildError> {
    let pkg = base.join("probe");
    std::fs::create_dir_all(pkg.join("src"))
        .map_err(|e| format!("cannot create {}: {e}", pkg.display()))?;
    let selected: Vec<String> = if features.all_features {
        info.features.clone()
    } else {
        features.features.clone()
    };
    // One package name per crate, so that crates sharing a target directory
    // (RSBUILDER_PROBE_TARGET_DIR) never run each other's probe binary.
    let crate_id: String = Sha256::digest(canonical(&info.dir).display().to_string().as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    let manifest = format!(
        "# Written by `rsbuilder manifests`: prints crd() of the kinds it compiles. Safe to delete.\n\
[package]\nname = \"rsbuilder-probe-{crate_id}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
[workspace]\n\n[dependencies]\n\
rsbuilder_probe_target = {{ package = \"{}\", path = {}, default-features = {}, features = {} }}\n\
{kube_dep}\nserde_json = \"1\"\n",
        info.package,
        toml_string(&canonical(&info.dir).display().to_string()),
        !features.no_default_features,
        toml_array(&selected),
    );
    let mut main = String::from(
        "// Written by `rsbuilder manifests`: prints crd() of the kinds it compiles.\n\
fn main() {\n    std::panic::set_hook(Box::new(|_| {}));\n    let mut out = serde_json::Map::new();\n",
    );
    for r in roots {
        let path = r.join("::");
        main.push_str(&format!(
            "    out.insert({path:?}.to_string(), probe(|| serde_json::to_value(<rsbuilder_probe_target::{path} as {kube_path}::CustomResourceExt>::crd())));\n"
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
    write_if_changed(&pkg.join("Cargo.toml"), &manifest)?;
    write_if_changed(&pkg.join("src").join("main.rs"), &main)?;
    if let Some((_, text)) = lock {
        // The crate's lock, so every dependency keeps its locked version; cargo adds the
        // probe's own entry.
        let current = std::fs::read_to_string(pkg.join("Cargo.lock")).ok();
        if current.as_deref() != Some(text.as_str()) {
            std::fs::write(pkg.join("Cargo.lock"), text)
                .map_err(|e| format!("cannot write the probe's Cargo.lock: {e}"))?;
        }
    }
    let target = std::env::var_os("RSBUILDER_PROBE_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| base.join("target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(pkg.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
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
    serde_json::from_slice(&out.stdout)
        .map_err(|e| BuildError::from(format!("the probe printed no JSON object: {e}")))
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn toml_array(items: &[String]) -> String {
    toml::Value::Array(
        items
            .iter()
            .map(|s| toml::Value::String(s.clone()))
            .collect(),
    )
    .to_string()
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
        assert!(
            info.kube
                .as_ref()
                .unwrap()
                .1
                .contains("package = \"kube\", version = \"5\"")
        );
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        let info = CrateInfo::read(dir.path()).unwrap();
        assert_eq!(info.lib_root, Some(dir.path().join("src/lib.rs")));
        let err = CrateInfo::read(&dir.path().join("nope")).unwrap_err();
        assert!(err.contains("there is no Cargo.toml"), "{err}");
    }
}
