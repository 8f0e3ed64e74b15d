// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The manager: its command-line flags ([`Args`], named and defaulted like a Kubebuilder
//! manager's), the handle every controller and webhook receives ([`Manager`]), and the
//! [`Runner`] that connects to the API server, serves metrics and probes, takes part in
//! leader election, runs the controllers and webhook servers, and shuts down in
//! controller-runtime's order: controllers and webhooks first, then the Lease, then the
//! metrics and probe servers.
//!
//! A project's `src/main.rs` calls [`Args::parse_with`], [`Runner::start`],
//! [`Runner::spawn`] for each controller, [`Runner::serve_webhooks`] for the webhook server,
//! [`Runner::elect_leader`] and [`Runner::run`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{CommandFactory as _, FromArgMatches as _};
use tokio::task::{JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::metrics::{self, Metrics};
use crate::tls;

/// How long the API server may take to answer the first request.
pub const API_SERVER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long controllers and servers get to stop after shutdown begins.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(20);

/// Log output format (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// What differs between projects: set once in the project's `src/main.rs` (from `init`'s
/// flags) and given to [`Args::parse_with`] and [`Runner::start`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The program's version (`--version`): the project's `env!("CARGO_PKG_VERSION")`.
    pub version: &'static str,
    /// Default name of the leader-election Lease: `<project>.<domain>`.
    pub leader_election_id: &'static str,
    /// `init --namespaced`: the manager watches one namespace, `--namespace` or else
    /// `POD_NAMESPACE` or else the namespace it runs in; otherwise all namespaces unless
    /// `--namespace` names one.
    pub namespaced: bool,
}

/// The manager's command-line flags. Names and defaults follow a Kubebuilder manager.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "manager", about = "Runs the operator's controllers")]
pub struct Args {
    /// Address the metrics endpoint binds to: `:PORT` (all interfaces), `HOST:PORT`
    /// (an IP address or a host name), or `0` (disabled).
    #[arg(long, default_value = ":8443")]
    pub metrics_bind_address: String,

    /// Serve `/metrics` over HTTPS, only to callers whose bearer token passes a TokenReview
    /// and a SubjectAccessReview (`--metrics-secure=false`: plain HTTP, no authentication).
    #[arg(
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub metrics_secure: bool,

    /// Directory holding the metrics server's `tls.crt` and `tls.key` (re-read when they
    /// change). Without it, a self-signed certificate is made at startup.
    #[arg(long)]
    pub metrics_cert_path: Option<PathBuf>,

    /// Address the `/healthz` and `/readyz` probes bind to: `:PORT` (all interfaces),
    /// `HOST:PORT` (an IP address or a host name), or `0` (disabled).
    #[arg(long, default_value = ":8081")]
    pub health_probe_bind_address: String,

    /// Enable leader election, so that only one replica runs the controllers at a time.
    #[arg(long, default_value_t = false)]
    pub leader_elect: bool,

    /// Namespace of the leader-election Lease (default: the namespace the manager runs in).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,

    /// Name of the leader-election Lease (its default is [`Options::leader_election_id`]).
    #[arg(long)]
    pub leader_election_id: String,

    /// Watch only this namespace (default: all namespaces).
    #[arg(long)]
    pub namespace: Option<String>,

    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Port the webhook server listens on (used once webhooks are scaffolded).
    #[arg(long, default_value_t = 9443)]
    pub webhook_port: u16,

    /// Directory holding the webhook server's `tls.crt` and `tls.key`.
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs")]
    pub webhook_cert_dir: PathBuf,
}

/// `--webhook-cert-dir`, for [`crate::webhook::certificates`].
impl crate::webhook::CertDir for Args {
    fn webhook_cert_dir(&self) -> &std::path::Path {
        &self.webhook_cert_dir
    }
}

impl Args {
    /// Parses the process's arguments with the project's `options` (the Lease's default name,
    /// the version, and for a namespaced project `--namespace` read from `POD_NAMESPACE`).
    /// A bad flag prints clap's message and exits 2; `--help` and `--version` print and exit 0.
    pub fn parse_with(options: &Options) -> Self {
        Self::try_parse_from_with(options, std::env::args_os()).unwrap_or_else(|err| err.exit())
    }

    /// [`Args::parse_with`] over `args` (the first is the program name). Errors: clap's, for
    /// an unknown flag or a bad value (and `--help`, `--version`, as clap reports them).
    pub fn try_parse_from_with<I, T>(options: &Options, args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command =
            Self::command()
                .version(options.version)
                .mut_arg("leader_election_id", |arg| {
                    arg.required(false)
                        .default_value(options.leader_election_id)
                });
        if options.namespaced {
            command = command.mut_arg("namespace", |arg| {
                arg.env("POD_NAMESPACE")
                    .help("Namespace to watch (default: the namespace the manager runs in)")
            });
        }
        let mut matches = command.try_get_matches_from(args)?;
        Self::from_arg_matches_mut(&mut matches)
    }
}

/// What every controller and webhook gets: the Kubernetes client, the shutdown signal, the
/// metrics, and the namespace to watch. Cheap to clone.
#[derive(Clone)]
pub struct Manager {
    /// Client for the Kubernetes API server.
    pub client: kube::Client,
    /// Cancelled when the manager shuts down (SIGTERM, SIGINT, lost leadership, a failed
    /// controller). Controllers stop their watches when it fires.
    pub shutdown: CancellationToken,
    /// Reconcile metrics served on `/metrics`.
    pub metrics: Arc<Metrics>,
    /// `Some(ns)`: watch only `ns` (`Api::namespaced`); `None`: all namespaces (`Api::all`).
    pub namespace: Option<String>,
}

impl Manager {
    /// A manager for unit tests: the given client (usually over a mocked API server), no
    /// namespace restriction, a fresh shutdown token and empty metrics.
    pub fn for_tests(client: kube::Client) -> Self {
        Self {
            client,
            shutdown: CancellationToken::new(),
            metrics: Arc::new(Metrics::default()),
            namespace: None,
        }
    }

    /// An `Api` for `K` in the namespace the manager watches, or all namespaces (a
    /// cluster-scoped `K` is always `Api::all`).
    pub fn api<K>(&self) -> kube::Api<K>
    where
        K: kube::Resource<DynamicType = ()>,
        K::Scope: ScopedApi,
    {
        K::Scope::api::<K>(self.client.clone(), self.namespace.as_deref())
    }
}

/// A resource scope, for [`Manager::api`] to choose between `Api::namespaced` and
/// `Api::all`; implemented for k8s-openapi's namespaced and cluster scopes.
pub trait ScopedApi: Sized {
    /// `Api::namespaced(client, ns)` for a namespaced kind with `Some(ns)`, else `Api::all`.
    fn api<K>(client: kube::Client, namespace: Option<&str>) -> kube::Api<K>
    where
        K: kube::Resource<Scope = Self, DynamicType = ()>;
}

impl ScopedApi for k8s_openapi::NamespaceResourceScope {
    fn api<K>(client: kube::Client, namespace: Option<&str>) -> kube::Api<K>
    where
        K: kube::Resource<Scope = Self, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => kube::Api::namespaced(client, ns),
            None => kube::Api::all(client),
        }
    }
}

impl ScopedApi for k8s_openapi::ClusterResourceScope {
    fn api<K>(client: kube::Client, _namespace: Option<&str>) -> kube::Api<K>
    where
        K: kube::Resource<Scope = Self, DynamicType = ()>,
    {
        kube::Api::all(client)
    }
}

/// The process's exit code for the outcome of the project's `run`: 0, or 1 after printing
/// `error: <reason>` on one line of stderr ([`one_line`]).
pub fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and those of its causes not already spelled out by an outer message, on one
/// line (what the manager prints before exiting 1).
pub fn one_line(err: &anyhow::Error) -> String {
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

/// The started manager: owns the tasks it runs and stops them in order ([`Runner::run`]).
pub struct Runner {
    args: Args,
    mgr: Manager,
    tasks: JoinSet<anyhow::Result<()>>,
    servers: Servers,
    leader: Option<Leader>,
}

impl Runner {
    /// Starts the manager: checks the bind addresses and the metrics certificate (before
    /// connecting, so a bad `--metrics-cert-path` is reported as such even without a
    /// cluster), connects to the API server (within [`API_SERVER_TIMEOUT`]), listens for
    /// SIGTERM and SIGINT, and starts the metrics server (HTTPS with TokenReview and
    /// SubjectAccessReview, or plain HTTP with `--metrics-secure=false`) and the probe
    /// server. Errors: a bad flag value (named), an unreadable certificate, no cluster
    /// configured, the API server unreachable, an address that cannot be bound.
    pub async fn start(args: Args, options: &Options) -> anyhow::Result<Self> {
        tracing::info!(?args, "starting manager");
        let metrics_addr =
            parse_bind_address("--metrics-bind-address", &args.metrics_bind_address)?;
        let probe_addr = parse_bind_address(
            "--health-probe-bind-address",
            &args.health_probe_bind_address,
        )?;
        let metrics_certs = match (&metrics_addr, args.metrics_secure, &args.metrics_cert_path) {
            (None, _, _) | (_, false, _) => None,
            (Some(_), true, Some(dir)) => Some(
                tls::Certificates::from_dir(dir)
                    .context("--metrics-cert-path: cannot load the metrics certificate")?,
            ),
            (Some(_), true, None) => Some(tls::Certificates::self_signed(&["localhost"])?),
        };
        let client = connect().await?;
        // A namespaced project watches one namespace: --namespace, else the manager's own.
        let namespace = match (&args.namespace, options.namespaced) {
            (Some(ns), _) => Some(ns.clone()),
            (None, true) => Some(client.default_namespace().to_owned()),
            (None, false) => None,
        };
        let mgr = Manager {
            client,
            namespace,
            shutdown: CancellationToken::new(),
            metrics: Arc::new(Metrics::default()),
        };
        tokio::spawn(handle_signals(mgr.shutdown.clone()));

        // The metrics and probe servers have their own shutdown token: they keep serving
        // while the controllers stop, and are stopped last (see `stop`).
        let mut servers = Servers {
            tasks: JoinSet::new(),
            shutdown: CancellationToken::new(),
        };
        if let Some(addr) = metrics_addr {
            let listener = bind(addr, "metrics").await?;
            let routes = metrics::metrics_routes(mgr.metrics.clone());
            if let Some(certs) = metrics_certs {
                let routes =
                    metrics::with_authentication_and_authorization(routes, mgr.client.clone());
                servers.tasks.spawn(tls::serve(
                    listener,
                    Arc::new(certs),
                    routes,
                    servers.shutdown.clone(),
                    "metrics server",
                ));
                tracing::info!(%addr, "serving metrics over HTTPS on /metrics (bearer token required)");
            } else {
                servers.tasks.spawn(tls::serve_plain(
                    listener,
                    routes,
                    servers.shutdown.clone(),
                    "metrics server",
                ));
                tracing::warn!(%addr, "serving metrics without TLS or authentication on /metrics");
            }
        }
        if let Some(addr) = probe_addr {
            servers.tasks.spawn(tls::serve_plain(
                bind(addr, "health probes").await?,
                metrics::health_routes(),
                servers.shutdown.clone(),
                "health probe server",
            ));
            tracing::info!(%addr, "serving health probes on /healthz and /readyz");
        }
        Ok(Self {
            args,
            mgr,
            tasks: JoinSet::new(),
            servers,
            leader: None,
        })
    }

    /// The handle controllers and webhooks receive.
    pub fn manager(&self) -> Manager {
        self.mgr.clone()
    }

    /// The flags the manager was started with.
    pub fn args(&self) -> &Args {
        &self.args
    }

    /// Runs `task` (a controller or a webhook server) until it returns; it should return
    /// once `Manager::shutdown` is cancelled. A task that returns an error (or panics) stops
    /// the manager, which then exits 1 naming it.
    pub fn spawn(&mut self, task: impl Future<Output = anyhow::Result<()>> + Send + 'static) {
        self.tasks.spawn(task);
    }

    /// Serves `webhooks` over HTTPS with `certs` on `[::]:--webhook-port` until shutdown, on
    /// every replica, leader or not (the API server calls any ready pod behind the webhook
    /// Service); `certs` is [`crate::webhook::certificates`], loaded before
    /// [`Runner::start`]. With `None` (`ENABLE_WEBHOOKS=false`) nothing is served. The server
    /// is a task of the runner: misconfigured webhooks ([`crate::webhook::Webhooks::routes`])
    /// or a port that cannot be bound stop the manager, which exits 1 naming them.
    pub fn serve_webhooks(
        &mut self,
        certs: Option<tls::Certificates>,
        webhooks: crate::webhook::Webhooks,
    ) {
        let Some(certs) = certs else { return };
        let addr = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, self.args.webhook_port));
        tracing::info!(%addr, "serving webhooks over HTTPS");
        self.spawn(crate::webhook::serve(
            addr,
            certs,
            webhooks,
            self.mgr.shutdown.clone(),
        ));
    }

    /// With `--leader-elect`, waits until this replica holds the Lease; without it, returns
    /// at once. Returns `false` when shutdown began while waiting (start no controllers
    /// then). Errors: the Lease cannot be read or created (RBAC: `config/rbac/
    /// leader_election_role.yaml`), or leader election stopped.
    pub async fn elect_leader(&mut self) -> anyhow::Result<bool> {
        self.leader = elect_leader(&self.args, &self.mgr).await?;
        Ok(!self.mgr.shutdown.is_cancelled())
    }

    /// Runs until shutdown (a signal, a failed task or server, the loss of the Lease), then
    /// stops everything in controller-runtime's order: cancels `Manager::shutdown` and waits
    /// (up to [`SHUTDOWN_TIMEOUT`]) for the controllers and webhook servers, gives the Lease
    /// up, and only then stops the metrics and probe servers, which serve until then.
    /// Errors: the failure that ended the run, if it was not a signal.
    pub async fn run(mut self) -> anyhow::Result<()> {
        let failure = if self.mgr.shutdown.is_cancelled() {
            None
        } else {
            run_until_shutdown(
                &self.mgr,
                &mut self.tasks,
                &mut self.servers,
                &mut self.leader,
            )
            .await
        };
        tracing::info!("shutting down");
        self.mgr.shutdown.cancel();
        drain("controllers", &mut self.tasks).await;
        if let Some(leader) = self.leader.take() {
            leader.release().await;
        }
        self.servers.shutdown.cancel();
        drain("HTTP servers", &mut self.servers.tasks).await;
        match failure {
            Some(err) => Err(err),
            None => {
                tracing::info!("manager stopped");
                Ok(())
            }
        }
    }
}

/// Infers the cluster's configuration (KUBECONFIG, `~/.kube/config`, or in-cluster) and
/// checks that the API server answers within [`API_SERVER_TIMEOUT`]. Errors say which.
async fn connect() -> anyhow::Result<kube::Client> {
    let config = kube::Config::infer().await.context(
        "no Kubernetes cluster configured: set KUBECONFIG or ~/.kube/config, or run in a cluster",
    )?;
    let cluster_url = config.cluster_url.clone();
    let client = kube::Client::try_from(config).context("cannot create a Kubernetes client")?;
    match tokio::time::timeout(API_SERVER_TIMEOUT, client.apiserver_version()).await {
        Ok(Ok(info)) => {
            tracing::info!(server = %cluster_url, version = %info.git_version, "connected to the Kubernetes API server");
            Ok(client)
        }
        Ok(Err(err)) => Err(err)
            .with_context(|| format!("cannot reach the Kubernetes API server at {cluster_url}")),
        Err(_) => anyhow::bail!(
            "cannot reach the Kubernetes API server at {cluster_url}: no answer within {}s",
            API_SERVER_TIMEOUT.as_secs()
        ),
    }
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

/// Parses a bind address in the Go style the flags use: `:8443` (all interfaces, IPv4 and
/// IPv6: `[::]:8443`, see [`crate::tls::bind`]), `127.0.0.1:8443`, `[::1]:8443`, or
/// `HOST:PORT` with a host name
/// (`localhost:8443`), resolved now (an IPv4 address is preferred when the name has both);
/// `0` disables the listener (`Ok(None)`). Errors name `flag`: a value of none of these forms,
/// or a host name that does not resolve.
pub fn parse_bind_address(flag: &str, value: &str) -> anyhow::Result<Option<SocketAddr>> {
    if value == "0" {
        return Ok(None);
    }
    let invalid =
        || anyhow::anyhow!("invalid {flag} {value:?}: expected `:PORT`, `HOST:PORT` or `0`");
    if let Some(port) = value.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|_| invalid())?;
        return Ok(Some(SocketAddr::from((
            std::net::Ipv6Addr::UNSPECIFIED,
            port,
        ))));
    }
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Ok(Some(addr));
    }
    let Some((host, port)) = value.rsplit_once(':') else {
        return Err(invalid());
    };
    let port: u16 = port.parse().map_err(|_| invalid())?;
    if host.is_empty() || host.contains(':') {
        return Err(invalid());
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|err| anyhow::anyhow!("invalid {flag} {value:?}: cannot resolve {host}: {err}"))?
        .collect();
    addrs
        .iter()
        .find(|addr| addr.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .map(Some)
        .ok_or_else(|| anyhow::anyhow!("invalid {flag} {value:?}: {host} has no address"))
}

/// Installs the global tracing subscriber: logs go to stderr, as text or JSON, filtered by
/// `RUST_LOG` (default `info`); colours only when stderr is a terminal.
pub fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::webhook::{Defaulter, Denied, Webhooks};

    const OPTIONS: Options = Options {
        version: "0.0.0",
        leader_election_id: "test.example.com",
        namespaced: false,
    };

    struct Nothing;

    impl Defaulter<ConfigMap> for Nothing {
        async fn default(&self, _: &mut ConfigMap) -> Result<(), Denied> {
            Ok(())
        }
    }

    /// A runner as [`Runner::start`] leaves it, without a cluster: a client that answers
    /// nothing, no metrics or probe servers.
    fn runner(flags: &[&str]) -> Runner {
        let (service, _handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let args = Args::try_parse_from_with(&OPTIONS, [&["manager"], flags].concat()).unwrap();
        Runner {
            args,
            mgr: Manager::for_tests(kube::Client::new(service, "default")),
            tasks: JoinSet::new(),
            servers: Servers {
                tasks: JoinSet::new(),
                shutdown: CancellationToken::new(),
            },
            leader: None,
        }
    }

    #[tokio::test]
    async fn without_certificates_no_webhook_server_is_started() {
        let mut runner = runner(&[]);
        runner.serve_webhooks(None, Webhooks::new());
        assert!(runner.tasks.is_empty());
    }

    #[tokio::test]
    async fn the_webhook_server_is_a_task_of_the_runner_and_stops_at_shutdown() {
        let mut runner = runner(&["--webhook-port", "0"]);
        let certs = tls::Certificates::self_signed(&["localhost"]).unwrap();
        let webhooks = Webhooks::new().defaulting::<ConfigMap, _>("/mutate--v1-configmap", Nothing);
        runner.serve_webhooks(Some(certs), webhooks);
        assert_eq!(runner.tasks.len(), 1);
        runner.mgr.shutdown.cancel();
        let done = tokio::time::timeout(Duration::from_secs(10), runner.tasks.join_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        done.unwrap();
    }

    #[tokio::test]
    async fn misregistered_webhooks_fail_the_server_task_with_the_reason() {
        let mut runner = runner(&["--webhook-port", "0"]);
        let certs = tls::Certificates::self_signed(&["localhost"]).unwrap();
        let webhooks = Webhooks::new().defaulting::<ConfigMap, _>("mutate", Nothing);
        runner.serve_webhooks(Some(certs), webhooks);
        let err = runner
            .tasks
            .join_next()
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "webhooks: webhook path \"mutate\" must start with '/'"
        );
    }
}
