//! `rsbuilder manifests` with the compile fallback (`--evaluate`), `--verify` and the probe
//! cache, on small crates written at test time. They build with cargo against the same
//! dependencies (and `Cargo.lock`) as the conformance fixture crate, in the shared
//! `RSBUILDER_E2E_TARGET_DIR` (default `target/e2e`), so the dependencies compile once.

#[path = "conformance/support.rs"]
mod support;

use std::path::{Path, PathBuf};

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

const HEADER: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

/// A kind rsbuilder derives statically.
const PLAIN: &str = r#"
/// A plain kind.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Plain", namespaced)]
pub struct PlainSpec {
    /// How many.
    pub replicas: Option<i32>,
}
"#;

/// A kind whose `schema_with` function has logic (a loop, a condition): only the compiler
/// can evaluate it.
const TUNED: &str = r#"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Tuned")]
pub struct TunedSpec {
    #[schemars(schema_with = "levels")]
    pub level: String,
}

fn levels(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut names = Vec::new();
    for i in 1..=3 {
        if i % 2 == 1 {
            names.push(serde_json::Value::String(format!("level-{i}")));
        }
    }
    schemars::json_schema!({ "type": "string", "enum": names })
}
"#;

/// Writes a crate with `lib` as `src/lib.rs` (and the other files), its Cargo.toml and the
/// conformance fixture's Cargo.lock.
fn krate(lib: Option<&str>, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("probe-test-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), CARGO_TOML).unwrap();
    std::fs::write(dir.path().join("Cargo.lock"), fixture_lock("probe-test-op")).unwrap();
    if let Some(lib) = lib {
        std::fs::write(dir.path().join("src/lib.rs"), format!("{HEADER}{lib}")).unwrap();
    }
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// `rsbuilder manifests` in `dir`, the probe building in the shared target directory with
/// the settings the conformance fixtures use (so their compiled dependencies are reused).
fn manifests(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("rsbuilder").unwrap();
    cmd.current_dir(dir).arg("manifests");
    shared_build_env(&mut cmd);
    cmd
}

struct Ran {
    code: i32,
    stderr: String,
}

fn run(cmd: &mut Command) -> Ran {
    let out = cmd.output().unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn yaml(dir: &Path, file: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("config/crd/bases").join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_saphyr::from_str(&text).unwrap()
}

/// `crd()` of `kind` as the crate's own binary prints it: the ground truth, built apart from
/// rsbuilder's probe.
fn crd_of(dir: &Path, kind: &str) -> serde_json::Value {
    std::fs::create_dir_all(dir.join("src/bin")).unwrap();
    std::fs::write(
        dir.join("src/bin/print_crd.rs"),
        format!(
            "use kube::CustomResourceExt;\nfn main() {{ print!(\"{{}}\", serde_json::to_string(&probe_test_op::{kind}::crd()).unwrap()); }}\n"
        ),
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

fn cache_entries(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join("target/rsbuilder-probe/cache")) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_schema_with_function_with_logic_comes_from_the_compiler_equal_to_crd_and_is_cached() {
    let dir = krate(Some(&format!("{PLAIN}{TUNED}")), &[]);
    // crd() from the crate itself first: its cargo run settles the crate's Cargo.lock.
    let truth = crd_of(dir.path(), "Tuned");
    let first = run(&mut manifests(dir.path()));
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("note: Tuned.example.com: CRD from the compiler, because src/lib.rs:"),
        "{}",
        first.stderr
    );
    assert!(first.stderr.contains("schema_with"), "{}", first.stderr);
    assert!(
        !first.stderr.contains("Plain.example.com: CRD from"),
        "{}",
        first.stderr
    );
    let tuned = yaml(dir.path(), "example.com_tuneds.yaml");
    assert_eq!(
        tuned["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["level"]["enum"],
        serde_json::json!(["level-1", "level-3"])
    );
    assert_eq!(tuned, truth);
    assert_eq!(cache_entries(dir.path()).len(), 1);

    // Nothing changed: the cache answers, and cargo is not run (a cargo that fails would
    // show).
    let second = run(manifests(dir.path()).env("CARGO", "/bin/false"));
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("note: Tuned.example.com: CRD from the compiler (cached), because"),
        "{}",
        second.stderr
    );

    // A source change is a new key: compiled again.
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib)
        .unwrap()
        .replace("1..=3", "1..=5");
    std::fs::write(&lib, text).unwrap();
    let third = run(manifests(dir.path()).env("CARGO", "/bin/false"));
    assert_eq!(third.code, 1, "{}", third.stderr);
    assert!(
        third
            .stderr
            .contains("compiling the probe against probe-test-op failed"),
        "{}",
        third.stderr
    );
    // The static kind is still written.
    assert_eq!(
        yaml(dir.path(), "example.com_plains.yaml")["spec"]["names"]["kind"],
        "Plain"
    );
    let fourth = run(&mut manifests(dir.path()));
    assert_eq!(fourth.code, 0, "{}", fourth.stderr);
    let tuned = yaml(dir.path(), "example.com_tuneds.yaml");
    assert_eq!(
        tuned["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["level"]["enum"],
        serde_json::json!(["level-1", "level-3", "level-5"])
    );
    assert_eq!(cache_entries(dir.path()).len(), 2);
}

#[test]
fn verify_passes_when_equal_and_reports_a_difference_as_a_bug_with_both_values() {
    let dir = krate(Some(PLAIN), &[]);
    let ok = run(manifests(dir.path()).arg("--verify"));
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(
        ok.stderr
            .contains("note: Plain.example.com: verified, equal to crd()"),
        "{}",
        ok.stderr
    );
    // A crd() that differs from the static CRD: the cached compiler output, edited.
    let entries = cache_entries(dir.path());
    assert_eq!(entries.len(), 1);
    let text = std::fs::read_to_string(&entries[0]).unwrap();
    assert!(text.contains("How many."), "{text}");
    std::fs::write(
        &entries[0],
        text.replace("How many.", "How many, compiled."),
    )
    .unwrap();
    std::fs::remove_dir_all(dir.path().join("config")).unwrap();
    let bad = run(manifests(dir.path()).arg("--verify"));
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stderr.contains(
            "rsbuilder bug: the static CRD of Plain.example.com differs from what crd() returns"
        ),
        "{}",
        bad.stderr
    );
    assert!(
        bad.stderr.contains(
            "$.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.description: expected \"How many, compiled.\", rsbuilder \"How many.\""
        ),
        "{}",
        bad.stderr
    );
    assert!(
        bad.stderr.contains("--- crd()\n+++ rsbuilder"),
        "{}",
        bad.stderr
    );
    assert!(bad.stderr.contains("crd() is:\n{"), "{}", bad.stderr);
    assert!(
        !dir.path()
            .join("config/crd/bases/example.com_plains.yaml")
            .exists()
    );
}

#[test]
fn evaluate_static_refuses_and_evaluate_compile_takes_every_kind_from_the_compiler() {
    let dir = krate(Some(&format!("{PLAIN}{TUNED}")), &[]);
    let refused = run(manifests(dir.path()).args(["--evaluate", "static"]));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("schema_with"), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("not generated: Tuned.example.com"),
        "{}",
        refused.stderr
    );
    assert!(
        !dir.path().join("target").exists(),
        "static never builds a probe"
    );
    assert_eq!(
        yaml(dir.path(), "example.com_plains.yaml")["spec"]["names"]["kind"],
        "Plain"
    );

    let compiled = run(manifests(dir.path()).args(["--evaluate", "compile"]));
    assert_eq!(compiled.code, 0, "{}", compiled.stderr);
    assert!(
        compiled.stderr.contains(
            "note: Plain.example.com: CRD from the compiler, because of --evaluate compile"
        ),
        "{}",
        compiled.stderr
    );
    assert!(
        compiled
            .stderr
            .contains("note: Tuned.example.com: CRD from the compiler"),
        "{}",
        compiled.stderr
    );
    assert_eq!(
        yaml(dir.path(), "example.com_plains.yaml"),
        crd_of(dir.path(), "Plain")
    );
}

#[test]
fn kinds_a_probe_cannot_name_are_refused_with_the_reason() {
    // No library target: the kind is in the binary.
    let dir = krate(
        None,
        &[("src/main.rs", &format!("{HEADER}{TUNED}\nfn main() {{}}\n"))],
    );
    let r = run(&mut manifests(dir.path()));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "Tuned.example.com needs compiling, but the crate probe-test-op has no library target"
        ),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("target").exists(), "nothing was built");

    // A private module.
    let dir = krate(
        Some(&format!("mod hidden {{\n{HEADER}{TUNED}}}\n{PLAIN}")),
        &[],
    );
    let r = run(&mut manifests(dir.path()));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("`probe_test_op::hidden::Tuned` is not reachable from outside the crate: module `hidden` is not `pub`"),
        "{}",
        r.stderr
    );
    assert_eq!(
        yaml(dir.path(), "example.com_plains.yaml")["spec"]["names"]["kind"],
        "Plain"
    );
}

#[test]
fn a_probe_that_does_not_compile_shows_the_compiler_error_with_the_kind() {
    let dir = krate(
        Some(&format!(
            "{PLAIN}{TUNED}\npub fn broken() -> i32 {{ \"not a number\" }}\n"
        )),
        &[],
    );
    let r = run(&mut manifests(dir.path()));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("Tuned.example.com needs compiling, and compiling the probe against probe-test-op failed"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("error[E0308]: mismatched types"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("warning:"), "{}", r.stderr);
    assert_eq!(
        yaml(dir.path(), "example.com_plains.yaml")["spec"]["names"]["kind"],
        "Plain"
    );
}

#[test]
fn a_kind_the_probe_cannot_compile_fails_alone() {
    // `gone` is configured out, so the probe cannot name `gone::Tuned`; `Other` still comes
    // from the compiler.
    let other = TUNED
        .replace("Tuned", "Other")
        .replace("fn levels", "fn other_levels")
        .replace("\"levels\"", "\"other_levels\"");
    let dir = krate(
        Some(&format!(
            "#[cfg(any())]\npub mod gone {{\n{HEADER}{TUNED}}}\n{other}"
        )),
        &[],
    );
    let r = run(&mut manifests(dir.path()));
    assert!(
        r.stderr
            .contains("note: Other.example.com: CRD from the compiler"),
        "{}",
        r.stderr
    );
    assert!(
        dir.path()
            .join("config/crd/bases/example.com_others.yaml")
            .is_file()
    );
    // While rsbuilder reads the configured-out module, the kind fails with its own error.
    if r.code != 0 {
        assert!(
            r.stderr.contains(
                "the probe cannot compile `gone::Tuned` (the other kinds were compiled without it)"
            ),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("error[E0433]"), "{}", r.stderr);
    }
}

/// A kind that embeds a Kubernetes type, whose description k8s-openapi writes as of the
/// Kubernetes version feature the crate selects.
const SIZED: &str = r#"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Sized")]
pub struct SizedSpec {
    pub resources: k8s_openapi::api::core::v1::ResourceRequirements,
}
"#;

#[test]
fn a_crate_on_another_kubernetes_version_gets_its_own_crd_from_the_compiler() {
    let dir = krate(Some(SIZED), &[]);
    // What static evaluation gives (k8s-openapi as of v1_37), before the crate moves to v1_33.
    let as_of_v1_37 = run(manifests(dir.path()).args(["--evaluate", "static"]));
    assert_eq!(as_of_v1_37.code, 0, "{}", as_of_v1_37.stderr);
    let static_crd = yaml(dir.path(), "example.com_sizeds.yaml");
    std::fs::remove_dir_all(dir.path().join("config")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        CARGO_TOML.replace("\"v1_37\"", "\"v1_33\""),
    )
    .unwrap();
    let truth = crd_of(dir.path(), "Sized");
    assert_ne!(
        truth, static_crd,
        "k8s-openapi's v1_33 and v1_37 ResourceRequirements are expected to differ"
    );

    let refused = run(manifests(dir.path()).args(["--evaluate", "static"]));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "Cargo.toml:11:1: static evaluation does not apply to this crate: k8s-openapi selects Kubernetes `v1_33`"
        ),
        "{}",
        refused.stderr
    );
    assert!(!dir.path().join("config/crd").exists());

    let auto = run(&mut manifests(dir.path()));
    assert_eq!(auto.code, 0, "{}", auto.stderr);
    assert!(
        auto.stderr
            .contains("Cargo.toml:11: k8s-openapi selects Kubernetes `v1_33`")
            && auto
                .stderr
                .contains("so every kind comes from the compiler"),
        "{}",
        auto.stderr
    );
    assert!(
        auto.stderr.contains(
            "note: Sized.example.com: CRD from the compiler, because Cargo.toml:11: the crate's versions differ"
        ),
        "{}",
        auto.stderr
    );
    assert_eq!(yaml(dir.path(), "example.com_sizeds.yaml"), truth);

    std::fs::remove_dir_all(dir.path().join("config")).unwrap();
    let verify = run(manifests(dir.path()).arg("--verify"));
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    assert!(
        verify
            .stderr
            .contains("note: Sized.example.com: not verified, CRD from the compiler"),
        "{}",
        verify.stderr
    );
    assert!(
        !verify.stderr.contains("rsbuilder bug"),
        "{}",
        verify.stderr
    );
    assert_eq!(yaml(dir.path(), "example.com_sizeds.yaml"), truth);
}
