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

//! The `Database` controller: runs each `Database` (`database.example.com/v1`) as a
//! StatefulSet behind a headless Service, with its root password in a generated Secret, and
//! reports the pods and the phase in `status`.
//!
//! Per reconciliation (`apply`):
//! 1. the Secret `<name>-credentials` is created with a random password when it does not exist,
//!    and never changed afterwards;
//! 2. the headless Service and the StatefulSet are applied (server-side apply, field manager
//!    [`CONTROLLER_NAME`]), owned by the `Database`; the StatefulSet's replicas follow
//!    `spec.replicas`, which `kubectl scale database` sets through the scale subresource;
//! 3. the pods are listed by label and `status` is applied: `phase`, `nodes`, `replicas`,
//!    `readyReplicas`, a `Ready` condition and `observedGeneration`. A change of phase is
//!    published as an event.
//!
//! When a `Database` is deleted, `cleanup` deletes its data volumes (PVCs of the
//! StatefulSet's claim template, which Kubernetes would otherwise keep); the Secret, Service
//! and StatefulSet go with the `Database` through their owner references. The machinery
//! around `apply` and `cleanup` is the runtime's ([`rsbuilder_runtime::controller`]): the
//! finalizer, retries after 409 Conflict, backoff on other errors, events and metrics.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret, Service};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use rsbuilder_runtime::Manager;
use rsbuilder_runtime::controller::{Context, Reconciler, object_key, ready_condition};

use crate::api::v1::{Database, DatabaseStatus, Phase};
use crate::controller::database_objects as objects;

// +kubebuilder:rbac:groups=database.example.com,resources=databases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=database.example.com,resources=databases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=database.example.com,resources=databases/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch;delete
// The operator reads and creates the Database's own password Secret: acknowledged.
// +rsbuilder:allow=secrets
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=list;delete

/// The controller's name ([`Reconciler::NAME`]): field manager, event reporter, metrics label.
pub const CONTROLLER_NAME: &str = "database-controller";

/// How long to wait before reconciling a running database again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);

/// How soon to look again at a database that is not running yet. Pods are not watched (only
/// the StatefulSet is), so a pod stuck pulling its image is noticed this way.
const CONVERGING: Duration = Duration::from_secs(15);

/// Reconciles `Database` objects.
pub struct DatabaseReconciler;

impl Reconciler for DatabaseReconciler {
    type Kind = Database;
    const NAME: &'static str = CONTROLLER_NAME;
    const FINALIZER: Option<&'static str> = Some("database.example.com/finalizer");

    /// Creates or updates the Secret, Service and StatefulSet of `obj`, then applies its
    /// status. When a step fails, the status says `Failed` (with the error in the `Ready`
    /// condition), a warning event is published, and the error is returned (retried with
    /// backoff).
    async fn apply(&self, obj: Arc<Database>, ctx: &Context) -> anyhow::Result<Action> {
        let generation = obj.metadata.generation;
        let previous = obj.status.clone().unwrap_or_default();
        let previous_ready = previous.conditions.iter().find(|c| c.type_ == "Ready");

        let (sts, pods) = match ensure_children(&obj, ctx).await {
            Ok(found) => found,
            Err(err) => {
                let message = format!("{err:#}");
                let status = DatabaseStatus {
                    phase: Some(Phase::Failed),
                    conditions: vec![ready_condition(
                        previous_ready,
                        generation,
                        "False",
                        "ReconcileFailed",
                        &message,
                    )],
                    observed_generation: generation,
                    ..previous.clone()
                };
                if let Err(patch_err) = apply_status(ctx, &obj, &status).await {
                    tracing::warn!(object = %object_key(obj.as_ref()), error = %patch_err, "recording the failure in status failed");
                }
                ctx.publish(
                    obj.as_ref(),
                    EventType::Warning,
                    "Failed",
                    "Reconcile",
                    message,
                )
                .await;
                return Err(err);
            }
        };

        let (phase, message) = objects::phase(obj.spec.replicas, &sts, &pods);
        let running = phase == Phase::Running;
        let sts_status = sts.status.unwrap_or_default();
        let status = DatabaseStatus {
            phase: Some(phase),
            nodes: objects::node_names(&pods),
            replicas: Some(sts_status.replicas),
            ready_replicas: Some(sts_status.ready_replicas.unwrap_or(0)),
            conditions: vec![ready_condition(
                previous_ready,
                generation,
                if running { "True" } else { "False" },
                &format!("{phase:?}"),
                &message,
            )],
            observed_generation: generation,
        };
        apply_status(ctx, &obj, &status).await?;
        if previous.phase != Some(phase) {
            let type_ = if phase == Phase::Failed {
                EventType::Warning
            } else {
                EventType::Normal
            };
            let note = format!("Database {} is {phase:?}: {message}", obj.name_any());
            ctx.publish(
                obj.as_ref(),
                type_,
                &format!("{phase:?}"),
                "Reconcile",
                note,
            )
            .await;
        }
        Ok(Action::requeue(if running { RESYNC } else { CONVERGING }))
    }

    /// Deletes the database's data volumes before the `Database` is gone: the PVCs created
    /// from the StatefulSet's claim template outlive the StatefulSet, so owner references do
    /// not remove them.
    async fn cleanup(&self, obj: Arc<Database>, ctx: &Context) -> anyhow::Result<Action> {
        let namespace = obj.namespace().unwrap_or_default();
        let claims: Api<PersistentVolumeClaim> = Api::namespaced(ctx.client.clone(), &namespace);
        let selector = ListParams::default().labels(&objects::label_selector(&obj));
        let mut deleted = Vec::new();
        for claim in claims.list(&selector).await?.items {
            let name = claim.name_any();
            if !objects::is_data_claim(&obj, &name) {
                continue;
            }
            match claims.delete(&name, &DeleteParams::default()).await {
                Ok(_) => deleted.push(name),
                Err(kube::Error::Api(status)) if status.is_not_found() => {}
                Err(err) => return Err(err.into()),
            }
        }
        let note = if deleted.is_empty() {
            format!(
                "deleting Database {}; it had no data volumes",
                obj.name_any()
            )
        } else {
            format!(
                "deleting Database {} and its data volumes {}",
                obj.name_any(),
                deleted.join(", ")
            )
        };
        ctx.publish(obj.as_ref(), EventType::Normal, "Deleting", "Cleanup", note)
            .await;
        Ok(Action::await_change())
    }

    /// Reconciles a `Database` again when its StatefulSet or Service changes (Kubebuilder's
    /// `Owns()`); only the ones this operator made (label `app.kubernetes.io/managed-by`) are
    /// watched.
    fn watches(&self, controller: Controller<Database>, mgr: &Manager) -> Controller<Database> {
        let children = watcher::Config::default().labels(&format!(
            "app.kubernetes.io/managed-by={}",
            objects::MANAGED_BY
        ));
        controller
            .owns(mgr.api::<StatefulSet>(), children.clone())
            .owns(mgr.api::<Service>(), children)
    }
}

/// Makes sure the credentials Secret exists, applies the headless Service and the StatefulSet,
/// and lists the database's pods. Returns the StatefulSet as the API server stored it (with
/// its status) and the pods.
async fn ensure_children(db: &Database, ctx: &Context) -> anyhow::Result<(StatefulSet, Vec<Pod>)> {
    let namespace = db.namespace().unwrap_or_default();
    ensure_secret(db, &namespace, ctx).await?;

    let apply = PatchParams::apply(CONTROLLER_NAME).force();
    let services: Api<Service> = Api::namespaced(ctx.client.clone(), &namespace);
    let service = objects::headless_service(db)?;
    services
        .patch(&objects::service_name(db), &apply, &Patch::Apply(&service))
        .await
        .context("applying the Service")?;

    let sets: Api<StatefulSet> = Api::namespaced(ctx.client.clone(), &namespace);
    let sts = objects::stateful_set(db)?;
    let sts = sets
        .patch(&db.name_any(), &apply, &Patch::Apply(&sts))
        .await
        .context("applying the StatefulSet")?;

    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
    let selector = ListParams::default().labels(&objects::label_selector(db));
    let pods = pods.list(&selector).await?.items;
    Ok((sts, pods))
}

/// Creates the credentials Secret with a fresh random password when it does not exist. An
/// existing Secret is never changed: the database's data directory was initialised with its
/// password. A Secret made by someone else is used as it is when it has a `password` key,
/// which is how to choose the password yourself; without one it is an error.
async fn ensure_secret(db: &Database, namespace: &str, ctx: &Context) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), namespace);
    let name = objects::secret_name(db);
    match secrets.get_opt(&name).await? {
        Some(existing) if objects::secret_has_password(&existing) => Ok(()),
        Some(_) => anyhow::bail!(
            "Secret {name} has no `{key}` key: add it, or delete the Secret to have a password generated",
            key = objects::PASSWORD_KEY
        ),
        None => {
            let secret = objects::secret(db, objects::generate_password())?;
            let params = PostParams {
                field_manager: Some(CONTROLLER_NAME.into()),
                ..PostParams::default()
            };
            match secrets.create(&params, &secret).await {
                Ok(_) => {
                    let note = format!("generated the root password in Secret {name}");
                    ctx.publish(db, EventType::Normal, "SecretCreated", "CreateSecret", note)
                        .await;
                    Ok(())
                }
                // Created in the meantime: keep that one.
                Err(kube::Error::Api(status)) if status.is_already_exists() => Ok(()),
                Err(err) => Err(err.into()),
            }
        }
    }
}

/// Applies `status` on the status subresource (server-side apply, field manager
/// [`CONTROLLER_NAME`]). Every field is sent each time: a field left out would be removed.
async fn apply_status(
    ctx: &Context,
    obj: &Database,
    status: &DatabaseStatus,
) -> anyhow::Result<()> {
    let api: Api<Database> =
        Api::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default());
    let patch = status_patch(status);
    let params = PatchParams::apply(CONTROLLER_NAME).force();
    api.patch_status(&obj.name_any(), &params, &Patch::Apply(&patch))
        .await?;
    Ok(())
}

/// The server-side apply body of a status patch: the kind's identity and the whole `status`.
fn status_patch(status: &DatabaseStatus) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": Database::api_version(&()),
        "kind": Database::kind(&()),
        "status": status,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::v1::{DatabaseSpec, Engine};

    #[test]
    fn a_manifest_without_replicas_asks_for_one() {
        let spec: DatabaseSpec =
            serde_json::from_value(json!({"engine": "postgresql", "version": "16.4"})).unwrap();
        assert_eq!(spec.replicas, 1);
        assert_eq!(spec.engine, Engine::Postgresql);
    }

    #[test]
    fn the_status_patch_names_the_kind_and_sends_every_field() {
        let status = DatabaseStatus {
            phase: Some(Phase::Running),
            nodes: vec!["db-0".into()],
            replicas: Some(1),
            ready_replicas: Some(1),
            conditions: Vec::new(),
            observed_generation: Some(2),
        };
        assert_eq!(
            status_patch(&status),
            json!({
                "apiVersion": "database.example.com/v1",
                "kind": "Database",
                "status": {
                    "phase": "Running",
                    "nodes": ["db-0"],
                    "replicas": 1,
                    "readyReplicas": 1,
                    "conditions": [],
                    "observedGeneration": 2,
                },
            })
        );
    }
}
