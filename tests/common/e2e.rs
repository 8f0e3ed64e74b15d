//! What the tests that build crates share: the one target directory of those builds, the
//! cargo of this run with the build settings they share, commands that must succeed, and the
//! opt-in of the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

/// The target directory every crate the tests build shares (generated projects, the
/// conformance fixture crate and its copies): `RSBUILDER_E2E_TARGET_DIR`, default
/// `<repo>/target/e2e`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("RSBUILDER_E2E_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e"))
}

/// Sets the build settings every crate the tests build shares, so that they reuse each
/// other's compiled dependencies in [`target_dir`]: built once per run and thrown away, so no
/// incremental cache and no debug info (disk), and no RUSTFLAGS of the caller. Also for an
/// `rsbuilder` process, whose probe builds in the crate's target directory (`CARGO_TARGET_DIR`).
pub fn shared_build_env<C: BuildEnv>(cmd: &mut C) -> &mut C {
    cmd.set("CARGO_TARGET_DIR", target_dir().as_os_str())
        .set("CARGO_INCREMENTAL", "0".as_ref())
        .set("CARGO_PROFILE_DEV_DEBUG", "0".as_ref())
        .unset("RUSTFLAGS")
        .unset("CARGO_ENCODED_RUSTFLAGS")
}

/// `std::process::Command` and `assert_cmd::Command` alike.
pub trait BuildEnv {
    /// Sets a variable.
    fn set(&mut self, key: &str, value: &std::ffi::OsStr) -> &mut Self;
    /// Removes a variable.
    fn unset(&mut self, key: &str) -> &mut Self;
}

impl BuildEnv for Command {
    fn set(&mut self, key: &str, value: &std::ffi::OsStr) -> &mut Self {
        self.env(key, value)
    }
    fn unset(&mut self, key: &str) -> &mut Self {
        self.env_remove(key)
    }
}

impl BuildEnv for assert_cmd::Command {
    fn set(&mut self, key: &str, value: &std::ffi::OsStr) -> &mut Self {
        self.env(key, value)
    }
    fn unset(&mut self, key: &str) -> &mut Self {
        self.env_remove(key)
    }
}

/// The cargo running the tests (`CARGO`, which cargo sets for them), else `cargo` on `PATH`.
fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The cargo running the tests, with [`shared_build_env`]; the caller adds the arguments and
/// the directory.
pub fn cargo() -> Command {
    let mut c = Command::new(cargo_program());
    shared_build_env(&mut c);
    c
}

/// A failure message: what was run, where, and its output.
pub fn describe(what: &str, dir: &Path, out: &Output) -> String {
    format!(
        "{what} failed in {}:\n--- stdout\n{}\n--- stderr\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `program args` in `dir` with [`shared_build_env`]; out: its output, whatever its exit
/// status.
pub fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    let mut c = Command::new(program);
    c.args(args).current_dir(dir);
    shared_build_env(&mut c);
    c.output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// Runs `program args` in `dir` with [`shared_build_env`]; out: its output. Fails the test
/// with that output ([`describe`]) unless it succeeds.
pub fn run_ok(dir: &Path, program: &str, args: &[&str]) -> Output {
    let out = run(dir, program, args);
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("{program} {args:?}"), dir, &out)
    );
    out
}

/// `cargo args` in `dir` ([`run_ok`] with the cargo running the tests): fails the test unless
/// it succeeds; out: its output.
pub fn cargo_ok(dir: &Path, args: &[&str]) -> Output {
    run_ok(dir, &cargo_program(), args)
}

/// Held by a running end-to-end test (see [`opted_in`]).
pub type Serial = MutexGuard<'static, ()>;

static SERIAL: Mutex<()> = Mutex::new(());

/// The one rule of the end-to-end tests (a test that builds a generated project or an
/// example, minutes of compiling). Such a test starts with
/// `let Some(_serial) = common::e2e::opted_in() else { return };`.
///
/// It runs always under `CI=true`, and locally only with `RSBUILDER_E2E=1`; otherwise this
/// says it skipped and gives `None`. `RSBUILDER_SKIP_E2E` set skips it with a message locally
/// and fails it under `CI=true`, where every check must run.
///
/// The guard it gives runs the end-to-end tests of one test binary one at a time: they build
/// in one target directory ([`target_dir`]), where projects with the same package name (most
/// are `ai-operator`) share artifact names such as `debug/manager`. A test that failed does
/// not block the next ones.
pub fn opted_in() -> Option<Serial> {
    if super::e2e_opted_out() {
        return None;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !ci && std::env::var_os("RSBUILDER_E2E").is_none() {
        eprintln!("skipped: builds a generated project; set RSBUILDER_E2E=1 (CI runs it)");
        return None;
    }
    Some(
        SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    )
}
