//! `rsbuilder init --runtime crate`: the project depends on `rsbuilder-runtime = "<version>"`
//! and holds no copy of it; PROJECT records the choice, and `create api`, `create apiserver`,
//! `alpha update` and `alpha generate` keep to it; `alpha update` moves the requirement to
//! this rsbuilder's version.
//!
//! The end-to-end test at the end builds and tests such a project against this repository's
//! `runtime/`, through `[patch.crates-io]` (with CI=true or RSBUILDER_E2E=1; skipped otherwise,
//! as it takes minutes).

use crate::common::{self, read, tree};

use std::path::{Path, PathBuf};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = common::rsbuilder(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rsbuilder {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `init --runtime crate` and `create api` for AIJob, in a fresh temporary directory.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
            "--runtime",
            "crate",
        ],
    );
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
        ],
    );
    (tmp, dir)
}

/// The project's paths under `rsbuilder-runtime/` or `.rsbuilder/`, but the lock's pins.
fn runtime_paths(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_keys()
        .filter(|p| p.starts_with("rsbuilder-runtime/") || p.starts_with(".rsbuilder/"))
        .filter(|p| p != ".rsbuilder/Cargo.lock.pinned" && !p.starts_with(".rsbuilder/scaffold/"))
        .collect()
}

#[test]
fn init_with_the_runtime_by_version_writes_no_copy_and_records_the_choice() {
    let (_tmp, dir) = project();
    assert_eq!(runtime_paths(&dir), Vec::<String>::new());
    let cargo = read(&dir, "Cargo.toml");
    assert!(
        cargo.contains(&format!("\nrsbuilder-runtime = \"{VERSION}\"\n")),
        "{cargo}"
    );
    assert!(
        cargo.contains(&format!(
            "rsbuilder-runtime = {{ version = \"{VERSION}\", features = [\"testing\"] }}"
        )),
        "{cargo}"
    );
    assert!(!cargo.contains("path = \"rsbuilder-runtime\""), "{cargo}");
    assert!(
        read(&dir, "PROJECT").contains("plugins:\n  runtime.rsbuilder.io/v1:\n    source: crate\n"),
        "{}",
        read(&dir, "PROJECT")
    );
    let docker = read(&dir, "Dockerfile");
    assert!(!docker.contains("rsbuilder-runtime"), "{docker}");
    assert!(!read(&dir, ".dockerignore").contains("rsbuilder-runtime"));
}

#[test]
fn an_unknown_runtime_choice_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = common::rsbuilder(tmp.path())
        .args(["init", "--runtime", "git"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("expected `vendored` or `crate`, not \"git\""),
        "{stderr}"
    );
    assert_eq!(tree(tmp.path()).len(), 0);
}

#[test]
fn later_commands_keep_to_the_runtime_by_version() {
    let (_tmp, dir) = project();
    run_ok(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--defaulting",
        ],
    );
    run_ok(
        &dir,
        &[
            "create",
            "apiserver",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Database",
        ],
    );
    let cargo = read(&dir, "Cargo.toml");
    assert!(
        cargo.contains(&format!(
            "\nrsbuilder-runtime = {{ version = \"{VERSION}\", features = [\"apiserver\"] }}\n"
        )),
        "{cargo}"
    );
    assert_eq!(runtime_paths(&dir), Vec::<String>::new());
    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(out.contains("nothing to do"), "{out}");
    assert_eq!(runtime_paths(&dir), Vec::<String>::new());

    let regenerated = tempfile::tempdir().unwrap();
    let into = regenerated.path().join("new");
    run_ok(
        &dir,
        &["alpha", "generate", "--output-dir", into.to_str().unwrap()],
    );
    assert_eq!(runtime_paths(&into), Vec::<String>::new());
    assert_eq!(read(&into, "Cargo.toml"), cargo);
    assert_eq!(read(&into, "PROJECT"), read(&dir, "PROJECT"));
}

/// `alpha update` moves the project's `rsbuilder-runtime` requirements to this rsbuilder's
/// version, keeping the entries' other keys and comments, and says so; `--dry-run` says it
/// would and writes nothing.
#[test]
fn alpha_update_moves_the_runtime_requirement_to_this_version() {
    let (_tmp, dir) = project();
    let cargo = read(&dir, "Cargo.toml");
    let old = cargo
        .replacen(
            &format!("\nrsbuilder-runtime = \"{VERSION}\"\n"),
            "\nrsbuilder-runtime = { version = \"0.0.1\", default-features = false } # by hand\n",
            1,
        )
        .replacen(
            &format!("rsbuilder-runtime = {{ version = \"{VERSION}\", features = [\"testing\"] }}"),
            "rsbuilder-runtime = { version = \"0.0.2\", features = [\"testing\"] }",
            1,
        );
    assert_ne!(old, cargo);
    std::fs::write(dir.join("Cargo.toml"), &old).unwrap();

    let out = run_ok(&dir, &["alpha", "update", "--dry-run"]);
    assert!(
        out.contains(&format!(
            "version  Cargo.toml: rsbuilder-runtime in [dependencies] would move from \"0.0.1\" to \"{VERSION}\"\n"
        )),
        "{out}"
    );
    assert_eq!(read(&dir, "Cargo.toml"), old);

    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(
        out.contains(&format!(
            "version  Cargo.toml: rsbuilder-runtime in [dependencies] moved from \"0.0.1\" to \"{VERSION}\"\n\
             version  Cargo.toml: rsbuilder-runtime in [dev-dependencies] moved from \"0.0.2\" to \"{VERSION}\"\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "The project now depends on rsbuilder-runtime {VERSION}."
        )),
        "{out}"
    );
    let expected = cargo.replacen(
        &format!("\nrsbuilder-runtime = \"{VERSION}\"\n"),
        &format!(
            "\nrsbuilder-runtime = {{ version = \"{VERSION}\", default-features = false }} # by hand\n"
        ),
        1,
    );
    assert_eq!(read(&dir, "Cargo.toml"), expected);
    assert_eq!(runtime_paths(&dir), Vec::<String>::new());
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
}

/// The project builds and passes its tests on this repository's runtime, reached through
/// `[patch.crates-io]` as it would be from a registry.
#[test]
fn a_project_on_the_runtime_by_version_builds_and_passes_its_tests() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let (_tmp, dir) = project();
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
    let mut cargo = read(&dir, "Cargo.toml");
    cargo.push_str(&format!(
        "\n[patch.crates-io]\nrsbuilder-runtime = {{ path = {:?} }}\n",
        runtime.to_str().unwrap()
    ));
    std::fs::write(dir.join("Cargo.toml"), cargo).unwrap();
    // The controller's test loads the kind's CRD from config/crd/bases.
    run_ok(&dir, &["manifests"]);
    common::e2e::cargo_ok(&dir, &["build", "--bin", "manager"]);
    common::e2e::cargo_ok(&dir, &["test"]);
}
