{{ p.rust_header }}//! The manager's building blocks: command-line flags ([`Args`]), the shared handle every
//! controller and webhook receives ([`Manager`]), reconcile metrics ([`Metrics`]), the
//! metrics and health HTTP routers, and logging setup.
//!
//! `src/main.rs` wires them together; controllers only need [`Manager`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

/// Log output format (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Default name of the leader-election Lease: `<project>.<domain>`.
pub const LEADER_ELECTION_ID: &str = "{{ p.leader_election_id }}";

/// The manager's command-line flags. Names and defaults follow a Kubebuilder manager.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "manager", version, about = "Runs the operator's controllers")]
pub struct Args {
    /// Address the metrics endpoint binds to (`:8080` = all interfaces, `0` = disabled).
    #[arg(long, default_value = ":8080")]
    pub metrics_bind_address: String,

    /// Address the `/healthz` and `/readyz` probes bind to.
    #[arg(long, default_value = ":8081")]
    pub health_probe_bind_address: String,

    /// Enable leader election, so that only one replica runs the controllers at a time.
    #[arg(long, default_value_t = false)]
    pub leader_elect: bool,

    /// Namespace of the leader-election Lease (default: the namespace the manager runs in).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,

    /// Name of the leader-election Lease.
    #[arg(long, default_value = LEADER_ELECTION_ID)]
    pub leader_election_id: String,

{%- if p.namespaced %}
    /// Namespace to watch (default: the namespace the manager runs in).
    #[arg(long, env = "POD_NAMESPACE")]
    pub namespace: Option<String>,
{%- else %}
    /// Watch only this namespace (default: all namespaces).
    #[arg(long)]
    pub namespace: Option<String>,
{%- endif %}

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
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    controller: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

type HistogramFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// Reconcile metrics, named like controller-runtime's so existing dashboards work:
/// `controller_runtime_reconcile_total{controller,result}` and
/// `controller_runtime_reconcile_time_seconds{controller}`.
pub struct Metrics {
    registry: Registry,
    reconcile_total: Family<ReconcileLabels, Counter>,
    reconcile_time: HistogramFamily,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let reconcile_total = Family::<ReconcileLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        let reconcile_time: HistogramFamily =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.005, 2.0, 14)));
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            reconcile_time.clone(),
        );
        Self {
            registry,
            reconcile_total,
            reconcile_time,
        }
    }
}

impl Metrics {
    /// Records one reconciliation of `controller` that took `duration` and ended with
    /// `result` (`"success"` or `"error"`).
    pub fn reconcile(&self, controller: &str, duration: Duration, result: &'static str) {
        self.reconcile_total
            .get_or_create(&ReconcileLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            })
            .inc();
        self.reconcile_time
            .get_or_create(&ControllerLabels {
                controller: controller.to_owned(),
            })
            .observe(duration.as_secs_f64());
    }

    /// All metrics in the OpenMetrics text format (ends with `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Content type of the OpenMetrics text format.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The metrics router: `GET /metrics` answers [`Metrics::encode`].
pub fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(serve_metrics))
        .with_state(metrics)
}

async fn serve_metrics(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)],
        metrics.encode(),
    )
}

/// The probe router: `GET /healthz` (liveness) and `GET /readyz` (readiness) answer `200 ok`
/// while the process serves requests.
pub fn health_router() -> Router {
    Router::new()
        .route("/healthz", get(ping))
        .route("/readyz", get(ping))
}

async fn ping() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// Parses a bind address in the Go style the flags use: `:8080` (all interfaces),
/// `127.0.0.1:8080`, `[::1]:8080`; `0` disables the listener (`Ok(None)`).
pub fn parse_bind_address(flag: &str, value: &str) -> anyhow::Result<Option<SocketAddr>> {
    if value == "0" {
        return Ok(None);
    }
    let full = match value.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => value.to_owned(),
    };
    full.parse::<SocketAddr>().map(Some).map_err(|_| {
        anyhow::anyhow!("invalid {flag} {value:?}: expected `:PORT`, `HOST:PORT` or `0`")
    })
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
