//! Tests of the manager: flags, metrics and the HTTP endpoints (called in-process), the
//! HTTPS metrics endpoint's token checks (against a mocked API server), and the order of the
//! start-up checks. None of them needs a cluster. (The manager binary's exit without a
//! cluster is tested end to end on a generated project: rsbuilder's tests/e2e/init.rs.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_util::sync::CancellationToken;

use rsbuilder_runtime::manager::{self, Args, LogFormat, Manager, Options, Runner};
use rsbuilder_runtime::metrics::{self, Metrics};
use rsbuilder_runtime::routes::{self, Routes};
use rsbuilder_runtime::tls;

const OPTIONS: Options = Options {
    version: "1.2.3",
    leader_election_id: "ai-operator.ai.example.com",
    namespaced: false,
};

fn parse(args: &[&str]) -> Result<Args, clap::Error> {
    Args::try_parse_from_with(
        &OPTIONS,
        std::iter::once("manager").chain(args.iter().copied()),
    )
}

/// Sends one request to `routes` and returns status, content type and body.
async fn call(routes: Routes, uri: &str) -> (StatusCode, String, String) {
    let response = routes
        .call(Request::get(uri).body(routes::empty()).unwrap())
        .await;
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

#[test]
fn flags_default_like_a_kubebuilder_manager() {
    let args = parse(&[]).unwrap();
    assert_eq!(args.metrics_bind_address, ":8443");
    assert!(args.metrics_secure);
    assert_eq!(args.metrics_cert_path, None);
    assert_eq!(args.health_probe_bind_address, ":8081");
    assert!(!args.leader_elect);
    assert_eq!(args.leader_election_namespace, None);
    assert_eq!(args.leader_election_id, "ai-operator.ai.example.com");
    assert_eq!(args.namespace, None);
    assert_eq!(args.log_format, LogFormat::Text);
    assert_eq!(args.webhook_port, 9443);
    assert_eq!(
        args.webhook_cert_dir,
        std::path::PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
    );
}

#[test]
fn flags_parse() {
    let args = parse(&[
        "--leader-elect",
        "--metrics-bind-address=127.0.0.1:9090",
        "--log-format=json",
        "--namespace=team-a",
        "--metrics-secure=false",
        "--metrics-cert-path=/certs",
    ])
    .unwrap();
    assert!(args.leader_elect);
    assert_eq!(args.metrics_bind_address, "127.0.0.1:9090");
    assert!(!args.metrics_secure);
    assert_eq!(
        args.metrics_cert_path,
        Some(std::path::PathBuf::from("/certs"))
    );
    assert!(parse(&["--metrics-secure"]).unwrap().metrics_secure);
    assert_eq!(args.log_format, LogFormat::Json);
    assert_eq!(args.namespace.as_deref(), Some("team-a"));
    assert!(parse(&["--log-format=xml"]).is_err());
}

#[test]
fn bind_addresses_follow_the_go_style() {
    let parse = |v| manager::parse_bind_address("--metrics-bind-address", v);
    assert_eq!(parse(":8443").unwrap(), Some("[::]:8443".parse().unwrap()));
    assert_eq!(
        parse("127.0.0.1:9090").unwrap(),
        Some("127.0.0.1:9090".parse().unwrap())
    );
    assert_eq!(
        parse("[::1]:80").unwrap(),
        Some("[::1]:80".parse().unwrap())
    );
    assert_eq!(parse("0").unwrap(), None);
    // Host names are resolved; an IPv4 address is preferred.
    assert_eq!(
        parse("localhost:8443").unwrap(),
        Some("127.0.0.1:8443".parse().unwrap())
    );
    for bad in [
        "eighty",
        ":",
        ":http",
        ":70000",
        "localhost",
        "localhost:port",
        "::1:80",
    ] {
        let err = parse(bad).unwrap_err().to_string();
        assert!(err.contains("--metrics-bind-address"), "{bad}: {err}");
        assert!(
            err.contains("expected `:PORT`, `HOST:PORT` or `0`"),
            "{bad}: {err}"
        );
    }
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
    let (status, content_type, body) = call(metrics::metrics_routes(metrics), "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, metrics::OPENMETRICS_CONTENT_TYPE);
    assert!(
        body.contains("controller_runtime_reconcile_total"),
        "{body}"
    );
}

#[tokio::test]
async fn health_probes_answer_ok() {
    for path in ["/healthz", "/readyz"] {
        let (status, _, body) = call(metrics::health_routes(), path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(body, "ok", "{path}");
    }
    let (status, _, _) = call(metrics::health_routes(), "/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn a_namespaced_project_reads_its_namespace_from_pod_namespace() {
    let namespaced = Options {
        namespaced: true,
        ..OPTIONS
    };
    let command = <Args as clap::CommandFactory>::command();
    let plain = command
        .get_arguments()
        .find(|a| a.get_id() == "namespace")
        .unwrap();
    assert_eq!(plain.get_env(), None);
    let args = Args::try_parse_from_with(&namespaced, ["manager", "--namespace=team-b"]).unwrap();
    assert_eq!(args.namespace.as_deref(), Some("team-b"));
    let help = Args::try_parse_from_with(&namespaced, ["manager", "--help"])
        .unwrap_err()
        .to_string();
    assert!(help.contains("POD_NAMESPACE"), "{help}");
    assert!(help.contains("the namespace the manager runs in"), "{help}");
    let version = parse(&["--version"]).unwrap_err().to_string();
    assert_eq!(version.trim(), "manager 1.2.3");
}

#[test]
fn one_line_joins_causes_not_already_spelled_out() {
    let err = anyhow::anyhow!("reading /x: denied")
        .context("cannot load /x")
        .context("cannot load /x: reading /x: denied");
    assert_eq!(
        manager::one_line(&err),
        "cannot load /x: reading /x: denied"
    );
    let err = anyhow::anyhow!("line one\nline two").context("outer");
    assert_eq!(manager::one_line(&err), "outer: line one line two");
}

#[tokio::test]
async fn a_bad_metrics_certificate_is_reported_before_connecting() {
    let certs = tempfile::tempdir().unwrap();
    let args = parse(&[&format!("--metrics-cert-path={}", certs.path().display())]).unwrap();
    // No cluster is reachable here, so an error that does not name the certificate would
    // mean the manager connected (or tried to) first.
    let err = Runner::start(args, &OPTIONS).await.err().unwrap();
    let line = manager::one_line(&err);
    assert!(
        line.starts_with("--metrics-cert-path: cannot load the metrics certificate"),
        "{line}"
    );
    assert!(line.contains(tls::CERT_FILE), "{line}");
    assert!(!line.contains("Kubernetes"), "{line}");
    let bad = parse(&["--health-probe-bind-address=eighty"]).unwrap();
    let err = Runner::start(bad, &OPTIONS)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("--health-probe-bind-address"), "{err}");
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

/// The ServiceAccount token Prometheus scrapes with: authenticated, and allowed to get /metrics.
const SCRAPER_TOKEN: &str = "scraper-token";
/// A token the API server authenticates as `alice`, who may not get /metrics.
const ALICE_TOKEN: &str = "alice-token";
const SCRAPER: &str = "system:serviceaccount:monitoring:prometheus";

/// A mocked API server answering TokenReviews (only [`SCRAPER_TOKEN`] and [`ALICE_TOKEN`]
/// authenticate) and SubjectAccessReviews (only [`SCRAPER`] may `get` `/metrics`). Every
/// review it receives is recorded in `reviews`, in order.
fn mock_api_server(reviews: Arc<Mutex<Vec<serde_json::Value>>>) -> kube::Client {
    let (service, mut handle) =
        tower_test::mock::pair::<Request<kube::client::Body>, http::Response<kube::client::Body>>();
    tokio::spawn(async move {
        while let Some((request, send)) = handle.next_request().await {
            assert_eq!(request.method(), http::Method::POST);
            let path = request.uri().path().to_owned();
            let bytes = request.into_body().collect_bytes().await.unwrap();
            let mut review: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            reviews.lock().unwrap().push(review.clone());
            let spec = &review["spec"];
            review["status"] = match path.as_str() {
                "/apis/authentication.k8s.io/v1/tokenreviews" => match spec["token"].as_str() {
                    Some(SCRAPER_TOKEN) => serde_json::json!({
                        "authenticated": true,
                        "user": {
                            "username": SCRAPER,
                            "uid": "0d5c6b1e",
                            "groups": ["system:serviceaccounts", "system:authenticated"],
                            "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]}
                        }
                    }),
                    Some(ALICE_TOKEN) => serde_json::json!({
                        "authenticated": true,
                        "user": {"username": "alice", "groups": ["system:authenticated"]}
                    }),
                    _ => {
                        serde_json::json!({"authenticated": false, "error": "invalid bearer token"})
                    }
                },
                "/apis/authorization.k8s.io/v1/subjectaccessreviews" => {
                    let allowed = spec["user"] == SCRAPER
                        && spec["nonResourceAttributes"]
                            == serde_json::json!({"path": "/metrics", "verb": "get"});
                    serde_json::json!({"allowed": allowed, "reason": if allowed { "" } else { "no RBAC policy matched" }})
                }
                other => panic!("unexpected API request to {other}"),
            };
            send.send_response(
                http::Response::builder()
                    .status(201)
                    .body(kube::client::Body::from(
                        serde_json::to_vec(&review).unwrap(),
                    ))
                    .unwrap(),
            );
        }
    });
    kube::Client::new(service, "default")
}

/// The metrics endpoint as `src/main.rs` serves it by default: HTTPS with a self-signed
/// certificate, behind the token checks, on a free loopback port; stops when dropped.
struct SecureMetrics {
    addr: std::net::SocketAddr,
    certificate: CertificateDer<'static>,
    reviews: Arc<Mutex<Vec<serde_json::Value>>>,
    shutdown: CancellationToken,
}

impl Drop for SecureMetrics {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start_secure_metrics() -> SecureMetrics {
    let reviews = Arc::new(Mutex::new(Vec::new()));
    let client = mock_api_server(reviews.clone());
    let metrics = Arc::new(Metrics::default());
    metrics.reconcile("aijob", Duration::from_millis(5), "success");
    let routes =
        metrics::with_authentication_and_authorization(metrics::metrics_routes(metrics), client);
    let certs = Arc::new(tls::Certificates::self_signed(&["localhost"]).unwrap());
    let certificate = certs.leaf().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(tls::serve(
        listener,
        certs,
        routes,
        shutdown.clone(),
        "metrics server",
    ));
    SecureMetrics {
        addr,
        certificate,
        reviews,
        shutdown,
    }
}

impl SecureMetrics {
    /// GETs `path` over HTTPS, trusting only the server's certificate, with `token` as the
    /// bearer token. Returns the status and the body.
    async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, String) {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.certificate.clone()).unwrap();
        let config =
            rustls::ClientConfig::builder_with_provider(rsbuilder_runtime::tls::crypto_provider())
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .expect("TLS handshake with the metrics server");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(conn);
        let mut request = Request::get(path).header("host", "localhost");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn reviews(&self) -> Vec<serde_json::Value> {
        self.reviews.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn secure_metrics_without_a_token_are_unauthorized() {
    let server = start_secure_metrics().await;
    let (status, body) = server.get("/metrics", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(!body.contains("controller_runtime"), "{body}");
    // No token, no review.
    assert_eq!(server.reviews(), Vec::<serde_json::Value>::new());
    let (status, _) = server.get("/metrics", Some("")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn secure_metrics_with_an_unauthenticated_token_are_unauthorized() {
    let server = start_secure_metrics().await;
    let (status, body) = server.get("/metrics", Some("forged-token")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(!body.contains("controller_runtime"), "{body}");
    let reviews = server.reviews();
    // Only the TokenReview: an unauthenticated token is never authorized.
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(reviews[0]["kind"], "TokenReview");
    assert_eq!(reviews[0]["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(reviews[0]["spec"]["token"], "forged-token");
}

#[tokio::test]
async fn secure_metrics_for_a_user_without_access_are_forbidden() {
    let server = start_secure_metrics().await;
    let (status, body) = server.get("/metrics", Some(ALICE_TOKEN)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, "Authorization denied for user alice");
    let reviews = server.reviews();
    assert_eq!(reviews.len(), 2, "{reviews:?}");
    assert_eq!(reviews[1]["kind"], "SubjectAccessReview");
    assert_eq!(reviews[1]["spec"]["user"], "alice");
}

#[tokio::test]
async fn secure_metrics_for_an_allowed_user_are_served() {
    let server = start_secure_metrics().await;
    let (status, body) = server.get("/metrics", Some(SCRAPER_TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains(
            r#"controller_runtime_reconcile_total{controller="aijob",result="success"} 1"#
        ),
        "{body}"
    );
    let reviews = server.reviews();
    assert_eq!(reviews.len(), 2, "{reviews:?}");
    // The SubjectAccessReview carries everything the TokenReview said about the user.
    assert_eq!(reviews[1]["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(
        reviews[1]["spec"],
        serde_json::json!({
            "user": SCRAPER,
            "uid": "0d5c6b1e",
            "groups": ["system:serviceaccounts", "system:authenticated"],
            "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]},
            "nonResourceAttributes": {"path": "/metrics", "verb": "get"}
        })
    );
    // Nothing is cached: a second scrape is reviewed again.
    let (status, _) = server.get("/metrics", Some(SCRAPER_TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(server.reviews().len(), 4);
    // Unknown paths are not found, whoever asks.
    let (status, _) = server.get("/nope", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn review_access_reports_each_outcome() {
    let client = mock_api_server(Arc::new(Mutex::new(Vec::new())));
    let review = |token: &'static str, verb: &'static str| {
        let client = client.clone();
        async move {
            metrics::review_access(&client, token, "/metrics", verb)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        review("forged-token", "get").await,
        metrics::Access::Unauthenticated
    );
    assert_eq!(
        review(SCRAPER_TOKEN, "get").await,
        metrics::Access::Allowed {
            user: SCRAPER.to_owned()
        }
    );
    assert_eq!(
        review(SCRAPER_TOKEN, "post").await,
        metrics::Access::Denied {
            user: SCRAPER.to_owned(),
            reason: "no RBAC policy matched".to_owned()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn secure_metrics_answer_500_when_the_api_server_does_not_answer() {
    // An API server that takes requests and never answers them.
    let (service, mut handle) =
        tower_test::mock::pair::<Request<kube::client::Body>, http::Response<kube::client::Body>>();
    let pending = Arc::new(Mutex::new(Vec::new()));
    let held = pending.clone();
    tokio::spawn(async move {
        while let Some((request, send)) = handle.next_request().await {
            held.lock()
                .unwrap()
                .push((request.uri().path().to_owned(), send));
        }
    });
    let client = kube::Client::new(service, "default");
    let routes = metrics::with_authentication_and_authorization(
        metrics::metrics_routes(Arc::new(Metrics::default())),
        client.clone(),
    );
    let started = tokio::time::Instant::now();
    let response = routes
        .call(
            Request::get("/metrics")
                .header("authorization", format!("Bearer {SCRAPER_TOKEN}"))
                .body(routes::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let waited = started.elapsed();
    assert!(
        waited >= metrics::REVIEW_TIMEOUT && waited < metrics::REVIEW_TIMEOUT * 2,
        "{waited:?}"
    );
    let paths: Vec<String> = pending
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(paths, ["/apis/authentication.k8s.io/v1/tokenreviews"]);
    let err = metrics::review_access(&client, SCRAPER_TOKEN, "/metrics", "get")
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "TokenReview got no answer within 10s");
}

/// Serves the health routes with a 300 ms header read timeout, over TLS with a self-signed
/// certificate when `tls` is set; returns the address and the certificate.
async fn start_server_with_a_short_header_timeout(
    tls: bool,
    shutdown: &CancellationToken,
) -> (std::net::SocketAddr, Option<CertificateDer<'static>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let certs = tls.then(|| Arc::new(tls::Certificates::self_signed(&["localhost"]).unwrap()));
    let certificate = certs.as_ref().map(|c| c.leaf().unwrap());
    tokio::spawn(tls::serve_with(
        listener,
        certs,
        metrics::health_routes(),
        shutdown.clone(),
        "test server",
        Duration::from_millis(300),
    ));
    (addr, certificate)
}

/// Reads until the server closes the connection (within 5 s) and returns what it sent.
async fn read_until_closed(mut stream: impl tokio::io::AsyncRead + Unpin) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut received = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the server kept the connection open");
    String::from_utf8_lossy(&received).into_owned()
}

#[tokio::test]
async fn an_https_client_that_sends_no_request_is_disconnected() {
    let shutdown = CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    let (addr, certificate) = start_server_with_a_short_header_timeout(true, &shutdown).await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certificate.unwrap()).unwrap();
    let mut config =
        rustls::ClientConfig::builder_with_provider(rsbuilder_runtime::tls::crypto_provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let connect = || async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .expect("TLS handshake")
    };

    // Silent after the handshake (`openssl s_client` with nothing to send).
    let stream = connect().await;
    // HTTP/1.1 only: HTTP/2 is not offered.
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    read_until_closed(stream).await;

    // Headers started but never finished.
    let mut stream = connect().await;
    tokio::io::AsyncWriteExt::write_all(&mut stream, b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(stream).await;
    assert!(!answer.contains("200 OK"), "{answer}");
}

#[tokio::test]
async fn an_http_client_is_disconnected_when_idle_after_a_request() {
    let shutdown = CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    let (addr, _) = start_server_with_a_short_header_timeout(false, &shutdown).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // A complete request is answered; the kept-alive connection is then closed once the
    // next request's headers do not arrive in time.
    tokio::io::AsyncWriteExt::write_all(&mut stream, b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(stream).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.ends_with("ok"), "{answer}");
}
