//! What the end-to-end tests that build generated projects share: the one target directory of
//! those builds, the opt-in, and a command that must succeed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The target directory every generated project's build shares: `RSBUILDER_E2E_TARGET_DIR`,
/// default `<repo>/target/e2e`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("RSBUILDER_E2E_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e"))
}

/// A failure message: what was run, where, and its output.
pub fn describe(what: &str, dir: &Path, out: &Output) -> String {
    format!(
        "{what} failed in {}:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `program args` in `dir` with the shared target directory; out: its output, whatever
/// its exit status.
pub fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        // Built once per run and thrown away: no incremental cache, no debug info (disk).
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

/// Runs `program args` in `dir` with the shared target directory, and fails the test with its
/// output unless it succeeds.
pub fn run_ok(dir: &Path, program: &str, args: &[&str]) {
    let out = run(dir, program, args);
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("{program} {args:?}"), dir, &out)
    );
}

/// Whether a test that takes minutes of compiling runs: always under `CI=true` (unless
/// `RSBUILDER_SKIP_E2E` is set, which fails there), locally only with `RSBUILDER_E2E=1`; when
/// it does not, says so.
pub fn opted_in() -> bool {
    if super::e2e_opted_out() {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !ci && std::env::var_os("RSBUILDER_E2E").is_none() {
        eprintln!("skipped: builds a generated project; set RSBUILDER_E2E=1 (CI runs it)");
        return false;
    }
    true
}
