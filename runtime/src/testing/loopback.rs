// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The in-process cluster on a loopback socket, with a kubeconfig for kubectl: for looking
//! at a test's cluster while it runs. Plain HTTP without authentication, on 127.0.0.1 only.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use super::front::Front;

/// A running loopback server: its address and the kubeconfig that points at it. It stops
/// with the cluster.
#[derive(Debug, Clone)]
pub struct Loopback {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// A kubeconfig file for the server (context `rsbuilder-test`, namespace `default`).
    pub kubeconfig: PathBuf,
}

pub(crate) async fn serve(
    front: Arc<Front>,
    shutdown: CancellationToken,
) -> anyhow::Result<Loopback> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding a loopback port")?;
    let addr = listener.local_addr()?;
    let url = format!("http://{addr}");
    let dir = std::env::temp_dir().join(format!(
        "rsbuilder-test-cluster-{}-{}",
        std::process::id(),
        addr.port()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let kubeconfig = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: rsbuilder-test\n  cluster:\n    server: {url}\ncontexts:\n- name: rsbuilder-test\n  context:\n    cluster: rsbuilder-test\n    user: rsbuilder-test\n    namespace: default\ncurrent-context: rsbuilder-test\nusers:\n- name: rsbuilder-test\n  user: {{}}\n"
    );
    std::fs::write(&kubeconfig, text)
        .with_context(|| format!("writing {}", kubeconfig.display()))?;
    tokio::spawn(async move {
        loop {
            let (stream, _) = tokio::select! {
                _ = shutdown.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(_) => continue,
                },
            };
            let front = front.clone();
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let front = front.clone();
                    async move {
                        use http_body_util::BodyExt as _;
                        let (parts, body) = request.into_parts();
                        let bytes = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        Ok::<_, std::convert::Infallible>(
                            front.handle(http::Request::from_parts(parts, bytes)).await,
                        )
                    }
                });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    Ok(Loopback { url, kubeconfig })
}
