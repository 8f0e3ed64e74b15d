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
