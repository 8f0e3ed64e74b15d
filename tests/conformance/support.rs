//! Shared by the conformance tests (`tests/conformance.rs`) and the kopium corpus test
//! (`tests/corpus.rs`): building and running a fixture crate with kube-derive, running
//! rsbuilder's static engine on one source file, and comparing the two as JSON values.

#![allow(dead_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;

use rsbuilder::manifests::{Diagnostic, SourceSet, crds_from_sources};
use serde_json::{Map, Value};

/// The rsbuilder checkout.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Target directory shared by every crate the tests build: `RSBUILDER_E2E_TARGET_DIR`, or
/// `<repo>/target/e2e`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("RSBUILDER_E2E_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("e2e"))
}

/// The fixture crate of the conformance suite.
pub fn fixture_crate() -> PathBuf {
    repo_root().join("tests/conformance/fixtures")
}

/// Builds and runs a fixture crate (see `tests/conformance/fixtures/src/main.rs`) and returns
/// its JSON: case name to `[crd, ...]`, `{"panic": ...}` or `{"error": ...}`.
pub fn run_fixture_crate(dir: &Path) -> Result<Map<String, Value>, String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir())
        // Built once per run and thrown away: no incremental cache, no debug info (disk).
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
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

/// Runs rsbuilder's static CRD engine on `files`, catching panics.
pub fn rsbuilder_crds(files: &[PathBuf]) -> Static {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let sources = SourceSet::load(files)?;
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
