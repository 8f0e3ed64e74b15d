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
//!
//! This module runs the fallback and names what it needs; [`cache`] keys and stores the
//! outputs, [`cargo`] reads the workspace and builds the library, [`compile`] writes, compiles
//! and runs the probe, and [`output`] reads its output back.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::cfg::FeatureFlags;
use super::crd::storage::StorageChoice;
use super::crd::{KindOutcome, VersionSite};
use super::diag::Diagnostic;

mod cache;
mod cargo;
mod compile;
mod output;

use cache::{cache_key, find_lock, key_with_lock, read_cache, write_cache};
use cargo::Workspace;
use compile::build_probe;
use output::kind_from_output;

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
        let doc: toml::Table = toml::from_str(&text).map_err(|e| {
            format!(
                "{}: not valid TOML: {}",
                manifest.display(),
                crate::engine::cargo_dep::toml_error(&text, &e)
            )
        })?;
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use super::cargo::package_version;
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
