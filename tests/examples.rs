//! Keeps `examples/` honest: one test per directory under `examples/` (found at run time, so a
//! new example is covered without editing this file). Each test runs, in that example:
//!
//! 1. `rsbuilder manifests --check`: the committed `config/` must be what `rsbuilder manifests`
//!    derives from the sources now; a drift fails with the diff;
//! 2. `cargo build` and `cargo test` (with `--locked` when the example commits a `Cargo.lock`).
//!
//! Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default `<repo>/target/e2e`.
//! The builds run under `CI=true` or with `RSBUILDER_E2E=1` (`common::e2e::opted_in`); the
//! manifests check always runs.
//!
//! The test harness is libtest-mimic (`harness = false` in `Cargo.toml`), which makes one test
//! per discovered example: `cargo test --test examples -- ai-operator` runs one of them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `<RSBUILDER_E2E_TARGET_DIR>/examples`: a directory of their own. Cargo names a package's
/// artifacts by package name and version, not by path, so an example and an e2e project that
/// are both called `ai-operator` would otherwise reuse each other's test binaries, and the
/// examples' sources, which persist, would make the other's stale binaries look fresh.
fn examples_target() -> PathBuf {
    common::e2e::target_dir().join("examples")
}

/// Every directory under `examples/` that holds a `Cargo.toml`, sorted by name. A directory
/// without one is an error: each example must be a standalone crate.
fn examples() -> Result<Vec<PathBuf>, String> {
    let root = repo().join("examples");
    let entries = std::fs::read_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if !path.is_dir() {
            continue;
        }
        if !path.join("Cargo.toml").is_file() {
            return Err(format!(
                "{} has no Cargo.toml: every directory under examples/ must be an operator crate",
                path.display()
            ));
        }
        dirs.push(path);
    }
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!("no example under {}", root.display()));
    }
    Ok(dirs)
}

/// Both output streams of a finished command, for a failure message.
fn output_text(out: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `command` in `dir`; a failure to start or a non-zero exit is a failed test naming
/// `what` and the example.
fn run(mut command: Command, dir: &Path, what: &str) -> Result<Output, Failed> {
    let out = command
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{what} in {}: cannot start: {e}", dir.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed in {} ({}):\n{}",
            dir.display(),
            out.status,
            output_text(&out)
        )
        .into());
    }
    Ok(out)
}

/// `cargo subcommand` for the example `dir` ([`common::e2e::cargo`] in [`examples_target`]).
fn example_cargo(dir: &Path, subcommand: &str) -> Command {
    let mut command = common::e2e::cargo();
    command
        .arg(subcommand)
        .env("CARGO_TARGET_DIR", examples_target());
    if dir.join("Cargo.lock").is_file() {
        command.arg("--locked");
    }
    command
}

/// The test of one example: manifests up to date, then build and test.
fn check_example(dir: &Path) -> Result<(), Failed> {
    let mut manifests = Command::new(env!("CARGO_BIN_EXE_rsbuilder"));
    manifests.args(["manifests", "--check"]);
    run(
        manifests,
        dir,
        "`rsbuilder manifests --check` (config/ drifted from the sources; run `rsbuilder manifests` there)",
    )?;

    let Some(_serial) = common::e2e::opted_in() else {
        eprintln!("{}: cargo build and cargo test skipped", dir.display());
        return Ok(());
    };
    run(example_cargo(dir, "build"), dir, "cargo build")?;
    let out = run(example_cargo(dir, "test"), dir, "cargo test")?;
    // A crate whose tests all vanished would pass silently: require at least one test to run.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ran: usize = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("test result: ok. "))
        .filter_map(|rest| rest.split(' ').next()?.parse::<usize>().ok())
        .sum();
    if ran == 0 {
        return Err(format!(
            "cargo test ran no test in {}:\n{}",
            dir.display(),
            output_text(&out)
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dirs = match examples() {
        Ok(dirs) => dirs,
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    };
    let trials = dirs
        .into_iter()
        .map(|dir| {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(name, move || check_example(&dir))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
