//! End to end: `rsbuilder init`, then `create api --external-api-crd` with a CRD shaped like
//! cert-manager's Certificate; the generated project (kopium's types in src/api/external/ and
//! the controller) builds, passes its tests and clippy with no edit, is rustfmt-clean, and its
//! types read a Certificate object. `rsbuilder manifests` writes no CRD for the kind.
//!
//! Needs kopium (`cargo install kopium`): skipped with a message without it, a failure under
//! `CI=true`. Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default
//! `<repo>/target/e2e`. Runs under `CI=true` or with `RSBUILDER_E2E=1`
//! (`common::e2e::opted_in`).

use crate::common;
use common::e2e::{describe, run_ok};

use std::process::Command;

#[test]
fn an_external_kind_from_a_crd_builds_and_passes_its_tests() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tls-operator");
    std::fs::create_dir(&dir).unwrap();
    let rsbuilder = env!("CARGO_BIN_EXE_rsbuilder");
    run_ok(
        &dir,
        rsbuilder,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/tls-operator",
        ],
    );
    std::fs::write(
        dir.join("certificate.yaml"),
        include_str!("../fixtures/external/certificate.yaml"),
    )
    .unwrap();
    let out = Command::new(rsbuilder)
        .args(["create", "api", "--external-api-crd", "certificate.yaml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    if !out.status.success()
        && String::from_utf8_lossy(&out.stderr).contains("cargo install kopium")
    {
        common::missing("kopium is not installed (`cargo install kopium`)");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        describe("create api --external-api-crd", &dir, &out)
    );
    run_ok(&dir, rsbuilder, &["manifests"]);
    let bases = dir.join("config/crd/bases");
    assert!(
        !bases.exists() || std::fs::read_dir(&bases).unwrap().next().is_none(),
        "manifests wrote a CRD for the external kind"
    );
    // What rsbuilder wrote is rustfmt-clean.
    let cargo = env!("CARGO");
    run_ok(&dir, cargo, &["fmt", "--check"]);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/certificate_types.rs"),
        r#"use tls_operator::api::external::cert_manager_io::v1::Certificate;

#[test]
fn a_certificate_object_reads_into_the_generated_types() {
    let c: Certificate = serde_json::from_value(serde_json::json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "secretName": "web-tls",
            "dnsNames": ["example.com"],
            "issuerRef": {"name": "ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
        },
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Issued",
            "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    }))
    .unwrap();
    assert_eq!(c.spec.secret_name, "web-tls");
    assert_eq!(
        c.spec.dns_names.as_deref(),
        Some(&["example.com".to_string()][..])
    );
    assert_eq!(c.spec.issuer_ref.kind.as_deref(), Some("ClusterIssuer"));
    let ready = &c.status.unwrap().conditions.unwrap()[0];
    assert_eq!(
        (ready.type_.as_str(), ready.status.as_str()),
        ("Ready", "True")
    );
    assert_eq!(<Certificate as kube::Resource>::plural(&()), "certificates");
    assert_eq!(
        <Certificate as kube::Resource>::api_version(&()),
        "cert-manager.io/v1"
    );
}
"#,
    )
    .unwrap();
    run_ok(&dir, cargo, &["test"]);
    run_ok(
        &dir,
        cargo,
        &["clippy", "--all-targets", "--", "-D", "warnings"],
    );
}
