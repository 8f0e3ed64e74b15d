//! docs/tutorial.md, run: the Kubebuilder book's CronJob tutorial in Rust. Every `rsbuilder`
//! command of the tutorial runs in a temporary directory with the real binary, in the
//! tutorial's order, and the files the tutorial writes (`tests/tutorial/`, which the document
//! quotes) are copied in where the tutorial edits them. Then:
//!
//! - `rsbuilder manifests` writes a CRD with both versions, the tutorial's validation and the
//!   conversion webhook patch, webhooks of the project's own group (not the built-in
//!   `batch`), and RBAC for the Jobs; `manifests --check` finds nothing to change;
//! - end to end (under `CI=true` or with `RSBUILDER_E2E=1`, `common::e2e::opted_in`): the
//!   project builds, and its tests pass: the schedule logic (next run, missed runs, starting
//!   deadline, concurrency policy, history), the webhooks and the conversion;
//! - every code block that docs/tutorial.md quotes from `tests/tutorial/` is in that file,
//!   and its commands are the ones run here.
//!
//! Builds use `<RSBUILDER_E2E_TARGET_DIR>/tutorial` (default `<repo>/target/e2e/tutorial`).

use crate::common;
use common::e2e::describe;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A step of the tutorial: a command, or a file of `tests/tutorial/` written over the
/// scaffold's (or next to it).
enum Step {
    Run(&'static str),
    Write(&'static str),
    /// Adds the cron crate to `Cargo.toml`'s dependencies ([`CRONER`]).
    AddCroner,
}

/// The dependency line the tutorial adds to `Cargo.toml`.
const CRONER: &str = r#"croner = { version = "4", default-features = false, features = ["jiff"] }"#;

/// The tutorial, in its order.
const STEPS: &[Step] = &[
    Step::Run(
        "rsbuilder init --domain tutorial.kubebuilder.io --repo tutorial.kubebuilder.io/project",
    ),
    Step::Run("rsbuilder create api --group batch --version v1 --kind CronJob"),
    Step::Write("src/api/v1/cronjob_types.rs"),
    Step::Write("config/samples/batch_v1_cronjob.yaml"),
    Step::AddCroner,
    Step::Write("src/controller/cronjob_controller.rs"),
    Step::Run(
        "rsbuilder create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation",
    ),
    Step::Write("src/webhook/v1/cronjob_webhook.rs"),
    Step::Run("rsbuilder manifests"),
    Step::Run("rsbuilder create api --group batch --version v2 --kind CronJob --controller=false"),
    Step::Write("src/api/v2/cronjob_types.rs"),
    Step::Write("config/samples/batch_v2_cronjob.yaml"),
    Step::Run(
        "rsbuilder create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2",
    ),
    Step::Write("src/webhook/v1/cronjob_conversion.rs"),
    Step::Run("rsbuilder manifests"),
];

fn rsbuilder(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("rsbuilder {}", args.join(" ")), dir, &out)
    );
    out
}

/// Runs the tutorial's steps in `dir` (an empty directory named `project`).
fn run_tutorial(dir: &Path) {
    let files = repo().join("tests/tutorial");
    for step in STEPS {
        match step {
            Step::Run(command) => {
                let args: Vec<&str> = command.split(' ').skip(1).collect();
                rsbuilder(dir, &args);
            }
            Step::Write(path) => {
                std::fs::copy(files.join(path), dir.join(path))
                    .unwrap_or_else(|e| panic!("copying tests/tutorial/{path}: {e}"));
            }
            Step::AddCroner => {
                let path = dir.join("Cargo.toml");
                let text = std::fs::read_to_string(&path).unwrap();
                let marker = "# +kubebuilder:scaffold:dependencies";
                assert!(text.contains(marker), "{text}");
                let text = text.replace(marker, &format!("{CRONER}\n{marker}"));
                std::fs::write(&path, text).unwrap();
            }
        }
    }
}

fn scaffolded() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project");
    std::fs::create_dir(&dir).unwrap();
    run_tutorial(&dir);
    (tmp, dir)
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON schema of `spec` (or `status`) in the CRD version `version`.
fn schema<'a>(crd: &'a Value, version: &str, part: &str) -> &'a Value {
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let v = versions
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("no version {version} in the CRD"));
    &v["schema"]["openAPIV3Schema"]["properties"][part]
}

#[test]
fn the_tutorial_makes_a_crd_with_both_versions_validation_and_conversion() {
    let (_tmp, dir) = scaffolded();
    let crd = yaml(&dir.join("config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"));
    assert_eq!(
        crd["metadata"]["name"],
        "cronjobs.batch.tutorial.kubebuilder.io"
    );
    let versions: Vec<(String, bool, bool)> = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["served"].as_bool().unwrap(),
                v["storage"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [("v1".into(), true, true), ("v2".into(), true, false)]
    );
    for version in ["v1", "v2"] {
        let spec = schema(&crd, version, "spec");
        let props = &spec["properties"];
        assert_eq!(
            spec["required"],
            serde_json::json!(["jobTemplate", "schedule"]),
            "{version}"
        );
        assert_eq!(
            props["concurrencyPolicy"]["enum"],
            serde_json::json!(["Allow", "Forbid", "Replace"])
        );
        for limit in [
            "startingDeadlineSeconds",
            "successfulJobsHistoryLimit",
            "failedJobsHistoryLimit",
        ] {
            assert_eq!(props[limit]["minimum"], 0.0, "{version} {limit}");
            assert_eq!(props[limit]["type"], "integer", "{version} {limit}");
        }
        assert_eq!(props["suspend"]["type"], "boolean");
        // k8s-openapi's JobTemplateSpec, inlined.
        let template = &props["jobTemplate"]["properties"]["spec"]["properties"];
        assert!(template["template"].is_object(), "{version}");
        let status = &schema(&crd, version, "status")["properties"];
        assert_eq!(status["lastScheduleTime"]["format"], "date-time");
        let reference = &status["active"]["items"]["properties"];
        for field in ["apiVersion", "kind", "name", "namespace", "uid"] {
            assert!(reference[field].is_object(), "{version} active[].{field}");
        }
    }
    let v1 = &schema(&crd, "v1", "spec")["properties"]["schedule"];
    assert_eq!(
        (&v1["type"], &v1["minLength"]),
        (&"string".into(), &0.into())
    );
    let v2 = &schema(&crd, "v2", "spec")["properties"]["schedule"];
    assert_eq!(v2["type"], "object");
    let fields: Vec<&String> = v2["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        ["dayOfMonth", "dayOfWeek", "hour", "minute", "month"]
    );

    // The conversion webhook: the CRD patch, listed in config/crd.
    let patch = yaml(&dir.join("config/crd/patches/webhook_in_cronjobs.yaml"));
    let conversion = &patch["spec"]["conversion"];
    assert_eq!(conversion["strategy"], "Webhook");
    assert_eq!(
        conversion["webhook"]["clientConfig"]["service"]["path"],
        "/convert"
    );
    let crd_kustomization = yaml(&dir.join("config/crd/kustomization.yaml"));
    assert_eq!(
        crd_kustomization["patches"],
        serde_json::json!([{"path": "patches/webhook_in_cronjobs.yaml"}])
    );

    // The admission webhooks are the project's group's, not the built-in batch/v1 CronJob's.
    let manifests = std::fs::read_to_string(dir.join("config/webhook/manifests.yaml")).unwrap();
    for want in [
        "path: /mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
        "path: /validate-batch-tutorial-kubebuilder-io-v1-cronjob",
        "- batch.tutorial.kubebuilder.io\n",
    ] {
        assert!(
            manifests.contains(want),
            "missing {want:?} in:\n{manifests}"
        );
    }
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(!main.contains("k8s_openapi::api::batch"), "{main}");
    assert!(main.contains("webhooks.defaulting::<project::api::v1::CronJob, _>("));
    assert!(
        main.contains(
            "webhooks.conversion(project::webhook::v1::cronjob_conversion::conversion())"
        )
    );

    // The controller may manage Jobs.
    let role = std::fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap();
    assert!(
        role.contains("- apiGroups:\n  - batch\n  resources:\n  - jobs\n  verbs:\n  - create\n  - delete\n  - get\n  - list\n  - patch\n  - update\n  - watch\n"),
        "{role}"
    );
    rsbuilder(&dir, &["manifests", "--check"]);

    match Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(&dir)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{}",
                describe("kubectl kustomize", &dir, &out)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            for want in [
                "strategy: Webhook",
                "name: project-webhook-service\n          namespace: project-system\n          path: /convert",
                "cert-manager.io/inject-ca-from: project-system/project-serving-cert",
            ] {
                assert!(text.contains(want), "missing {want:?} in:\n{text}");
            }
        }
        Err(_) => common::missing("kubectl is not installed: the kustomize check"),
    }
}

/// The tests of the tutorial's files, each of which must pass.
const PROJECT_TESTS: &[&str] = &[
    "controller::cronjob_controller::tests::the_schedule_takes_five_fields_or_a_nickname",
    "controller::cronjob_controller::tests::the_next_run_follows_the_schedule",
    "controller::cronjob_controller::tests::the_latest_missed_run_is_the_one_to_start",
    "controller::cronjob_controller::tests::more_than_a_hundred_missed_runs_is_an_error",
    "controller::cronjob_controller::tests::a_due_run_creates_an_owned_job_named_after_its_time",
    "controller::cronjob_controller::tests::no_run_is_due_right_after_the_last_one",
    "controller::cronjob_controller::tests::a_run_older_than_the_starting_deadline_does_not_start",
    "controller::cronjob_controller::tests::forbid_skips_a_run_while_a_job_runs_and_replace_deletes_it",
    "controller::cronjob_controller::tests::a_suspended_cron_job_starts_nothing_but_still_cleans_up",
    "controller::cronjob_controller::tests::history_keeps_the_newest_finished_jobs_up_to_the_limits",
    "controller::cronjob_controller::tests::an_unparsable_schedule_is_reported_not_retried",
    "webhook::v1::cronjob_webhook::tests::default_fills_only_absent_fields",
    "webhook::v1::cronjob_webhook::tests::a_valid_cron_job_is_admitted",
    "webhook::v1::cronjob_webhook::tests::a_bad_schedule_and_a_long_name_are_rejected_on_create_and_update",
    "webhook::v1::cronjob_conversion::tests::v2_round_trips_through_the_hub",
    "webhook::v1::cronjob_conversion::tests::absent_fields_are_every_value_in_v1",
    "webhook::v1::cronjob_conversion::tests::a_nickname_reads_as_its_five_fields_in_v2",
    "webhook::v1::cronjob_conversion::tests::a_schedule_of_other_than_five_fields_does_not_convert",
];

#[test]
fn the_tutorial_project_builds_and_its_tests_pass() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let (_tmp, dir) = scaffolded();
    let out = common::e2e::cargo()
        .args(["test", "--lib"])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            common::e2e::target_dir().join("tutorial"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        describe("cargo test --lib", &dir, &out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for test in PROJECT_TESTS {
        let line = format!("test {test} ... ok");
        assert!(stdout.contains(&line), "missing `{line}` in:\n{stdout}");
    }
    assert!(
        stdout.contains(&format!(
            "test result: ok. {} passed; 0 failed; 0 ignored",
            PROJECT_TESTS.len()
        )),
        "{stdout}"
    );
}

/// The fenced blocks of docs/tutorial.md: (the `<!-- tests/tutorial/... -->` comment line
/// right before the fence, if any; the fence's info string; the block's text).
fn doc_blocks() -> Vec<(Option<String>, String, String)> {
    let doc = std::fs::read_to_string(repo().join("docs/tutorial.md")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    let mut previous: Option<&str> = None;
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let source = previous
                .and_then(|p| p.strip_prefix("<!-- from "))
                .and_then(|p| p.strip_suffix(" -->"))
                .map(str::to_string);
            let mut text = String::new();
            for inner in lines.by_ref() {
                if inner.starts_with("```") {
                    break;
                }
                text.push_str(inner);
                text.push('\n');
            }
            blocks.push((source, info.to_string(), text));
            previous = None;
        } else {
            previous = Some(line);
        }
    }
    blocks
}

#[test]
fn the_tutorial_document_quotes_the_checked_files_and_runs_these_commands() {
    let blocks = doc_blocks();
    let mut quoted = std::collections::BTreeSet::new();
    for (source, _, text) in &blocks {
        let Some(source) = source else { continue };
        let path = source
            .strip_prefix("tests/tutorial/")
            .unwrap_or_else(|| panic!("a quote from {source}: quotes come from tests/tutorial/"));
        let file = std::fs::read_to_string(repo().join(source))
            .unwrap_or_else(|e| panic!("docs/tutorial.md quotes {source}: {e}"));
        assert!(
            file.contains(text.as_str()),
            "docs/tutorial.md quotes from {source} a block that is not in the file:\n{text}"
        );
        quoted.insert(path.to_string());
    }
    for step in STEPS {
        if let Step::Write(path) = step {
            assert!(
                quoted.contains(*path),
                "docs/tutorial.md quotes nothing of {path}"
            );
        }
    }
    let commands: Vec<String> = blocks
        .iter()
        .filter(|(source, info, _)| source.is_none() && info == "sh")
        .flat_map(|(_, _, text)| text.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|line| line.starts_with("rsbuilder "))
        .collect();
    let run: Vec<&str> = STEPS
        .iter()
        .filter_map(|step| match step {
            Step::Run(command) => Some(*command),
            _ => None,
        })
        .collect();
    assert_eq!(commands, run, "the rsbuilder commands of docs/tutorial.md");
    let all: String = blocks.iter().map(|(_, _, text)| text.as_str()).collect();
    assert!(all.contains(CRONER), "docs/tutorial.md must show {CRONER}");
}
