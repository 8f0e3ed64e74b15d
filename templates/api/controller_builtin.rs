//! The `{{ n.kind }}` controller: watches objects of the built-in Kubernetes kind `{{ n.kind }}`
//! (group `{{ n.rbac_group }}`, version `{{ n.version }}`; the k8s-openapi type
//! `{{ n.type_path }}`) and reconciles each one.
//!
//! [`run`] is started by the manager (`src/main.rs`); put your logic in [`reconcile`]. This
//! project does not own `{{ n.kind }}` objects: change only what your controller is responsible
//! for (an annotation, a label), preferably with a patch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use {{ n.type_path }};
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};

use crate::manager::Manager;

/// The controller's name: the field manager of its patches, the reporter of its events and the
/// `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "{{ n.controller_name }}";

/// Why a reconciliation failed; [`error_policy`] decides when to retry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
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
}

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// Reconciles one `{{ n.kind }}` object.
///
/// Returns when to look at the object again; on error, [`error_policy`] decides.
pub async fn reconcile(obj: Arc<{{ n.kind }}>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = object_key(&obj);
    // TODO(user): bring the object (or what it stands for) to the state you want, e.g. patch
    // it through `Api::<{{ n.kind }}>` with `PatchParams::apply(CONTROLLER_NAME)`, and publish
    // events with `ctx.recorder`. Return an error to retry with backoff.
    tracing::debug!(object = %key, "reconciling");

    if let Ok(mut failures) = ctx.failures.lock() {
        failures.remove(&key);
    }
    Ok(Action::await_change())
}

/// Decides when to retry after [`reconcile`] failed: [`backoff`] over the object's consecutive
/// failures, which the next success resets.
pub fn error_policy(obj: Arc<{{ n.kind }}>, err: &Error, ctx: Arc<Context>) -> Action {
    let failures = match ctx.failures.lock() {
        Ok(mut failures) => {
            let count = failures.entry(object_key(&obj)).or_insert(0);
            *count = count.saturating_add(1);
            *count
        }
        Err(_) => 1,
    };
    let delay = backoff(failures);
    tracing::warn!(
        object = %object_key(&obj),
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

    #[tokio::test]
    async fn reconcile_succeeds_and_resets_the_backoff() {
        let (service, mut handle) = mock::pair::<Request<Body>, Response<Body>>();
        let ctx = Arc::new(Context::new(Client::new(service, "default")));
        let mut obj = {{ n.kind }}::default();
        obj.metadata.name = Some("test".into());
{%- if n.namespaced %}
        obj.metadata.namespace = Some("default".into());
{%- endif %}
        let obj = Arc::new(obj);
        let err = Error::Kube(kube::Error::Service("connection refused".into()));
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
            matches!(next, Ok(None) | Err(_)),
            "unexpected API request from reconcile"
        );
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
