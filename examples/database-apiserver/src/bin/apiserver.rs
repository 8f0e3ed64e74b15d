// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The aggregated API server of this project: serves the kinds of `src/apiserver/` under
//! `/apis/<group>/<version>`, as kube-apiserver serves a CRD, from `rsbuilder-runtime`'s
//! `apiserver` module (discovery, OpenAPI, every verb, watch, Table output, status).
//! In a cluster, kube-apiserver reaches it through the APIServices of `config/apiserver/`.
//!
//! Flags:
//!   --bind-address <addr>   HTTPS address (default `[::]:8443`)
//!   --store-path <file>     the redb file that holds the objects (default
//!                           `/var/lib/apiserver/store.redb`; created when missing)
//!   --cert-dir <dir>        `tls.crt` and `tls.key` to serve, reloaded on change (default: a
//!                           self-signed certificate, for local runs)
//!   --delegated-auth        authenticate every caller as k8s.io/apiserver's delegated
//!                           authentication does (kube-apiserver's front-proxy certificate,
//!                           client certificates, bearer tokens through TokenReview, from the
//!                           cluster's kube-system/extension-apiserver-authentication) and ask
//!                           the cluster through a SubjectAccessReview whether it may; needs a
//!                           cluster (config/apiserver's Deployment passes it). Without it every
//!                           request is answered: for local runs only.
//!
//! `rsbuilder create apiserver` adds each new kind above the `apiserver-kinds` marker.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use rsbuilder_runtime::apiserver::auth::Delegated;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use rsbuilder_runtime::manager::{LogFormat, init_tracing};
use rsbuilder_runtime::tls;
use rsbuilder_runtime::tokio_util::sync::CancellationToken;

/// The command-line flags (see the module documentation).
struct Flags {
    bind_address: SocketAddr,
    store_path: PathBuf,
    cert_dir: Option<PathBuf>,
    delegated_auth: bool,
}

/// Reads `--name value` and `--name=value` flags. Errors: an unknown flag, a flag without its
/// value, an address that does not parse.
fn flags(args: impl Iterator<Item = String>) -> anyhow::Result<Flags> {
    let mut flags = Flags {
        bind_address: "[::]:8443".parse().context("the default address")?,
        store_path: PathBuf::from("/var/lib/apiserver/store.redb"),
        cert_dir: None,
        delegated_auth: false,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        if name == "--help" || name == "-h" {
            println!(
                "usage: apiserver [--bind-address ADDR] [--store-path FILE] [--cert-dir DIR] [--delegated-auth]"
            );
            std::process::exit(0);
        }
        if name == "--delegated-auth" && inline.is_none() {
            flags.delegated_auth = true;
            continue;
        }
        let value = match inline.or_else(|| args.next()) {
            Some(v) => v,
            None => bail!("{name} needs a value"),
        };
        match name.as_str() {
            "--bind-address" => {
                flags.bind_address = value.parse().with_context(|| {
                    format!("--bind-address {value:?}: not an address such as [::]:8443")
                })?
            }
            "--store-path" => flags.store_path = PathBuf::from(value),
            "--cert-dir" => flags.cert_dir = Some(PathBuf::from(value)),
            other => bail!("unknown flag {other}; see --help"),
        }
    }
    Ok(flags)
}

/// Ends `shutdown` on SIGTERM (what the kubelet sends) or Ctrl-C.
async fn signals(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            shutdown.cancel();
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    shutdown.cancel();
}

// `kinds` is filled one push per kind, each added above the marker by rsbuilder.
#[allow(clippy::vec_init_then_push)]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = flags(std::env::args().skip(1))?;
    init_tracing(LogFormat::Text);

    let mut kinds: Vec<ApiKind> = Vec::new();
    kinds.push(
        ApiKind::of::<database_apiserver::apiserver::v1::Database>().map_err(anyhow::Error::msg)?,
    );
    // +kubebuilder:scaffold:apiserver-kinds

    if let Some(parent) = flags
        .store_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let store = RedbStore::open(&flags.store_path)
        .map_err(|e| anyhow::anyhow!("opening the store {}: {e}", flags.store_path.display()))?;
    let certs = match &flags.cert_dir {
        Some(dir) => tls::Certificates::from_dir(dir)?,
        None => tls::Certificates::self_signed(&["localhost", "127.0.0.1"])?,
    };
    let shutdown = CancellationToken::new();
    tokio::spawn(signals(shutdown.clone()));
    let listener = tls::bind(flags.bind_address)
        .await
        .with_context(|| format!("binding {}", flags.bind_address))?;
    tracing::info!(address = %listener.local_addr()?, "serving the API");
    let mut config = Config::new(kinds);
    if flags.delegated_auth {
        let client = kube::Client::try_default()
            .await
            .context("--delegated-auth: connecting to the cluster")?;
        let auth = Delegated::from_cluster(client)
            .await
            .context("--delegated-auth: reading kube-system/extension-apiserver-authentication")?;
        // Picks up a rotation of the cluster's client and front-proxy CAs.
        auth.spawn_refresh(std::time::Duration::from_secs(60), shutdown.clone());
        config.auth = Some(auth);
    }
    let server = ApiServer::new(config, store, shutdown);
    // Routes of your own (not a fallback), served beside the API's and behind the same
    // checks: the seed's `/custom` (src/custom.rs).
    server
        .serve(
            listener,
            Arc::new(certs),
            database_apiserver::custom::routes(),
        )
        .await
}
