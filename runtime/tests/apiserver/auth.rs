//! The aggregated API server's delegated authentication and authorization over real TLS on
//! loopback: certificates made here with rcgen (a front-proxy CA, a client CA, a stranger
//! CA), a fake cluster API (plain HTTP on loopback) serving the
//! `extension-apiserver-authentication` ConfigMap and answering TokenReview and
//! SubjectAccessReview, and a client that sends requests as kube-apiserver's front proxy,
//! as a certificate user and as a token user.

use crate::common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::routing::{get, post};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use kube_derive::CustomResource;
use rsbuilder_runtime::apiserver::auth::Delegated;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use rsbuilder_runtime::tls::{self, Certificates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, pki_types};
use tokio_util::sync::CancellationToken;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    crates(kube_core = "::kube_core")
)]
pub struct WidgetSpec {
    pub size: i32,
}

type Issuer = rcgen::Issuer<'static, rcgen::KeyPair>;

fn ca(name: &str) -> (String, Issuer) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let pem = params.self_signed(&key).unwrap().pem();
    (pem, rcgen::Issuer::new(params, key))
}

/// A client certificate (client-auth usage) and its key, as PEM.
fn client_pem(issuer: &Issuer, cn: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, issuer).unwrap().pem();
    (cert, key.serialize_pem())
}

/// A client certificate (client-auth usage) and its key.
fn client_cert(
    issuer: &Issuer,
    cn: &str,
    orgs: &[&str],
) -> (
    Vec<pki_types::CertificateDer<'static>>,
    pki_types::PrivateKeyDer<'static>,
) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    for o in orgs {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *o);
    }
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, issuer).unwrap().der().clone();
    let key = pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    (vec![cert], key)
}

/// What the fake cluster saw (every SubjectAccessReview spec), and the ConfigMap data it
/// serves (a test may rotate it).
#[derive(Default)]
struct Seen {
    reviews: Mutex<Vec<Value>>,
    data: Mutex<BTreeMap<String, String>>,
}

/// The fake cluster API on loopback: the ConfigMap, TokenReview (`good-token` is carol in
/// `system:authenticated`), SubjectAccessReview (everyone but mallory is allowed).
async fn fake_cluster(seen: Arc<Seen>) -> SocketAddr {
    let served = seen.clone();
    let app = axum::Router::new()
        .route(
            "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
            get(move || {
                let data = served.data.lock().unwrap().clone();
                async move {
                    axum::Json(json!({
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "extension-apiserver-authentication",
                                     "namespace": "kube-system"},
                        "data": data,
                    }))
                }
            }),
        )
        .route(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            post(|axum::Json(review): axum::Json<Value>| async move {
                let status = if review["spec"]["token"] == "good-token" {
                    json!({"authenticated": true,
                           "user": {"username": "carol", "groups": ["system:authenticated"]}})
                } else {
                    json!({"authenticated": false})
                };
                axum::Json(json!({
                    "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                    "spec": review["spec"], "status": status,
                }))
            }),
        )
        .route(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            post(move |axum::Json(review): axum::Json<Value>| {
                let seen = seen.clone();
                async move {
                    seen.reviews.lock().unwrap().push(review["spec"].clone());
                    let status = if review["spec"]["user"] == "mallory" {
                        json!({"allowed": false, "reason": "mallory may not"})
                    } else {
                        json!({"allowed": true})
                    };
                    axum::Json(json!({
                        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                        "spec": review["spec"], "status": status,
                    }))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

struct Fixture {
    addr: SocketAddr,
    server_cert: pki_types::CertificateDer<'static>,
    front_proxy: Issuer,
    client_ca: Issuer,
    seen: Arc<Seen>,
    auth: Arc<Delegated>,
    _dir: tempfile::TempDir,
    shutdown: CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start() -> Fixture {
    let (client_pem, client_ca) = ca("client-ca");
    let (proxy_pem, front_proxy) = ca("front-proxy-ca");
    let data: BTreeMap<String, String> = [
        ("client-ca-file", client_pem.as_str()),
        ("requestheader-client-ca-file", proxy_pem.as_str()),
        ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
        ("requestheader-username-headers", r#"["X-Remote-User"]"#),
        ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
        (
            "requestheader-extra-headers-prefix",
            r#"["X-Remote-Extra-"]"#,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let seen = Arc::new(Seen {
        data: Mutex::new(data),
        ..Default::default()
    });
    let cluster = fake_cluster(seen.clone()).await;
    let client = kube::Client::try_from(kube::Config::new(
        format!("http://{cluster}").parse().unwrap(),
    ))
    .unwrap();
    let auth = Delegated::from_cluster(client).await.unwrap();

    let mut config = Config::new(vec![ApiKind::of::<Widget>().unwrap()]);
    config.auth = Some(auth.clone());
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("store.redb")).unwrap();
    let shutdown = CancellationToken::new();
    let certs = Arc::new(Certificates::self_signed(&["localhost"]).unwrap());
    let server_cert = certs.leaf().unwrap();
    let listener = tls::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = ApiServer::new(config, store, shutdown.clone());
    tokio::spawn(async move { server.serve(listener, certs, axum::Router::new()).await });
    Fixture {
        addr,
        server_cert,
        front_proxy,
        client_ca,
        seen,
        auth,
        _dir: dir,
        shutdown,
    }
}

type ClientCert = (
    Vec<pki_types::CertificateDer<'static>>,
    pki_types::PrivateKeyDer<'static>,
);

impl Fixture {
    /// Sends `GET path` with `headers`, presenting `cert` if given; the status and body.
    async fn get(
        &self,
        path: &str,
        cert: Option<ClientCert>,
        headers: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.server_cert.clone()).unwrap();
        let builder =
            rustls::ClientConfig::builder_with_provider(rsbuilder_runtime::tls::crypto_provider())
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots);
        let config = match cert {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key).unwrap(),
            None => builder.with_no_client_auth(),
        };
        let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let tls = TlsConnector::from(Arc::new(config))
            .connect(pki_types::ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(conn);
        let mut request = http::Request::get(path).header("host", "localhost");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = send
            .send_request(request.body(Empty::<Bytes>::new()).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
        (status, body)
    }

    fn last_review(&self) -> Value {
        self.seen.reviews.lock().unwrap().last().cloned().unwrap()
    }
}

const LIST: &str = "/apis/example.com/v1/namespaces/default/widgets";

#[tokio::test]
async fn requests_without_accepted_credentials_are_401() {
    let f = start().await;
    let (_, stranger) = ca("stranger-ca");
    let remote_user = [("X-Remote-User", "alice")];
    let cases = [
        ("no credentials", None, &[][..]),
        (
            "front-proxy certificate with a CN not allowed",
            Some(client_cert(&f.front_proxy, "not-the-proxy", &[])),
            &remote_user[..],
        ),
        (
            "certificate from an unknown CA",
            Some(client_cert(&stranger, "front-proxy-client", &[])),
            &remote_user[..],
        ),
        (
            "X-Remote-User without a front-proxy certificate",
            None,
            &remote_user[..],
        ),
        (
            "unknown token",
            None,
            &[("Authorization", "Bearer bad-token")][..],
        ),
    ];
    for (what, cert, headers) in cases {
        let (code, body) = f.get(LIST, cert, headers).await;
        assert_eq!(code, 401, "{what}: {body}");
        assert_eq!(body["kind"], "Status", "{what}");
        assert_eq!(body["reason"], "Unauthorized", "{what}");
        assert_eq!(body["code"], 401, "{what}");
    }
    assert!(
        f.seen.reviews.lock().unwrap().is_empty(),
        "no SubjectAccessReview for an unauthenticated request"
    );
}

#[tokio::test]
async fn the_health_paths_need_no_credentials() {
    let f = start().await;
    for path in ["/healthz", "/readyz", "/livez"] {
        let (code, body) = f.get(path, None, &[]).await;
        assert_eq!((code, body), (200, Value::String("ok".into())), "{path}");
    }
    assert!(f.seen.reviews.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_front_proxy_request_is_the_user_in_its_headers() {
    let f = start().await;
    let proxy = client_cert(&f.front_proxy, "front-proxy-client", &[]);
    let (code, body) = f
        .get(
            LIST,
            Some(proxy),
            &[
                ("X-Remote-User", "alice"),
                ("X-Remote-Group", "system:authenticated"),
                ("X-Remote-Extra-Scopes", "db"),
            ],
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["kind"], "WidgetList");
    assert_eq!(
        f.last_review(),
        json!({
            "user": "alice",
            "groups": ["system:authenticated"],
            "extra": {"scopes": ["db"]},
            "resourceAttributes": {
                "group": "example.com", "version": "v1", "resource": "widgets",
                "namespace": "default", "verb": "list",
            },
        })
    );
}

#[tokio::test]
async fn a_client_certificate_is_its_cn_in_its_organizations() {
    let f = start().await;
    let cert = client_cert(&f.client_ca, "dave", &["devs"]);
    let (code, body) = f.get("/apis", Some(cert), &[]).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        f.last_review(),
        json!({
            "user": "dave",
            "groups": ["devs"],
            "nonResourceAttributes": {"path": "/apis", "verb": "get"},
        })
    );
}

#[tokio::test]
async fn a_bearer_token_is_reviewed_and_the_decision_cached() {
    let f = start().await;
    let token = [("Authorization", "Bearer good-token")];
    let (code, body) = f.get(&format!("{LIST}?watch=false"), None, &token).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(f.last_review()["user"], "carol");
    assert_eq!(f.last_review()["resourceAttributes"]["verb"], "list");
    let (code, _) = f.get(&format!("{LIST}?watch=false"), None, &token).await;
    assert_eq!(code, 200);
    assert_eq!(
        f.seen.reviews.lock().unwrap().len(),
        1,
        "the second identical request uses the cached decision"
    );
}

#[tokio::test]
async fn a_denied_request_is_403_with_the_reason() {
    let f = start().await;
    let cert = client_cert(&f.client_ca, "mallory", &[]);
    let (code, body) = f.get(&format!("{LIST}/main"), Some(cert), &[]).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["message"],
        "widgets.example.com \"main\" is forbidden: User \"mallory\" cannot get resource \
         \"widgets\" in API group \"example.com\" in the namespace \"default\": mallory may not"
    );
}

#[tokio::test]
async fn a_rotated_client_ca_applies_after_a_refresh() {
    let f = start().await;
    let (new_pem, new_ca) = ca("rotated-client-ca");
    let (code, _) = f
        .get(LIST, Some(client_cert(&new_ca, "erin", &[])), &[])
        .await;
    assert_eq!(code, 401, "not trusted before the rotation");
    f.seen
        .data
        .lock()
        .unwrap()
        .insert("client-ca-file".into(), new_pem);
    f.auth.refresh().await.unwrap();
    let (code, body) = f
        .get(LIST, Some(client_cert(&new_ca, "erin", &[])), &[])
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(f.last_review()["user"], "erin");
    let (code, _) = f
        .get(LIST, Some(client_cert(&f.client_ca, "dave", &[])), &[])
        .await;
    assert_eq!(code, 401, "the replaced CA is no longer trusted");

    f.seen
        .data
        .lock()
        .unwrap()
        .insert("requestheader-allowed-names".into(), "not json".into());
    let err = f.auth.refresh().await.unwrap_err().to_string();
    assert!(err.contains("requestheader-allowed-names"), "{err}");
    let (code, _) = f
        .get(LIST, Some(client_cert(&new_ca, "erin", &[])), &[])
        .await;
    assert_eq!(
        code, 200,
        "a ConfigMap that does not parse keeps the previous settings"
    );
}

/// Runs `kubectl get --raw path` as the holder of a client certificate for `cn`; its exit
/// status and output (stdout, then stderr).
async fn kubectl_as(f: &Fixture, issuer: &Issuer, cn: &str, path: &'static str) -> (bool, String) {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (cert, key) = client_pem(issuer, cn);
    let kubeconfig = f._dir.path().join(format!("kubeconfig-{cn}"));
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster:\n    server: https://{}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: c\n  context: {{cluster: s, user: u}}\ncurrent-context: c\n",
            f.addr,
            b64(&cert),
            b64(&key)
        ),
    )
    .unwrap();
    // kubectl runs on the blocking pool while this runtime serves its requests.
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "--raw", path])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn kubectl_authenticates_with_a_client_certificate() {
    if std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        common::missing("kubectl is not installed");
        return;
    }
    let f = start().await;
    let (ok, out) = kubectl_as(&f, &f.client_ca, "dave", LIST).await;
    assert!(ok, "{out}");
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(f.last_review()["user"], "dave");

    let (ok, out) = kubectl_as(&f, &f.client_ca, "mallory", LIST).await;
    assert!(!ok, "{out}");
    assert!(out.contains("Error from server (Forbidden)"), "{out}");

    let (_, stranger) = ca("stranger-ca");
    let (ok, out) = kubectl_as(&f, &stranger, "dave", LIST).await;
    assert!(!ok, "{out}");
    assert!(out.contains("Unauthorized"), "{out}");
}
