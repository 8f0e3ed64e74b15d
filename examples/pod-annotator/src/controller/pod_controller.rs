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

//! The `Pod` controller: watches objects of the built-in Kubernetes kind `Pod`
//! (group `core`, version `v1`; the k8s-openapi type
//! `k8s_openapi::api::core::v1::Pod`) and reconciles each one.
//!
//! This is the seed's `PodAnnotator`: every Pod in the watched namespace (the manager's
//! `--namespace` flag) gets the annotations [`INJECTED`]` = "true"` and [`TIMESTAMP`] (when it
//! was annotated, RFC 3339), once, through a merge patch that touches only those two
//! annotations, and an `Annotated` event. Like the seed's predicates, the controller reacts only
//! to Pods it has not seen yet (creates) and to annotation changes; see [`triggers`].
//!
//! When a call to the API server fails, [`reconcile`] and [`error_policy`] decide what happens:
//! - 409 Conflict (the Pod changed after the version the patch names): the reconciliation is
//!   retried after [`CONFLICT_RETRY`], without growing the backoff;
//! - 404 Not Found for the Pod itself (deleted after the event that started the
//!   reconciliation): the reconciliation ends quietly, `Ok`;
//! - any other failure: retried after [`backoff`] over the Pod's consecutive failures, which
//!   the next success resets.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::{PredicateConfig, WatchStreamExt, predicates, reflector, watcher};
use kube::{Client, Resource, ResourceExt};

use crate::manager::Manager;

/// The controller's name: the field manager of its patches, the reporter of its events and the
/// `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "pod-annotator";

/// The annotation that marks a Pod as done; its value is `"true"`.
pub const INJECTED: &str = "example.com/injected";

/// The annotation that records when the Pod was annotated (RFC 3339, UTC, whole seconds, as
/// Go's `time.RFC3339`).
pub const TIMESTAMP: &str = "example.com/timestamp";

/// How soon to retry after the API server refused the patch with 409 Conflict: the Pod
/// changed meanwhile, and the retry works on the newer version the watch delivers.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// Why a reconciliation failed; [`error_policy`] decides when to retry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
    /// The Pod has no namespace (the API server always sets one).
    #[error("the Pod has no namespace")]
    MissingNamespace,
}

impl Error {
    /// The API server's answer when it refused a call (`None` for a transport failure or an
    /// error of this controller's own).
    pub fn api_status(&self) -> Option<&kube::core::Status> {
        match self {
            Error::Kube(kube::Error::Api(status)) => Some(status),
            _ => None,
        }
    }

    /// Whether the API server refused the patch with 409 Conflict: the Pod changed since the
    /// resource version the patch names.
    pub fn is_conflict(&self) -> bool {
        self.api_status().is_some_and(|status| status.is_conflict())
    }

    /// Whether the API server answered 404 Not Found for the Pod named `name`: it is gone. A
    /// 404 for anything else is not.
    pub fn is_gone(&self, name: &str) -> bool {
        self.api_status().is_some_and(|status| {
            status.is_not_found()
                && status
                    .details
                    .as_ref()
                    .is_some_and(|details| details.name == name && details.kind == "pods")
        })
    }
}

/// State shared by all reconciliations of this controller.
pub struct Context {
    /// Client for the API server.
    pub client: Client,
    /// Publishes events about the reconciled objects (`kubectl describe` shows them).
    pub recorder: Recorder,
    /// Consecutive failures per object (`namespace/name`), for [`error_policy`]'s backoff.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    /// A context whose events are reported by [`CONTROLLER_NAME`] from this host (the pod name
    /// in a cluster).
    pub fn new(client: Client) -> Self {
        Self {
            recorder: Recorder::new(client.clone(), Reporter::from(CONTROLLER_NAME)),
            client,
            failures: Mutex::default(),
        }
    }

    /// Counts one more consecutive failure of the Pod `key`; returns the count.
    fn count_failure(&self, key: &str) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// Forgets the failures of the Pod `key`, after a success or once it is gone.
    fn reset_failures(&self, key: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.remove(key);
    }
}

// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// Annotates one Pod, once: a Pod that already carries [`INJECTED`], or is being deleted, is
/// left alone. Otherwise it gets [`INJECTED`]` = "true"` and [`TIMESTAMP`] with a JSON merge
/// patch (field manager [`CONTROLLER_NAME`]) that names the Pod's resource version, so a Pod
/// changed meanwhile is refused with 409 as the seed's `r.Update` would be, but the rest of the
/// Pod is never sent back; then an `Annotated` event. A merge patch, not server-side apply: on
/// a Pod deleted meanwhile, apply would try to create it (and fail with 422), a patch answers
/// 404, which ends the reconciliation quietly.
///
/// Returns `await_change`: the Pod needs no second look until it changes; on error,
/// [`error_policy`] decides.
pub async fn reconcile(obj: Arc<Pod>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = object_key(&obj);
    let result = annotate(&obj, &ctx).await;
    match result {
        Ok(()) => {}
        Err(err) if err.is_gone(&obj.name_any()) => {
            tracing::debug!(object = %key, "deleted before it was annotated");
        }
        Err(err) => return Err(err),
    }
    ctx.reset_failures(&key);
    Ok(Action::await_change())
}

/// The patch and the event of [`reconcile`].
async fn annotate(obj: &Pod, ctx: &Context) -> Result<(), Error> {
    let key = object_key(obj);
    if obj.annotations().contains_key(INJECTED) || obj.metadata.deletion_timestamp.is_some() {
        tracing::debug!(object = %key, "already annotated or being deleted");
        return Ok(());
    }
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let patch = serde_json::json!({
        "metadata": {
            "resourceVersion": obj.resource_version(),
            "annotations": {
                INJECTED: "true",
                TIMESTAMP: now,
            },
        },
    });
    let params = PatchParams {
        field_manager: Some(CONTROLLER_NAME.into()),
        ..PatchParams::default()
    };
    api.patch(&obj.name_any(), &params, &Patch::Merge(&patch))
        .await?;
    let event = Event {
        type_: EventType::Normal,
        reason: "Annotated".into(),
        note: Some(format!("added the annotations {INJECTED} and {TIMESTAMP}")),
        action: "Annotate".into(),
        secondary: None,
    };
    if let Err(err) = ctx.recorder.publish(&event, &obj.object_ref(&())).await {
        tracing::warn!(object = %key, error = %err, "publishing an event failed");
    }
    tracing::info!(object = %key, "annotated");
    Ok(())
}

/// Filters a stream of watched Pods down to the ones worth reconciling, as the seed's
/// `predicate.Funcs` does: a Pod seen for the first time (a create, or every Pod when the
/// watch starts) and a Pod whose annotations changed pass; status changes, other updates and
/// deletions do not. Built on kube's `predicate_filter` with `predicates::annotations`.
pub fn triggers<S>(pods: S) -> impl Stream<Item = Result<Pod, watcher::Error>>
where
    S: Stream<Item = Result<Pod, watcher::Error>>,
{
    pods.predicate_filter(predicates::annotations, PredicateConfig::default())
}

/// Decides when to retry after [`reconcile`] failed: after [`CONFLICT_RETRY`] for a conflict
/// (which does not count as a failure), else after [`backoff`] over the Pod's consecutive
/// failures, which the next success resets.
pub fn error_policy(obj: Arc<Pod>, err: &Error, ctx: Arc<Context>) -> Action {
    let key = object_key(&obj);
    if err.is_conflict() {
        tracing::debug!(object = %key, error = %err, retry_in = ?CONFLICT_RETRY, "conflict");
        return Action::requeue(CONFLICT_RETRY);
    }
    let delay = backoff(ctx.count_failure(&key));
    tracing::warn!(
        object = %key,
        error = %err,
        retry_in = ?delay,
        "reconcile failed"
    );
    Action::requeue(delay)
}

/// The delay before the next attempt after `failures` consecutive failures: 5 s, doubled per
/// failure, at most 5 minutes.
pub fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(6);
    Duration::from_secs((5u64 << doublings).min(300))
}

/// Runs the controller until `mgr.shutdown` is cancelled: watches `Pod` objects in
/// `mgr.namespace` (the manager's `--namespace`; every namespace when unset, which the seed's
/// `target-namespace` check avoids, so set it), passes them through [`triggers`], annotates each
/// one, and records every reconciliation in the manager's metrics.
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
    let api: Api<Pod> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => {
            tracing::warn!("no --namespace given: annotating the Pods of every namespace");
            Api::all(mgr.client.clone())
        }
    };
    let ctx = Arc::new(Context::new(mgr.client.clone()));
    let metrics = mgr.metrics.clone();
    let (reader, writer) = reflector::store();
    let pods = watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects();
    Controller::for_stream(triggers(pods), reader)
        .graceful_shutdown_on(mgr.shutdown.clone().cancelled_owned())
        .run(
            move |obj, ctx| {
                let metrics = metrics.clone();
                async move {
                    let start = Instant::now();
                    let result = reconcile(obj, ctx).await;
                    let outcome = if result.is_ok() { "success" } else { "error" };
                    metrics.reconcile(CONTROLLER_NAME, start.elapsed(), outcome);
                    result
                }
            },
            error_policy,
            ctx,
        )
        .for_each(|result| async move {
            match result {
                Ok((object, _)) => tracing::debug!(%object, "reconciled"),
                Err(err) => tracing::debug!(error = %err, "reconcile did not complete"),
            }
        })
        .await;
    Ok(())
}

fn object_key(obj: &Pod) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use serde_json::Value;
    use tokio::time::timeout;
    use tower_test::mock;

    const WAIT: Duration = Duration::from_secs(5);

    /// A Pod `name` in `target-namespace`, at resource version `rv`, with `annotations`.
    fn pod(name: &str, rv: &str, annotations: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some("target-namespace".into());
        pod.metadata.uid = Some(format!("uid-{name}"));
        pod.metadata.resource_version = Some(rv.into());
        if !annotations.is_empty() {
            pod.metadata.annotations = Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        pod
    }

    /// A request the mocked API server received, answered with `reply`.
    async fn serve(handle: &mut Handle, reply: Value) -> (Request<Body>, Value) {
        let (request, respond) = timeout(WAIT, handle.next_request())
            .await
            .expect("the reconciler sent no further request")
            .expect("the client was dropped");
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let answer = if reply.is_null() { body.clone() } else { reply };
        respond.send_response(
            Response::builder()
                .status(200)
                .body(Body::from(serde_json::to_vec(&answer).unwrap()))
                .unwrap(),
        );
        (Request::from_parts(parts, Body::empty()), body)
    }

    type Handle = mock::Handle<Request<Body>, Response<Body>>;

    /// The API server's `Status` answer refusing a call about the Pod `name`.
    fn refusal(name: &str, code: u16, reason: &str) -> Value {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": format!("pods \"{name}\": {reason}"),
            "reason": reason,
            "details": {"name": name, "kind": "pods"},
            "code": code,
        })
    }

    /// Answers the next request with `status` and the body `reply`; returns the request.
    async fn refuse(handle: &mut Handle, status: u16, reply: Value) -> Request<Body> {
        let (request, respond) = timeout(WAIT, handle.next_request())
            .await
            .expect("the reconciler sent no further request")
            .expect("the client was dropped");
        respond.send_response(
            Response::builder()
                .status(status)
                .body(Body::from(serde_json::to_vec(&reply).unwrap()))
                .unwrap(),
        );
        request
    }

    /// Reconciles a new Pod `web` whose patch the mocked API server answers with `status` and
    /// `reply`; returns the result and the context (with its failure counts).
    async fn reconcile_refused(status: u16, reply: Value) -> (Result<Action, Error>, Arc<Context>) {
        let (ctx, mut handle) = mocked();
        let server = tokio::spawn(async move {
            let patch = refuse(&mut handle, status, reply).await;
            assert_eq!(patch.method(), "PATCH");
            handle
        });
        let result = timeout(
            WAIT,
            reconcile(Arc::new(pod("web", "10", &[])), ctx.clone()),
        )
        .await
        .expect("reconcile hung");
        let mut handle = server.await.unwrap();
        // reconcile has returned, so an event it published would be waiting by now.
        let extra = timeout(Duration::from_millis(100), handle.next_request()).await;
        assert!(extra.is_err(), "a request after the refused patch");
        (result, ctx)
    }

    fn mocked() -> (Arc<Context>, Handle) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (
            Arc::new(Context::new(Client::new(service, "default"))),
            handle,
        )
    }

    #[tokio::test]
    async fn a_new_pod_is_annotated_with_a_patch_and_an_event() {
        let (ctx, mut handle) = mocked();
        let obj = pod("web", "10", &[("team", "ml")]);
        let reply = serde_json::to_value(&obj).unwrap();
        let server = tokio::spawn(async move {
            let patch = serve(&mut handle, reply).await;
            let event = serve(&mut handle, Value::Null).await;
            let extra = timeout(WAIT, handle.next_request()).await;
            assert!(matches!(extra, Ok(None)), "unexpected API request");
            (patch, event)
        });
        let before = k8s_openapi::jiff::Timestamp::now();
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        assert_eq!(action, Action::await_change());
        let ((patch, body), (event, event_body)) = server.await.unwrap();

        assert_eq!(patch.method(), "PATCH");
        assert_eq!(
            patch.uri().path(),
            "/api/v1/namespaces/target-namespace/pods/web"
        );
        let query = patch.uri().query().unwrap_or_default();
        assert!(query.contains("fieldManager=pod-annotator"), "{query}");
        assert_eq!(
            patch.headers()["content-type"],
            "application/merge-patch+json"
        );
        // Only the resource version (the precondition) and the annotations are sent.
        let metadata = body["metadata"].as_object().unwrap();
        let fields: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(fields, ["metadata"]);
        assert_eq!(metadata["resourceVersion"], "10");
        assert_eq!(metadata.len(), 2, "{metadata:?}");
        let annotations = body["metadata"]["annotations"].as_object().unwrap();
        let keys: Vec<&String> = annotations.keys().collect();
        assert_eq!(
            keys,
            [INJECTED, TIMESTAMP],
            "the patch touches only our annotations"
        );
        assert_eq!(annotations[INJECTED], "true");
        let stamp: k8s_openapi::jiff::Timestamp =
            annotations[TIMESTAMP].as_str().unwrap().parse().unwrap();
        assert!(
            stamp.as_second() >= before.as_second() && stamp.as_second() <= before.as_second() + 60,
            "{stamp} is not the time of the reconciliation ({before})"
        );
        assert!(annotations[TIMESTAMP].as_str().unwrap().ends_with('Z'));

        assert_eq!(event.method(), "POST");
        assert_eq!(
            event.uri().path(),
            "/apis/events.k8s.io/v1/namespaces/target-namespace/events"
        );
        assert_eq!(event_body["reason"], "Annotated");
        assert_eq!(event_body["type"], "Normal");
        assert_eq!(event_body["regarding"]["kind"], "Pod");
        assert_eq!(event_body["regarding"]["name"], "web");
    }

    #[tokio::test]
    async fn a_conflict_is_retried_soon_without_growing_the_backoff() {
        let (result, ctx) = reconcile_refused(409, refusal("web", 409, "Conflict")).await;
        let err = result.expect_err("a conflict is an error");
        assert!(err.is_conflict() && !err.is_gone("web"), "{err:?}");
        let obj = Arc::new(pod("web", "10", &[]));
        for _ in 0..3 {
            assert_eq!(
                error_policy(obj.clone(), &err, ctx.clone()),
                Action::requeue(CONFLICT_RETRY)
            );
        }
        // The conflicts did not count as failures: the next failure waits the first step.
        let transport = Error::Kube(kube::Error::Service("connection refused".into()));
        assert_eq!(
            error_policy(obj, &transport, ctx),
            Action::requeue(backoff(1))
        );
    }

    #[tokio::test]
    async fn a_pod_deleted_meanwhile_ends_the_reconcile_quietly() {
        let (result, _) = reconcile_refused(404, refusal("web", 404, "NotFound")).await;
        assert_eq!(
            result.expect("a deleted Pod is no error"),
            Action::await_change()
        );
    }

    #[tokio::test]
    async fn a_404_for_anything_but_the_pod_is_an_error() {
        let (result, _) = reconcile_refused(404, refusal("other", 404, "NotFound")).await;
        let err = result.expect_err("a 404 for another object is an error");
        assert!(!err.is_gone("web"), "{err:?}");
    }

    #[tokio::test]
    async fn other_api_errors_back_off() {
        let (result, ctx) = reconcile_refused(500, refusal("web", 500, "InternalError")).await;
        let err = result.expect_err("a 500 is an error");
        let obj = Arc::new(pod("web", "10", &[]));
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(Duration::from_secs(5))
        );
        assert_eq!(
            error_policy(obj, &err, ctx),
            Action::requeue(Duration::from_secs(10))
        );
    }

    #[tokio::test]
    async fn an_annotated_pod_gets_no_patch() {
        let (ctx, mut handle) = mocked();
        let obj = pod(
            "web",
            "11",
            &[(INJECTED, "true"), (TIMESTAMP, "2026-01-01T00:00:00Z")],
        );
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        assert_eq!(action, Action::await_change());
        // The context (and its client) is gone: a request would have been seen before `None`.
        let next = timeout(WAIT, handle.next_request()).await;
        assert!(matches!(next, Ok(None)), "an annotated Pod was patched");
    }

    #[tokio::test]
    async fn only_new_pods_and_annotation_changes_trigger() {
        let events = vec![
            Ok(pod("a", "1", &[])),
            // a status or spec change: annotations unchanged
            Ok(pod("a", "2", &[])),
            Ok(pod("b", "3", &[])),
            // our own patch changes the annotations: reconciled again (and skipped)
            Ok(pod("a", "4", &[(INJECTED, "true")])),
            Ok(pod("a", "5", &[(INJECTED, "true")])),
        ];
        let passed: Vec<(String, String)> = triggers(futures::stream::iter(events))
            .map(|pod| {
                let pod = pod.unwrap();
                (pod.name_any(), pod.resource_version().unwrap())
            })
            .collect()
            .await;
        let expected =
            [("a", "1"), ("b", "3"), ("a", "4")].map(|(n, rv)| (n.to_string(), rv.to_string()));
        assert_eq!(passed, expected);
    }

    #[tokio::test]
    async fn failures_back_off_and_a_success_resets_them() {
        let (ctx, _handle) = mocked();
        let obj = Arc::new(pod("web", "1", &[(INJECTED, "true")]));
        let err = Error::Kube(kube::Error::Service("connection refused".into()));
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(Duration::from_secs(5))
        );
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(Duration::from_secs(10))
        );
        reconcile(obj.clone(), ctx.clone()).await.unwrap();
        assert_eq!(
            error_policy(obj, &err, ctx),
            Action::requeue(Duration::from_secs(5))
        );
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
