// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The manager's HTTP servers (`/metrics`, the health probes, the webhooks): [`Routes`]
//! (or, for the aggregated API server, an axum router) served over HTTP/1.1 with a header
//! read timeout, for HTTPS over rustls with the certificate from a directory (re-read when it
//! changes, like controller-runtime's certwatcher) or, without one, a self-signed certificate
//! made at startup (as controller-runtime's metrics server does when no certificate is given).

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use crate::routes::{BoxError, Routes};

/// File name of the serving certificate (PEM, leaf first) inside a certificate directory.
pub const CERT_FILE: &str = "tls.crt";
/// File name of the private key (PEM) inside a certificate directory.
pub const KEY_FILE: &str = "tls.key";
/// How often a certificate directory is checked for changes.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers (on a kept-alive connection: to
/// start the next request) before the connection is closed; the `ReadHeaderTimeout` of
/// controller-runtime's metrics, health-probe and webhook servers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// How long a kept-alive connection of the webhook server may stay idle (and a client may take
/// to send a request's headers) before it is closed. The API server's client keeps idle
/// connections for 90 seconds (Go's `http.Transport` `IdleConnTimeout`) and does not retry a
/// POST that races the server's close, so the server must not close them sooner.
pub const KEEP_ALIVE_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a TLS handshake may take before the connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections may take to finish after shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The rustls crypto provider of every TLS server and verifier here: the process's default,
/// taken as kube's client takes it (`ClientConfig::builder()`): the provider the program
/// installed with [`rustls::crypto::CryptoProvider::install_default`], else the one rustls's
/// crate features name, *ring* (the only one this crate and kube's `ring` feature enable).
/// That is rustls's supported way to pick *ring*: its `crypto::ring::default_provider()` is
/// deprecated since rustls 0.23.48 ("no support for post-quantum algorithms").
///
/// Panics, with rustls's own message, when no provider is installed and the build enables
/// both of rustls's providers (a dependency that turns on `aws-lc-rs`); kube's client panics
/// there too. Such a program installs one at the start of `main`.
pub fn crypto_provider() -> Arc<rustls::crypto::CryptoProvider> {
    rustls::ServerConfig::builder().crypto_provider().clone()
}

/// What a server answers requests with: [`Routes`], or (with the `apiserver` feature) an
/// axum router. The request is hyper's, with a [`PeerCertificates`] extension when
/// [`serve_with_client_certs`] got a client certificate.
pub trait Service: Clone + Send + Sync + 'static {
    /// The answer's body.
    type Body: http_body::Body<Data = Bytes, Error: Into<BoxError>> + Send + 'static;
    /// Answers one request (on a clone of the service).
    fn answer(
        self,
        request: http::Request<Incoming>,
    ) -> impl Future<Output = http::Response<Self::Body>> + Send + 'static;
}

impl Service for Routes {
    type Body = http_body_util::Full<Bytes>;

    fn answer(
        self,
        request: http::Request<Incoming>,
    ) -> impl Future<Output = http::Response<Self::Body>> + Send + 'static {
        use http_body_util::BodyExt as _;
        async move {
            let request = request.map(|body| body.map_err(BoxError::from).boxed());
            self.call(request).await
        }
    }
}

#[cfg(feature = "apiserver")]
impl Service for axum::Router {
    type Body = axum::body::Body;

    fn answer(
        self,
        request: http::Request<Incoming>,
    ) -> impl Future<Output = http::Response<Self::Body>> + Send + 'static {
        use tower::ServiceExt as _;
        async move {
            match self.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }
    }
}

/// The certificate a server presents; hands rustls the current one. A certificate read from
/// a directory is swapped by [`Certificates::reload`] (which [`serve`] calls every
/// [`RELOAD_INTERVAL`]) when the files change.
#[derive(Debug)]
pub struct Certificates {
    current: RwLock<(Vec<u8>, Arc<CertifiedKey>)>,
    dir: Option<PathBuf>,
}

impl Certificates {
    /// Reads `dir/tls.crt` (certificate chain, leaf first) and `dir/tls.key`. Errors name
    /// the file that cannot be read or parsed, or a key that does not match the certificate.
    pub fn from_dir(dir: &Path) -> anyhow::Result<Self> {
        let (raw, key) = read_cert(dir)?;
        Ok(Self {
            current: RwLock::new((raw, key)),
            dir: Some(dir.to_path_buf()),
        })
    }

    /// A new self-signed certificate (rcgen, ECDSA P-256) for the DNS names `hosts`, held
    /// in memory only. Clients cannot verify it: Prometheus scrapes it with
    /// `insecureSkipVerify` (see `config/prometheus/monitor.yaml`). Errors: a host is not a
    /// valid DNS name or IP address.
    pub fn self_signed(hosts: &[&str]) -> anyhow::Result<Self> {
        let hosts: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
        let generated = rcgen::generate_simple_self_signed(hosts)
            .map_err(|e| anyhow::anyhow!("cannot make a self-signed certificate: {e}"))?;
        let cert = generated.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            generated.signing_key.serialize_der(),
        ));
        let certified = CertifiedKey::from_der(vec![cert], key, &crypto_provider())
            .map_err(|e| anyhow::anyhow!("cannot use the self-signed certificate: {e}"))?;
        Ok(Self {
            current: RwLock::new((Vec::new(), Arc::new(certified))),
            dir: None,
        })
    }

    /// The leaf certificate presented now (DER); tests trust it as their only root.
    pub fn leaf(&self) -> Option<CertificateDer<'static>> {
        let current = self.current.read().ok()?;
        current.1.cert.first().cloned()
    }

    /// Re-reads the certificate directory; installs the files when they changed and parse.
    /// Returns `true` when a new certificate was installed. A self-signed certificate is
    /// never replaced; unreadable files keep the previous certificate (with a warning).
    pub fn reload(&self) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        match read_cert(dir) {
            Ok((raw, key)) => {
                let Ok(mut current) = self.current.write() else {
                    return false;
                };
                if current.0 == raw {
                    return false;
                }
                *current = (raw, key);
                tracing::info!(dir = %dir.display(), "TLS certificate reloaded");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "keeping the previous TLS certificate");
                false
            }
        }
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().ok().map(|c| c.1.clone())
    }
}

/// Reads and parses `tls.crt` and `tls.key` in `dir`. Returns the raw bytes (to notice
/// changes) and the key pair. Errors name the file.
fn read_cert(dir: &Path) -> anyhow::Result<(Vec<u8>, Arc<CertifiedKey>)> {
    let cert_path = dir.join(CERT_FILE);
    let key_path = dir.join(KEY_FILE);
    let cert_pem = std::fs::read(&cert_path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", cert_path.display()))?;
    let key_pem = std::fs::read(&key_path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", key_path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}: {e}", cert_path.display()))?;
    if certs.is_empty() {
        anyhow::bail!("{}: no certificate found", cert_path.display());
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| anyhow::anyhow!("{}: {e}", key_path.display()))?;
    let certified = CertifiedKey::from_der(certs, key, &crypto_provider())
        .map_err(|e| anyhow::anyhow!("{}: {e}", key_path.display()))?;
    let mut raw = cert_pem;
    raw.extend_from_slice(&key_pem);
    Ok((raw, Arc::new(certified)))
}

/// Binds a TCP listener on `addr`. `[::]` (what a `:PORT` flag value means) is dual stack on
/// Linux, where IPv6 sockets take IPv4 connections too (`net.ipv6.bindv6only=0`, the
/// default), so the servers are reachable in IPv4, IPv6 and dual-stack clusters; on a host
/// without IPv6, `[::]` falls back to `0.0.0.0`, as Go's listener does for `:PORT`. Errors:
/// the address is in use, not allowed, or not an address of this host.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    match TcpListener::bind(addr).await {
        Err(err)
            if addr.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED)
                && !matches!(
                    err.kind(),
                    std::io::ErrorKind::AddrInUse | std::io::ErrorKind::PermissionDenied
                ) =>
        {
            TcpListener::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, addr.port()))).await
        }
        bound => bound,
    }
}

/// Serves `service` over TLS 1.2/1.3 (HTTP/1.1) on an already bound listener until
/// `shutdown` is cancelled, then lets open connections finish for up to 10 seconds. `what`
/// names the server in logs (`"metrics server"`). A certificate read from a directory is
/// reloaded every [`RELOAD_INTERVAL`]. Clients get [`HEADER_READ_TIMEOUT`] to send each
/// request's headers; see [`serve_with`]. Errors: the TLS configuration cannot be built, or
/// the listener has no local address.
pub async fn serve(
    listener: TcpListener,
    certs: Arc<Certificates>,
    service: impl Service,
    shutdown: CancellationToken,
    what: &'static str,
) -> anyhow::Result<()> {
    serve_with(
        listener,
        Some(certs),
        service,
        shutdown,
        what,
        HEADER_READ_TIMEOUT,
    )
    .await
}

/// Serves `service` over plain HTTP/1.1 (the health probes, and `/metrics` with
/// `--metrics-secure=false`), with the same limits as [`serve`]. Errors: the listener has no
/// local address.
pub async fn serve_plain(
    listener: TcpListener,
    service: impl Service,
    shutdown: CancellationToken,
    what: &'static str,
) -> anyhow::Result<()> {
    serve_with(listener, None, service, shutdown, what, HEADER_READ_TIMEOUT).await
}

/// Like [`serve`], but the TLS handshake asks the client for a certificate (optional: a
/// client without one is served too). Any certificate chain is taken at this layer (the
/// handshake still proves the client holds the leaf's key); its DER chain reaches every
/// request of the connection as a [`PeerCertificates`] extension, for the handler to verify
/// against the CA it trusts (the aggregated API server's `apiserver::auth`, whose CAs can
/// change at run time). Requests without a client certificate carry no extension. Errors:
/// as [`serve`].
pub async fn serve_with_client_certs(
    listener: TcpListener,
    certs: Arc<Certificates>,
    service: impl Service,
    shutdown: CancellationToken,
    what: &'static str,
) -> anyhow::Result<()> {
    serve_inner(
        listener,
        Some(certs),
        service,
        shutdown,
        what,
        HEADER_READ_TIMEOUT,
        true,
    )
    .await
}

/// The client certificate chain (DER, leaf first) a TLS client presented in the handshake,
/// as [`serve_with_client_certs`] puts it in each request's extensions. Not yet verified
/// against any CA: only the possession of the leaf's private key was proven.
#[derive(Debug, Clone)]
pub struct PeerCertificates(pub Arc<Vec<CertificateDer<'static>>>);

/// A client certificate verifier that asks for a certificate, does not require one, and
/// accepts any chain: verification against a CA is left to the request handler (see
/// [`serve_with_client_certs`]). The handshake signature is still checked, with the crypto
/// provider's algorithms, so a client cannot present a certificate whose key it lacks.
#[derive(Debug)]
struct DeferredClientVerifier {
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl rustls::server::danger::ClientCertVerifier for DeferredClientVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Ok(rustls::server::danger::ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Serves `service` on an already bound listener, over TLS with `certs` or over plain HTTP
/// without, until `shutdown` is cancelled; then the listener is closed (new connections are
/// refused), idle connections are closed and in-flight requests get 10 seconds to finish.
///
/// Only HTTP/1.1 is served (TLS offers ALPN `http/1.1` alone), as a Kubebuilder manager
/// does by default (`--enable-http2=false`, since HTTP/2 Rapid Reset, CVE-2023-44487). A
/// connection that does not finish its TLS handshake within 10 seconds, or does not send a
/// request's headers within `header_read_timeout` (the first request, and every next one on
/// a kept-alive connection), is closed, so idle or slow clients cannot hold connections
/// (and file descriptors) open. Errors: the TLS configuration cannot be built, or the
/// listener has no local address.
pub async fn serve_with(
    listener: TcpListener,
    certs: Option<Arc<Certificates>>,
    service: impl Service,
    shutdown: CancellationToken,
    what: &'static str,
    header_read_timeout: Duration,
) -> anyhow::Result<()> {
    serve_inner(
        listener,
        certs,
        service,
        shutdown,
        what,
        header_read_timeout,
        false,
    )
    .await
}

/// [`serve_with`], asking TLS clients for a certificate when `client_certs` is set.
async fn serve_inner(
    listener: TcpListener,
    certs: Option<Arc<Certificates>>,
    service: impl Service,
    shutdown: CancellationToken,
    what: &'static str,
    header_read_timeout: Duration,
    client_certs: bool,
) -> anyhow::Result<()> {
    let acceptor = match &certs {
        Some(certs) => {
            let provider = crypto_provider();
            let algorithms = provider.signature_verification_algorithms;
            let builder = rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()?;
            let builder = if client_certs {
                builder.with_client_cert_verifier(Arc::new(DeferredClientVerifier { algorithms }))
            } else {
                builder.with_no_client_auth()
            };
            let mut config = builder.with_cert_resolver(certs.clone());
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Some(TlsAcceptor::from(Arc::new(config)))
        }
        None => None,
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let builder = Arc::new(builder);

    let reload = certs.map(|certs| tokio::spawn(reload_loop(certs, shutdown.clone())));
    let graceful = GracefulShutdown::new();
    let scheme = if acceptor.is_some() { "HTTPS" } else { "HTTP" };
    tracing::info!(address = %listener.local_addr()?, "{what} listening ({scheme})");
    loop {
        let (tcp, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "{what}: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let acceptor = acceptor.clone();
        let builder = builder.clone();
        let service = service.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let result = match acceptor {
                None => {
                    let conn =
                        builder.serve_connection(TokioIo::new(tcp), hyper_service(service, None));
                    watcher.watch(conn).await
                }
                Some(acceptor) => {
                    let tls =
                        match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                            Ok(Ok(tls)) => tls,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "{what}: TLS handshake failed");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!(%peer, "{what}: TLS handshake timed out");
                                return;
                            }
                        };
                    let chain = match tls.get_ref().1.peer_certificates() {
                        Some(chain) if client_certs && !chain.is_empty() => {
                            Some(PeerCertificates(Arc::new(chain.to_vec())))
                        }
                        _ => None,
                    };
                    let conn =
                        builder.serve_connection(TokioIo::new(tls), hyper_service(service, chain));
                    watcher.watch(conn).await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "{what}: connection closed");
            }
        });
    }
    // Close the listening socket before waiting for open connections, as Go's
    // `http.Server.Shutdown` does: a new connection is refused at once instead of waiting in
    // the accept queue until the grace period ends.
    drop(listener);
    if let Some(reload) = reload {
        reload.abort();
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("{what}: connections still open after the grace period");
    }
    tracing::info!("{what} stopped");
    Ok(())
}

/// `service` as hyper calls it, putting `chain` (the client's certificates) in each request's
/// extensions.
fn hyper_service<S: Service>(
    service: S,
    chain: Option<PeerCertificates>,
) -> impl hyper::service::Service<
    http::Request<Incoming>,
    Response = http::Response<S::Body>,
    Error = Infallible,
    Future = impl Future<Output = Result<http::Response<S::Body>, Infallible>> + Send + 'static,
> + Clone {
    hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
        if let Some(chain) = &chain {
            request.extensions_mut().insert(chain.clone());
        }
        let answer = service.clone().answer(request);
        async move { Ok::<_, Infallible>(answer.await) }
    })
}

/// Calls [`Certificates::reload`] every [`RELOAD_INTERVAL`] until `shutdown`.
async fn reload_loop(certs: Arc<Certificates>, shutdown: CancellationToken) {
    if certs.dir.is_none() {
        return;
    }
    let mut tick = tokio::time::interval(RELOAD_INTERVAL);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        certs.reload();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_cert(dir: &Path, host: &str) {
        let generated = rcgen::generate_simple_self_signed(vec![host.to_owned()]).unwrap();
        std::fs::write(dir.join(CERT_FILE), generated.cert.pem()).unwrap();
        std::fs::write(dir.join(KEY_FILE), generated.signing_key.serialize_pem()).unwrap();
    }

    #[test]
    fn a_certificate_directory_is_reloaded_only_on_change() {
        let dir = tempfile::tempdir().unwrap();
        write_cert(dir.path(), "one.example");
        let certs = Certificates::from_dir(dir.path()).unwrap();
        let first = certs.leaf().unwrap();
        assert!(!certs.reload());
        write_cert(dir.path(), "two.example");
        assert!(certs.reload());
        assert_ne!(certs.leaf().unwrap(), first);
        std::fs::write(dir.path().join(KEY_FILE), "garbage").unwrap();
        assert!(!certs.reload());
    }

    #[tokio::test]
    async fn all_interfaces_take_ipv4_connections() {
        // `:PORT` means `[::]`: dual stack where the host has IPv6, else `0.0.0.0`; an IPv4
        // client reaches it either way.
        let listener = bind(SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let (client, accepted) = tokio::join!(
            tokio::net::TcpStream::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
            listener.accept()
        );
        client.unwrap();
        let (_, peer) = accepted.unwrap();
        assert!(peer.ip().to_canonical().is_loopback(), "{peer}");
    }

    #[tokio::test]
    async fn an_address_in_use_is_not_retried_elsewhere() {
        let taken = bind(SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)))
            .await
            .unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = bind(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    }

    #[test]
    fn a_missing_certificate_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = Certificates::from_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains(CERT_FILE), "{err}");
    }

    #[test]
    fn a_self_signed_certificate_is_made_and_kept() {
        let certs = Certificates::self_signed(&["localhost"]).unwrap();
        let leaf = certs.leaf().unwrap();
        assert!(!leaf.is_empty());
        assert!(!certs.reload());
        assert_eq!(certs.leaf().unwrap(), leaf);
    }
}
