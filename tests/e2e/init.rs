//! End to end: `rsbuilder init`, then the generated project builds, passes its own tests and
//! clippy with no edit, `kubectl kustomize config/default` renders, and the manager binary
//! behaves: without a cluster it exits 1 with one line; against a (fake) API server it serves
//! its probes, and its metrics over HTTPS only to tokens the (fake) TokenReview and
//! SubjectAccessReview accept, and stops cleanly on SIGTERM, also after code has been inserted
//! at the `controllers` and `webhooks` markers the way `create api` / `create webhook` do.
//!
//! Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`, default `<repo>/target/e2e`.
//! Runs under `CI=true` or with `RSBUILDER_E2E=1` (`common::e2e::opted_in`).

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::e2e::{cargo_ok as cargo, shared_build_env, target_dir};
use rsbuilder::scaffold::{File, IfExists, Plan};

/// Builds the manager and copies the binary out of the shared target directory (another
/// project built there later would replace `target/debug/manager`).
fn build_manager(dir: &Path, into: &Path) -> PathBuf {
    let out = cargo(dir, &["build", "--bin", "manager"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "build warnings:\n{stderr}");
    let copy = into.join("manager");
    std::fs::copy(target_dir().join("debug/manager"), &copy).unwrap();
    copy
}

fn init(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn no_cluster_exit(manager: &Path) {
    let out = Command::new(manager)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: no Kubernetes cluster configured")
            && stderr.contains("/nonexistent/kubeconfig"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The Lease stored by [`fake_api_server`].
type LeaseStore = std::sync::Arc<std::sync::Mutex<Option<serde_json::Value>>>;

/// A stand-in API server, enough for the manager: `/version`, and one coordination.k8s.io
/// Lease (GET, POST, PATCH merging `spec`, `null` removing a field). Returns its port and
/// the Lease as stored.
fn fake_api_server() -> (u16, LeaseStore) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let store = LeaseStore::default();
    let lease = store.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let lease = lease.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0;
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 {
                            return;
                        }
                        if header == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let (status, reply) = answer(&request_line, &body, &lease);
                    let reply = reply.to_string();
                    let response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                    if stream.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, store)
}

fn not_found() -> serde_json::Value {
    serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": "not found", "reason": "NotFound", "code": 404})
}

fn answer(
    request_line: &str,
    body: &[u8],
    lease: &LeaseStore,
) -> (&'static str, serde_json::Value) {
    use serde_json::json;
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if path.starts_with("/version") {
        return (
            "200 OK",
            json!({"major": "1", "minor": "37", "gitVersion": "v1.37.0", "gitCommit": "",
                   "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "",
                   "platform": "linux/amd64"}),
        );
    }
    if let Some(review) = review(method, path, body) {
        return ("201 Created", review);
    }
    if !path.starts_with("/apis/coordination.k8s.io/v1/namespaces/") {
        return ("404 Not Found", not_found());
    }
    let mut stored = lease.lock().unwrap();
    let body: serde_json::Value = serde_json::from_slice(body).unwrap_or(json!({}));
    match (method, stored.as_mut()) {
        ("GET", Some(current)) => ("200 OK", current.clone()),
        ("POST", None) => {
            let mut created = body;
            created["metadata"]["resourceVersion"] = json!("1");
            if created.get("spec").is_none_or(|s| s.is_null()) {
                created["spec"] = json!({});
            }
            *stored = Some(created.clone());
            ("201 Created", created)
        }
        ("PATCH", Some(current)) => {
            if let Some(spec) = body.get("spec").and_then(|s| s.as_object()) {
                for (key, value) in spec {
                    let target = current["spec"].as_object_mut().unwrap();
                    if value.is_null() {
                        target.remove(key);
                    } else {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
            ("200 OK", current.clone())
        }
        _ => ("404 Not Found", not_found()),
    }
}

/// The bearer token the fake API server authenticates as a scraper allowed to get /metrics.
const SCRAPER_TOKEN: &str = "scraper-token";
/// A token the fake API server authenticates as `alice`, who may not get /metrics.
const ALICE_TOKEN: &str = "alice-token";

/// The fake API server's TokenReviews (only [`SCRAPER_TOKEN`] and [`ALICE_TOKEN`]
/// authenticate) and SubjectAccessReviews (only the scraper may `get` `/metrics`): the
/// review as posted, with a status. `None` for any other request.
fn review(method: &str, path: &str, body: &[u8]) -> Option<serde_json::Value> {
    use serde_json::json;
    if method != "POST" {
        return None;
    }
    let mut review: serde_json::Value = serde_json::from_slice(body).ok()?;
    let spec = review["spec"].clone();
    review["status"] = match path.split('?').next().unwrap_or(path) {
        "/apis/authentication.k8s.io/v1/tokenreviews" => match spec["token"].as_str() {
            Some(SCRAPER_TOKEN) => json!({"authenticated": true,
                "user": {"username": "system:serviceaccount:monitoring:prometheus"}}),
            Some(ALICE_TOKEN) => json!({"authenticated": true, "user": {"username": "alice"}}),
            _ => json!({"authenticated": false}),
        },
        "/apis/authorization.k8s.io/v1/subjectaccessreviews" => json!({
            "allowed": spec["user"] == "system:serviceaccount:monitoring:prometheus"
                && spec["nonResourceAttributes"] == json!({"path": "/metrics", "verb": "get"})
        }),
        _ => return None,
    };
    Some(review)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` over HTTP/1.0; returns the whole response text, or `None` if not reachable.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// `GET https://127.0.0.1:<port><path>` with curl (not verifying the self-signed
/// certificate), with `token` as the bearer token. Returns the status code and the response
/// text (headers and body). `None` when curl is not installed.
fn https_get(port: u16, path: &str, token: Option<&str>) -> Option<(u16, String)> {
    let mut curl = Command::new("curl");
    curl.args(["--silent", "--insecure", "--include", "--max-time", "5"]);
    if let Some(token) = token {
        curl.arg("--header")
            .arg(format!("Authorization: Bearer {token}"));
    }
    let out = curl
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "curl failed ({}): {text}", out.status);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text}"));
    Some((status, text))
}

/// The default metrics endpoint: HTTPS, 401 without a token or with one the TokenReview does
/// not authenticate, 403 for a user the SubjectAccessReview denies, the metrics for a user
/// it allows.
fn secure_metrics_check(port: u16) {
    let Some((status, text)) = https_get(port, "/metrics", None) else {
        common::missing("curl is not installed: the HTTPS /metrics checks");
        return;
    };
    assert_eq!(status, 401, "{text}");
    let (status, text) = https_get(port, "/metrics", Some("forged-token")).unwrap();
    assert_eq!(status, 401, "{text}");
    let (status, text) = https_get(port, "/metrics", Some(ALICE_TOKEN)).unwrap();
    assert_eq!(status, 403, "{text}");
    assert!(
        text.ends_with("Authorization denied for user alice"),
        "{text}"
    );
    let (status, text) = https_get(port, "/metrics", Some(SCRAPER_TOKEN)).unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
}

/// Starts the manager against the fake API server, checks probes and metrics (HTTPS with
/// token checks by default, plain HTTP with `--metrics-secure=false`), sends SIGTERM and
/// expects a clean exit (status 0) within 15 seconds.
fn serves_and_stops_on_sigterm(
    manager: &Path,
    scratch: &Path,
    extra_args: &[&str],
) -> (String, Option<serde_json::Value>) {
    let (api, lease) = fake_api_server();
    let kubeconfig = scratch.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:{api}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\nusers:\n- name: fake\n  user:\n    token: fake\ncurrent-context: fake\n"
        ),
    )
    .unwrap();
    let (metrics, probes) = (free_port(), free_port());
    let mut child = Command::new(manager)
        .arg(format!("--metrics-bind-address=127.0.0.1:{metrics}"))
        .arg(format!("--health-probe-bind-address=127.0.0.1:{probes}"))
        .args(extra_args)
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let ready = loop {
        if let Some(text) = http_get(probes, "/readyz") {
            break text;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "manager never became ready:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        ready.starts_with("HTTP/1.0 200") || ready.starts_with("HTTP/1.1 200"),
        "{ready}"
    );
    assert!(ready.ends_with("ok"), "{ready}");
    let healthz = http_get(probes, "/healthz").unwrap();
    assert!(healthz.ends_with("\r\n\r\nok"), "{healthz}");
    if extra_args.contains(&"--metrics-secure=false") {
        let metrics_text = http_get(metrics, "/metrics").unwrap();
        assert!(
            metrics_text.contains("content-type: application/openmetrics-text; version=1.0.0"),
            "{metrics_text}"
        );
        assert!(metrics_text.ends_with("# EOF\n"), "{metrics_text}");
    } else {
        secure_metrics_check(metrics);
    }

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("manager did not stop within 15s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "exit {:?}:\n{stderr}", out.status);
    assert!(stderr.contains("received SIGTERM"), "{stderr}");
    assert!(stderr.contains("manager stopped"), "{stderr}");
    let lease = lease.lock().unwrap().clone();
    (stderr, lease)
}

fn kustomize(dir: &Path) {
    match Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(dir)
        .output()
    {
        Err(_) => common::missing("kubectl is not installed: `kubectl kustomize config/default`"),
        Ok(out) => {
            assert!(
                out.status.success(),
                "kubectl kustomize config/default failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let yaml = String::from_utf8(out.stdout).unwrap();
            assert!(yaml.contains("kind: Deployment"), "{yaml}");
        }
    }
}

/// Code shaped like what `create api` and `create webhook` insert at the markers: proves the
/// contract (`runner.spawn` of `anyhow::Result<()>` tasks, `runner.manager()`, `runner.args()`)
/// compiles.
fn insert_demo_controller_and_webhook(dir: &Path) {
    let mut plan = Plan::new(dir, false);
    plan.insert("src/lib.rs", "modules", "pub mod controller;");
    plan.add(File::new(
        "src/controller/mod.rs",
        "//! Controllers.\n\npub mod demo_controller;\n",
        IfExists::Error,
    ));
    plan.add(File::new(
        "src/controller/demo_controller.rs",
        "//! A controller that only waits for shutdown.\n\nuse rsbuilder_runtime::Manager;\n\n\
         /// Runs until the manager shuts down.\n\
         pub async fn run(mgr: Manager) -> anyhow::Result<()> {\n    \
         tracing::info!(namespace = ?mgr.namespace, \"demo controller started\");\n    \
         mgr.shutdown.cancelled().await;\n    \
         mgr.metrics.reconcile(\"demo\", std::time::Duration::ZERO, \"success\");\n    \
         tracing::info!(\"demo controller stopped\");\n    Ok(())\n}\n",
        IfExists::Error,
    ));
    plan.insert(
        "src/main.rs",
        "controllers",
        "runner.spawn(ai_operator::controller::demo_controller::run(runner.manager()));",
    );
    plan.insert(
        "src/main.rs",
        "webhooks",
        "let (shutdown, args) = (runner.manager().shutdown, runner.args().clone());\n\
         runner.spawn({\n    \
         let port = args.webhook_port;\n    let cert_dir = args.webhook_cert_dir.clone();\n    \
         async move {\n        tracing::info!(port, cert_dir = %cert_dir.display(), \"demo webhook server started\");\n        \
         shutdown.cancelled().await;\n        Ok(())\n    }\n});",
    );
    plan.apply().unwrap();
}

#[test]
fn generated_project_builds_tests_renders_and_runs() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    init(&dir);

    // Done-when: cargo build and cargo test succeed with no edit; clippy is clean.
    let manager = build_manager(&dir, tmp.path());
    // The manager's own tests live with the runtime (rsbuilder's runtime/tests); a fresh
    // project has none of its own, and its test build must still pass.
    let out = cargo(&dir, &["test"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("FAILED"), "{stdout}");
    // tests/e2e.rs compiles, and waits for a cluster.
    let ignored = "the_manager_reconciles_the_samples_and_serves_metrics ... ignored, needs a cluster: KUBECONFIG";
    assert!(
        stdout.contains(ignored),
        "{ignored} missing in
{stdout}"
    );
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    kustomize(&dir);

    no_cluster_exit(&manager);
    let (log, _) = serves_and_stops_on_sigterm(&manager, tmp.path(), &[]);
    assert!(log.contains("metrics server listening (HTTPS)"), "{log}");
    let (log, _) = serves_and_stops_on_sigterm(&manager, tmp.path(), &["--metrics-secure=false"]);
    assert!(log.contains("without TLS or authentication"), "{log}");

    // The markers' contract, with code inserted as later commands do.
    insert_demo_controller_and_webhook(&dir);
    let manager = build_manager(&dir, tmp.path());
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    let (log, lease) = serves_and_stops_on_sigterm(&manager, tmp.path(), &[]);
    assert!(
        lease.is_none(),
        "no Lease without --leader-elect: {lease:?}"
    );
    for line in [
        "demo webhook server started",
        "demo controller started",
        "demo controller stopped",
    ] {
        assert!(log.contains(line), "{line} missing in\n{log}");
    }

    // With --leader-elect: the Lease is taken before controllers start and given up at exit.
    let (log, lease) = serves_and_stops_on_sigterm(&manager, tmp.path(), &["--leader-elect"]);
    let acquired = log.find("acquired the leader-election Lease").expect(&log);
    let started = log.find("demo controller started").expect(&log);
    assert!(acquired < started, "{log}");
    assert!(
        log.contains("lease=default/ai-operator.ai.example.com"),
        "{log}"
    );
    let lease = lease.expect("the manager created its Lease");
    assert_eq!(lease["metadata"]["name"], "ai-operator.ai.example.com");
    assert!(
        lease["spec"].get("holderIdentity").is_none(),
        "the Lease is released at exit: {lease}"
    );
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
    // Shutdown order: controllers stop, the Lease is given up, and only then the metrics and
    // probe servers stop (they serve until the controllers are done).
    let stopped = log.find("demo controller stopped").expect(&log);
    let released = log.find("left leader election").expect(&log);
    assert!(stopped < released, "{log}");
    for server in ["metrics server stopped", "health probe server stopped"] {
        let at = log
            .find(server)
            .unwrap_or_else(|| panic!("{server} missing in\n{log}"));
        assert!(
            released < at,
            "{server} before the Lease was released:\n{log}"
        );
    }
}

/// One instruction of a Dockerfile stage: the keyword and the rest of the line, continuation
/// lines (`\` at the end) joined.
fn dockerfile_stage(dockerfile: &str, stage: &str) -> Vec<(String, String)> {
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in dockerfile.lines() {
        let line = line.trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    let mut instructions = Vec::new();
    let mut inside = false;
    for line in joined {
        let (keyword, rest) = line.split_once(' ').unwrap_or((&line, ""));
        if keyword == "FROM" {
            inside = rest.ends_with(&format!(" AS {stage}"));
            continue;
        }
        if inside {
            instructions.push((keyword.to_owned(), rest.trim().to_owned()));
        }
    }
    instructions
}

/// `COPY` from the build context `from` into the work directory `to`: each source, or the
/// files a trailing `*` matches (none is fine, as for Docker when another source matches), is
/// copied with its modification time, as `COPY` keeps it.
fn docker_copy(from: &Path, args: &str, to: &Path) {
    let mut parts: Vec<&str> = args.split_whitespace().collect();
    let dest = to.join(parts.pop().unwrap());
    for source in parts {
        let names: Vec<String> = match source.strip_suffix('*') {
            Some(prefix) => std::fs::read_dir(from)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(prefix))
                .collect(),
            None => vec![source.trim_end_matches('/').to_owned()],
        };
        for name in names {
            let target = if source.ends_with('/') {
                dest.clone()
            } else {
                dest.join(&name)
            };
            let status = Command::new("cp")
                .arg("-a")
                .arg(if source.ends_with('/') {
                    from.join(&name).join(".")
                } else {
                    from.join(&name)
                })
                .arg(&target)
                .status()
                .unwrap();
            assert!(status.success(), "COPY {source}: cp failed");
        }
    }
}

/// The Dockerfile's builder stage, run without Docker (none runs here): its `COPY`s from the
/// generated project into an empty work directory, and its `RUN` commands through `sh`, with
/// three changes for time and disk: the debug profile instead of `--release`, the shared
/// target directory, and `/manager` under a temporary directory. This shows that the
/// dependency layer builds from `Cargo.toml` alone, that `src/` is all the project needs, and
/// that the binary is the real manager, not the placeholder of the dependency layer (the
/// sources keep their older modification times, as with `COPY`).
#[test]
fn dockerfile_builder_stage_builds_the_real_manager() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // A name of its own, so this build and the other tests' do not share artifacts.
    let dir = tmp.path().join("docker-check");
    std::fs::create_dir(&dir).unwrap();
    init(&dir);
    let dockerfile = std::fs::read_to_string(dir.join("Dockerfile")).unwrap();
    let builder = dockerfile_stage(&dockerfile, "builder");
    let copies: Vec<&str> = builder
        .iter()
        .filter(|(k, _)| k == "COPY")
        .map(|(_, a)| a.as_str())
        .collect();
    assert_eq!(
        copies,
        [
            "Cargo.toml Cargo.lock* ./",
            "rsbuilder-runtime/ rsbuilder-runtime/",
            "src/ src/"
        ]
    );

    // The sources are older than what the dependency layer builds, as in a real build.
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir.join("src")).unwrap() {
        let file = std::fs::File::options()
            .write(true)
            .open(entry.unwrap().path())
            .unwrap();
        file.set_modified(old).unwrap();
    }

    let work = tmp.path().join("workspace");
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let target = target_dir();
    for (keyword, args) in &builder {
        match keyword.as_str() {
            "WORKDIR" => std::fs::create_dir_all(&work).unwrap(),
            "COPY" => docker_copy(&dir, args, &work),
            "RUN" => {
                let command = args
                    .replace(" --release", "")
                    .replace("target/release/", &format!("{}/debug/", target.display()))
                    .replace(" /manager", &format!(" {}/manager", root.display()));
                let mut sh = Command::new("sh");
                sh.args(["-ec", &command]).current_dir(&work);
                let out = shared_build_env(&mut sh).output().unwrap();
                assert!(
                    out.status.success(),
                    "RUN {command}:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            other => panic!("unexpected {other} in the builder stage"),
        }
    }
    let out = Command::new(root.join("manager"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(help.contains("--metrics-bind-address"), "{help}");

    // The runtime stage runs that binary as non-root, with nothing else in the image.
    let runtime = dockerfile.split("\nFROM ").nth(2).unwrap();
    assert!(
        runtime.starts_with("gcr.io/distroless/cc-debian12:nonroot\n"),
        "{runtime}"
    );
    for line in [
        "COPY --from=builder /manager /manager\n",
        "USER 65532:65532\n",
        "ENTRYPOINT [\"/manager\"]\n",
    ] {
        assert!(runtime.contains(line), "{line} missing in\n{runtime}");
    }
}
