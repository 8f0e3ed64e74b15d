// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The HTTP face of the API server: discovery, health, version, OpenAPI and the resource
//! endpoints, as an axum [`Router`] served over the runtime's TLS ([`crate::tls`]).
//!
//! Paths, verbs and answers follow k8s.io/apiserver's handlers (`pkg/endpoints`):
//! `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/status|/scale]]`; GET lists or
//! (`watch=true`) watches a collection; POST creates; DELETE on a collection is
//! deletecollection; PUT, PATCH (merge or JSON patch, or server-side apply) and DELETE on an
//! object; GET, PUT and PATCH on `/status` and on `/scale` (an `autoscaling/v1` Scale; no
//! apply there). Errors are
//! `metav1.Status` bodies. Add routes of your own (the Database example's `/custom`) by
//! merging them into [`ApiServer::router`]'s answer.
//!
//! This file holds the configuration, the server, its guard and the dispatch of a request to
//! one handler per verb, each a short pipeline (options, decode, registry, encode):
//! [`get`], [`list`], [`watch`], [`create`], [`update`], [`patch`], [`delete`] (also
//! deletecollection) and [`scale`]. Beside them: [`routes`] (the path parser), [`options`]
//! (every query option parsed and validated in one place), [`decode`] (bodies, patch types,
//! `fieldValidation`), [`encode`] (`Accept` negotiation, Table, JSON, `Warning` headers,
//! Status errors), [`discovery`] and [`health`].

pub mod create;
pub mod decode;
pub mod delete;
pub mod discovery;
pub mod encode;
pub mod get;
pub mod health;
pub mod list;
pub mod options;
pub mod patch;
pub mod routes;
pub mod scale;
pub mod update;
pub mod watch;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

use super::kind::ApiKind;
use super::openapi;
use super::registry::{Part, Registry};
use super::status::ApiError;
use super::storage::Storage;
use encode::{AGGREGATED_DISCOVERY, Accept, Answer, json_response, wants_aggregated};
pub use options::{RequestOptions, Verb};
use routes::{Route, Sub, route};

/// [`Config::body_min_bytes_per_second`]'s default.
pub const DEFAULT_BODY_MIN_BYTES_PER_SECOND: u64 = 1024;

/// [`Config::body_read_grace`]'s default.
pub const DEFAULT_BODY_READ_GRACE: Duration = Duration::from_secs(10);

/// The server's limits and identity.
#[derive(Debug, Clone)]
pub struct Config {
    /// The kinds served (each group/version/plural once).
    pub kinds: Vec<ApiKind>,
    /// Largest request body accepted (413 above it). The API server's default is 3 MiB.
    pub max_body_bytes: usize,
    /// Longest a non-watch request may take, from the moment it reaches the handler
    /// (reading its body included) to its answer (504 Timeout after it; the `timeout`
    /// parameter shortens it). The API server's default is 60 s.
    pub request_timeout: Duration,
    /// The slowest a request body may arrive, in bytes per second (0: no floor): this
    /// server's own limit, not kube-apiserver's (which has none: a slow body is cut only by
    /// the request timeout), made as Apache's `mod_reqtimeout` `MinRate` is. A body must be
    /// read whole within `body_read_grace` plus one second per this many bytes received;
    /// past that it is cut with 408 (reason `Timeout`) and the request's seat is given back.
    /// Flag `--request-body-min-bytes-per-second`; default 1024.
    pub body_min_bytes_per_second: u64,
    /// The time every request body gets before the floor rate counts (see
    /// `body_min_bytes_per_second`). Flag `--request-body-grace-seconds`; default 10 s.
    pub body_read_grace: Duration,
    /// How often a watch that asked for bookmarks gets one. The API server sends them about
    /// once a minute.
    pub bookmark_interval: Duration,
    /// Longest a watch runs without `timeoutSeconds` (the API server picks 30-60 min).
    pub max_watch: Duration,
    /// The `/version` answer's `gitVersion` (`v1.2.3`); major and minor are read from it.
    pub version: String,
    /// Delegated authentication and authorization ([`super::auth`]); `None` (the default)
    /// serves every request unchecked, for local runs and tests. With it, [`ApiServer::serve`]
    /// asks TLS clients for a certificate.
    pub auth: Option<Arc<super::auth::Delegated>>,
    /// The server's seats: with `flowcontrol`, `max_requests_inflight +
    /// max_mutating_requests_inflight` is the total split between the priority levels, as
    /// kube-apiserver adds them; without it, the max-in-flight pools and the share one user
    /// may hold ([`super::limits`]; 429 past them).
    pub limits: super::limits::Limits,
    /// API priority and fairness ([`super::flowcontrol`]), kube-apiserver's default; `None`
    /// runs the max-in-flight pools of `limits` instead, as kube-apiserver does with
    /// `--enable-priority-and-fairness=false`. A request waits in a queue at most a quarter of
    /// `request_timeout`.
    pub flowcontrol: Option<super::flowcontrol::Configuration>,
    /// The clock objects are stamped with (the system's; the test cluster's is manual).
    pub clock: super::clock::Clock,
}

impl Config {
    /// The API server's default limits for `kinds`, reporting this crate's version.
    pub fn new(kinds: Vec<ApiKind>) -> Self {
        Self {
            kinds,
            max_body_bytes: 3 * 1024 * 1024,
            request_timeout: Duration::from_secs(60),
            body_min_bytes_per_second: DEFAULT_BODY_MIN_BYTES_PER_SECOND,
            body_read_grace: DEFAULT_BODY_READ_GRACE,
            bookmark_interval: Duration::from_secs(60),
            max_watch: Duration::from_secs(30 * 60),
            version: format!("v{}", env!("CARGO_PKG_VERSION")),
            auth: None,
            limits: super::limits::Limits::default(),
            flowcontrol: Some(super::flowcontrol::Configuration::bootstrap()),
            clock: super::clock::Clock::system(),
        }
    }
}

/// The server: configuration, registry and shutdown state.
pub struct ApiServer<S> {
    config: Config,
    registry: Registry<S>,
    shutdown: CancellationToken,
    inflight: Arc<super::limits::InFlight>,
    flow_control: Option<Arc<super::flowcontrol::FlowControl>>,
    metrics: Arc<super::metrics::ApiMetrics>,
}

impl<S: Storage> ApiServer<S> {
    /// A server for `config` over `store`. `shutdown` ends open watches and turns `/readyz`
    /// to 500 once cancelled.
    pub fn new(config: Config, store: S, shutdown: CancellationToken) -> Arc<Self> {
        let inflight = super::limits::InFlight::new(config.limits);
        let metrics = super::metrics::ApiMetrics::new(inflight.clone(), &config.kinds);
        let flow_control = config.flowcontrol.as_ref().map(|fc| {
            let seats = config
                .limits
                .max_requests_inflight
                .saturating_add(config.limits.max_mutating_requests_inflight);
            let fc = super::flowcontrol::FlowControl::new(fc, seats, config.request_timeout / 4);
            metrics.register_flowcontrol(fc.metrics());
            fc
        });
        Arc::new(Self {
            metrics,
            inflight,
            flow_control,
            registry: Registry::with_clock(store, config.clock.clone()),
            config,
            shutdown,
        })
    }

    /// The router of every endpoint, to serve with [`crate::tls::serve`] (after merging any
    /// routes of your own), behind [`Self::guard`].
    pub fn router(self: &Arc<Self>) -> Router {
        self.guard(self.routes())
    }

    fn routes(self: &Arc<Self>) -> Router {
        Router::new().fallback(handle::<S>).with_state(self.clone())
    }

    /// The requests in flight now, per pool ([`super::limits`]; without flow control).
    pub fn inflight(&self) -> &super::limits::InFlight {
        &self.inflight
    }

    /// The priority and fairness state ([`super::flowcontrol`]), when it runs.
    pub fn flow_control(&self) -> Option<&Arc<super::flowcontrol::FlowControl>> {
        self.flow_control.as_ref()
    }

    /// The server's metrics, served at `/metrics` ([`super::metrics`]).
    pub fn metrics(&self) -> &super::metrics::ApiMetrics {
        &self.metrics
    }

    /// Puts `Config::auth`'s authentication and authorization in front of every route of
    /// `router` (none when it is `None`), then the refusal of impersonation headers (every
    /// route but the probes, routes of your own included: [`impersonation`]), then the
    /// request metrics ([`super::metrics`]), then priority and fairness
    /// ([`super::flowcontrol::filter`]) or, without it,
    /// `Config::limits` (a request over them is 429, counted for the user authentication
    /// found). Client certificates reach it only when
    /// served by [`crate::tls::serve_with_client_certs`], as [`Self::serve`] does.
    pub fn guard(&self, router: Router) -> Router {
        let router = match &self.flow_control {
            Some(fc) => router.layer(axum::middleware::from_fn_with_state(
                fc.clone(),
                super::flowcontrol::filter::middleware,
            )),
            None => router.layer(axum::middleware::from_fn_with_state(
                self.inflight.clone(),
                super::limits::middleware,
            )),
        };
        let router = router
            .layer(axum::middleware::from_fn_with_state(
                self.metrics.clone(),
                super::metrics::middleware,
            ))
            .layer(axum::middleware::from_fn(refuse_impersonation));
        match &self.config.auth {
            Some(auth) => router.layer(axum::middleware::from_fn_with_state(
                auth.clone(),
                super::auth::middleware,
            )),
            None => router,
        }
    }

    /// Serves the router, with `extra` routes merged in (and guarded as the rest), on
    /// `listener` over TLS until `shutdown` is cancelled, then lets requests finish (watches
    /// end at once). With `Config::auth` set, TLS clients are asked for a certificate.
    /// Errors: as [`crate::tls::serve`].
    pub async fn serve(
        self: &Arc<Self>,
        listener: tokio::net::TcpListener,
        certs: Arc<crate::tls::Certificates>,
        extra: Router,
    ) -> anyhow::Result<()> {
        let app = self.guard(extra.merge(self.routes()));
        if self.config.auth.is_some() {
            crate::tls::serve_with_client_certs(
                listener,
                certs,
                app,
                self.shutdown.clone(),
                "API server",
            )
            .await
        } else {
            crate::tls::serve(listener, certs, app, self.shutdown.clone(), "API server").await
        }
    }
}

/// One resource request, decoded: what every verb's handler reads.
pub struct Scope<'a, S> {
    /// The server.
    pub srv: &'a ApiServer<S>,
    /// The kind the path names.
    pub kind: &'a ApiKind,
    /// The namespace of the path (`None` for a cluster-wide path).
    pub namespace: Option<&'a str>,
    /// The object or its status.
    pub part: Part,
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The request's options, parsed (each handler validates them for its verb).
    pub opts: RequestOptions,
    /// What `Accept` asked for.
    pub accepts: Accept,
    /// The body.
    pub body: Bytes,
}

impl<S> Scope<'_, S> {
    /// The field manager a write is recorded under: the `fieldManager` option, else the
    /// `User-Agent` up to its first `/` (printable characters, at most 128 bytes), as
    /// k8s.io/apiserver's `managerOrUserAgent` defaults it
    /// ([`crate::apiserver::fieldmanager::manager::from_user_agent`]).
    pub fn manager(&self) -> String {
        if let Some(m) = &self.opts.field_manager {
            return m.clone();
        }
        let agent = self.headers.get(header::USER_AGENT);
        crate::apiserver::fieldmanager::manager::from_user_agent(
            agent.map(|v| v.as_bytes()).unwrap_or_default(),
        )
    }
}

/// The refusal of a request that asks to act as another user (`Impersonate-User`,
/// `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-*`), or `None` when it does not.
///
/// This server does not impersonate: it never runs a request as the impersonated user, and it
/// does not ignore the headers (which would run it as the caller). A client reaches an
/// aggregated API through the cluster's kube-apiserver, whose impersonation filter checks the
/// `impersonate` verb, removes these headers and forwards the impersonated user as the front
/// proxy's `X-Remote-*` headers; they reach this server only from a client that calls it
/// directly. Answered 403 Forbidden, as k8s.io/apiserver answers an impersonation it does not
/// allow.
fn impersonation(headers: &HeaderMap) -> Option<ApiError> {
    let asked: Vec<&str> = headers
        .keys()
        .map(|k| k.as_str())
        .filter(|k| k.starts_with("impersonate-"))
        .collect();
    let first = asked.first()?;
    Some(ApiError::forbidden(format!(
        "impersonation is not supported by this server ({first} header): send the request through the cluster's API server, which checks the impersonation and forwards the user"
    )))
}

/// The probes, which answer whatever headers they carry (a kubelet never impersonates).
const PROBES: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// The middleware of [`ApiServer::guard`] that answers a request with `Impersonate-*` headers
/// 403 ([`impersonation`]) on every route but [`PROBES`], after authentication as
/// k8s.io/apiserver's impersonation filter runs after its authentication filter.
async fn refuse_impersonation(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !PROBES.contains(&request.uri().path())
        && let Some(e) = impersonation(request.headers())
    {
        return e.into_response();
    }
    next.run(request).await
}

async fn handle<S: Storage>(
    State(srv): State<Arc<ApiServer<S>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<Vec<(String, String)>>,
    body: Body,
) -> Response {
    let path = uri.path().to_string();
    let verbose = query.iter().any(|(k, _)| k == "verbose");
    match path.as_str() {
        "/healthz" | "/livez" => return health::health(true, verbose),
        "/readyz" => return health::health(!srv.shutdown.is_cancelled(), verbose),
        "/metrics" if method == Method::GET => {
            for kind in &srv.config.kinds {
                let count = srv.registry.count(kind).await.ok();
                srv.metrics.set_object_count(kind, count);
            }
            let mut r = (StatusCode::OK, srv.metrics.encode()).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(crate::metrics::OPENMETRICS_CONTENT_TYPE),
            );
            return r;
        }
        "/version" => {
            return json_response(StatusCode::OK, &health::version(&srv.config.version), false);
        }
        _ => {}
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        return match openapi::serve(&srv.config.kinds, &path) {
            Some(doc) => json_response(StatusCode::OK, &doc, false),
            None => ApiError::no_route(&path).into_response(),
        };
    }
    if (path == "/api" || path == "/apis") && method == Method::GET && wants_aggregated(&headers) {
        let core = path == "/api";
        let kinds: Vec<ApiKind> = srv
            .config
            .kinds
            .iter()
            .filter(|k| k.group.is_empty() == core)
            .cloned()
            .collect();
        let doc = discovery::aggregated(&kinds);
        let mut r = json_response(StatusCode::OK, &doc, false);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(AGGREGATED_DISCOVERY),
        );
        return r;
    }
    let accepts = match encode::accept(&headers) {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let opts = match RequestOptions::parse(&query) {
        Ok(o) => o,
        Err(e) => return e.into_response(),
    };
    let pretty = opts.pretty;
    let collection = matches!(
        route(&path),
        Some(Route::Resource {
            name: None,
            sub: Sub::None,
            ..
        })
    );
    // Only a collection's GET watches: kube-apiserver's request-info resolver turns `watch`
    // into the watch verb for a GET without a name, and a named GET decodes `GetOptions`,
    // which has no `watch`, so it is a get.
    if opts.watch && method == Method::GET && collection {
        // A watch is long-running (no deadline) and, as kube-apiserver's watch handler, does
        // not read a body: a client cannot hold a watch open by sending one slowly.
        return match watch_request(&srv, &path, &headers, opts, accepts, Bytes::new()).await {
            Ok(r) => r,
            Err(e) => e.into_response(),
        };
    }
    let limit = match opts.request_timeout(srv.config.request_timeout) {
        Ok(l) => l,
        Err(e) => return e.into_response(),
    };
    // The deadline covers reading the body too, as kube-apiserver's timeout filter wraps the
    // whole handler: a body that does not arrive in time is answered 504 and the request's
    // in-flight slot is given back at once, instead of a slow client holding it.
    let answer = async {
        let body = read_body(&srv, body).await?;
        dispatch(&srv, &method, &path, &headers, opts, accepts, body).await
    };
    match tokio::time::timeout(limit, answer).await {
        Ok(Ok(answer)) => answer.into_response(pretty),
        Ok(Err(e)) => e.into_response(),
        Err(_) => ApiError::timeout(limit).into_response(),
    }
}

/// The request body, read whole. Errors: 413 RequestEntityTooLarge past
/// `Config::max_body_bytes` (or when the body cannot be read); 408 (reason `Timeout`) when it
/// arrives slower than `Config::body_min_bytes_per_second` allows ([`body_deadline`]).
async fn read_body<S>(srv: &ApiServer<S>, body: Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt as _;
    let max = srv.config.max_body_bytes;
    // A body announced larger than the limit (its Content-Length) is refused before a byte of
    // it is read, as Go's MaxBytesReader-guarded handlers refuse it: the client is not made to
    // send megabytes, nor kept waiting, for a 413.
    let announced = http_body::Body::size_hint(&body).lower();
    if announced > max as u64 {
        return Err(ApiError::too_large(max));
    }
    let rate = srv.config.body_min_bytes_per_second;
    let start = tokio::time::Instant::now();
    let mut body = body;
    let mut out = bytes::BytesMut::new();
    loop {
        let frame = if rate == 0 {
            body.frame().await
        } else {
            let deadline = start + body_deadline(srv.config.body_read_grace, rate, out.len());
            match tokio::time::timeout_at(deadline, body.frame()).await {
                Ok(frame) => frame,
                Err(_) => return Err(ApiError::body_too_slow(rate)),
            }
        };
        let Some(frame) = frame else { break };
        let frame = frame.map_err(|_| ApiError::too_large(max))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                return Err(ApiError::too_large(max));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out.freeze())
}

/// How long after its start a request body may still be arriving once `received` bytes of
/// it are in, at a floor of `rate` bytes per second: `grace`, plus one second per `rate`
/// bytes received (as Apache's `mod_reqtimeout` extends its body timeout by `MinRate`).
pub fn body_deadline(grace: Duration, rate: u64, received: usize) -> Duration {
    grace + Duration::from_secs_f64(received as f64 / rate.max(1) as f64)
}

/// The kind a resource path names, served at that scope. Errors: 404.
fn resolve<'a, S>(
    srv: &'a ApiServer<S>,
    path: &str,
    group: &str,
    version: &str,
    namespace: Option<&str>,
    plural: &str,
) -> Result<&'a ApiKind, ApiError> {
    srv.config
        .kinds
        .iter()
        .find(|k| k.group == group && k.version == version && k.plural == plural)
        .filter(|k| k.namespaced || namespace.is_none())
        .ok_or_else(|| ApiError::no_route(path))
}

/// A watch request: only on a collection (405 elsewhere).
async fn watch_request<S: Storage>(
    srv: &ApiServer<S>,
    path: &str,
    headers: &HeaderMap,
    opts: RequestOptions,
    accepts: Accept,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Some(Route::Resource {
        group,
        version,
        namespace,
        plural,
        name: None,
        sub: Sub::None,
    }) = route(path)
    else {
        return Err(ApiError::method_not_allowed(format!(
            "watch is not supported on {path}"
        )));
    };
    let kind = resolve(srv, path, group, version, namespace, plural)?;
    let scope = Scope {
        srv,
        kind,
        namespace,
        part: Part::Main,
        headers,
        opts,
        accepts,
        body,
    };
    watch::watch(&scope).await
}

/// Routes a request other than a watch to discovery or to its verb's handler.
async fn dispatch<S: Storage>(
    srv: &ApiServer<S>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    opts: RequestOptions,
    accepts: Accept,
    body: Bytes,
) -> Result<Answer, ApiError> {
    let Some(r) = route(path) else {
        return Err(ApiError::no_route(path));
    };
    let not_allowed =
        || ApiError::method_not_allowed(format!("{method} is not supported on {path}"));
    let get_only = || {
        if method == Method::GET {
            Ok(())
        } else {
            Err(not_allowed())
        }
    };
    let kinds = &srv.config.kinds;
    let (group, version, namespace, plural, name, sub) = match r {
        Route::Api => {
            get_only()?;
            return Ok(Answer::ok(discovery::api_versions(kinds)));
        }
        Route::Apis => {
            get_only()?;
            return Ok(Answer::ok(discovery::group_list(kinds)));
        }
        Route::Group(g) => {
            get_only()?;
            return discovery::group(kinds, g)
                .map(Answer::ok)
                .ok_or_else(|| ApiError::no_route(path));
        }
        Route::GroupVersion(g, v) => {
            get_only()?;
            return discovery::resource_list(kinds, g, v)
                .map(Answer::ok)
                .ok_or_else(|| ApiError::no_route(path));
        }
        Route::Resource {
            group,
            version,
            namespace,
            plural,
            name,
            sub,
        } => (group, version, namespace, plural, name, sub),
    };
    let kind = resolve(srv, path, group, version, namespace, plural)?;
    if (sub == Sub::Status && !kind.status_subresource)
        || (sub == Sub::Scale && kind.scale.is_none())
    {
        return Err(ApiError::no_route(path));
    }
    let s = Scope {
        srv,
        kind,
        namespace,
        part: if sub == Sub::Status {
            Part::Status
        } else {
            Part::Main
        },
        headers,
        opts,
        accepts,
        body,
    };
    if sub == Sub::Scale {
        return scale::scale(&s, name, method).await;
    }
    let in_scope = namespace.is_some() || !kind.namespaced;
    match (name, method.clone()) {
        (None, Method::GET) => list::list(&s).await,
        (None, Method::POST) if in_scope => create::create(&s).await,
        (None, Method::DELETE) if in_scope => delete::delete_collection(&s).await,
        (Some(n), Method::GET) => get::get(&s, n).await,
        (Some(n), Method::PUT) => update::update(&s, n).await,
        (Some(n), Method::PATCH) => patch::patch(&s, n).await,
        (Some(n), Method::DELETE) if sub == Sub::None => delete::delete(&s, n).await,
        _ => Err(not_allowed()),
    }
}

#[cfg(test)]
mod tests;
