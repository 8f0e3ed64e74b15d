//! End to end, case A with webhooks: `rsbuilder init`, `create api` for AIJob,
//! `create webhook --defaulting --programmatic-validation`, `manifests`; then the generated project
//! builds and passes its tests — the defaulter and validator unit tests and the tests that start
//! the webhook server on loopback with a self-signed certificate and POST AdmissionReviews over
//! real HTTPS — and `kubectl kustomize config/default` renders the webhooks with cert-manager. Then
//! the AIJob example's edit: `replicas: Option<i32>` (at most 100) in the spec, the defaulter sets
//! it to 1 when absent, the validator rejects more than 100 naming the field and the limit; the
//! project still builds and its webhook tests (over HTTPS too) pass. Last, a new user's path:
//! `create webhook --force` over that spec (no `foo`, required fields) gives field-free webhooks
//! whose tests build valid objects, and a conversion webhook to a second version round-trips; the
//! tests pass.
//!
//! Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default `<repo>/target/e2e`.
//! Runs under `CI=true` or with `RSBUILDER_E2E=1` (`common::e2e::opted_in`).

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::e2e::{cargo_ok as cargo, describe, target_dir};

fn rsbuilder_ok(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("rsbuilder {args:?}"), dir, &out)
    );
}

/// Asserts that `cargo test` printed every test of `tests` as passed.
fn assert_passed(out: &Output, tests: &[&str]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    for test in tests {
        let line = format!("{test} ... ok");
        assert!(stdout.contains(&line), "missing `{line}` in:\n{stdout}");
    }
}

/// The tests of the user's webhook functions. The AdmissionReview plumbing and the HTTPS
/// serving are the runtime's, tested in rsbuilder's runtime/src/webhook/tests.rs.
const WEBHOOK_TESTS: &[&str] = &[
    "webhook::v1::aijob_webhook::tests::default_fills_only_absent_fields",
    "webhook::v1::aijob_webhook::tests::validators_reject_on_create_and_update",
    "webhook::v1::aijob_webhook::tests::the_api_server_stores_what_the_defaulter_sets",
    "webhook::v1::aijob_webhook::tests::the_api_server_refuses_what_the_validator_denies",
];

/// The validating webhook's marker with `verbs=update` (create left out): the functions are
/// unchanged, so their direct test passes, but the API server no longer calls the webhook on
/// create, and the test through the test cluster fails on the empty `spec.foo` it stored.
/// The file and `config/webhook/manifests.yaml` are restored afterwards.
fn a_marker_without_create_fails_the_test_through_the_cluster(dir: &Path) {
    let path = dir.join("src/webhook/v1/aijob_webhook.rs");
    let good = std::fs::read_to_string(&path).unwrap();
    let marker = good
        .lines()
        .find(|l| l.contains("+kubebuilder:webhook:") && l.contains("mutating=false"))
        .expect("the validating webhook's marker");
    assert!(marker.contains("verbs=create;update"), "{marker}");
    let broken = good.replacen(
        marker,
        &marker.replace("verbs=create;update", "verbs=update"),
        1,
    );
    std::fs::write(&path, broken).unwrap();
    rsbuilder_ok(dir, &["manifests"]);
    let out = common::e2e::run(dir, env!("CARGO"), &["test", "--lib", "webhook::"]);
    std::fs::write(&path, good).unwrap();
    rsbuilder_ok(dir, &["manifests"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "the broken marker passed:\n{stdout}");
    assert!(
        stdout.contains("the_api_server_refuses_what_the_validator_denies ... FAILED")
            && stdout.contains("validators_reject_on_create_and_update ... ok"),
        "{}",
        describe("the tests of the broken marker", dir, &out)
    );
}

/// `kubectl kustomize config/default` renders the webhook configurations with the CA
/// injection annotation, the Certificate for the prefixed Service, and the manager's webhook
/// port and certificate volume. Skipped with a message when kubectl is missing.
fn render_default(dir: &Path) {
    let out = match Command::new("kubectl")
        .args(["kustomize", "config/default"])
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
        describe("kubectl kustomize config/default", dir, &out)
    );
    let yaml = String::from_utf8_lossy(&out.stdout);
    for want in [
        "kind: MutatingWebhookConfiguration",
        "kind: ValidatingWebhookConfiguration",
        "cert-manager.io/inject-ca-from: ai-operator-system/ai-operator-serving-cert",
        "- ai-operator-webhook-service.ai-operator-system.svc\n",
        "- ai-operator-webhook-service.ai-operator-system.svc.cluster.local\n",
        "name: ai-operator-webhook-service\n      namespace: ai-operator-system\n      path: /mutate-ai-ai-example-com-v1-aijob",
        "path: /validate-ai-ai-example-com-v1-aijob",
        "containerPort: 9443",
        "mountPath: /tmp/k8s-webhook-server/serving-certs",
        "secretName: webhook-server-cert",
        "kind: Issuer",
    ] {
        assert!(yaml.contains(want), "missing {want:?} in:\n{yaml}");
    }
    assert_eq!(
        yaml.matches("cert-manager.io/inject-ca-from").count(),
        2,
        "{yaml}"
    );
}

/// The AIJob example's spec (case A) instead of the scaffold's example field. The cap of 100
/// replicas is the validating webhook's: a schema `maximum` would refuse 200 with 422 before the
/// webhook is called (kube-apiserver validates the schema first), and the webhook's test through
/// the test cluster expects the webhook's 403.
fn aijob_example_spec_edit(dir: &Path, version: &str) {
    let path = dir.join(format!("src/api/{version}/aijob_types.rs"));
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("pub struct AIJobSpec {").unwrap();
    let end = start + text[start..].find("\n}\n").unwrap() + 3;
    let spec = "pub struct AIJobSpec {
    /// The model to train.
    pub model_name: String,
    /// GPUs per replica.
    pub gpu_count: i32,
    /// Training replicas; the defaulting webhook sets 1, the validating webhook refuses more
    /// than 100.
    pub replicas: Option<i32>,
}
";
    std::fs::write(&path, format!("{}{spec}{}", &text[..start], &text[end..])).unwrap();
}

/// The AIJob example's webhooks (case A): each replacement swaps the scaffold's `spec.foo` example
/// for `spec.replicas`, in the functions and in the test fixtures. This is the "small edit" the
/// scaffold's comments describe.
fn aijob_example_webhook_edit(dir: &Path) {
    let path = dir.join("src/webhook/v1/aijob_webhook.rs");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let edits: &[(&str, &str)] = &[
        (
            "        if ai_job.spec.foo.is_none() {\n            ai_job.spec.foo = Some(\"default\".to_string());\n        }",
            "        if ai_job.spec.replicas.is_none() {\n            ai_job.spec.replicas = Some(1);\n        }",
        ),
        (
            "        if old.spec.foo != new.spec.foo {\n            warnings.push(format!(\n                \"spec.foo changed from {:?} to {:?}\",\n                old.spec.foo, new.spec.foo\n            ));\n        }",
            "        if old.spec.replicas != new.spec.replicas {\n            warnings.push(format!(\n                \"spec.replicas changed from {:?} to {:?}\",\n                old.spec.replicas, new.spec.replicas\n            ));\n        }",
        ),
        (
            "    if ai_job.spec.foo.as_deref() == Some(\"\") {\n        return Err(Denied::new(\"spec.foo: must not be empty when set\"));\n    }",
            "    if let Some(replicas) = ai_job.spec.replicas\n        && replicas > 100\n    {\n        return Err(Denied::new(format!(\n            \"spec.replicas: must be at most 100, got {replicas}\"\n        )));\n    }",
        ),
        (
            "assert_eq!(obj.spec.foo.as_deref(), Some(\"default\"));",
            "assert_eq!(obj.spec.replicas, Some(1));",
        ),
        (
            "assert_eq!(obj.spec.foo.as_deref(), Some(\"mine\"));",
            "assert_eq!(obj.spec.replicas, Some(3));",
        ),
        (
            "object(serde_json::json!({\"foo\": \"mine\"}))",
            "object(serde_json::json!({\"modelName\": \"m\", \"gpuCount\": 1, \"replicas\": 3}))",
        ),
        (
            "object(serde_json::json!({}))",
            "object(serde_json::json!({\"modelName\": \"m\", \"gpuCount\": 1}))",
        ),
        (
            "object(serde_json::json!({\"foo\": \"\"}))",
            "object(serde_json::json!({\"modelName\": \"m\", \"gpuCount\": 1, \"replicas\": 200}))",
        ),
        (
            "\"spec.foo: must not be empty when set\"",
            "\"spec.replicas: must be at most 100, got 200\"",
        ),
        (
            "object(serde_json::json!({\"foo\": \"a\"}))",
            "object(serde_json::json!({\"modelName\": \"m\", \"gpuCount\": 1, \"replicas\": 1}))",
        ),
        (
            "object(serde_json::json!({\"foo\": \"b\"}))",
            "object(serde_json::json!({\"modelName\": \"m\", \"gpuCount\": 1, \"replicas\": 2}))",
        ),
        (
            "r#\"spec.foo changed from Some(\"a\") to Some(\"b\")\"#",
            "\"spec.replicas changed from Some(1) to Some(2)\"",
        ),
        // The tests through the test cluster.
        (
            "assert_eq!(created.spec.foo.as_deref(), Some(\"default\"));",
            "assert_eq!(created.spec.replicas, Some(1));",
        ),
        (
            "denied the request: spec.foo: must not be empty when set\"",
            "denied the request: spec.replicas: must be at most 100, got 200\"",
        ),
        (
            "created.spec.foo = Some(String::new());",
            "created.spec.replicas = Some(200);",
        ),
        (
            "assert_eq!(api.get(\"sample\").await?.spec.foo.as_deref(), Some(\"a\"));",
            "assert_eq!(api.get(\"sample\").await?.spec.replicas, Some(1));",
        ),
    ];
    for (from, to) in edits {
        assert!(text.contains(from), "the scaffold no longer holds {from:?}");
        text = text.replace(from, to);
    }
    let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
    for line in code {
        assert!(!line.contains("foo"), "left over: {line}");
    }
    std::fs::write(&path, text).unwrap();
}

/// The built manager, without a cluster: a `--webhook-cert-dir` without a certificate is
/// reported before connecting (exit 1, one line naming the flag and the file);
/// `ENABLE_WEBHOOKS=false` skips the webhook server, and the missing cluster is reported.
fn no_certificate_exit(manager: &Path) {
    let empty = tempfile::tempdir().unwrap();
    let run = |webhooks: &str| {
        let out = Command::new(manager)
            .arg(format!("--webhook-cert-dir={}", empty.path().display()))
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT")
            .env("ENABLE_WEBHOOKS", webhooks)
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        stderr
    };
    let stderr = run("true");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot load the webhook serving certificate (tls.crt, tls.key) from \
             --webhook-cert-dir {}. In the cluster, cert-manager writes it there; to run the \
             manager on this machine without its webhooks, set ENABLE_WEBHOOKS=false \
             (`make run ENABLE_WEBHOOKS=false`): reading ",
            empty.path().display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("Kubernetes"), "{stderr}");
    let stderr = run("false");
    assert!(
        stderr.starts_with("error: no Kubernetes cluster configured"),
        "{stderr}"
    );
}

#[test]
fn case_a_webhooks_build_serve_https_and_render() {
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
    let gvk = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];
    rsbuilder_ok(&dir, &[&["create", "api"][..], &gvk].concat());
    rsbuilder_ok(
        &dir,
        &[
            &["create", "webhook"][..],
            &gvk,
            &["--defaulting", "--programmatic-validation"],
        ]
        .concat(),
    );
    rsbuilder_ok(&dir, &["manifests"]);
    let manifests = std::fs::read_to_string(dir.join("config/webhook/manifests.yaml")).unwrap();
    assert!(manifests.contains("path: /mutate-ai-ai-example-com-v1-aijob"));
    assert!(manifests.contains("path: /validate-ai-ai-example-com-v1-aijob"));

    let out = Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args([
            "src/webhook/mod.rs",
            "src/webhook/v1/mod.rs",
            "src/webhook/v1/aijob_webhook.rs",
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
    no_certificate_exit(&target_dir().join("debug/manager"));
    assert_passed(&cargo(&dir, &["test"]), WEBHOOK_TESTS);
    render_default(&dir);
    a_marker_without_create_fails_the_test_through_the_cluster(&dir);

    // Case A: the AIJob example's spec and webhooks; the CRD follows the spec before the tests that
    // create objects through the test cluster (as `make test` runs `make manifests` first).
    aijob_example_spec_edit(&dir, "v1");
    aijob_example_webhook_edit(&dir);
    rsbuilder_ok(&dir, &["manifests"]);
    assert_passed(&cargo(&dir, &["test", "--lib", "webhook::"]), WEBHOOK_TESTS);

    // A new user's path: the spec (now the AIJob example's, without `foo`, with required fields) is
    // scaffolded over with field-free webhooks whose test objects carry the required fields,
    // and a second version with the same spec gets a conversion webhook.
    rsbuilder_ok(
        &dir,
        &[
            &["create", "webhook"][..],
            &gvk,
            &["--defaulting", "--programmatic-validation", "--force"],
        ]
        .concat(),
    );
    let kind_file = std::fs::read_to_string(dir.join("src/webhook/v1/aijob_webhook.rs")).unwrap();
    assert!(!kind_file.contains("foo"), "{kind_file}");
    assert!(kind_file.contains(r#"json!({"gpuCount": 0, "modelName": ""})"#));
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
    aijob_example_spec_edit(&dir, "v2");
    rsbuilder_ok(
        &dir,
        &[
            &["create", "webhook"][..],
            &gvk,
            &["--conversion", "--spoke", "v2"],
        ]
        .concat(),
    );
    rsbuilder_ok(&dir, &["manifests"]);
    assert_passed(
        &cargo(&dir, &["test", "--lib", "webhook::"]),
        FIELD_FREE_TESTS,
    );
}

/// The tests of the field-free webhooks and of the conversion webhook.
const FIELD_FREE_TESTS: &[&str] = &[
    "webhook::v1::aijob_webhook::tests::default_changes_nothing_yet",
    "webhook::v1::aijob_webhook::tests::validators_admit_everything_yet",
    "webhook::v1::aijob_webhook::tests::the_api_server_stores_the_object_the_defaulter_leaves",
    "webhook::v1::aijob_webhook::tests::the_api_server_stores_what_the_validator_admits",
    "webhook::v1::aijob_conversion::tests::v2_round_trips_through_the_hub",
];
