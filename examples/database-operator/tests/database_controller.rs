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

//! The `Database` controller end to end: the real controller loop (`controller::run`, as
//! `src/main.rs` starts it) against the runtime's in-process test cluster
//! (`rsbuilder_runtime::testing`, rsbuilder's docs/testing.md) with the CRD of
//! `config/crd/bases`. No StatefulSet controller or kubelet runs there, so the test plays
//! their part: it creates the StatefulSet's pods and claims and marks them ready.
//! `RSBUILDER_TEST_CLUSTER=envtest` runs the same test on a real kube-apiserver.

use std::time::Duration;

use anyhow::Context as _;
use database_operator::api::v1::{Database, DatabaseSpec, Engine, Phase};
use database_operator::controller::database_controller::DatabaseReconciler;
use database_operator::controller::database_objects as objects;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use rsbuilder_runtime::testing::{TestCluster, wait};
use rsbuilder_runtime::tokio_util::sync::CancellationToken;
use serde_json::json;
use tokio::task::JoinHandle;

/// How long the controller may take for each step.
const WAIT: Duration = Duration::from_secs(30);

/// MySQL 8.0.36 on `replicas` pods with a 1Gi data volume each, in `default`.
fn database(name: &str, replicas: i32) -> Database {
    let mut db = Database::new(
        name,
        DatabaseSpec {
            engine: Engine::Mysql,
            version: "8.0.36".into(),
            replicas,
            storage: Some(Quantity("1Gi".into())),
            resources: None,
        },
    );
    db.metadata.namespace = Some("default".into());
    db
}

/// The only owner reference of `meta`, which must name `db` as its controller.
fn assert_controlled_by(meta: &ObjectMeta, db: &Database) {
    let owners: &[OwnerReference] = meta.owner_references.as_deref().unwrap_or_default();
    assert_eq!(
        owners.len(),
        1,
        "owner references of {:?}: {owners:?}",
        meta.name
    );
    let owner = &owners[0];
    assert_eq!(owner.api_version, "database.example.com/v1");
    assert_eq!(owner.kind, "Database");
    assert_eq!(owner.name, db.name_any());
    assert_eq!(Some(&owner.uid), db.metadata.uid.as_ref());
    assert_eq!(owner.controller, Some(true));
}

/// Does what the StatefulSet controller and the kubelet would do for StatefulSet `name` at its
/// current `spec.replicas`: creates the missing pods `<name>-<n>` from the pod template
/// (owned by the StatefulSet) and, when it has a claim template `data`, the claims
/// `data-<name>-<n>` labelled as the template says; marks every pod Running and Ready; then
/// writes the StatefulSet's status with every replica ready.
async fn act_as_statefulset_controller(cluster: &TestCluster, name: &str) -> anyhow::Result<()> {
    let sets: Api<StatefulSet> = Api::default_namespaced(cluster.client());
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(cluster.client());
    let sts = sets.get(name).await?;
    let owner = sts
        .controller_owner_ref(&())
        .context("a stored StatefulSet has a uid")?;
    for n in 0..sts.spec.replicas.unwrap_or(1) {
        let pod_name = format!("{name}-{n}");
        if pods.get_opt(&pod_name).await?.is_none() {
            let template = sts.spec.template.clone();
            let pod = Pod {
                metadata: ObjectMeta {
                    name: Some(pod_name.clone()),
                    owner_references: Some(vec![owner.clone()]),
                    ..template.metadata.unwrap_or_default()
                },
                spec: template.spec,
                ..Pod::default()
            };
            pods.create(&PostParams::default(), &pod).await?;
        }
        for template in sts.spec.volume_claim_templates.iter().flatten() {
            let claim_name = format!("{}-{pod_name}", template.name_any());
            if claims.get_opt(&claim_name).await?.is_none() {
                let claim = PersistentVolumeClaim {
                    metadata: ObjectMeta {
                        name: Some(claim_name),
                        labels: template.metadata.labels.clone(),
                        ..ObjectMeta::default()
                    },
                    spec: template.spec.clone(),
                    ..PersistentVolumeClaim::default()
                };
                claims.create(&PostParams::default(), &claim).await?;
            }
        }
        cluster.make_pod_ready("default", &pod_name).await?;
    }
    // Last, as the StatefulSet controller reports only what it saw: this status change is
    // what wakes the Database's controller (pods are not watched).
    cluster.make_statefulset_ready("default", name).await?;
    Ok(())
}

/// Starts the test cluster and the controller loop on it. Out: the cluster, the token that
/// stops the loop, and the loop's task.
async fn start() -> anyhow::Result<(
    TestCluster,
    CancellationToken,
    JoinHandle<anyhow::Result<()>>,
)> {
    let cluster = TestCluster::start()
        .await
        .context("starting the test cluster (`rsbuilder manifests` writes config/crd/bases)")?;
    // The manager's token stops the loop it was given to; each `manager()` has its own.
    let mgr = cluster.manager();
    let shutdown = mgr.shutdown.clone();
    let running = tokio::spawn(rsbuilder_runtime::controller::run(mgr, DatabaseReconciler));
    Ok((cluster, shutdown, running))
}

/// Waits for `condition` on `name`; when the controller loop ended meanwhile, the error says so.
async fn until<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    running: &JoinHandle<anyhow::Result<()>>,
    condition: impl Fn(&K) -> bool,
) -> anyhow::Result<K>
where
    K: Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let found = wait::until(api, name, WAIT, what, condition).await;
    if found.is_err() && running.is_finished() {
        return found.context("the controller loop ended early");
    }
    found
}

#[tokio::test]
async fn a_database_gets_an_owned_statefulset_and_service_scales_and_becomes_ready()
-> anyhow::Result<()> {
    let (cluster, shutdown, running) = start().await?;
    let dbs: Api<Database> = Api::default_namespaced(cluster.client());
    let sets: Api<StatefulSet> = Api::default_namespaced(cluster.client());
    let services: Api<Service> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());

    let db = dbs
        .create(&PostParams::default(), &database("orders", 1))
        .await
        .context("creating the Database; is its CRD in config/crd/bases?")?;

    // The children, each controlled by the Database.
    let sts = until(&sets, "orders", "exist", &running, |_| true).await?;
    assert_controlled_by(&sts.metadata, &db);
    assert_eq!(sts.spec.replicas, Some(1));
    assert_eq!(sts.spec.service_name.as_deref(), Some("orders"));
    let container = &sts.spec.template.spec.as_ref().unwrap().containers[0];
    assert_eq!(container.image.as_deref(), Some("mysql:8.0.36"));
    let svc = until(&services, "orders", "exist", &running, |_| true).await?;
    assert_controlled_by(&svc.metadata, &db);
    let svc_spec = svc.spec.unwrap();
    assert_eq!(svc_spec.cluster_ip.as_deref(), Some("None"));
    assert_eq!(svc_spec.ports.unwrap()[0].port, 3306);
    let secret = until(&secrets, "orders-credentials", "exist", &running, |_| true).await?;
    assert_controlled_by(&secret.metadata, &db);
    assert!(objects::secret_has_password(&secret), "{secret:?}");

    // No pod yet: Pending, not Ready, for the current generation.
    let pending = until(&dbs, "orders", "be Pending", &running, |d| {
        d.status.as_ref().and_then(|s| s.phase) == Some(Phase::Pending)
    })
    .await?;
    assert!(!wait::is_ready(&pending));
    let status = pending.status.unwrap();
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.ready_replicas, Some(0));
    assert_eq!(status.conditions[0].status, "False");

    // Scaling the Database scales the StatefulSet.
    dbs.patch(
        "orders",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await?;
    until(&sets, "orders", "have 3 replicas", &running, |s| {
        s.spec.replicas == Some(3)
    })
    .await?;

    // Once the three pods run and are ready, so is the Database.
    act_as_statefulset_controller(&cluster, "orders").await?;
    let ready = until(
        &dbs,
        "orders",
        "be Ready with 3 ready replicas",
        &running,
        |d| wait::is_ready(d) && d.status.as_ref().and_then(|s| s.ready_replicas) == Some(3),
    )
    .await?;
    assert_eq!(ready.finalizers(), ["database.example.com/finalizer"]);
    let status = ready.status.unwrap();
    assert_eq!(status.phase, Some(Phase::Running));
    assert_eq!(status.replicas, Some(3));
    assert_eq!(status.nodes, ["orders-0", "orders-1", "orders-2"]);
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(status.conditions[0].reason, "Running");
    assert_eq!(status.conditions[0].message, "3/3 pods ready");

    shutdown.cancel();
    running.await??;
    Ok(())
}

#[tokio::test]
async fn deleting_a_database_deletes_its_data_volumes_and_its_children_go_with_it()
-> anyhow::Result<()> {
    let (cluster, shutdown, running) = start().await?;
    let dbs: Api<Database> = Api::default_namespaced(cluster.client());
    let sets: Api<StatefulSet> = Api::default_namespaced(cluster.client());
    let services: Api<Service> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(cluster.client());

    dbs.create(&PostParams::default(), &database("orders", 2))
        .await?;
    until(&sets, "orders", "exist", &running, |_| true).await?;
    act_as_statefulset_controller(&cluster, "orders").await?;
    until(&dbs, "orders", "be Ready", &running, wait::is_ready).await?;
    // A claim with the database's labels that its claim template did not make: kept.
    let other = PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("backup-orders-0".into()),
            labels: Some(objects::selector_labels(&database("orders", 2))),
            ..ObjectMeta::default()
        },
        ..PersistentVolumeClaim::default()
    };
    claims.create(&PostParams::default(), &other).await?;

    dbs.delete("orders", &DeleteParams::default()).await?;
    wait::until_gone(&dbs, "orders", WAIT).await?;
    // cleanup deleted the claim template's volumes, which nothing owns.
    wait::until_gone(&claims, "data-orders-0", WAIT).await?;
    wait::until_gone(&claims, "data-orders-1", WAIT).await?;
    claims.get("backup-orders-0").await?;
    // The garbage collector took the owned objects, and the StatefulSet's pods after it.
    wait::until_gone(&sets, "orders", WAIT).await?;
    wait::until_gone(&services, "orders", WAIT).await?;
    wait::until_gone(&secrets, "orders-credentials", WAIT).await?;
    wait::until_gone(&pods, "orders-0", WAIT).await?;
    wait::until_gone(&pods, "orders-1", WAIT).await?;

    let events: Api<Event> = Api::default_namespaced(cluster.client());
    let notes: Vec<String> = events
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Deleting"))
        .filter_map(|e| e.note)
        .collect();
    assert_eq!(
        notes,
        ["deleting Database orders and its data volumes data-orders-0, data-orders-1"]
    );

    shutdown.cancel();
    running.await??;
    Ok(())
}
