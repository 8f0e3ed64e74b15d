//! The API server driven by clients nobody here wrote: kubectl and the official Python `kubernetes`
//! client, over HTTPS with a self-signed certificate, against the Database API server example's
//! kind, defined as an operator defines a CRD kind (`#[derive(CustomResource)]`).

use crate::common;
mod list_under_writes;
mod server_side_apply;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use kube_derive::CustomResource;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use rsbuilder_runtime::tls::{self, Certificates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// The Database API server example's kind.
// One printcolumn(...) per column is kube-derive's syntax.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    category = "all",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    crates(kube_core = "::kube_core")
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

/// What the operator observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct DatabaseStatus {
    /// The lifecycle phase.
    pub phase: String,
    /// The nodes serving it.
    pub nodes: Vec<String>,
    /// How many replicas run (the Scale's `status.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The label selector of the replicas (the Scale's `status.selector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

struct Server {
    /// The first resourceVersion a write gets: 1 on redb, 2 on a fresh etcd (which starts at 1).
    first_rv: u64,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    shutdown: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The etcd process the store runs on, killed after the server stops.
    #[cfg(feature = "etcd")]
    etcd: Option<(std::process::Child, tempfile::TempDir)>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        #[cfg(feature = "etcd")]
        if let Some((mut etcd, _data)) = self.etcd.take() {
            let _ = etcd.kill();
            let _ = etcd.wait();
        }
    }
}

fn start() -> Server {
    start_on(None)
}

/// Starts the server on redb (`etcd` none) or on the etcd at the given client URL.
fn start_on(etcd: Option<String>) -> Server {
    let first_rv = if etcd.is_some() { 2 } else { 1 };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.redb");
    let shutdown = CancellationToken::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let token = shutdown.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let kind = ApiKind::of::<Database>().unwrap();
            let mut config = Config::new(vec![kind]);
            config.bookmark_interval = Duration::from_secs(1);
            let certs = Arc::new(Certificates::self_signed(&["localhost", "127.0.0.1"]).unwrap());
            let listener = tls::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            // The example's extra `/custom` endpoint, added the documented way: a router merged in.
            let custom = axum::Router::new().route(
                "/custom",
                axum::routing::get(|| async {
                    axum::Json(serde_json::json!({"message": "This is a custom endpoint"}))
                }),
            );
            match etcd {
                #[cfg(feature = "etcd")]
                Some(endpoint) => {
                    let store = connect_etcd(&endpoint).await;
                    let server = ApiServer::new(config, store, token);
                    server.serve(listener, certs, custom).await.unwrap();
                }
                _ => {
                    let store = RedbStore::open(&db).unwrap();
                    let server = ApiServer::new(config, store, token);
                    server.serve(listener, certs, custom).await.unwrap();
                }
            }
        });
    });
    let port = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user: {{token: not-checked}}\ncontexts:\n- name: c\n  context: {{cluster: s, user: u, namespace: default}}\ncurrent-context: c\n"
        ),
    )
    .unwrap();
    Server {
        first_rv,
        dir,
        kubeconfig,
        shutdown,
        thread: Some(thread),
        #[cfg(feature = "etcd")]
        etcd: None,
    }
}

/// Connects to the etcd at `endpoint`, retrying while it starts (up to 10 s).
#[cfg(feature = "etcd")]
async fn connect_etcd(endpoint: &str) -> rsbuilder_runtime::apiserver::etcd::EtcdStorage {
    use rsbuilder_runtime::apiserver::etcd::EtcdStorage;
    for _ in 0..100 {
        if let Ok(store) = EtcdStorage::connect(&[endpoint.to_string()], "/registry").await {
            return store;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("etcd did not answer on {endpoint} within 10 s");
}

/// Starts etcd (temporary data directory, free loopback ports) and the server on it, or
/// `None` when etcd is not installed.
#[cfg(feature = "etcd")]
fn start_on_etcd() -> Option<Server> {
    if Command::new("etcd").arg("--version").output().is_err() {
        return None;
    }
    let port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (client, peer) = (port(), port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let data = tempfile::tempdir().unwrap();
    let child = Command::new("etcd")
        .arg("--data-dir")
        .arg(data.path().join("data"))
        .args(["--name", "kubectl"])
        .args(["--listen-client-urls", &client_url])
        .args(["--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("kubectl={peer_url}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = start_on(Some(client_url));
    server.etcd = Some((child, data));
    Some(server)
}

fn kubectl_present() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs kubectl; out: (success, stdout, stderr).
fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", kubeconfig.with_file_name("cache"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(kubeconfig: &Path, args: &[&str]) -> String {
    let (success, out, err) = kubectl(kubeconfig, args);
    assert!(success, "kubectl {args:?} failed:\n{out}\n{err}");
    out
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const MAIN: &str = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: main\n  labels:\n    env: prod\nspec:\n  engine: postgres\n  version: \"16\"\n  replicas: 1\n";

#[test]
fn kubectl_discovers_creates_reads_patches_watches_and_deletes() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    kubectl_scenario(&start());
}

/// The same kubectl scenario with the server on a real etcd (feature `etcd`).
#[cfg(feature = "etcd")]
#[test]
fn kubectl_scenario_on_the_etcd_store() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    match start_on_etcd() {
        Some(s) => kubectl_scenario(&s),
        None => common::missing("etcd is not installed (Debian: apt-get install etcd-server)"),
    }
}

/// Discovers, creates, reads, patches, watches and deletes with kubectl against `s`.
fn kubectl_scenario(s: &Server) {
    let k = s.kubeconfig.as_path();

    let resources = ok(
        k,
        &["api-resources", "--api-group=example.com", "--no-headers"],
    );
    let fields: Vec<&str> = resources.split_whitespace().collect();
    assert_eq!(
        fields,
        ["databases", "db", "example.com/v1", "true", "Database"],
        "{resources}"
    );

    // kubectl takes aggregated discovery: one GET of /apis, none of /apis/example.com/v1.
    let (_, _, log) = kubectl(k, &["api-resources", "-v=6"]);
    assert!(log.contains("/apis?timeout="), "{log}");
    assert!(!log.contains("/apis/example.com/v1?"), "{log}");

    let file = write(s.dir.path(), "main.yaml", MAIN);
    assert_eq!(
        ok(k, &["create", "-f", &file]).trim(),
        "database.example.com/main created"
    );
    let (success, _, err) = kubectl(k, &["create", "-f", &file]);
    assert!(!success);
    assert!(err.contains("(AlreadyExists)"), "{err}");

    // kubectl asks for strict field validation (the OpenAPI document offers it).
    let bad = MAIN
        .replace("name: main", "name: bad")
        .replace("replicas: 1", "replicas: 1\n  colour: blue");
    let bad = write(s.dir.path(), "bad.yaml", &bad);
    let (success, _, err) = kubectl(k, &["create", "-f", &bad]);
    assert!(!success);
    assert!(
        err.contains(r#"strict decoding error: unknown field "spec.colour""#),
        "{err}"
    );

    // The type's constraints (engine enum, version pattern, replicas 1..10): 422 Invalid.
    let invalid = MAIN
        .replace("name: main", "name: invalid")
        .replace("replicas: 1", "replicas: 11")
        .replace("engine: postgres", "engine: oracle")
        .replace("\"16\"", "latest");
    let invalid = write(s.dir.path(), "invalid.yaml", &invalid);
    let (success, _, err) = kubectl(k, &["create", "-f", &invalid]);
    assert!(!success);
    for want in [
        r#"The Database "invalid" is invalid"#,
        r#"spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql""#,
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10\n",
        r#"spec.version: Invalid value: "latest""#,
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }

    // Server-side printing: the type's printer columns.
    let table = ok(k, &["get", "databases"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "ENGINE", "REPLICAS", "PHASE", "AGE"],
        "{table}"
    );
    assert_eq!(&lines[1][..3], ["main", "postgres", "1"], "{table}");

    let yaml = ok(k, &["get", "db", "main", "-o", "yaml"]);
    let first_rv = format!("resourceVersion: \"{}\"", s.first_rv);
    for want in [
        "generation: 1",
        first_rv.as_str(),
        "uid: ",
        "namespace: default",
        "creationTimestamp: \"",
    ] {
        assert!(yaml.contains(want), "{want} not in\n{yaml}");
    }

    // apply (client-side): create, then change.
    let second = MAIN.replace("name: main", "name: second");
    let file2 = write(s.dir.path(), "second.yaml", &second);
    assert_eq!(
        ok(k, &["apply", "-f", &file2]).trim(),
        "database.example.com/second created"
    );
    let file2 = write(
        s.dir.path(),
        "second.yaml",
        &second.replace("replicas: 1", "replicas: 4"),
    );
    assert_eq!(
        ok(k, &["apply", "-f", &file2]).trim(),
        "database.example.com/second configured"
    );
    let replicas = ok(
        k,
        &[
            "get",
            "db",
            "second",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}",
        ],
    );
    assert_eq!(replicas, "4 2");

    // patch: merge, JSON, and the status subresource.
    ok(
        k,
        &[
            "patch",
            "db",
            "main",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ],
    );
    ok(
        k,
        &[
            "patch",
            "db",
            "main",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/engine","value":"mysql"}]"#,
        ],
    );
    ok(
        k,
        &[
            "patch",
            "db",
            "main",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Ready","nodes":["n1"]},"spec":{"replicas":9}}"#,
        ],
    );
    let raw = ok(
        k,
        &[
            "get",
            "--raw",
            "/apis/example.com/v1/namespaces/default/databases/main",
        ],
    );
    let obj: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(obj["spec"]["replicas"], 3);
    assert_eq!(obj["spec"]["engine"], "mysql");
    assert_eq!(obj["status"]["phase"], "Ready");
    assert_eq!(obj["metadata"]["generation"], 3);

    // The scale subresource: `kubectl scale` finds it through discovery and patches it.
    assert_eq!(
        ok(k, &["scale", "databases/second", "--replicas=3"]).trim(),
        "database.example.com/second scaled"
    );
    let row = ok(k, &["get", "databases", "second", "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..3], ["second", "postgres", "3"], "{row}");
    let generation = ok(
        k,
        &[
            "get",
            "db",
            "second",
            "-o",
            "jsonpath={.metadata.generation}",
        ],
    );
    assert_eq!(generation, "3");
    let raw_scale = ok(
        k,
        &[
            "get",
            "--raw",
            "/apis/example.com/v1/namespaces/default/databases/main/scale",
        ],
    );
    let scale: serde_json::Value = serde_json::from_str(&raw_scale).unwrap();
    assert_eq!(
        (
            &scale["kind"],
            &scale["apiVersion"],
            &scale["metadata"]["name"],
            &scale["metadata"]["uid"],
            &scale["metadata"]["resourceVersion"],
            &scale["spec"]["replicas"],
            &scale["status"]["replicas"],
        ),
        (
            &serde_json::json!("Scale"),
            &serde_json::json!("autoscaling/v1"),
            &serde_json::json!("main"),
            &obj["metadata"]["uid"],
            &obj["metadata"]["resourceVersion"],
            &serde_json::json!(3),
            &serde_json::json!(0),
        ),
        "{raw_scale}"
    );
    // Out of the type's 1..10: the object's validation refuses the scale (422).
    let (success, _, err) = kubectl(k, &["scale", "db/second", "--replicas=11"]);
    assert!(!success);
    assert!(
        err.contains("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        "{err}"
    );
    // With --current-replicas kubectl reads the Scale, then PUTs it back changed.
    assert_eq!(
        ok(
            k,
            &["scale", "db/second", "--current-replicas=3", "--replicas=2"]
        )
        .trim(),
        "database.example.com/second scaled"
    );
    let replicas = ok(
        k,
        &["get", "db", "second", "-o", "jsonpath={.spec.replicas}"],
    );
    assert_eq!(replicas, "2");

    // Selectors.
    let prod = ok(
        k,
        &["get", "db", "-l", "env=prod,tier notin (web)", "-o", "name"],
    );
    assert_eq!(
        prod.lines().collect::<Vec<_>>(),
        ["database.example.com/main", "database.example.com/second"]
    );
    let by_name = ok(
        k,
        &[
            "get",
            "db",
            "--field-selector",
            "metadata.name=second",
            "-o",
            "name",
        ],
    );
    assert_eq!(by_name.trim(), "database.example.com/second");
    let paged = ok(k, &["get", "db", "--chunk-size=1", "-o", "name"]);
    assert_eq!(paged.lines().count(), 2, "{paged}");

    // Discovery documents through --raw.
    let rl: serde_json::Value =
        serde_json::from_str(&ok(k, &["get", "--raw", "/apis/example.com/v1"])).unwrap();
    assert_eq!(rl["resources"][1]["name"], "databases/status");
    assert_eq!(rl["resources"][0]["categories"], serde_json::json!(["all"]));
    assert_eq!(ok(k, &["get", "--raw", "/readyz"]), "ok");
    let custom: serde_json::Value =
        serde_json::from_str(&ok(k, &["get", "--raw", "/custom"])).unwrap();
    assert_eq!(custom["message"], "This is a custom endpoint");

    // Watch: kubectl get -w sees a change made while it watches.
    let mut watcher = Command::new("kubectl")
        .env("KUBECONFIG", k)
        .env("KUBECACHEDIR", s.dir.path().join("cache"))
        .args([
            "get",
            "db",
            "main",
            "-w",
            "--output-watch-events",
            "--no-headers",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watcher.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("first watch line");
    assert!(first.contains("main") && first.contains("mysql"), "{first}");
    ok(
        k,
        &[
            "patch",
            "db",
            "main",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":5}}"#,
        ],
    );
    let modified = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a MODIFIED line");
        if line.starts_with("MODIFIED") {
            break line;
        }
    };
    let cells: Vec<&str> = modified.split_whitespace().collect();
    assert_eq!(
        &cells[..4],
        ["MODIFIED", "main", "mysql", "5"],
        "{modified}"
    );
    let _ = watcher.kill();
    let _ = watcher.wait();

    // Errors come back as the API server's Status.
    let (success, _, err) = kubectl(k, &["get", "db", "nope"]);
    assert!(!success);
    assert!(
        err.contains(r#"Error from server (NotFound): databases.example.com "nope" not found"#),
        "{err}"
    );

    // Server-side dry runs answer as the write would and change nothing: the object's
    // resourceVersion is the same after a dry-run delete, a dry-run create of a new object, a
    // dry-run replace and `kubectl diff` (which sends a dry-run apply or patch).
    let rv = |name: &str| {
        ok(
            k,
            &[
                "get",
                "db",
                name,
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
        )
    };
    let before = rv("main");
    assert_eq!(
        ok(k, &["delete", "db", "main", "--dry-run=server"]).trim(),
        r#"database.example.com "main" deleted (server dry run)"#
    );
    let third = write(
        s.dir.path(),
        "third.yaml",
        &MAIN.replace("name: main", "name: third"),
    );
    let would: serde_json::Value = serde_json::from_str(&ok(
        k,
        &["create", "-f", &third, "--dry-run=server", "-o", "json"],
    ))
    .unwrap();
    assert_eq!(would["metadata"]["name"], "third");
    assert_eq!(would["metadata"]["generation"], 1);
    assert!(would["metadata"]["uid"].is_string(), "{would}");
    assert_eq!(would["metadata"].get("resourceVersion"), None, "{would}");
    let (found, _, err) = kubectl(k, &["get", "db", "third"]);
    assert!(
        !found && err.contains("NotFound"),
        "a dry-run create stored it: {err}"
    );
    let replicas = ok(k, &["get", "db", "main", "-o", "jsonpath={.spec.replicas}"]);
    assert_ne!(replicas, "7");
    let scaled = write(
        s.dir.path(),
        "main-scaled.yaml",
        &MAIN.replace("replicas: 1", "replicas: 7"),
    );
    let (changed, diff, err) = kubectl(k, &["diff", "-f", &scaled]);
    assert!(
        !changed,
        "kubectl diff exits 1 when there is a difference: {err}"
    );
    assert!(
        diff.contains(&format!("-  replicas: {replicas}")) && diff.contains("+  replicas: 7"),
        "{diff}{err}"
    );
    assert_eq!(rv("main"), before, "a dry run wrote the object");
    assert_eq!(
        ok(k, &["get", "db", "main", "-o", "jsonpath={.spec.replicas}"]),
        replicas
    );

    // An orphaning or foreground delete marks the object with the garbage collector's
    // finalizer (kubectl would wait for the cluster's collector to remove it: --wait=false);
    // taking the finalizer off, as the collector does, removes the object.
    let cascade = MAIN
        .replace("name: main", "name: cascade")
        .replace("env: prod", "env: test");
    let cascade = write(s.dir.path(), "cascade.yaml", &cascade);
    ok(k, &["create", "-f", &cascade]);
    let finalizers = || {
        ok(
            k,
            &[
                "get",
                "db",
                "cascade",
                "-o",
                "jsonpath={.metadata.finalizers}",
            ],
        )
    };
    for (cascade, finalizer) in [("orphan", "orphan"), ("foreground", "foregroundDeletion")] {
        assert_eq!(
            ok(
                k,
                &[
                    "delete",
                    "db",
                    "cascade",
                    &format!("--cascade={cascade}"),
                    "--wait=false"
                ]
            )
            .trim(),
            r#"database.example.com "cascade" deleted"#
        );
        assert_eq!(finalizers(), format!("[\"{finalizer}\"]"));
    }
    ok(
        k,
        &[
            "patch",
            "db",
            "cascade",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
    );
    let (found, _, err) = kubectl(k, &["get", "db", "cascade"]);
    assert!(!found && err.contains("NotFound"), "{err}");
    assert_eq!(
        ok(k, &["get", "db", "main", "-o", "name"]).trim(),
        "database.example.com/main"
    );

    // Delete (with a grace period: a custom resource goes at once whatever it is), and
    // deletecollection by label.
    assert_eq!(
        ok(k, &["delete", "db", "main", "--grace-period=5"]).trim(),
        r#"database.example.com "main" deleted"#
    );
    assert_eq!(
        ok(k, &["delete", "db", "-l", "env=prod"]).trim(),
        r#"database.example.com "second" deleted"#
    );
    let (_, out, err) = kubectl(k, &["get", "db"]);
    assert!(
        out.is_empty() && err.contains("No resources found"),
        "{out}{err}"
    );
    let _ = std::io::stdout().flush();
}

#[test]
fn kubectl_explain_reads_the_types_schema() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    let s = start();
    let out = ok(&s.kubeconfig, &["explain", "databases.spec"]);
    assert!(
        out.contains("engine") && out.contains("The database engine."),
        "{out}"
    );
    assert!(out.contains("replicas"), "{out}");
}

/// `kubectl apply --server-side` by two managers: the conflict, then `--force-conflicts`.
#[test]
fn kubectl_server_side_apply_reports_conflicts_and_forces() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    server_side_apply::two_managers_conflict_until_forced(&start());
}

/// kube-rs's `Patch::Apply` and dry runs against the server over HTTP (no kubectl needed).
#[test]
fn kube_rs_server_side_apply_and_dry_run() {
    server_side_apply::kube_rs_applies_and_dry_runs(&start());
}

/// The same kube-rs applies (to the object and to its Scale) and dry runs with the server on
/// a real etcd (feature `etcd`).
#[cfg(feature = "etcd")]
#[test]
fn kube_rs_server_side_apply_and_dry_run_on_etcd() {
    match start_on_etcd() {
        Some(s) => server_side_apply::kube_rs_applies_and_dry_runs(&s),
        None => common::missing("etcd is not installed (Debian: apt-get install etcd-server)"),
    }
}

/// kubectl's server-side apply with the server on a real etcd (feature `etcd`).
#[cfg(feature = "etcd")]
#[test]
fn kubectl_server_side_apply_on_etcd() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    match start_on_etcd() {
        Some(s) => server_side_apply::two_managers_conflict_until_forced(&s),
        None => common::missing("etcd is not installed (Debian: apt-get install etcd-server)"),
    }
}

fn python_client_present() -> bool {
    Command::new("python3")
        .args(["-c", "import kubernetes"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_client_runs_the_database_examples_custom_objects_scenario() {
    if !python_client_present() {
        common::missing("the Python kubernetes package is not installed (pip install kubernetes)");
        return;
    }
    python_scenario(&start());
}

/// The same Python scenario with the server on a real etcd (feature `etcd`).
#[cfg(feature = "etcd")]
#[test]
fn python_scenario_on_the_etcd_store() {
    if !python_client_present() {
        common::missing("the Python kubernetes package is not installed (pip install kubernetes)");
        return;
    }
    match start_on_etcd() {
        Some(s) => python_scenario(&s),
        None => common::missing("etcd is not installed (Debian: apt-get install etcd-server)"),
    }
}

/// Runs tests/apiserver/python_client.py (the official client's CustomObjectsApi) against `s`.
fn python_scenario(s: &Server) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apiserver/python_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&s.kubeconfig)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "python scenario passed");
}

/// kubectl's paged list and a default kube-rs reflector finish over 3,000 Databases while a
/// writer writes, on redb.
#[test]
fn lists_finish_under_writes_on_redb() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    list_under_writes::lists_finish_under_writes(&start());
}

/// The same lists under writes with the server on a real etcd (feature `etcd`).
#[cfg(feature = "etcd")]
#[test]
fn lists_finish_under_writes_on_etcd() {
    if !kubectl_present() {
        common::missing("kubectl is not installed");
        return;
    }
    match start_on_etcd() {
        Some(s) => list_under_writes::lists_finish_under_writes(&s),
        None => common::missing("etcd is not installed (Debian: apt-get install etcd-server)"),
    }
}
