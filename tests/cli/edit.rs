//! `rsbuilder edit --namespaced=<bool>`: a project switched either way equals a fresh `init`
//! with the other setting, byte for byte; parts the user changed are refused (nothing written)
//! or, with `--force`, overwritten; setting the current value changes nothing; switching to
//! namespaced warns about kinds a Role cannot grant. No generated project is compiled.

use crate::common;
use common::{rsbuilder, tree};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use predicates::prelude::*;

/// Asserts two trees hold the same files with the same bytes, naming the files that differ.
fn assert_same_tree(got: &Path, want: &Path) {
    let (got, want) = (tree(got), tree(want));
    let names = |t: &BTreeMap<String, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want));
    let differing: Vec<&String> = got.keys().filter(|k| got[*k] != want[*k]).collect();
    assert!(differing.is_empty(), "files differ: {differing:?}");
}

/// `rsbuilder init` (with `extra` flags) in a fresh directory named `demo`.
fn init(extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com", "--owner", "Jane Doe"])
        .args(extra)
        .assert()
        .success();
    (tmp, dir)
}

fn edit(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    rsbuilder(dir).arg("edit").args(args).assert()
}

/// The files `init` writes differently for the two settings (besides PROJECT).
const SWITCHED: [&str; 5] = [
    "README.md",
    "config/manager/manager.yaml",
    "config/rbac/role.yaml",
    "config/rbac/role_binding.yaml",
    "src/main.rs",
];

#[test]
fn cluster_wide_to_namespaced_equals_a_fresh_namespaced_init() {
    let (_a, edited) = init(&[]);
    let (_b, fresh) = init(&["--namespaced"]);
    let out = edit(&edited, &["--namespaced=true"]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for path in SWITCHED.iter().chain(&["PROJECT"]) {
        assert!(stdout.contains(&format!("update  {path}\n")), "{stdout}");
    }
    assert!(stdout.contains("now namespaced"), "{stdout}");
    // A fresh project has no cluster-scoped kinds: no warning.
    out.stderr("");
    assert_same_tree(&edited, &fresh);
    let manager = std::fs::read_to_string(edited.join("config/manager/manager.yaml")).unwrap();
    assert!(manager.contains("- name: POD_NAMESPACE\n"), "{manager}");
    let binding = std::fs::read_to_string(edited.join("config/rbac/role_binding.yaml")).unwrap();
    assert!(binding.contains("kind: RoleBinding\n"), "{binding}");
    assert!(binding.contains("  kind: Role\n"), "{binding}");
}

#[test]
fn namespaced_to_cluster_wide_equals_a_fresh_init() {
    let (_a, edited) = init(&["--namespaced"]);
    let (_b, fresh) = init(&[]);
    edit(&edited, &["--namespaced=false"])
        .success()
        .stdout(predicate::str::contains("update  src/main.rs\n"))
        .stdout(predicate::str::contains("now cluster-wide"));
    assert_same_tree(&edited, &fresh);
}

/// The switch keeps what later commands added: `create api` and `manifests` on both sides,
/// then the cluster-wide one is switched.
#[test]
fn a_project_with_apis_switches_like_a_fresh_one() {
    let (_a, edited) = init(&[]);
    let (_b, fresh) = init(&["--namespaced"]);
    for dir in [&edited, &fresh] {
        rsbuilder(dir)
            .args(["create", "api", "--group", "ai", "--version", "v1"])
            .args(["--kind", "AIJob"])
            .assert()
            .success();
        rsbuilder(dir).arg("manifests").assert().success();
    }
    edit(&edited, &["--namespaced"]).success();
    assert_same_tree(&edited, &fresh);
}

/// The state the first releases of `edit` left: PROJECT switched, every file still
/// cluster-wide. Re-running the edit completes the switch.
#[test]
fn a_project_whose_project_file_alone_was_switched_is_completed() {
    let (_a, edited) = init(&[]);
    let (_b, fresh) = init(&["--namespaced"]);
    std::fs::copy(fresh.join("PROJECT"), edited.join("PROJECT")).unwrap();
    edit(&edited, &["--namespaced=true"])
        .success()
        .stdout(predicate::str::contains(
            "PROJECT already had `namespaced: true`",
        ))
        .stdout(predicate::str::contains(
            "update  config/rbac/role_binding.yaml\n",
        ))
        .stdout(predicate::str::contains("update  PROJECT").not());
    assert_same_tree(&edited, &fresh);
}

/// Replaces `from` (which must occur) by `to` in `dir/rel`.
fn change(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

const CLUSTER_WIDE_NAMESPACE: &str = "namespaced: false,";
const USER_NAMESPACE: &str = "namespaced: false, // reviewed by the team";

#[test]
fn a_changed_main_rs_part_is_refused_and_nothing_is_written() {
    let (_a, dir) = init(&[]);
    change(&dir, "src/main.rs", CLUSTER_WIDE_NAMESPACE, USER_NAMESPACE);
    let before = tree(&dir);
    edit(&dir, &["--namespaced=true"])
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "cannot switch the project to namespaced: src/main.rs no longer holds what \
             `rsbuilder init` wrote there",
        ))
        .stderr(predicate::str::contains("Nothing was changed."))
        // The change to make by hand, as a diff of what init wrote.
        .stderr(predicate::str::contains(format!(
            "    -    {CLUSTER_WIDE_NAMESPACE}\n"
        )))
        .stderr(predicate::str::contains("    +    namespaced: true,\n"))
        .stderr(predicate::str::contains("--force"));
    assert_eq!(tree(&dir), before, "a refused edit changed the tree");
}

#[test]
fn changes_in_several_files_are_all_reported_and_nothing_is_written() {
    let (_a, dir) = init(&["--namespaced"]);
    change(
        &dir,
        "src/main.rs",
        "namespaced: true,",
        "namespaced: true, // reviewed by the team",
    );
    change(
        &dir,
        "config/manager/manager.yaml",
        "        # The manager watches only its own namespace.\n",
        "",
    );
    let before = tree(&dir);
    edit(&dir, &["--namespaced=false"])
        .code(1)
        .stderr(predicate::str::contains(
            "cannot switch the project to cluster-wide: config/manager/manager.yaml, \
             src/main.rs no longer hold what `rsbuilder init` wrote there, so rsbuilder does \
             not change them.",
        ))
        .stderr(predicate::str::contains(
            "  config/manager/manager.yaml: make this change by hand",
        ))
        .stderr(predicate::str::contains(
            "    -        - name: POD_NAMESPACE\n",
        ))
        .stderr(predicate::str::contains(
            "  src/main.rs: make this change by hand",
        ))
        .stderr(predicate::str::contains(format!(
            "    +    {CLUSTER_WIDE_NAMESPACE}\n"
        )));
    assert_eq!(tree(&dir), before, "a refused edit changed the tree");
}

/// `create api` on both sides, then a changed line in the cluster-wide project's main.rs:
/// `--force` replaces that part only, so the controllers `create api` added stay.
#[test]
fn force_replaces_the_changed_part_and_keeps_the_rest_of_the_file() {
    let (_a, dir) = init(&[]);
    let (_b, fresh) = init(&["--namespaced"]);
    for d in [&dir, &fresh] {
        rsbuilder(d)
            .args(["create", "api", "--group", "ai", "--version", "v1"])
            .args(["--kind", "AIJob"])
            .assert()
            .success();
    }
    change(&dir, "src/main.rs", CLUSTER_WIDE_NAMESPACE, USER_NAMESPACE);
    edit(&dir, &["--namespaced=true", "--force"])
        .success()
        .stdout(predicate::str::contains(
            "replaced the parts of src/main.rs you changed with what `rsbuilder init` writes \
             (--force)",
        ))
        .stdout(predicate::str::contains("overwrote").not());
    assert_same_tree(&dir, &fresh);
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains("aijob_controller::AIJobReconciler"), "{main}");
}

/// When the lines around the changed part changed too, `--force` overwrites the whole file.
#[test]
fn force_never_overwrites_a_file_whose_part_cannot_be_found() {
    let (_a, dir) = init(&[]);
    change(
        &dir,
        "src/main.rs",
        &format!("    {CLUSTER_WIDE_NAMESPACE}\n}};\n"),
        &format!("    {USER_NAMESPACE}\n}}; // the project's defaults\n"),
    );
    let before = tree(&dir);
    edit(&dir, &["--namespaced=true", "--force"])
        .code(1)
        .stderr(predicate::str::contains(
            "src/main.rs: make this change by hand",
        ))
        .stderr(predicate::str::contains(
            "--force could not place these parts: the lines around them changed too, and \
             rsbuilder never overwrites a whole file",
        ));
    assert!(tree(&dir) == before, "a refused --force changed the tree");
}

#[test]
fn a_readme_of_ones_own_is_left_alone_with_the_change_to_make() {
    let (_a, dir) = init(&[]);
    std::fs::write(dir.join("README.md"), "# demo\nMy own words.\n").unwrap();
    edit(&dir, &["--namespaced=true"])
        .success()
        .stdout(predicate::str::contains(
            "note: README.md differs from what `init` wrote; left alone",
        ))
        .stdout(predicate::str::contains(
            "+| `--namespace` | the manager's namespace | watch only this namespace |",
        ));
    assert_eq!(
        std::fs::read_to_string(dir.join("README.md")).unwrap(),
        "# demo\nMy own words.\n"
    );
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains("    namespaced: true,\n"), "{main}");
}

#[test]
fn setting_the_current_value_changes_nothing() {
    for (flags, edit_args, says) in [
        (&[][..], "--namespaced=false", "already cluster-wide"),
        (
            &["--namespaced"][..],
            "--namespaced=true",
            "already namespaced",
        ),
    ] {
        let (_a, dir) = init(flags);
        let before = tree(&dir);
        edit(&dir, &[edit_args])
            .success()
            .stdout(predicate::str::contains(says))
            .stdout(predicate::str::contains("nothing changed"))
            .stdout(predicate::str::contains("update").not())
            .stderr("");
        assert_eq!(tree(&dir), before, "{edit_args}");
    }
}

#[test]
fn edit_without_a_setting_is_a_usage_error() {
    let (_a, dir) = init(&[]);
    let before = tree(&dir);
    edit(&dir, &[])
        .code(2)
        .stderr(predicate::str::contains("--namespaced"))
        .stderr(predicate::str::contains("--license"));
    assert_eq!(tree(&dir), before);
}

#[test]
fn becoming_namespaced_warns_about_cluster_scoped_kinds() {
    let (_a, dir) = init(&[]);
    for args in [
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"][..],
        &["--group", "ai", "--version", "v1", "--kind", "Fleet"],
        &["--group", "core", "--version", "v1", "--kind", "Node"],
    ] {
        let mut cmd = rsbuilder(&dir);
        cmd.args(["create", "api"]).args(args);
        if args.contains(&"Fleet") {
            cmd.arg("--namespaced=false");
        }
        if args.contains(&"Node") {
            cmd.arg("--resource=false");
        }
        cmd.assert().success();
    }
    let lib = dir.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str("// +kubebuilder:rbac:groups=core,resources=namespaces,verbs=get\n");
    std::fs::write(&lib, text).unwrap();
    let out = edit(&dir, &["--namespaced=true"]).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.starts_with(
            "warning: a namespaced Role cannot grant access to cluster-scoped resources"
        ),
        "{stderr}"
    );
    for named in [
        "  - Fleet (ai.example.com/v1): a cluster-scoped API of this project (PROJECT)\n",
        "  - Node (core/v1): a cluster-scoped built-in kind with a controller (PROJECT)\n",
        "  - namespaces (core): a cluster-scoped built-in resource (+kubebuilder:rbac at src/lib.rs:",
    ] {
        assert!(stderr.contains(named), "{named:?} missing from:\n{stderr}");
    }
    // Namespaced kinds are fine; Node is named once, not again for its controller's marker.
    assert!(!stderr.contains("AIJob"), "{stderr}");
    assert_eq!(
        stderr.matches("Node").count() + stderr.matches("nodes").count(),
        1
    );
    // The switch itself happened.
    assert!(
        rsbuilder::model::Project::load(&dir).unwrap().namespaced,
        "PROJECT not switched"
    );
}

/// Files with CRLF line endings (a checkout with `core.autocrlf`) are switched like LF ones,
/// never left with mixed line endings: YAML keeps CRLF throughout; Rust files come out of
/// rustfmt, as every Rust file rsbuilder writes, with LF.
#[test]
fn crlf_files_are_switched_and_keep_their_line_endings() {
    let (_a, dir) = init(&[]);
    let (_b, fresh) = init(&["--namespaced"]);
    let files = [
        "src/main.rs",
        "config/manager/manager.yaml",
        "config/rbac/role.yaml",
        "config/rbac/role_binding.yaml",
    ];
    for f in files {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        std::fs::write(dir.join(f), text.replace('\n', "\r\n")).unwrap();
    }
    edit(&dir, &["--namespaced=true"]).success();
    for f in files {
        let got = std::fs::read_to_string(dir.join(f)).unwrap();
        let want = std::fs::read_to_string(fresh.join(f)).unwrap();
        let want = if f.ends_with(".rs") {
            want
        } else {
            want.replace('\n', "\r\n")
        };
        assert!(
            got == want,
            "{f} differs from the namespaced file:\n{got:?}"
        );
    }
}

/// `init` with `init_args` in a fresh `demo` directory, then `create api` for AIJob.
fn project_with_api(init_args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com"])
        .args(init_args)
        .assert()
        .success();
    rsbuilder(&dir)
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
    (tmp, dir)
}

#[test]
fn edit_license_and_owner_give_what_init_writes_with_them() {
    let (_a, dir) = project_with_api(&["--owner", "Jane Doe"]);
    let (_b, fresh) = project_with_api(&["--license", "mit", "--owner", "Example Corp."]);
    edit(&dir, &["--license", "mit", "--owner", "Example Corp."])
        .success()
        .stdout(predicate::str::contains(
            "update  src/api/v1/aijob_types.rs",
        ))
        .stdout(predicate::str::contains("update  LICENSE"))
        .stdout(predicate::str::contains(
            "README.md has a License section of its own; update it by hand",
        ));
    let mut got = tree(&dir);
    let mut want = tree(&fresh);
    got.remove("README.md");
    want.remove("README.md");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &want {
        assert!(
            got[path] == *bytes,
            "{path} differs from a fresh `init --license mit`"
        );
    }
}

#[test]
fn edit_owner_alone_keeps_the_license() {
    let (_a, dir) = project_with_api(&["--owner", "Jane Doe"]);
    let (_b, fresh) = project_with_api(&["--owner", "Acme"]);
    edit(&dir, &["--owner", "Acme"]).success();
    for f in [
        "src/lib.rs",
        "src/main.rs",
        "src/controller/aijob_controller.rs",
        "LICENSE",
        "Cargo.toml",
    ] {
        assert_eq!(
            std::fs::read_to_string(dir.join(f)).unwrap(),
            std::fs::read_to_string(fresh.join(f)).unwrap(),
            "{f}"
        );
    }
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.starts_with("// Copyright 2026 Acme.\n//\n// Licensed under the Apache"),
        "{lib}"
    );
}

#[test]
fn edit_owner_alone_on_a_header_of_ones_own_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let header = tmp.path().join("header.txt");
    std::fs::write(&header, "Property of Acme.\n").unwrap();
    let (_a, dir) = project_with_api(&["--license", header.to_str().unwrap()]);
    let before = tree(&dir);
    edit(&dir, &["--owner", "Someone"])
        .code(1)
        .stderr(predicate::str::contains("a header of your own"))
        .stderr(predicate::str::contains("pass --license"));
    assert_eq!(tree(&dir), before);
    edit(&dir, &["--license", "none"]).success();
    let types = std::fs::read_to_string(dir.join("src/api/v1/aijob_types.rs")).unwrap();
    assert!(!types.contains("Property of Acme"), "{types}");
    assert!(
        !std::fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .contains("license")
    );
}

/// `edit --help` names exactly the files `init` writes differently for the two settings, no
/// file `init` no longer writes.
#[test]
fn help_names_the_files_the_setting_switches() {
    let (_a, cluster) = init(&[]);
    let (_b, namespaced) = init(&["--namespaced"]);
    let (one, other) = (tree(&cluster), tree(&namespaced));
    let differing: Vec<&str> = one
        .iter()
        .filter(|(p, bytes)| p.as_str() != "PROJECT" && other.get(*p) != Some(bytes))
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(differing, SWITCHED);
    let out = rsbuilder(&cluster)
        .args(["edit", "--help"])
        .assert()
        .success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).replace('\n', " ");
    let listed = help
        .split_once("differently for the setting (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("{help}"));
    let mut listed: Vec<&str> = listed.split(',').map(str::trim).collect();
    listed.sort_unstable();
    assert_eq!(listed, SWITCHED, "{help}");
}
