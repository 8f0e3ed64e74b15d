//! The `{{ n.kind }}` controller: watches `{{ n.kind }}` objects (`{{ n.api_version }}`) and
//! reconciles each one toward its `spec`, reporting the outcome in `status` and as events.
//!
//! [`run`] is started by the manager (`src/main.rs`); put your logic in `apply` and, for
//! anything that must be released when an object is deleted, in `cleanup`.
//!
//! When a call to the API server fails, [`reconcile`] and [`error_policy`] decide what happens:
//! - 409 Conflict (the object changed while it was reconciled): the reconciliation is retried
//!   after [`CONFLICT_RETRY`], without growing the backoff;
//! - 404 Not Found for the object itself (it was deleted after the event that started the
//!   reconciliation): the reconciliation ends quietly, `Ok` with no event;
//! - any other failure: retried after [`backoff`] over the object's consecutive failures,
//!   which the next success resets.
//!
//! A deleted object's `cleanup` runs once: the finalizer is removed right after it succeeds,
//! and a stale copy of the object that still shows the finalizer is not cleaned up again (a
//! restarted manager lists the objects afresh, so it sees no stale copy). The tests at the end
//! of this file show each of these cases against a mocked API server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};

use {{ n.type_path }};
use rsbuilder_runtime::Manager;

/// The controller's name: the field manager of its status patches, the reporter of its events
/// and the `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "{{ n.controller_name }}";

/// The finalizer this controller keeps on every `{{ n.kind }}`, so that `cleanup` runs before the
/// object is gone.
pub const FINALIZER: &str = "{{ n.group }}/finalizer";

/// How long to wait before reconciling a healthy object again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);

/// How soon to retry after the API server refused a write with 409 Conflict: the object
/// changed meanwhile, and the retry works on the newer version the watch delivers.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// How long to remember that an object's cleanup ran: far longer than a stale copy of the
/// deleted object can linger in the watch cache.
const FINALIZED_MEMORY: Duration = Duration::from_secs(10 * 60);

/// Why a reconciliation failed; [`error_policy`] decides when to retry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed, or the `apply` / `cleanup` step it wraps did.
    #[error(transparent)]
    Finalizer(Box<finalizer::Error<Error>>),
{%- if n.namespaced %}
    /// The object has no namespace, though the kind is namespaced.
    #[error("the object has no namespace")]
    MissingNamespace,
{%- endif %}
}

impl Error {
    /// The API server's answer when it refused a call (`None` for a transport failure or an
    /// error of this controller's own).
    pub fn api_status(&self) -> Option<&kube::core::Status> {
        let err = match self {
            Error::Kube(err) => err,
            Error::Finalizer(err) => match err.as_ref() {
                finalizer::Error::ApplyFailed(err) | finalizer::Error::CleanupFailed(err) => {
                    return err.api_status();
                }
                finalizer::Error::AddFinalizer(err) | finalizer::Error::RemoveFinalizer(err) => err,
                _ => return None,
            },
{%- if n.namespaced %}
            Error::MissingNamespace => return None,
{%- endif %}
        };
        match err {
            kube::Error::Api(status) => Some(status),
            _ => None,
        }
    }

    /// Whether the API server refused a write with 409 Conflict: the object changed since the
    /// version this reconciliation read.
    pub fn is_conflict(&self) -> bool {
        self.api_status().is_some_and(|status| status.is_conflict())
    }

    /// Whether the API server answered 404 Not Found for the `{{ n.kind }}` named `name`: the
    /// object is gone. A 404 for anything else (another object, an API that is not installed)
    /// is not.
    pub fn is_gone(&self, name: &str) -> bool {
        self.api_status().is_some_and(|status| {
            status.is_not_found()
                && status.details.as_ref().is_some_and(|details| {
                    details.name == name
                        && details.kind == {{ n.kind }}::plural(&())
                        && details.group == {{ n.kind }}::group(&())
                })
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
    /// When `cleanup` ran and the finalizer was removed, per object UID.
    finalized: Mutex<HashMap<String, Instant>>,
}

impl Context {
    /// A context whose events are reported by [`CONTROLLER_NAME`] from this host (the pod name
    /// in a cluster).
    pub fn new(client: Client) -> Self {
        Self {
            recorder: Recorder::new(client.clone(), Reporter::from(CONTROLLER_NAME)),
            client,
            failures: Mutex::default(),
            finalized: Mutex::default(),
        }
    }

    /// Counts one more consecutive failure of the object `key`; returns the count.
    fn count_failure(&self, key: &str) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// Forgets the failures of the object `key`, after a success or once it is gone.
    fn reset_failures(&self, key: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.remove(key);
    }

    /// Records that the object `uid` was cleaned up and lost the finalizer.
    fn remember_finalized(&self, uid: &str) {
        let mut finalized = self
            .finalized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        finalized.retain(|_, at| at.elapsed() < FINALIZED_MEMORY);
        finalized.insert(uid.to_owned(), Instant::now());
    }

    /// Whether the object `uid` was cleaned up and lost the finalizer (within the last
    /// [`FINALIZED_MEMORY`]).
    fn was_finalized(&self, uid: &str) -> bool {
        let finalized = self
            .finalized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        finalized
            .get(uid)
            .is_some_and(|at| at.elapsed() < FINALIZED_MEMORY)
    }
}

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/status,verbs=get;update;patch
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// Reconciles one `{{ n.kind }}` object: makes sure it carries [`FINALIZER`], then runs
/// `apply` while the object lives and `cleanup` once it is being deleted (the finalizer is
/// removed after `cleanup` succeeds).
///
/// Returns when to look at the object again; on error, [`error_policy`] decides. An object
/// that is gone (a 404 for it, see [`Error::is_gone`]) ends the reconciliation with `Ok`, and
/// a stale copy of a deleted object this controller already cleaned up is left alone.
pub async fn reconcile(obj: Arc<{{ n.kind }}>, ctx: Arc<Context>) -> Result<Action, Error> {
{%- if n.namespaced %}
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
    let api: Api<{{ n.kind }}> = Api::namespaced(ctx.client.clone(), &namespace);
{%- else %}
    let api: Api<{{ n.kind }}> = Api::all(ctx.client.clone());
{%- endif %}
    let key = object_key(&obj);
    let name = obj.name_any();
    // Kubernetes lets no finalizer be added to an object that is being deleted, so once this
    // controller removed its finalizer, a copy that still shows it is stale.
    let uid = obj.uid().unwrap_or_default();
    let deleting = obj.metadata.deletion_timestamp.is_some();
    if deleting && ctx.was_finalized(&uid) {
        tracing::debug!(object = %key, "already cleaned up");
        return Ok(Action::await_change());
    }
    let finalizing = deleting && obj.finalizers().iter().any(|f| f == FINALIZER);
    let result = finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            finalizer::Event::Apply(obj) => apply(obj, &api, &ctx).await,
            finalizer::Event::Cleanup(obj) => cleanup(obj, &ctx).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)));
    let action = match result {
        Ok(action) => action,
        Err(err) if err.is_gone(&name) => {
            tracing::debug!(object = %key, "deleted before the reconciliation finished");
            Action::await_change()
        }
        Err(err) => return Err(err),
    };
    if finalizing && !uid.is_empty() {
        ctx.remember_finalized(&uid);
    }
    ctx.reset_failures(&key);
    Ok(action)
}

/// Brings the world in line with `obj.spec`, then records the outcome in `status` with a
/// server-side apply patch on the status subresource: `observedGeneration` and a `Ready`
/// condition.
async fn apply(obj: Arc<{{ n.kind }}>, api: &Api<{{ n.kind }}>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): compare `obj.spec` with what exists (child objects, external systems) and
    // create, update or delete until they match. Return an error to retry with backoff.

    let generation = obj.metadata.generation;
    let previous = obj
        .status
        .as_ref()
        .and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
    let ready = ready_condition(
        previous,
        generation,
        "True",
        "Reconciled",
        "the {{ n.kind }} has been reconciled",
    );
    let changed = previous.is_none_or(|p| p.status != ready.status);
    let patch = serde_json::json!({
        "apiVersion": {{ n.kind }}::api_version(&()),
        "kind": {{ n.kind }}::kind(&()),
        "status": {
            "conditions": [ready],
            "observedGeneration": generation,
        },
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(CONTROLLER_NAME).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    if changed {
        publish(
            ctx,
            &obj,
            EventType::Normal,
            "Reconciled",
            "Reconcile",
            format!("{{ n.kind }} {} is ready", obj.name_any()),
        )
        .await;
    }
    Ok(Action::requeue(RESYNC))
}

/// Releases what the object holds outside the cluster before it is deleted. Objects it owns
/// through `ownerReferences` are garbage-collected by Kubernetes and need nothing here.
async fn cleanup(obj: Arc<{{ n.kind }}>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): delete external resources created for this object. Return an error to keep
    // the finalizer (and the object) until that succeeds.
    publish(
        ctx,
        &obj,
        EventType::Normal,
        "Deleting",
        "Cleanup",
        format!("cleaning up {{ n.kind }} {}", obj.name_any()),
    )
    .await;
    Ok(Action::await_change())
}

/// Decides when to retry after [`reconcile`] failed: after [`CONFLICT_RETRY`] for a conflict
/// (which does not count as a failure), else after [`backoff`] over the object's consecutive
/// failures, which the next success resets.
pub fn error_policy(obj: Arc<{{ n.kind }}>, err: &Error, ctx: Arc<Context>) -> Action {
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

{% if n.namespaced -%}
/// Runs the controller until `mgr.shutdown` is cancelled: watches `{{ n.kind }}` objects (in
/// `mgr.namespace` when set, else in every namespace), reconciles each one, and records every
/// reconciliation in the manager's metrics.
{%- else -%}
/// Runs the controller until `mgr.shutdown` is cancelled: watches `{{ n.kind }}` objects (the
/// kind is cluster-scoped), reconciles each one, and records every reconciliation in the
/// manager's metrics.
{%- endif %}
///
/// Errors when `{{ n.kind }}` objects cannot be listed, usually because the CRD is not installed
/// (`make install`) or RBAC does not allow it.
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
{%- if n.namespaced %}
    let api: Api<{{ n.kind }}> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => Api::all(mgr.client.clone()),
    };
{%- else %}
    let api: Api<{{ n.kind }}> = Api::all(mgr.client.clone());
{%- endif %}
    if let Err(err) = api.list(&ListParams::default().limit(1)).await {
        anyhow::bail!(
            "{CONTROLLER_NAME}: cannot list {{ n.crd_name }} ({err}); is the CRD installed (`make install`)?"
        );
    }
    let ctx = Arc::new(Context::new(mgr.client.clone()));
    let metrics = mgr.metrics.clone();
    Controller::new(api, watcher::Config::default())
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

/// A `Ready` condition, keeping the previous transition time when the status is unchanged.
fn ready_condition(
    previous: Option<&Condition>,
    generation: Option<i64>,
    status: &str,
    reason: &str,
    message: &str,
) -> Condition {
    let last_transition_time = match previous {
        Some(p) if p.status == status => p.last_transition_time.clone(),
        _ => Time(k8s_openapi::jiff::Timestamp::now()),
    };
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: generation,
        last_transition_time,
    }
}

/// Publishes an event about `obj`. Events are informational: a failure is logged, not returned.
async fn publish(
    ctx: &Context,
    obj: &{{ n.kind }},
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
) {
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: action.into(),
        secondary: None,
    };
    if let Err(err) = ctx.recorder.publish(&event, &obj.object_ref(&())).await {
        tracing::warn!(object = %object_key(obj), error = %err, "publishing an event failed");
    }
}

fn object_key(obj: &{{ n.kind }}) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;
    use {{ n.type_path }}Spec;
    use http::{Request, Response};
    use kube::client::Body;
    use serde_json::{Value, json};
    use tokio::time::timeout;
    use tower_test::mock;

    type Handle = mock::Handle<Request<Body>, Response<Body>>;

    const WAIT: Duration = Duration::from_secs(5);

    /// A context whose client talks to a mocked API server, and the handle that plays it.
    fn mocked() -> (Arc<Context>, Handle) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (
            Arc::new(Context::new(Client::new(service, "default"))),
            handle,
        )
    }

{%- if n.namespaced %}

    /// The test object: `test` in `default`, at generation 3, already carrying the finalizer.
    fn object() -> {{ n.kind }} {
        let mut obj = {{ n.kind }}::new("test", {{ n.kind }}Spec::default());
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("6e9bd3a4-4a3c-4f0e-9d8e-0c1f2b3a4d5e".into());
        obj.metadata.generation = Some(3);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    /// The API path of the test object, plus `suffix`.
    fn object_path(suffix: &str) -> String {
        let (api_version, plural) = ({{ n.kind }}::api_version(&()), {{ n.kind }}::plural(&()));
        format!("/apis/{api_version}/namespaces/default/{plural}/test{suffix}")
    }
{%- else %}

    /// The test object: `test` (cluster-scoped), at generation 3, carrying the finalizer.
    fn object() -> {{ n.kind }} {
        let mut obj = {{ n.kind }}::new("test", {{ n.kind }}Spec::default());
        obj.metadata.uid = Some("6e9bd3a4-4a3c-4f0e-9d8e-0c1f2b3a4d5e".into());
        obj.metadata.generation = Some(3);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    /// The API path of the test object, plus `suffix`.
    fn object_path(suffix: &str) -> String {
        let (api_version, plural) = ({{ n.kind }}::api_version(&()), {{ n.kind }}::plural(&()));
        format!("/apis/{api_version}/{plural}/test{suffix}")
    }
{%- endif %}

    /// The test object as the API server has it once it is being deleted.
    fn deleted_object() -> {{ n.kind }} {
        let mut obj = object();
        obj.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        obj
    }

    /// A request the mocked API server received.
    #[derive(Debug)]
    struct Seen {
        method: String,
        path: String,
        query: String,
        body: Value,
    }

    /// How the mocked API server answers one request.
    enum Reply {
        /// 200 with this body.
        Ok(Value),
        /// 200 with the request's own body (what the API server does for a create).
        Echo,
        /// An error `Status` about the test object with this code and reason, as the API server
        /// writes it.
        Refuse(u16, &'static str),
        /// An error with this code whose body is not a `Status` (a proxy's, or the API server's
        /// for an API that is not installed).
        Plain(u16, &'static str),
        /// No answer: the connection fails.
        Broken,
    }

    /// Takes the next request and answers it with `reply`.
    async fn serve(handle: &mut Handle, reply: Reply) -> Seen {
        let (request, respond) = timeout(WAIT, handle.next_request())
            .await
            .expect("the reconciler sent no further request")
            .expect("the client was dropped");
        let method = request.method().to_string();
        let path = request.uri().path().to_string();
        let query = request.uri().query().unwrap_or_default().to_string();
        let bytes = request.into_body().collect_bytes().await.unwrap();
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        let (code, answer) = match reply {
            Reply::Ok(answer) => (200, serde_json::to_vec(&answer).unwrap()),
            Reply::Echo => (200, serde_json::to_vec(&body).unwrap()),
            Reply::Refuse(code, reason) => (
                code,
                serde_json::to_vec(&refusal("test", code, reason)).unwrap(),
            ),
            Reply::Plain(code, text) => (code, text.as_bytes().to_vec()),
            Reply::Broken => {
                respond.send_error("connection reset by peer");
                return Seen {
                    method,
                    path,
                    query,
                    body,
                };
            }
        };
        respond.send_response(
            Response::builder()
                .status(code)
                .body(Body::from(answer))
                .unwrap(),
        );
        Seen {
            method,
            path,
            query,
            body,
        }
    }

    /// The API server's error `Status` about the `{{ n.kind }}` named `name`.
    fn refusal(name: &str, code: u16, reason: &str) -> Value {
        let (group, plural) = ({{ n.kind }}::group(&()), {{ n.kind }}::plural(&()));
        json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": format!("{plural}.{group} \"{name}\": {reason}"),
            "reason": reason,
            "details": {"name": name, "group": group, "kind": plural},
            "code": code,
        })
    }

    /// Runs `reconcile` on `obj` while the mocked API server answers its requests with
    /// `replies`, in order; returns the outcome and the requests. Fails when `reconcile` sends
    /// fewer requests, or waits for more.
    async fn reconcile_with(
        ctx: &Arc<Context>,
        handle: &mut Handle,
        obj: {{ n.kind }},
        replies: Vec<Reply>,
    ) -> (Result<Action, Error>, Vec<Seen>) {
        let server = async {
            let mut seen = Vec::new();
            for reply in replies {
                seen.push(serve(handle, reply).await);
            }
            seen
        };
        let (result, seen) =
            tokio::join!(timeout(WAIT, reconcile(Arc::new(obj), ctx.clone())), server);
        (
            result.expect("reconcile hung: it sent a request the test did not answer"),
            seen,
        )
    }

    /// Asserts that nothing more reached the mocked API server.
    async fn assert_no_more_requests(ctx: Arc<Context>, mut handle: Handle) {
        drop(ctx);
        let next = timeout(WAIT, handle.next_request()).await;
        assert!(
            matches!(next, Ok(None)),
            "an unexpected API request was sent"
        );
    }

    fn transport_error() -> Error {
        Error::Kube(kube::Error::Service("connection refused".into()))
    }

    #[tokio::test]
    async fn reconcile_applies_ready_status_and_publishes_an_event() {
        let (ctx, mut handle) = mocked();
        let reply = serde_json::to_value(object()).unwrap();
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Ok(reply), Reply::Echo],
        )
        .await;
        assert_no_more_requests(ctx, handle).await;

        assert_eq!(result.expect("reconcile failed"), Action::requeue(RESYNC));
        let [status, event] = <[Seen; 2]>::try_from(seen).unwrap();
        assert_eq!(status.method, "PATCH");
        assert_eq!(status.path, object_path("/status"));
        assert!(
            status.query.contains("fieldManager={{ n.controller_name }}")
                && status.query.contains("force=true"),
            "{}",
            status.query
        );
        assert_eq!(status.body["apiVersion"], "{{ n.api_version }}");
        assert_eq!(status.body["kind"], "{{ n.kind }}");
        assert_eq!(status.body["status"]["observedGeneration"], 3);
        let ready = &status.body["status"]["conditions"][0];
        assert_eq!(ready["type"], "Ready");
        assert_eq!(ready["status"], "True");
        assert_eq!(ready["reason"], "Reconciled");
        assert_eq!(ready["observedGeneration"], 3);
        assert!(ready["lastTransitionTime"].is_string(), "{ready}");

        assert_eq!(event.method, "POST");
        assert_eq!(
            event.path,
            "/apis/events.k8s.io/v1/namespaces/default/events"
        );
        assert_eq!(event.body["reason"], "Reconciled");
        assert_eq!(event.body["regarding"]["kind"], "{{ n.kind }}");
        assert_eq!(event.body["regarding"]["name"], "test");
    }

    #[tokio::test]
    async fn reconcile_adds_the_finalizer_first() {
        let (ctx, mut handle) = mocked();
        let mut obj = object();
        obj.metadata.finalizers = None;
        let reply = serde_json::to_value(&obj).unwrap();
        let (result, seen) = reconcile_with(&ctx, &mut handle, obj, vec![Reply::Ok(reply)]).await;
        assert_no_more_requests(ctx, handle).await;

        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        assert_eq!(seen[0].method, "PATCH");
        assert_eq!(seen[0].path, object_path(""));
        assert_eq!(
            seen[0].body[1],
            json!({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
        );
    }

    #[tokio::test]
    async fn a_conflict_on_the_status_patch_is_retried_soon_and_the_retry_succeeds() {
        let (ctx, mut handle) = mocked();
        let obj = Arc::new(object());
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Refuse(409, "Conflict")],
        )
        .await;
        assert_eq!(seen[0].path, object_path("/status"));
        let err = result.expect_err("a conflict must fail the reconciliation");
        assert!(err.is_conflict() && !err.is_gone("test"), "{err:?}");
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(CONFLICT_RETRY)
        );

        // The retry: the status patch goes through, and the event follows.
        let reply = serde_json::to_value(object()).unwrap();
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Ok(reply), Reply::Echo],
        )
        .await;
        assert_eq!(result.expect("the retry failed"), Action::requeue(RESYNC));
        assert_eq!(seen[0].path, object_path("/status"));
        assert_eq!(seen[1].body["reason"], "Reconciled");

        // The conflict did not count as a failure: the next one waits the first step.
        assert_eq!(
            error_policy(obj, &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn a_conflict_on_the_finalizer_patch_is_retried_soon() {
        let (ctx, mut handle) = mocked();
        let mut obj = object();
        obj.metadata.finalizers = None;
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            obj.clone(),
            vec![Reply::Refuse(409, "Conflict")],
        )
        .await;
        assert_eq!(seen[0].path, object_path(""));
        let err = result.expect_err("a conflict must fail the reconciliation");
        assert!(err.is_conflict(), "{err:?}");
        assert_eq!(
            error_policy(Arc::new(obj.clone()), &err, ctx.clone()),
            Action::requeue(CONFLICT_RETRY)
        );
        let reply = serde_json::to_value(&obj).unwrap();
        let (result, _) = reconcile_with(&ctx, &mut handle, obj, vec![Reply::Ok(reply)]).await;
        assert_eq!(result.expect("the retry failed"), Action::await_change());
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn an_object_deleted_before_its_status_patch_ends_the_reconcile_quietly() {
        let (ctx, mut handle) = mocked();
        let obj = Arc::new(object());
        // An earlier failure, which the end of the object clears.
        error_policy(obj.clone(), &transport_error(), ctx.clone());
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Refuse(404, "NotFound")],
        )
        .await;
        assert_eq!(seen[0].path, object_path("/status"));
        assert_eq!(
            result.expect("a deleted object is no error"),
            Action::await_change()
        );
        assert_eq!(
            error_policy(obj, &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        // No event about the object that is gone.
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn an_object_deleted_before_its_finalizer_is_added_ends_the_reconcile_quietly() {
        let (ctx, mut handle) = mocked();
        let mut obj = object();
        obj.metadata.finalizers = None;
        let (result, seen) =
            reconcile_with(&ctx, &mut handle, obj, vec![Reply::Refuse(404, "NotFound")]).await;
        assert_eq!(seen[0].method, "PATCH");
        assert_eq!(
            result.expect("a deleted object is no error"),
            Action::await_change()
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn a_404_for_anything_but_the_object_is_an_error() {
        let (ctx, mut handle) = mocked();
        let (result, _) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Plain(404, "404 page not found")],
        )
        .await;
        let err = result.expect_err("a missing API is an error");
        assert!(!err.is_gone("test") && !err.is_conflict(), "{err:?}");
        // Nor is a 404 naming another object.
        let status = serde_json::from_value(refusal("other", 404, "NotFound")).unwrap();
        let other = Error::Kube(kube::Error::Api(Box::new(status)));
        assert!(
            other.is_gone("other") && !other.is_gone("test"),
            "{other:?}"
        );
        assert_eq!(
            error_policy(Arc::new(object()), &err, ctx.clone()),
            Action::requeue(backoff(1))
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn api_errors_back_off_per_object_and_a_success_resets_it() {
        let (ctx, mut handle) = mocked();
        let obj = Arc::new(object());
        let mut retries = Vec::new();
        for reply in [
            Reply::Refuse(500, "InternalError"),
            Reply::Broken,
            Reply::Refuse(503, "ServiceUnavailable"),
        ] {
            let (result, _) = reconcile_with(&ctx, &mut handle, object(), vec![reply]).await;
            let err = result.expect_err("the status patch failed");
            assert!(!err.is_conflict() && !err.is_gone("test"), "{err:?}");
            retries.push(error_policy(obj.clone(), &err, ctx.clone()));
        }
        assert_eq!(
            retries,
            [5, 10, 20].map(|secs| Action::requeue(Duration::from_secs(secs)))
        );

        // Another object's failures are its own.
        let mut other = object();
        other.metadata.name = Some("other".into());
        assert_eq!(
            error_policy(Arc::new(other), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );

        // A success resets the count.
        let reply = serde_json::to_value(object()).unwrap();
        let (result, _) = reconcile_with(
            &ctx,
            &mut handle,
            object(),
            vec![Reply::Ok(reply), Reply::Echo],
        )
        .await;
        assert_eq!(result.expect("reconcile failed"), Action::requeue(RESYNC));
        assert_eq!(
            error_policy(obj, &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn deletion_runs_the_cleanup_once_and_removes_the_finalizer() {
        let (ctx, mut handle) = mocked();
        let mut finalized = deleted_object();
        finalized.metadata.finalizers = None;
        let reply = serde_json::to_value(&finalized).unwrap();
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            deleted_object(),
            vec![Reply::Echo, Reply::Ok(reply)],
        )
        .await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        let [event, patch] = <[Seen; 2]>::try_from(seen).unwrap();
        assert_eq!(event.method, "POST");
        assert_eq!(event.body["reason"], "Deleting");
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "remove", "path": "/metadata/finalizers/0"})
        );

        // The same deletion delivered again, from a cache that still shows the finalizer: no
        // second cleanup, no request.
        let (result, seen) = reconcile_with(&ctx, &mut handle, deleted_object(), vec![]).await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        assert!(seen.is_empty());
        // The object as the API server now has it, without the finalizer: nothing to do.
        let (result, seen) = reconcile_with(&ctx, &mut handle, finalized, vec![]).await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        assert!(seen.is_empty());
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn a_deleted_object_gone_before_its_finalizer_is_removed_ends_quietly() {
        let (ctx, mut handle) = mocked();
        let (result, seen) = reconcile_with(
            &ctx,
            &mut handle,
            deleted_object(),
            vec![Reply::Echo, Reply::Refuse(404, "NotFound")],
        )
        .await;
        assert_eq!(
            result.expect("a deleted object is no error"),
            Action::await_change()
        );
        assert_eq!(seen[0].body["reason"], "Deleting");
        assert_eq!(seen[1].method, "PATCH");
        // Its cleanup ran: another delivery of the deletion does not run it again.
        let (result, seen) = reconcile_with(&ctx, &mut handle, deleted_object(), vec![]).await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        assert!(seen.is_empty());
        assert_no_more_requests(ctx, handle).await;
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
