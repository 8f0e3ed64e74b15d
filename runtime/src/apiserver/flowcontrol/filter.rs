// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The priority and fairness middleware, as k8s.io/apiserver's
//! `server/filters/priority-and-fairness.go` runs it: classify the request (its user from
//! the [`UserInfo`] that [`crate::apiserver::auth`] put on it, `system:anonymous` in
//! `system:unauthenticated` without one), set the `X-Kubernetes-PF-FlowSchema-UID` and
//! `X-Kubernetes-PF-PriorityLevel-UID` headers, then run it at once (exempt), give it a seat
//! of its level, or answer 429 TooManyRequests with `Retry-After: 1` (queue full, no seat of
//! a `Reject` level, or waited past the limit).
//!
//! A watch holds its seat until its answer's head is ready, then gives it back while its
//! events stream on, as kube frees a watch's seat once it is initialized: open watches do not
//! count against their level.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::UserInfo;
use prometheus_client::metrics::gauge::Gauge;

use super::matching::RequestDigest;
use super::queueset::{Admission, Rejection};
use super::{FlowControl, FlowLabels, RejectedLabels, WaitLabels};
use crate::apiserver::request::attributes;
use crate::apiserver::status::ApiError;

/// The header naming the matched schema's UID.
pub const FLOW_SCHEMA_UID: &str = "x-kubernetes-pf-flowschema-uid";
/// The header naming the level's UID.
pub const PRIORITY_LEVEL_UID: &str = "x-kubernetes-pf-prioritylevel-uid";

/// The request's user and groups as flow control matches them: the authenticated user with
/// `system:authenticated` added when missing (kube's authenticators add it), or
/// `system:anonymous` in `system:unauthenticated`.
pub fn digest(request: &Request) -> RequestDigest {
    let (user, mut groups) = match request.extensions().get::<UserInfo>() {
        Some(u) if u.username.as_deref().is_some_and(|n| !n.is_empty()) => (
            u.username.clone().unwrap_or_default(),
            u.groups.clone().unwrap_or_default(),
        ),
        _ => (
            "system:anonymous".to_string(),
            vec!["system:unauthenticated".to_string()],
        ),
    };
    if user != "system:anonymous" && !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".to_string());
    }
    RequestDigest {
        user,
        groups,
        attributes: attributes(
            request.method(),
            request.uri().path(),
            request.uri().query(),
        ),
    }
}

/// Adds one to a gauge for as long as it lives.
struct Count(Gauge);

impl Count {
    fn new(g: Gauge) -> Self {
        g.inc();
        Self(g)
    }
}

impl Drop for Count {
    fn drop(&mut self) {
        self.0.dec();
    }
}

fn too_many() -> Response {
    let mut r = ApiError::too_many_requests().into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

fn with_uids(mut r: Response, schema_uid: &str, level_uid: &str) -> Response {
    for (name, value) in [
        (FLOW_SCHEMA_UID, schema_uid),
        (PRIORITY_LEVEL_UID, level_uid),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            r.headers_mut().insert(HeaderName::from_static(name), v);
        }
    }
    r
}

/// The axum middleware (`from_fn_with_state(flow_control, filter::middleware)`).
pub async fn middleware(
    State(fc): State<Arc<FlowControl>>,
    request: Request,
    next: Next,
) -> Response {
    let digest = digest(&request);
    let Some(c) = fc.classify(&digest) else {
        return next.run(request).await;
    };
    let (schema_uid, level_uid) = (c.schema().uid.clone(), c.level().uid.clone());
    let labels = FlowLabels {
        priority_level: c.level().name.clone(),
        flow_schema: c.schema().name.clone(),
    };
    let metrics = fc.metrics();
    let arrived = std::time::Instant::now();
    // kube observes the wait of every request of a limited level; `execute` is whether its
    // queue set took it (so `true` for one that then timed out in its queue, as in kube's
    // apf_filter); an exempt request is only counted as dispatched.
    let waited = |execute: bool| {
        metrics
            .wait
            .get_or_create(&WaitLabels {
                priority_level: labels.priority_level.clone(),
                flow_schema: labels.flow_schema.clone(),
                execute: execute.to_string(),
            })
            .observe(arrived.elapsed().as_secs_f64());
    };
    let Some(queues) = c.level().queues.clone() else {
        metrics.dispatched.get_or_create(&labels).inc();
        let _executing = Count::new(metrics.executing.get_or_create(&labels).clone());
        return with_uids(next.run(request).await, &schema_uid, &level_uid);
    };
    let admitted = match queues.start(c.flow_hash) {
        Ok(Admission::Run(seat)) => Ok(seat),
        Ok(Admission::Queued(waiting)) => {
            let _inqueue = Count::new(metrics.inqueue.get_or_create(&labels).clone());
            waiting.wait(fc.queue_wait()).await
        }
        Err(rejection) => Err(rejection),
    };
    let seat = match admitted {
        Ok(seat) => seat,
        Err(rejection) => {
            waited(rejection == Rejection::TimedOut);
            metrics
                .rejected
                .get_or_create(&RejectedLabels {
                    priority_level: labels.priority_level.clone(),
                    flow_schema: labels.flow_schema.clone(),
                    reason: Rejection::reason(rejection).to_string(),
                })
                .inc();
            return with_uids(too_many(), &schema_uid, &level_uid);
        }
    };
    waited(true);
    metrics.dispatched.get_or_create(&labels).inc();
    let executing = Count::new(metrics.executing.get_or_create(&labels).clone());
    let response = next.run(request).await;
    drop((seat, executing));
    with_uids(response, &schema_uid, &level_uid)
}
