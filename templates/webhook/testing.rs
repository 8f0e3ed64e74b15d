//! Test helpers for webhooks: a self-signed certificate made on the spot (rcgen), the webhook
//! server started on a loopback port, and an HTTPS client that trusts only that certificate.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_util::sync::CancellationToken;

use super::{CERT_FILE, KEY_FILE};

/// Writes a new self-signed certificate for `host` (and its key) into `dir` as `tls.crt` /
/// `tls.key`. Returns the certificate PEM, which clients use as their only trusted root.
pub fn write_cert(dir: &Path, host: &str) -> String {
    let certified = rcgen::generate_simple_self_signed(vec![host.to_string()])
        .expect("rcgen makes a self-signed certificate");
    let cert_pem = certified.cert.pem();
    std::fs::write(dir.join(CERT_FILE), &cert_pem).expect("write tls.crt");
    std::fs::write(dir.join(KEY_FILE), certified.signing_key.serialize_pem())
        .expect("write tls.key");
    cert_pem
}

/// A webhook server running on `127.0.0.1` with a self-signed certificate for `localhost`.
/// Cancels the server when dropped.
pub struct TestServer {
    /// Where the server listens.
    pub addr: SocketAddr,
    /// The certificate the server presents (PEM).
    pub cert_pem: String,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Starts [`super::serve_listener`] with `router` on a free loopback port.
pub async fn start(router: Router) -> TestServer {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cert_pem = write_cert(dir.path(), "localhost");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    let shutdown = CancellationToken::new();
    let certs = rsbuilder_runtime::tls::Certificates::from_dir(dir.path()).expect("load the test certificate");
    let server = super::serve_listener(listener, certs, router, shutdown.clone());
    tokio::spawn(async move {
        if let Err(e) = server.await {
            panic!("webhook server failed: {e}");
        }
    });
    TestServer {
        addr,
        cert_pem,
        shutdown,
        _dir: dir,
    }
}

impl TestServer {
    /// POSTs `body` as JSON to `path` over HTTPS (HTTP/1.1), verifying the server certificate
    /// for `localhost` against [`TestServer::cert_pem`]. Returns the status and the JSON body.
    pub async fn post(&self, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
        let mut roots = rustls::RootCertStore::empty();
        let ca = CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).expect("PEM certificate");
        roots.add(ca).expect("trust the test certificate");
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connect to the webhook server");
        let tls = TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("localhost").expect("server name"), tcp)
            .await
            .expect("TLS handshake with the webhook server");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .expect("HTTP handshake");
        tokio::spawn(conn);
        let request = hyper::Request::post(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(
                serde_json::to_vec(body).expect("JSON body"),
            )))
            .expect("request");
        let response = sender.send_request(request).await.expect("response");
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("response body")
            .to_bytes();
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, json)
    }
}
