// Copyright 2026 The rsbuilder authors.
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

//! The manager: connects to the Kubernetes API server, serves metrics and health probes,
//! takes part in leader election, runs the controllers (and webhooks), and shuts down
//! gracefully on SIGTERM or SIGINT.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser as _;
use tokio::task::{JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use database_operator::manager::{self, Args, Manager, Metrics};
use database_operator::tls;
// +kubebuilder:scaffold:imports

/// How long the API server may take to answer the first request.
const API_SERVER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long controllers and servers get to stop after shutdown begins.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    manager::init_tracing(args.log_format);
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and those of its causes not already spelled out by an outer message, on one
/// line.
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string().replace('\n', " ");
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line
}

async fn run(args: Args) -> anyhow::Result<()> {
    tracing::info!(?args, "starting manager");
    let metrics_addr =
        manager::parse_bind_address("--metrics-bind-address", &args.metrics_bind_address)?;
    let probe_addr = manager::parse_bind_address(
        "--health-probe-bind-address",
        &args.health_probe_bind_address,
    )?;
    // The metrics certificate is checked before connecting, so that a bad
    // --metrics-cert-path is reported as such, even without a reachable cluster.
    let metrics_certs = match (&metrics_addr, args.metrics_secure, &args.metrics_cert_path) {
        (None, _, _) | (_, false, _) => None,
        (Some(_), true, Some(dir)) => Some(
            tls::Certificates::from_dir(dir)
                .context("--metrics-cert-path: cannot load the metrics certificate")?,
        ),
        (Some(_), true, None) => Some(tls::Certificates::self_signed(&["localhost"])?),
    };
    // +kubebuilder:scaffold:certificates

    let config = kube::Config::infer().await.context(
        "no Kubernetes cluster configured: set KUBECONFIG or ~/.kube/config, or run in a cluster",
    )?;
    let cluster_url = config.cluster_url.clone();
    let client = kube::Client::try_from(config).context("cannot create a Kubernetes client")?;
    match tokio::time::timeout(API_SERVER_TIMEOUT, client.apiserver_version()).await {
        Ok(Ok(info)) => {
            tracing::info!(server = %cluster_url, version = %info.git_version, "connected to the Kubernetes API server");
        }
        Ok(Err(err)) => {
            return Err(err).with_context(|| {
                format!("cannot reach the Kubernetes API server at {cluster_url}")
            });
        }
        Err(_) => anyhow::bail!(
            "cannot reach the Kubernetes API server at {cluster_url}: no answer within {}s",
            API_SERVER_TIMEOUT.as_secs()
        ),
    }
    let namespace = args.namespace.clone();
    let mgr = Manager {
        client,
        namespace,
        shutdown: CancellationToken::new(),
        metrics: Arc::new(Metrics::default()),
    };
    tokio::spawn(handle_signals(mgr.shutdown.clone()));

    // The metrics and probe servers have their own shutdown token: they keep serving while
    // the controllers stop, and are stopped last (see `stop`).
    let mut servers = Servers {
        tasks: JoinSet::new(),
        shutdown: CancellationToken::new(),
    };
    if let Some(addr) = metrics_addr {
        let listener = bind(addr, "metrics").await?;
        let router = manager::metrics_router(mgr.metrics.clone());
        if let Some(certs) = metrics_certs {
            // HTTPS, and only for callers whose token may `get` /metrics (TokenReview, then
            // SubjectAccessReview), as a Kubebuilder manager with --metrics-secure.
            let router = manager::with_authentication_and_authorization(router, mgr.client.clone());
            servers.tasks.spawn(tls::serve(
                listener,
                Arc::new(certs),
                router,
                servers.shutdown.clone(),
                "metrics server",
            ));
            tracing::info!(%addr, "serving metrics over HTTPS on /metrics (bearer token required)");
        } else {
            servers.tasks.spawn(tls::serve_plain(
                listener,
                router,
                servers.shutdown.clone(),
                "metrics server",
            ));
            tracing::warn!(%addr, "serving metrics without TLS or authentication on /metrics");
        }
    }
    if let Some(addr) = probe_addr {
        servers.tasks.spawn(tls::serve_plain(
            bind(addr, "health probes").await?,
            manager::health_router(),
            servers.shutdown.clone(),
            "health probe server",
        ));
        tracing::info!(%addr, "serving health probes on /healthz and /readyz");
    }

    let mut controllers = tokio::task::JoinSet::new();
    // Webhook servers run on every replica, leader or not.
    // +kubebuilder:scaffold:webhooks

    // Controllers run only on the replica that holds the Lease (on every replica without
    // --leader-elect).
    let mut leader = elect_leader(&args, &mgr).await?;
    if mgr.shutdown.is_cancelled() {
        // Shutdown began while waiting for the Lease: start no controllers.
        return stop(&mgr, &mut controllers, &mut servers, leader, None).await;
    }
    controllers.spawn(database_operator::controller::database_controller::run(
        mgr.clone(),
    ));
    // +kubebuilder:scaffold:controllers

    let failure = run_until_shutdown(&mgr, &mut controllers, &mut servers, &mut leader).await;
    stop(&mgr, &mut controllers, &mut servers, leader, failure).await
}

/// The metrics and health-probe servers, and the token that stops them.
struct Servers {
    tasks: JoinSet<anyhow::Result<()>>,
    shutdown: CancellationToken,
}

/// Waits for shutdown: a signal, a controller or server that fails, or the loss of the
/// Lease (the last three are returned as the error to exit with).
async fn run_until_shutdown(
    mgr: &Manager,
    controllers: &mut JoinSet<anyhow::Result<()>>,
    servers: &mut Servers,
    leader: &mut Option<Leader>,
) -> Option<anyhow::Error> {
    loop {
        tokio::select! {
            _ = mgr.shutdown.cancelled() => return None,
            Some(done) = controllers.join_next() => {
                if let Some(err) = task_failure("a controller", done) {
                    return Some(err);
                }
            }
            Some(done) = servers.tasks.join_next() => {
                if let Some(err) = task_failure("an HTTP server", done) {
                    return Some(err);
                }
            }
            lost = lost_leadership(leader) => return Some(lost),
        }
    }
}

/// Stops everything, in controller-runtime's order: cancels `mgr.shutdown` and waits for the
/// controllers (and webhook servers) to stop, gives the Lease up, and only then stops the
/// metrics and health-probe servers, which keep serving until then.
async fn stop(
    mgr: &Manager,
    controllers: &mut JoinSet<anyhow::Result<()>>,
    servers: &mut Servers,
    leader: Option<Leader>,
    failure: Option<anyhow::Error>,
) -> anyhow::Result<()> {
    tracing::info!("shutting down");
    mgr.shutdown.cancel();
    drain("controllers", controllers).await;
    if let Some(leader) = leader {
        leader.release().await;
    }
    servers.shutdown.cancel();
    drain("HTTP servers", &mut servers.tasks).await;
    match failure {
        Some(err) => Err(err),
        None => {
            tracing::info!("manager stopped");
            Ok(())
        }
    }
}

/// Binds a listener, naming the address and its purpose when that fails.
async fn bind(addr: std::net::SocketAddr, what: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tls::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for {what}"))
}

/// Turns the end of a task into the error that stops the manager, if any.
fn task_failure(what: &str, done: Result<anyhow::Result<()>, JoinError>) -> Option<anyhow::Error> {
    match done {
        Ok(Ok(())) => None,
        Ok(Err(err)) => Some(err.context(format!("{what} failed"))),
        Err(err) => Some(anyhow::Error::new(err).context(format!("{what} panicked"))),
    }
}

/// Waits for tasks to finish after shutdown began; aborts them after [`SHUTDOWN_TIMEOUT`].
async fn drain(what: &str, tasks: &mut JoinSet<anyhow::Result<()>>) {
    let all = async {
        while let Some(done) = tasks.join_next().await {
            if let Some(err) = task_failure(what, done) {
                tracing::error!("{err:#}");
            }
        }
    };
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, all).await.is_err() {
        tracing::warn!(
            "{what} did not stop within {}s; aborting them",
            SHUTDOWN_TIMEOUT.as_secs()
        );
        tasks.abort_all();
    }
}

/// This replica's hold on the leader-election Lease.
struct Leader {
    is_leader: tokio::sync::watch::Receiver<bool>,
    task: tokio::task::JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
    lease: String,
}

impl Leader {
    /// Gives the Lease up so another replica can take over at once.
    async fn release(self) {
        drop(self.is_leader); // closing the channel makes the lease task release the Lease
        match tokio::time::timeout(Duration::from_secs(5), self.task).await {
            Ok(Ok(Ok(_))) => {
                tracing::info!(lease = %self.lease, "left leader election")
            }
            Ok(Ok(Err(err))) => {
                tracing::warn!(lease = %self.lease, "releasing the Lease failed: {err}")
            }
            Ok(Err(err)) => tracing::warn!(lease = %self.lease, "the lease task failed: {err}"),
            Err(_) => tracing::warn!(lease = %self.lease, "releasing the Lease timed out"),
        }
    }
}

/// With `--leader-elect`, waits until this replica holds the Lease (or shutdown begins).
/// Without it, returns `None` at once.
async fn elect_leader(args: &Args, mgr: &Manager) -> anyhow::Result<Option<Leader>> {
    if !args.leader_elect {
        return Ok(None);
    }
    let namespace = args
        .leader_election_namespace
        .clone()
        .unwrap_or_else(|| mgr.client.default_namespace().to_owned());
    let lease = format!("{namespace}/{}", args.leader_election_id);
    let manager = kube_lease_manager::LeaseManagerBuilder::new(
        mgr.client.clone(),
        args.leader_election_id.clone(),
    )
    .with_namespace(namespace)
    .build()
    .await
    .with_context(|| format!("cannot use the leader-election Lease {lease}"))?;
    let (mut is_leader, task) = manager.watch().await;
    tracing::info!(%lease, "waiting to acquire the leader-election Lease");
    tokio::select! {
        _ = mgr.shutdown.cancelled() => {}
        acquired = is_leader.wait_for(|leading| *leading) => {
            acquired.with_context(|| format!("leader election on {lease} stopped"))?;
            tracing::info!(%lease, "acquired the leader-election Lease");
        }
    }
    Ok(Some(Leader {
        is_leader,
        task,
        lease,
    }))
}

/// Completes when this replica loses the Lease; never completes without leader election.
async fn lost_leadership(leader: &mut Option<Leader>) -> anyhow::Error {
    let Some(leader) = leader else {
        return std::future::pending().await;
    };
    let _ = leader.is_leader.wait_for(|leading| !*leading).await;
    anyhow::anyhow!("lost the leader-election Lease {}", leader.lease)
}

/// Cancels `shutdown` on the first SIGTERM or SIGINT; exits at once on the second.
async fn handle_signals(shutdown: CancellationToken) {
    let mut signals = Signals::new();
    let name = signals.next().await;
    tracing::info!("received {name}; shutting down (send it again to exit at once)");
    shutdown.cancel();
    let name = signals.next().await;
    tracing::warn!("received {name} again; exiting at once");
    std::process::exit(1);
}

/// SIGTERM (what Kubernetes sends) and SIGINT (Ctrl-C).
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        Self {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .inspect_err(|err| tracing::warn!("cannot listen for SIGTERM: {err}"))
                .ok(),
        }
    }

    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        if let Some(term) = self.term.as_mut() {
            return tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            };
        }
        match tokio::signal::ctrl_c().await {
            Ok(()) => "SIGINT",
            Err(_) => std::future::pending().await,
        }
    }
}
