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

//! The `AIJob` controller: watches `AIJob` objects (`ai.example.com/v1`) and
//! reconciles each one toward its `spec`, reporting the outcome in `status` and as events.
//!
//! [`run`] is started by the manager (`src/main.rs`). `apply` is the loop of the seed's
//! tutorial: observe the worker Pods labelled for the job, compare their number with
//! `spec.replicas`, create the missing ones or delete the surplus, and write `phase` and
//! `readyReplicas` back into `status`; then look again in 30 s.
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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};

use crate::api::v1::{AIJob, AIJobSpec};
use crate::manager::Manager;

/// The controller's name: the field manager of its status patches, the reporter of its events
/// and the `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "aijob-controller";

/// The finalizer this controller keeps on every `AIJob`, so that `cleanup` runs before the
/// object is gone.
pub const FINALIZER: &str = "ai.example.com/finalizer";

/// How long to wait before reconciling an object again, even without a change (the seed's
/// `RequeueAfter: 30 * time.Second`).
pub const REQUEUE: Duration = Duration::from_secs(30);

/// How soon to retry after the API server refused a write with 409 Conflict: the object
/// changed meanwhile, and the retry works on the newer version the watch delivers.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// How long to remember that an object's cleanup ran: far longer than a stale copy of the
/// deleted object can linger in the watch cache.
const FINALIZED_MEMORY: Duration = Duration::from_secs(10 * 60);

/// The label on every worker Pod of a job; its value is the `AIJob`'s name. `apply` lists the
/// Pods with this label (the seed's `client.MatchingLabels{"job": job.Name}`).
pub const JOB_LABEL: &str = "ai.example.com/job";

/// The extended resource of NVIDIA GPUs, as the NVIDIA device plugin advertises it.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// The container image of the worker Pods. The seed leaves the image open; change it to your
/// training image. The model to train reaches the container as `MODEL_NAME`.
pub const WORKER_IMAGE: &str = "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime";

/// The phases of an `AIJob`, written to `status.phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Every wanted worker exists, but not all of them are ready yet.
    Pending,
    /// Worker Pods were created in this reconciliation.
    ScalingUp,
    /// Surplus worker Pods were deleted in this reconciliation.
    ScalingDown,
    /// As many workers as wanted exist and all of them are ready.
    Running,
}

impl Phase {
    /// The value written to `status.phase`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::ScalingUp => "ScalingUp",
            Phase::ScalingDown => "ScalingDown",
            Phase::Running => "Running",
        }
    }
}

/// What one reconciliation does to the worker Pods, computed by [`plan`] from what exists.
#[derive(Debug, PartialEq)]
pub struct Plan {
    /// Pods to create (the missing workers).
    pub create: Vec<Pod>,
    /// Names of the Pods to delete (the surplus workers; not-ready ones first).
    pub delete: Vec<String>,
    /// How many of the Pods that stay are ready.
    pub ready: i32,
    /// The phase this leaves the job in.
    pub phase: Phase,
}

/// Why a reconciliation failed; [`error_policy`] decides when to retry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed, or the `apply` / `cleanup` step it wraps did.
    #[error(transparent)]
    Finalizer(Box<finalizer::Error<Error>>),
    /// The object has no namespace, though the kind is namespaced.
    #[error("the object has no namespace")]
    MissingNamespace,
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
            Error::MissingNamespace => return None,
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

    /// Whether the API server answered 404 Not Found for the `AIJob` named `name`: the
    /// object is gone. A 404 for anything else (another object, an API that is not installed)
    /// is not.
    pub fn is_gone(&self, name: &str) -> bool {
        self.api_status().is_some_and(|status| {
            status.is_not_found()
                && status.details.as_ref().is_some_and(|details| {
                    details.name == name
                        && details.kind == AIJob::plural(&())
                        && details.group == AIJob::group(&())
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

// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;create;delete

/// Reconciles one `AIJob` object: makes sure it carries [`FINALIZER`], then runs
/// `apply` while the object lives and `cleanup` once it is being deleted (the finalizer is
/// removed after `cleanup` succeeds).
///
/// Returns when to look at the object again; on error, [`error_policy`] decides. An object
/// that is gone (a 404 for it, see [`Error::is_gone`]) ends the reconciliation with `Ok`, and
/// a stale copy of a deleted object this controller already cleaned up is left alone.
pub async fn reconcile(obj: Arc<AIJob>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
    let api: Api<AIJob> = Api::namespaced(ctx.client.clone(), &namespace);
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

/// Brings the worker Pods in line with `obj.spec` and records the outcome in `status` with a
/// server-side apply patch on the status subresource: `phase`, `readyReplicas`,
/// `observedGeneration` and a `Ready` condition (`True` when the phase is `Running`).
///
/// Lists the Pods labelled [`JOB_LABEL`]`=<name>`, creates the missing workers and deletes the
/// surplus ones (see [`plan`]), publishes an event for each scaling step and when the job
/// becomes `Running`, and asks to be called again after [`REQUEUE`].
async fn apply(obj: Arc<AIJob>, api: &Api<AIJob>, ctx: &Context) -> Result<Action, Error> {
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
    let name = obj.name_any();
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
    let selector = format!("{JOB_LABEL}={name}");
    let existing = pods.list(&ListParams::default().labels(&selector)).await?;
    let plan = plan(&obj, existing.items);

    let create_params = PostParams {
        field_manager: Some(CONTROLLER_NAME.into()),
        ..PostParams::default()
    };
    for pod in &plan.create {
        pods.create(&create_params, pod).await?;
    }
    for pod_name in &plan.delete {
        pods.delete(pod_name, &DeleteParams::default()).await?;
    }

    let generation = obj.metadata.generation;
    let desired = desired_replicas(&obj.spec);
    let previous_status = obj.status.as_ref();
    let previous =
        previous_status.and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
    let running = plan.phase == Phase::Running;
    let ready = ready_condition(
        previous,
        generation,
        if running { "True" } else { "False" },
        plan.phase.as_str(),
        &format!("{} of {desired} workers ready", plan.ready),
    );
    let patch = serde_json::json!({
        "apiVersion": AIJob::api_version(&()),
        "kind": AIJob::kind(&()),
        "status": {
            "phase": plan.phase.as_str(),
            "readyReplicas": plan.ready,
            "conditions": [ready],
            "observedGeneration": generation,
        },
    });
    api.patch_status(
        &name,
        &PatchParams::apply(CONTROLLER_NAME).force(),
        &Patch::Apply(&patch),
    )
    .await?;

    if !plan.create.is_empty() {
        let note = format!("created {} worker Pods for {name}", plan.create.len());
        publish(
            ctx,
            &obj,
            EventType::Normal,
            "ScalingUp",
            "CreatePods",
            note,
        )
        .await;
    }
    if !plan.delete.is_empty() {
        let note = format!(
            "deleted {} surplus worker Pods of {name}",
            plan.delete.len()
        );
        publish(
            ctx,
            &obj,
            EventType::Normal,
            "ScalingDown",
            "DeletePods",
            note,
        )
        .await;
    }
    let was_running = previous_status.and_then(|s| s.phase.as_deref()) == Some("Running");
    if running && !was_running {
        let note = format!("all {desired} workers of {name} are ready");
        publish(ctx, &obj, EventType::Normal, "Running", "Reconcile", note).await;
    }
    Ok(Action::requeue(REQUEUE))
}

/// The number of workers `spec` asks for: `replicas`, 1 when absent (what the defaulting
/// webhook fills in), never below 0.
pub fn desired_replicas(spec: &AIJobSpec) -> i32 {
    spec.replicas.unwrap_or(1).max(0)
}

/// Compares the job's worker Pods (`pods`, as listed by label) with `spec.replicas` and decides
/// what to do. Pods that are being deleted do not count. Missing workers get the lowest free
/// names `<job>-worker-<n>`; of surplus workers, the not-ready ones go first, then the highest
/// numbers. The phase is `ScalingUp` when Pods are created, `ScalingDown` when Pods are deleted,
/// else `Running` when every worker is ready and `Pending` when not.
pub fn plan(job: &AIJob, pods: Vec<Pod>) -> Plan {
    let desired = desired_replicas(&job.spec);
    let mut active: Vec<Pod> = pods
        .into_iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .collect();
    let count = i32::try_from(active.len()).unwrap_or(i32::MAX);
    let mut create = Vec::new();
    let mut delete = Vec::new();
    if count < desired {
        let taken: BTreeSet<u32> = active.iter().filter_map(worker_index).collect();
        let free = (0u32..).filter(|n| !taken.contains(n));
        for index in free.take((desired - count) as usize) {
            create.push(worker_pod(job, index));
        }
    } else if count > desired {
        // Not-ready Pods first, then by descending worker number (unnumbered ones first).
        active.sort_by_key(|pod| {
            (
                is_ready(pod),
                std::cmp::Reverse(worker_index(pod).unwrap_or(u32::MAX)),
            )
        });
        let surplus = (count - desired) as usize;
        delete = active.drain(..surplus).map(|pod| pod.name_any()).collect();
    }
    let ready =
        i32::try_from(active.iter().filter(|pod| is_ready(pod)).count()).unwrap_or(i32::MAX);
    let phase = if !create.is_empty() {
        Phase::ScalingUp
    } else if !delete.is_empty() {
        Phase::ScalingDown
    } else if ready == desired {
        Phase::Running
    } else {
        Phase::Pending
    };
    Plan {
        create,
        delete,
        ready,
        phase,
    }
}

/// Worker Pod number `index` of `job`: named `<job>-worker-<index>`, labelled
/// [`JOB_LABEL`]`=<job>`, owned by the job (so Kubernetes deletes it with the job), one
/// container running [`WORKER_IMAGE`] with `MODEL_NAME` set and `gpuCount` GPUs as its
/// [`GPU_RESOURCE`] limit (none when `gpuCount` is 0).
pub fn worker_pod(job: &AIJob, index: u32) -> Pod {
    let name = job.name_any();
    let labels = BTreeMap::from([
        (JOB_LABEL.to_string(), name.clone()),
        (
            "app.kubernetes.io/name".to_string(),
            "ai-worker".to_string(),
        ),
        (
            "app.kubernetes.io/managed-by".to_string(),
            CONTROLLER_NAME.to_string(),
        ),
    ]);
    let limits = (job.spec.gpu_count > 0).then(|| {
        BTreeMap::from([(
            GPU_RESOURCE.to_string(),
            Quantity(job.spec.gpu_count.to_string()),
        )])
    });
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{name}-worker-{index}")),
            namespace: job.namespace(),
            labels: Some(labels),
            owner_references: job.controller_owner_ref(&()).map(|owner| vec![owner]),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            restart_policy: Some("OnFailure".into()),
            containers: vec![Container {
                name: "worker".into(),
                image: Some(WORKER_IMAGE.into()),
                env: Some(vec![EnvVar {
                    name: "MODEL_NAME".into(),
                    value: Some(job.spec.model_name.clone()),
                    ..EnvVar::default()
                }]),
                resources: Some(ResourceRequirements {
                    limits,
                    ..ResourceRequirements::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// The `<n>` of a Pod named `<job>-worker-<n>`.
fn worker_index(pod: &Pod) -> Option<u32> {
    pod.metadata
        .name
        .as_deref()?
        .rsplit_once("-worker-")?
        .1
        .parse()
        .ok()
}

/// Whether the Pod reports the condition `Ready=True`.
fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

/// Releases what the object holds outside the cluster before it is deleted. Objects it owns
/// through `ownerReferences` are garbage-collected by Kubernetes and need nothing here.
async fn cleanup(obj: Arc<AIJob>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): delete external resources created for this object. Return an error to keep
    // the finalizer (and the object) until that succeeds.
    publish(
        ctx,
        &obj,
        EventType::Normal,
        "Deleting",
        "Cleanup",
        format!("cleaning up AIJob {}", obj.name_any()),
    )
    .await;
    Ok(Action::await_change())
}

/// Decides when to retry after [`reconcile`] failed: after [`CONFLICT_RETRY`] for a conflict
/// (which does not count as a failure), else after [`backoff`] over the object's consecutive
/// failures, which the next success resets.
pub fn error_policy(obj: Arc<AIJob>, err: &Error, ctx: Arc<Context>) -> Action {
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

/// Runs the controller until `mgr.shutdown` is cancelled: watches `AIJob` objects (in
/// `mgr.namespace` when set, else in every namespace) and the worker Pods they own, reconciles
/// each job, and records every reconciliation in the manager's metrics.
///
/// Errors when `AIJob` objects cannot be listed, usually because the CRD is not installed
/// (`make install`) or RBAC does not allow it.
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
    let api: Api<AIJob> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => Api::all(mgr.client.clone()),
    };
    if let Err(err) = api.list(&ListParams::default().limit(1)).await {
        anyhow::bail!(
            "{CONTROLLER_NAME}: cannot list aijobs.ai.example.com ({err}); is the CRD installed (`make install`)?"
        );
    }
    let ctx = Arc::new(Context::new(mgr.client.clone()));
    let metrics = mgr.metrics.clone();
    let pods: Api<Pod> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => Api::all(mgr.client.clone()),
    };
    Controller::new(api, watcher::Config::default())
        // A worker Pod that becomes ready, fails or disappears wakes its AIJob up at once.
        .owns(pods, watcher::Config::default().labels(JOB_LABEL))
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
    obj: &AIJob,
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

fn object_key(obj: &AIJob) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::v1::AIJobStatus;
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

    /// The test object: `test` in `default`, at generation 3, already carrying the finalizer;
    /// it trains `resnet50` on `replicas` workers with 2 GPUs each.
    fn job(replicas: Option<i32>) -> AIJob {
        let spec = AIJobSpec {
            model_name: "resnet50".into(),
            gpu_count: 2,
            replicas,
        };
        let mut obj = AIJob::new("test", spec);
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("6f1c2a40-0000-4000-8000-00000000a1b0".into());
        obj.metadata.generation = Some(3);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    /// The test object with 3 replicas.
    fn object() -> AIJob {
        job(Some(3))
    }

    /// Worker `index` of the test job as the API server lists it, ready or not.
    fn worker(index: u32, ready: bool) -> Value {
        let mut pod = serde_json::to_value(worker_pod(&object(), index)).unwrap();
        pod["status"] = json!({
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
        });
        pod
    }

    /// A PodList holding `pods`.
    fn pod_list(pods: Vec<Value>) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {"resourceVersion": "100"},
            "items": pods,
        })
    }

    /// The Pods API path of namespace `default`, plus `suffix`.
    fn pods_path(suffix: &str) -> String {
        format!("/api/v1/namespaces/default/pods{suffix}")
    }

    /// Runs `reconcile` on `obj` against a mocked API server that answers the Pod list with
    /// `pods` and every later request with `replies` (in order; `Value::Null` echoes the
    /// request body). Returns the action and every request after the list; fails if the
    /// reconciler sent more requests than there are replies.
    async fn reconcile_with(
        obj: AIJob,
        pods: Vec<Value>,
        replies: Vec<Value>,
    ) -> (Action, Vec<Seen>) {
        let (ctx, mut handle) = mocked();
        let server = tokio::spawn(async move {
            let list = serve(&mut handle, pod_list(pods)).await;
            assert_eq!(list.method, "GET");
            assert_eq!(list.path, pods_path(""));
            assert!(
                list.query
                    .contains("labelSelector=ai.example.com%2Fjob%3Dtest"),
                "{}",
                list.query
            );
            let mut seen = Vec::new();
            for reply in replies {
                seen.push(serve(&mut handle, reply).await);
            }
            let extra = timeout(WAIT, handle.next_request()).await;
            assert!(
                matches!(extra, Ok(None)),
                "the reconciler sent an unexpected request"
            );
            seen
        });
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        (action, server.await.unwrap())
    }

    /// Checks the status patch: SSA on the status subresource with `phase`, `readyReplicas`,
    /// `observedGeneration` 3 and a `Ready` condition of `ready` with the phase as its reason.
    fn assert_status(patch: &Seen, phase: &str, ready_replicas: i32, ready: &str) {
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path("/status"));
        assert!(
            patch.query.contains("fieldManager=aijob-controller")
                && patch.query.contains("force=true"),
            "{}",
            patch.query
        );
        assert_eq!(patch.body["apiVersion"], "ai.example.com/v1");
        assert_eq!(patch.body["kind"], "AIJob");
        let status = &patch.body["status"];
        assert_eq!(status["phase"], phase);
        assert_eq!(status["readyReplicas"], ready_replicas);
        assert_eq!(status["observedGeneration"], 3);
        let condition = &status["conditions"][0];
        assert_eq!(condition["type"], "Ready");
        assert_eq!(condition["status"], ready);
        assert_eq!(condition["reason"], phase);
        assert!(condition["lastTransitionTime"].is_string(), "{condition}");
    }

    #[tokio::test]
    async fn scale_up_creates_the_missing_workers_with_gpus_and_owner() {
        let obj = object();
        let reply = serde_json::to_value(&obj).unwrap();
        let (action, seen) = reconcile_with(
            obj,
            vec![worker(0, true)],
            vec![Value::Null, Value::Null, reply, Value::Null],
        )
        .await;
        assert_eq!(action, Action::requeue(Duration::from_secs(30)));
        let [first, second, status, event] = &seen[..] else {
            panic!("expected 4 requests, got {}", seen.len());
        };
        let mut names = Vec::new();
        for created in [first, second] {
            assert_eq!(created.method, "POST");
            assert_eq!(created.path, pods_path(""));
            assert!(created.query.contains("fieldManager=aijob-controller"));
            let pod = &created.body;
            names.push(pod["metadata"]["name"].as_str().unwrap().to_string());
            assert_eq!(pod["metadata"]["namespace"], "default");
            assert_eq!(pod["metadata"]["labels"]["ai.example.com/job"], "test");
            let owner = &pod["metadata"]["ownerReferences"][0];
            assert_eq!(owner["apiVersion"], "ai.example.com/v1");
            assert_eq!(owner["kind"], "AIJob");
            assert_eq!(owner["name"], "test");
            assert_eq!(owner["uid"], "6f1c2a40-0000-4000-8000-00000000a1b0");
            assert_eq!(owner["controller"], true);
            let container = &pod["spec"]["containers"][0];
            assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], "2");
            assert_eq!(
                container["env"],
                json!([{"name": "MODEL_NAME", "value": "resnet50"}])
            );
        }
        assert_eq!(names, ["test-worker-1", "test-worker-2"]);
        assert_status(status, "ScalingUp", 1, "False");
        assert_eq!(event.method, "POST");
        assert_eq!(
            event.path,
            "/apis/events.k8s.io/v1/namespaces/default/events"
        );
        assert_eq!(event.body["reason"], "ScalingUp");
        assert_eq!(event.body["regarding"]["kind"], "AIJob");
        assert_eq!(event.body["regarding"]["name"], "test");
    }

    #[tokio::test]
    async fn scale_down_deletes_the_surplus_workers_not_ready_first() {
        let obj = job(Some(1));
        let reply = serde_json::to_value(&obj).unwrap();
        let (action, seen) = reconcile_with(
            obj,
            vec![worker(0, true), worker(1, true), worker(2, false)],
            vec![worker(2, false), worker(1, true), reply, Value::Null],
        )
        .await;
        assert_eq!(action, Action::requeue(REQUEUE));
        let [first, second, status, event] = &seen[..] else {
            panic!("expected 4 requests, got {}", seen.len());
        };
        assert_eq!(first.method, "DELETE");
        assert_eq!(first.path, pods_path("/test-worker-2"));
        assert_eq!(second.method, "DELETE");
        assert_eq!(second.path, pods_path("/test-worker-1"));
        assert_status(status, "ScalingDown", 1, "False");
        assert_eq!(event.body["reason"], "ScalingDown");
    }

    #[tokio::test]
    async fn a_job_with_all_workers_ready_is_running() {
        let obj = job(Some(2));
        let reply = serde_json::to_value(&obj).unwrap();
        let (action, seen) = reconcile_with(
            obj,
            vec![worker(0, true), worker(1, true)],
            vec![reply, Value::Null],
        )
        .await;
        assert_eq!(action, Action::requeue(REQUEUE));
        let [status, event] = &seen[..] else {
            panic!("expected 2 requests, got {}", seen.len());
        };
        assert_status(status, "Running", 2, "True");
        assert_eq!(event.body["reason"], "Running");
    }

    #[tokio::test]
    async fn a_job_already_running_publishes_no_event() {
        let mut obj = job(Some(1));
        obj.status = Some(AIJobStatus {
            phase: Some("Running".into()),
            ready_replicas: 1,
            ..AIJobStatus::default()
        });
        let reply = serde_json::to_value(&obj).unwrap();
        let (_, seen) = reconcile_with(obj, vec![worker(0, true)], vec![reply]).await;
        assert_status(&seen[0], "Running", 1, "True");
    }

    #[tokio::test]
    async fn workers_that_are_not_ready_leave_the_job_pending() {
        let obj = job(Some(2));
        let reply = serde_json::to_value(&obj).unwrap();
        let (_, seen) =
            reconcile_with(obj, vec![worker(0, true), worker(1, false)], vec![reply]).await;
        assert_status(&seen[0], "Pending", 1, "False");
    }

    #[test]
    fn plan_ignores_terminating_pods_and_fills_the_lowest_free_names() {
        let mut terminating: Pod = serde_json::from_value(worker(0, true)).unwrap();
        terminating.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let kept: Pod = serde_json::from_value(worker(3, true)).unwrap();
        let plan = plan(&job(Some(3)), vec![terminating, kept]);
        let names: Vec<String> = plan.create.iter().map(|p| p.name_any()).collect();
        assert_eq!(names, ["test-worker-0", "test-worker-1"]);
        assert!(plan.delete.is_empty());
        assert_eq!(plan.ready, 1);
        assert_eq!(plan.phase, Phase::ScalingUp);
    }

    #[test]
    fn replicas_default_to_one_and_no_gpus_means_no_limit() {
        assert_eq!(desired_replicas(&job(None).spec), 1);
        assert_eq!(desired_replicas(&job(Some(-4)).spec), 0);
        let mut obj = job(None);
        obj.spec.gpu_count = 0;
        let pod = worker_pod(&obj, 0);
        let resources = pod.spec.unwrap().containers[0].resources.clone().unwrap();
        assert_eq!(resources.limits, None);
    }

    /// The API path of the test object, plus `suffix`.
    fn object_path(suffix: &str) -> String {
        let (api_version, plural) = (AIJob::api_version(&()), AIJob::plural(&()));
        format!("/apis/{api_version}/namespaces/default/{plural}/test{suffix}")
    }

    /// A request the mocked API server received.
    #[derive(Debug)]
    struct Seen {
        method: String,
        path: String,
        query: String,
        body: Value,
    }

    /// Takes the next request and answers it with 200 and `reply`, or with the request's own
    /// body when `reply` is `Value::Null` (what the API server does for a create).
    async fn serve(handle: &mut Handle, reply: Value) -> Seen {
        serve_with(handle, 200, reply).await
    }

    /// Takes the next request and answers it with `code` and `reply` (`Value::Null` echoes the
    /// request's body).
    async fn serve_with(handle: &mut Handle, code: u16, reply: Value) -> Seen {
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
        let answer = if reply.is_null() { body.clone() } else { reply };
        respond.send_response(
            Response::builder()
                .status(code)
                .body(Body::from(serde_json::to_vec(&answer).unwrap()))
                .unwrap(),
        );
        Seen {
            method,
            path,
            query,
            body,
        }
    }

    #[tokio::test]
    async fn reconcile_adds_the_finalizer_first() {
        let (ctx, mut handle) = mocked();
        let mut obj = object();
        obj.metadata.finalizers = None;
        let reply = serde_json::to_value(&obj).unwrap();
        let server = tokio::spawn(async move { serve(&mut handle, reply).await });
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        let patch = server.await.unwrap();

        assert_eq!(action, Action::await_change());
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
        );
    }

    /// The API server's error `Status` about the `AIJob` named `test`.
    fn refusal(code: u16, reason: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": format!("aijobs.ai.example.com \"test\": {reason}"),
            "reason": reason,
            "details": {"name": "test", "group": "ai.example.com", "kind": "aijobs"},
            "code": code,
        })
    }

    /// Runs `reconcile` on `obj` with `ctx` while the mocked API server answers its requests
    /// with `replies` (status code and body, in order; `Value::Null` echoes the request body).
    /// Returns the outcome and the requests; fails when `reconcile` sends fewer requests, or
    /// waits for more.
    async fn exchange(
        ctx: &Arc<Context>,
        handle: &mut Handle,
        obj: AIJob,
        replies: Vec<(u16, Value)>,
    ) -> (Result<Action, Error>, Vec<Seen>) {
        let server = async {
            let mut seen = Vec::new();
            for (code, reply) in replies {
                seen.push(serve_with(handle, code, reply).await);
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
    async fn a_conflict_on_the_status_patch_is_retried_soon_and_the_retry_succeeds() {
        let (ctx, mut handle) = mocked();
        let obj = job(Some(1));
        let list = (200, pod_list(vec![worker(0, true)]));
        let (result, seen) = exchange(
            &ctx,
            &mut handle,
            obj.clone(),
            vec![list.clone(), (409, refusal(409, "Conflict"))],
        )
        .await;
        assert_eq!(seen[1].path, object_path("/status"));
        let err = result.expect_err("a conflict must fail the reconciliation");
        assert!(err.is_conflict() && !err.is_gone("test"), "{err:?}");
        assert_eq!(
            error_policy(Arc::new(obj.clone()), &err, ctx.clone()),
            Action::requeue(CONFLICT_RETRY)
        );

        // The retry: the status patch goes through, and the job is running.
        let reply = (200, serde_json::to_value(&obj).unwrap());
        let (result, seen) = exchange(
            &ctx,
            &mut handle,
            obj.clone(),
            vec![list, reply, (200, Value::Null)],
        )
        .await;
        assert_eq!(result.expect("the retry failed"), Action::requeue(REQUEUE));
        assert_status(&seen[1], "Running", 1, "True");
        assert_eq!(seen[2].body["reason"], "Running");

        // The conflict did not count as a failure: the next one waits the first step.
        assert_eq!(
            error_policy(Arc::new(obj), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn a_job_deleted_before_its_status_patch_ends_the_reconcile_quietly() {
        let (ctx, mut handle) = mocked();
        let obj = job(Some(1));
        // An earlier failure, which the end of the job clears.
        error_policy(Arc::new(obj.clone()), &transport_error(), ctx.clone());
        let (result, seen) = exchange(
            &ctx,
            &mut handle,
            obj.clone(),
            vec![
                (200, pod_list(vec![worker(0, true)])),
                (404, refusal(404, "NotFound")),
            ],
        )
        .await;
        assert_eq!(seen[1].path, object_path("/status"));
        assert_eq!(
            result.expect("a deleted job is no error"),
            Action::await_change()
        );
        assert_eq!(
            error_policy(Arc::new(obj), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        // No "Running" event about the job that is gone.
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn api_errors_back_off_per_job_and_a_success_resets_it() {
        let (ctx, mut handle) = mocked();
        let obj = job(Some(1));
        let mut retries = Vec::new();
        for (code, reason) in [
            (500, "InternalError"),
            (503, "ServiceUnavailable"),
            (500, "InternalError"),
        ] {
            let (result, seen) = exchange(
                &ctx,
                &mut handle,
                obj.clone(),
                vec![(code, refusal(code, reason))],
            )
            .await;
            assert_eq!(seen[0].path, pods_path(""));
            let err = result.expect_err("the Pod list failed");
            assert!(!err.is_conflict() && !err.is_gone("test"), "{err:?}");
            retries.push(error_policy(Arc::new(obj.clone()), &err, ctx.clone()));
        }
        assert_eq!(
            retries,
            [5, 10, 20].map(|secs| Action::requeue(Duration::from_secs(secs)))
        );

        // Another job's failures are its own.
        let mut other = job(Some(1));
        other.metadata.name = Some("other".into());
        assert_eq!(
            error_policy(Arc::new(other), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );

        // A success resets the count.
        let mut running = obj.clone();
        running.status = Some(AIJobStatus {
            phase: Some("Running".into()),
            ready_replicas: 1,
            ..AIJobStatus::default()
        });
        let reply = serde_json::to_value(&running).unwrap();
        let (result, _) = exchange(
            &ctx,
            &mut handle,
            running,
            vec![(200, pod_list(vec![worker(0, true)])), (200, reply)],
        )
        .await;
        assert_eq!(result.expect("reconcile failed"), Action::requeue(REQUEUE));
        assert_eq!(
            error_policy(Arc::new(obj), &transport_error(), ctx.clone()),
            Action::requeue(backoff(1))
        );
        assert_no_more_requests(ctx, handle).await;
    }

    #[tokio::test]
    async fn deletion_runs_the_cleanup_once_and_removes_the_finalizer() {
        let (ctx, mut handle) = mocked();
        let mut deleted = object();
        deleted.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let mut finalized = deleted.clone();
        finalized.metadata.finalizers = None;
        let reply = serde_json::to_value(&finalized).unwrap();
        let (result, seen) = exchange(
            &ctx,
            &mut handle,
            deleted.clone(),
            vec![(200, Value::Null), (200, reply)],
        )
        .await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        let [event, patch] = &seen[..] else {
            panic!("expected 2 requests, got {}", seen.len());
        };
        assert_eq!(event.body["reason"], "Deleting");
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "remove", "path": "/metadata/finalizers/0"})
        );

        // The same deletion delivered again, from a cache that still shows the finalizer: no
        // second cleanup, no request.
        let (result, seen) = exchange(&ctx, &mut handle, deleted, vec![]).await;
        assert_eq!(result.expect("reconcile failed"), Action::await_change());
        assert!(seen.is_empty());
        // The job as the API server now has it, without the finalizer: nothing to do.
        let (result, seen) = exchange(&ctx, &mut handle, finalized, vec![]).await;
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
