//! `rsbuilder create api`: the files each variant adds or changes (insta snapshots: whole new
//! files, the added lines of updated ones), PROJECT bookkeeping, `--force`, and every refusal of
//! case D (message, exit code, and the tree byte for byte unchanged).

use crate::common;
use common::{rsbuilder, tree};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use predicates::prelude::*;

/// `rsbuilder init` for `ai-operator` (domain `ai.example.com`) in a fresh temp dir.
fn init_ai_operator() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ])
        .assert()
        .success();
    (tmp, dir)
}

fn create_api(dir: &Path, args: &[&str]) -> String {
    let out = rsbuilder(dir)
        .args(["create", "api"])
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// [`common::snapshot_changes`] for `create api`, updated files shown as `Update::ChangedLines`; the
/// snapshots are taken here, so insta names their files after this module.
fn snapshot(
    variant: &str,
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
    only: &[&str],
) -> Vec<String> {
    // The runtime's files and rsbuilder's records are tested apart
    // (`the_first_controller_brings_the_runtimes_test_cluster`).
    let users = |m: &BTreeMap<String, Vec<u8>>| -> BTreeMap<String, Vec<u8>> {
        m.iter()
            .filter(|(p, _)| !p.starts_with("rsbuilder-runtime/") && !p.starts_with(".rsbuilder/"))
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect()
    };
    assert!(
        before.keys().all(|k| after.contains_key(k)),
        "create api removed a file"
    );
    common::snapshot_changes(
        "create api",
        variant,
        &users(before),
        &users(after),
        only,
        common::Update::ChangedLines,
        |name, text| insta::assert_snapshot!(name, text),
    )
}

#[test]
fn aijob_adds_types_controller_wiring_and_project_entry() {
    let (_tmp, dir) = init_ai_operator();
    let before = tree(&dir);
    let stdout = create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    let after = tree(&dir);
    let changed = snapshot("aijob", &before, &after, &[]);
    assert_eq!(
        changed,
        [
            "Cargo.toml",
            "PROJECT",
            "config/crd/kustomization.yaml",
            "config/default/kustomization.yaml",
            "config/rbac/aijob_admin_role.yaml",
            "config/rbac/aijob_editor_role.yaml",
            "config/rbac/aijob_viewer_role.yaml",
            "config/rbac/kustomization.yaml",
            "config/samples/ai_v1_aijob.yaml",
            "config/samples/kustomization.yaml",
            "src/api/mod.rs",
            "src/api/v1/aijob_types.rs",
            "src/api/v1/mod.rs",
            "src/controller/aijob_controller.rs",
            "src/controller/mod.rs",
            "src/lib.rs",
            "src/main.rs",
        ]
    );
    assert!(
        stdout.contains("create  src/api/v1/aijob_types.rs"),
        "{stdout}"
    );
    assert!(stdout.contains("update  src/main.rs"), "{stdout}");
    assert!(stdout.contains("rsbuilder manifests"), "{stdout}");

    // Case A's names: qualified group, plural, CRD file, finalizer, RBAC markers.
    let types = text(&after["src/api/v1/aijob_types.rs"]);
    assert!(types.contains("group = \"ai.ai.example.com\""), "{types}");
    assert!(types.contains("    namespaced,\n"), "{types}");
    assert!(!types.contains("plural ="), "{types}");
    let controller = text(&after["src/controller/aijob_controller.rs"]);
    for marker in [
        "// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete",
        "// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/status,verbs=get;update;patch",
        "// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/finalizers,verbs=update",
        "// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch",
    ] {
        assert!(controller.contains(marker), "missing {marker}");
    }
    assert!(controller.contains("\"ai.ai.example.com/finalizer\""));
    // Its test (a module at its end) runs it on the runtime's test cluster with the sample.
    assert!(
        controller.contains("#[cfg(test)]\nmod tests {")
            && controller.contains("let path = \"config/samples/ai_v1_aijob.yaml\";")
            && controller.contains("rsbuilder_runtime::controller::run(mgr, AIJobReconciler)")
            && controller.contains("Api::default_namespaced(cluster.client())"),
        "{controller}"
    );
    // The license header init wrote goes on the new Rust files too.
    assert!(types.starts_with("// Copyright 2026.\n//\n// Licensed under the Apache License"));
}

#[test]
fn cluster_scoped_kind_has_no_namespaced_attribute_and_watches_all() {
    let (_tmp, dir) = init_ai_operator();
    let before = tree(&dir);
    create_api(
        &dir,
        &[
            "--group",
            "infra",
            "--version",
            "v1alpha1",
            "--kind",
            "GpuPool",
            "--namespaced=false",
        ],
    );
    let after = tree(&dir);
    snapshot(
        "cluster",
        &before,
        &after,
        &[
            "src/api/v1alpha1/gpupool_types.rs",
            "src/controller/gpupool_controller.rs",
            "PROJECT",
        ],
    );
    let types = text(&after["src/api/v1alpha1/gpupool_types.rs"]);
    assert!(!types.contains("namespaced"), "{types}");
    let controller = text(&after["src/controller/gpupool_controller.rs"]);
    // The runtime picks the API by the kind's scope (`Api::all` for a cluster-scoped kind).
    assert!(controller.contains("type Kind = GpuPool;"), "{controller}");
    // Its test reads the sample through the same kind of API.
    assert!(
        controller.contains("let api: Api<GpuPool> = Api::all(cluster.client());"),
        "{controller}"
    );
    let project = text(&after["PROJECT"]);
    assert!(!project.contains("namespaced"), "{project}");
}

#[test]
fn plural_flag_goes_into_kube_attribute_project_and_rbac() {
    let (_tmp, dir) = init_ai_operator();
    let before = tree(&dir);
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Person",
            "--plural",
            "people",
        ],
    );
    let after = tree(&dir);
    snapshot(
        "plural",
        &before,
        &after,
        &["src/api/v1/person_types.rs", "PROJECT"],
    );
    let types = text(&after["src/api/v1/person_types.rs"]);
    assert!(types.contains("    plural = \"people\",\n"), "{types}");
    assert!(text(&after["PROJECT"]).contains("plural: people"));
    let controller = text(&after["src/controller/person_controller.rs"]);
    assert!(controller.contains("resources=people,"), "{controller}");
    assert!(controller.contains("resources=people/status,"));
    assert!(
        text(&after["config/crd/kustomization.yaml"])
            .contains("- bases/ai.ai.example.com_people.yaml")
    );
    assert!(text(&after["config/rbac/person_editor_role.yaml"]).contains("  - people\n"));
}

#[test]
fn core_pod_controller_without_resource() {
    let (_tmp, dir) = init_ai_operator();
    let before = tree(&dir);
    let stdout = create_api(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
            "--controller=true",
        ],
    );
    let after = tree(&dir);
    let changed = snapshot("pod", &before, &after, &[]);
    // No types, CRD, sample or roles: only the controller and its wiring.
    assert_eq!(
        changed,
        [
            "PROJECT",
            "src/controller/mod.rs",
            "src/controller/pod_controller.rs",
            "src/lib.rs",
            "src/main.rs",
        ]
    );
    assert!(!stdout.contains("rsbuilder manifests"), "{stdout}");
    let controller = text(&after["src/controller/pod_controller.rs"]);
    assert!(controller.contains("use k8s_openapi::api::core::v1::Pod;"));
    assert!(controller.contains(
        "// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;update;patch"
    ));
    assert!(controller.contains("groups=events.k8s.io,resources=events,verbs=create;patch"));
    let project = rsbuilder::model::Project::parse(&text(&after["PROJECT"])).unwrap();
    let pod = project.find("core", "v1", "Pod").unwrap();
    assert!(pod.core && pod.controller && pod.api.is_none() && pod.domain.is_none());
    assert_eq!(pod.path.as_deref(), Some("k8s_openapi::api::core::v1::Pod"));
}

#[test]
fn builtin_types_of_other_groups_resolve_through_k8s_openapi() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &[
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
    );
    create_api(
        &dir,
        &[
            "--group",
            "networking",
            "--version",
            "v1",
            "--kind",
            "Ingress",
            "--resource=false",
        ],
    );
    let deploy =
        std::fs::read_to_string(dir.join("src/controller/deployment_controller.rs")).unwrap();
    assert!(deploy.contains("use k8s_openapi::api::apps::v1::Deployment;"));
    assert!(deploy.contains("groups=apps,resources=deployments,verbs="));
    let ingress =
        std::fs::read_to_string(dir.join("src/controller/ingress_controller.rs")).unwrap();
    assert!(ingress.contains("groups=networking.k8s.io,resources=ingresses,verbs="));
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("path: k8s_openapi::api::networking::v1::Ingress"));
    // main.rs is formatted by rustfmt after the insertion, which wraps the longer line.
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains(
        "        runner.spawn(rsbuilder_runtime::controller::run(\n            runner.manager(),\n            ai_operator::controller::deployment_controller::DeploymentReconciler,\n        ));\n"
    ), "{main}");
    assert!(main.contains(
        "        runner.spawn(rsbuilder_runtime::controller::run(\n            runner.manager(),\n            ai_operator::controller::ingress_controller::IngressReconciler,\n        ));\n"
    ), "{main}");
}

#[test]
fn kinds_share_version_modules_and_kustomizations() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "Model"],
    );
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "AIJob",
            "--controller=false",
        ],
    );
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let v1 = read("src/api/v1/mod.rs");
    assert!(v1.contains(
        "pub mod aijob_types;\npub use aijob_types::*;\npub mod model_types;\npub use model_types::*;\n// +kubebuilder:scaffold:api-kinds"
    ), "{v1}");
    assert!(
        read("src/api/mod.rs")
            .contains("pub mod v1;\npub mod v2;\n// +kubebuilder:scaffold:api-versions")
    );
    let lib = read("src/lib.rs");
    assert!(
        lib.contains("pub mod api;\npub mod controller;\n// +kubebuilder:scaffold:modules"),
        "modules are kept in rustfmt's order: {lib}"
    );
    assert_eq!(lib.matches("pub mod api;").count(), 1, "{lib}");
    assert_eq!(lib.matches("pub mod controller;").count(), 1, "{lib}");
    assert_eq!(
        read("config/default/kustomization.yaml")
            .matches("- ../crd\n")
            .count(),
        1
    );
    let crd = read("config/crd/kustomization.yaml");
    assert!(
        crd.contains(
            "- bases/ai.ai.example.com_aijobs.yaml\n- bases/ai.ai.example.com_models.yaml\n"
        ),
        "{crd}"
    );
    // v2 of AIJob: same CRD file (one CRD, two versions), no second entry, no second controller.
    assert_eq!(
        crd.matches("ai.ai.example.com_aijobs.yaml").count(),
        1,
        "{crd}"
    );
    let main = read("src/main.rs");
    assert_eq!(
        main.matches("aijob_controller::AIJobReconciler").count(),
        1,
        "{main}"
    );
    // One stored version per CRD: the first one; the later version says so.
    assert!(!read("src/api/v1/aijob_types.rs").contains("storage"));
    let v2 = read("src/api/v2/aijob_types.rs");
    assert!(v2.contains("    storage = false,\n"), "{v2}");
    assert!(v2.contains("v1 came first"), "{v2}");
    assert!(!read("src/api/v1/model_types.rs").contains("storage"));
    let project = rsbuilder::model::Project::parse(&read("PROJECT")).unwrap();
    let kinds: Vec<(String, String, bool)> = project
        .resources
        .iter()
        .map(|r| (r.version.clone(), r.kind.clone(), r.controller))
        .collect();
    assert_eq!(
        kinds,
        [
            ("v1".to_string(), "AIJob".to_string(), true),
            ("v1".to_string(), "Model".to_string(), true),
            ("v2".to_string(), "AIJob".to_string(), false),
        ]
    );
    let samples = read("config/samples/kustomization.yaml");
    assert!(
        samples.contains("- ai_v1_aijob.yaml\n- ai_v1_model.yaml\n- ai_v2_aijob.yaml\n"),
        "{samples}"
    );
    // The controllers' tests need the runtime's test cluster: one entry for every kind.
    let cargo = read("Cargo.toml");
    assert_eq!(
        cargo
            .matches(
                "rsbuilder-runtime = { path = \"rsbuilder-runtime\", features = [\"testing\"] }\nserde-saphyr = \"2\"\n"
            )
            .count(),
        1,
        "{cargo}"
    );
    assert_eq!(cargo.matches("serde-saphyr").count(), 1, "{cargo}");
}

/// `init` writes the runtime without its API server and test cluster; the first controller,
/// whose test runs on the test cluster, brings both, as tool-owned files of the runtime's
/// text; a kind without a controller does not.
#[test]
fn the_first_controller_brings_the_runtimes_test_cluster() {
    use rsbuilder::scaffold::runtime;
    let runtime_files = |dir: &Path| -> Vec<String> {
        tree(dir)
            .into_keys()
            .filter(|p| p.starts_with("rsbuilder-runtime/"))
            .collect()
    };
    let names = |files: BTreeMap<PathBuf, String>| -> Vec<String> {
        let mut v: Vec<String> = files
            .into_keys()
            .map(|p| p.to_str().unwrap().to_owned())
            .collect();
        v.sort();
        v
    };
    let (_tmp, dir) = init_ai_operator();
    assert_eq!(runtime_files(&dir), names(runtime::project_files(false)));
    let aijob = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];
    create_api(&dir, &[&aijob[..], &["--controller=false"]].concat());
    assert_eq!(runtime_files(&dir), names(runtime::project_files(false)));
    create_api(&dir, &[&aijob[..], &["--resource=false"]].concat());
    assert_eq!(runtime_files(&dir), names(runtime::project_files(true)));
    for (path, text) in runtime::project_files(true) {
        let on_disk = std::fs::read_to_string(dir.join(&path)).unwrap();
        assert_eq!(on_disk, text, "{}", path.display());
    }
}

#[test]
fn controller_added_later_for_an_existing_api() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--controller=false",
        ],
    );
    assert!(!dir.join("src/controller").exists());
    let before = tree(&dir);
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=false",
        ],
    );
    let after = tree(&dir);
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .filter(|k| !k.starts_with("rsbuilder-runtime/") && !k.starts_with(".rsbuilder/"))
        .collect();
    assert_eq!(
        changed,
        [
            "Cargo.toml",
            "PROJECT",
            "src/controller/aijob_controller.rs",
            "src/controller/mod.rs",
            "src/lib.rs",
            "src/main.rs"
        ]
    );
    let controller = text(&after["src/controller/aijob_controller.rs"]);
    assert!(controller.contains("use crate::api::v1::AIJob;"));
    let project = rsbuilder::model::Project::parse(&text(&after["PROJECT"])).unwrap();
    let entry = project.find("ai", "v1", "AIJob").unwrap();
    assert!(entry.controller && entry.api.is_some() && !entry.core);
}

#[test]
fn force_rerenders_only_the_kinds_own_files() {
    let (_tmp, dir) = init_ai_operator();
    let args = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];
    create_api(&dir, &args);
    let pristine = tree(&dir);
    // The user edits the kind's files and others.
    let edited = [
        "src/api/v1/aijob_types.rs",
        "src/controller/aijob_controller.rs",
        "config/samples/ai_v1_aijob.yaml",
        "src/lib.rs",
        "config/rbac/aijob_editor_role.yaml",
        "config/crd/kustomization.yaml",
    ];
    for path in edited {
        let mut text = std::fs::read_to_string(dir.join(path)).unwrap();
        text.push_str("# user edit\n");
        std::fs::write(dir.join(path), text).unwrap();
    }
    std::fs::remove_file(dir.join("src/api/v1/mod.rs")).unwrap();
    let before = tree(&dir);

    let mut force = args.to_vec();
    force.push("--force");
    create_api(&dir, &force);
    let after = tree(&dir);
    for (path, bytes) in &after {
        let own = edited[..3].contains(&path.as_str());
        if own {
            assert_eq!(bytes, &pristine[path], "{path} was not re-rendered");
        } else {
            assert_eq!(Some(bytes), before.get(path), "{path} was touched");
        }
    }
    assert!(
        !dir.join("src/api/v1/mod.rs").exists(),
        "--force re-creates only the kind's own files"
    );
}

/// Runs `create api` with `args`, expects exit code `code` and every text in `messages` on
/// stderr, and checks that `dir` (and its parent) are byte for byte unchanged.
fn assert_refused(dir: &Path, args: &[&str], code: i32, messages: &[&str]) {
    let parent = dir.parent().unwrap();
    let before = tree(parent);
    let out = rsbuilder(dir)
        .args(["create", "api"])
        .args(args)
        .assert()
        .code(code);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for m in messages {
        assert!(stderr.contains(m), "{args:?}: {m:?} not in:\n{stderr}");
    }
    assert!(
        out.get_output().stdout.is_empty(),
        "{args:?} printed to stdout"
    );
    assert!(tree(parent) == before, "{args:?} changed the tree");
}

#[test]
fn case_d_lower_case_kind() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "aijob"],
        1,
        &[
            "--kind",
            "\"aijob\"",
            "must start with an upper-case letter",
        ],
    );
}

#[test]
fn case_d_group_that_is_not_a_dns_subdomain() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &["--group", "AI_Group", "--version", "v1", "--kind", "AIJob"],
        1,
        &["--group", "AI_Group.ai.example.com", "DNS-1123 subdomain"],
    );
}

#[test]
fn case_d_version_that_is_not_a_dns_label() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "1", "--kind", "AIJob"],
        1,
        &["--version", "DNS-1035 label", "API server rejects it"],
    );
}

#[test]
fn case_d_kind_with_a_path() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "../../Etc"],
        1,
        &["--kind", "../../Etc"],
    );
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "Etc/../../X"],
        1,
        &["--kind"],
    );
}

#[test]
fn case_d_same_api_twice() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &["ai/v1 AIJob already exists", "--force"],
    );
    // A second controller for a built-in type is refused the same way.
    create_api(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
        ],
    );
    assert_refused(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
        ],
        1,
        &[
            "controller for core/v1 Pod already exists",
            "--force",
            "--controller-name <name>",
        ],
    );
}

/// Reads a file of the project as text.
fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

#[test]
fn a_named_controller_has_its_own_file_type_finalizer_start_and_project_entry() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    let named = [
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "AIJob",
        "--resource=false",
        "--controller-name",
        "aijob-backup",
    ];
    let before = tree(&dir);
    create_api(&dir, &named);
    let after = tree(&dir);
    let changed: Vec<&str> = after
        .iter()
        .filter(|(p, t)| before.get(*p) != Some(t))
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(
        changed,
        [
            "PROJECT",
            "src/controller/aijob_backup_controller.rs",
            "src/controller/mod.rs",
            "src/main.rs",
        ]
    );
    let own = read(&dir, "src/controller/aijob_controller.rs");
    let backup = read(&dir, "src/controller/aijob_backup_controller.rs");
    assert!(
        backup.contains("pub struct AijobBackupReconciler;\n"),
        "{backup}"
    );
    assert!(backup.contains("impl Reconciler for AijobBackupReconciler {\n"));
    assert!(backup.contains("const NAME: &'static str = \"aijob-backup\";\n"));
    assert!(
        backup.contains("Some(\"ai.ai.example.com/aijob-backup\")"),
        "{backup}"
    );
    // The kind's own controller keeps its names.
    assert!(own.contains("const NAME: &'static str = \"aijob-controller\";\n"));
    assert!(own.contains("Some(\"ai.ai.example.com/finalizer\")"));
    let modules = read(&dir, "src/controller/mod.rs");
    assert!(
        modules.contains("pub mod aijob_backup_controller;\npub mod aijob_controller;\n"),
        "{modules}"
    );
    let main = read(&dir, "src/main.rs");
    for reconciler in [
        "ai_operator::controller::aijob_controller::AIJobReconciler,",
        "ai_operator::controller::aijob_backup_controller::AijobBackupReconciler,",
    ] {
        assert_eq!(
            main.matches(reconciler).count(),
            1,
            "{reconciler} in:\n{main}"
        );
    }
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(
            "plugins:\n  controllers.rsbuilder.io/v1-alpha:\n    resources:\n    - controllerName: aijob-backup\n      group: ai\n      kind: AIJob\n      version: v1\n"
        ),
        "{project}"
    );
    // RBAC from both controllers' markers merges into one rule set.
    rsbuilder(&dir).arg("manifests").assert().success();
    let role = read(&dir, "config/rbac/role.yaml");
    assert_eq!(role.matches("  - aijobs\n").count(), 1, "{role}");

    // The same name again: refused, naming the flag; --force re-renders its file only.
    assert_refused(
        &dir,
        &named,
        1,
        &[
            "--controller-name",
            "aijob-backup",
            "already has a controller of that name",
        ],
    );
    std::fs::write(
        dir.join("src/controller/aijob_backup_controller.rs"),
        "// mine\n",
    )
    .unwrap();
    let before = tree(&dir);
    create_api(&dir, &[&named[..], &["--force"]].concat());
    let after = tree(&dir);
    assert_eq!(
        after["src/controller/aijob_backup_controller.rs"],
        backup.as_bytes()
    );
    for file in ["PROJECT", "src/main.rs", "src/controller/mod.rs"] {
        assert!(before[file] == after[file], "{file} changed");
    }
}

#[test]
fn named_controllers_for_a_builtin_type_and_their_refusals() {
    let (_tmp, dir) = init_ai_operator();
    let pod = |name: &'static str| {
        [
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
            "--controller-name",
            name,
        ]
    };
    create_api(&dir, &pod("pod-auditor"));
    let auditor = read(&dir, "src/controller/pod_auditor_controller.rs");
    assert!(auditor.contains("impl Reconciler for PodAuditorReconciler {"));
    assert!(auditor.contains("const FINALIZER: Option<&'static str> = None;"));
    create_api(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
        ],
    );
    // The kind's own controller name or file is taken.
    assert_refused(
        &dir,
        &pod("pod-controller"),
        1,
        &["the kind Pod's own controller"],
    );
    assert_refused(&dir, &pod("pod"), 1, &["src/controller/pod_controller.rs"]);
    assert_refused(
        &dir,
        &pod("2nd"),
        1,
        &["--controller-name", "start with a letter"],
    );
    assert_refused(&dir, &pod("Auditor"), 1, &["--controller-name", "DNS-1123"]);
    // A new kind, or no controller: the flag does not apply.
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--controller-name",
            "x",
        ],
        1,
        &["--resource=false"],
    );
    assert_refused(
        &dir,
        &[&pod("x")[..], &["--controller=false"]].concat(),
        1,
        &["--controller=false asks for none"],
    );
    // A kind the project does not have.
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=false",
            "--controller-name",
            "x",
        ],
        1,
        &["Create the API first"],
    );
}

#[test]
fn case_d_before_init() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("empty");
    std::fs::create_dir(&dir).unwrap();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &["no PROJECT file here", "run `rsbuilder init` first"],
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_go_kubebuilder_project_is_refused() {
    let (_tmp, dir) = init_ai_operator();
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    std::fs::write(
        dir.join("PROJECT"),
        project.replace("rust.rsbuilder.io/v1", "go.kubebuilder.io/v4"),
    )
    .unwrap();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[
            "PROJECT:6: this PROJECT belongs to a Kubebuilder project written in Go (layout go.kubebuilder.io/v4)",
            "rust.rsbuilder.io/v1 projects only",
            "rsbuilder init --domain ai.example.com --repo example.com/ai-operator",
        ],
    );
}

/// Replaces `from` by `to` in PROJECT (which must hold `from`).
fn edit_project(dir: &Path, from: &str, to: &str) {
    let path = dir.join("PROJECT");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from:?} not in PROJECT:\n{text}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn a_project_name_with_a_newline_in_project_is_refused_with_its_line() {
    let (_tmp, dir) = init_ai_operator();
    edit_project(
        &dir,
        "projectName: ai-operator",
        "projectName: \"ai\\nkind: Evil\"",
    );
    let line = std::fs::read_to_string(dir.join("PROJECT"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("projectName:"))
        .unwrap()
        + 1;
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[&format!(
            "PROJECT:{line}: invalid projectName \"ai\\nkind: Evil\" (checked as --project-name is)"
        )],
    );
}

#[test]
fn plugins_and_unknown_fields_in_project_are_kept_byte_for_byte() {
    let (_tmp, dir) = init_ai_operator();
    let plugins = "plugins:\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    - kind: Busybox   # a comment\n      options: {image: 'busybox:1.36'}\n";
    edit_project(&dir, "projectName:", &format!("{plugins}projectName:"));
    let path = dir.join("PROJECT");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}zzLocal: [1,   2]\n")).unwrap();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIRun"],
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains(plugins), "{after}");
    assert!(after.ends_with("zzLocal: [1,   2]\n"), "{after}");
    assert!(
        after.contains("kind: AIJob") && after.contains("kind: AIRun"),
        "{after}"
    );
}

#[test]
fn duplicate_resources_in_project_are_refused() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    let path = dir.join("PROJECT");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("- api:").unwrap();
    let end = text
        .rfind("version: '3'")
        .or_else(|| text.rfind("version: \"3\""))
        .unwrap();
    let entry = &text[start..end];
    std::fs::write(&path, text.replacen(entry, &format!("{entry}{entry}"), 1)).unwrap();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIRun"],
        1,
        &["the resource ai/v1 AIJob is listed twice (first at line"],
    );
}

#[test]
fn case_d_deleted_scaffold_marker() {
    let (_tmp, dir) = init_ai_operator();
    let main = dir.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.contains("+kubebuilder:scaffold:controllers"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(text, without);
    std::fs::write(&main, without).unwrap();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &["src/main.rs", "// +kubebuilder:scaffold:controllers"],
    );
}

/// Replaces the `// +kubebuilder:scaffold:controllers` line of `src/main.rs` with what
/// `edit` makes of it; returns the 1-based line number the marker had.
fn edit_controllers_marker(dir: &Path, edit: impl Fn(&str) -> String) -> usize {
    let main = dir.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    let at = text
        .lines()
        .position(|l| l.trim() == "// +kubebuilder:scaffold:controllers")
        .unwrap();
    let edited: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == at { edit(l) } else { format!("{l}\n") })
        .collect();
    std::fs::write(&main, edited).unwrap();
    at + 1
}

#[test]
fn a_marker_inside_a_string_literal_is_not_a_marker() {
    let (_tmp, dir) = init_ai_operator();
    let line = edit_controllers_marker(&dir, |l| format!("    let _s = \"\n{l}\n\";\n"));
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[
            "src/main.rs has no `// +kubebuilder:scaffold:controllers` marker",
            &format!("line {} holds its text inside a literal", line + 1),
        ],
    );
}

#[test]
fn a_marker_inside_a_block_comment_is_not_a_marker() {
    let (_tmp, dir) = init_ai_operator();
    let line = edit_controllers_marker(&dir, |l| format!("    /* disabled:\n{l}\n    */\n"));
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[
            "src/main.rs has no `// +kubebuilder:scaffold:controllers` marker",
            &format!("line {} holds its text inside a /* */ comment", line + 1),
        ],
    );
}

#[test]
fn a_duplicated_marker_is_refused_with_both_lines() {
    let (_tmp, dir) = init_ai_operator();
    let line = edit_controllers_marker(&dir, |l| format!("{l}\n{l}\n"));
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[&format!(
            "src/main.rs has the `// +kubebuilder:scaffold:controllers` marker on lines {line}, {}; it must appear once",
            line + 1
        )],
    );
}

#[test]
fn a_duplicated_yaml_marker_is_refused() {
    let (_tmp, dir) = init_ai_operator();
    let path = dir.join("config/default/kustomization.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let marker = "# +kubebuilder:scaffold:default-resources\n";
    std::fs::write(&path, text.replace(marker, &format!("{marker}{marker}"))).unwrap();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
        1,
        &[
            "config/default/kustomization.yaml has the `# +kubebuilder:scaffold:default-resources` marker on lines",
        ],
    );
}

#[test]
fn usage_errors_exit_2() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=maybe",
        ],
        2,
        &["--resource"],
    );
    assert_refused(&dir, &["--group", "ai", "--version", "v1"], 2, &["--kind"]);
}

#[test]
fn resource_false_needs_a_known_type() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=false",
        ],
        1,
        &[
            "ai/v1 AIJob is neither a kind of this project",
            "built-in Kubernetes type",
        ],
    );
    assert_refused(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pdo",
            "--resource=false",
        ],
        1,
        &["k8s-openapi has no built-in type Pdo in core/v1", "Pod"],
    );
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=false",
            "--controller=false",
        ],
        1,
        &["nothing to scaffold"],
    );
}

#[test]
fn kinds_that_clash_with_generated_names_are_refused() {
    let (_tmp, dir) = init_ai_operator();
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "Context"],
        1,
        &["--kind", "`Context`", "choose another kind"],
    );
}

/// Every kind name the generated Rust already uses (rsbuilder::model::reserved) is refused
/// with the reason, before anything is written.
#[test]
fn every_reserved_kind_is_refused_with_its_reason() {
    let (_tmp, dir) = init_ai_operator();
    let names: Vec<&str> = rsbuilder::model::reserved::names().collect();
    assert!(
        names.contains(&"Option") && names.contains(&"Reconciler") && names.contains(&"Denied")
    );
    for name in names {
        let why = rsbuilder::model::reserved::reason(name).unwrap();
        assert_refused(
            &dir,
            &["--group", "ai", "--version", "v1", "--kind", name],
            1,
            &["--kind", &why, "choose another kind"],
        );
    }
}

#[test]
fn help_shows_an_example() {
    let tmp = tempfile::tempdir().unwrap();
    rsbuilder(tmp.path())
        .args(["create", "api", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "rsbuilder create api --group ai --version v1 --kind AIJob",
        ));
}

/// Long kind names push template lines past rustfmt's widths; the scaffold formats every Rust
/// file it writes, so `cargo fmt --check` passes whatever the names (skipped without rustfmt).
#[test]
fn long_kind_names_stay_rustfmt_clean() {
    let rustfmt_available = std::process::Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !rustfmt_available {
        common::missing("rustfmt is not installed");
        return;
    }
    let long = [
        "--group",
        "machinelearning",
        "--version",
        "v1alpha1",
        "--kind",
        "DistributedTrainingJobConfiguration",
    ];
    let (_tmp, dir) = init_ai_operator();
    create_api(&dir, &long);
    create_api(
        &dir,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "PersistentVolumeClaim",
            "--resource=false",
        ],
    );
    let unformatted: Vec<String> = tree(&dir)
        .into_keys()
        .filter(|p| p.ends_with(".rs"))
        .filter(|p| {
            !std::process::Command::new("rustfmt")
                .args(["--check", "--edition", "2024"])
                .arg(dir.join(p))
                .current_dir(&dir)
                .output()
                .unwrap()
                .status
                .success()
        })
        .collect();
    assert!(unformatted.is_empty(), "not rustfmt-clean: {unformatted:?}");
    // Re-rendering with --force writes the same formatted files: nothing changes.
    let before = tree(&dir);
    rsbuilder(&dir)
        .args(["create", "api"])
        .args(long)
        .arg("--force")
        .assert()
        .success();
    assert!(tree(&dir) == before, "--force re-rendered different files");
}

/// A single-group project holds one group, as in Kubebuilder: a new API in a second group is
/// refused (also with `--force`) with the command that switches the layout; files are named by
/// version and lower-case kind, so a kind differing only in case is refused too. In the
/// multigroup layout the same kind in another group has files of its own
/// (tests/cli/multigroup.rs).
#[test]
fn a_second_group_or_a_kind_differing_only_in_case_is_refused_even_with_force() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "fleet", "--version", "v1", "--kind", "Site"],
    );
    for force in [&[][..], &["--force"][..]] {
        let args = [
            &["--group", "infra", "--version", "v1", "--kind", "Site"][..],
            force,
        ]
        .concat();
        assert_refused(
            &dir,
            &args,
            1,
            &[
                "invalid value \"infra\" for --group",
                "this project's APIs are in the group fleet",
                "rsbuilder edit --multigroup=true",
            ],
        );
    }
    assert_refused(
        &dir,
        &["--group", "fleet", "--version", "v1", "--kind", "SITE"],
        1,
        &["two kinds cannot differ only in case"],
    );
}

/// A kind whose types would share a name with another kind's in the same version module
/// (`FooSpec` beside `Foo`, which defines `FooSpec`) is refused: both are re-exported with
/// `pub use ..._types::*`, and the name became ambiguous (E0659) while the command exited 0.
/// In another version the same names live in another module and are fine.
#[test]
fn a_kind_named_after_another_kinds_spec_or_status_is_refused() {
    let (_tmp, dir) = init_ai_operator();
    create_api(&dir, &["--group", "ai", "--version", "v1", "--kind", "Foo"]);
    for kind in ["FooSpec", "FooStatus"] {
        assert_refused(
            &dir,
            &["--group", "ai", "--version", "v1", "--kind", kind],
            1,
            &[
                &format!("invalid value \"{kind}\" for --kind"),
                &format!("the kind Foo of version v1 already defines the type {kind}"),
            ],
        );
    }
    create_api(&dir, &["--group", "ai", "--version", "v1", "--kind", "Bar"]);
    create_api(
        &dir,
        &["--group", "ai", "--version", "v2", "--kind", "FooSpec"],
    );
    // The other way round: `Baz` would define `BazSpec`, a kind of v2.
    create_api(
        &dir,
        &["--group", "ai", "--version", "v2", "--kind", "BazSpec"],
    );
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v2", "--kind", "Baz"],
        1,
        &["the kind BazSpec of version v2 already defines the type BazSpec"],
    );
}

/// `--force --plural` on an existing kind cannot rename it: refused, naming the recorded plural.
#[test]
fn force_does_not_take_a_new_plural() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "Person"],
    );
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Person",
            "--force",
            "--plural",
            "people",
        ],
        1,
        &[
            "invalid value \"people\" for --plural",
            "exists with the plural \"persons\" (PROJECT: the default)",
        ],
    );
    // The recorded plural itself is fine.
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Person",
            "--force",
            "--plural",
            "persons",
        ],
    );
}

/// Two kinds of a group cannot make the same CRD, `<plural>.<group>`: `--plural bars` on `Foo`
/// next to `Bar`, or `JOB` next to `Job` in another version (the same default plural).
#[test]
fn a_second_kind_with_the_same_crd_name_is_refused() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--plural",
            "bars",
        ],
    );
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "Bar"],
        1,
        &[
            "invalid value \"Bar\" for --kind",
            "the kind Foo of this group already has the plural \"bars\"",
            "choose another kind name, or pass --plural",
        ],
    );
    create_api(&dir, &["--group", "ai", "--version", "v1", "--kind", "Job"]);
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "JOB",
            "--controller=false",
        ],
        1,
        &["the kind Job of this group already has the plural \"jobs\""],
    );
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Task",
            "--plural",
            "jobs",
        ],
        1,
        &[
            "invalid value \"jobs\" for --plural",
            "choose another plural",
        ],
    );
    // Another group may reuse the plural (a second group takes the multigroup layout).
    rsbuilder(&dir)
        .args(["edit", "--multigroup=true"])
        .assert()
        .success();
    create_api(
        &dir,
        &[
            "--group",
            "batch2",
            "--version",
            "v1",
            "--kind",
            "Bar",
            "--controller=false",
        ],
    );
}

/// All versions of a CRD share one plural: a new version takes the recorded one, and a
/// different `--plural` is refused.
#[test]
fn a_new_version_takes_the_kinds_plural() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Person",
            "--plural",
            "people",
        ],
    );
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "Person",
            "--controller=false",
        ],
    );
    let types = std::fs::read_to_string(dir.join("src/api/v2/person_types.rs")).unwrap();
    assert!(types.contains("plural = \"people\""), "{types}");
    assert_refused(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v3",
            "--kind",
            "Person",
            "--controller=false",
            "--plural",
            "persons",
        ],
        1,
        &[
            "invalid value \"persons\" for --plural",
            "version v1 of Person has the plural \"people\", and all versions of a CRD share one",
        ],
    );
}

#[test]
fn a_new_version_of_a_kind_with_a_controller_suggests_controller_false_not_force() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    assert_refused(
        &dir,
        &["--group", "ai", "--version", "v2", "--kind", "AIJob"],
        1,
        &[
            "AIJob already has a controller, src/controller/aijob_controller.rs (scaffolded with version v1)",
            "rsbuilder create api --group ai --version v2 --kind AIJob --controller=false",
        ],
    );
    let out = rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "AIJob",
        ])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(!stderr.contains("re-run with --force"), "{stderr}");
    create_api(
        &dir,
        &[
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "AIJob",
            "--controller=false",
        ],
    );
    assert!(dir.join("src/api/v2/aijob_types.rs").is_file());
}

#[test]
fn commands_below_the_root_find_the_project_as_cargo_does() {
    let (_tmp, dir) = init_ai_operator();
    let below = dir.join("config/rbac");
    let out = create_api(
        &below,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    assert!(out.contains("create  src/api/v1/aijob_types.rs"), "{out}");
    assert!(dir.join("src/api/v1/aijob_types.rs").is_file());
    assert!(!below.join("src").exists());
    assert!(!below.join("PROJECT").exists());
}

#[test]
fn a_group_that_repeats_the_domain_warns() {
    let (_tmp, dir) = init_ai_operator();
    rsbuilder(&dir)
        .args(["create", "api", "--group", "ai.ai.example.com", "--version", "v1", "--kind", "AIJob"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: --group ai.ai.example.com already ends with the project domain ai.example.com, so the API group becomes ai.ai.example.com.ai.example.com; --group takes the short group: `--group ai` gives the API group ai.ai.example.com",
        ));
    let (_tmp, dir) = init_ai_operator();
    rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "ml",
            "--version",
            "v1",
            "--kind",
            "Model",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("warning").not());
}

/// The Kubebuilder book's tutorial: `create api --group batch --version v1 --kind CronJob`
/// makes the project's own CronJob in `batch.<domain>` (the built-in type is meant only with
/// `--resource=false`), and says so.
#[test]
fn a_builtin_group_name_with_a_resource_is_the_projects_own_group() {
    let (_tmp, dir) = init_ai_operator();
    let out = rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "batch",
            "--version",
            "v1",
            "--kind",
            "CronJob",
        ])
        .assert()
        .success();
    let stderr = text(&out.get_output().stderr);
    assert!(
        stderr.contains("note: batch/v1 CronJob is also the built-in Kubernetes type k8s_openapi::api::batch::v1::CronJob")
            && stderr.contains("pass --resource=false"),
        "{stderr}"
    );
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("group: batch") && project.contains("kind: CronJob"),
        "{project}"
    );
    assert!(!project.contains("core: true"), "{project}");
    let types = std::fs::read_to_string(dir.join("src/api/v1/cronjob_types.rs")).unwrap();
    assert!(
        types.contains("group = \"batch.ai.example.com\""),
        "{types}"
    );
    // A built-in type's controller is still --resource=false, with no note.
    let out = rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
            "--controller=true",
        ])
        .assert()
        .success();
    assert!(!text(&out.get_output().stderr).contains("note:"));
}

#[test]
fn image_scaffolds_a_deploy_image_kind_with_its_manager_env_and_plugin_entry() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6.26-alpine3.19",
            "--image-container-command",
            "memcached,--memory-limit=64,-o,modern,-v",
            "--image-container-port",
            "11211",
            "--run-as-user",
            "1001",
        ],
    );
    let types = read(&dir, "src/api/v1alpha1/memcached_types.rs");
    assert!(
        types.contains("    #[schemars(range(min = 1, max = 3))]\n    pub size: i32,\n"),
        "{types}"
    );
    assert!(types.contains("fn default_container_port() -> i32 {\n    11211\n}\n"));
    assert!(!types.contains("pub foo"), "{types}");
    let controller = read(&dir, "src/controller/memcached_controller.rs");
    for want in [
        "pub const IMAGE_ENV: &str = \"MEMCACHED_IMAGE\";",
        "pub const DEFAULT_IMAGE: &str = \"memcached:1.6.26-alpine3.19\";",
        "\"memcached\".into(),",
        "\"--memory-limit=64\".into(),",
        "container_port: obj.spec.container_port,",
        "run_as_user: Some(1001),",
        "allow_privilege_escalation: Some(false),",
        "controller.owns(mgr.api::<appsv1::Deployment>(), Default::default())",
        "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete",
    ] {
        assert!(controller.contains(want), "{want:?} not in:\n{controller}");
    }
    let manager = read(&dir, "config/manager/manager.yaml");
    assert!(
        manager.contains(
            "        - name: MEMCACHED_IMAGE\n          value: \"memcached:1.6.26-alpine3.19\"\n        # +kubebuilder:scaffold:env\n"
        ),
        "{manager}"
    );
    let sample = read(&dir, "config/samples/cache_v1alpha1_memcached.yaml");
    assert!(
        sample.ends_with("  size: 1\n  containerPort: 11211\n"),
        "{sample}"
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(
            "  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    - domain: ai.example.com\n      group: cache\n      kind: Memcached\n      options:\n        containerCommand: memcached,--memory-limit=64,-o,modern,-v\n        containerPort: \"11211\"\n        image: memcached:1.6.26-alpine3.19\n        runAsUser: \"1001\"\n      version: v1alpha1\n"
        ),
        "{project}"
    );
    // The CRD: size required within 1..3, the port defaulted.
    rsbuilder(&dir).arg("manifests").assert().success();
    let crd = read(
        &dir,
        "config/crd/bases/cache.ai.example.com_memcacheds.yaml",
    );
    assert!(crd.contains("                default: 11211\n"), "{crd}");
    assert!(crd.contains("                maximum: 3.0\n                minimum: 1.0\n"));
    assert!(
        crd.contains("            required:\n            - size\n"),
        "{crd}"
    );
}

#[test]
fn image_refusals_name_the_flag_and_write_nothing() {
    let (_tmp, dir) = init_ai_operator();
    let base = ["--group", "cache", "--version", "v1", "--kind", "Memcached"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    assert_refused(
        &dir,
        &with(&["--image", "memcached:1.6", "--image-container-port", "0"]),
        1,
        &["--image-container-port", "1 to 65535"],
    );
    assert_refused(
        &dir,
        &with(&["--image", "memcached:1.6", "--run-as-user=root"]),
        1,
        &["--run-as-user"],
    );
    assert_refused(
        &dir,
        &with(&[
            "--image",
            "memcached:1.6",
            "--image-container-command",
            "a,,b",
        ]),
        1,
        &["--image-container-command", "none empty"],
    );
    assert_refused(
        &dir,
        &with(&["--image", "two words"]),
        1,
        &["--image", "whitespace"],
    );
    assert_refused(
        &dir,
        &with(&["--image", "a\"b"]),
        1,
        &["--image", "letters, digits"],
    );
    assert_refused(
        &dir,
        &with(&[
            "--image",
            "memcached:1.6",
            "--resource=false",
            "--controller-name",
            "x",
        ]),
        1,
        &["use one of them"],
    );
    assert_refused(
        &dir,
        &with(&["--image", "memcached:1.6", "--namespaced=false"]),
        1,
        &["namespaced kind"],
    );
    assert_refused(
        &dir,
        &with(&["--image", "memcached:1.6", "--controller=false"]),
        1,
        &["--resource and --controller"],
    );
    // The options need --image (clap's usage error).
    assert_refused(&dir, &with(&["--run-as-user", "1001"]), 2, &["--image"]);
}

/// A version module cargo never compiles (its `mod api;` in src/lib.rs under
/// `#[cfg(any())]`, or naming another file with `#[path]`) does not receive the new kind:
/// `create api` is refused naming the declaration, and nothing is written. Before, it
/// inserted into src/api/mod.rs and src/api/v1/mod.rs and exited 0, and the kind was never
/// compiled.
#[test]
fn a_module_cargo_never_compiles_gets_no_kind() {
    let (_tmp, dir) = init_ai_operator();
    create_api(
        &dir,
        &["--group", "ai", "--version", "v1", "--kind", "AIJob"],
    );
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.contains("pub mod api;"), "{lib}");
    for (prefix, says) in [
        (
            "#[cfg(any())]\n",
            "`mod api` is under a cfg that is never true",
        ),
        (
            "#[path = \"nothere.rs\"]\n",
            "`mod api` names another file with #[path]",
        ),
    ] {
        std::fs::write(
            dir.join("src/lib.rs"),
            lib.replace("pub mod api;", &format!("{prefix}pub mod api;")),
        )
        .unwrap();
        assert_refused(
            &dir,
            &["--group", "ai", "--version", "v1", "--kind", "Foo"],
            1,
            &[
                "src/api/mod.rs is not compiled by cargo (src/lib.rs declares it so: ",
                says,
            ],
        );
    }
}
