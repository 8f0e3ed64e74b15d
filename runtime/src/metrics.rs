// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The manager's metrics and probes: reconcile metrics ([`Metrics`], named like
//! controller-runtime's), the `/metrics` route, the bearer-token authentication and
//! authorization in front of it (TokenReview, then SubjectAccessReview, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization`), and the `/healthz` and `/readyz` routes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Metric;
use prometheus_client::registry::Registry;

use crate::routes::{self, Handler, Request, Response, Routes};

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
/// `controller_runtime_reconcile_total{controller,result}`,
/// `controller_runtime_reconcile_errors_total{controller}` and
/// `controller_runtime_reconcile_time_seconds{controller}`; and, on Linux, the process metrics
/// of Prometheus's Go and Rust clients (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, ... see [`ProcessCollector`]). The dashboards that
/// `rsbuilder edit --plugins grafana` writes query exactly these names. A project adds its
/// own metrics with [`Metrics::register`].
pub struct Metrics {
    // Behind a lock because the manager shares `Metrics` (`Arc`) and a project registers its
    // own metrics after the manager made it; held only to register and to encode.
    registry: Mutex<Registry>,
    reconcile_total: Family<ReconcileLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
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
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            reconcile_errors.clone(),
        );
        let reconcile_time: HistogramFamily =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.005, 2.0, 14)));
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            reconcile_time.clone(),
        );
        registry.register_collector(Box::new(ProcessCollector));
        Self {
            registry: Mutex::new(registry),
            reconcile_total,
            reconcile_errors,
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
        if result == "error" {
            self.reconcile_errors
                .get_or_create(&ControllerLabels {
                    controller: controller.to_owned(),
                })
                .inc();
        }
        self.reconcile_time
            .get_or_create(&ControllerLabels {
                controller: controller.to_owned(),
            })
            .observe(duration.as_secs_f64());
    }

    /// Adds a project's own metric (a prometheus-client `Counter`, `Gauge`, `Histogram` or
    /// `Family` of them, re-exported as [`crate::prometheus_client`]) to what `/metrics`
    /// serves, under `name` with the `help` text. Keep a clone of `metric` to update it:
    /// clones share the value. prometheus-client appends `_total` to a counter's name, as the
    /// OpenMetrics format asks. From `src/main.rs`, before the controllers start:
    ///
    /// ```
    /// use rsbuilder_runtime::prometheus_client::metrics::counter::Counter;
    /// # let metrics = rsbuilder_runtime::metrics::Metrics::default();
    /// // metrics: runner.manager().metrics
    /// let items = Counter::<u64>::default();
    /// metrics.register("foo_reconcile_items", "Items reconciled", items.clone());
    /// items.inc();
    /// assert!(metrics.encode().contains("foo_reconcile_items_total 1"));
    /// ```
    ///
    /// Registering a name twice serves it twice; the registry does not check.
    pub fn register(&self, name: impl Into<String>, help: impl Into<String>, metric: impl Metric) {
        self.registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .register(name, help, metric);
    }

    /// All metrics in the OpenMetrics text format (ends with `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

/// The process metrics, read from `/proc/self` at each scrape, under the names and units of
/// Prometheus's client libraries (the Go client's process collector, which Grafana dashboards
/// and kube-prometheus rules expect): `process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`,
/// `process_max_fds` and `process_start_time_seconds`. A value that cannot be read (not Linux,
/// `/proc` not mounted) is left out of the scrape rather than reported as 0.
#[derive(Debug)]
pub struct ProcessCollector;

/// The kernel reports the times of `/proc/<pid>/stat` in USER_HZ ticks, fixed at 100 by the
/// kernel's ABI on the architectures Kubernetes runs on (the Go client's procfs assumes the same).
const USER_HZ: f64 = 100.0;

/// What [`ProcessCollector`] reads: the values of `/proc/self/stat`, `/proc/self/status`,
/// `/proc/self/limits` and `/proc/stat` that it reports.
#[derive(Debug, Default, PartialEq)]
struct ProcessStats {
    cpu_seconds: Option<f64>,
    resident_bytes: Option<i64>,
    virtual_bytes: Option<i64>,
    start_time_seconds: Option<f64>,
    open_fds: Option<i64>,
    max_fds: Option<i64>,
}

impl ProcessStats {
    fn read() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let mut stats = read("/proc/self/stat")
            .map(|stat| parse_stat(&stat, read("/proc/stat").as_deref()))
            .unwrap_or_default();
        stats.resident_bytes = read("/proc/self/status").and_then(|s| parse_vm_rss(&s));
        stats.open_fds = std::fs::read_dir("/proc/self/fd")
            .ok()
            .map(|dir| dir.count() as i64);
        stats.max_fds = read("/proc/self/limits").and_then(|s| parse_max_fds(&s));
        stats
    }
}

/// The CPU time, virtual memory size and start time from the text of `/proc/self/stat`
/// (proc(5): fields 14 `utime`, 15 `stime`, 22 `starttime`, 23 `vsize`, counted after the
/// parenthesized command name, which may itself hold spaces or parentheses), with the boot time
/// (`btime`) from `/proc/stat` for the start time.
fn parse_stat(stat: &str, proc_stat: Option<&str>) -> ProcessStats {
    let Some(after_comm) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return ProcessStats::default();
    };
    // Field 3 (`state`) is the first one after the command name.
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let cpu_seconds = match (field(14), field(15)) {
        (Some(user), Some(system)) => Some((user + system) as f64 / USER_HZ),
        _ => None,
    };
    let boot_time = proc_stat.and_then(|text| {
        text.lines()
            .find_map(|line| line.strip_prefix("btime "))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    let start_time_seconds = match (boot_time, field(22)) {
        (Some(boot), Some(ticks)) => Some(boot as f64 + ticks as f64 / USER_HZ),
        _ => None,
    };
    ProcessStats {
        cpu_seconds,
        virtual_bytes: field(23).and_then(|v| i64::try_from(v).ok()),
        start_time_seconds,
        ..ProcessStats::default()
    }
}

/// The resident set size in bytes from the `VmRSS:` line of `/proc/self/status` (in kB there).
fn parse_vm_rss(status: &str) -> Option<i64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kb: i64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kb.checked_mul(1024)
}

/// The soft limit of `Max open files` in `/proc/self/limits` (`None` when `unlimited`).
fn parse_max_fds(limits: &str) -> Option<i64> {
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse().ok()
}

impl prometheus_client::collector::Collector for ProcessCollector {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::gauge::ConstGauge;
        let stats = ProcessStats::read();
        if let Some(v) = stats.cpu_seconds {
            let metric = ConstCounter::new(v);
            metric.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                metric.metric_type(),
            )?)?;
        }
        let gauges_i64 = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                stats.resident_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                stats.virtual_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                stats.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                stats.max_fds,
            ),
        ];
        for (name, help, value) in gauges_i64 {
            if let Some(v) = value {
                let metric = ConstGauge::new(v);
                metric.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    metric.metric_type(),
                )?)?;
            }
        }
        if let Some(v) = stats.start_time_seconds {
            let metric = ConstGauge::new(v);
            metric.encode(encoder.encode_descriptor(
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds",
                None,
                metric.metric_type(),
            )?)?;
        }
        Ok(())
    }
}

/// Content type of the OpenMetrics text format.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The metrics route: `GET /metrics` answers [`Metrics::encode`].
pub fn metrics_routes(metrics: Arc<Metrics>) -> Routes {
    Routes::new().get("/metrics", move |_| {
        let text = metrics.encode();
        async move { routes::answer(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, text) }
    })
}

/// The outcome of checking a request's bearer token ([`review_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// The TokenReview did not authenticate the token (answered `401 Unauthorized`).
    Unauthenticated,
    /// The token's user may not make the request (answered `403 Forbidden`).
    Denied {
        /// The authenticated user name.
        user: String,
        /// The authorizer's reason, if it gave one.
        reason: String,
    },
    /// The token's user may make the request.
    Allowed {
        /// The authenticated user name.
        user: String,
    },
}

/// How long each review request ([`review_access`]) may wait for the API server.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks the API server whether `token` may `verb` the non-resource URL `path`, as
/// controller-runtime's `filters.WithAuthenticationAndAuthorization` does: a TokenReview
/// (authentication.k8s.io/v1) authenticates the token, then a SubjectAccessReview
/// (authorization.k8s.io/v1) with the reviewed user, groups, uid and extra checks
/// `nonResourceAttributes {path, verb}`. Nothing is cached: every call makes both reviews.
/// Errors: either review request fails (the manager's ServiceAccount needs `create` on
/// `tokenreviews` and `subjectaccessreviews`: `config/rbac/metrics_auth_role.yaml`) or gets
/// no answer within [`REVIEW_TIMEOUT`]; the error names the review.
pub async fn review_access(
    client: &kube::Client,
    token: &str,
    path: &str,
    verb: &str,
) -> anyhow::Result<Access> {
    let post = kube::api::PostParams::default();
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: token.to_owned(),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviewed = within_review_timeout(
        "TokenReview",
        kube::Api::<TokenReview>::all(client.clone()).create(&post, &review),
    )
    .await?;
    let status = reviewed.status.unwrap_or_default();
    let user = match (status.authenticated, status.user) {
        (Some(true), Some(user)) => user,
        _ => return Ok(Access::Unauthenticated),
    };
    let name = user.username.clone().unwrap_or_default();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username,
            groups: user.groups,
            uid: user.uid,
            extra: user.extra,
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.to_owned()),
                verb: Some(verb.to_owned()),
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviewed = within_review_timeout(
        "SubjectAccessReview",
        kube::Api::<SubjectAccessReview>::all(client.clone()).create(&post, &review),
    )
    .await?;
    let status = reviewed.status.unwrap_or_default();
    if status.allowed {
        Ok(Access::Allowed { user: name })
    } else {
        Ok(Access::Denied {
            user: name,
            reason: status.reason.unwrap_or_default(),
        })
    }
}

/// Awaits one review request for at most [`REVIEW_TIMEOUT`]; errors name the `review` kind.
async fn within_review_timeout<T>(
    review: &str,
    request: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(REVIEW_TIMEOUT, request).await {
        Ok(Ok(reviewed)) => Ok(reviewed),
        Ok(Err(err)) => Err(anyhow::Error::new(err).context(format!("{review} failed"))),
        Err(_) => Err(anyhow::anyhow!(
            "{review} got no answer within {}s",
            REVIEW_TIMEOUT.as_secs()
        )),
    }
}

/// Puts bearer-token authentication and authorization in front of every route of `routes`
/// (unknown paths still answer 404): a request without `Authorization: Bearer <token>`, or
/// whose token the TokenReview does not authenticate, is answered `401 Unauthorized`; one
/// the SubjectAccessReview does not allow (verb = the lower-case HTTP method, path = the
/// request path) `403 Forbidden`; a failed review, or one the API server does not answer
/// within [`REVIEW_TIMEOUT`], `500` (logged as an error). See [`review_access`]. Mirrors
/// controller-runtime's `filters.WithAuthenticationAndAuthorization`.
pub fn with_authentication_and_authorization(routes: Routes, client: kube::Client) -> Routes {
    routes.layer(move |request, next| authorize(client.clone(), request, next))
}

async fn authorize(client: kube::Client, request: Request, next: Handler) -> Response {
    let Some(token) = bearer_token(request.headers()) else {
        return routes::text(StatusCode::UNAUTHORIZED, "Unauthorized");
    };
    let path = request.uri().path().to_owned();
    let verb = request.method().as_str().to_ascii_lowercase();
    match review_access(&client, &token, &path, &verb).await {
        Ok(Access::Allowed { .. }) => next(request).await,
        Ok(Access::Unauthenticated) => routes::text(StatusCode::UNAUTHORIZED, "Unauthorized"),
        Ok(Access::Denied { user, reason }) => {
            tracing::debug!(%user, %path, %reason, "metrics request denied");
            routes::text(
                StatusCode::FORBIDDEN,
                format!("Authorization denied for user {user}"),
            )
        }
        Err(err) => {
            tracing::error!(%path, "reviewing a metrics request's token failed: {err:#}");
            routes::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Authentication or authorization failed",
            )
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any.
fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let mut parts = value.split_whitespace();
    let scheme = parts.next()?;
    let token = parts.next()?;
    if !scheme.eq_ignore_ascii_case("bearer") || parts.next().is_some() {
        return None;
    }
    Some(token.to_owned())
}

/// The probe routes: `GET /healthz` (liveness) and `GET /readyz` (readiness) answer `200 ok`
/// while the process serves requests.
pub fn health_routes() -> Routes {
    Routes::new()
        .get("/healthz", |_| ping())
        .get("/readyz", |_| ping())
}

async fn ping() -> Response {
    routes::text(StatusCode::OK, "ok")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        // A command name with a space and a parenthesis, as a process may name itself.
        let stat = "4242 (my (odd) manager) S 1 4242 4242 0 -1 4194560 1234 0 0 0 \
                    250 75 0 0 20 0 8 0 1200 104857600 2560 18446744073709551615";
        let stats = parse_stat(stat, Some("cpu  1 2 3\nbtime 1700000000\nprocesses 9\n"));
        assert_eq!(stats.cpu_seconds, Some(3.25));
        assert_eq!(stats.start_time_seconds, Some(1_700_000_012.0));
        assert_eq!(stats.virtual_bytes, Some(104_857_600));
    }

    #[test]
    fn unreadable_values_are_left_out() {
        assert_eq!(
            parse_stat("no parenthesis here", None),
            ProcessStats::default()
        );
        let stats = parse_stat("1 (m) S 1 1 1 0 -1 0 0 0 0 0 10 10", None);
        assert_eq!(stats.cpu_seconds, Some(0.2));
        assert_eq!(stats.start_time_seconds, None, "no btime, no start time");
        assert_eq!(
            parse_vm_rss("Name:\tm\nVmRSS:\t  2048 kB\n"),
            Some(2 * 1024 * 1024)
        );
        assert_eq!(parse_vm_rss("Name:\tm\n"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_max_fds(limits), Some(1024));
        assert_eq!(
            parse_max_fds(
                "Max open files            unlimited            unlimited            files"
            ),
            None
        );
    }

    #[test]
    fn a_registered_metric_is_encoded_with_the_reconcile_metrics() {
        let metrics = Metrics::default();
        let items = Counter::<u64>::default();
        metrics.register("foo_reconcile_items", "Items reconciled", items.clone());
        let depth = prometheus_client::metrics::gauge::Gauge::<i64>::default();
        metrics.register("foo_queue_depth", "Items waiting", depth.clone());
        items.inc_by(3);
        depth.set(7);
        metrics.reconcile("aijob", Duration::from_millis(3), "success");
        let text = metrics.encode();
        assert!(
            text.contains("# HELP foo_reconcile_items Items reconciled.\n"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE foo_reconcile_items counter\n"),
            "{text}"
        );
        assert!(text.contains("\nfoo_reconcile_items_total 3\n"), "{text}");
        assert!(text.contains("\nfoo_queue_depth 7\n"), "{text}");
        assert!(
            text.contains(
                r#"controller_runtime_reconcile_total{controller="aijob",result="success"} 1"#
            ),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn errors_are_counted_per_controller_beside_the_results() {
        let metrics = Metrics::default();
        metrics.reconcile("aijob", Duration::from_millis(3), "success");
        metrics.reconcile("aijob", Duration::from_millis(3), "error");
        metrics.reconcile("aijob", Duration::from_millis(3), "error");
        let text = metrics.encode();
        assert!(
            text.contains(r#"controller_runtime_reconcile_errors_total{controller="aijob"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"controller_runtime_reconcile_total{controller="aijob",result="error"} 2"#
            ),
            "{text}"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_metrics_are_served_on_linux() {
        let text = Metrics::default().encode();
        for name in [
            "# TYPE process_cpu_seconds counter",
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_open_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(text.contains(name), "{name} missing from:\n{text}");
        }
        let rss: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("process_resident_memory_bytes "))
            .and_then(|v| v.parse().ok())
            .unwrap();
        assert!(
            rss > 1024.0 * 1024.0,
            "a test process holds more than 1 MiB: {rss}"
        );
    }
}
