//! `rsbuilder manifests --evaluate auto` on a kind rsbuilder used to refuse: a field type whose
//! `JsonSchema` impl is written by hand is compiled, with a note that says why. Builds with
//! cargo in the shared `RSBUILDER_E2E_TARGET_DIR`, as tests/manifests_probe.rs does.

#[path = "conformance/support.rs"]
mod support;

use std::path::Path;

use assert_cmd::Command;
use support::{cargo, fixture_lock, shared_build_env};

const CARGO_TOML: &str = r#"[package]
name = "probe-test-op"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kube = { version = "5", default-features = false, features = ["derive"] }
k8s-openapi = { version = "0.29", features = ["v1_37", "schemars"] }
schemars = "1"
serde = { version = "1", features = ["derive", "rc"] }
serde_json = "1"
"#;

/// linkerd's `K8sDuration` shape: a newtype with a hand-written `impl JsonSchema`.
const LIB: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "t.example.com", version = "v1", kind = "Thing")]
pub struct ThingSpec {
    pub timeout: GoDuration,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct GoDuration(String);

impl JsonSchema for GoDuration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GoDuration".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"})
    }
}
"#;

/// `crd()` of `Thing` as the crate's own binary prints it.
fn crd_of_thing(dir: &Path) -> serde_json::Value {
    std::fs::create_dir_all(dir.join("src/bin")).unwrap();
    std::fs::write(
        dir.join("src/bin/print_crd.rs"),
        "use kube::CustomResourceExt;\nfn main() { print!(\"{}\", serde_json::to_string(&probe_test_op::Thing::crd()).unwrap()); }\n",
    )
    .unwrap();
    let out = cargo()
        .args(["run", "--quiet", "--bin", "print_crd", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(dir.join("src/bin")).unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_hand_written_json_schema_impl_is_compiled_with_its_reason() {
    let dir = tempfile::Builder::new()
        .prefix("probe-test-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), CARGO_TOML).unwrap();
    std::fs::write(dir.path().join("Cargo.lock"), fixture_lock("probe-test-op")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), LIB).unwrap();
    let truth = crd_of_thing(dir.path());
    let mut cmd = Command::cargo_bin("rsbuilder").unwrap();
    cmd.current_dir(dir.path()).arg("manifests");
    shared_build_env(&mut cmd);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "note: Thing.t.example.com: CRD from the compiler, hand-written schema: compiled, because src/lib.rs:12: `GoDuration` implements `JsonSchema` by hand"
        ),
        "{stderr}"
    );
    let text = std::fs::read_to_string(
        dir.path()
            .join("config/crd/bases/t.example.com_things.yaml"),
    )
    .unwrap();
    let got: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        got["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["timeout"]["pattern"],
        "^[0-9]+(ms|s|m|h)$"
    );
    assert_eq!(got, truth);
}
