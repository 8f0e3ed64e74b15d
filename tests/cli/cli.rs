//! The command-line surface: help texts with examples, `version`, `completion`, `edit`, and
//! usage errors with exit code 2.

use assert_cmd::Command;
use predicates::prelude::*;

fn rsbuilder() -> Command {
    Command::cargo_bin("rsbuilder").expect("binary built")
}

#[test]
fn every_command_help_shows_an_example() {
    for args in [
        vec!["init", "--help"],
        vec!["create", "api", "--help"],
        vec!["create", "webhook", "--help"],
        vec!["manifests", "--help"],
        vec!["edit", "--help"],
        vec!["version", "--help"],
        vec!["completion", "--help"],
    ] {
        rsbuilder()
            .args(&args)
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"));
    }
}

#[test]
fn version_names_scaffolded_crate_versions() {
    rsbuilder()
        .arg("version")
        .assert()
        .success()
        .stdout(predicate::str::contains(concat!(
            "rsbuilder ",
            env!("CARGO_PKG_VERSION")
        )))
        .stdout(predicate::str::contains("kube 5"))
        .stdout(predicate::str::contains("k8s-openapi 0.29"));
}

#[test]
fn completion_scripts_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        rsbuilder()
            .args(["completion", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("rsbuilder"));
    }
    rsbuilder()
        .args(["completion", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'tcsh'"));
}

#[test]
fn unknown_flags_are_usage_errors() {
    rsbuilder()
        .args(["create", "api", "--grup", "ai"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--grup"));
}

#[test]
fn edit_without_project_says_to_init() {
    let dir = tempfile::tempdir().unwrap();
    rsbuilder()
        .current_dir(dir.path())
        .args(["edit", "--namespaced=true"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("run `rsbuilder init"));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn edit_sets_namespaced_in_project() {
    let dir = tempfile::tempdir().unwrap();
    let project = rsbuilder::model::Project::new("example.com", "example.com/op", "op", false);
    std::fs::write(dir.path().join("PROJECT"), project.render()).unwrap();
    rsbuilder()
        .current_dir(dir.path())
        .args(["edit", "--namespaced"])
        .assert()
        .success();
    let after = rsbuilder::model::Project::load(dir.path()).unwrap();
    assert!(after.namespaced);
    assert_eq!(after.domain, "example.com");
}

/// Runs rsbuilder with `args` in `dir`, with stdout (or stderr, when `close_stderr`) connected
/// to a pipe whose read end is already closed, so every write to it fails with EPIPE. Returns
/// the exit status and what the other stream received.
#[cfg(unix)]
fn run_with_closed_pipe(
    dir: &std::path::Path,
    args: &[&str],
    close_stderr: bool,
) -> (std::process::ExitStatus, String) {
    // std::io::pipe opens both ends close-on-exec: a child that another test thread spawns
    // meanwhile cannot inherit the read end and keep the pipe open (which made the write succeed,
    // so no SIGPIPE, now and then under a parallel run).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rsbuilder"));
    cmd.current_dir(dir).args(args);
    if close_stderr {
        cmd.stderr(writer).stdout(std::process::Stdio::piped());
    } else {
        cmd.stdout(writer).stderr(std::process::Stdio::piped());
    }
    let out = cmd.output().unwrap();
    let other = if close_stderr { out.stdout } else { out.stderr };
    (out.status, String::from_utf8_lossy(&other).into_owned())
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_process_quietly_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["version"][..],
        &["completion", "bash"],
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/pipe",
            "--project-name",
            "pipe",
        ],
    ] {
        let (status, stderr) = run_with_closed_pipe(dir.path(), args, false);
        assert_ne!(status.code(), Some(101), "{args:?} panicked: {stderr}");
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{args:?}: {status:?}");
        assert_eq!(stderr, "", "{args:?}");
    }
    // init wrote its files before it printed the (lost) report.
    assert!(dir.path().join("PROJECT").is_file());
    // An error message to a closed stderr: same quiet end, not a panic.
    let empty = tempfile::tempdir().unwrap();
    let (status, stdout) = run_with_closed_pipe(empty.path(), &["edit", "--namespaced"], true);
    assert_ne!(status.code(), Some(101), "{status:?}");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    assert_eq!(stdout, "");
}
