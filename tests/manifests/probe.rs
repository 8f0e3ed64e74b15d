//! `rsbuilder manifests` with the compile fallback (`--evaluate`), `--verify` and the probe
//! cache, on small crates and workspaces written at test time. They build with cargo against
//! the same dependencies (and `Cargo.lock`) as the conformance fixture crate, in the shared
//! `RSBUILDER_E2E_TARGET_DIR` (default `target/e2e`), so the dependencies compile once; the
//! probe builds in the crate's target directory, so that one too.

use crate::support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use support::{cargo, fixture_lock, shared_build_env, target_dir};

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
    // A version of its own: cargo names a package's build outputs by name, version and
    // features (not by path), and the crates of parallel tests share one target directory.
    let n = dir
        .path()
        .to_string_lossy()
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
        % 1_000_000_000;
    std::fs::write(
        dir.path().join("Cargo.toml"),
        CARGO_TOML.replace("version = \"0.1.0\"", &format!("version = \"0.1.{n}\"")),
    )
    .unwrap();
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

/// The probe's directory of the crate in `dir`: the one under `<target>/rsbuilder-probe/`
/// whose `manifest-path` names the crate's Cargo.toml.
fn probe_dir(dir: &Path) -> Option<PathBuf> {
    let manifest = std::fs::canonicalize(dir.join("Cargo.toml")).unwrap();
    std::fs::read_dir(target_dir().join("rsbuilder-probe"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            std::fs::read_to_string(p.join("manifest-path"))
                .is_ok_and(|m| Path::new(&m) == manifest)
        })
}

/// A `cargo` that answers `cargo metadata` and fails every other command: a run that uses it
/// and succeeds built nothing.
#[cfg(unix)]
fn metadata_only_cargo() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let script = dir.path().join("cargo");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = metadata ]; then exec '{real}' \"$@\"; fi\necho \"error: cargo $1 is not allowed here\" >&2\nexit 101\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, script)
}

fn cache_entries(dir: &Path) -> Vec<PathBuf> {
    let Some(probe) = probe_dir(dir) else {
        return Vec::new();
    };
    match std::fs::read_dir(probe.join("cache")) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(unix)]
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

    // Nothing changed: the cache answers, and nothing is built (a cargo that fails to build
    // would show).
    let (_keep, no_build) = metadata_only_cargo();
    let second = run(manifests(dir.path()).env("CARGO", &no_build));
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
    let third = run(manifests(dir.path()).env("CARGO", &no_build));
    assert_eq!(third.code, 1, "{}", third.stderr);
    assert!(
        third
            .stderr
            .contains("compiling the probe against probe-test-op failed"),
        "{}",
        third.stderr
    );
    assert!(
        third
            .stderr
            .contains("error: cargo build is not allowed here"),
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

/// A workspace of two members: `types` declares the kind but turns on neither a Kubernetes
/// version nor k8s-openapi's `schemars` (which its `ResourceRequirements` field needs); `app`
/// depends on it and turns `schemars` on, as the workspace's build then does for both. The
/// version comes from `K8S_OPENAPI_ENABLED_VERSION`, as k8s-openapi's build script reads it.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("probe-ws-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let files: [(&str, String); 6] = [
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"types\", \"app\"]\nresolver = \"2\"\n".into(),
        ),
        ("Cargo.lock", fixture_lock("ws-app")),
        (
            "types/Cargo.toml",
            r#"[package]
name = "ws-types"
version = "0.1.0"
edition = "2024"
publish = false

[features]
extra = []
more = []

[dependencies]
kube = { version = "5", default-features = false, features = ["derive"] }
k8s-openapi = "0.29"
schemars = "1"
serde = { version = "1", features = ["derive", "rc"] }
serde_json = "1"
"#
            .into(),
        ),
        (
            "types/src/lib.rs",
            format!(
                "{HEADER}{}",
                r#"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Sized")]
pub struct SizedSpec {
    #[schemars(schema_with = "levels")]
    pub level: String,
    pub resources: Option<k8s_openapi::api::core::v1::ResourceRequirements>,
    #[cfg(feature = "extra")]
    pub extra: Option<String>,
    #[cfg(feature = "more")]
    pub more: Option<String>,
}

fn levels(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<String> = (1..=2).map(|i| format!("size-{i}")).collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}
"#
            ),
        ),
        (
            "app/Cargo.toml",
            r#"[package]
name = "ws-app"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
ws-types = { path = "../types" }
kube = { version = "5", default-features = false, features = ["derive"] }
k8s-openapi = { version = "0.29", features = ["schemars"] }
serde_json = "1"
"#
            .into(),
        ),
        (
            "app/src/main.rs",
            "use kube::CustomResourceExt;\nfn main() { print!(\"{}\", serde_json::to_string(&ws_types::Sized::crd()).unwrap()); }\n".into(),
        ),
    ];
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// `crd()` of `ws_types::Sized` as the workspace's `app` prints it, with cargo `flags`.
fn workspace_crd(dir: &Path, flags: &[&str]) -> serde_json::Value {
    let out = cargo()
        .args(["run", "--quiet", "-p", "ws-app", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(flags)
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn spec_properties(crd: &serde_json::Value) -> Vec<String> {
    let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let mut keys: Vec<String> = props.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn a_workspace_member_gets_the_features_the_workspace_turns_on_and_cargos_feature_syntax() {
    let ws = workspace();
    let types = ws.path().join("types");
    let truth = workspace_crd(ws.path(), &[]);
    assert_eq!(spec_properties(&truth), ["level", "resources"]);
    let mut plain = manifests(&types);
    let r = run(plain.env("K8S_OPENAPI_ENABLED_VERSION", "1.37"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("note: Sized.example.com: CRD from the compiler, because"),
        "{}",
        r.stderr
    );
    assert_eq!(yaml(&types, "example.com_sizeds.yaml"), truth);
    // The probe's files are in the workspace's target directory, none in the sources.
    assert!(probe_dir(&types).is_some_and(|p| p.join("main.rs").is_file()));
    assert!(!types.join("target").exists() && !ws.path().join("target").exists());

    // A comma list in one --features value, as cargo takes it.
    let truth = workspace_crd(ws.path(), &["--features", "ws-types/extra,ws-types/more"]);
    assert_eq!(
        spec_properties(&truth),
        ["extra", "level", "more", "resources"]
    );
    let r = run(manifests(&types)
        .args(["--features", "extra,more"])
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(yaml(&types, "example.com_sizeds.yaml"), truth);

    // The crate alone (--no-default-features selects only it): `dep/feature` turns on
    // k8s-openapi's schemars, which the crate itself does not.
    let r = run(manifests(&types)
        .args([
            "--no-default-features",
            "--features",
            "k8s-openapi/schemars",
            "--features",
            "extra",
        ])
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let alone = yaml(&types, "example.com_sizeds.yaml");
    assert_eq!(spec_properties(&alone), ["extra", "level", "resources"]);
    assert_eq!(
        alone["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["resources"],
        truth["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["resources"]
    );
}

/// A `rustc` for the probe (`RSBUILDER_PROBE_RUSTC`) that says it started (creates
/// `$PROBE_STARTED`) and waits for `$PROBE_GO` before it compiles, so that a test can act
/// while the probe compiles.
#[cfg(unix)]
fn waiting_rustc() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rustc");
    std::fs::write(
        &script,
        "#!/bin/sh\ntouch \"$PROBE_STARTED\"\nwhile [ ! -e \"$PROBE_GO\" ]; do sleep 0.1; done\nexec rustc \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, script)
}

/// Fails when `manifests` keeps the lock while the probe compiles (the second run exits 75)
/// and when it skips the source comparison (the first run exits 0 and writes).
#[cfg(unix)]
#[test]
fn the_project_lock_is_released_while_the_probe_compiles_and_changed_sources_stop_the_write() {
    let dir = krate(Some(&format!("{PLAIN}{TUNED}")), &[]);
    let (hook, rustc) = waiting_rustc();
    let started = hook.path().join("started");
    let go = hook.path().join("go");
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_rsbuilder"));
    first.current_dir(dir.path()).arg("manifests");
    shared_build_env(&mut first);
    let mut child = first
        .env("RSBUILDER_PROBE_RUSTC", &rustc)
        .env("PROBE_STARTED", &started)
        .env("PROBE_GO", &go)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Waits for the probe's compiler to start (cargo builds the crate's library first).
    while !started.exists() {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the run ended before its probe compiled: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Another command takes the lock at once (a held lock would give exit 75).
    let second = run(manifests(dir.path())
        .args(["--evaluate", "static"])
        .env("RSBUILDER_LOCK_TIMEOUT", "0"));
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert!(
        second.stderr.contains("not generated: Tuned.example.com"),
        "{}",
        second.stderr
    );
    // The sources change while the probe compiles: the first run writes nothing.
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replace("1..=3", "1..=5")).unwrap();
    std::fs::remove_dir_all(dir.path().join("config")).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: the sources changed while the probe compiled (the project lock is released meanwhile)"
        ),
        "{stderr}"
    );
    assert!(!dir.path().join("config").exists(), "nothing was written");
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

/// `--check` changes no file of the user's: the probe builds `--locked`, so a Cargo.lock that
/// no longer fits Cargo.toml (this test's lock names packages the crate does not use) is
/// cargo's error, and the lock is left as it was. Without `--check` cargo updates it, as
/// `cargo build` does.
#[test]
fn check_builds_the_probe_locked_and_leaves_the_lock_alone() {
    let dir = krate(Some(TUNED), &[]);
    let lock = dir.path().join("Cargo.lock");
    let before = std::fs::read_to_string(&lock).unwrap();
    let check = run(manifests(dir.path()).arg("--check"));
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stderr.contains("--locked"),
        "cargo's refusal to update the lock is shown: {}",
        check.stderr
    );
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), before);
    let write = run(&mut manifests(dir.path()));
    assert_eq!(write.code, 0, "{}", write.stderr);
    assert_ne!(std::fs::read_to_string(&lock).unwrap(), before);
}

/// linkerd's `K8sDuration` shape: a newtype with a hand-written `impl JsonSchema` (after the
/// three `use` lines [`krate`] writes).
const HAND_WRITTEN: &str = r#"
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

#[test]
fn a_hand_written_json_schema_impl_is_compiled_with_its_reason() {
    let dir = krate(Some(HAND_WRITTEN), &[]);
    let truth = crd_of(dir.path(), "Thing");
    let ran = run(&mut manifests(dir.path()));
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stderr.contains(
            "note: Thing.t.example.com: CRD from the compiler, hand-written schema: compiled, because src/lib.rs:12: `GoDuration` implements `JsonSchema` by hand"
        ),
        "{}",
        ran.stderr
    );
    let got = yaml(dir.path(), "t.example.com_things.yaml");
    assert_eq!(
        got["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["timeout"]["pattern"],
        "^[0-9]+(ms|s|m|h)$"
    );
    assert_eq!(got, truth);
}
