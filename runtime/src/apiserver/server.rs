// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The HTTP face of the API server: discovery, health, version, OpenAPI and the resource
//! endpoints, as an axum [`Router`] served over the runtime's TLS ([`crate::tls`]).
//!
//! Paths, verbs and answers follow k8s.io/apiserver's handlers (`pkg/endpoints`):
//! `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/status|/scale]]`; GET lists or
//! (`watch=true`) watches a collection; POST creates; DELETE on a collection is
//! deletecollection; PUT, PATCH (merge or JSON patch) and DELETE on an object; GET, PUT and
//! PATCH on `/status` and on `/scale` (an `autoscaling/v1` Scale). Errors are
//! `metav1.Status` bodies. Add routes of your own (the seed's `/custom`) by merging them into
//! [`ApiServer::router`]'s answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::kind::ApiKind;
use super::openapi;
use super::registry::{Event, ListOptions, Part, PatchType, Registry, WatchStream};
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::storage::Storage;
use super::table::{self, IncludeObject};

/// The server's limits and identity.
#[derive(Debug, Clone)]
pub struct Config {
    /// The kinds served (each group/version/plural once).
    pub kinds: Vec<ApiKind>,
    /// Largest request body accepted (413 above it). The API server's default is 3 MiB.
    pub max_body_bytes: usize,
    /// Longest a non-watch request may take (504 Timeout after it). The API server's
    /// default is 60 s.
    pub request_timeout: Duration,
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
    /// Requests in flight and the share one user may hold ([`super::limits`]; 429 past them).
    pub limits: super::limits::Limits,
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
            bookmark_interval: Duration::from_secs(60),
            max_watch: Duration::from_secs(30 * 60),
            version: format!("v{}", env!("CARGO_PKG_VERSION")),
            auth: None,
            limits: super::limits::Limits::default(),
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
}

impl<S: Storage> ApiServer<S> {
    /// A server for `config` over `store`. `shutdown` ends open watches and turns `/readyz`
    /// to 500 once cancelled.
    pub fn new(config: Config, store: S, shutdown: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            inflight: super::limits::InFlight::new(config.limits),
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

    /// The requests in flight now, per pool ([`super::limits`]).
    pub fn inflight(&self) -> &super::limits::InFlight {
        &self.inflight
    }

    /// Puts `Config::auth`'s authentication and authorization in front of every route of
    /// `router` (none when it is `None`), then `Config::limits` (a request over them is 429,
    /// counted for the user authentication found). Client certificates reach it only when
    /// served by [`crate::tls::serve_with_client_certs`], as [`Self::serve`] does.
    pub fn guard(&self, router: Router) -> Router {
        let router = router.layer(axum::middleware::from_fn_with_state(
            self.inflight.clone(),
            super::limits::middleware,
        ));
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

    fn find(&self, group: &str, version: &str, plural: &str) -> Option<&ApiKind> {
        self.config
            .kinds
            .iter()
            .find(|k| k.group == group && k.version == version && k.plural == plural)
    }
}

fn json_response(code: StatusCode, body: &Value) -> Response {
    let mut r = (code, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(
            StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &self.to_status(),
        )
    }
}

/// What the client asked for in `Accept`.
struct Accept {
    table: bool,
}

fn accept(headers: &HeaderMap) -> Result<Accept, ApiError> {
    let raw = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if raw.is_empty() {
        return Ok(Accept { table: false });
    }
    let mut json_ok = false;
    for item in raw.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        let params: Vec<&str> = parts.collect();
        let is_json = matches!(media, "application/json" | "*/*" | "application/*");
        if is_json && params.contains(&"as=Table") {
            if params.contains(&"v=v1") && params.contains(&"g=meta.k8s.io") {
                return Ok(Accept { table: true });
            }
            continue;
        }
        if is_json && !params.iter().any(|p| p.starts_with("as=")) {
            json_ok = true;
        }
    }
    if json_ok {
        Ok(Accept { table: false })
    } else {
        Err(ApiError::not_acceptable(
            "only the following media types are accepted: application/json, application/json;as=Table;v=v1;g=meta.k8s.io",
        ))
    }
}

/// The media type of aggregated discovery (`apidiscovery.k8s.io/v2`).
const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether `Accept` asks for aggregated discovery v2 (kubectl asks for it first, with the
/// legacy documents as a fallback).
fn wants_aggregated(headers: &HeaderMap) -> bool {
    let raw = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    raw.split(',').any(|item| {
        let params: Vec<&str> = item.split(';').map(str::trim).collect();
        params.first() == Some(&"application/json")
            && params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// The subresource a request path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sub {
    /// The collection or the object itself.
    None,
    /// `/status`.
    Status,
    /// `/scale` (an `autoscaling/v1` Scale).
    Scale,
}

/// The parsed request path.
enum Route<'a> {
    Api,
    Apis,
    Group(&'a str),
    GroupVersion(&'a str, &'a str),
    Resource {
        group: &'a str,
        version: &'a str,
        namespace: Option<&'a str>,
        plural: &'a str,
        name: Option<&'a str>,
        sub: Sub,
    },
}

fn route(path: &str) -> Option<Route<'_>> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    Some(match segs.as_slice() {
        ["api"] => Route::Api,
        // The core group (Pods, ConfigMaps, Namespaces, ...) under `/api/v1`, as group "".
        // `namespaces/<n>/status` is the Namespace's own subresource, not a collection.
        ["api", v] => Route::GroupVersion("", v),
        ["api", v, "namespaces", n, "status"] => Route::Resource {
            group: "",
            version: v,
            namespace: None,
            plural: "namespaces",
            name: Some(n),
            sub: Sub::Status,
        },
        ["api", v, rest @ ..] => return route_resource("", v, rest),
        ["apis"] => Route::Apis,
        ["apis", g] if !g.is_empty() => Route::Group(g),
        ["apis", g, v] if !g.is_empty() => Route::GroupVersion(g, v),
        ["apis", g, v, rest @ ..] if !g.is_empty() => return route_resource(g, v, rest),
        _ => return None,
    })
}

/// The resource route of `rest`, the path after `/apis/<group>/<version>` (or `/api/<v>`).
fn route_resource<'a>(group: &'a str, version: &'a str, rest: &[&'a str]) -> Option<Route<'a>> {
    Some(match rest {
        ["namespaces", ns, p, rest @ ..] => {
            let (name, sub) = match rest {
                [] => (None, Sub::None),
                [n] => (Some(*n), Sub::None),
                [n, "status"] => (Some(*n), Sub::Status),
                [n, "scale"] => (Some(*n), Sub::Scale),
                _ => return None,
            };
            Route::Resource {
                group,
                version,
                namespace: Some(ns),
                plural: p,
                name,
                sub,
            }
        }
        [p, rest @ ..] => {
            let (name, sub) = match rest {
                [] => (None, Sub::None),
                [n] => (Some(*n), Sub::None),
                [n, "status"] => (Some(*n), Sub::Status),
                [n, "scale"] => (Some(*n), Sub::Scale),
                _ => return None,
            };
            Route::Resource {
                group,
                version,
                namespace: None,
                plural: p,
                name,
                sub,
            }
        }
        _ => return None,
    })
}

async fn handle<S: Storage>(
    State(srv): State<Arc<ApiServer<S>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    body: Body,
) -> Response {
    let path = uri.path().to_string();
    match path.as_str() {
        "/healthz" | "/livez" => return health(true, &query),
        "/readyz" => return health(!srv.shutdown.is_cancelled(), &query),
        "/version" => return json_response(StatusCode::OK, &version(&srv.config.version)),
        _ => {}
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        return match openapi::serve(&srv.config.kinds, &path) {
            Some(doc) => json_response(StatusCode::OK, &doc),
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
        let mut r = json_response(StatusCode::OK, &doc);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(AGGREGATED_DISCOVERY),
        );
        return r;
    }
    let accepts = match accept(&headers) {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let body = match axum::body::to_bytes(body, srv.config.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => return ApiError::too_large(srv.config.max_body_bytes).into_response(),
    };
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    if watch && method == Method::GET {
        return match watch_response(&srv, &path, &query, &accepts).await {
            Ok(r) => r,
            Err(e) => e.into_response(),
        };
    }
    let body_copy = body.clone();
    let limit = srv.config.request_timeout;
    match tokio::time::timeout(
        limit,
        dispatch(&srv, &method, &path, &headers, &query, &accepts, body),
    )
    .await
    {
        Ok(Ok((code, value))) => {
            let mut r = json_response(code, &value);
            for w in unknown_field_warnings(&srv, &method, &path, &query, &body_copy) {
                if let Ok(v) = HeaderValue::from_str(&w) {
                    r.headers_mut().append(header::WARNING, v);
                }
            }
            r
        }
        Ok(Err(e)) => e.into_response(),
        Err(_) => ApiError::timeout(limit).into_response(),
    }
}

/// The `Warning` headers for the unknown fields of a write's body (dropped by the registry),
/// as the API server sends them when `fieldValidation` is unset or `Warn`:
/// `299 - "unknown field \"spec.colour\""`.
fn unknown_field_warnings<S: Storage>(
    srv: &ApiServer<S>,
    method: &Method,
    path: &str,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Vec<String> {
    let warn = matches!(
        query.get("fieldValidation").map(String::as_str),
        None | Some("Warn")
    );
    if !warn || !matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        return Vec::new();
    }
    let Some(Route::Resource {
        group,
        version,
        plural,
        sub,
        ..
    }) = route(path)
    else {
        return Vec::new();
    };
    // A Scale body is not the kind's: its schema says nothing about it.
    if sub == Sub::Scale {
        return Vec::new();
    }
    let (Some(kind), Ok(mut probe)) = (
        srv.find(group, version, plural),
        serde_json::from_slice::<Value>(body),
    ) else {
        return Vec::new();
    };
    if !probe.is_object() {
        return Vec::new();
    }
    kind.prune(&mut probe)
        .iter()
        .map(|f| format!("299 - \"unknown field \\\"{f}\\\"\""))
        .collect()
}

fn health(ok: bool, query: &HashMap<String, String>) -> Response {
    let verbose = query.contains_key("verbose");
    let (code, text) = match (ok, verbose) {
        (true, false) => (StatusCode::OK, "ok".to_string()),
        (true, true) => (StatusCode::OK, "[+]ping ok\nhealthz check passed\n".into()),
        (false, false) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]shutdown failed: reason withheld\nreadyz check failed\n".into(),
        ),
        (false, true) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[+]ping ok\n[-]shutdown failed: the server is shutting down\nreadyz check failed\n"
                .into(),
        ),
    };
    let mut r = (code, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn version(git_version: &str) -> Value {
    let numbers: Vec<&str> = git_version.trim_start_matches('v').split('.').collect();
    json!({
        "major": numbers.first().copied().unwrap_or("0"),
        "minor": numbers.get(1).copied().unwrap_or("0"),
        "gitVersion": git_version,
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

fn list_options(query: &HashMap<String, String>) -> Result<ListOptions, ApiError> {
    let labels = LabelSelector::parse(query.get("labelSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let fields = FieldSelector::parse(query.get("fieldSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let limit = match query.get("limit") {
        Some(l) if !l.is_empty() => l
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("limit: invalid value {l:?}")))?
            .max(0) as usize,
        _ => 0,
    };
    Ok(ListOptions {
        labels,
        fields,
        limit,
        continue_token: query.get("continue").filter(|c| !c.is_empty()).cloned(),
        resource_version: query.get("resourceVersion").cloned(),
        resource_version_match: query
            .get("resourceVersionMatch")
            .filter(|c| !c.is_empty())
            .cloned(),
    })
}

fn include_object(query: &HashMap<String, String>) -> IncludeObject {
    match query.get("includeObject").map(String::as_str) {
        Some("None") => IncludeObject::None,
        Some("Object") => IncludeObject::Object,
        _ => IncludeObject::Metadata,
    }
}

fn parse_body(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

async fn dispatch<S: Storage>(
    srv: &ApiServer<S>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    accepts: &Accept,
    body: Bytes,
) -> Result<(StatusCode, Value), ApiError> {
    let Some(r) = route(path) else {
        return Err(ApiError::no_route(path));
    };
    let get_only = || {
        if method == Method::GET {
            Ok(())
        } else {
            Err(ApiError::method_not_allowed(format!(
                "{method} is not supported on {path}"
            )))
        }
    };
    let (group, version, namespace, plural, name, sub) = match r {
        Route::Api => {
            get_only()?;
            let versions = discovery::versions_of(&srv.config.kinds, "");
            return Ok((
                StatusCode::OK,
                json!({"kind": "APIVersions", "versions": versions, "serverAddressByClientCIDRs": null}),
            ));
        }
        Route::Apis => {
            get_only()?;
            return Ok((StatusCode::OK, discovery::group_list(&srv.config.kinds)));
        }
        Route::Group(g) => {
            get_only()?;
            return discovery::group(&srv.config.kinds, g)
                .map(|v| (StatusCode::OK, v))
                .ok_or_else(|| ApiError::no_route(path));
        }
        Route::GroupVersion(g, v) => {
            get_only()?;
            return discovery::resource_list(&srv.config.kinds, g, v)
                .map(|v| (StatusCode::OK, v))
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
    let kind = srv
        .find(group, version, plural)
        .filter(|k| k.namespaced || namespace.is_none())
        .ok_or_else(|| ApiError::no_route(path))?;
    if (sub == Sub::Status && !kind.status_subresource)
        || (sub == Sub::Scale && kind.scale.is_none())
    {
        return Err(ApiError::no_route(path));
    }
    if sub == Sub::Scale {
        return scale(&srv.registry, kind, namespace, name, method, headers, &body).await;
    }
    let reg = &srv.registry;
    // fieldValidation=Strict: unknown fields in the body are a 400; otherwise the registry
    // drops them (the API server's default for custom resources also warns; no Warning
    // header is sent here).
    let strict = query.get("fieldValidation").is_some_and(|v| v == "Strict");
    if strict
        && matches!(*method, Method::POST | Method::PUT | Method::PATCH)
        && let Ok(mut probe) = serde_json::from_slice::<Value>(&body)
        && probe.is_object()
    {
        let unknown = kind.prune(&mut probe);
        if !unknown.is_empty() {
            let list: Vec<String> = unknown
                .iter()
                .map(|f| format!("unknown field {f:?}"))
                .collect();
            return Err(ApiError::bad_request(format!(
                "strict decoding error: {}",
                list.join(", ")
            )));
        }
    }
    let part = if sub == Sub::Status {
        Part::Status
    } else {
        Part::Main
    };
    let one = |v: Value| -> Value {
        if accepts.table && v.get("kind").and_then(Value::as_str) == Some(kind.kind.as_str()) {
            let rv = v["metadata"]["resourceVersion"].clone();
            table::table(
                kind,
                &[v],
                json!({"resourceVersion": rv}),
                include_object(query),
                true,
            )
        } else {
            v
        }
    };
    match (name, method.clone()) {
        (None, Method::GET) => {
            let opts = list_options(query)?;
            let list = reg.list(kind, namespace, &opts).await?;
            if accepts.table {
                let items = list["items"].as_array().cloned().unwrap_or_default();
                return Ok((
                    StatusCode::OK,
                    table::table(
                        kind,
                        &items,
                        list["metadata"].clone(),
                        include_object(query),
                        true,
                    ),
                ));
            }
            Ok((StatusCode::OK, list))
        }
        (None, Method::POST) if namespace.is_some() || !kind.namespaced => {
            let obj = reg.create(kind, namespace, parse_body(&body)?).await?;
            Ok((StatusCode::CREATED, one(obj)))
        }
        (None, Method::DELETE) if namespace.is_some() || !kind.namespaced => {
            let opts = list_options(query)?;
            let options = if body.is_empty() {
                json!({})
            } else {
                parse_body(&body)?
            };
            Ok((
                StatusCode::OK,
                reg.delete_collection(kind, namespace, &opts, &options)
                    .await?,
            ))
        }
        (Some(n), Method::GET) => Ok((StatusCode::OK, one(reg.get(kind, namespace, n).await?))),
        (Some(n), Method::PUT) => {
            let obj = reg
                .update(kind, namespace, n, part, parse_body(&body)?)
                .await?;
            Ok((StatusCode::OK, one(obj)))
        }
        (Some(n), Method::PATCH) => {
            let patch_type = patch_type(headers)?;
            let obj = reg
                .patch(kind, namespace, n, part, patch_type, &body)
                .await?;
            Ok((StatusCode::OK, one(obj)))
        }
        (Some(n), Method::DELETE) if sub == Sub::None => {
            let options = if body.is_empty() {
                json!({})
            } else {
                parse_body(&body)?
            };
            Ok((
                StatusCode::OK,
                one(reg.delete(kind, namespace, n, &options).await?),
            ))
        }
        _ => Err(ApiError::method_not_allowed(format!(
            "{method} is not supported on {path}"
        ))),
    }
}

/// The patch type of a PATCH's `Content-Type`. Errors: 415 for another media type.
fn patch_type(headers: &HeaderMap) -> Result<PatchType, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    match content_type {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other:?}); accepted media types include: application/json-patch+json, application/merge-patch+json"
        ))),
    }
}

/// `/<plural>/<name>/scale`: GET, PUT and PATCH of the object's `autoscaling/v1` Scale, as
/// the apiextensions server's scale subresource serves them ([`Registry::get_scale`]).
async fn scale<S: Storage>(
    reg: &Registry<S>,
    kind: &ApiKind,
    namespace: Option<&str>,
    name: Option<&str>,
    method: &Method,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(StatusCode, Value), ApiError> {
    let Some(name) = name else {
        return Err(ApiError::no_route(&kind.plural));
    };
    let scale = match *method {
        Method::GET => reg.get_scale(kind, namespace, name).await?,
        Method::PUT => {
            reg.update_scale(kind, namespace, name, parse_body(body)?)
                .await?
        }
        Method::PATCH => {
            reg.patch_scale(kind, namespace, name, patch_type(headers)?, body)
                .await?
        }
        _ => {
            return Err(ApiError::method_not_allowed(format!(
                "{method} is not supported on the scale subresource"
            )));
        }
    };
    Ok((StatusCode::OK, scale))
}

/// A watch answer: newline-separated JSON events, as the API server streams them.
async fn watch_response<S: Storage>(
    srv: &Arc<ApiServer<S>>,
    path: &str,
    query: &HashMap<String, String>,
    accepts: &Accept,
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
    let kind = srv
        .find(group, version, plural)
        .filter(|k| k.namespaced || namespace.is_none())
        .ok_or_else(|| ApiError::no_route(path))?
        .clone();
    let mut opts = list_options(query)?;
    let send_initial = query.get("sendInitialEvents").is_some_and(|v| v == "true");
    if send_initial {
        opts.resource_version = None;
    }
    let bookmarks = query
        .get("allowWatchBookmarks")
        .is_some_and(|v| v == "true");
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(srv.config.max_watch, Duration::from_secs)
        .min(srv.config.max_watch);
    let (initial, stream) = srv.registry.watch(&kind, namespace, &opts).await?;
    let state = WatchState {
        kind,
        initial: initial.into(),
        initial_end: send_initial && bookmarks,
        stream,
        bookmarks,
        interval: tokio::time::interval_at(
            tokio::time::Instant::now() + srv.config.bookmark_interval,
            srv.config.bookmark_interval,
        ),
        deadline: tokio::time::Instant::now() + timeout,
        shutdown: srv.shutdown.clone(),
        table: accepts.table,
        include: include_object(query),
        headers_sent: false,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        let event = s.next().await?;
        let line = s.encode(event);
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(line)), s))
    });
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;stream=watch"),
    );
    Ok(r)
}

struct WatchState {
    kind: ApiKind,
    initial: std::collections::VecDeque<Event>,
    initial_end: bool,
    stream: WatchStream,
    bookmarks: bool,
    interval: tokio::time::Interval,
    deadline: tokio::time::Instant,
    shutdown: CancellationToken,
    table: bool,
    include: IncludeObject,
    headers_sent: bool,
}

impl WatchState {
    fn bookmark(&self, initial_end: bool) -> Event {
        let mut metadata = json!({"resourceVersion": self.stream.progress().to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        Event {
            kind: "BOOKMARK",
            object: json!({"kind": self.kind.kind, "apiVersion": self.kind.api_version(), "metadata": metadata}),
        }
    }

    async fn next(&mut self) -> Option<Event> {
        if let Some(e) = self.initial.pop_front() {
            return Some(e);
        }
        if self.initial_end {
            self.initial_end = false;
            return Some(self.bookmark(true));
        }
        let bookmarks = self.bookmarks;
        tokio::select! {
            _ = self.shutdown.cancelled() => None,
            _ = tokio::time::sleep_until(self.deadline) => None,
            _ = self.interval.tick(), if bookmarks => Some(self.bookmark(false)),
            e = self.stream.next() => e,
        }
    }

    fn encode(&mut self, mut event: Event) -> String {
        if self.table && matches!(event.kind, "ADDED" | "MODIFIED" | "DELETED") {
            let rv = event.object["metadata"]["resourceVersion"].clone();
            event.object = table::table(
                &self.kind,
                &[event.object],
                json!({"resourceVersion": rv}),
                self.include,
                !self.headers_sent,
            );
            self.headers_sent = true;
        }
        let mut line = json!({"type": event.kind, "object": event.object}).to_string();
        line.push('\n');
        line
    }
}

mod discovery {
    //! The discovery documents (`APIGroupList`, `APIGroup`, `APIResourceList`).
    use super::*;

    /// The versions of `group` in the order the kinds list them (`""`: the core group).
    pub(super) fn versions_of<'a>(kinds: &'a [ApiKind], group: &str) -> Vec<&'a str> {
        let mut vs: Vec<&str> = Vec::new();
        for k in kinds.iter().filter(|k| k.group == group) {
            if !vs.contains(&k.version.as_str()) {
                vs.push(&k.version);
            }
        }
        vs
    }

    fn group_doc(kinds: &[ApiKind], group: &str) -> Value {
        let versions: Vec<Value> = versions_of(kinds, group)
            .iter()
            .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
            .collect();
        json!({
            "name": group,
            "versions": versions,
            "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
        })
    }

    /// `/apis`: every group but the core group, which `/api` lists.
    pub fn group_list(kinds: &[ApiKind]) -> Value {
        let mut groups: Vec<&str> = Vec::new();
        for k in kinds.iter().filter(|k| !k.group.is_empty()) {
            if !groups.contains(&k.group.as_str()) {
                groups.push(&k.group);
            }
        }
        json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": groups.iter().map(|g| group_doc(kinds, g)).collect::<Vec<_>>(),
        })
    }

    /// `/apis` (or `/api`, with no kinds) as an `APIGroupDiscoveryList` (aggregated
    /// discovery v2): every group, version and resource in one document.
    pub fn aggregated(kinds: &[ApiKind]) -> Value {
        let mut groups: Vec<&str> = Vec::new();
        for k in kinds {
            if !groups.contains(&k.group.as_str()) {
                groups.push(&k.group);
            }
        }
        let items: Vec<Value> = groups
            .iter()
            .map(|g| {
                let versions: Vec<Value> = versions_of(kinds, g)
                    .iter()
                    .map(|v| {
                        let resources: Vec<Value> = kinds
                            .iter()
                            .filter(|k| k.group == *g && k.version == *v)
                            .map(|k| {
                                let gvk = json!({"group": k.group, "version": k.version, "kind": k.kind});
                                let mut r = json!({
                                    "resource": k.plural,
                                    "responseKind": gvk,
                                    "scope": if k.namespaced { "Namespaced" } else { "Cluster" },
                                    "singularResource": k.singular,
                                    "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                                });
                                if !k.short_names.is_empty() {
                                    r["shortNames"] = json!(k.short_names);
                                }
                                if !k.categories.is_empty() {
                                    r["categories"] = json!(k.categories);
                                }
                                let mut subs = Vec::new();
                                if k.status_subresource {
                                    subs.push(json!({
                                        "subresource": "status",
                                        "responseKind": gvk,
                                        "verbs": ["get", "patch", "update"],
                                    }));
                                }
                                if k.scale.is_some() {
                                    subs.push(json!({
                                        "subresource": "scale",
                                        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                                        "verbs": ["get", "patch", "update"],
                                    }));
                                }
                                if !subs.is_empty() {
                                    r["subresources"] = json!(subs);
                                }
                                r
                            })
                            .collect();
                        json!({"version": v, "resources": resources, "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": {"name": g}, "versions": versions})
            })
            .collect();
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": items,
        })
    }

    /// `/apis/<group>`.
    pub fn group(kinds: &[ApiKind], group: &str) -> Option<Value> {
        if !kinds.iter().any(|k| k.group == group) {
            return None;
        }
        let mut doc = group_doc(kinds, group);
        doc["kind"] = json!("APIGroup");
        doc["apiVersion"] = json!("v1");
        Some(doc)
    }

    /// `/apis/<group>/<version>`.
    pub fn resource_list(kinds: &[ApiKind], group: &str, version: &str) -> Option<Value> {
        let mut resources = Vec::new();
        for k in kinds
            .iter()
            .filter(|k| k.group == group && k.version == version)
        {
            let mut r = json!({
                "name": k.plural,
                "singularName": k.singular,
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
            });
            if !k.short_names.is_empty() {
                r["shortNames"] = json!(k.short_names);
            }
            if !k.categories.is_empty() {
                r["categories"] = json!(k.categories);
            }
            resources.push(r);
            if k.status_subresource {
                resources.push(json!({
                    "name": format!("{}/status", k.plural),
                    "singularName": "",
                    "namespaced": k.namespaced,
                    "kind": k.kind,
                    "verbs": ["get", "patch", "update"],
                }));
            }
            if k.scale.is_some() {
                resources.push(json!({
                    "name": format!("{}/scale", k.plural),
                    "singularName": "",
                    "namespaced": k.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }));
            }
        }
        if resources.is_empty() {
            return None;
        }
        Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": if group.is_empty() { version.to_string() } else { format!("{group}/{version}") },
            "resources": resources,
        }))
    }
}

#[cfg(test)]
mod tests;
