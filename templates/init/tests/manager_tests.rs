{{ p.rust_header }}//! Tests of the manager: flags, metrics and the HTTP endpoints (called in-process), and the
//! binary's exit when no cluster is configured. None of them needs a cluster.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use clap::Parser as _;
use http::{Request, StatusCode};
use tower_test::mock::Spawn;

use {{ p.crate_name }}::manager::{self, Args, LogFormat, Manager, Metrics};

/// Sends one request to an axum router and returns status, content type and body.
async fn call(router: axum::Router, uri: &str) -> (StatusCode, String, String) {
    let mut svc = Spawn::new(router);
    assert!(svc.poll_ready::<Request<Body>>().is_ready());
    let response = svc
        .call(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

#[test]
fn flags_default_like_a_kubebuilder_manager() {
    let args = Args::try_parse_from(["manager"]).unwrap();
    assert_eq!(args.metrics_bind_address, ":8080");
    assert_eq!(args.health_probe_bind_address, ":8081");
    assert!(!args.leader_elect);
    assert_eq!(args.leader_election_namespace, None);
    assert_eq!(args.leader_election_id, manager::LEADER_ELECTION_ID);
    assert!(args.leader_election_id.starts_with(env!("CARGO_PKG_NAME")));
    assert_eq!(args.log_format, LogFormat::Text);
    assert_eq!(args.webhook_port, 9443);
    assert_eq!(
        args.webhook_cert_dir,
        std::path::PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
    );
}

#[test]
fn flags_parse() {
    let args = Args::try_parse_from([
        "manager",
        "--leader-elect",
        "--metrics-bind-address=127.0.0.1:9090",
        "--log-format=json",
        "--namespace=team-a",
    ])
    .unwrap();
    assert!(args.leader_elect);
    assert_eq!(args.metrics_bind_address, "127.0.0.1:9090");
    assert_eq!(args.log_format, LogFormat::Json);
    assert_eq!(args.namespace.as_deref(), Some("team-a"));
    assert!(Args::try_parse_from(["manager", "--log-format=xml"]).is_err());
}

#[test]
fn bind_addresses_follow_the_go_style() {
    let parse = |v| manager::parse_bind_address("--metrics-bind-address", v);
    assert_eq!(
        parse(":8080").unwrap(),
        Some("0.0.0.0:8080".parse().unwrap())
    );
    assert_eq!(
        parse("127.0.0.1:9090").unwrap(),
        Some("127.0.0.1:9090".parse().unwrap())
    );
    assert_eq!(
        parse("[::1]:80").unwrap(),
        Some("[::1]:80".parse().unwrap())
    );
    assert_eq!(parse("0").unwrap(), None);
    let err = parse("eighty").unwrap_err().to_string();
    assert!(err.contains("--metrics-bind-address"), "{err}");
}

#[test]
fn metrics_count_reconciles_per_controller_and_result() {
    let metrics = Metrics::default();
    metrics.reconcile("aijob", Duration::from_millis(20), "success");
    metrics.reconcile("aijob", Duration::from_millis(30), "success");
    metrics.reconcile("aijob", Duration::from_secs(2), "error");
    let text = metrics.encode();
    assert!(
        text.contains(
            r#"controller_runtime_reconcile_total{controller="aijob",result="success"} 2"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"controller_runtime_reconcile_total{controller="aijob",result="error"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"controller_runtime_reconcile_time_seconds_count{controller="aijob"} 3"#),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
}

#[tokio::test]
async fn metrics_endpoint_serves_openmetrics() {
    let metrics = Arc::new(Metrics::default());
    metrics.reconcile("aijob", Duration::from_millis(5), "success");
    let (status, content_type, body) = call(manager::metrics_router(metrics), "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, manager::OPENMETRICS_CONTENT_TYPE);
    assert!(
        body.contains("controller_runtime_reconcile_total"),
        "{body}"
    );
}

#[tokio::test]
async fn health_probes_answer_ok() {
    for path in ["/healthz", "/readyz"] {
        let (status, _, body) = call(manager::health_router(), path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(body, "ok", "{path}");
    }
    let (status, _, _) = call(manager::health_router(), "/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn manager_without_a_cluster_exits_with_a_one_line_reason() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_manager"))
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: no Kubernetes cluster configured"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn manager_for_tests_talks_to_a_mocked_api_server() {
    let (service, mut handle) =
        tower_test::mock::pair::<Request<kube::client::Body>, http::Response<kube::client::Body>>();
    let mgr = Manager::for_tests(kube::Client::new(service, "default"));
    assert_eq!(mgr.namespace, None);
    assert!(!mgr.shutdown.is_cancelled());
    let server = tokio::spawn(async move {
        let (request, send) = handle.next_request().await.expect("one request");
        assert_eq!(request.uri().path(), "/version");
        let body = serde_json::json!({
            "major": "1", "minor": "37", "gitVersion": "v1.37.0", "gitCommit": "", "gitTreeState": "",
            "buildDate": "", "goVersion": "", "compiler": "", "platform": "linux/amd64"
        });
        send.send_response(
            http::Response::builder()
                .body(kube::client::Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap(),
        );
    });
    let info = mgr.client.apiserver_version().await.unwrap();
    assert_eq!(info.git_version, "v1.37.0");
    server.await.unwrap();
}
