//! End to end: `rsbuilder init`, `create api` for AIJob (case A), `edit --multigroup=true`,
//! `create api` for a second kind in another group and version (cluster-scoped),
//! `create api --resource=false` for Pod (case C), and a second version of AIJob; then the
//! generated project builds, passes its tests (each controller of a kind of the project run on the
//! runtime's in-process test cluster with the kind's sample) and clippy with no edit, and its new
//! files are rustfmt-clean; a reconcile that never reports Ready fails its test.
//! `rsbuilder manifests` and `kubectl kustomize` render the config when available. Then the AIJob
//! example's spec edit (case A) still builds and tests. A repeated `create api` leaves the tree
//! unchanged.
//!
//! Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default `<repo>/target/e2e`.
//! Runs under `CI=true` or with `RSBUILDER_E2E=1` (`common::e2e::opted_in`).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::e2e::{cargo_ok as cargo, describe};

fn rsbuilder(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn rsbuilder_ok(dir: &Path, args: &[&str]) {
    let out = rsbuilder(dir, args);
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("rsbuilder {args:?}"), dir, &out)
    );
}

fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// `rsbuilder manifests`, then `kubectl kustomize` of config/default and config/samples;
/// without kubectl, skipped with a message locally and a failure under CI=true.
fn render_config(dir: &Path) {
    let out = rsbuilder(dir, &["manifests"]);
    assert!(
        out.status.success(),
        "`rsbuilder manifests` failed before the kustomize check:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for crd in [
        "config/crd/bases/ai.ai.example.com_aijobs.yaml",
        "config/crd/bases/ml.ai.example.com_inferences.yaml",
    ] {
        assert!(
            dir.join(crd).is_file(),
            "`rsbuilder manifests` wrote no {crd}"
        );
    }
    for config in ["config/default", "config/samples"] {
        let out = match Command::new("kubectl")
            .args(["kustomize", config])
            .current_dir(dir)
            .output()
        {
            Ok(out) => out,
            Err(_) => {
                common::missing("kubectl is not installed: the kustomize check");
                return;
            }
        };
        assert!(
            out.status.success(),
            "{}",
            describe(&format!("kubectl kustomize {config}"), dir, &out)
        );
        let yaml = String::from_utf8_lossy(&out.stdout);
        if config == "config/default" {
            assert!(
                yaml.contains("  - name: v2\n"),
                "AIJob v2 missing from the CRD"
            );
            assert!(
                yaml.contains("name: aijobs.ai.ai.example.com"),
                "no AIJob CRD in config/default"
            );
            assert!(yaml.contains("name: ai-operator-ai-aijob-editor-role"));
        } else {
            assert!(yaml.contains("kind: AIJob") && yaml.contains("kind: Inference"));
            assert!(yaml.contains("apiVersion: ai.ai.example.com/v2"));
        }
    }
}

/// Replaces the scaffold's example spec of AIJob with the AIJob example's fields (case A), in its
/// types and its sample.
fn aijob_example_edit(dir: &Path) {
    let path = dir.join("src/api/ai/v1/aijob_types.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("pub struct AIJobSpec {").unwrap();
    let end = start + text[start..].find("\n}\n").unwrap() + 3;
    let spec = "pub struct AIJobSpec {
    /// The model to train.
    pub model_name: String,
    /// GPUs per replica.
    pub gpu_count: i32,
    /// Training replicas; the defaulting webhook sets 1.
    #[schemars(range(max = 100))]
    pub replicas: Option<i32>,
}
";
    std::fs::write(&path, format!("{}{spec}{}", &text[..start], &text[end..])).unwrap();
    let sample = dir.join("config/samples/ai_v1_aijob.yaml");
    let text = std::fs::read_to_string(&sample).unwrap();
    assert!(text.contains("  foo: bar\n"), "{text}");
    std::fs::write(
        &sample,
        text.replace("  foo: bar\n", "  modelName: llama\n  gpuCount: 1\n"),
    )
    .unwrap();
}

#[test]
fn create_api_projects_build_and_pass_their_tests() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder_ok(
        &dir,
        &[
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ],
    );
    let aijob = [
        "create",
        "api",
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "AIJob",
    ];
    rsbuilder_ok(&dir, &aijob);
    // A second API group needs the multigroup layout: AIJob's files move to src/api/ai/v1/ and
    // src/controller/ai/.
    rsbuilder_ok(&dir, &["edit", "--multigroup=true"]);
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ml",
            "--version",
            "v2alpha1",
            "--kind",
            "Inference",
            "--namespaced=false",
        ],
    );
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "api",
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

    // Further, named controllers for a kind of the project and for a built-in type
    // (`--controller-name`): each its own module and reconciler, started beside the others.
    for (group, kind, name) in [
        ("ai", "AIJob", "aijob-backup"),
        ("core", "Pod", "pod-auditor"),
    ] {
        rsbuilder_ok(
            &dir,
            &[
                "create",
                "api",
                "--group",
                group,
                "--version",
                "v1",
                "--kind",
                kind,
                "--resource=false",
                "--controller-name",
                name,
            ],
        );
    }

    // A kind whose controller runs an image as an owned Deployment (`--image`, Kubebuilder's
    // deploy-image plugin); its tests check the Deployment it builds.
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "api",
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

    // A second version of AIJob, without a controller: one CRD with two versions, v1 stored.
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v2",
            "--kind",
            "AIJob",
            "--controller=false",
        ],
    );

    // The same `create api` again: refused, nothing changed.
    let before = tree(&dir);
    let out = rsbuilder(&dir, &aijob);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert!(
        tree(&dir) == before,
        "a refused create api changed the tree"
    );

    let out = Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args([
            "src/lib.rs",
            "src/controller/mod.rs",
            "src/api/mod.rs",
            "src/api/ai/mod.rs",
            "src/api/ai/v1/mod.rs",
            "src/api/ai/v2/mod.rs",
            "src/api/ml/v2alpha1/mod.rs",
            "src/controller/ai/mod.rs",
        ])
        .current_dir(&dir)
        .output();
    match out {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            describe("rustfmt --check", &dir, &out)
        ),
        Err(_) => common::missing("rustfmt is not installed: the rustfmt check"),
    }

    cargo(&dir, &["build"]);
    // The CRDs the controllers' tests serve (config/crd/bases), as `make test` writes them first.
    render_config(&dir);
    // The project's own tests pass as scaffolded. The controllers' machinery (finalizer,
    // 409 / 404 / backoff, cleanup once, Ready and events) is the runtime's, tested against a
    // mocked API server in rsbuilder's runtime/src/controller.rs; the generated files are
    // the thin implementations of its `Reconciler`, and each controller of a kind of the
    // project has a test that runs it on the runtime's in-process test cluster.
    let out = cargo(&dir, &["test"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for module in [
        "ai::aijob_controller",
        "ai::aijob_backup_controller",
        "ml::inference_controller",
    ] {
        let line = format!(
            "test controller::{module}::tests::the_sample_becomes_ready_and_is_cleaned_up_on_delete ... ok"
        );
        assert!(stdout.contains(&line), "no `{line}` in:\n{stdout}");
    }
    for (file, reconciler) in [
        (
            "src/controller/ai/aijob_controller.rs",
            "impl Reconciler for AIJobReconciler {",
        ),
        (
            "src/controller/core/pod_controller.rs",
            "impl Reconciler for PodReconciler {",
        ),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains(reconciler), "{file}:\n{text}");
    }
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    a_reconcile_that_never_reports_ready_fails_its_test(&dir);

    // Case A: the AIJob example's spec fields instead of the example field (and in the sample the
    // controller's test creates); still builds and tests.
    aijob_example_edit(&dir);
    rsbuilder_ok(&dir, &["manifests"]);
    let crd = std::fs::read_to_string(dir.join("config/crd/bases/ai.ai.example.com_aijobs.yaml"))
        .unwrap();
    // v1 has the AIJob example's fields; v2 keeps the example field.
    let (v1, v2) = crd.split_once("  - name: v2\n").expect("two versions");
    assert!(
        v1.contains("modelName:") && v1.contains("gpuCount:"),
        "{crd}"
    );
    assert!(!v1.contains("foo:") && v2.contains("foo:"), "{crd}");
    cargo(&dir, &["test"]);
}

/// The AIJob controller's scaffolded test catches a reconcile that never writes `Ready`: with
/// `apply` returning before `set_ready`, the test fails waiting for it. The file is restored
/// afterwards.
fn a_reconcile_that_never_reports_ready_fails_its_test(dir: &Path) {
    let path = dir.join("src/controller/ai/aijob_controller.rs");
    let good = std::fs::read_to_string(&path).unwrap();
    let step = "        // 5. Update status:";
    assert!(good.contains(step), "{good}");
    let broken = good.replacen(
        step,
        &format!("        if obj.spec.foo.is_some() {{\n            return Ok(Action::requeue(RESYNC));\n        }}\n{step}"),
        1,
    );
    std::fs::write(&path, broken).unwrap();
    let out = common::e2e::run(
        dir,
        env!("CARGO"),
        &["test", "--lib", "ai::aijob_controller::tests"],
    );
    std::fs::write(&path, good).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "the broken reconcile passed:\n{stdout}"
    );
    assert!(
        stdout.contains("the_sample_becomes_ready_and_is_cleaned_up_on_delete ... FAILED")
            && stdout.contains("waiting for AIJob aijob-sample to be Ready"),
        "{}",
        describe("the broken reconcile's test", dir, &out)
    );
}
