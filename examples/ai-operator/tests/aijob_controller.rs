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

//! The `AIJob` controller end to end: the real controller loop (`controller::run`, as
//! `src/main.rs` starts it) against the runtime's in-process test cluster
//! (`rsbuilder_runtime::testing`, rsbuilder's docs/testing.md), with the CRD of
//! `config/crd/bases` and the project's webhooks called as `config/webhook/manifests.yaml`
//! registers them. No kubelet runs there, so the test marks the worker Pods ready itself.

use std::time::Duration;

use ai_operator::api::v1::{AIJob, AIJobSpec};
use ai_operator::controller::aijob_controller::{AIJobReconciler, JOB_LABEL, worker_pod};
use ai_operator::webhook::v1::aijob_webhook::{AIJobWebhook, DEFAULTING_PATH, VALIDATION_PATH};
use anyhow::Context as _;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use rsbuilder_runtime::testing::{Mode, TestCluster, wait};
use rsbuilder_runtime::tokio_util::sync::CancellationToken;
use rsbuilder_runtime::webhook::Webhooks;
use serde_json::json;
use tokio::task::JoinHandle;

/// How long the controller may take for each step.
const WAIT: Duration = Duration::from_secs(30);

/// Training `resnet50` with 2 GPUs per worker on `replicas` workers.
fn job(name: &str, replicas: Option<i32>) -> AIJob {
    AIJob::new(
        name,
        AIJobSpec {
            model_name: "resnet50".into(),
            gpu_count: 2,
            replicas,
        },
    )
}

/// The test cluster with the project's webhooks (as `src/main.rs` registers them), and the
/// controller loop running on it. In-process: only that cluster calls the webhooks.
async fn start() -> anyhow::Result<(
    TestCluster,
    CancellationToken,
    JoinHandle<anyhow::Result<()>>,
)> {
    let webhooks = Webhooks::new()
        .defaulting::<AIJob, _>(DEFAULTING_PATH, AIJobWebhook)
        .validating::<AIJob, _>(VALIDATION_PATH, AIJobWebhook);
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .webhooks(webhooks)
        .start()
        .await
        .context("starting the test cluster (`rsbuilder manifests` writes config/)")?;
    // The manager's token stops the loop it was given to; each `manager()` has its own.
    let mgr = cluster.manager();
    let shutdown = mgr.shutdown.clone();
    let running = tokio::spawn(rsbuilder_runtime::controller::run(mgr, AIJobReconciler));
    Ok((cluster, shutdown, running))
}

/// Waits for `condition` on job `name`; when the controller loop ended meanwhile, the error
/// says so.
async fn until_job(
    jobs: &Api<AIJob>,
    name: &str,
    what: &str,
    running: &JoinHandle<anyhow::Result<()>>,
    condition: impl Fn(&AIJob) -> bool,
) -> anyhow::Result<AIJob> {
    let found = wait::until(jobs, name, WAIT, what, condition).await;
    if found.is_err() && running.is_finished() {
        return found.context("the controller loop ended early");
    }
    found
}

/// Whether the job's status says `phase` with `ready` ready workers for its current
/// generation.
fn reports(job: &AIJob, phase: &str, ready: i32) -> bool {
    job.status.as_ref().is_some_and(|s| {
        s.phase.as_deref() == Some(phase)
            && s.ready_replicas == ready
            && s.observed_generation == job.metadata.generation
    })
}

/// The sorted names of the Pods labelled as workers of job `name`.
async fn worker_names(pods: &Api<Pod>, name: &str) -> anyhow::Result<Vec<String>> {
    let selector = ListParams::default().labels(&format!("{JOB_LABEL}={name}"));
    let mut names: Vec<String> = pods
        .list(&selector)
        .await?
        .items
        .iter()
        .map(|p| p.name_any())
        .collect();
    names.sort();
    Ok(names)
}

#[tokio::test]
async fn a_job_gets_its_workers_and_keeps_their_number() -> anyhow::Result<()> {
    let (cluster, shutdown, running) = start().await?;
    let jobs: Api<AIJob> = Api::default_namespaced(cluster.client());
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());

    let created = jobs
        .create(&PostParams::default(), &job("train", Some(3)))
        .await
        .context("creating the AIJob; is its CRD in config/crd/bases?")?;

    // The missing workers are created, owned by the job.
    for n in 0..3 {
        let pod = wait::until(&pods, &format!("train-worker-{n}"), WAIT, "exist", |_| true).await?;
        assert_eq!(pod.labels()[JOB_LABEL], "train");
        let owner = &pod.owner_references()[0];
        assert_eq!(owner.kind, AIJob::kind(&()));
        assert_eq!(owner.name, "train");
        assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
        assert_eq!(owner.controller, Some(true));
        let container = &pod.spec.as_ref().unwrap().containers[0];
        let env = container.env.as_ref().unwrap();
        assert_eq!(
            (env[0].name.as_str(), env[0].value.as_deref()),
            ("MODEL_NAME", Some("resnet50"))
        );
        let limits = container
            .resources
            .as_ref()
            .unwrap()
            .limits
            .as_ref()
            .unwrap();
        assert_eq!(limits["nvidia.com/gpu"].0, "2");
    }
    until_job(&jobs, "train", "be Pending with 0 ready", &running, |j| {
        reports(j, "Pending", 0)
    })
    .await?;

    // Ready workers make a Running, Ready job.
    for n in 0..3 {
        cluster
            .make_pod_ready("default", &format!("train-worker-{n}"))
            .await?;
    }
    let ready = until_job(&jobs, "train", "be Ready with 3 ready", &running, |j| {
        wait::is_ready(j) && reports(j, "Running", 3)
    })
    .await?;
    assert_eq!(ready.finalizers(), ["ai.example.com/finalizer"]);
    assert_eq!(
        ready.status.unwrap().conditions[0].message,
        "3 of 3 workers ready"
    );

    // A deleted worker is created again.
    let lost = pods.get("train-worker-1").await?;
    pods.delete("train-worker-1", &DeleteParams::default())
        .await?;
    wait::until(&pods, "train-worker-1", WAIT, "be created again", |p| {
        p.metadata.uid != lost.metadata.uid
    })
    .await?;
    until_job(&jobs, "train", "be Pending with 2 ready", &running, |j| {
        reports(j, "Pending", 2)
    })
    .await?;

    // A surplus worker (one more of the job's Pods) is deleted, the not-ready one first.
    pods.create(&PostParams::default(), &worker_pod(&created, 7))
        .await?;
    wait::until_gone(&pods, "train-worker-7", WAIT).await?;
    assert_eq!(
        worker_names(&pods, "train").await?,
        ["train-worker-0", "train-worker-1", "train-worker-2"]
    );

    // Scaling down deletes the not-ready worker, then the highest number.
    jobs.patch(
        "train",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await?;
    wait::until_gone(&pods, "train-worker-1", WAIT).await?;
    wait::until_gone(&pods, "train-worker-2", WAIT).await?;
    let scaled = until_job(&jobs, "train", "be Ready with 1 ready", &running, |j| {
        wait::is_ready(j) && reports(j, "Running", 1)
    })
    .await?;
    assert_eq!(scaled.metadata.generation, Some(2));
    assert_eq!(worker_names(&pods, "train").await?, ["train-worker-0"]);

    // Deleting the job removes its finalizer; the garbage collector takes the workers.
    jobs.delete("train", &DeleteParams::default()).await?;
    wait::until_gone(&jobs, "train", WAIT).await?;
    wait::until_gone(&pods, "train-worker-0", WAIT).await?;

    shutdown.cancel();
    running.await??;
    Ok(())
}

#[tokio::test]
async fn a_job_without_replicas_gets_the_webhooks_default_of_one_worker() -> anyhow::Result<()> {
    let (cluster, shutdown, running) = start().await?;
    let jobs: Api<AIJob> = Api::default_namespaced(cluster.client());
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());

    let created = jobs
        .create(&PostParams::default(), &job("solo", None))
        .await?;
    assert_eq!(created.spec.replicas, Some(1));
    wait::until(&pods, "solo-worker-0", WAIT, "exist", |_| true).await?;
    until_job(&jobs, "solo", "be Pending with 0 ready", &running, |j| {
        reports(j, "Pending", 0)
    })
    .await?;
    assert_eq!(worker_names(&pods, "solo").await?, ["solo-worker-0"]);
    // More workers than the schema allows are refused.
    let err = jobs
        .create(&PostParams::default(), &job("huge", Some(101)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("spec.replicas"), "{err}");

    shutdown.cancel();
    running.await??;
    Ok(())
}
