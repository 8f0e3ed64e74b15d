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

//! The `AIJob` controller: reconciles each `AIJob` (`ai.example.com/v1`) toward its `spec` and
//! reports the outcome in its `status`.
//!
//! `apply` is the loop of the Go tutorial this example is ported from: observe the worker Pods
//! labelled for the job, compare their number with `spec.replicas`, create the missing ones or
//! delete the surplus ([`plan`]), write `phase`, `readyReplicas`, the `Ready` condition and
//! `observedGeneration` back into `status`, and look again in 30 s. The machinery around it is the
//! runtime's ([`rsbuilder_runtime::controller`]): the finalizer, retries after 409 Conflict, the
//! quiet end when the job was deleted meanwhile, backoff on other errors, events and metrics.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::{Resource, ResourceExt};
use rsbuilder_runtime::Manager;
use rsbuilder_runtime::controller::{Context, Reconciler, ready_condition};

use crate::api::v1::{AIJob, AIJobSpec};

// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;create;delete

/// How long to wait before reconciling a job again, even without a change (the Go
/// original's `RequeueAfter: 30 * time.Second`).
pub const REQUEUE: Duration = Duration::from_secs(30);

/// The controller's name ([`Reconciler::NAME`]): field manager, event reporter, metrics label.
pub const CONTROLLER_NAME: &str = "aijob-controller";

/// The label on every worker Pod of a job; its value is the `AIJob`'s name. `apply` lists the
/// Pods with this label (the Go original's
/// `client.MatchingLabels{"job": job.Name}`).
pub const JOB_LABEL: &str = "ai.example.com/job";

/// The extended resource of NVIDIA GPUs, as the NVIDIA device plugin advertises it.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// The container image of the worker Pods. The Go original leaves the image open; change it to your
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

/// Reconciles `AIJob` objects.
pub struct AIJobReconciler;

impl Reconciler for AIJobReconciler {
    type Kind = AIJob;
    const NAME: &'static str = CONTROLLER_NAME;
    const FINALIZER: Option<&'static str> = Some("ai.example.com/finalizer");

    /// Lists the Pods labelled [`JOB_LABEL`]`=<name>`, creates the missing workers and deletes
    /// the surplus ones (see [`plan`]), applies the status (server-side apply on the status
    /// subresource), publishes an event for each scaling step and when the job becomes
    /// `Running`, and asks to be called again after [`REQUEUE`].
    async fn apply(&self, obj: Arc<AIJob>, ctx: &Context) -> anyhow::Result<Action> {
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
        let selector = format!("{JOB_LABEL}={name}");
        let existing = pods.list(&ListParams::default().labels(&selector)).await?;
        let plan = plan(&obj, existing.items);

        let create_params = PostParams {
            field_manager: Some(Self::NAME.into()),
            ..PostParams::default()
        };
        for pod in &plan.create {
            pods.create(&create_params, pod).await?;
        }
        for pod_name in &plan.delete {
            pods.delete(pod_name, &DeleteParams::default()).await?;
        }

        // One status patch with every field this controller owns: a second apply by the same
        // field manager would remove what the first one set.
        let desired = desired_replicas(&obj.spec);
        let previous_status = obj.status.as_ref();
        let previous =
            previous_status.and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
        let running = plan.phase == Phase::Running;
        let ready = ready_condition(
            previous,
            obj.metadata.generation,
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
                "observedGeneration": obj.metadata.generation,
            },
        });
        let jobs: Api<AIJob> = Api::namespaced(ctx.client.clone(), &namespace);
        let params = PatchParams::apply(Self::NAME).force();
        jobs.patch_status(&name, &params, &Patch::Apply(&patch))
            .await?;

        let obj = obj.as_ref();
        if !plan.create.is_empty() {
            let note = format!("created {} worker Pods for {name}", plan.create.len());
            ctx.publish(obj, EventType::Normal, "ScalingUp", "CreatePods", note)
                .await;
        }
        if !plan.delete.is_empty() {
            let note = format!(
                "deleted {} surplus worker Pods of {name}",
                plan.delete.len()
            );
            ctx.publish(obj, EventType::Normal, "ScalingDown", "DeletePods", note)
                .await;
        }
        let was_running = previous_status.and_then(|s| s.phase.as_deref()) == Some("Running");
        if running && !was_running {
            let note = format!("all {desired} workers of {name} are ready");
            ctx.publish(obj, EventType::Normal, "Running", "Reconcile", note)
                .await;
        }
        Ok(Action::requeue(REQUEUE))
    }

    /// Reconciles a job again when one of its worker Pods changes (Kubebuilder's `Owns()`).
    fn watches(&self, controller: Controller<AIJob>, mgr: &Manager) -> Controller<AIJob> {
        controller.owns(mgr.api::<Pod>(), Default::default())
    }
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

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::{Value, json};

    use super::*;

    /// `test` in `default`, training `resnet50` on `replicas` workers with 2 GPUs each.
    fn job(replicas: Option<i32>) -> AIJob {
        let spec = AIJobSpec {
            model_name: "resnet50".into(),
            gpu_count: 2,
            replicas,
        };
        let mut obj = AIJob::new("test", spec);
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("6f1c2a40-0000-4000-8000-00000000a1b0".into());
        obj
    }

    /// Worker `index` of a 3-worker test job as the API server lists it, ready or not.
    fn worker(index: u32, ready: bool) -> Pod {
        let mut pod = serde_json::to_value(worker_pod(&job(Some(3)), index)).unwrap();
        pod["status"] = json!({
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
        });
        serde_json::from_value(pod).unwrap()
    }

    #[test]
    fn a_worker_pod_is_owned_labelled_and_asks_for_the_gpus() {
        let pod: Value = serde_json::to_value(worker_pod(&job(Some(3)), 1)).unwrap();
        assert_eq!(pod["metadata"]["name"], "test-worker-1");
        assert_eq!(pod["metadata"]["namespace"], "default");
        assert_eq!(pod["metadata"]["labels"]["ai.example.com/job"], "test");
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "AIJob");
        assert_eq!(owner["uid"], "6f1c2a40-0000-4000-8000-00000000a1b0");
        assert_eq!(owner["controller"], true);
        let container = &pod["spec"]["containers"][0];
        assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], "2");
        assert_eq!(
            container["env"],
            json!([{"name": "MODEL_NAME", "value": "resnet50"}])
        );
    }

    #[test]
    fn scale_up_fills_the_lowest_free_names_and_ignores_terminating_pods() {
        let mut terminating = worker(0, true);
        terminating.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let plan = plan(&job(Some(3)), vec![terminating, worker(3, true)]);
        let names: Vec<String> = plan.create.iter().map(|p| p.name_any()).collect();
        assert_eq!(names, ["test-worker-0", "test-worker-1"]);
        assert!(plan.delete.is_empty());
        assert_eq!((plan.ready, plan.phase), (1, Phase::ScalingUp));
    }

    #[test]
    fn scale_down_deletes_the_surplus_not_ready_first() {
        let pods = vec![worker(0, true), worker(1, false), worker(2, true)];
        let plan = plan(&job(Some(1)), pods);
        assert_eq!(plan.delete, ["test-worker-1", "test-worker-2"]);
        assert_eq!((plan.ready, plan.phase), (1, Phase::ScalingDown));
    }

    #[test]
    fn all_workers_ready_is_running_and_one_not_ready_is_pending() {
        let running = plan(&job(Some(2)), vec![worker(0, true), worker(1, true)]);
        assert_eq!((running.ready, running.phase), (2, Phase::Running));
        let pending = plan(&job(Some(2)), vec![worker(0, true), worker(1, false)]);
        assert_eq!((pending.ready, pending.phase), (1, Phase::Pending));
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
}
