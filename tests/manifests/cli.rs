//! `rsbuilder manifests` end to end: case B (the Database example's API), the manifests rows of
//! case D (bad input gives file:line:column, the reason and the fix, writes nothing), and
//! `--check`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cases")
        .join(name)
}

fn rsbuilder() -> Command {
    Command::cargo_bin("rsbuilder").unwrap()
}

fn yaml_value(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// Numbers compared by value (YAML `10.0` and `10` are the same number for the API server).
fn normalise(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.into_iter().map(normalise).collect())
        }
        serde_json::Value::Object(o) => {
            serde_json::Value::Object(o.into_iter().map(|(k, v)| (k, normalise(v))).collect())
        }
        other => other,
    }
}

/// rsbuilder's own Cargo.lock: a crate locked with it builds its `crd()` with the kube-derive,
/// kube-core, schemars and k8s-openapi that static evaluation reproduces.
fn repository_lock() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn case_b_database_crd_equals_kube_derive_output() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let out = tmp.path().join("out");
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "crd/bases/example.com_databases.yaml",
        ));
    let got = yaml_value(&out.join("crd/bases/example.com_databases.yaml"));
    let want = yaml_value(&fixture("database/expected_crd.yaml"));
    assert_eq!(normalise(got.clone()), normalise(want));
    // What kube-derive does here, spelled out.
    let schema = &got["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(schema["properties"]["status"]["nullable"], true);
    assert_eq!(
        schema["properties"]["spec"]["required"],
        serde_json::json!(["engine", "labels", "version"])
    );
    assert!(
        schema["properties"]["spec"]["properties"]["size"]
            .get("type")
            .is_none()
    );
    assert!(got["spec"]["names"].get("listKind").is_none());
}

#[test]
fn output_is_deterministic_and_rerun_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let out = tmp.path().join("out");
    let run = || {
        rsbuilder()
            .args(["manifests", "--paths"])
            .arg(&types)
            .arg("--output-dir")
            .arg(&out)
            .assert()
            .success()
    };
    run();
    let first = std::fs::read(out.join("crd/bases/example.com_databases.yaml")).unwrap();
    run().stdout(predicate::str::is_empty());
    let second = std::fs::read(out.join("crd/bases/example.com_databases.yaml")).unwrap();
    assert_eq!(first, second);
}

/// A CRD larger than etcd takes in one request (1.5 MiB) is refused at its type, and not
/// written: the API server would refuse it. Before, 40 fields documented with a 5 MB
/// `include_str!` gave a 200 MB CRD and exit 0 (such a file is now refused at the macro, see
/// below; here two fields share a 1.25 MB one).
#[test]
fn a_crd_larger_than_etcd_takes_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("big.md"), "word ".repeat(250_000)).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Big\")]
pub struct BigSpec {
    #[doc = include_str!(\"big.md\")]
    pub a: i32,
    #[doc = include_str!(\"big.md\")]
    pub b: i32,
}
",
    )
    .unwrap();
    let out = tmp.path().join("out");
    rsbuilder()
        .args(["manifests", "--evaluate", "static", "--paths"])
        .arg(&src)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/lib.rs:7:1: the CRD of Big.example.com is 2984 KiB of YAML; etcd stores at most 1536 KiB in one request",
        ));
    assert!(!out.join("crd/bases/example.com_bigs.yaml").exists());
}

/// A spec whose types each hold two fields of the next type: `crd()` inlines every use, so
/// the schema of `depth` levels holds 2^depth copies of the last type.
fn doubling_types(depth: usize) -> String {
    let derive = "#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]";
    let mut text = "use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Deep\")]
pub struct DeepSpec { pub deep: S0 }
"
    .to_string();
    for i in 0..depth {
        text.push_str(&format!(
            "{derive} pub struct S{i} {{ pub a: S{n}, pub b: S{n} }}\n",
            n = i + 1
        ));
    }
    text.push_str(&format!(
        "{derive} pub struct S{depth} {{ pub y: String }}\n"
    ));
    text
}

/// A schema that doubles at every level is refused before it is built, at the spec type,
/// naming the size, the type copied and how many times, and nothing is written. Before, 20
/// levels took 14 GB of memory and 30 never finished. Schemas near the limit are still
/// built and measured: 10 levels (790 KiB) are written, 11 (1684 KiB) refused by the exact
/// check of the YAML.
#[test]
fn a_schema_inlined_exponentially_is_refused_before_it_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |depth: usize| {
        let src = tmp.path().join(format!("d{depth}/src"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("lib.rs"), doubling_types(depth)).unwrap();
        let out = tmp.path().join(format!("d{depth}/out"));
        let assert = rsbuilder()
            .args(["manifests", "--evaluate", "static", "--paths"])
            .arg(&src)
            .arg("--output-dir")
            .arg(&out)
            .assert();
        let written = out.join("crd/bases/example.com_deeps.yaml");
        (assert, written)
    };
    let (assert, written) = run(30);
    assert
        .code(1)
        .stderr(predicate::str::contains(
            "src/lib.rs:7:12: the CRD of Deep.example.com would be at least 1 TiB of YAML: crd() inlines a type's schema at every use, and `S30` (",
        ))
        .stderr(predicate::str::contains(
            "d30/src/lib.rs:38) is inlined 1073741824 times; etcd stores at most 1536 KiB in one request",
        ))
        .stderr(predicate::str::contains(
            "help: a type used twice is copied twice into the schema",
        ));
    assert!(!written.exists());

    // Deeper than the deriver goes (64 types): refused the same way.
    let (assert, written) = run(1000);
    assert.code(1).stderr(predicate::str::contains(
        "src/lib.rs:7:12: the CRD of Deep.example.com would be at least ",
    ));
    assert!(!written.exists());

    let (assert, written) = run(10);
    assert.success();
    assert_eq!(std::fs::metadata(&written).unwrap().len(), 809_457);

    let (assert, written) = run(11);
    assert.code(1).stderr(predicate::str::contains(
        "src/lib.rs:7:1: the CRD of Deep.example.com is 1684 KiB of YAML; etcd stores at most 1536 KiB in one request",
    ));
    assert!(!written.exists());
}

/// `include_str!` of a file larger than a CRD holds is refused at the macro, before the file
/// is read (a 200 MB include once took 1 GB of memory on the way to the size refusal), and
/// so is the file that takes the run's includes past 16 MiB together. Each error names the
/// line and the file, and nothing is written.
#[test]
fn include_str_past_what_crds_hold_is_refused_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    // 2 MiB, sparse: were it read, the text would not be UTF-8 either.
    std::fs::File::create(src.join("huge.md"))
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let lib = |fields: &str| {
        format!(
            "use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Big\")]
pub struct BigSpec {{
{fields}}}
"
        )
    };
    std::fs::write(
        src.join("lib.rs"),
        lib("    #[doc = include_str!(\"huge.md\")]\n    pub a: i32,\n"),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let run = || {
        rsbuilder()
            .args(["manifests", "--evaluate", "static", "--paths"])
            .arg(&src)
            .arg("--output-dir")
            .arg(&out)
            .assert()
            .code(1)
    };
    run().stderr(predicate::str::contains(format!(
        "src/lib.rs:8:13: `include_str!(\"huge.md\")` ({}:8): `include_str!` cannot read {}: it is larger than 1536 KiB, more than one CRD holds",
        src.join("lib.rs").display(),
        src.join("huge.md").display()
    )));
    assert!(!out.exists());
    // Twelve different files of 1.4 MiB: eleven fit in 16 MiB, the twelfth does not.
    let mut fields = String::new();
    for i in 0..12 {
        std::fs::write(src.join(format!("part{i}.md")), "x".repeat(1400 << 10)).unwrap();
        fields.push_str(&format!(
            "    #[doc = include_str!(\"part{i}.md\")]\n    pub f{i}: i32,\n"
        ));
    }
    std::fs::write(src.join("lib.rs"), lib(&fields)).unwrap();
    run().stderr(predicate::str::contains(format!(
        "`include_str!` cannot read {}: with it, the files `include_str!` reads in this run pass 16 MiB",
        src.join("part11.md").display()
    )));
    assert!(!out.exists());
    // The budget is the run's, not one kind's: twelve kinds with one file each (derived by
    // several threads) fail the same way. Which kind's file comes twelfth depends on the
    // threads' order; eleven kinds are written, one is refused.
    let mut kinds = String::from(
        "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n",
    );
    for i in 0..12 {
        kinds.push_str(&format!(
            "\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"example.com\", version = \"v1\", kind = \"Big{i}\")]\n\
             pub struct Big{i}Spec {{\n    #[doc = include_str!(\"part{i}.md\")]\n    pub a: i32,\n}}\n"
        ));
    }
    std::fs::write(src.join("lib.rs"), kinds).unwrap();
    let refused = run().get_output().stderr.clone();
    let refused = String::from_utf8_lossy(&refused);
    assert_eq!(
        refused
            .matches("the files `include_str!` reads in this run pass 16 MiB")
            .count(),
        1,
        "{refused}"
    );
    let written = std::fs::read_dir(out.join("crd/bases")).unwrap().count();
    assert_eq!(written, 11, "{refused}");
}

/// `--output-dir` inside a version-control directory is a usage error and nothing is
/// written: relative, absolute, or through a link to it. Before, the absolute form and the
/// link wrote into `.git/hooks`.
#[test]
fn an_output_dir_inside_git_is_refused_however_it_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let hooks = tmp.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::os::unix::fs::symlink(&hooks, tmp.path().join("out-link")).unwrap();
    for out in [
        hooks.clone(),
        PathBuf::from(".git/hooks"),
        tmp.path().join("out-link/x"),
    ] {
        rsbuilder()
            .current_dir(tmp.path())
            .args(["manifests", "--paths"])
            .arg(&types)
            .arg("--output-dir")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "invalid value {} for --output-dir: it is inside a version-control directory",
                out.display()
            )));
        assert_eq!(
            std::fs::read_dir(&hooks).unwrap().count(),
            0,
            "{}",
            out.display()
        );
    }
}

#[test]
fn check_reports_drift_with_a_diff_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let out = tmp.path().join("out");
    // Nothing generated yet: drift, and still nothing on disk.
    rsbuilder()
        .args(["manifests", "--check", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("+kind: CustomResourceDefinition"))
        .stderr(predicate::str::contains("out of date"));
    assert!(!out.exists());
    // Generate, then check is clean.
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    rsbuilder()
        .args(["manifests", "--check", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    // Change the types: check shows the changed line and leaves the file alone.
    let text = std::fs::read_to_string(&types)
        .unwrap()
        .replace("max = 10", "max = 20");
    std::fs::write(&types, text).unwrap();
    let file = out.join("crd/bases/example.com_databases.yaml");
    let before = std::fs::read(&file).unwrap();
    rsbuilder()
        .args(["manifests", "--check", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("-                maximum: 10.0")
                .and(predicate::str::contains("+                maximum: 20.0")),
        );
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn default_layout_uses_src_and_config() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("src/api")).unwrap();
    write(&tmp.path().join("src"), "lib.rs", "pub mod api;\n");
    write(
        &tmp.path().join("src/api"),
        "mod.rs",
        "mod db;\npub use db::*;\n",
    );
    std::fs::copy(
        fixture("database/database_types.rs"),
        tmp.path().join("src/api/db.rs"),
    )
    .unwrap();
    rsbuilder()
        .arg("manifests")
        .current_dir(tmp.path())
        .assert()
        .success();
    assert!(
        tmp.path()
            .join("config/crd/bases/example.com_databases.yaml")
            .is_file()
    );
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "bad.rs",
        "use kube::CustomResource;\n\npub struct FooSpec {\n    a: ,\n}\n",
    );
    let out = tmp.path().join("out");
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&f)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{}:4:8: Rust syntax error",
            f.display()
        )));
    assert!(!out.exists());
}

const HEADER: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

#[test]
fn internally_tagged_enum_is_an_error_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"App\", namespaced)]
pub struct AppSpec {{
    pub auth: Auth,
}}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(tag = \"type\")]
pub enum Auth {{
    Basic {{ user: String }},
    Token {{ token: String }},
}}
"
    );
    let f = write(tmp.path(), "app.rs", &src);
    let out = tmp.path().join("out");
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&f)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains(format!("{}:13:10:", f.display()))
                .and(predicate::str::contains("internally tagged"))
                .and(predicate::str::contains("crd() panics"))
                .and(predicate::str::contains(
                    "help: use an externally tagged enum",
                )),
        );
    assert!(!out.exists());
}

#[test]
fn recursive_type_is_an_error_with_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Tree\")]
pub struct TreeSpec {{
    pub root: Node,
}}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Node {{
    pub name: String,
    pub children: Vec<Node>,
}}
"
    );
    let f = write(tmp.path(), "tree.rs", &src);
    let out = tmp.path().join("out");
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&f)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains(format!("{}:14:23:", f.display()))
                .and(predicate::str::contains("recursive type `Node`"))
                .and(predicate::str::contains("structural"))
                .and(predicate::str::contains("serde_json::Value"))
                .and(predicate::str::contains(
                    "x-kubernetes-preserve-unknown-fields",
                )),
        );
    assert!(!out.exists());
}

#[test]
fn several_errors_are_reported_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Multi\")]
pub struct MultiSpec {{
    pub a: Missing,
    pub b: Mixed,
    #[schemars(schema_with = \"my_schema\")]
    pub c: String,
}}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Mixed {{
    Plain,
    WithData(String),
}}
"
    );
    let f = write(tmp.path(), "multi.rs", &src);
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&f)
        .arg("--output-dir")
        .arg(tmp.path().join("out"))
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("cannot resolve type `Missing`")
                .and(predicate::str::contains(
                    "mixes unit variants and variants with data",
                ))
                .and(predicate::str::contains("schema_with = \"my_schema\""))
                .and(predicate::str::contains(
                    "3 errors; not generated: Multi.example.com",
                )),
        );
}

/// A schema the API server rejects is reported at each field that breaks a rule, nested types
/// included, all in one run and in source order.
#[test]
fn every_rejected_field_is_reported_at_its_own_line_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Trio\")]
pub struct TrioSpec {{
    pub name: String,
    pub raw: serde_json::Value,
    #[serde(default = \"zero\")]
    #[schemars(range(min = 1))]
    pub replicas: i32,
    pub inner: Inner,
}}

fn zero() -> i32 {{
    0
}}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Inner {{
    pub pair: (String, i32),
}}
"
    );
    let f = write(tmp.path(), "trio.rs", &src);
    let out = tmp.path().join("out");
    let assert = rsbuilder()
        .args(["manifests", "--evaluate", "static", "--paths"])
        .arg(&f)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let at = |line: usize, what: &str| {
        let needle = format!("{}:{line}:9: ", f.display());
        let i = stderr
            .find(&needle)
            .unwrap_or_else(|| panic!("no error at line {line}:\n{stderr}"));
        let rest = &stderr[i..];
        let first_line = rest.lines().next().unwrap();
        assert!(first_line.contains(what), "{first_line}");
        i
    };
    let raw = at(9, "at .spec.raw");
    let replicas = at(12, "the default 0 does not validate against its own schema");
    let pair = at(22, "at .spec.inner.pair");
    assert!(raw < replicas && replicas < pair, "{stderr}");
    assert!(
        stderr.contains("3 errors; not generated: Trio.example.com"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("error: ").count(), 4, "{stderr}");
    assert!(!out.join("crd").exists());
}

#[test]
fn without_src_the_error_names_the_directory_and_the_flags() {
    let tmp = tempfile::tempdir().unwrap();
    rsbuilder()
        .current_dir(tmp.path())
        .arg("manifests")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "error: no src/ directory under {}\n",
            tmp.path().display()
        )))
        .stderr(predicate::str::contains("--dir").and(predicate::str::contains("--paths")))
        .stderr(predicate::str::contains(":1:1").not());
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    rsbuilder()
        .arg("manifests")
        .arg("--dir")
        .arg(&project)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "no src/ directory under {}",
            project.display()
        )));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    // Run from inside a project: the root above is found, as cargo finds Cargo.toml.
    let src = project.join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(project.join("Cargo.toml"), "[package]\nname = \"p\"\n").unwrap();
    std::fs::write(src.join("lib.rs"), "//! nothing to derive\n").unwrap();
    rsbuilder()
        .current_dir(&src)
        .arg("manifests")
        .assert()
        .success();
    assert!(
        !src.join("config").exists(),
        "manifests ran in src/, not at the root"
    );
}

#[test]
fn a_missing_dir_or_paths_entry_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("nonexistent");
    rsbuilder()
        .arg("manifests")
        .arg("--dir")
        .arg(&gone)
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(format!(
            "error: --dir {}: no such directory",
            gone.display()
        )));
    let types = write(tmp.path(), "types.rs", "pub struct A;\n");
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--paths"])
        .arg(&types)
        .args(["nonexist", "gone.rs"])
        .assert()
        .code(2)
        .stderr(
            "error: --paths nonexist: no such file or directory\n\
             error: --paths gone.rs: no such file or directory\n",
        );
    assert!(!tmp.path().join("config").exists());
}

#[test]
fn crd_files_of_removed_kinds_are_warned_about_and_fail_check() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let out = tmp.path().join("out");
    let bases = out.join("crd/bases");
    std::fs::create_dir_all(&bases).unwrap();
    let old = write(
        &bases,
        "example.com_caches.yaml",
        "kind: CustomResourceDefinition\n",
    );
    // Not CRD files of ours: other extensions and hidden files.
    write(&bases, "notes.txt", "x\n");
    write(&bases, ".editor.yaml", "x\n");
    rsbuilder()
        .args(["manifests", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("example.com_databases.yaml"))
        .stderr(format!(
            "warning: {} was not generated from the sources (a removed or renamed kind?); \
             rsbuilder does not delete it: remove it if its kind is gone\n",
            old.display()
        ));
    assert!(old.is_file(), "the stale file is kept");
    rsbuilder()
        .args(["manifests", "--check", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::starts_with(format!(
            "error: {} is stale: no kind in the sources generates it\n",
            old.display()
        )))
        .stderr(predicate::str::contains("out of date").not());
    std::fs::remove_file(&old).unwrap();
    rsbuilder()
        .args(["manifests", "--check", "--paths"])
        .arg(&types)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

/// A renamed plural: config/crd/kustomization.yaml still lists the old file and not the new
/// one; `manifests` warns about both lines, `--check` fails on them, and the file is not
/// edited. Once the list is fixed, both pass quietly.
#[test]
fn a_crd_kustomization_that_disagrees_with_the_kinds_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let types = tmp.path().join("database_types.rs");
    std::fs::copy(fixture("database/database_types.rs"), &types).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(out.join("crd")).unwrap();
    let stale_list = "resources:\n- bases/example.com_dbs.yaml\n# +kubebuilder:scaffold:crdkustomizeresource\n\npatches:\n";
    let kustomization = write(&out.join("crd"), "kustomization.yaml", stale_list);
    let run = |check: bool| {
        let mut cmd = rsbuilder();
        cmd.arg("manifests");
        if check {
            cmd.arg("--check");
        }
        cmd.arg("--paths")
            .arg(&types)
            .arg("--output-dir")
            .arg(&out)
            .assert()
    };
    let listed = format!(
        "{} lists bases/example.com_dbs.yaml, which no kind in the sources generates\n  help: remove that line if its kind was removed or renamed (rsbuilder never edits it)\n",
        kustomization.display()
    );
    let unlisted = format!(
        "{} does not list bases/example.com_databases.yaml, so `kubectl apply -k config/default` leaves that CRD out\n  help: add `- bases/example.com_databases.yaml` under `resources:`\n",
        kustomization.display()
    );
    run(false)
        .success()
        .stderr(format!("warning: {listed}warning: {unlisted}"));
    assert_eq!(std::fs::read_to_string(&kustomization).unwrap(), stale_list);
    run(true)
        .code(1)
        .stderr(format!("error: {listed}error: {unlisted}"));
    std::fs::write(
        &kustomization,
        stale_list.replace("example.com_dbs.yaml", "example.com_databases.yaml"),
    )
    .unwrap();
    run(true).success().stderr(predicate::str::is_empty());
    // Entries are compared as kustomize resolves them.
    for entry in [
        "./bases/example.com_databases.yaml",
        "bases//example.com_databases.yaml",
        "bases/../bases/example.com_databases.yaml",
    ] {
        std::fs::write(
            &kustomization,
            stale_list.replace("bases/example.com_dbs.yaml", entry),
        )
        .unwrap();
        run(true).success().stderr(predicate::str::is_empty());
    }
    // A FIFO in its place is named, and `--check` fails (before, it passed without reading).
    #[cfg(unix)]
    {
        std::fs::remove_file(&kustomization).unwrap();
        let c = std::ffi::CString::new(kustomization.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        run(true).code(1).stderr(predicate::str::contains(format!(
            "error: {} cannot be read: not a regular file",
            kustomization.display()
        )));
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_source_file_is_read_like_cargo_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::copy(
        fixture("database/database_types.rs"),
        shared.join("database_types.rs"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../shared/database_types.rs", tmp.path().join("src/k3.rs"))
        .unwrap();
    rsbuilder()
        .current_dir(tmp.path())
        .arg("manifests")
        .assert()
        .success();
    assert!(
        tmp.path()
            .join("config/crd/bases/example.com_databases.yaml")
            .is_file()
    );
    // A dangling link is an error at the link, and nothing is written.
    let tmp2 = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp2.path().join("src")).unwrap();
    std::os::unix::fs::symlink("../shared/k3.rs", tmp2.path().join("src/k3.rs")).unwrap();
    rsbuilder()
        .current_dir(tmp2.path())
        .arg("manifests")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/k3.rs:1:1: dangling symbolic link: its target `../shared/k3.rs` does not exist",
        ));
    assert!(!tmp2.path().join("config").exists());
}

/// A crate with a kind that derives, one whose type is recursive (refused: the API server
/// rejects the `$ref` crd() leaves), an RBAC marker, a kustomization listing both CRD files,
/// and the refused kind's CRD file from an earlier run.
fn mixed_project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    write(
        &src,
        "lib.rs",
        &format!(
            "{HEADER}
// +kubebuilder:rbac:groups=example.com,resources=goods,verbs=get;list
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Good\")]
pub struct GoodSpec {{ pub replicas: i32 }}

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Bad\")]
pub struct BadSpec {{ pub root: Node }}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Node {{ pub children: Vec<Node> }}
"
        ),
    );
    let crd = tmp.path().join("config/crd");
    std::fs::create_dir_all(crd.join("bases")).unwrap();
    write(
        &crd,
        "kustomization.yaml",
        "resources:\n- bases/example.com_goods.yaml\n- bases/example.com_bads.yaml\n",
    );
    write(
        &crd.join("bases"),
        "example.com_bads.yaml",
        "# from an earlier run\n",
    );
    tmp
}

#[test]
fn a_failing_kind_leaves_the_other_kinds_and_rbac_written() {
    let tmp = mixed_project();
    let assert = rsbuilder()
        .current_dir(tmp.path())
        .arg("manifests")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("recursive type `Node`"), "{stderr}");
    assert!(
        stderr.contains("not generated because of this: Bad.example.com"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "error: 1 error; not generated: Bad.example.com; every other file was written"
        ),
        "{stderr}"
    );
    // The refused kind's old file is kept as it is: neither stale nor missing from the
    // kustomization.
    assert!(
        !stderr.contains("stale") && !stderr.contains("lists"),
        "{stderr}"
    );
    let good = yaml_value(&tmp.path().join("config/crd/bases/example.com_goods.yaml"));
    assert_eq!(good["spec"]["names"]["kind"], "Good");
    let role = std::fs::read_to_string(tmp.path().join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("goods"), "{role}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("config/crd/bases/example.com_bads.yaml")).unwrap(),
        "# from an earlier run\n"
    );
}

#[test]
fn check_reports_drift_and_failed_kinds_and_writes_nothing() {
    let tmp = mixed_project();
    let assert = rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--check"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stdout.contains("config/crd/bases/example.com_goods.yaml"),
        "{stdout}"
    );
    assert!(stdout.contains("+  group: example.com"), "{stdout}");
    assert!(stderr.contains("recursive type `Node`"), "{stderr}");
    assert!(stderr.contains("manifests are out of date"), "{stderr}");
    assert!(
        stderr.contains("not generated: Bad.example.com; the other files were checked"),
        "{stderr}"
    );
    assert!(
        !tmp.path()
            .join("config/crd/bases/example.com_goods.yaml")
            .exists()
    );
    assert!(!tmp.path().join("config/rbac").exists());
    // Once the good files are written, --check still fails on the refused kind alone.
    rsbuilder()
        .current_dir(tmp.path())
        .arg("manifests")
        .assert()
        .code(1);
    let assert = rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--check"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stdout, "", "no drift");
    assert!(!stderr.contains("out of date"), "{stderr}");
    assert!(
        stderr.contains("not generated: Bad.example.com"),
        "{stderr}"
    );
}

#[test]
fn bad_evaluate_and_storage_version_values_are_usage_errors() {
    let tmp = mixed_project();
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--evaluate", "sometimes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "possible values: auto, static, compile",
        ));
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--storage-version", "Good=v1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--storage-version Good=v1: expected Kind.group=version, like Foo.example.com=v1",
        ));
    assert!(!tmp.path().join("config/rbac").exists());
}

/// A crate whose kind `Thing` has a field per feature: `metrics` is a default feature that
/// turns `telemetry` on, `tls` is not default, `chrono` is an optional dependency.
fn feature_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(
        dir,
        "Cargo.toml",
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[features]\ndefault = [\"metrics\"]\nmetrics = [\"telemetry\"]\ntelemetry = []\ntls = []\n\n[dependencies]\nchrono = { version = \"0.4\", optional = true }\nk8s-openapi = { version = \"0.29\", features = [\"v1_37\"] }\n",
    );
    write(dir, "Cargo.lock", &repository_lock());
    write(
        dir,
        "src/lib.rs",
        "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n\
         #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
         #[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n\
         pub struct ThingSpec {\n\
         \x20   #[cfg(feature = \"telemetry\")]\n    pub telemetry: bool,\n\
         \x20   #[cfg(feature = \"tls\")]\n    pub tls: bool,\n\
         \x20   #[cfg(feature = \"chrono\")]\n    pub at: chrono::DateTime<chrono::Utc>,\n\
         }\n\n#[cfg(test)]\nmod tests;\n",
    );
    // Only `cargo test` compiles it: a kind in it is no CRD of the crate.
    write(
        dir,
        "src/tests.rs",
        "#[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Fake\")]\npub struct FakeSpec { pub a: String }\n",
    );
}

/// The `spec` property names of the generated Thing CRD, sorted.
fn thing_fields(dir: &Path) -> Vec<String> {
    let crd = yaml_value(&dir.join("config/crd/bases/t.example.com_things.yaml"));
    let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let mut names: Vec<String> = props
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn features_follow_cargo_toml_and_the_cargo_flags() {
    let tmp = tempfile::tempdir().unwrap();
    feature_crate(tmp.path());
    let run = |flags: &[&str]| {
        rsbuilder()
            .arg("manifests")
            .arg("--dir")
            .arg(tmp.path())
            .args(flags)
            .assert()
            .success();
        thing_fields(tmp.path())
    };
    assert_eq!(run(&[]), ["telemetry"]);
    assert_eq!(run(&["--features", "tls"]), ["telemetry", "tls"]);
    assert_eq!(run(&["--no-default-features"]), Vec::<String>::new());
    assert_eq!(
        run(&["--no-default-features", "-F", "tls,chrono"]),
        ["at", "tls"]
    );
    assert_eq!(
        run(&["--features", "op/tls telemetry"]),
        ["telemetry", "tls"]
    );
    assert_eq!(run(&["--all-features"]), ["at", "telemetry", "tls"]);
    // The cfg(test) module made no CRD.
    let bases: Vec<_> = std::fs::read_dir(tmp.path().join("config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(bases, ["t.example.com_things.yaml"]);
}

#[test]
fn an_unknown_feature_is_a_usage_error_that_lists_the_features() {
    let tmp = tempfile::tempdir().unwrap();
    feature_crate(tmp.path());
    rsbuilder()
        .arg("manifests")
        .arg("--dir")
        .arg(tmp.path())
        .args(["--features", "tsl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--features tsl: package `op` has no feature `tsl` (its features: chrono, default, metrics, telemetry, tls)",
        ));
    assert!(!tmp.path().join("config").exists());
}

#[test]
fn loose_files_without_cargo_toml_have_no_default_features_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    feature_crate(tmp.path());
    let types = tmp.path().join("types.rs");
    std::fs::copy(tmp.path().join("src/lib.rs"), &types).unwrap();
    let loose = tempfile::tempdir().unwrap();
    let out = loose.path().join("out");
    let run = |flags: &[&str]| {
        rsbuilder()
            .current_dir(loose.path())
            .args(["manifests", "--paths"])
            .arg(&types)
            .arg("--output-dir")
            .arg(&out)
            .args(flags)
            .assert()
    };
    run(&[])
        .success()
        .stderr(predicate::str::contains(
            "warning: no package Cargo.toml at or above",
        ))
        .stderr(predicate::str::contains("no feature is enabled"));
    let crd = yaml_value(&out.join("crd/bases/t.example.com_things.yaml"));
    assert!(
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            .get("properties")
            .is_none()
    );
    run(&["--features", "tls"])
        .success()
        .stderr(predicate::str::contains(
            "only the features given with --features are enabled (tls)",
        ));
    run(&["--all-features"])
        .code(2)
        .stderr(predicate::str::contains(
            "--all-features: no package Cargo.toml",
        ));
}

#[test]
fn an_undecidable_cfg_on_a_kind_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    feature_crate(tmp.path());
    let lib = std::fs::read_to_string(tmp.path().join("src/lib.rs")).unwrap();
    write(
        tmp.path(),
        "src/lib.rs",
        &lib.replace("#[cfg(feature = \"tls\")]", "#[cfg(has_tls)]"),
    );
    // A build script that prints `cargo:rustc-cfg` may set `has_tls`: rsbuilder does not run it.
    write(
        tmp.path(),
        "build.rs",
        "fn main() {\n    println!(\"cargo:rustc-cfg=has_tls\");\n}\n",
    );
    rsbuilder()
        .arg("manifests")
        .arg("--dir")
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/lib.rs:10:11: the custom resource `ThingSpec` depends on `cfg(has_tls)`, which rsbuilder cannot decide",
        ));
    assert!(!tmp.path().join("config").exists());
}

/// A project `shop` (domain example.com) in a new temporary directory, with a `Cart` kind of
/// group `shop`, version `v1`, and the `rsbuilder` commands `more` run after it in order.
fn shop_project(more: &[&[&str]]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shop");
    std::fs::create_dir(&dir).unwrap();
    let init: &[&str] = &[
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/shop",
    ];
    let cart: &[&str] = &[
        "create",
        "api",
        "--group",
        "shop",
        "--version",
        "v1",
        "--kind",
        "Cart",
    ];
    for args in [init, cart].iter().chain(more) {
        rsbuilder().current_dir(&dir).args(*args).assert().success();
    }
    (tmp, dir)
}

/// Runs `rsbuilder manifests` in `dir`, which must succeed.
fn manifests_in(dir: &Path) -> assert_cmd::assert::Assert {
    rsbuilder()
        .current_dir(dir)
        .arg("manifests")
        .assert()
        .success()
}

/// The 1-based line of PROJECT in `dir` that reads `text` (trimmed).
fn project_line(dir: &Path, text: &str) -> usize {
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    project.lines().position(|l| l.trim() == text).unwrap() + 1
}

/// A kind PROJECT records whose `#[derive(CustomResource)]` is gone (commented out) gets no CRD:
/// `manifests` says so at PROJECT's line for the kind and names the types file `create api`
/// wrote, instead of leaving the kind out without a word.
#[test]
fn a_project_kind_without_its_type_is_a_warning_naming_the_types_file() {
    let order: &[&str] = &[
        "create",
        "api",
        "--group",
        "shop",
        "--version",
        "v1",
        "--kind",
        "Order",
    ];
    let (_tmp, dir) = shop_project(&[order]);
    manifests_in(&dir).stderr(predicate::str::contains("PROJECT records the kind").not());
    let types = dir.join("src/api/v1/cart_types.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    assert!(text.contains("#[derive(CustomResource"), "{text}");
    let commented = text.replace("#[derive(CustomResource", "// #[derive(CustomResource");
    std::fs::write(&types, commented).unwrap();
    let line = project_line(&dir, "kind: Cart");
    manifests_in(&dir)
        .stderr(predicate::str::contains(format!(
            "PROJECT:{line}:1: PROJECT records the kind Cart (shop.example.com), but no `#[derive(CustomResource)]` in the sources defines it: it gets no CRD"
        )))
        .stderr(predicate::str::contains(
            "`create api` put its type in src/api/v1/cart_types.rs",
        ))
        .stderr(predicate::str::contains("kind Order").not());
}

/// A field with a serde default (so a `default:` in the CRD) of a kind with a defaulting
/// webhook whose `default` sets it: the API server fills it before the webhook runs, so the
/// webhook's own default for it never applies. `manifests` says so at the field, naming
/// PROJECT's `defaulting: true` line. A `default` that never names the field gets no warning.
#[test]
fn a_schema_default_under_a_defaulting_webhook_is_a_warning() {
    let webhook: &[&str] = &[
        "create",
        "webhook",
        "--group",
        "shop",
        "--version",
        "v1",
        "--kind",
        "Cart",
        "--defaulting",
    ];
    let (_tmp, dir) = shop_project(&[webhook]);
    manifests_in(&dir).stderr(predicate::str::contains("has a default in the CRD").not());
    let types = dir.join("src/api/v1/cart_types.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    let text = text.replace(
        "    pub foo: Option<String>,",
        "    pub foo: Option<String>,\n    #[serde(default = \"one\")]\n    pub replicas: i32,",
    ) + "\nfn one() -> i32 {\n    1\n}\n";
    std::fs::write(&types, text).unwrap();
    let line = project_line(&dir, "defaulting: true");
    let field = std::fs::read_to_string(&types)
        .unwrap()
        .lines()
        .position(|l| l == "    pub replicas: i32,")
        .unwrap()
        + 1;
    // The scaffolded `default` fills `spec.foo` only: nothing of its own is lost.
    manifests_in(&dir).stderr(predicate::str::contains("has a default in the CRD").not());
    let webhook = dir.join("src/webhook/v1/cart_webhook.rs");
    let code = std::fs::read_to_string(&webhook).unwrap();
    let sets_foo = "        if cart.spec.foo.is_none() {";
    assert!(code.contains(sets_foo), "{code}");
    let code = code.replacen(
        sets_foo,
        &format!("        if cart.spec.replicas == 0 {{\n            cart.spec.replicas = 2;\n        }}\n{sets_foo}"),
        1,
    );
    std::fs::write(&webhook, code).unwrap();
    manifests_in(&dir).stderr(predicate::str::contains(format!(
        "src/api/v1/cart_types.rs:{field}:9: Cart's `spec.replicas` has a default in the CRD (from `#[serde(default)]` or `#[schemars(default)]` in src/api/v1/cart_types.rs), and the kind has a defaulting webhook (PROJECT:{line}): the API server fills the default before it calls the webhook, so `Defaulter::default` never sees `spec.replicas` missing"
    )));
}

/// `n` struct types nested one in the next (`C0 { next: Option<C1> }` …) below a kind.
fn nested_types(n: usize) -> String {
    let mut src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Deep\")]
pub struct DeepSpec {{
    pub next: Option<C0>,
}}
"
    );
    for i in 0..n {
        let field = match i + 1 < n {
            true => format!("pub next: Option<C{}>,", i + 1),
            false => "pub v: i32,".to_string(),
        };
        src.push_str(&format!(
            "\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct C{i} {{\n    {field}\n}}\n"
        ));
    }
    src
}

/// 500 nested struct types overflowed the deriver's stack (the process aborted, exit 134):
/// now a refusal naming the reference's file:line at 64 levels; 60 levels are derived.
#[test]
fn deeply_nested_types_are_refused_with_file_and_line_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(tmp.path(), "deep.rs", &nested_types(500));
    let out = tmp.path().join("out");
    let run = |f: &Path| {
        let mut cmd = rsbuilder();
        cmd.args(["manifests", "--evaluate", "static", "--paths"])
            .arg(f)
            .arg("--output-dir")
            .arg(&out);
        cmd
    };
    let line = nested_types(500)
        .lines()
        .position(|l| l.contains("Option<C63>"))
        .unwrap()
        + 1;
    run(&f).assert().code(1).stderr(
        predicate::str::contains(format!("{}:{line}:", f.display())).and(predicate::str::contains(
            "`C63` is nested 64 user types deep",
        )),
    );
    assert!(!out.exists());
    let f = write(tmp.path(), "deep.rs", &nested_types(60));
    run(&f).assert().success();
    assert!(out.join("crd/bases/example.com_deeps.yaml").is_file());
}

/// A kind whose field is `A0`, with `n` type aliases each naming the next (`type A0 =
/// Option<A1>;` when `wrap` is `Option`, `type A0 = A1;` when it is empty), the last `String`.
fn alias_chain(n: usize, wrap: &str) -> String {
    let mut src = format!(
        "{HEADER}
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = \"example.com\", version = \"v1\", kind = \"Deep\")]
pub struct DeepSpec {{
    pub next: A0,
}}
"
    );
    for i in 0..n {
        let next = match wrap {
            "" => format!("A{}", i + 1),
            w => format!("{w}<A{}>", i + 1),
        };
        src.push_str(&format!("pub type A{i} = {next};\n"));
    }
    src.push_str(&format!("pub type A{n} = String;\n"));
    src
}

/// A chain of 500 `Option` aliases, or 3000 plain ones, overflowed the deriver's stack (the
/// process aborted, exit 134): now a refusal naming the alias reference's file:line at 64
/// aliases; a chain of 60 is derived.
#[test]
fn long_type_alias_chains_are_refused_with_file_and_line_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let run = |f: &Path| {
        let mut cmd = rsbuilder();
        cmd.args(["manifests", "--evaluate", "static", "--paths"])
            .arg(f)
            .arg("--output-dir")
            .arg(&out);
        cmd
    };
    for (n, wrap) in [(500, "Option"), (3000, ""), (3000, "Vec")] {
        let src = alias_chain(n, wrap);
        let f = write(tmp.path(), "deep.rs", &src);
        let (line, col) = src
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find("A64;").or(l.find("A64>")).map(|c| (i + 1, c + 1)))
            .unwrap();
        run(&f).assert().code(1).stderr(
            predicate::str::contains(format!("{}:{line}:{col}:", f.display())).and(
                predicate::str::contains(
                    "the type alias `A64` is expanded inside 64 other type aliases",
                ),
            ),
        );
        assert!(!out.exists());
    }
    let f = write(tmp.path(), "deep.rs", &alias_chain(60, "Option"));
    run(&f).assert().success();
    let crd = std::fs::read_to_string(out.join("crd/bases/example.com_deeps.yaml")).unwrap();
    assert!(crd.contains("next:"), "{crd}");
}

/// A crate of one kind `Thing`, its Cargo.toml selecting k8s-openapi's `feature`, locked with
/// `lock`.
fn one_kind_crate(dir: &Path, feature: &str, lock: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(
        dir,
        "Cargo.toml",
        &format!(
            "[package]\nname = \"op\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nkube = {{ version = \"2\", features = [\"derive\"] }}\nk8s-openapi = {{ version = \"0.26\", features = [\"{feature}\"] }}\n"
        ),
    );
    write(dir, "Cargo.lock", lock);
    write(
        dir,
        "src/lib.rs",
        "#[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]\n\
         #[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n\
         pub struct ThingSpec {\n    pub size: i32,\n}\n",
    );
}

/// The repository's lock with kube-derive and kube-core moved to `kube`: what a crate on another
/// kube resolves (the entries' other fields are not read).
fn lock_with_kube(kube: &str) -> String {
    let lock = repository_lock();
    let mut out = String::new();
    let mut in_kube = false;
    for line in lock.lines() {
        if line.starts_with("name = ") {
            in_kube = line == "name = \"kube-derive\"" || line == "name = \"kube-core\"";
        }
        if in_kube && line.starts_with("version = ") {
            out.push_str(&format!("version = \"{kube}\"\n"));
            continue;
        }
        let dep = |name: &str| line.trim() == format!("\"{name} 5.0.0\",");
        if dep("kube-derive") || dep("kube-core") {
            out.push_str(&line.replace("5.0.0", kube));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn evaluate_static_refuses_a_crate_on_other_kube_versions_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let lock = lock_with_kube("2.0.1");
    one_kind_crate(tmp.path(), "v1_37", &lock);
    let derive_line = lock
        .lines()
        .position(|l| l == "name = \"kube-derive\"")
        .unwrap()
        + 1;
    let assert = rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--evaluate", "static"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(
        stderr.contains(&format!(
            "Cargo.lock:{derive_line}:1: static evaluation does not apply to this crate: this crate uses kube-derive 2.0.1 (rsbuilder reproduces 5.0.0); this crate uses kube-core 2.0.1 (rsbuilder reproduces 5.0.0); rsbuilder's static evaluation reproduces kube-derive 5.0.0, kube-core 5.0.0, schemars "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "help: use --evaluate auto (the default) to take this crate's CRDs from the compiler"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("rsbuilder bug"), "{stderr}");
    assert!(!tmp.path().join("config/crd").exists(), "{stderr}");
    // On the versions rsbuilder reproduces, the same crate is evaluated statically.
    write(tmp.path(), "Cargo.lock", &repository_lock());
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--evaluate", "static"])
        .assert()
        .success();
    assert!(
        tmp.path()
            .join("config/crd/bases/t.example.com_things.yaml")
            .is_file()
    );
}

#[test]
fn another_kubernetes_version_of_k8s_openapi_is_named_at_its_cargo_toml_line() {
    let tmp = tempfile::tempdir().unwrap();
    one_kind_crate(tmp.path(), "v1_33", &repository_lock());
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--evaluate", "static"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Cargo.toml:8:1: static evaluation does not apply to this crate: k8s-openapi selects Kubernetes `v1_33`, and rsbuilder reproduces its types as of `v1_37`",
        ));
    assert!(!tmp.path().join("config/crd").exists());
}

#[test]
fn a_crate_without_a_lock_is_refused_statically_with_the_command_that_makes_one() {
    let tmp = tempfile::tempdir().unwrap();
    one_kind_crate(tmp.path(), "v1_37", "");
    std::fs::remove_file(tmp.path().join("Cargo.lock")).unwrap();
    rsbuilder()
        .current_dir(tmp.path())
        .args(["manifests", "--evaluate", "static"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Cargo.toml:1:1: static evaluation does not apply to this crate: the crate has no Cargo.lock",
        ))
        .stderr(predicate::str::contains("cargo generate-lockfile"));
    assert!(!tmp.path().join("config/crd").exists());
}

/// The `src/` of a small crate whose sources use every spelling rustc normalizes when it reads
/// a file: raw strings and string continuations in defaults and CEL rules, doc comments of
/// both forms, and accented identifiers (`{cafe}`, `{naive}`, ... in the template, also in
/// `default = "..."`, which serde parses as a path; the other string literals are composed in
/// every spelling, as rustc keeps literals as written).
const LEXICAL_LIB: &str = "mod api;\npub use api::*;\n";
const LEXICAL_API: &str = r####"use kube::CustomResource;
use kube::core::Rule;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_script() -> String {
    r#"set -e
echo "ready""#.to_string()
}

fn {cafe}_default() -> i32 {
    3
}

/** A café's order,
    written in a block doc comment. */
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Order", namespaced)]
#[kube(validation = Rule::new(r#"self.café >= 0
  && self.café < 10"#).message("out of range"))]
#[serde(rename_all = "camelCase")]
pub struct OrderSpec {
    /// How many cups,
    /// at most nine.
    #[serde(default = "{cafe}_default")]
    pub {cafe}: i32,
    #[serde(default = "default_script")]
    pub script: String,
    pub {naive}_mode: Option<{Naive}>,
    #[schemars(description = "line one \
        and its continuation")]
    pub note: Option<String>,
}

/**
 * The mode: plain or fancy.
 */
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum {Naive} {
    Plain,
    /// With crème.
    {Creme},
}
"####;

/// The crate's `src/` under `dir`: `LEXICAL_API` with its identifiers spelled by `nfd` (NFD or
/// NFC), then `crlf` line endings and a `bom`, in both files.
fn lexical_crate(dir: &Path, nfd: bool, crlf: bool, bom: bool) -> PathBuf {
    use unicode_normalization::UnicodeNormalization;
    let ident = |s: &str| -> String {
        if nfd {
            s.nfd().collect()
        } else {
            s.nfc().collect()
        }
    };
    let api = LEXICAL_API
        .replace("{cafe}", &ident("café"))
        .replace("{naive}", &ident("naïve"))
        .replace("{Naive}", &ident("Naïve"))
        .replace("{Creme}", &ident("Crème"));
    let spell = |text: &str| {
        let text = if crlf {
            text.replace('\n', "\r\n")
        } else {
            text.to_string()
        };
        if bom { format!("\u{feff}{text}") } else { text }
    };
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    write(&src, "lib.rs", &spell(LEXICAL_LIB));
    write(&src, "api.rs", &spell(&api));
    src
}

/// Every file under `dir` with its text, by path relative to `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
            (
                rel,
                String::from_utf8(std::fs::read(e.path()).unwrap()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn crlf_bom_and_nfd_sources_give_byte_identical_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, nfd: bool, crlf: bool, bom: bool| {
        let dir = tmp.path().join(name);
        let src = lexical_crate(&dir, nfd, crlf, bom);
        let out = dir.join("out");
        rsbuilder()
            .args(["manifests", "--paths"])
            .arg(&src)
            .arg("--output-dir")
            .arg(&out)
            .assert()
            .success();
        tree(&out)
    };
    let lf = run("lf", false, false, false);
    let crd = lf
        .iter()
        .find(|(p, _)| p.ends_with("example.com_orders.yaml"))
        .map(|(_, text)| text.clone())
        .unwrap_or_else(|| panic!("no CRD for Order: {lf:?}"));
    // What rustc reads: LF inside the raw strings and doc comments, composed property names.
    assert!(!crd.contains('\r'), "{crd}");
    assert!(crd.contains("café:"), "{crd}");
    assert!(crd.contains("naïveMode:"), "{crd}");
    assert!(crd.contains("Crème"), "{crd}");
    let value: serde_json::Value = serde_saphyr::from_str(&crd).unwrap();
    let schema = &value["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let spec = &schema["properties"]["spec"];
    assert_eq!(
        spec["properties"]["script"]["default"],
        "set -e\necho \"ready\""
    );
    assert_eq!(
        schema["x-kubernetes-validations"][0]["rule"],
        "self.café >= 0\n  && self.café < 10"
    );
    assert_eq!(
        spec["properties"]["note"]["description"],
        "line one and its continuation"
    );
    assert_eq!(
        spec["properties"]["café"]["description"],
        "How many cups,\nat most nine."
    );
    // The default function is named in a string, which serde parses with rustc's lexer.
    assert_eq!(spec["properties"]["café"]["default"], 3);
    for (name, nfd, crlf, bom) in [
        ("crlf", false, true, false),
        ("bom", false, false, true),
        ("nfd", true, false, false),
        ("all", true, true, true),
    ] {
        assert_eq!(run(name, nfd, crlf, bom), lf, "{name}");
    }
}
