// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The manager's metrics and probes: reconcile metrics ([`Metrics`], named like
//! controller-runtime's), the `/metrics` router, the bearer-token authentication and
//! authorization in front of it (TokenReview, then SubjectAccessReview, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization`), and the `/healthz` and `/readyz` router.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

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

/// Puts bearer-token authentication and authorization in front of every route of `router`
/// (unknown paths still answer 404): a request without `Authorization: Bearer <token>`, or
/// whose token the TokenReview does not authenticate, is answered `401 Unauthorized`; one
/// the SubjectAccessReview does not allow (verb = the lower-case HTTP method, path = the
/// request path) `403 Forbidden`; a failed review, or one the API server does not answer
/// within [`REVIEW_TIMEOUT`], `500` (logged as an error). See [`review_access`]. Mirrors
/// controller-runtime's `filters.WithAuthenticationAndAuthorization`.
pub fn with_authentication_and_authorization(router: Router, client: kube::Client) -> Router {
    router.route_layer(axum::middleware::from_fn_with_state(client, authorize))
}

async fn authorize(State(client): State<kube::Client>, request: Request, next: Next) -> Response {
    let Some(token) = bearer_token(request.headers()) else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    let path = request.uri().path().to_owned();
    let verb = request.method().as_str().to_ascii_lowercase();
    match review_access(&client, &token, &path, &verb).await {
        Ok(Access::Allowed { .. }) => next.run(request).await,
        Ok(Access::Unauthenticated) => (StatusCode::UNAUTHORIZED, "Unauthorized").into_response(),
        Ok(Access::Denied { user, reason }) => {
            tracing::debug!(%user, %path, %reason, "metrics request denied");
            (
                StatusCode::FORBIDDEN,
                format!("Authorization denied for user {user}"),
            )
                .into_response()
        }
        Err(err) => {
            tracing::error!(%path, "reviewing a metrics request's token failed: {err:#}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Authentication or authorization failed",
            )
                .into_response()
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
