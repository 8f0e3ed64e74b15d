// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The per-controller machinery, written once for every kind: a project implements
//! [`Reconciler`] (its `apply`, `cleanup` and watch setup, like controller-runtime's
//! `Reconciler` and builder) and [`run`] does the rest:
//!
//! - a finalizer ([`Reconciler::FINALIZER`]) so `cleanup` runs before a deleted object is gone,
//!   removed right after `cleanup` succeeds; a stale copy of the deleted object that still
//!   shows the finalizer is not cleaned up again ("cleanup runs once");
//! - the failure policy: 409 Conflict anywhere in the error retries after [`CONFLICT_RETRY`]
//!   without growing the backoff; 404 for the reconciled object itself ends the reconciliation
//!   quietly; any other failure retries after [`backoff`] over the object's consecutive
//!   failures, which the next success resets;
//! - reconcile metrics, events ([`Context::publish`]), and the `Ready` condition with
//!   `observedGeneration` as a server-side apply status patch ([`Context::set_ready`]).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::manager::{Manager, ScopedApi};

/// How soon to retry after the API server refused a write with 409 Conflict: the object
/// changed meanwhile, and the retry works on the newer version the watch delivers.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// How long to remember that an object's cleanup ran: far longer than a stale copy of the
/// deleted object can linger in the watch cache.
const FINALIZED_MEMORY: Duration = Duration::from_secs(10 * 60);

/// A project's controller for one kind: what it does with an object, and what it watches.
/// [`run`] calls it; see the module docs for what happens around each call.
pub trait Reconciler: Send + Sync + Sized + 'static {
    /// The reconciled kind (a custom resource, or a built-in kind such as `Pod`).
    type Kind: Resource<DynamicType = (), Scope: ScopedApi>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static;

    /// The controller's name: the field manager of its patches, the reporter of its events
    /// and the `controller` label of its metrics.
    const NAME: &'static str;

    /// The finalizer kept on every object so [`Reconciler::cleanup`] runs before it is gone;
    /// `None` (for kinds the project does not own, such as `Pod`): no finalizer, no cleanup.
    const FINALIZER: Option<&'static str>;

    /// Brings the world in line with the object (it is not being deleted); returns when to
    /// look again. An error is retried as the module docs say.
    fn apply(
        &self,
        obj: Arc<Self::Kind>,
        ctx: &Context,
    ) -> impl Future<Output = anyhow::Result<Action>> + Send;

    /// Releases what the object holds outside the cluster before it is deleted (objects it
    /// owns through `ownerReferences` are garbage-collected and need nothing). An error keeps
    /// the finalizer, and the object, until a retry succeeds. Default: nothing to release.
    fn cleanup(
        &self,
        obj: Arc<Self::Kind>,
        ctx: &Context,
    ) -> impl Future<Output = anyhow::Result<Action>> + Send {
        let _ = (obj, ctx);
        async { Ok(Action::await_change()) }
    }

    /// Builds the controller of the kind from `api` (the kind in the manager's namespace, or
    /// everywhere), before [`Reconciler::watches`] adds to it. Override it to choose which
    /// changes start a reconciliation (controller-runtime's `WithEventFilter`: e.g.
    /// `Controller::for_stream` over a watch filtered with kube's `predicate_filter`, which
    /// needs kube's `unstable-runtime` feature) or to watch with a label or field selector.
    /// Default: every change of every object, `Controller::new(api, Default::default())`.
    fn controller(&self, api: Api<Self::Kind>) -> Controller<Self::Kind> {
        Controller::new(api, watcher::Config::default())
    }

    /// Adds watches to the controller, such as `controller.owns(mgr.api::<Deployment>(),
    /// Default::default())` (Kubebuilder's `Owns()`). Default: the kind alone.
    fn watches(&self, controller: Controller<Self::Kind>, mgr: &Manager) -> Controller<Self::Kind> {
        let _ = mgr;
        controller
    }
}

/// What a reconciliation receives besides the object: the client, the event recorder, and the
/// controller's memory of failures and finished cleanups.
pub struct Context {
    /// Client for the API server.
    pub client: kube::Client,
    /// The controller's name ([`Reconciler::NAME`]).
    pub name: &'static str,
    /// Publishes events about the reconciled objects (`kubectl describe` shows them).
    pub recorder: Recorder,
    failures: Mutex<HashMap<String, u32>>,
    finalized: Mutex<HashMap<String, Instant>>,
}

impl Context {
    /// A context for the controller `name`, whose events are reported as `name`.
    pub fn new(client: kube::Client, name: &'static str) -> Self {
        Self {
            recorder: Recorder::new(client.clone(), Reporter::from(name)),
            client,
            name,
            failures: Mutex::default(),
            finalized: Mutex::default(),
        }
    }

    /// Publishes an event about `obj`. Events are informational: a failure is logged, not
    /// returned.
    pub async fn publish<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
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
        if let Err(err) = self.recorder.publish(&event, &obj.object_ref(&())).await {
            tracing::warn!(object = %object_key(obj), error = %err, "publishing an event failed");
        }
    }

    /// Records the outcome in the object's status with a server-side apply patch on the status
    /// subresource (field manager [`Context::name`]): `observedGeneration` and the `Ready`
    /// condition `ready` ("True" / "False") with `reason` and `message`, keeping the previous
    /// transition time while the status is unchanged (`previous`: the object's current Ready
    /// condition). Returns whether the status changed; then publishes a Normal (True) or
    /// Warning (False) event with `reason`. Errors: the patch failed.
    ///
    /// Field ownership: the apply owns `status.conditions` and `status.observedGeneration` for
    /// the manager [`Context::name`]. Server-side apply removes the fields a manager stops
    /// applying, so a controller that applies other status fields (`phase`, `readyReplicas`)
    /// under the same manager in a separate patch removes these two, and this call removes
    /// those. Write such fields in the same apply with [`Context::set_ready_with`].
    pub async fn set_ready<K>(
        &self,
        obj: &K,
        previous: Option<&Condition>,
        ready: bool,
        reason: &str,
        message: &str,
    ) -> anyhow::Result<bool>
    where
        K: Resource<DynamicType = (), Scope: ScopedApi> + Clone + DeserializeOwned + Debug,
    {
        self.set_ready_with(
            obj,
            previous,
            ready,
            reason,
            message,
            serde_json::Map::new(),
        )
        .await
    }

    /// [`Context::set_ready`] with the controller's other status fields in the same apply:
    /// `extra` holds status fields by their JSON names (`{"phase": "Running", "readyReplicas":
    /// 3}`), written beside `conditions` and `observedGeneration` under the same field manager,
    /// so no apply of this controller removes what another wrote. A key `conditions` or
    /// `observedGeneration` in `extra` is overridden by the ones this call computes. Out and
    /// errors: as [`Context::set_ready`].
    pub async fn set_ready_with<K>(
        &self,
        obj: &K,
        previous: Option<&Condition>,
        ready: bool,
        reason: &str,
        message: &str,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> anyhow::Result<bool>
    where
        K: Resource<DynamicType = (), Scope: ScopedApi> + Clone + DeserializeOwned + Debug,
    {
        let generation = obj.meta().generation;
        let status = if ready { "True" } else { "False" };
        let condition = ready_condition(previous, generation, status, reason, message);
        let changed = previous.is_none_or(|p| p.status != condition.status);
        let patch = ready_patch::<K>(extra, condition, generation);
        let api = K::Scope::api::<K>(self.client.clone(), obj.meta().namespace.as_deref());
        api.patch_status(
            &obj.name_any(),
            &PatchParams::apply(self.name).force(),
            &Patch::Apply(&patch),
        )
        .await?;
        if changed {
            let type_ = if ready {
                EventType::Normal
            } else {
                EventType::Warning
            };
            self.publish(obj, type_, reason, "Reconcile", message.to_owned())
                .await;
        }
        Ok(changed)
    }

    fn count_failure(&self, key: &str) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    fn reset_failures(&self, key: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.remove(key);
    }

    fn remember_finalized(&self, uid: &str) {
        let mut finalized = self
            .finalized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        finalized.retain(|_, at| at.elapsed() < FINALIZED_MEMORY);
        finalized.insert(uid.to_owned(), Instant::now());
    }

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

/// A failed reconciliation: the project's error (with its causes), as kube's controller
/// needs a `std::error::Error`.
#[derive(Debug)]
pub struct Error(pub anyhow::Error);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The API server's answer, when a call it refused is in the error's causes.
    pub fn api_status(&self) -> Option<&kube::core::Status> {
        self.0
            .chain()
            .find_map(|cause| match cause.downcast_ref::<kube::Error>() {
                Some(kube::Error::Api(status)) => Some(status.as_ref()),
                _ => None,
            })
    }

    /// Whether the API server refused a write with 409 Conflict.
    pub fn is_conflict(&self) -> bool {
        self.api_status().is_some_and(|s| s.is_conflict())
    }

    /// Whether the API server answered 404 for the object of kind `K` named `name` itself (a
    /// 404 for another object, or an API that is not installed, is not).
    pub fn is_gone<K: Resource<DynamicType = ()>>(&self, name: &str) -> bool {
        self.api_status().is_some_and(|status| {
            status.is_not_found()
                && status.details.as_ref().is_some_and(|d| {
                    d.name == name && d.kind == K::plural(&()) && d.group == K::group(&())
                })
        })
    }
}

/// Turns the finalizer helper's error into the project's error, keeping kube's errors as
/// causes (so [`Error::api_status`] finds them).
fn flatten(err: finalizer::Error<Error>) -> Error {
    match err {
        finalizer::Error::ApplyFailed(err) | finalizer::Error::CleanupFailed(err) => err,
        finalizer::Error::AddFinalizer(err) => {
            Error(anyhow::Error::new(err).context("adding the finalizer failed"))
        }
        finalizer::Error::RemoveFinalizer(err) => {
            Error(anyhow::Error::new(err).context("removing the finalizer failed"))
        }
        other => Error(anyhow::anyhow!("{other}")),
    }
}

/// The delay before the next attempt after `failures` consecutive failures: 5 s, doubled per
/// failure, at most 5 minutes.
pub fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(6);
    Duration::from_secs((5u64 << doublings).min(300))
}

/// `namespace/name` of an object, for logs and the failure count.
pub fn object_key<K: Resource>(obj: &K) -> String {
    format!(
        "{}/{}",
        obj.meta().namespace.as_deref().unwrap_or_default(),
        obj.meta().name.as_deref().unwrap_or_default()
    )
}

/// A `Ready` condition, keeping the previous transition time when the status is unchanged.
pub fn ready_condition(
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

/// The server-side apply patch [`Context::set_ready_with`] sends for `K`: `extra` as the
/// status, with `conditions` set to `[condition]` and `observedGeneration` to `generation`.
pub fn ready_patch<K: Resource<DynamicType = ()>>(
    mut extra: serde_json::Map<String, serde_json::Value>,
    condition: Condition,
    generation: Option<i64>,
) -> serde_json::Value {
    extra.insert("conditions".into(), serde_json::json!([condition]));
    extra.insert("observedGeneration".into(), serde_json::json!(generation));
    serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": extra,
    })
}

/// Reconciles one object with `reconciler`: the finalizer around `apply` / `cleanup`, the
/// 404-is-done rule and the cleanup-runs-once memory (module docs). Errors go to
/// [`error_policy`].
pub async fn reconcile<R: Reconciler>(
    obj: Arc<R::Kind>,
    reconciler: &R,
    ctx: &Context,
) -> Result<Action, Error> {
    let key = object_key(obj.as_ref());
    let name = obj.name_any();
    let Some(finalizer_name) = R::FINALIZER else {
        // A success, or the object gone (its failures end with it), resets the failures.
        let action = match reconciler.apply(obj, ctx).await.map_err(Error) {
            Ok(action) => action,
            Err(err) if err.is_gone::<R::Kind>(&name) => Action::await_change(),
            Err(err) => return Err(err),
        };
        ctx.reset_failures(&key);
        return Ok(action);
    };
    // Kubernetes lets no finalizer be added to an object that is being deleted, so once this
    // controller removed its finalizer, a copy that still shows it is stale.
    let uid = obj.uid().unwrap_or_default();
    let deleting = obj.meta().deletion_timestamp.is_some();
    if deleting && ctx.was_finalized(&uid) {
        tracing::debug!(object = %key, "already cleaned up");
        return Ok(Action::await_change());
    }
    let finalizing = deleting && obj.finalizers().iter().any(|f| f == finalizer_name);
    let api = <<R::Kind as Resource>::Scope as ScopedApi>::api::<R::Kind>(
        ctx.client.clone(),
        obj.meta().namespace.as_deref(),
    );
    let result = finalizer(&api, finalizer_name, obj, |event| async {
        match event {
            finalizer::Event::Apply(obj) => reconciler.apply(obj, ctx).await.map_err(Error),
            finalizer::Event::Cleanup(obj) => reconciler.cleanup(obj, ctx).await.map_err(Error),
        }
    })
    .await
    .map_err(flatten);
    let action = match result {
        Ok(action) => action,
        Err(err) if err.is_gone::<R::Kind>(&name) => {
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

/// When to retry after [`reconcile`] failed: [`CONFLICT_RETRY`] for a conflict (not counted as
/// a failure), else [`backoff`] over the object's consecutive failures.
pub fn error_policy<K: Resource>(obj: &K, err: &Error, ctx: &Context) -> Action {
    let key = object_key(obj);
    if err.is_conflict() {
        tracing::debug!(object = %key, error = %err, retry_in = ?CONFLICT_RETRY, "conflict");
        return Action::requeue(CONFLICT_RETRY);
    }
    let delay = backoff(ctx.count_failure(&key));
    tracing::warn!(object = %key, error = %err, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Runs `reconciler` until `mgr.shutdown` is cancelled: watches its kind (in `mgr.namespace`
/// when set and the kind is namespaced, else everywhere) plus what
/// [`Reconciler::watches`] adds, reconciles each object and records each reconciliation in
/// the manager's metrics. Errors: the kind cannot be listed (the CRD is not installed, `make
/// install`, or RBAC does not allow it).
pub async fn run<R: Reconciler>(mgr: Manager, reconciler: R) -> anyhow::Result<()> {
    let api: Api<R::Kind> = mgr.api();
    if let Err(err) = api.list(&ListParams::default().limit(1)).await {
        anyhow::bail!(
            "{}: cannot list {} ({err}); is the CRD installed (`make install`)?",
            R::NAME,
            R::Kind::plural(&())
        );
    }
    let state = Arc::new((reconciler, Context::new(mgr.client.clone(), R::NAME)));
    let metrics = mgr.metrics.clone();
    let controller = state.0.controller(api);
    let controller = state.0.watches(controller, &mgr);
    controller
        .graceful_shutdown_on(mgr.shutdown.clone().cancelled_owned())
        .run(
            move |obj, state: Arc<(R, Context)>| {
                let metrics = metrics.clone();
                async move {
                    let start = Instant::now();
                    let result = reconcile(obj, &state.0, &state.1).await;
                    let outcome = if result.is_ok() { "success" } else { "error" };
                    metrics.reconcile(R::NAME, start.elapsed(), outcome);
                    result
                }
            },
            |obj, err, state| error_policy(obj.as_ref(), err, &state.1),
            state,
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use kube::core::response::StatusDetails;

    /// The API server's refusal with `code` about the object `kind`/`name`, with the reason
    /// it gives for that code.
    fn refused(code: u16, kind: &str, name: &str) -> anyhow::Error {
        let reason = match code {
            404 => "NotFound",
            409 => "Conflict",
            _ => "InternalError",
        };
        let status = kube::core::Status::failure("refused", reason)
            .with_code(code)
            .with_details(StatusDetails {
                name: name.into(),
                group: String::new(),
                kind: kind.into(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds: 0,
            });
        anyhow::Error::new(kube::Error::Api(Box::new(status)))
    }

    #[test]
    fn the_ready_patch_carries_the_extra_status_fields_beside_the_condition() {
        let condition = ready_condition(None, Some(4), "True", "Reconciled", "ready");
        let mut extra = serde_json::Map::new();
        extra.insert("phase".into(), serde_json::json!("Running"));
        extra.insert("readyReplicas".into(), serde_json::json!(3));
        // The computed fields win over the caller's.
        extra.insert("observedGeneration".into(), serde_json::json!(1));
        let patch = ready_patch::<Pod>(extra, condition.clone(), Some(4));
        assert_eq!(patch["apiVersion"], "v1");
        assert_eq!(patch["kind"], "Pod");
        assert_eq!(
            patch["status"],
            serde_json::json!({
                "phase": "Running",
                "readyReplicas": 3,
                "observedGeneration": 4,
                "conditions": [condition],
            })
        );
    }

    #[test]
    fn backoff_doubles_from_5s_to_at_most_5_minutes() {
        let delays: Vec<u64> = (0..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 5, 10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(backoff(u32::MAX), Duration::from_secs(300));
    }

    /// A Pod controller that watches only the Pods labelled `app=web`.
    struct LabelledPods;

    impl Reconciler for LabelledPods {
        type Kind = Pod;
        const NAME: &'static str = "labelled-pods";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(&self, _obj: Arc<Pod>, _ctx: &Context) -> anyhow::Result<Action> {
            Ok(Action::await_change())
        }

        fn controller(&self, api: Api<Pod>) -> Controller<Pod> {
            Controller::new(api, watcher::Config::default().labels("app=web"))
        }
    }

    #[tokio::test]
    async fn run_watches_through_the_reconcilers_controller() {
        use tokio::time::timeout;
        let (service, mut handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let mgr = Manager::for_tests(kube::Client::new(service, "default"));
        let shutdown = mgr.shutdown.clone();
        let running = tokio::spawn(run(mgr, LabelledPods));
        let wait = Duration::from_secs(5);
        // The check that the kind can be listed, unfiltered.
        let (request, respond) = timeout(wait, handle.next_request())
            .await
            .expect("run listed nothing")
            .expect("the client was dropped");
        assert_eq!(request.uri().path(), "/api/v1/pods");
        assert!(
            !request
                .uri()
                .query()
                .unwrap_or("")
                .contains("labelSelector")
        );
        let empty = serde_json::json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [],
        });
        respond.send_response(
            http::Response::builder()
                .body(kube::client::Body::from(
                    serde_json::to_vec(&empty).unwrap(),
                ))
                .unwrap(),
        );
        // The controller's watch carries the selector of `LabelledPods::controller`.
        let (request, _respond) = timeout(wait, handle.next_request())
            .await
            .expect("the controller did not watch")
            .expect("the client was dropped");
        assert_eq!(request.uri().path(), "/api/v1/pods");
        let query = request.uri().query().unwrap_or("");
        assert!(query.contains("labelSelector=app%3Dweb"), "{query}");
        shutdown.cancel();
        running.abort();
    }

    #[test]
    fn a_conflict_is_found_under_context_and_through_the_finalizer() {
        let err = Error(refused(409, "pods", "web").context("updating the child"));
        assert!(err.is_conflict());
        let kube_err = kube::Error::Api(Box::new(
            kube::core::Status::failure("conflict", "Conflict").with_code(409),
        ));
        let err = flatten(finalizer::Error::AddFinalizer(kube_err));
        assert!(err.is_conflict());
        assert!(
            err.to_string().starts_with("adding the finalizer failed"),
            "{err}"
        );
        assert!(!Error(anyhow::anyhow!("no API status")).is_conflict());
    }

    #[test]
    fn only_a_404_for_the_object_itself_means_it_is_gone() {
        assert!(Error(refused(404, "pods", "web")).is_gone::<Pod>("web"));
        assert!(!Error(refused(404, "pods", "other")).is_gone::<Pod>("web"));
        assert!(!Error(refused(404, "services", "web")).is_gone::<Pod>("web"));
        assert!(!Error(refused(409, "pods", "web")).is_gone::<Pod>("web"));
    }

    #[tokio::test]
    async fn conflicts_do_not_grow_the_backoff_and_a_success_resets_it() {
        let (service, _handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let ctx = Context::new(kube::Client::new(service, "default"), "pod");
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".into());
        pod.metadata.namespace = Some("default".into());
        let failure = Error(anyhow::anyhow!("the image registry is down"));
        let conflict = Error(refused(409, "pods", "web"));
        assert_eq!(
            error_policy(&pod, &failure, &ctx),
            Action::requeue(backoff(1))
        );
        assert_eq!(
            error_policy(&pod, &conflict, &ctx),
            Action::requeue(CONFLICT_RETRY)
        );
        assert_eq!(
            error_policy(&pod, &failure, &ctx),
            Action::requeue(backoff(2))
        );
        ctx.reset_failures(&object_key(&pod));
        assert_eq!(
            error_policy(&pod, &failure, &ctx),
            Action::requeue(backoff(1))
        );
    }

    #[tokio::test]
    async fn cleanup_is_remembered_per_uid() {
        let (service, _handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let ctx = Context::new(kube::Client::new(service, "default"), "pod");
        assert!(!ctx.was_finalized("uid-1"));
        ctx.remember_finalized("uid-1");
        assert!(ctx.was_finalized("uid-1"));
        assert!(!ctx.was_finalized("uid-2"));
    }

    #[test]
    fn ready_keeps_its_transition_time_while_unchanged() {
        let first = ready_condition(None, Some(1), "True", "Reconciled", "ok");
        assert_eq!(first.observed_generation, Some(1));
        let same = ready_condition(Some(&first), Some(2), "True", "Reconciled", "ok");
        assert_eq!(same.last_transition_time, first.last_transition_time);
        assert_eq!(same.observed_generation, Some(2));
        let flipped = ready_condition(Some(&first), Some(2), "False", "Failed", "no");
        assert_eq!(flipped.status, "False");
        assert_eq!(flipped.reason, "Failed");
    }

    /// Reconciling against a mocked API server: a custom kind with a finalizer, and Pods
    /// without one, through [`reconcile`] and [`error_policy`] as [`run`] calls them.
    mod against_the_api_server {
        use super::super::*;
        use super::refused;
        use http::{Request, Response};
        use k8s_openapi::api::core::v1::Pod;
        use kube::client::Body;
        use serde::Deserialize;
        use serde_json::{Value, json};
        use tokio::time::timeout;
        use tower_test::mock;

        /// A kind as `create api` scaffolds it: a spec, and a status with the conditions.
        #[derive(
            kube::CustomResource,
            Serialize,
            Deserialize,
            Clone,
            Debug,
            Default,
            schemars::JsonSchema,
        )]
        #[kube(
            group = "example.com",
            version = "v1",
            kind = "Widget",
            namespaced,
            status = "WidgetStatus"
        )]
        pub struct WidgetSpec {
            #[serde(default)]
            size: Option<u32>,
        }

        #[derive(Serialize, Deserialize, Clone, Debug, Default, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetStatus {
            #[serde(default)]
            conditions: Vec<Condition>,
            #[serde(default)]
            observed_generation: Option<i64>,
        }

        const RESYNC: Duration = Duration::from_secs(300);
        const FINALIZER: &str = "example.com/finalizer";
        const WAIT: Duration = Duration::from_secs(5);

        /// What the scaffolded controller does: Ready on apply, an event on cleanup.
        struct WidgetReconciler;

        impl Reconciler for WidgetReconciler {
            type Kind = Widget;
            const NAME: &'static str = "widget-controller";
            const FINALIZER: Option<&'static str> = Some(FINALIZER);

            async fn apply(&self, obj: Arc<Widget>, ctx: &Context) -> anyhow::Result<Action> {
                let ready = obj
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
                ctx.set_ready(obj.as_ref(), ready, true, "Reconciled", "ready")
                    .await?;
                Ok(Action::requeue(RESYNC))
            }

            async fn cleanup(&self, obj: Arc<Widget>, ctx: &Context) -> anyhow::Result<Action> {
                ctx.publish(
                    obj.as_ref(),
                    EventType::Normal,
                    "Deleting",
                    "Cleanup",
                    "bye".into(),
                )
                .await;
                Ok(Action::await_change())
            }
        }

        /// A controller of a kind the project does not own: its `apply` fails with the
        /// API server's refusal `code` about the Pod `name`, or succeeds (`None`).
        struct PodReconciler(Option<(u16, &'static str)>);

        impl Reconciler for PodReconciler {
            type Kind = Pod;
            const NAME: &'static str = "pod-controller";
            const FINALIZER: Option<&'static str> = None;

            async fn apply(&self, _obj: Arc<Pod>, _ctx: &Context) -> anyhow::Result<Action> {
                match self.0 {
                    Some((code, name)) => Err(refused(code, "pods", name)),
                    None => Ok(Action::await_change()),
                }
            }
        }

        type Handle = mock::Handle<Request<Body>, Response<Body>>;

        fn mocked(name: &'static str) -> (Context, Handle) {
            let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
            (
                Context::new(kube::Client::new(service, "default"), name),
                handle,
            )
        }

        /// `test` in `default`, at generation 3, already carrying the finalizer.
        fn object() -> Widget {
            let mut obj = Widget::new("test", WidgetSpec::default());
            obj.metadata.namespace = Some("default".into());
            obj.metadata.uid = Some("6e9bd3a4-4a3c-4f0e-9d8e-0c1f2b3a4d5e".into());
            obj.metadata.generation = Some(3);
            obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
            obj
        }

        fn deleted_object() -> Widget {
            let mut obj = object();
            obj.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
            obj
        }

        fn object_path(suffix: &str) -> String {
            format!("/apis/example.com/v1/namespaces/default/widgets/test{suffix}")
        }

        fn pod(name: &str) -> Pod {
            let mut pod = Pod::default();
            pod.metadata.name = Some(name.into());
            pod.metadata.namespace = Some("default".into());
            pod
        }

        fn transport_error() -> Error {
            Error(anyhow::Error::new(kube::Error::Service(
                "connection refused".into(),
            )))
        }

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
            /// An error `Status` about the test object, as the API server writes it.
            Refuse(u16, &'static str),
            /// An error whose body is not a `Status` (an API that is not installed).
            Plain(u16, &'static str),
            /// No answer: the connection fails.
            Broken,
        }

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
            let seen = Seen {
                method,
                path,
                query,
                body,
            };
            let (code, answer) = match reply {
                Reply::Ok(answer) => (200, serde_json::to_vec(&answer).unwrap()),
                Reply::Echo => (200, serde_json::to_vec(&seen.body).unwrap()),
                Reply::Refuse(code, reason) => {
                    let status = json!({
                        "apiVersion": "v1", "kind": "Status", "metadata": {},
                        "status": "Failure", "message": reason, "reason": reason,
                        "details": {"name": "test", "group": "example.com", "kind": "widgets"},
                        "code": code,
                    });
                    (code, serde_json::to_vec(&status).unwrap())
                }
                Reply::Plain(code, text) => (code, text.as_bytes().to_vec()),
                Reply::Broken => {
                    respond.send_error("connection reset by peer");
                    return seen;
                }
            };
            respond.send_response(
                Response::builder()
                    .status(code)
                    .body(Body::from(answer))
                    .unwrap(),
            );
            seen
        }

        /// Runs [`reconcile`] on `obj` while the mocked API server answers with `replies`
        /// in order; fails when it sends fewer requests, or waits for more.
        async fn reconcile_with(
            ctx: &Context,
            handle: &mut Handle,
            obj: Widget,
            replies: Vec<Reply>,
        ) -> (Result<Action, Error>, Vec<Seen>) {
            let server = async {
                let mut seen = Vec::new();
                for reply in replies {
                    seen.push(serve(handle, reply).await);
                }
                seen
            };
            let reconciling = reconcile(Arc::new(obj), &WidgetReconciler, ctx);
            let (result, seen) = tokio::join!(timeout(WAIT, reconciling), server);
            (
                result.expect("reconcile sent a request the test did not answer"),
                seen,
            )
        }

        async fn assert_no_more_requests(ctx: Context, mut handle: Handle) {
            drop(ctx);
            let next = timeout(WAIT, handle.next_request()).await;
            assert!(
                matches!(next, Ok(None)),
                "an unexpected API request was sent"
            );
        }

        #[tokio::test]
        async fn reconcile_applies_ready_status_and_publishes_an_event() {
            let (ctx, mut handle) = mocked("widget-controller");
            let reply = serde_json::to_value(object()).unwrap();
            let replies = vec![Reply::Ok(reply), Reply::Echo];
            let (result, seen) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            assert_no_more_requests(ctx, handle).await;

            assert_eq!(result.expect("reconcile failed"), Action::requeue(RESYNC));
            let [status, event] = <[Seen; 2]>::try_from(seen).unwrap();
            assert_eq!(status.method, "PATCH");
            assert_eq!(status.path, object_path("/status"));
            assert!(
                status.query.contains("fieldManager=widget-controller")
                    && status.query.contains("force=true"),
                "{}",
                status.query
            );
            assert_eq!(status.body["apiVersion"], "example.com/v1");
            assert_eq!(status.body["kind"], "Widget");
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
            assert_eq!(event.body["regarding"]["kind"], "Widget");
            assert_eq!(event.body["regarding"]["name"], "test");
        }

        #[tokio::test]
        async fn an_unchanged_ready_condition_publishes_no_event() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut obj = object();
            let ready = ready_condition(None, Some(2), "True", "Reconciled", "ready");
            obj.status = Some(WidgetStatus {
                conditions: vec![ready.clone()],
                observed_generation: Some(2),
            });
            let reply = serde_json::to_value(&obj).unwrap();
            let (result, seen) =
                reconcile_with(&ctx, &mut handle, obj, vec![Reply::Ok(reply)]).await;
            assert_no_more_requests(ctx, handle).await;
            assert_eq!(result.expect("reconcile failed"), Action::requeue(RESYNC));
            let condition = &seen[0].body["status"]["conditions"][0];
            assert_eq!(condition["observedGeneration"], 3);
            assert_eq!(
                condition["lastTransitionTime"],
                serde_json::to_value(&ready.last_transition_time).unwrap()
            );
        }

        #[tokio::test]
        async fn reconcile_adds_the_finalizer_first() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut obj = object();
            obj.metadata.finalizers = None;
            let reply = serde_json::to_value(&obj).unwrap();
            let (result, seen) =
                reconcile_with(&ctx, &mut handle, obj, vec![Reply::Ok(reply)]).await;
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
            let (ctx, mut handle) = mocked("widget-controller");
            let replies = vec![Reply::Refuse(409, "Conflict")];
            let (result, seen) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            assert_eq!(seen[0].path, object_path("/status"));
            let err = result.expect_err("a conflict must fail the reconciliation");
            assert!(
                err.is_conflict() && !err.is_gone::<Widget>("test"),
                "{err:?}"
            );
            assert_eq!(
                error_policy(&object(), &err, &ctx),
                Action::requeue(CONFLICT_RETRY)
            );

            let reply = serde_json::to_value(object()).unwrap();
            let replies = vec![Reply::Ok(reply), Reply::Echo];
            let (result, seen) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            assert_eq!(result.expect("the retry failed"), Action::requeue(RESYNC));
            assert_eq!(seen[1].body["reason"], "Reconciled");
            // The conflict did not count as a failure: the next one waits the first step.
            assert_eq!(
                error_policy(&object(), &transport_error(), &ctx),
                Action::requeue(backoff(1))
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn a_conflict_on_the_finalizer_patch_is_retried_soon() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut obj = object();
            obj.metadata.finalizers = None;
            let replies = vec![Reply::Refuse(409, "Conflict")];
            let (result, seen) = reconcile_with(&ctx, &mut handle, obj.clone(), replies).await;
            assert_eq!(seen[0].path, object_path(""));
            let err = result.expect_err("a conflict must fail the reconciliation");
            assert!(err.is_conflict(), "{err:?}");
            assert_eq!(
                error_policy(&obj, &err, &ctx),
                Action::requeue(CONFLICT_RETRY)
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn an_object_deleted_before_its_status_patch_ends_the_reconcile_quietly() {
            let (ctx, mut handle) = mocked("widget-controller");
            // An earlier failure, which the end of the object clears.
            error_policy(&object(), &transport_error(), &ctx);
            let replies = vec![Reply::Refuse(404, "NotFound")];
            let (result, seen) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            assert_eq!(seen[0].path, object_path("/status"));
            assert_eq!(
                result.expect("a deleted object is no error"),
                Action::await_change()
            );
            assert_eq!(
                error_policy(&object(), &transport_error(), &ctx),
                Action::requeue(backoff(1))
            );
            // No event about the object that is gone.
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn an_object_deleted_before_its_finalizer_is_added_ends_the_reconcile_quietly() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut obj = object();
            obj.metadata.finalizers = None;
            let replies = vec![Reply::Refuse(404, "NotFound")];
            let (result, seen) = reconcile_with(&ctx, &mut handle, obj, replies).await;
            assert_eq!(seen[0].method, "PATCH");
            assert_eq!(
                result.expect("a deleted object is no error"),
                Action::await_change()
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn a_404_for_anything_but_the_object_is_an_error() {
            let (ctx, mut handle) = mocked("widget-controller");
            let replies = vec![Reply::Plain(404, "404 page not found")];
            let (result, _) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            let err = result.expect_err("a missing API is an error");
            assert!(
                !err.is_gone::<Widget>("test") && !err.is_conflict(),
                "{err:?}"
            );
            assert_eq!(
                error_policy(&object(), &err, &ctx),
                Action::requeue(backoff(1))
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn api_errors_back_off_per_object_and_a_success_resets_it() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut retries = Vec::new();
            for reply in [
                Reply::Refuse(500, "InternalError"),
                Reply::Broken,
                Reply::Refuse(503, "ServiceUnavailable"),
            ] {
                let (result, _) = reconcile_with(&ctx, &mut handle, object(), vec![reply]).await;
                let err = result.expect_err("the status patch failed");
                assert!(
                    !err.is_conflict() && !err.is_gone::<Widget>("test"),
                    "{err:?}"
                );
                retries.push(error_policy(&object(), &err, &ctx));
            }
            assert_eq!(
                retries,
                [5, 10, 20].map(|secs| Action::requeue(Duration::from_secs(secs)))
            );
            // Another object's failures are its own.
            let mut other = object();
            other.metadata.name = Some("other".into());
            assert_eq!(
                error_policy(&other, &transport_error(), &ctx),
                Action::requeue(backoff(1))
            );
            // A success resets the count.
            let reply = serde_json::to_value(object()).unwrap();
            let replies = vec![Reply::Ok(reply), Reply::Echo];
            let (result, _) = reconcile_with(&ctx, &mut handle, object(), replies).await;
            assert_eq!(result.expect("reconcile failed"), Action::requeue(RESYNC));
            assert_eq!(
                error_policy(&object(), &transport_error(), &ctx),
                Action::requeue(backoff(1))
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn deletion_runs_the_cleanup_once_and_removes_the_finalizer() {
            let (ctx, mut handle) = mocked("widget-controller");
            let mut finalized = deleted_object();
            finalized.metadata.finalizers = None;
            let reply = serde_json::to_value(&finalized).unwrap();
            let replies = vec![Reply::Echo, Reply::Ok(reply)];
            let (result, seen) = reconcile_with(&ctx, &mut handle, deleted_object(), replies).await;
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

            // The same deletion again, from a cache that still shows the finalizer: no
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
            let (ctx, mut handle) = mocked("widget-controller");
            let replies = vec![Reply::Echo, Reply::Refuse(404, "NotFound")];
            let (result, seen) = reconcile_with(&ctx, &mut handle, deleted_object(), replies).await;
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

        #[tokio::test]
        async fn without_a_finalizer_a_success_resets_the_backoff_and_sends_nothing() {
            let (ctx, handle) = mocked("pod-controller");
            let failure = transport_error();
            assert_eq!(
                error_policy(&pod("test"), &failure, &ctx),
                Action::requeue(backoff(1))
            );
            assert_eq!(
                error_policy(&pod("test"), &failure, &ctx),
                Action::requeue(backoff(2))
            );
            let action = reconcile(Arc::new(pod("test")), &PodReconciler(None), &ctx).await;
            assert_eq!(action.expect("reconcile failed"), Action::await_change());
            assert_eq!(
                error_policy(&pod("test"), &failure, &ctx),
                Action::requeue(backoff(1))
            );
            assert_no_more_requests(ctx, handle).await;
        }

        #[tokio::test]
        async fn without_a_finalizer_only_a_404_for_the_object_itself_ends_quietly() {
            let (ctx, _handle) = mocked("pod-controller");
            error_policy(&pod("test"), &transport_error(), &ctx);
            let gone = PodReconciler(Some((404, "test")));
            let action = reconcile(Arc::new(pod("test")), &gone, &ctx).await;
            assert_eq!(
                action.expect("a deleted Pod is no error"),
                Action::await_change()
            );
            // The end of the object cleared its failures.
            assert_eq!(
                error_policy(&pod("test"), &transport_error(), &ctx),
                Action::requeue(backoff(1))
            );
            let other = PodReconciler(Some((404, "other")));
            let err = reconcile(Arc::new(pod("test")), &other, &ctx)
                .await
                .unwrap_err();
            assert!(err.is_gone::<Pod>("other"), "{err:?}");
            let conflict = PodReconciler(Some((409, "test")));
            let err = reconcile(Arc::new(pod("test")), &conflict, &ctx)
                .await
                .unwrap_err();
            assert_eq!(
                error_policy(&pod("test"), &err, &ctx),
                Action::requeue(CONFLICT_RETRY)
            );
        }
    }
}
