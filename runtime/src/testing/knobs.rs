// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! What a test does in place of the kubelet and kube-controller-manager, which neither the
//! in-process cluster nor envtest runs: write the status they would write. Each helper is a
//! merge patch of the `status` subresource through the cluster's client, so it works the
//! same on every [`super::Mode`] (on a real cluster the real kubelet may write over it).

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::TestCluster;
use crate::manager::ScopedApi;

impl TestCluster {
    /// Merges `status` into the status of object `name` of kind `K` (in `namespace` for a
    /// namespaced kind), as a controller of the cluster would write it. Out: the object
    /// after the write. Errors: the object does not exist; the kind has no status
    /// subresource; the write is refused.
    pub async fn patch_status<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
        status: Value,
    ) -> anyhow::Result<K>
    where
        K: Resource<DynamicType = (), Scope: ScopedApi>
            + Clone
            + DeserializeOwned
            + Serialize
            + std::fmt::Debug,
    {
        let api: Api<K> = K::Scope::api::<K>(self.client(), namespace);
        Ok(api
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await?)
    }

    /// Makes Pod `name` Running and Ready, as the kubelet reports it once every container
    /// started and passed its readiness probe: phase `Running`, the `PodScheduled`,
    /// `Initialized`, `ContainersReady` and `Ready` conditions `True`, a ready, running
    /// status per container of the spec, a Pod IP. Errors: as [`Self::patch_status`].
    pub async fn make_pod_ready(&self, namespace: &str, name: &str) -> anyhow::Result<Pod> {
        let pod: Pod = Api::namespaced(self.client(), namespace).get(name).await?;
        let now = self.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let containers: Vec<Value> = pod
            .spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .map(|c| {
                json!({
                    "name": c.name, "image": c.image.clone().unwrap_or_default(), "imageID": "",
                    "ready": true, "started": true, "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                })
            })
            .collect();
        let condition =
            |type_: &str| json!({"type": type_, "status": "True", "lastTransitionTime": now});
        self.patch_status(
            Some(namespace),
            name,
            json!({
                "phase": "Running",
                "conditions": [condition("PodScheduled"), condition("Initialized"), condition("ContainersReady"), condition("Ready")],
                "containerStatuses": containers,
                "podIP": "10.0.0.10", "podIPs": [{"ip": "10.0.0.10"}],
                "hostIP": "10.0.0.1", "startTime": now,
            }),
        )
        .await
    }

    /// Makes Deployment `name` ready, as its controller reports a rollout that finished:
    /// `replicas`, `updatedReplicas`, `readyReplicas` and `availableReplicas` equal to
    /// `spec.replicas` (1 when unset), `observedGeneration` the current generation, the
    /// `Available` and `Progressing` conditions `True`. Errors: as [`Self::patch_status`].
    pub async fn make_deployment_ready(
        &self,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<Deployment> {
        let d: Deployment = Api::namespaced(self.client(), namespace).get(name).await?;
        let n = d.spec.replicas.unwrap_or(1);
        let now = self.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        self.patch_status(
            Some(namespace),
            name,
            json!({
                "observedGeneration": d.metadata.generation,
                "replicas": n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                     "message": "Deployment has minimum availability.", "lastTransitionTime": now, "lastUpdateTime": now},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                     "message": format!("ReplicaSet \"{name}\" has successfully progressed."), "lastTransitionTime": now, "lastUpdateTime": now},
                ],
            }),
        )
        .await
    }

    /// Makes StatefulSet `name` ready, as its controller reports every replica running and
    /// ready: `replicas`, `readyReplicas`, `availableReplicas`, `currentReplicas` and
    /// `updatedReplicas` equal to `spec.replicas` (1 when unset), `observedGeneration` the
    /// current generation. Errors: as [`Self::patch_status`].
    pub async fn make_statefulset_ready(
        &self,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<StatefulSet> {
        let s: StatefulSet = Api::namespaced(self.client(), namespace).get(name).await?;
        let n = s.spec.replicas.unwrap_or(1);
        self.patch_status(
            Some(namespace),
            name,
            json!({
                "observedGeneration": s.metadata.generation,
                "replicas": n, "readyReplicas": n, "availableReplicas": n,
                "currentReplicas": n, "updatedReplicas": n,
            }),
        )
        .await
    }
}
