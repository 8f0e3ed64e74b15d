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
//! Per reconciliation ([`reconcile`]):
//! 1. the Secret `<name>-credentials` is created with a random password when it does not exist,
//!    and never changed afterwards;
//! 2. the headless Service and the StatefulSet are applied (server-side apply, field manager
//!    [`CONTROLLER_NAME`]), owned by the `Database`; the StatefulSet's replicas follow
//!    `spec.replicas`, which `kubectl scale database` sets through the scale subresource;
//! 3. the pods are listed by label and `status` is applied: `phase`, `nodes`, `replicas`,
//!    `readyReplicas`, a `Ready` condition and `observedGeneration`. A change of phase is
//!    published as an event.
//!
//! When a `Database` is deleted the finalizer deletes its data volumes (PVCs of the
//! StatefulSet's claim template, which Kubernetes would otherwise keep); the Secret, Service
//! and StatefulSet go with the `Database` through their owner references.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};

use crate::api::v1::{Database, DatabaseStatus, Phase};
use crate::controller::database_objects::{self as objects, ObjectError};
use crate::manager::Manager;

/// The controller's name: the field manager of its server-side applies, the reporter of its
/// events and the `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "database-controller";

/// The finalizer this controller keeps on every `Database`, so that `cleanup` runs before the
/// object is gone.
pub const FINALIZER: &str = "database.example.com/finalizer";

/// How long to wait before reconciling a running database again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);

/// How soon to look again at a database that is not running yet. Pods are not watched (only
/// the StatefulSet is), so a pod stuck pulling its image is noticed this way.
const CONVERGING: Duration = Duration::from_secs(15);

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
    /// The owned objects could not be built from the `Database`.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// The credentials Secret exists (made by someone else) but holds no password.
    #[error(
        "Secret {0} has no `{key}` key: add it, or delete the Secret to have a password generated",
        key = objects::PASSWORD_KEY
    )]
    InvalidSecret(String),
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

// +kubebuilder:rbac:groups=database.example.com,resources=databases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=database.example.com,resources=databases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=database.example.com,resources=databases/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=list;delete

/// Reconciles one `Database` object: makes sure it carries [`FINALIZER`], then runs
/// `apply` while the object lives and `cleanup` once it is being deleted (the finalizer is
/// removed after `cleanup` succeeds).
///
/// Returns when to look at the object again; on error, [`error_policy`] decides.
pub async fn reconcile(obj: Arc<Database>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
    let api: Api<Database> = Api::namespaced(ctx.client.clone(), &namespace);
    let key = object_key(&obj);
    let action = finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            finalizer::Event::Apply(obj) => apply(obj, &api, &ctx).await,
            finalizer::Event::Cleanup(obj) => cleanup(obj, &ctx).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)))?;
    if let Ok(mut failures) = ctx.failures.lock() {
        failures.remove(&key);
    }
    Ok(action)
}

/// Creates or updates the Secret, Service and StatefulSet of `obj`, then applies its status.
///
/// When a step fails, the status says `Failed` (with the error in the `Ready` condition), a
/// warning event is published, and the error is returned so that [`error_policy`] retries.
async fn apply(obj: Arc<Database>, api: &Api<Database>, ctx: &Context) -> Result<Action, Error> {
    let generation = obj.metadata.generation;
    let previous = obj.status.clone().unwrap_or_default();
    let previous_ready = previous.conditions.iter().find(|c| c.type_ == "Ready");

    let (sts, pods) = match ensure_children(&obj, ctx).await {
        Ok(found) => found,
        Err(err) => {
            let message = err.to_string();
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
            if let Err(patch_err) = apply_status(api, &obj, &status).await {
                tracing::warn!(object = %object_key(&obj), error = %patch_err, "recording the failure in status failed");
            }
            publish(
                ctx,
                &obj,
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
    apply_status(api, &obj, &status).await?;
    if previous.phase != Some(phase) {
        let type_ = if phase == Phase::Failed {
            EventType::Warning
        } else {
            EventType::Normal
        };
        publish(
            ctx,
            &obj,
            type_,
            &format!("{phase:?}"),
            "Reconcile",
            format!("Database {} is {phase:?}: {message}", obj.name_any()),
        )
        .await;
    }
    Ok(Action::requeue(if running { RESYNC } else { CONVERGING }))
}

/// Makes sure the credentials Secret exists, applies the headless Service and the StatefulSet,
/// and lists the database's pods. Returns the StatefulSet as the API server stored it (with
/// its status) and the pods.
async fn ensure_children(db: &Database, ctx: &Context) -> Result<(StatefulSet, Vec<Pod>), Error> {
    let namespace = db.namespace().ok_or(Error::MissingNamespace)?;
    ensure_secret(db, &namespace, ctx).await?;

    let apply = PatchParams::apply(CONTROLLER_NAME).force();
    let services: Api<Service> = Api::namespaced(ctx.client.clone(), &namespace);
    let service = objects::headless_service(db)?;
    services
        .patch(&objects::service_name(db), &apply, &Patch::Apply(&service))
        .await?;

    let sets: Api<StatefulSet> = Api::namespaced(ctx.client.clone(), &namespace);
    let sts = objects::stateful_set(db)?;
    let sts = sets
        .patch(&db.name_any(), &apply, &Patch::Apply(&sts))
        .await?;

    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
    let selector = ListParams::default().labels(&objects::label_selector(db));
    let pods = pods.list(&selector).await?.items;
    Ok((sts, pods))
}

/// Creates the credentials Secret with a fresh random password when it does not exist. An
/// existing Secret is never changed: the database's data directory was initialised with its
/// password. A Secret made by someone else is used as it is when it has a `password` key,
/// which is how to choose the password yourself.
async fn ensure_secret(db: &Database, namespace: &str, ctx: &Context) -> Result<(), Error> {
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), namespace);
    let name = objects::secret_name(db);
    match secrets.get_opt(&name).await? {
        Some(existing) if objects::secret_has_password(&existing) => Ok(()),
        Some(_) => Err(Error::InvalidSecret(name)),
        None => {
            let secret = objects::secret(db, objects::generate_password())?;
            let params = PostParams {
                field_manager: Some(CONTROLLER_NAME.into()),
                ..PostParams::default()
            };
            match secrets.create(&params, &secret).await {
                Ok(_) => {
                    publish(
                        ctx,
                        db,
                        EventType::Normal,
                        "SecretCreated",
                        "CreateSecret",
                        format!("generated the root password in Secret {name}"),
                    )
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
    api: &Api<Database>,
    obj: &Database,
    status: &DatabaseStatus,
) -> Result<(), kube::Error> {
    let patch = serde_json::json!({
        "apiVersion": Database::api_version(&()),
        "kind": Database::kind(&()),
        "status": status,
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(CONTROLLER_NAME).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

/// Deletes the database's data volumes before the `Database` is gone: the PVCs created from
/// the StatefulSet's claim template outlive the StatefulSet, so owner references do not
/// remove them. Everything else the `Database` owns is garbage-collected by Kubernetes.
async fn cleanup(obj: Arc<Database>, ctx: &Context) -> Result<Action, Error> {
    let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
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
    publish(ctx, &obj, EventType::Normal, "Deleting", "Cleanup", note).await;
    Ok(Action::await_change())
}

/// Decides when to retry after [`reconcile`] failed: [`backoff`] over the object's consecutive
/// failures, which the next success resets.
pub fn error_policy(obj: Arc<Database>, err: &Error, ctx: Arc<Context>) -> Action {
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

/// Runs the controller until `mgr.shutdown` is cancelled: watches `Database` objects and the
/// StatefulSets and Services this operator made (label `app.kubernetes.io/managed-by`), in
/// `mgr.namespace` when set, else in every namespace; reconciles each `Database` when it or
/// one of its children changes, and records every reconciliation in the manager's metrics.
///
/// Errors when `Database` objects cannot be listed, usually because the CRD is not installed
/// (`make install`) or RBAC does not allow it.
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
    fn api<K>(mgr: &Manager) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match &mgr.namespace {
            Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
            None => Api::all(mgr.client.clone()),
        }
    }
    let databases: Api<Database> = api(&mgr);
    if let Err(err) = databases.list(&ListParams::default().limit(1)).await {
        anyhow::bail!(
            "{CONTROLLER_NAME}: cannot list databases.database.example.com ({err}); is the CRD installed (`make install`)?"
        );
    }
    let ctx = Arc::new(Context::new(mgr.client.clone()));
    let metrics = mgr.metrics.clone();
    let children = watcher::Config::default().labels(&format!(
        "app.kubernetes.io/managed-by={}",
        objects::MANAGED_BY
    ));
    Controller::new(databases, watcher::Config::default())
        .owns(api::<StatefulSet>(&mgr), children.clone())
        .owns(api::<Service>(&mgr), children)
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
    obj: &Database,
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

fn object_key(obj: &Database) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::v1::{DatabaseSpec, Engine};
    use http::{Request, Response};
    use kube::client::Body;
    use serde_json::{Value, json};
    use tokio::time::timeout;
    use tower_test::mock;

    type Handle = mock::Handle<Request<Body>, Response<Body>>;

    const WAIT: Duration = Duration::from_secs(5);
    const UID: &str = "6b0e2f51-3f7a-4c1e-9a53-0d6c2a7f4e10";

    /// Whether a query string is that of a forced server-side apply by this controller.
    fn is_forced_apply(query: &str) -> bool {
        let params: Vec<&str> = query.split('&').collect();
        params.contains(&"fieldManager=database-controller") && params.contains(&"force=true")
    }

    /// A context whose client talks to a mocked API server, and the handle that plays it.
    fn mocked() -> (Arc<Context>, Handle) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (
            Arc::new(Context::new(Client::new(service, "default"))),
            handle,
        )
    }

    /// The test object: MySQL 8.0 with 3 replicas, `test` in `default`, at generation 3,
    /// already carrying the finalizer.
    fn object() -> Database {
        let mut obj = Database::new(
            "test",
            DatabaseSpec {
                engine: Engine::Mysql,
                version: "8.0".into(),
                replicas: 3,
                storage: None,
                resources: None,
            },
        );
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some(UID.into());
        obj.metadata.generation = Some(3);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    /// The API path of the test object, plus `suffix`.
    fn object_path(suffix: &str) -> String {
        let (api_version, plural) = (Database::api_version(&()), Database::plural(&()));
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

    /// Takes the next request and answers it with the status code and body that `reply`
    /// computes from the request's body.
    async fn serve_with(handle: &mut Handle, reply: impl FnOnce(&Value) -> (u16, Value)) -> Seen {
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
        let (code, answer) = reply(&body);
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

    /// Answers the next request with 200 and `reply`, or with the request's own body when
    /// `reply` is `Value::Null` (what the API server does for a create or an apply).
    async fn serve(handle: &mut Handle, reply: Value) -> Seen {
        serve_with(handle, |body| {
            (200, if reply.is_null() { body.clone() } else { reply })
        })
        .await
    }

    /// An API error answer, as the API server writes it.
    fn api_error(code: u16, reason: &str, message: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "code": code, "reason": reason, "message": message,
        })
    }

    /// The credentials Secret as the API server returns it once it exists.
    fn existing_secret() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "test-credentials", "namespace": "default"},
            "type": "Opaque",
            "data": {"username": "cm9vdA==", "password": "c2VjcmV0LWZyb20tYmVmb3Jl"},
        })
    }

    fn pod_list(names: &[&str]) -> Value {
        let items: Vec<Value> = names
            .iter()
            .map(|name| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}}))
            .collect();
        json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items})
    }

    /// Runs `reconcile` on `obj` while `server` plays the API server; returns both results.
    async fn run_reconcile<T: Send + 'static>(
        obj: Database,
        server: impl FnOnce(Handle) -> tokio::task::JoinHandle<T>,
    ) -> (Result<Action, Error>, T) {
        let (ctx, handle) = mocked();
        let server = server(handle);
        let result = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung");
        (
            result,
            server.await.expect("the mocked API server panicked"),
        )
    }

    fn assert_owned_by_the_database(body: &Value) {
        let owners = &body["metadata"]["ownerReferences"];
        assert_eq!(owners.as_array().map(Vec::len), Some(1), "{owners}");
        assert_eq!(owners[0]["apiVersion"], "database.example.com/v1");
        assert_eq!(owners[0]["kind"], "Database");
        assert_eq!(owners[0]["name"], "test");
        assert_eq!(owners[0]["uid"], UID);
        assert_eq!(owners[0]["controller"], true);
    }

    #[tokio::test]
    async fn a_new_database_gets_a_secret_a_headless_service_and_a_stateful_set() {
        let (result, seen) = run_reconcile(object(), |mut handle| {
            tokio::spawn(async move {
                let mut seen = vec![
                    serve_with(&mut handle, |_| {
                        (
                            404,
                            api_error(404, "NotFound", "secrets \"test-credentials\" not found"),
                        )
                    })
                    .await,
                ];
                // Secret created, event, Service, StatefulSet (no pods yet), pods, status, event.
                for reply in [Value::Null, Value::Null, Value::Null, Value::Null] {
                    seen.push(serve(&mut handle, reply).await);
                }
                seen.push(serve(&mut handle, pod_list(&[])).await);
                seen.push(serve(&mut handle, serde_json::to_value(object()).unwrap()).await);
                seen.push(serve(&mut handle, Value::Null).await);
                seen
            })
        })
        .await;
        assert_eq!(result.unwrap(), Action::requeue(CONVERGING));
        let [
            get_secret,
            secret,
            secret_event,
            service,
            sts,
            pods,
            status,
            phase_event,
        ] = <[Seen; 8]>::try_from(seen).unwrap();

        assert_eq!(get_secret.method, "GET");
        assert_eq!(
            get_secret.path,
            "/api/v1/namespaces/default/secrets/test-credentials"
        );

        // The password is generated, random and only in the Secret.
        assert_eq!(secret.method, "POST");
        assert_eq!(secret.path, "/api/v1/namespaces/default/secrets");
        assert_eq!(secret.body["metadata"]["name"], "test-credentials");
        assert_eq!(secret.body["immutable"], true);
        assert_eq!(secret.body["stringData"]["username"], "root");
        let password = secret.body["stringData"]["password"].as_str().unwrap();
        assert_eq!(password.len(), objects::PASSWORD_LENGTH);
        assert!(
            password.chars().all(|c| c.is_ascii_alphanumeric()),
            "{password}"
        );
        assert_owned_by_the_database(&secret.body);
        assert_eq!(secret_event.body["reason"], "SecretCreated");

        assert_eq!(service.method, "PATCH");
        assert_eq!(service.path, "/api/v1/namespaces/default/services/test");
        assert!(is_forced_apply(&service.query), "{}", service.query);
        assert_eq!(service.body["apiVersion"], "v1");
        assert_eq!(service.body["kind"], "Service");
        assert_eq!(service.body["spec"]["clusterIP"], "None");
        assert_eq!(
            service.body["spec"]["ports"],
            json!([{"name": "mysql", "port": 3306, "protocol": "TCP", "targetPort": "mysql"}])
        );
        assert_eq!(
            service.body["spec"]["selector"],
            json!({"app.kubernetes.io/instance": "test", "app.kubernetes.io/name": "database"})
        );
        assert_owned_by_the_database(&service.body);

        assert_eq!(sts.method, "PATCH");
        assert_eq!(
            sts.path,
            "/apis/apps/v1/namespaces/default/statefulsets/test"
        );
        assert!(is_forced_apply(&sts.query), "{}", sts.query);
        assert_eq!(sts.body["kind"], "StatefulSet");
        assert_eq!(sts.body["spec"]["replicas"], 3);
        assert_eq!(sts.body["spec"]["serviceName"], "test");
        let container = &sts.body["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "mysql:8.0");
        assert_eq!(
            container["ports"],
            json!([{"name": "mysql", "containerPort": 3306, "protocol": "TCP"}])
        );
        assert_eq!(
            container["env"],
            json!([{"name": "MYSQL_ROOT_PASSWORD", "valueFrom": {"secretKeyRef": {
                "name": "test-credentials", "key": "password", "optional": false}}}])
        );
        assert!(
            !sts.body.to_string().contains(password),
            "the password leaked into the StatefulSet"
        );
        assert_owned_by_the_database(&sts.body);

        assert_eq!(pods.method, "GET");
        assert_eq!(pods.path, "/api/v1/namespaces/default/pods");
        assert!(
            pods.query.contains(
                "labelSelector=app.kubernetes.io%2Finstance%3Dtest%2Capp.kubernetes.io%2Fname%3Ddatabase"
            ),
            "{}",
            pods.query
        );

        assert_eq!(status.method, "PATCH");
        assert_eq!(status.path, object_path("/status"));
        assert!(is_forced_apply(&status.query), "{}", status.query);
        assert_eq!(status.body["apiVersion"], "database.example.com/v1");
        assert_eq!(status.body["kind"], "Database");
        let s = &status.body["status"];
        assert_eq!(s["phase"], "Pending");
        assert_eq!(s["nodes"], json!([]));
        assert_eq!(s["replicas"], 0);
        assert_eq!(s["readyReplicas"], 0);
        assert_eq!(s["observedGeneration"], 3);
        assert_eq!(s["conditions"][0]["type"], "Ready");
        assert_eq!(s["conditions"][0]["status"], "False");
        assert_eq!(s["conditions"][0]["reason"], "Pending");

        assert_eq!(phase_event.method, "POST");
        assert_eq!(
            phase_event.path,
            "/apis/events.k8s.io/v1/namespaces/default/events"
        );
        assert_eq!(phase_event.body["reason"], "Pending");
        assert_eq!(phase_event.body["type"], "Normal");
        assert_eq!(phase_event.body["regarding"]["name"], "test");
    }

    #[tokio::test]
    async fn an_existing_secret_is_kept_and_ready_pods_make_the_database_running() {
        let mut obj = object();
        obj.spec.engine = Engine::Postgresql;
        obj.spec.version = "16.4".into();
        obj.status = Some(DatabaseStatus {
            phase: Some(Phase::Creating),
            ..DatabaseStatus::default()
        });
        let reply = serde_json::to_value(&obj).unwrap();
        let (result, seen) = run_reconcile(obj, |mut handle| {
            tokio::spawn(async move {
                let get_secret = serve(&mut handle, existing_secret()).await;
                let service = serve(&mut handle, Value::Null).await;
                let sts = serve_with(&mut handle, |body| {
                    let mut stored = body.clone();
                    stored["metadata"]["generation"] = json!(2);
                    stored["status"] = json!({
                        "observedGeneration": 2, "replicas": 3, "readyReplicas": 3,
                        "updatedReplicas": 3, "availableReplicas": 3,
                    });
                    (200, stored)
                })
                .await;
                let pods = serve(&mut handle, pod_list(&["test-2", "test-0", "test-1"])).await;
                let status = serve(&mut handle, reply).await;
                let event = serve(&mut handle, Value::Null).await;
                [get_secret, service, sts, pods, status, event]
            })
        })
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC));
        let [get_secret, service, sts, _pods, status, event] = seen;

        // The Secret is read, not created again: the next request is the Service.
        assert_eq!(get_secret.method, "GET");
        assert_eq!(service.method, "PATCH");
        assert_eq!(service.path, "/api/v1/namespaces/default/services/test");
        assert_eq!(service.body["spec"]["ports"][0]["port"], 5432);

        let container = &sts.body["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "postgres:16.4");
        assert_eq!(container["ports"][0]["containerPort"], 5432);
        assert_eq!(container["env"][0]["name"], "POSTGRES_PASSWORD");
        assert_eq!(
            container["env"][0]["valueFrom"]["secretKeyRef"]["name"],
            "test-credentials"
        );

        let s = &status.body["status"];
        assert_eq!(s["phase"], "Running");
        assert_eq!(s["nodes"], json!(["test-0", "test-1", "test-2"]));
        assert_eq!(s["replicas"], 3);
        assert_eq!(s["readyReplicas"], 3);
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][0]["message"], "3/3 pods ready");

        assert_eq!(event.body["reason"], "Running");
        assert_eq!(event.body["type"], "Normal");
    }

    #[tokio::test]
    async fn the_stateful_set_follows_spec_replicas_and_an_unchanged_phase_sends_no_event() {
        let mut obj = object();
        obj.spec.replicas = 5; // as after `kubectl scale db test --replicas=5`
        obj.status = Some(DatabaseStatus {
            phase: Some(Phase::Creating),
            ..DatabaseStatus::default()
        });
        let reply = serde_json::to_value(&obj).unwrap();
        let (result, seen) = run_reconcile(obj, |mut handle| {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                seen.push(serve(&mut handle, existing_secret()).await);
                seen.push(serve(&mut handle, Value::Null).await);
                seen.push(
                    serve_with(&mut handle, |body| {
                        let mut stored = body.clone();
                        stored["status"] = json!({"replicas": 3, "readyReplicas": 3});
                        (200, stored)
                    })
                    .await,
                );
                seen.push(serve(&mut handle, pod_list(&["test-0", "test-1", "test-2"])).await);
                seen.push(serve(&mut handle, reply).await);
                // No event follows: the phase is still Creating.
                let next = timeout(Duration::from_millis(300), handle.next_request()).await;
                (seen, !matches!(next, Ok(Some(_))))
            })
        })
        .await;
        assert_eq!(result.unwrap(), Action::requeue(CONVERGING));
        let (seen, quiet) = seen;
        assert_eq!(seen[2].body["spec"]["replicas"], 5);
        let s = &seen[4].body["status"];
        assert_eq!(s["phase"], "Creating");
        assert_eq!(s["replicas"], 3);
        assert_eq!(s["conditions"][0]["message"], "3/5 pods ready, 3 exist");
        assert!(
            quiet,
            "an event was published though the phase did not change"
        );
    }

    #[tokio::test]
    async fn a_rejected_stateful_set_makes_the_database_failed_and_is_retried() {
        let (result, seen) = run_reconcile(object(), |mut handle| {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                seen.push(serve(&mut handle, existing_secret()).await);
                seen.push(serve(&mut handle, Value::Null).await);
                let message = "StatefulSet.apps \"test\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden";
                seen.push(
                    serve_with(&mut handle, |_| (422, api_error(422, "Invalid", message))).await,
                );
                seen.push(serve(&mut handle, serde_json::to_value(object()).unwrap()).await);
                seen.push(serve(&mut handle, Value::Null).await);
                seen
            })
        })
        .await;
        let err = result.unwrap_err();
        assert!(err.to_string().contains("is invalid"), "{err}");
        let status = &seen[3];
        assert_eq!(status.path, object_path("/status"));
        let s = &status.body["status"];
        assert_eq!(s["phase"], "Failed");
        assert_eq!(s["conditions"][0]["status"], "False");
        assert_eq!(s["conditions"][0]["reason"], "ReconcileFailed");
        assert!(
            s["conditions"][0]["message"]
                .as_str()
                .unwrap()
                .contains("Forbidden: updates to statefulset spec"),
            "{s}"
        );
        let event = &seen[4];
        assert_eq!(event.body["type"], "Warning");
        assert_eq!(event.body["reason"], "Failed");
    }

    #[tokio::test]
    async fn a_secret_without_a_password_is_reported_not_overwritten() {
        let (result, seen) = run_reconcile(object(), |mut handle| {
            tokio::spawn(async move {
                let mut secret = existing_secret();
                secret["data"] = json!({"token": "eA=="});
                let get = serve(&mut handle, secret).await;
                let status = serve(&mut handle, serde_json::to_value(object()).unwrap()).await;
                let event = serve(&mut handle, Value::Null).await;
                [get, status, event]
            })
        })
        .await;
        let err = result.unwrap_err();
        assert!(matches!(&err, Error::Finalizer(_)), "{err:?}");
        let [get, status, event] = seen;
        assert_eq!(get.method, "GET");
        assert_eq!(status.method, "PATCH", "the Secret must not be written");
        assert_eq!(status.body["status"]["phase"], "Failed");
        assert_eq!(
            status.body["status"]["conditions"][0]["message"],
            "Secret test-credentials has no `password` key: add it, or delete the Secret to have a password generated"
        );
        assert_eq!(event.body["type"], "Warning");
    }

    #[tokio::test]
    async fn reconcile_adds_the_finalizer_first() {
        let mut obj = object();
        obj.metadata.finalizers = None;
        let reply = serde_json::to_value(&obj).unwrap();
        let (result, patch) = run_reconcile(obj, |mut handle| {
            tokio::spawn(async move { serve(&mut handle, reply).await })
        })
        .await;
        assert_eq!(result.unwrap(), Action::await_change());
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
        );
    }

    #[tokio::test]
    async fn deleting_a_database_deletes_its_data_volumes_then_the_finalizer() {
        let mut obj = object();
        obj.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let reply = serde_json::to_value(&obj).unwrap();
        let claims = json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaimList", "metadata": {},
            "items": [
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data-test-0", "namespace": "default"}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data-test-1", "namespace": "default"}},
            ],
        });
        let (result, seen) = run_reconcile(obj, |mut handle| {
            tokio::spawn(async move {
                let list = serve(&mut handle, claims).await;
                let mut deletes = Vec::new();
                for name in ["data-test-0", "data-test-1"] {
                    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": name, "namespace": "default"}});
                    deletes.push(serve(&mut handle, claim).await);
                }
                let event = serve(&mut handle, Value::Null).await;
                let patch = serve(&mut handle, reply).await;
                (list, deletes, event, patch)
            })
        })
        .await;
        assert_eq!(result.unwrap(), Action::await_change());
        let (list, deletes, event, patch) = seen;
        assert_eq!(list.method, "GET");
        assert_eq!(
            list.path,
            "/api/v1/namespaces/default/persistentvolumeclaims"
        );
        assert!(list.query.contains("labelSelector="), "{}", list.query);
        let deleted: Vec<(&str, &str)> = deletes
            .iter()
            .map(|d| (d.method.as_str(), d.path.as_str()))
            .collect();
        assert_eq!(
            deleted,
            [
                (
                    "DELETE",
                    "/api/v1/namespaces/default/persistentvolumeclaims/data-test-0"
                ),
                (
                    "DELETE",
                    "/api/v1/namespaces/default/persistentvolumeclaims/data-test-1"
                ),
            ]
        );
        assert_eq!(event.body["reason"], "Deleting");
        assert_eq!(
            event.body["note"],
            "deleting Database test and its data volumes data-test-0, data-test-1"
        );
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "remove", "path": "/metadata/finalizers/0"})
        );
    }

    #[test]
    fn a_manifest_without_replicas_asks_for_one() {
        let db: Database = serde_json::from_value(json!({
            "apiVersion": "database.example.com/v1", "kind": "Database",
            "metadata": {"name": "orders"},
            "spec": {"engine": "mongodb", "version": "7.0"},
        }))
        .unwrap();
        assert_eq!(db.spec.replicas, 1);
        assert_eq!(db.spec.engine, Engine::Mongodb);
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
