//! `rsbuilder manifests` where it used to refuse code it can read: `cfg` decided with the
//! target's configuration, hand-written `JsonSchema` impls, `doc`/`description` expressions,
//! and the messages that name the fix.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn rsbuilder() -> Command {
    let mut c = Command::cargo_bin("rsbuilder").unwrap();
    c.env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET");
    c
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn yaml_value(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

const HEAD: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n";

/// A crate `op` in `dir` whose `src/lib.rs` is [`HEAD`] and `body`, locked with rsbuilder's own
/// Cargo.lock (the kube-derive, schemars and k8s-openapi static evaluation reproduces).
fn krate(dir: &Path, body: &str) {
    write(
        dir,
        "Cargo.toml",
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_37\"] }\n",
    );
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"));
    write(dir, "Cargo.lock", &lock.unwrap());
    write(dir, "src/lib.rs", &format!("{HEAD}{body}"));
}

/// The `spec` schema of kind `Thing` (group t.example.com) written under `dir/config`.
fn thing_spec(dir: &Path) -> serde_json::Value {
    let crd = yaml_value(&dir.join("config/crd/bases/t.example.com_things.yaml"));
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

const THING: &str = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

// ---- cfg against the target's configuration ----

/// shulker's `default_port`: `cfg(not(tarpaulin_include))` of a name nothing sets is true.
#[test]
fn a_cfg_name_nothing_sets_is_false_so_its_not_is_true() {
    let tmp = tempfile::tempdir().unwrap();
    krate(
        tmp.path(),
        &format!(
            "{THING}pub struct ThingSpec {{\n    #[serde(default = \"default_port\")]\n    pub port: i32,\n}}\n\n\
             #[cfg(not(tarpaulin_include))]\nfn default_port() -> i32 {{\n    25565\n}}\n"
        ),
    );
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(tmp.path())
        .assert()
        .success();
    assert_eq!(
        thing_spec(tmp.path())["properties"]["port"]["default"],
        25565
    );
}

/// Target names follow rustc; `--cfg` names come from RUSTFLAGS or CARGO_ENCODED_RUSTFLAGS;
/// `debug_assertions` from the dev profile.
#[test]
fn target_profile_and_rustflags_cfgs_are_decided_as_rustc_sets_them() {
    let tmp = tempfile::tempdir().unwrap();
    krate(
        tmp.path(),
        &format!(
            "{THING}pub struct ThingSpec {{\n\
             \x20   #[cfg(unix)]\n    pub on_unix: bool,\n\
             \x20   #[cfg(windows)]\n    pub on_windows: bool,\n\
             \x20   #[cfg(my_flag)]\n    pub flagged: bool,\n\
             \x20   #[cfg(debug_assertions)]\n    pub debug: bool,\n\
             }}\n"
        ),
    );
    let fields = |envs: &[(&str, &str)]| -> Vec<String> {
        let mut cmd = rsbuilder();
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.args(["manifests", "--evaluate", "static", "--dir"])
            .arg(tmp.path())
            .assert()
            .success();
        let spec = thing_spec(tmp.path());
        let mut names: Vec<String> = spec["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    let host = if cfg!(unix) { "on_unix" } else { "on_windows" };
    assert_eq!(fields(&[]), ["debug", host]);
    assert_eq!(
        fields(&[("RUSTFLAGS", "--cfg my_flag")]),
        ["debug", "flagged", host]
    );
    assert_eq!(
        fields(&[("CARGO_ENCODED_RUSTFLAGS", "--cfg\x1fmy_flag")]),
        ["debug", "flagged", host]
    );
    let toml = std::fs::read_to_string(tmp.path().join("Cargo.toml")).unwrap();
    write(
        tmp.path(),
        "Cargo.toml",
        &format!("{toml}\n[profile.dev]\ndebug-assertions = false\n"),
    );
    assert_eq!(fields(&[]), [host]);
}

// ---- hand-written JsonSchema impls ----

/// restate's `RestateAdminEndpoint`, linkerd's `K8sDuration`: a type whose `JsonSchema` is
/// written by hand is code to compile; `static` refuses it saying how to get there.
#[test]
fn a_hand_written_json_schema_impl_is_refused_in_static_with_the_way_to_auto() {
    let tmp = tempfile::tempdir().unwrap();
    krate(
        tmp.path(),
        &format!(
            "{THING}pub struct ThingSpec {{\n    pub timeout: GoDuration,\n}}\n\n\
             #[derive(Serialize, Deserialize, Clone, Debug)]\npub struct GoDuration(String);\n\n\
             impl JsonSchema for GoDuration {{\n\
             \x20   fn schema_name() -> std::borrow::Cow<'static, str> {{\n        \"GoDuration\".into()\n    }}\n\
             \x20   fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {{\n        schemars::json_schema!({{\"type\": \"string\"}})\n    }}\n\
             }}\n"
        ),
    );
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/lib.rs:12:12: hand-written schema: `GoDuration` implements `JsonSchema` by hand (",
        ))
        .stderr(predicate::str::contains(
            "src/lib.rs:14), and rsbuilder does not run that code",
        ))
        .stderr(predicate::str::contains("help: run with `--evaluate auto`"))
        .stderr(predicate::str::contains("does not derive").not());
}

// ---- doc expressions ----

/// `include_str!` of a file in the crate is read; one outside the crate is refused with the
/// reason.
#[test]
fn include_str_docs_are_read_inside_the_crate_only() {
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op");
    krate(
        &op,
        &format!(
            "{THING}pub struct ThingSpec {{\n    #[doc = include_str!(\"../docs/port.md\")]\n    pub port: i32,\n}}\n"
        ),
    );
    write(&op, "docs/port.md", "The port\nto listen on.");
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(&op)
        .assert()
        .success();
    assert_eq!(
        thing_spec(&op)["properties"]["port"]["description"],
        "The port\nto listen on."
    );
    write(tmp.path(), "outside.md", "secret");
    let lib = std::fs::read_to_string(op.join("src/lib.rs")).unwrap();
    write(
        &op,
        "src/lib.rs",
        &lib.replace("../docs/port.md", "../../outside.md"),
    );
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(&op)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("src/lib.rs:8:"))
        .stderr(predicate::str::contains(
            "`include_str!` of a file outside the crate",
        ));
}

/// A crate `op` with one kind, and beside it (outside the crate) `outside.env`, a file
/// shaped like `/proc/self/environ` holding `SECRET_NOT_TO_LEAK`.
fn crate_beside_a_secret() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op");
    krate(
        &op,
        &format!("{THING}pub struct ThingSpec {{\n    pub a: i32,\n}}\n"),
    );
    write(
        tmp.path(),
        "outside.env",
        "PATH=/usr/bin\0GITHUB_TOKEN=SECRET_NOT_TO_LEAK\0HOME=/root\n",
    );
    (tmp, op)
}

/// A `Cargo.toml` that is not a manifest (a link to `/proc/self/environ`, or to any file
/// outside) is reported by line and column and the parser's message, never by quoting the
/// line: before, `manifests --check --evaluate static`, the mode for untrusted checkouts,
/// printed the whole environment, tokens included, in the parse error's code frame.
#[cfg(unix)]
#[test]
fn a_cargo_toml_that_is_not_a_manifest_is_never_quoted() {
    let (tmp, op) = crate_beside_a_secret();
    std::fs::remove_file(op.join("Cargo.toml")).unwrap();
    for target in [
        tmp.path().join("outside.env"),
        PathBuf::from("/proc/self/environ"),
    ] {
        let _ = std::fs::remove_file(op.join("Cargo.toml"));
        std::os::unix::fs::symlink(&target, op.join("Cargo.toml")).unwrap();
        for evaluate in ["static", "auto"] {
            let out = rsbuilder()
                .env("RSB_SECRET_FOR_TEST", "SECRET_NOT_TO_LEAK")
                .args(["manifests", "--check", "--evaluate", evaluate, "--dir"])
                .arg(&op)
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let what = format!("{} {evaluate}: {said}", target.display());
            assert_eq!(out.status.code(), Some(1), "{what}");
            assert!(!said.contains("SECRET_NOT_TO_LEAK"), "{what}");
            assert!(
                said.contains("Cargo.toml: not valid TOML: line 1, column "),
                "{what}"
            );
        }
    }
}

/// A `Cargo.lock` linked out of the project (to the environment, say) is not handed to cargo:
/// `--evaluate auto` compiled the crate after the versions check failed to read it, and
/// cargo's parse error printed the file. Every kind is refused at the lock, naming the link.
#[cfg(unix)]
#[test]
fn a_cargo_lock_that_cannot_be_read_is_not_compiled_against() {
    let (tmp, op) = crate_beside_a_secret();
    std::fs::remove_file(op.join("Cargo.lock")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside.env"), op.join("Cargo.lock")).unwrap();
    for check in [false, true] {
        let mut cmd = rsbuilder();
        cmd.args(["manifests", "--evaluate", "auto"]);
        if check {
            cmd.arg("--check");
        }
        let out = cmd.arg("--dir").arg(&op).output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(!said.contains("SECRET_NOT_TO_LEAK"), "{said}");
        assert!(
            said.contains("Cargo.lock is a symbolic link that leads outside the project; rsbuilder neither evaluates nor compiles the crate"),
            "{said}"
        );
        assert!(!op.join("target").exists(), "cargo ran: {said}");
    }
}

/// A link inside the crate whose target is outside it (a file next to the crate, or
/// `/proc/self/environ`) is never read: not by `manifests`, not into the diff `--check` prints,
/// also under `--evaluate auto` (no compile fallback: rustc would follow the link). The error
/// names the source line and the link. A link that stays inside the crate is read.
#[cfg(unix)]
#[test]
fn include_str_through_a_link_out_of_the_crate_is_never_read() {
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op");
    krate(
        &op,
        &format!(
            "{THING}pub struct ThingSpec {{\n    #[doc = include_str!(\"notes.md\")]\n    pub port: i32,\n}}\n"
        ),
    );
    write(&op, "docs/port.md", "Inside the crate.");
    std::os::unix::fs::symlink("../docs/port.md", op.join("src/notes.md")).unwrap();
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(&op)
        .assert()
        .success();
    assert_eq!(
        thing_spec(&op)["properties"]["port"]["description"],
        "Inside the crate."
    );
    write(tmp.path(), "outside.md", "OUTSIDE_TEXT_NOT_TO_LEAK");
    let crd = op.join("config/crd/bases/t.example.com_things.yaml");
    let before = std::fs::read_to_string(&crd).unwrap();
    for target in [
        tmp.path().join("outside.md"),
        PathBuf::from("/proc/self/environ"),
    ] {
        std::fs::remove_file(op.join("src/notes.md")).unwrap();
        std::os::unix::fs::symlink(&target, op.join("src/notes.md")).unwrap();
        for (evaluate, check) in [
            ("static", false),
            ("static", true),
            ("auto", true),
            ("auto", false),
        ] {
            let mut cmd = rsbuilder();
            cmd.env("RSB_SECRET_FOR_TEST", "OUTSIDE_TEXT_NOT_TO_LEAK")
                .args(["manifests", "--evaluate", evaluate]);
            if check {
                cmd.arg("--check");
            }
            let out = cmd.arg("--dir").arg(&op).output().unwrap();
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            let what = format!(
                "{} {evaluate} check={check}:\n{stdout}\n{stderr}",
                target.display()
            );
            assert_eq!(out.status.code(), Some(1), "{what}");
            assert!(
                !stdout.contains("OUTSIDE_TEXT") && !stderr.contains("OUTSIDE_TEXT"),
                "{what}"
            );
            assert!(stderr.contains("src/lib.rs:8:"), "{what}");
            assert!(stderr.contains("src/notes.md"), "{what}");
            assert!(stderr.contains("symbolic link"), "{what}");
            assert!(stderr.contains("outside the crate"), "{what}");
            assert_eq!(std::fs::read_to_string(&crd).unwrap(), before, "{what}");
        }
    }
}

/// `--evaluate static` runs nothing the checkout names: not the toolchain of its
/// rust-toolchain.toml (`path = ...`), not the `build.rustc` or `rustc-wrapper` of its
/// `.cargo/config.toml`, not its build script; even for a kind that needs the compiler (it is
/// refused instead), and with `--check`.
#[cfg(unix)]
#[test]
fn evaluate_static_runs_no_program_the_checkout_names() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op");
    krate(
        &op,
        &format!(
            "{THING}pub struct ThingSpec {{\n    #[schemars(schema_with = \"my_schema\")]\n    pub port: i32,\n}}\n\npub fn my_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {{\n    if std::env::var(\"X\").is_ok() {{ g.subschema_for::<String>() }} else {{ g.subschema_for::<i64>() }}\n}}\n"
        ),
    );
    let ran = tmp.path().join("ran.log");
    let evil = op.join("evil");
    for b in ["bin/rustc", "bin/cargo", "wrapper"] {
        let p = write(
            &evil,
            b,
            &format!("#!/bin/sh\necho \"$0 $*\" >> {}\nexit 1\n", ran.display()),
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    write(
        &op,
        "rust-toolchain.toml",
        &format!("[toolchain]\npath = \"{}\"\n", evil.display()),
    );
    write(
        &op,
        ".cargo/config.toml",
        &format!(
            "[build]\nrustc = \"{0}/bin/rustc\"\nrustc-wrapper = \"{0}/wrapper\"\n",
            evil.display()
        ),
    );
    write(
        &op,
        "build.rs",
        &format!(
            "fn main() {{ std::fs::write(\"{}\", \"build script\").unwrap(); }}\n",
            ran.display()
        ),
    );
    for check in [false, true] {
        let mut cmd = rsbuilder();
        cmd.args(["manifests", "--evaluate", "static"]);
        if check {
            cmd.arg("--check");
        }
        let out = cmd.arg("--dir").arg(&op).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("schema_with"), "{stderr}");
        assert!(!stderr.contains("compiling the crate"), "{stderr}");
        assert!(
            !ran.exists(),
            "ran: {}",
            std::fs::read_to_string(&ran).unwrap()
        );
    }
    // `auto` (the default) falls back to compiling, which would run them; it says so first,
    // naming the kind and the line that needs the compiler (this crate has no kube dependency,
    // so the probe stops before cargo runs).
    let out = rsbuilder()
        .args(["manifests", "--check", "--dir"])
        .arg(&op)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: compiling the crate to evaluate Thing.t.example.com (")
            && stderr.contains("src/lib.rs:13): `schema_with = \"my_schema\"`"),
        "{stderr}"
    );
    assert!(!ran.exists(), "{stderr}");
}

// ---- merge_crds ----

/// Two `merge_crds` calls storing different versions: the error names both calls.
#[test]
fn merge_crds_calls_that_disagree_are_both_named() {
    let tmp = tempfile::tempdir().unwrap();
    let version = |v: &str| {
        format!(
            "pub mod {v} {{\n    use super::*;\n    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n    #[kube(group = \"t.example.com\", version = \"{v}\", kind = \"Thing\")]\n    pub struct ThingSpec {{\n        pub a: i32,\n    }}\n}}\n"
        )
    };
    krate(tmp.path(), &format!("{}{}", version("v1"), version("v2")));
    let bin = |v: &str| {
        format!(
            "use kube::CustomResourceExt;\n\nfn main() {{\n    let crd = kube::core::crd::merge_crds(vec![op::v1::Thing::crd(), op::v2::Thing::crd()], \"{v}\").unwrap();\n    println!(\"{{crd:?}}\");\n}}\n"
        )
    };
    write(tmp.path(), "src/bin/a.rs", &bin("v1"));
    write(tmp.path(), "src/bin/b.rs", &bin("v2"));
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("src/bin/b.rs:4:"))
        .stderr(predicate::str::contains("src/bin/a.rs:4"))
        .stderr(predicate::str::contains("as v2 here but as v1 at"));
}

// ---- --output-dir outside the project ----

/// `../x` and the absolute path of a directory outside the project are treated the same.
#[test]
fn an_output_dir_outside_the_project_is_allowed_relative_or_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op");
    krate(
        &op,
        &format!("{THING}pub struct ThingSpec {{\n    pub a: i32,\n}}\n"),
    );
    let crd = "crd/bases/t.example.com_things.yaml";
    rsbuilder()
        .args(["manifests", "--dir"])
        .arg(&op)
        .args(["--output-dir", "../relative"])
        .assert()
        .success();
    assert!(tmp.path().join("relative").join(crd).is_file());
    let absolute = tmp.path().join("absolute");
    rsbuilder()
        .args(["manifests", "--dir"])
        .arg(&op)
        .arg("--output-dir")
        .arg(&absolute)
        .assert()
        .success();
    assert!(absolute.join(crd).is_file());
    assert_eq!(
        std::fs::read_to_string(absolute.join(crd)).unwrap(),
        std::fs::read_to_string(tmp.path().join("relative").join(crd)).unwrap()
    );
    assert!(!op.join("config").exists());
}

// ---- two flattened enums ----

/// Two `#[serde(flatten)]` enums with data: one error naming both fields, not one per
/// variant property.
#[test]
fn two_flattened_enums_are_one_error_naming_both_fields() {
    let tmp = tempfile::tempdir().unwrap();
    krate(
        tmp.path(),
        &format!(
            "{THING}pub struct ThingSpec {{\n\
             \x20   #[serde(flatten)]\n    pub source: Source,\n\
             \x20   #[serde(flatten)]\n    pub target: Target,\n\
             }}\n\n\
             #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             pub enum Source {{\n    Git {{ url: String }},\n    Oci {{ image: String }},\n}}\n\n\
             #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             pub enum Target {{\n    Cluster {{ name: String }},\n    Namespace {{ name: String }},\n}}\n"
        ),
    );
    let out = rsbuilder()
        .args(["manifests", "--evaluate", "static", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("src/lib.rs:11:9: the `#[serde(flatten)]` fields `source` (")
            && stderr.contains("src/lib.rs:9) and `target` (")
            && stderr.contains("make `target` a named field without `#[serde(flatten)]`"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("error: ").count(),
        2,
        "one error and the summary: {stderr}"
    );
}

/// Source files are bounded before they are read: a (sparse) 1 GiB file is refused by its
/// size alone, and the bytes read over all files stop at 128 MiB, the file that would go over
/// named. Nothing is written.
#[test]
fn source_sizes_are_checked_before_reading_and_bounded_in_total() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    krate(
        dir,
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub a: String }\n",
    );
    let sparse = |name: &str, len: u64| {
        let f = std::fs::File::create(dir.join("src").join(name)).unwrap();
        f.set_len(len).unwrap();
    };
    sparse("big.rs", 1 << 30);
    // Nine files of 15 MiB: each within the per-file bound, 135 MiB together.
    for i in 0..9 {
        sparse(&format!("z{i}.rs"), 15 << 20);
    }
    let out = rsbuilder()
        .current_dir(dir)
        .args(["manifests", "--evaluate", "static"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("src/big.rs:1:1: this source file is 1073741824 bytes; rsbuilder reads source files of at most 16777216 bytes (16 MiB)"),
        "{said}"
    );
    // lib.rs and z0..z7 (8 × 15 MiB) fit; z8 would go over.
    assert!(
        said.contains("src/z8.rs:1:1: reading this source file (15728640 bytes) would take the source read by this run above 134217728 bytes (128 MiB)"),
        "{said}"
    );
    assert!(!dir.join("config").exists());
}
