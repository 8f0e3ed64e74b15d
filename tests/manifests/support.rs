//! Shared by the manifests tests that build crates (the conformance cases, the kopium corpus,
//! the differential generator, the probe): building and running a fixture crate with
//! kube-derive, running rsbuilder's static engine on one source file, and comparing the two as
//! JSON values. The build settings come from `common::e2e`.

#![allow(dead_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rsbuilder::manifests::cfg::{Cfg, FeatureFlags};
use rsbuilder::manifests::{Diagnostic, SourceSet, crds_from_sources};
use serde_json::{Map, Value};

pub use crate::common::e2e::{cargo, shared_build_env, target_dir};

/// The rsbuilder checkout.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture crate of the conformance suite.
pub fn fixture_crate() -> PathBuf {
    repo_root().join("tests/conformance/fixtures")
}

/// The conformance fixture crate's Cargo.lock with its package renamed `package`: a crate
/// written at test time with the same dependencies starts from the same locked versions
/// (and so reuses their builds).
pub fn fixture_lock(package: &str) -> String {
    std::fs::read_to_string(fixture_crate().join("Cargo.lock"))
        .unwrap()
        .replace(
            "name = \"conformance-fixtures\"",
            &format!("name = \"{package}\""),
        )
}

/// Builds and runs a fixture crate (see `tests/conformance/fixtures/src/main.rs`) and returns
/// its JSON: case name to `[crd, ...]`, `{"panic": ...}` or `{"error": ...}`.
pub fn run_fixture_crate(dir: &Path) -> Result<Map<String, Value>, String> {
    run_fixture_crate_with(dir, &[], None)
}

/// [`run_fixture_crate`] with cargo feature flags (`--no-default-features`, `--features x`,
/// …), compiling only the cases named in `only` when it is given.
pub fn run_fixture_crate_with(
    dir: &Path,
    cargo_flags: &[String],
    only: Option<&[String]>,
) -> Result<Map<String, Value>, String> {
    let mut cmd = cargo();
    match only {
        Some(names) => cmd.env("RSBUILDER_FIXTURE_CASES", names.join(",")),
        None => cmd.env_remove("RSBUILDER_FIXTURE_CASES"),
    };
    let out = cmd
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(cargo_flags)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building or running the fixture crate {} failed ({}):\n{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    match serde_json::from_slice(&out.stdout) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!("fixture output is not a JSON object: {other}")),
        Err(e) => Err(format!("fixture output is not JSON: {e}")),
    }
}

/// What rsbuilder gives for one source file.
pub enum Static {
    /// The CRDs as JSON, sorted by `metadata.name`, with their file names.
    Crds(Vec<Value>, Vec<String>),
    /// The diagnostics.
    Errors(Vec<Diagnostic>),
    /// The engine panicked (always a bug: rsbuilder must never panic on input).
    Panic(String),
}

/// Runs rsbuilder's static CRD engine on `files`, catching panics, with no features enabled.
pub fn rsbuilder_crds(files: &[PathBuf]) -> Static {
    rsbuilder_crds_with(files, &Cfg::default())
}

/// [`rsbuilder_crds`] under `cfg`.
pub fn rsbuilder_crds_with(files: &[PathBuf], cfg: &Cfg) -> Static {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let sources = SourceSet::load_with(files, cfg)?;
        crds_from_sources(&sources)
    }));
    match result {
        Err(payload) => Static::Panic(
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic payload".into()),
        ),
        Ok(Err(diags)) => Static::Errors(diags),
        Ok(Ok(crds)) => {
            let mut pairs: Vec<(Value, String)> = crds
                .into_iter()
                .map(|g| {
                    (
                        serde_json::to_value(&g.crd).expect("a CRD serializes"),
                        g.file_name,
                    )
                })
                .collect();
            pairs.sort_by(|a, b| {
                a.0["metadata"]["name"]
                    .as_str()
                    .cmp(&b.0["metadata"]["name"].as_str())
            });
            let (crds, names) = pairs.into_iter().unzip();
            Static::Crds(crds, names)
        }
    }
}

/// The file name rsbuilder must give a CRD: `<group>_<plural>.yaml`.
pub fn expected_file_name(crd: &Value) -> String {
    format!(
        "{}_{}.yaml",
        crd["spec"]["group"].as_str().unwrap_or_default(),
        crd["spec"]["names"]["plural"].as_str().unwrap_or_default()
    )
}

/// Compares what kube-derive gave (`expected`, an array of CRDs) with what rsbuilder gave.
/// `None` when equal; otherwise a report: the differing fields (JSON paths) and a unified
/// diff of the pretty-printed JSON (`rsbuilder::manifests::compare`, which `--verify` uses).
pub fn compare(expected: &Value, actual: &Value) -> Option<String> {
    rsbuilder::manifests::compare::compare(expected, actual, "kube-derive crd()", "rsbuilder")
}

/// One `// key: value` line from the leading comment block of a case file.
pub fn header_values(text: &str, key: &str) -> Vec<String> {
    let prefix = format!("{key}:");
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .map(|l| l.trim_start_matches('/').trim())
        .filter_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))
        .collect()
}

/// `.rs` files directly in `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    files
}

/// What rsbuilder makes of the fixture crate's Cargo.toml with cargo's `flags`
/// (`--no-default-features`, `--features a,b`, `--all-features`), as `manifests` parses them.
pub fn fixture_cfg(flags: &[String]) -> Cfg {
    let mut f = FeatureFlags::default();
    let mut args = flags.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--no-default-features" => f.no_default_features = true,
            "--all-features" => f.all_features = true,
            "--features" | "-F" => f.features.extend(args.next().cloned()),
            other => panic!("unknown cargo flag in a case header: {other}"),
        }
    }
    Cfg::for_dir(&fixture_crate(), &f).unwrap_or_else(|e| panic!("{e}"))
}
