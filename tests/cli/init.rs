//! `rsbuilder init`: the whole generated tree (insta snapshots), its variants, and every
//! refusal (exit code 1, a message naming the flag or file, nothing written).

use crate::common;
use common::{rsbuilder, tree};

use std::path::Path;
use std::process::Command as StdCommand;

use predicates::prelude::*;
use rsbuilder::scaffold::{File, Plan};

/// A fresh directory named `name` inside a temp dir (the name is the default project name).
fn project_dir(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    (tmp, dir)
}

fn init_ai_operator() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = project_dir("ai-operator");
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("create  src/main.rs"));
    (tmp, dir)
}

const EXPECTED_FILES: &[&str] = &[
    ".dockerignore",
    ".github/workflows/lint.yml",
    ".github/workflows/test-e2e.yml",
    ".github/workflows/test.yml",
    ".gitignore",
    "Cargo.lock",
    "Cargo.toml",
    "Dockerfile",
    "LICENSE",
    "Makefile",
    "PROJECT",
    "README.md",
    "config/default/kustomization.yaml",
    "config/default/metrics_service.yaml",
    "config/manager/kustomization.yaml",
    "config/manager/manager.yaml",
    "config/network-policy/allow-metrics-traffic.yaml",
    "config/network-policy/kustomization.yaml",
    "config/prometheus/kustomization.yaml",
    "config/prometheus/monitor.yaml",
    "config/rbac/kustomization.yaml",
    "config/rbac/leader_election_role.yaml",
    "config/rbac/leader_election_role_binding.yaml",
    "config/rbac/metrics_auth_role.yaml",
    "config/rbac/metrics_auth_role_binding.yaml",
    "config/rbac/metrics_reader_role.yaml",
    "config/rbac/role.yaml",
    "config/rbac/role_binding.yaml",
    "config/rbac/service_account.yaml",
    "src/lib.rs",
    "src/main.rs",
    "tests/e2e.rs",
];

fn snapshot_name(prefix: &str, path: &str) -> String {
    format!("{prefix}{}", path.replace(['/', '.'], "_"))
}

#[test]
fn init_writes_the_whole_tree() {
    let (_tmp, dir) = init_ai_operator();
    let mut files = tree(&dir);
    // The tool-owned runtime crate and rsbuilder's records of it: checked in
    // `init_writes_the_runtime_as_tool_owned_files`; the user's files are reviewed here.
    files.retain(|path, _| {
        !path.starts_with("rsbuilder-runtime/") && !path.starts_with(".rsbuilder/")
    });
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        EXPECTED_FILES
    );
    for (path, bytes) in &files {
        let text = String::from_utf8(bytes.clone()).unwrap();
        if path == "LICENSE" {
            // The license text itself is not ours to review line by line.
            assert!(text.contains("Apache License"), "{text}");
            assert!(text.contains("Version 2.0, January 2004"), "{text}");
            continue;
        }
        if path == "Cargo.lock" {
            // rsbuilder's own lock file less its own entry (src/scaffold/lockfile.rs tests
            // it): the versions the runtime was tested with, not a text to review here.
            assert_eq!(text, rsbuilder::scaffold::lockfile::project_lock());
            assert!(text.contains("\nname = \"rustls\"\n"), "{text:.300}");
            continue;
        }
        assert!(text.ends_with('\n') && !text.ends_with("\n\n"), "{path}");
        insta::assert_snapshot!(snapshot_name("tree__", path), text);
    }
}

#[test]
fn init_writes_the_runtime_as_tool_owned_files() {
    use rsbuilder::engine::owned;
    use rsbuilder::scaffold::runtime;
    let (_tmp, dir) = init_ai_operator();
    let files = tree(&dir);
    let text = |path: &str| String::from_utf8(files[path].clone()).unwrap();
    let on_disk: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| p.starts_with("rsbuilder-runtime/"))
        .collect();
    // Without the server part: no API server, no test cluster (`create api` adds them).
    let embedded = runtime::project_files(false);
    let paths: Vec<String> = embedded
        .keys()
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(on_disk, paths);
    assert!(
        on_disk.contains(&"rsbuilder-runtime/src/manager.rs"),
        "{on_disk:?}"
    );
    assert!(
        !on_disk
            .iter()
            .any(|p| p.starts_with("rsbuilder-runtime/src/apiserver/")
                || p.starts_with("rsbuilder-runtime/src/testing/")),
        "{on_disk:?}"
    );
    let mut manifest = String::new();
    for (path, contents) in &embedded {
        let path = path.to_str().unwrap();
        // Written byte for byte, with its tool-owned first line.
        assert_eq!(text(path), *contents, "{path}");
        assert!(
            contents
                .lines()
                .next()
                .unwrap()
                .ends_with(runtime::TOOL_OWNED_LINE),
            "{path}"
        );
        manifest.push_str(&format!("{}  {path}\n", owned::sha256_hex(contents)));
    }
    assert_eq!(text(owned::MANIFEST), manifest);
    // Records: the hashes of the runtime's files, the rsbuilder version whose runtime they
    // are (the merge base is that version's text, which rsbuilder carries: no copy here), and
    // the pins of Cargo.lock (the user's file; `alpha update`'s base), the lock as written.
    let recorded: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| p.starts_with(".rsbuilder/"))
        .collect();
    assert_eq!(
        recorded,
        [
            ".rsbuilder/Cargo.lock.pinned",
            ".rsbuilder/runtime-version",
            ".rsbuilder/tool-owned.sha256"
        ]
    );
    assert_eq!(
        text(runtime::VERSION_RECORD),
        format!("{}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(text(".rsbuilder/Cargo.lock.pinned"), text("Cargo.lock"));
    let cargo = text("Cargo.toml");
    assert!(
        cargo.contains("rsbuilder-runtime = { path = \"rsbuilder-runtime\" }"),
        "{cargo}"
    );
    let docker = text("Dockerfile");
    assert!(
        docker.contains("COPY rsbuilder-runtime/ rsbuilder-runtime/"),
        "{docker}"
    );
}

#[test]
fn init_records_the_project() {
    let (_tmp, dir) = init_ai_operator();
    let project = rsbuilder::model::Project::load(&dir).unwrap();
    assert_eq!(project.domain, "ai.example.com");
    assert_eq!(project.repo, "example.com/ai-operator");
    assert_eq!(project.project_name, "ai-operator");
    assert_eq!(project.layout, vec![rsbuilder::model::project::LAYOUT]);
    assert_eq!(project.version, "3");
    assert!(!project.namespaced);
    assert!(project.resources.is_empty());
}

#[test]
fn generated_sources_keep_every_scaffold_marker() {
    let (_tmp, dir) = init_ai_operator();
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let cargo = read("Cargo.toml");
    let deps = cargo.split("[dev-dependencies]").next().unwrap();
    assert_eq!(
        deps.trim_end().lines().last(),
        Some("# +kubebuilder:scaffold:dependencies")
    );
    assert_eq!(
        cargo.trim_end().lines().last(),
        Some("# +kubebuilder:scaffold:dev-dependencies")
    );
    assert!(read("src/lib.rs").ends_with("\n\n// +kubebuilder:scaffold:modules\n"));
    let main = read("src/main.rs");
    for marker in ["imports", "controllers", "webhooks"] {
        assert_eq!(
            main.matches(&format!("// +kubebuilder:scaffold:{marker}\n"))
                .count(),
            1,
            "{marker}"
        );
    }
    // Certificates are loaded before the manager connects; webhooks start before leader
    // election, controllers only once this replica leads.
    let start = main.find("Runner::start(args, &OPTIONS)").unwrap();
    assert!(main.find("+kubebuilder:scaffold:certificates").unwrap() < start);
    let elect = main.find("runner.elect_leader()").unwrap();
    assert!(start < main.find("+kubebuilder:scaffold:webhooks").unwrap());
    assert!(main.find("+kubebuilder:scaffold:webhooks").unwrap() < elect);
    assert!(elect < main.find("+kubebuilder:scaffold:controllers").unwrap());
    assert!(main.lines().count() <= 80, "{main}");
    let default = read("config/default/kustomization.yaml");
    for marker in ["default-resources", "default-patches", "default-sections"] {
        assert!(
            default.contains(&format!("\n# +kubebuilder:scaffold:{marker}\n")),
            "{marker}"
        );
    }
    assert!(
        read("config/rbac/kustomization.yaml").contains("# +kubebuilder:scaffold:rbac-resources")
    );
}

#[test]
fn namespaced_projects_use_roles_and_the_pod_namespace() {
    let (_tmp, dir) = project_dir("team-operator");
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com", "--namespaced"])
        .assert()
        .success();
    let files = tree(&dir);
    for path in [
        "PROJECT",
        "config/rbac/role.yaml",
        "config/rbac/role_binding.yaml",
        "config/manager/manager.yaml",
    ] {
        let text = String::from_utf8(files[path].clone()).unwrap();
        insta::assert_snapshot!(snapshot_name("namespaced__", path), text);
    }
    // The runtime reads --namespace from POD_NAMESPACE and defaults it to the manager's own
    // namespace for a namespaced project (tested in runtime/tests/manager.rs).
    let main = String::from_utf8(files["src/main.rs"].clone()).unwrap();
    assert!(main.contains("    namespaced: true,\n"), "{main}");
    // --repo defaults to the project name.
    let project = rsbuilder::model::Project::load(&dir).unwrap();
    assert!(project.namespaced);
    assert_eq!(project.repo, "team-operator");
}

#[test]
fn license_none_writes_no_license_or_headers() {
    let (_tmp, dir) = project_dir("plain");
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com", "--license", "none"])
        .assert()
        .success();
    let files = tree(&dir);
    assert!(!files.contains_key("LICENSE"));
    let cargo = String::from_utf8(files["Cargo.toml"].clone()).unwrap();
    assert!(!cargo.contains("license"), "{cargo}");
    let lib = String::from_utf8(files["src/lib.rs"].clone()).unwrap();
    assert!(lib.starts_with("//! plain: "), "{lib}");
    let readme = String::from_utf8(files["README.md"].clone()).unwrap();
    assert!(!readme.contains("Apache"), "{readme}");
}

#[test]
fn owner_and_year_go_into_the_headers() {
    let (_tmp, dir) = project_dir("owned");
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--owner",
            "Example Corp.",
        ])
        .env("SOURCE_DATE_EPOCH", "1893456000") // 2030-01-01
        .assert()
        .success();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.starts_with(
            "// Copyright 2030 Example Corp.\n//\n// Licensed under the Apache License, Version 2.0"
        ),
        "{lib}"
    );
}

#[test]
fn second_init_refuses_and_changes_nothing() {
    let (_tmp, dir) = init_ai_operator();
    // A user edit that must survive.
    std::fs::write(dir.join("src/lib.rs"), "// edited\n").unwrap();
    let before = tree(&dir);
    rsbuilder(&dir)
        .args(["init", "--domain", "other.example.com", "--repo", "x/y"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "already holds PROJECT, Cargo.toml, src/main.rs",
        ))
        .stderr(predicate::str::contains("changed nothing"));
    assert_eq!(tree(&dir), before);
}

#[test]
fn init_refuses_an_existing_cargo_project() {
    for existing in ["Cargo.toml", "PROJECT", "src/main.rs"] {
        let (_tmp, dir) = project_dir("existing");
        let file = dir.join(existing);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "user content\n").unwrap();
        let before = tree(&dir);
        rsbuilder(&dir)
            .args(["init", "--domain", "example.com"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "already holds {existing}"
            )));
        assert_eq!(tree(&dir), before, "{existing}");
    }
}

#[test]
fn init_refuses_files_it_would_overwrite() {
    let (_tmp, dir) = project_dir("half");
    std::fs::create_dir_all(dir.join("config/manager")).unwrap();
    std::fs::write(dir.join("config/manager/manager.yaml"), "mine\n").unwrap();
    std::fs::write(dir.join("Makefile"), "all:\n").unwrap();
    let before = tree(&dir);
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "already holds config/manager/manager.yaml, Makefile",
        ));
    assert_eq!(tree(&dir), before);
}

#[test]
fn init_keeps_an_existing_readme_license_and_gitignore() {
    let (_tmp, dir) = project_dir("cloned");
    for f in ["README.md", "LICENSE", ".gitignore"] {
        std::fs::write(dir.join(f), format!("user {f}\n")).unwrap();
    }
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com"])
        .assert()
        .success()
        .stdout(predicate::str::contains("create  Cargo.toml"))
        .stdout(predicate::str::contains("README.md").not())
        // The user's .gitignore stays, with a note of the lines it lacks (before: silence).
        .stderr(predicate::str::contains(
            "note: .gitignore was there before and is kept as it is; add `/target/`, `/.rsbuilder/txn/`, `/.rsbuilder/fmt-*/`: an interrupted command leaves its journal",
        ));
    for f in ["README.md", "LICENSE", ".gitignore"] {
        assert_eq!(
            std::fs::read_to_string(dir.join(f)).unwrap(),
            format!("user {f}\n")
        );
    }
    assert!(dir.join("src/main.rs").is_file());
}

/// Runs `init` with `args` in a directory named `dir_name` and asserts it fails with exit
/// code 1, a message containing every one of `messages`, and an empty directory.
fn assert_refused(dir_name: &str, args: &[&str], messages: &[&str]) {
    let (_tmp, dir) = project_dir(dir_name);
    let assert = rsbuilder(&dir).arg("init").args(args).assert().code(1);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    for m in messages {
        assert!(stderr.contains(m), "{args:?}: expected {m:?} in {stderr}");
    }
    assert!(
        tree(&dir).is_empty(),
        "{args:?} wrote files: {:?}",
        tree(&dir).keys()
    );
}

#[test]
fn bad_project_names_are_rejected() {
    let long = "a".repeat(64);
    let cases: &[(&str, &[&str])] = &[
        (
            "My_Operator",
            &["--project-name", "\"My_Operator\"", "DNS-1123 label"],
        ),
        (
            "-op",
            &["--project-name", "start and end with an alphanumeric"],
        ),
        (
            "1op",
            &["--project-name", "must start with a letter", "Cargo"],
        ),
        ("fn", &["--project-name", "Rust keyword"]),
        (&long, &["--project-name", "no more than 63 characters"]),
    ];
    for (name, messages) in cases {
        let flag = format!("--project-name={name}");
        assert_refused("ok-dir", &["--domain", "example.com", &flag], messages);
    }
}

#[test]
fn a_bad_directory_name_needs_project_name() {
    assert_refused(
        "My_Operator",
        &["--domain", "example.com"],
        &[
            "--project-name",
            "\"My_Operator\"",
            "the directory's name unless --project-name sets it",
        ],
    );
    // The flag fixes it.
    let (_tmp, dir) = project_dir("My_Operator");
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "my-operator",
        ])
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .contains("name = \"my-operator\"")
    );
}

#[test]
fn bad_domains_are_rejected() {
    for domain in ["Example.com", "example..com", "-example.com", "example_com"] {
        assert_refused(
            "op",
            &[&format!("--domain={domain}")],
            &["--domain", &format!("{domain:?}"), "DNS-1123 subdomain"],
        );
    }
    assert_refused("op", &["--domain", ""], &["--domain", "must not be empty"]);
}

#[test]
fn bad_repo_and_owner_are_rejected() {
    assert_refused(
        "op",
        &["--domain", "example.com", "--repo", "example.com/\"x\""],
        &["--repo", "quotes"],
    );
    assert_refused(
        "op",
        &["--domain", "example.com", "--repo", "my repo"],
        &["--repo", "whitespace"],
    );
    assert_refused(
        "op",
        &["--domain", "example.com", "--owner", "Line one\nLine two"],
        &["--owner", "single line"],
    );
}

#[test]
fn bad_license_is_a_usage_error() {
    let (_tmp, dir) = project_dir("op");
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--license",
            "gpl-by-mistake",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--license"))
        .stderr(predicate::str::contains(
            "expected none, apache2, mit or the path of a license header file",
        ));
    assert!(tree(&dir).is_empty());
}

fn kubectl_kustomize(dir: &Path) -> Option<String> {
    let out = match StdCommand::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(dir)
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            common::missing("the kustomize check: kubectl is not installed");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "kubectl kustomize config/default failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn config_default_renders_with_kustomize() {
    let (_tmp, dir) = init_ai_operator();
    let Some(yaml) = kubectl_kustomize(&dir) else {
        return;
    };
    for expected in [
        "kind: Namespace\nmetadata:\n  labels:\n    app.kubernetes.io/managed-by: kustomize\n    app.kubernetes.io/name: ai-operator\n    control-plane: controller-manager\n  name: ai-operator-system\n",
        "name: ai-operator-controller-manager\n  namespace: ai-operator-system\n",
        "name: ai-operator-manager-role\n",
        "name: ai-operator-leader-election-role\n  namespace: ai-operator-system\n",
        "name: ai-operator-controller-manager-metrics-service\n",
        "serviceAccountName: ai-operator-controller-manager\n",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "type: RuntimeDefault",
        "- --leader-elect\n",
    ] {
        assert!(yaml.contains(expected), "missing {expected:?} in\n{yaml}");
    }
    assert_eq!(yaml.matches("\n---\n").count() + 1, 11, "{yaml}");
}

#[test]
fn config_default_renders_after_later_commands_insert_into_it() {
    let (_tmp, dir) = init_ai_operator();
    // What `create api` and `create webhook` do to config/default: a resource, a patch of
    // the Deployment, a whole section at the end.
    let mut plan = Plan::new(&dir, false);
    plan.add(File::new(
        "config/extra/kustomization.yaml",
        "resources:\n- extra.yaml\n",
        rsbuilder::scaffold::IfExists::Error,
    ));
    plan.add(File::new(
        "config/extra/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: system\n",
        rsbuilder::scaffold::IfExists::Error,
    ));
    plan.insert(
        "config/default/kustomization.yaml",
        "default-resources",
        "- ../extra",
    );
    plan.add(File::new(
        "config/default/manager_port_patch.yaml",
        "- op: add\n  path: /spec/template/spec/containers/0/ports/-\n  value:\n    containerPort: 9443\n    name: webhook-server\n    protocol: TCP\n",
        rsbuilder::scaffold::IfExists::Error,
    ));
    plan.insert(
        "config/default/kustomization.yaml",
        "default-patches",
        "- path: manager_port_patch.yaml\n  target:\n    kind: Deployment",
    );
    plan.insert(
        "config/default/kustomization.yaml",
        "default-sections",
        "labels:\n- pairs:\n    team: ai",
    );
    plan.apply().unwrap();
    let Some(yaml) = kubectl_kustomize(&dir) else {
        return;
    };
    assert!(
        yaml.contains("name: ai-operator-extra\n  namespace: ai-operator-system\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("containerPort: 9443\n          name: webhook-server"),
        "{yaml}"
    );
    assert!(yaml.contains("team: ai"), "{yaml}");
}

#[test]
fn init_inside_another_project_is_refused() {
    let (_tmp, dir) = init_ai_operator();
    let nested = dir.join("tools/sub-operator");
    std::fs::create_dir_all(&nested).unwrap();
    let before = tree(&dir);
    rsbuilder(&nested)
        .args(["init", "--domain", "example.com"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "is inside the project at {} (its PROJECT file is there)",
            dir.display()
        )));
    assert_eq!(tree(&dir), before);
}

#[test]
fn the_generated_crate_declares_the_rust_version_its_dependencies_need() {
    let (_tmp, dir) = init_ai_operator();
    let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    // kube 5 (and kube-lease-manager 0.13) declare rust-version 1.89.
    assert!(cargo.contains("\nrust-version = \"1.89\"\n"), "{cargo}");
    let own = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    assert!(
        own.contains("\nrust-version = \"1.89\"\n"),
        "rsbuilder's own Cargo.toml"
    );
}

#[test]
fn make_run_explains_enable_webhooks() {
    let (_tmp, dir) = init_ai_operator();
    let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(
        makefile.contains("ENABLE_WEBHOOKS=false runs it without them"),
        "{makefile}"
    );
}

#[test]
fn there_is_no_default_owner() {
    let (_tmp, dir) = init_ai_operator();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.starts_with(
            "// Copyright 2026.\n//\n// Licensed under the Apache License, Version 2.0"
        ),
        "{lib}"
    );
    for (path, bytes) in tree(&dir) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("rsbuilder authors"), "{path}");
    }
}

#[test]
fn license_mit_writes_its_header_license_file_and_cargo_license() {
    let (_tmp, dir) = project_dir("mit-op");
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--license",
            "mit",
            "--owner",
            "Example Corp.",
        ])
        .assert()
        .success();
    let files = tree(&dir);
    let text = |p: &str| String::from_utf8(files[p].clone()).unwrap();
    assert!(
        text("src/main.rs")
            .starts_with("// Copyright 2026 Example Corp.\n// SPDX-License-Identifier: MIT\n\n"),
        "{}",
        text("src/main.rs")
    );
    assert!(text("LICENSE").starts_with(
        "MIT License\n\nCopyright 2026 Example Corp.\n\nPermission is hereby granted"
    ));
    assert!(text("Cargo.toml").contains("\nlicense = \"MIT\"\n"));
    assert!(
        text("README.md").contains("Copyright 2026 Example Corp. Licensed under the MIT License")
    );
    assert!(!text("README.md").contains("Apache"));
}

#[test]
fn a_license_file_becomes_the_header_of_every_generated_source() {
    let (tmp, dir) = project_dir("own-op");
    let header = tmp.path().join("boilerplate.txt");
    std::fs::write(
        &header,
        "Copyright 2026 Acme Inc.\n\nAll rights reserved.\n",
    )
    .unwrap();
    rsbuilder(&dir)
        .args(["init", "--domain", "example.com", "--license"])
        .arg(&header)
        .assert()
        .success();
    let want = "// Copyright 2026 Acme Inc.\n//\n// All rights reserved.\n\n";
    for f in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.starts_with(want), "{f}: {text}");
    }
    assert!(!dir.join("LICENSE").exists());
    let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(!cargo.contains("license"), "{cargo}");
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
    let types = std::fs::read_to_string(dir.join("src/api/v1/aijob_types.rs")).unwrap();
    assert!(types.starts_with(want), "{types}");
    std::fs::write(&header, "\n\n").unwrap();
    let (_t2, other) = project_dir("empty-header");
    rsbuilder(&other)
        .args(["init", "--domain", "example.com", "--license"])
        .arg(&header)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is empty"));
    assert!(tree(&other).is_empty());
}

/// The `run:` commands of every step of every job of a GitHub Actions workflow, in order.
fn workflow_runs(dir: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let doc: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file} is not YAML: {e}\n{text}"));
    assert!(doc["name"].is_string(), "{file}: no name");
    assert!(doc["on"].is_object(), "{file}: no triggers");
    let jobs = doc["jobs"].as_object().expect("jobs");
    assert!(!jobs.is_empty(), "{file}: no job");
    let mut runs = Vec::new();
    for (name, job) in jobs {
        assert_eq!(job["runs-on"], "ubuntu-latest", "{file}: job {name}");
        let steps = job["steps"].as_array().expect("steps");
        assert_eq!(
            steps[0]["uses"], "actions/checkout@v4",
            "{file}: job {name} starts with a checkout"
        );
        for step in steps {
            assert!(
                step["uses"].is_string() != step["run"].is_string(),
                "{file}: a step either uses an action or runs a command: {step}"
            );
            if let Some(run) = step["run"].as_str() {
                runs.push(run.trim().to_string());
            }
        }
    }
    runs
}

#[test]
fn init_writes_ci_workflows_that_lint_check_manifests_test_and_run_e2e() {
    let (_tmp, dir) = init_ai_operator();
    assert_eq!(
        workflow_runs(&dir, ".github/workflows/lint.yml"),
        ["make lint"]
    );
    let repo = env!("CARGO_PKG_REPOSITORY");
    let test = std::fs::read_to_string(dir.join(".github/workflows/test.yml")).unwrap();
    // The repository variable wins over rsbuilder's own address, which stands as the
    // fallback; the install stops with a message naming the variable when the address does
    // not answer.
    assert!(
        test.contains(&format!(
            "RSBUILDER_GIT: ${{{{ vars.RSBUILDER_GIT || '{repo}' }}}}\n"
        )),
        "{test}"
    );
    let install = "git ls-remote \"$RSBUILDER_GIT\" HEAD >/dev/null || {\n  echo \"::error::rsbuilder's source is not reachable at $RSBUILDER_GIT; set the repository variable RSBUILDER_GIT to its git address\"\n  exit 1\n}\ncargo install --locked --git \"$RSBUILDER_GIT\" rsbuilder";
    assert_eq!(
        workflow_runs(&dir, ".github/workflows/test.yml"),
        [install, "rsbuilder manifests --check", "cargo test"]
    );
    let e2e = workflow_runs(&dir, ".github/workflows/test-e2e.yml");
    assert_eq!(e2e.first().map(String::as_str), Some(install));
    assert!(e2e.iter().any(|r| r == "kind create cluster"), "{e2e:?}");
    assert_eq!(
        e2e.last().map(String::as_str),
        Some("make test-e2e"),
        "{e2e:?}"
    );
}

#[test]
fn the_makefile_has_the_e2e_lint_and_buildx_targets() {
    let (_tmp, dir) = init_ai_operator();
    let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
    for target in ["test-e2e", "lint", "lint-fix", "docker-buildx"] {
        assert!(
            makefile.contains(&format!(".PHONY: {target}\n{target}:")),
            "no {target} target in\n{makefile}"
        );
    }
    assert!(
        makefile.contains("$(CARGO) test --test e2e -- --ignored"),
        "{makefile}"
    );
    assert!(
        makefile.contains("$(KIND) load docker-image ${IMG} --name $(KIND_CLUSTER)"),
        "{makefile}"
    );
    assert!(
        makefile.contains("buildx build --push --platform=$(PLATFORMS) --tag ${IMG}"),
        "{makefile}"
    );
}

#[test]
fn the_e2e_test_is_ignored_without_a_cluster() {
    let (_tmp, dir) = init_ai_operator();
    let e2e = std::fs::read_to_string(dir.join("tests/e2e.rs")).unwrap();
    // Every test that talks to the cluster carries the gate; the one test without it checks
    // how PROJECT and the samples are read, with no cluster.
    let gates = e2e
        .matches("#[ignore = \"needs a cluster: KUBECONFIG\"]")
        .count();
    assert_eq!(
        gates,
        e2e.matches("\n    require_cluster();").count(),
        "every test of tests/e2e.rs that needs the cluster carries the gate:\n{e2e}"
    );
    assert_eq!(
        e2e.matches("#[test]").count(),
        gates + 1,
        "tests/e2e.rs has one cluster-free test:\n{e2e}"
    );
    assert!(
        e2e.contains("fn only_samples_of_kinds_with_a_controller_are_waited_for()"),
        "{e2e}"
    );
    assert!(
        e2e.contains("const NAMESPACE: &str = \"ai-operator-system\";"),
        "{e2e}"
    );
    assert!(
        e2e.contains("const PREFIX: &str = \"ai-operator-\";"),
        "{e2e}"
    );
}
