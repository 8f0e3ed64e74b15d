// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The API server's own metrics, served at `GET /metrics` in kube-apiserver's names and
//! labels, so that the dashboards and alerts written for kube-apiserver (and for aggregated
//! servers built on k8s.io/apiserver, such as metrics-server) read them:
//!
//! - `apiserver_request_total{verb, dry_run, group, version, resource, subresource, scope,
//!   component, code}`: every resource request answered, 429s included (requests refused by
//!   authentication or authorization are not counted, as k8s.io/apiserver counts them after
//!   its authentication filters);
//! - `apiserver_request_duration_seconds{verb, dry_run, group, version, resource,
//!   subresource, scope, component}`: a histogram with kube-apiserver's buckets (5 ms to 60
//!   s), of every resource request but watches (a watch's time is its client's);
//! - `apiserver_current_inflight_requests{request_kind}`: `readOnly` and `mutating` requests
//!   in flight now ([`super::limits`]), as kube-apiserver's max-in-flight filter reports them;
//! - `apiserver_storage_objects{resource}` (`databases.example.com`, the group resource as
//!   Go prints it) and `apiserver_resource_objects{group, resource}`: the objects of each kind
//!   in the store, counted when `/metrics` is read ([`ApiMetrics::set_object_count`]; -1
//!   when the count failed), where kube-apiserver counts them once a minute;
//! - with priority and fairness, kube's `apiserver_flowcontrol_*` series
//!   ([`ApiMetrics::register_flowcontrol`]).
//!
//! Labels follow k8s.io/apiserver's `endpoints/metrics`: `verb` is the HTTP verb cleaned as
//! it cleans it (`GET` of one object, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY` for a
//! server-side apply, `DELETE`, `DELETECOLLECTION`), `scope` is `resource` (one object),
//! `namespace` (a namespace's collection) or `cluster` (every namespace), `dry_run` is `All`
//! for a dry run, `component` is `apiserver`. Requests for other paths (discovery, OpenAPI,
//! `/version`, the probes, `/metrics`) are not counted. `/metrics` sits behind the server's
//! delegated authorization like any non-resource path (`get` on the path `/metrics`). Only
//! requests for a resource (or subresource) this server serves are counted
//! ([`ApiMetrics::serves`]): a path naming anything else is a 404 that makes no series.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::kind::ApiKind;
use super::limits::{InFlight, Pool};
use super::request::{Attributes, attributes};

/// kube-apiserver's buckets of `apiserver_request_duration_seconds`.
pub const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// What a resource request is, as the metrics label it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The cleaned verb (`LIST`, `APPLY`, ...).
    pub verb: String,
    /// `All` for a dry run, else empty.
    pub dry_run: String,
    /// The API group (empty for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The resource's plural.
    pub resource: String,
    /// The subresource (`status`, `scale`), or empty.
    pub subresource: String,
    /// `resource`, `namespace` or `cluster`.
    pub scope: String,
    /// Always `apiserver`.
    pub component: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    #[prometheus(flatten)]
    request: RequestLabels,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    request_kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StorageLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    group: String,
    resource: String,
}

type Durations = Family<RequestLabels, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

/// The API server's metrics: counters and histograms updated by [`middleware`], the in-flight
/// gauges read from [`InFlight`] when encoded.
pub struct ApiMetrics {
    registry: Mutex<Registry>,
    requests: Family<CodeLabels, Counter>,
    durations: Durations,
    inflight_gauges: Family<KindLabels, Gauge>,
    storage_objects: Family<StorageLabels, Gauge>,
    resource_objects: Family<ResourceLabels, Gauge>,
    inflight: Arc<InFlight>,
    /// `(group, version, resource, subresource)` of every endpoint served: the only label
    /// values a request is counted under.
    served: HashSet<(String, String, String, String)>,
}

impl ApiMetrics {
    /// Metrics with nothing counted yet, for a server of `kinds` (each kind's resource, its
    /// `status` and `scale` subresources when it has them); the in-flight gauges read
    /// `inflight`.
    pub fn new(inflight: Arc<InFlight>, kinds: &[ApiKind]) -> Arc<Self> {
        let mut served = HashSet::new();
        for k in kinds {
            let key = |sub: &str| {
                (
                    k.group.clone(),
                    k.version.clone(),
                    k.plural.clone(),
                    sub.to_string(),
                )
            };
            served.insert(key(""));
            if k.status_subresource {
                served.insert(key("status"));
            }
            if k.scale.is_some() {
                served.insert(key("scale"));
            }
        }
        let mut registry = Registry::default();
        let requests = Family::<CodeLabels, Counter>::default();
        registry.register(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            requests.clone(),
        );
        let durations: Durations = Family::new_with_constructor(duration_histogram);
        registry.register(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            durations.clone(),
        );
        let inflight_gauges = Family::<KindLabels, Gauge>::default();
        registry.register(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
            inflight_gauges.clone(),
        );
        let storage_objects = Family::<StorageLabels, Gauge>::default();
        registry.register(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            storage_objects.clone(),
        );
        let resource_objects = Family::<ResourceLabels, Gauge>::default();
        registry.register(
            "apiserver_resource_objects",
            "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            resource_objects.clone(),
        );
        Arc::new(Self {
            registry: Mutex::new(registry),
            requests,
            durations,
            inflight_gauges,
            storage_objects,
            resource_objects,
            inflight,
            served,
        })
    }

    /// Whether `labels` name an endpoint this server serves. A request for anything else
    /// (`/apis/g1.example/v1/r1`, a made-up subresource) is answered 404 and not counted, as
    /// kube-apiserver counts requests only on the routes it installed (its not-found handler
    /// is not instrumented): label values stay bounded by what is served, whatever paths
    /// clients send.
    pub fn serves(&self, labels: &RequestLabels) -> bool {
        self.served.contains(&(
            labels.group.clone(),
            labels.version.clone(),
            labels.resource.clone(),
            labels.subresource.clone(),
        ))
    }

    /// Sets the object count of `kind` (`None`: the count failed, written -1 as kube
    /// writes it) in `apiserver_storage_objects{resource="<plural>.<group>"}` (the plural
    /// alone for the core group, as Go's `GroupResource.String`) and
    /// `apiserver_resource_objects{group, resource}`.
    pub fn set_object_count(&self, kind: &ApiKind, count: Option<u64>) {
        let value = count.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let resource = if kind.group.is_empty() {
            kind.plural.clone()
        } else {
            format!("{}.{}", kind.plural, kind.group)
        };
        self.storage_objects
            .get_or_create(&StorageLabels { resource })
            .set(value);
        self.resource_objects
            .get_or_create(&ResourceLabels {
                group: kind.group.clone(),
                resource: kind.plural.clone(),
            })
            .set(value);
    }

    /// Adds flow control's series in kube's names and labels to what [`Self::encode`]
    /// writes: `apiserver_flowcontrol_rejected_requests_total{priority_level, flow_schema,
    /// reason}`, `apiserver_flowcontrol_dispatched_requests_total{priority_level,
    /// flow_schema}`, the gauges `apiserver_flowcontrol_current_inqueue_requests` and
    /// `apiserver_flowcontrol_current_executing_requests{priority_level, flow_schema}`, and
    /// the histogram `apiserver_flowcontrol_request_wait_duration_seconds{priority_level,
    /// flow_schema, execute}` with kube's buckets (0 to 30 s).
    pub fn register_flowcontrol(&self, m: &super::flowcontrol::FlowMetrics) {
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        registry.register(
            "apiserver_flowcontrol_rejected_requests",
            "Number of requests rejected by API Priority and Fairness subsystem",
            m.rejected.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_dispatched_requests",
            "Number of requests executed by API Priority and Fairness subsystem",
            m.dispatched.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_request_wait_duration_seconds",
            "Length of time a request spent waiting in its queue",
            m.wait.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_inqueue_requests",
            "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            m.inqueue.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_executing_requests",
            "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
            m.executing.clone(),
        );
    }

    /// Counts one answered request: `code`, and (unless it is a watch) its `elapsed` time.
    pub fn observe(&self, labels: &RequestLabels, code: u16, elapsed: Duration) {
        self.requests
            .get_or_create(&CodeLabels {
                request: labels.clone(),
                code: code.to_string(),
            })
            .inc();
        if labels.verb != "WATCH" {
            self.durations
                .get_or_create(labels)
                .observe(elapsed.as_secs_f64());
        }
    }

    /// Every metric in the OpenMetrics text format (ends with `# EOF`), the in-flight gauges
    /// read now.
    pub fn encode(&self) -> String {
        for (kind, pool) in [("readOnly", Pool::ReadOnly), ("mutating", Pool::Mutating)] {
            let in_use = i64::try_from(self.inflight.in_use(pool)).unwrap_or(i64::MAX);
            self.inflight_gauges
                .get_or_create(&KindLabels {
                    request_kind: kind.to_string(),
                })
                .set(in_use);
        }
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

/// The labels of a request, or `None` for a request that is not for a resource (discovery,
/// OpenAPI, `/version`, the probes, `/metrics`). `method`, `path` and `query` as sent;
/// `headers` for the patch type (an apply is `APPLY`). The verb and scope are cleaned as
/// k8s.io/apiserver's `endpoints/metrics` cleans them.
pub fn labels(
    method: &Method,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Option<RequestLabels> {
    let Attributes::Resource(a) = attributes(method, path, query) else {
        return None;
    };
    let apply = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/apply-patch"));
    let verb = match a.verb.as_deref().unwrap_or("") {
        "get" => "GET",
        "list" => "LIST",
        "watch" => "WATCH",
        "create" => "POST",
        "update" => "PUT",
        "patch" if apply => "APPLY",
        "patch" => "PATCH",
        "delete" => "DELETE",
        "deletecollection" => "DELETECOLLECTION",
        other => return Some(labels_of(&a, other.to_ascii_uppercase(), query)),
    };
    Some(labels_of(&a, verb.to_string(), query))
}

fn labels_of(
    a: &k8s_openapi::api::authorization::v1::ResourceAttributes,
    verb: String,
    query: Option<&str>,
) -> RequestLabels {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let named = a.name.as_deref().is_some_and(|n| !n.is_empty());
    let namespaced = a.namespace.as_deref().is_some_and(|n| !n.is_empty());
    let scope = if named {
        "resource"
    } else if namespaced {
        "namespace"
    } else {
        "cluster"
    };
    let dry_run = query
        .unwrap_or("")
        .split('&')
        .any(|p| p.starts_with("dryRun="));
    RequestLabels {
        verb,
        dry_run: if dry_run { "All".into() } else { String::new() },
        group: text(&a.group),
        version: text(&a.version),
        resource: text(&a.resource),
        subresource: text(&a.subresource),
        scope: scope.to_string(),
        component: "apiserver".to_string(),
    }
}

/// Counts each resource request that reaches it ([`ApiMetrics::observe`]) with the code of
/// its answer and the time to it. Placed inside authentication and outside the in-flight
/// limits ([`super::server::ApiServer::guard`]), so 429s are counted and refused
/// authentications are not.
pub async fn middleware(
    State(metrics): State<Arc<ApiMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let labels = labels(
        request.method(),
        request.uri().path(),
        request.uri().query(),
        request.headers(),
    )
    .filter(|l| metrics.serves(l));
    let started = Instant::now();
    let response = next.run(request).await;
    if let Some(labels) = labels {
        metrics.observe(&labels, response.status().as_u16(), started.elapsed());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: Method, path: &str, query: Option<&str>, content_type: &str) -> RequestLabels {
        let mut headers = HeaderMap::new();
        if !content_type.is_empty() {
            headers.insert(header::CONTENT_TYPE, content_type.parse().unwrap());
        }
        labels(&method, path, query, &headers).unwrap()
    }

    #[test]
    fn verbs_and_scopes_are_cleaned_as_kube_apiserver_cleans_them() {
        let ns = "/apis/example.com/v1/namespaces/ns/databases";
        let cases = [
            (
                of(Method::GET, &format!("{ns}/a"), None, ""),
                "GET",
                "resource",
                "",
            ),
            (of(Method::GET, ns, None, ""), "LIST", "namespace", ""),
            (
                of(
                    Method::GET,
                    "/apis/example.com/v1/databases",
                    Some("watch=true"),
                    "",
                ),
                "WATCH",
                "cluster",
                "",
            ),
            (
                of(Method::POST, ns, Some("dryRun=All"), ""),
                "POST",
                "namespace",
                "",
            ),
            (
                of(Method::PUT, &format!("{ns}/a/status"), None, ""),
                "PUT",
                "resource",
                "status",
            ),
            (
                of(
                    Method::PATCH,
                    &format!("{ns}/a"),
                    None,
                    "application/merge-patch+json",
                ),
                "PATCH",
                "resource",
                "",
            ),
            (
                of(
                    Method::PATCH,
                    &format!("{ns}/a"),
                    None,
                    "application/apply-patch+yaml",
                ),
                "APPLY",
                "resource",
                "",
            ),
            (
                of(Method::DELETE, &format!("{ns}/a/scale"), None, ""),
                "DELETE",
                "resource",
                "scale",
            ),
            (
                of(Method::DELETE, ns, None, ""),
                "DELETECOLLECTION",
                "namespace",
                "",
            ),
        ];
        for (l, verb, scope, sub) in cases {
            assert_eq!(
                (l.verb.as_str(), l.scope.as_str(), l.subresource.as_str()),
                (verb, scope, sub),
                "{l:?}"
            );
            assert_eq!(
                (l.group.as_str(), l.version.as_str()),
                ("example.com", "v1")
            );
            assert_eq!(
                (l.resource.as_str(), l.component.as_str()),
                ("databases", "apiserver")
            );
        }
        assert_eq!(of(Method::POST, ns, Some("dryRun=All"), "").dry_run, "All");
        assert_eq!(of(Method::POST, ns, None, "").dry_run, "");
        for path in [
            "/apis",
            "/api",
            "/apis/example.com/v1",
            "/openapi/v3",
            "/metrics",
            "/healthz",
        ] {
            assert_eq!(
                labels(&Method::GET, path, None, &HeaderMap::new()),
                None,
                "{path}"
            );
        }
    }

    #[test]
    fn requests_are_counted_by_code_and_timed_except_watches() {
        let inflight = InFlight::new(super::super::limits::Limits::default());
        let m = ApiMetrics::new(inflight, &[]);
        let ns = "/apis/example.com/v1/namespaces/ns/databases";
        let list = of(Method::GET, ns, None, "");
        m.observe(&list, 200, Duration::from_millis(30));
        m.observe(&list, 200, Duration::from_millis(30));
        m.observe(&list, 429, Duration::from_millis(1));
        let watch = of(Method::GET, ns, Some("watch=1"), "");
        m.observe(&watch, 200, Duration::from_secs(300));
        let text = m.encode();
        let series = r#"apiserver_request_total{verb="LIST",dry_run="",group="example.com",version="v1",resource="databases",subresource="",scope="namespace",component="apiserver",code="200"} 2"#;
        assert!(text.contains(series), "{text}");
        assert!(text.contains(r#"code="429"} 1"#), "{text}");
        assert!(
            text.contains(r#"apiserver_request_total{verb="WATCH""#),
            "{text}"
        );
        assert!(
            text.contains(r#"apiserver_request_duration_seconds_count{verb="LIST""#),
            "{text}"
        );
        assert!(
            !text.contains(r#"apiserver_request_duration_seconds_count{verb="WATCH""#),
            "{text}"
        );
        assert!(
            text.contains(r#"apiserver_current_inflight_requests{request_kind="mutating"} 0"#),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
