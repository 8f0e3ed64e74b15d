//! FIFOs and devices where rsbuilder reads a file (PROJECT, Cargo.toml, a module file, a
//! source under src/): the command refuses the path by name at once, exits 1 and writes
//! nothing. Before, a FIFO made the command wait forever while it held the project lock,
//! `/dev/zero` grew its memory without end, and a FIFO under src/ was skipped silently.
#![cfg(unix)]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path and mode.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "{}",
        path.display()
    );
}

/// Runs rsbuilder `args` in `dir`, killed after 60 s (a hang is the bug): exit code, stderr.
fn run_bounded(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rsbuilder"))
        .current_dir(dir)
        .args(args)
        .env("SOURCE_DATE_EPOCH", common::EPOCH_2026)
        .env_remove("RSBUILDER_FAULT_AT")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code(), err);
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("rsbuilder {args:?} still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn project_with_api() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    common::rsbuilder(tmp.path())
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
        ])
        .assert()
        .success();
    common::rsbuilder(tmp.path())
        .args([
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
        ])
        .assert()
        .success();
    tmp
}

#[test]
fn a_fifo_where_a_file_is_read_is_refused_by_name() {
    let model = [
        "create",
        "api",
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "Model",
    ];
    for (rel, args) in [
        ("PROJECT", &model[..]),
        ("src/api/v1/mod.rs", &model[..]),
        ("Cargo.toml", &["manifests"][..]),
        ("src/api/v1/fifo.rs", &["manifests"][..]),
    ] {
        let tmp = project_with_api();
        let path = tmp.path().join(rel);
        let _ = std::fs::remove_file(&path);
        mkfifo(&path);
        let before = common::tree(tmp.path());
        let (code, err) = run_bounded(tmp.path(), args);
        assert_eq!(code, Some(1), "{rel}: {err}");
        assert!(
            err.contains(rel) && err.contains("not a regular file"),
            "{rel}: {err}"
        );
        assert_eq!(common::tree(tmp.path()), before, "{rel}");
    }
}

/// `manifests` checked PROJECT with `is_file`, so a FIFO, a `/dev/zero` link or a directory
/// there was taken for no PROJECT: the run went on (exit 0) and a namespaced project's Role
/// became a ClusterRole. Now anything at PROJECT is read, and what is not a regular file is
/// refused by name, with nothing written, by `manifests` and `manifests --check`.
#[test]
fn manifests_refuses_a_project_file_that_is_not_a_regular_file() {
    for kind in ["fifo", "dev-zero", "directory"] {
        let tmp = project_with_api();
        common::rsbuilder(tmp.path())
            .args(["edit", "--namespaced=true"])
            .assert()
            .success();
        common::rsbuilder(tmp.path())
            .arg("manifests")
            .assert()
            .success();
        let role = tmp.path().join("config/rbac/role.yaml");
        assert!(
            std::fs::read_to_string(&role)
                .unwrap()
                .contains("kind: Role\n")
        );
        let path = tmp.path().join("PROJECT");
        std::fs::remove_file(&path).unwrap();
        match kind {
            "fifo" => mkfifo(&path),
            "dev-zero" => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
            _ => std::fs::create_dir(&path).unwrap(),
        }
        // The generated files differ from what a project without PROJECT gets.
        std::fs::write(&role, "changed\n").unwrap();
        let before = common::tree(tmp.path());
        for args in [&["manifests"][..], &["manifests", "--check"][..]] {
            let (code, err) = run_bounded(tmp.path(), args);
            assert_eq!(code, Some(1), "{kind} {args:?}: {err}");
            assert!(err.contains("PROJECT"), "{kind} {args:?}: {err}");
            assert_eq!(common::tree(tmp.path()), before, "{kind} {args:?}");
        }
    }
}

#[test]
fn a_device_under_src_is_refused_not_read_without_end() {
    let tmp = project_with_api();
    std::os::unix::fs::symlink("/dev/zero", tmp.path().join("src/zero.rs")).unwrap();
    let (code, err) = run_bounded(tmp.path(), &["manifests"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("src/zero.rs") && err.contains("not a regular file"),
        "{err}"
    );
}
