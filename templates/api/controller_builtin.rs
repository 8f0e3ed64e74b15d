//! The `{{ n.kind }}` controller: watches objects of the built-in Kubernetes kind `{{ n.kind }}`
//! (group `{{ n.rbac_group }}`, version `{{ n.version }}`; the k8s-openapi type
//! `{{ n.type_path }}`) and reconciles each one.
//!
//! [`run`] is started by the manager (`src/main.rs`); put your logic in `apply`. This
//! project does not own `{{ n.kind }}` objects: change only what your controller is responsible
//! for (an annotation, a label), preferably with a patch.
//!
//! When a call to the API server fails, [`reconcile`] and [`error_policy`] decide what happens:
//! - 409 Conflict (the object changed while it was reconciled): the reconciliation is retried
//!   after [`CONFLICT_RETRY`], without growing the backoff;
//! - 404 Not Found for the object itself (it was deleted after the event that started the
//!   reconciliation): the reconciliation ends quietly, `Ok`;
//! - any other failure: retried after [`backoff`] over the object's consecutive failures,
//!   which the next success resets.
//!
//! The tests at the end of this file show each of these cases.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use {{ n.type_path }};
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};

use rsbuilder_runtime::Manager;

/// The controller's name: the field manager of its patches, the reporter of its events and the
/// `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "{{ n.controller_name }}";

/// How soon to retry after the API server refused a write with 409 Conflict: the object
/// changed meanwhile, and the retry works on the newer version the watch delivers.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// Why a reconciliation failed; [`error_policy`] decides when to retry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
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
}

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// Reconciles one `{{ n.kind }}` object: runs `apply`, then settles its result (`conclude`).
///
/// Returns when to look at the object again; on error, [`error_policy`] decides.
pub async fn reconcile(obj: Arc<{{ n.kind }}>, ctx: Arc<Context>) -> Result<Action, Error> {
    let result = apply(&obj, &ctx).await;
    conclude(result, &obj.name_any(), &object_key(&obj), &ctx)
}

/// Brings the object (or what it stands for) to the state you want.
async fn apply(obj: &{{ n.kind }}, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): e.g. patch the object through `Api::<{{ n.kind }}>` on `ctx.client` with a
    // merge patch (`Patch::Merge`, field manager CONTROLLER_NAME in the `PatchParams`; put
    // `metadata.resourceVersion` in the patch to get a 409 when the object changed meanwhile),
    // and publish events with `ctx.recorder`. Return an error to retry ([`error_policy`]); a
    // 404 for this object ends the reconciliation quietly. Avoid server-side apply
    // (`Patch::Apply`) here: on an object that is gone it tries to create it again.
    tracing::debug!(object = %object_key(obj), "reconciling");
    let _ = ctx;
    Ok(Action::await_change())
}

/// Settles `apply`'s `result` for the object `name` (`key` is its `namespace/name`): a
/// success, or a 404 for the object itself (it was deleted meanwhile, see
/// [`Error::is_gone`]), resets the object's failure count and returns `Ok`; any other error
/// is returned for [`error_policy`].
fn conclude(
    result: Result<Action, Error>,
    name: &str,
    key: &str,
    ctx: &Context,
) -> Result<Action, Error> {
    let action = match result {
        Ok(action) => action,
        Err(err) if err.is_gone(name) => {
            tracing::debug!(object = %key, "deleted before the reconciliation finished");
            Action::await_change()
        }
        Err(err) => return Err(err),
    };
    ctx.reset_failures(key);
    Ok(action)
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
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
{%- if n.namespaced %}
    let api: Api<{{ n.kind }}> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => Api::all(mgr.client.clone()),
    };
{%- else %}
    let api: Api<{{ n.kind }}> = Api::all(mgr.client.clone());
{%- endif %}
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

fn object_key(obj: &{{ n.kind }}) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use tokio::time::timeout;
    use tower_test::mock;

    const WAIT: Duration = Duration::from_secs(5);

    /// A context whose client talks to a mocked API server, and the handle that plays it.
    fn mocked() -> (Arc<Context>, mock::Handle<Request<Body>, Response<Body>>) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (
            Arc::new(Context::new(Client::new(service, "default"))),
            handle,
        )
    }

    /// The test object, named `name`.
    fn object(name: &str) -> Arc<{{ n.kind }}> {
        let mut obj = {{ n.kind }}::default();
        obj.metadata.name = Some(name.into());
{%- if n.namespaced %}
        obj.metadata.namespace = Some("default".into());
{%- endif %}
        Arc::new(obj)
    }

    /// The error for the API server's `Status` answer about the `{{ n.kind }}` named `name`.
    fn refusal(name: &str, code: u16, reason: &str) -> Error {
        let (group, plural) = ({{ n.kind }}::group(&()), {{ n.kind }}::plural(&()));
        let status = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": format!("{plural} \"{name}\": {reason}"),
            "reason": reason,
            "details": {"name": name, "group": group, "kind": plural},
            "code": code,
        }))
        .unwrap();
        Error::Kube(kube::Error::Api(Box::new(status)))
    }

    fn transport_error() -> Error {
        Error::Kube(kube::Error::Service("connection refused".into()))
    }

    #[tokio::test]
    async fn reconcile_succeeds_and_resets_the_backoff() {
        let (ctx, mut handle) = mocked();
        let obj = object("test");
        let err = transport_error();
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(Duration::from_secs(5))
        );
        assert_eq!(
            error_policy(obj.clone(), &err, ctx.clone()),
            Action::requeue(Duration::from_secs(10))
        );

        let action = timeout(WAIT, reconcile(obj.clone(), ctx.clone()))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        assert_eq!(action, Action::await_change());
        // The success reset the failure count: the next failure waits 5 s again.
        assert_eq!(
            error_policy(obj, &err, ctx.clone()),
            Action::requeue(Duration::from_secs(5))
        );

        // The scaffolded reconcile only observes: it sent nothing to the API server.
        drop(ctx);
        let next = timeout(WAIT, handle.next_request()).await;
        assert!(
            matches!(next, Ok(None)),
            "unexpected API request from reconcile"
        );
    }

    #[tokio::test]
    async fn a_conflict_is_retried_soon_without_growing_the_backoff() {
        let (ctx, _handle) = mocked();
        let obj = object("test");
        let conflict = refusal("test", 409, "Conflict");
        assert!(
            conflict.is_conflict() && !conflict.is_gone("test"),
            "{conflict:?}"
        );
        for _ in 0..3 {
            assert_eq!(
                error_policy(obj.clone(), &conflict, ctx.clone()),
                Action::requeue(CONFLICT_RETRY)
            );
        }
        // The conflicts did not count as failures: the next one waits the first step.
        assert_eq!(
            error_policy(obj.clone(), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        // And the retry after a conflict succeeds.
        assert_eq!(
            conclude(Ok(Action::await_change()), "test", &object_key(&obj), &ctx)
                .expect("the retry failed"),
            Action::await_change()
        );
    }

    #[tokio::test]
    async fn an_object_gone_from_the_api_server_ends_the_reconcile_quietly() {
        let (ctx, _handle) = mocked();
        let obj = object("test");
        // An earlier failure, which the end of the object clears.
        error_policy(obj.clone(), &transport_error(), ctx.clone());
        let key = object_key(&obj);
        let result = conclude(Err(refusal("test", 404, "NotFound")), "test", &key, &ctx);
        assert_eq!(
            result.expect("a deleted object is no error"),
            Action::await_change()
        );
        assert_eq!(
            error_policy(obj.clone(), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );

        // A 404 naming another object is an error, as is one that names none (an API that
        // is not installed).
        let other = conclude(Err(refusal("other", 404, "NotFound")), "test", &key, &ctx);
        assert!(
            matches!(other, Err(ref err) if err.is_gone("other")),
            "{other:?}"
        );
        let status = kube::core::Status::failure("404 page not found", "").with_code(404);
        let missing = Error::Kube(kube::Error::Api(Box::new(status)));
        assert!(conclude(Err(missing), "test", &key, &ctx).is_err());
    }

    #[tokio::test]
    async fn api_errors_back_off_per_object_and_a_success_resets_it() {
        let (ctx, _handle) = mocked();
        let obj = object("test");
        let retries: Vec<Action> = [
            refusal("test", 500, "InternalError"),
            transport_error(),
            refusal("test", 503, "ServiceUnavailable"),
        ]
        .iter()
        .map(|err| error_policy(obj.clone(), err, ctx.clone()))
        .collect();
        assert_eq!(
            retries,
            [5, 10, 20].map(|secs| Action::requeue(Duration::from_secs(secs)))
        );
        // Another object's failures are its own.
        assert_eq!(
            error_policy(object("other"), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        // A success resets the count.
        let action = timeout(WAIT, reconcile(obj.clone(), ctx.clone()))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        assert_eq!(action, Action::await_change());
        assert_eq!(
            error_policy(obj, &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
