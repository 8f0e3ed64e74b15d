//! End to end, the Database API server example: `rsbuilder init`, `create apiserver` for Database
//! (the scaffold is rustfmt-clean and passes clippy), the example's spec (engine enum, version
//! pattern, replicas 1..10, status and scale) and printer columns written into the types; then the
//! generated project's `apiserver` binary is built and run on a redb store in a temporary
//! directory, and kubectl (a client nobody here wrote) talks to it with `--server` and
//! `--insecure-skip-tls-verify`: discovery, `create -f` of the sample, `get` with the server's
//! columns, a schema rejection, `apply`, `scale`, `delete`; the server is restarted on the same
//! store and still has what was written.
//!
//! Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default `<repo>/target/e2e`.
//! Runs under `CI=true` or with `RSBUILDER_E2E=1` (`common::e2e::opted_in`). Without kubectl
//! the test skips locally and fails under `CI=true` (`common::missing`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::e2e::{describe, shared_build_env, target_dir};

fn run_ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap();
    let dir = cmd.get_current_dir().unwrap_or(Path::new("."));
    assert!(out.status.success(), "{}", describe(what, dir, &out));
    out
}

/// The Database API server example's kind, as kube-rs types (the runtime's kubectl test uses
/// the same).
const DATABASE_TYPES: &str = r#"//! The Database kind, served by the project's aggregated API server.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired database.
// One printcolumn(...) per column is kube-derive's syntax.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "db.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    category = "all",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    )
)]
pub struct DatabaseSpec {
    /// The database engine.
    pub engine: Engine,
    /// The engine version.
    #[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)*$"))]
    pub version: String,
    /// How many replicas to run.
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
}

/// The engines the Database example offers.
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// PostgreSQL.
    Postgres,
    /// MySQL.
    Mysql,
}

/// What was observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct DatabaseStatus {
    /// The lifecycle phase.
    #[serde(default)]
    pub phase: String,
    /// The nodes serving it.
    #[serde(default)]
    pub nodes: Vec<String>,
    /// How many replicas run (the scale subresource's `status.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}
"#;

const DATABASE_SAMPLE: &str = "apiVersion: db.example.com/v1\nkind: Database\nmetadata:\n  name: database-sample\nspec:\n  engine: mysql\n  version: \"8.0\"\n  replicas: 3\n";

/// The served binary, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Kubectl {
    server: String,
    home: PathBuf,
}

impl Kubectl {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .args(["--server", &self.server, "--insecure-skip-tls-verify"])
            // Any credential: without one kubectl prompts for a user name. The server does no
            // authentication yet (docs/apiserver.md).
            .args(["--token", "not-checked"])
            .args(["--namespace", "default"])
            .args(args)
            // No kubeconfig of the machine's user gets in the way.
            .env("KUBECONFIG", self.home.join("no-kubeconfig"))
            .env("HOME", &self.home)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{}",
            describe(&format!("kubectl {args:?}"), &self.home, &out)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Starts the built server on `port` with the store `store`, and waits until `/readyz`
/// answers (the server binds within a second; the wait only ends early).
fn serve(bin: &Path, port: u16, store: &Path, k: &Kubectl) -> Served {
    let child = Command::new(bin)
        .args(["--bind-address", &format!("127.0.0.1:{port}")])
        .arg("--store-path")
        .arg(store)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let served = Served(child);
    let start = Instant::now();
    loop {
        if k.run(&["get", "--raw", "/readyz"]).status.success() {
            return served;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the API server did not become ready on port {port}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_generated_api_server_serves_the_database_example_to_kubectl() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        common::missing("kubectl is not installed: the aggregated API server e2e");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db-operator");
    std::fs::create_dir(&dir).unwrap();
    let rsbuilder = env!("CARGO_BIN_EXE_rsbuilder");
    run_ok(
        Command::new(rsbuilder)
            .args([
                "init",
                "--domain",
                "example.com",
                "--repo",
                "example.com/db-operator",
            ])
            .current_dir(&dir),
        "rsbuilder init",
    );
    run_ok(
        Command::new(rsbuilder)
            .args([
                "create",
                "apiserver",
                "--group",
                "db",
                "--version",
                "v1",
                "--kind",
                "Database",
            ])
            .current_dir(&dir),
        "rsbuilder create apiserver",
    );
    // The scaffold as written is rustfmt-clean and passes clippy.
    let cargo = |args: &[&str], what: &str| {
        run_ok(
            shared_build_env(&mut Command::new(env!("CARGO")))
                .args(args)
                .current_dir(&dir),
            what,
        )
    };
    cargo(&["fmt", "--check"], "cargo fmt --check");
    cargo(
        &["clippy", "--all-targets", "--", "-D", "warnings"],
        "cargo clippy",
    );
    std::fs::write(
        dir.join("src/apiserver/v1/database_types.rs"),
        DATABASE_TYPES,
    )
    .unwrap();
    std::fs::write(
        dir.join("config/samples/db_v1_database.yaml"),
        DATABASE_SAMPLE,
    )
    .unwrap();
    cargo(
        &["build", "--bin", "apiserver"],
        "cargo build --bin apiserver",
    );
    let bin = target_dir().join("debug/apiserver");
    let store = tmp.path().join("store/store.redb");
    let port = free_port();
    let k = Kubectl {
        server: format!("https://127.0.0.1:{port}"),
        home: tmp.path().to_path_buf(),
    };
    let served = serve(&bin, port, &store, &k);

    let resources = k.ok(&[
        "api-resources",
        "--api-group",
        "db.example.com",
        "--no-headers",
    ]);
    let fields: Vec<&str> = resources.split_whitespace().collect();
    assert_eq!(
        fields,
        ["databases", "db", "db.example.com/v1", "true", "Database"],
        "{resources}"
    );
    let sample = dir.join("config/samples/db_v1_database.yaml");
    let sample = sample.to_str().unwrap();
    assert_eq!(
        k.ok(&["create", "-f", sample]).trim(),
        "database.db.example.com/database-sample created"
    );
    let table = k.ok(&["get", "databases"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "ENGINE", "REPLICAS", "PHASE"], "{table}");
    assert_eq!(lines[1], ["database-sample", "mysql", "3"], "{table}");
    assert_eq!(
        k.ok(&[
            "get",
            "db",
            "database-sample",
            "-o",
            "jsonpath={.spec.version} {.metadata.generation}"
        ]),
        "8.0 1"
    );

    // The schema the types declare is enforced: replicas 1..10, the engine enum.
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(
        &bad,
        DATABASE_SAMPLE
            .replace("database-sample", "bad")
            .replace("replicas: 3", "replicas: 11")
            .replace("engine: mysql", "engine: oracle"),
    )
    .unwrap();
    let out = k.run(&["create", "-f", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is invalid"), "{err}");
    assert!(err.contains("spec.replicas"), "{err}");
    assert!(err.contains("spec.engine"), "{err}");

    // apply changes the spec: generation 2.
    let applied = tmp.path().join("applied.yaml");
    std::fs::write(
        &applied,
        DATABASE_SAMPLE.replace("replicas: 3", "replicas: 5"),
    )
    .unwrap();
    assert_eq!(
        k.ok(&["apply", "-f", applied.to_str().unwrap()]).trim(),
        "database.db.example.com/database-sample configured"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "db",
            "database-sample",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}"
        ]),
        "5 2"
    );

    // The scale subresource: `kubectl scale` patches it, the object follows (generation 3);
    // out of 1..10 it is refused.
    assert_eq!(
        k.ok(&["scale", "databases/database-sample", "--replicas=4"])
            .trim(),
        "database.db.example.com/database-sample scaled"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "db",
            "database-sample",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}"
        ]),
        "4 3"
    );
    let out = k.run(&["scale", "db/database-sample", "--replicas=11"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spec.replicas"), "{err}");
    let raw_scale = k.ok(&[
        "get",
        "--raw",
        "/apis/db.example.com/v1/namespaces/default/databases/database-sample/scale",
    ]);
    assert!(
        raw_scale.contains(r#""spec":{"replicas":4}"#),
        "{raw_scale}"
    );
    // A restart on the same store keeps the object.
    drop(served);
    let served = serve(&bin, port, &store, &k);
    assert_eq!(
        k.ok(&[
            "get",
            "db",
            "database-sample",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "4"
    );
    assert_eq!(
        k.ok(&["delete", "db", "database-sample"]).trim(),
        "database.db.example.com \"database-sample\" deleted"
    );
    let out = k.run(&["get", "db", "database-sample"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "Error from server (NotFound): databases.db.example.com \"database-sample\" not found"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(served);
}
