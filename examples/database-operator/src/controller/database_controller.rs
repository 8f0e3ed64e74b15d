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

//! The `Database` controller: watches `Database` objects (`database.example.com/v1`) and
//! reconciles each one toward its `spec`, reporting the outcome in `status` and as events.
//!
//! [`run`] is started by the manager (`src/main.rs`); put your logic in `apply` and, for
//! anything that must be released when an object is deleted, in `cleanup`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};

use crate::api::v1::Database;
use crate::manager::Manager;

/// The controller's name: the field manager of its status patches, the reporter of its events
/// and the `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "database-controller";

/// The finalizer this controller keeps on every `Database`, so that `cleanup` runs before the
/// object is gone.
pub const FINALIZER: &str = "database.example.com/finalizer";

/// How long to wait before reconciling a healthy object again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);

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

/// Brings the world in line with `obj.spec`, then records the outcome in `status` with a
/// server-side apply patch on the status subresource: `observedGeneration` and a `Ready`
/// condition.
async fn apply(obj: Arc<Database>, api: &Api<Database>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): compare `obj.spec` with what exists (child objects, external systems) and
    // create, update or delete until they match. Return an error to retry with backoff.

    let generation = obj.metadata.generation;
    let previous = obj
        .status
        .as_ref()
        .and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
    let ready = ready_condition(
        previous,
        generation,
        "True",
        "Reconciled",
        "the Database has been reconciled",
    );
    let changed = previous.is_none_or(|p| p.status != ready.status);
    let patch = serde_json::json!({
        "apiVersion": Database::api_version(&()),
        "kind": Database::kind(&()),
        "status": {
            "conditions": [ready],
            "observedGeneration": generation,
        },
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(CONTROLLER_NAME).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    if changed {
        publish(
            ctx,
            &obj,
            EventType::Normal,
            "Reconciled",
            "Reconcile",
            format!("Database {} is ready", obj.name_any()),
        )
        .await;
    }
    Ok(Action::requeue(RESYNC))
}

/// Releases what the object holds outside the cluster before it is deleted. Objects it owns
/// through `ownerReferences` are garbage-collected by Kubernetes and need nothing here.
async fn cleanup(obj: Arc<Database>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): delete external resources created for this object. Return an error to keep
    // the finalizer (and the object) until that succeeds.
    publish(
        ctx,
        &obj,
        EventType::Normal,
        "Deleting",
        "Cleanup",
        format!("cleaning up Database {}", obj.name_any()),
    )
    .await;
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

/// Runs the controller until `mgr.shutdown` is cancelled: watches `Database` objects (in
/// `mgr.namespace` when set, else in every namespace), reconciles each one, and records every
/// reconciliation in the manager's metrics.
///
/// Errors when `Database` objects cannot be listed, usually because the CRD is not installed
/// (`make install`) or RBAC does not allow it.
pub async fn run(mgr: Manager) -> anyhow::Result<()> {
    let api: Api<Database> = match &mgr.namespace {
        Some(namespace) => Api::namespaced(mgr.client.clone(), namespace),
        None => Api::all(mgr.client.clone()),
    };
    if let Err(err) = api.list(&ListParams::default().limit(1)).await {
        anyhow::bail!(
            "{CONTROLLER_NAME}: cannot list databases.database.example.com ({err}); is the CRD installed (`make install`)?"
        );
    }
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
    use crate::api::v1::DatabaseSpec;
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

    /// The test object: `test` in `default`, at generation 3, already carrying the finalizer.
    fn object() -> Database {
        let mut obj = Database::new("test", DatabaseSpec::default());
        obj.metadata.namespace = Some("default".into());
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
    struct Seen {
        method: String,
        path: String,
        query: String,
        body: Value,
    }

    /// Takes the next request and answers it with `reply`, or with the request's own body when
    /// `reply` is `Value::Null` (what the API server does for a create).
    async fn serve(handle: &mut Handle, reply: Value) -> Seen {
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
                .status(200)
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
    async fn reconcile_applies_ready_status_and_publishes_an_event() {
        let (ctx, mut handle) = mocked();
        let obj = object();
        let reply = serde_json::to_value(&obj).unwrap();
        let server = tokio::spawn(async move {
            let status = serve(&mut handle, reply).await;
            let event = serve(&mut handle, Value::Null).await;
            (status, event)
        });
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        let (status, event) = server.await.unwrap();

        assert_eq!(action, Action::requeue(RESYNC));
        assert_eq!(status.method, "PATCH");
        assert_eq!(status.path, object_path("/status"));
        assert!(
            status.query.contains("fieldManager=database-controller")
                && status.query.contains("force=true"),
            "{}",
            status.query
        );
        assert_eq!(status.body["apiVersion"], "database.example.com/v1");
        assert_eq!(status.body["kind"], "Database");
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
        assert_eq!(event.body["regarding"]["kind"], "Database");
        assert_eq!(event.body["regarding"]["name"], "test");
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

    #[tokio::test]
    async fn reconcile_of_a_deleted_object_cleans_up_and_removes_the_finalizer() {
        let (ctx, mut handle) = mocked();
        let mut obj = object();
        obj.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let reply = serde_json::to_value(&obj).unwrap();
        let server = tokio::spawn(async move {
            let event = serve(&mut handle, Value::Null).await;
            let patch = serve(&mut handle, reply).await;
            (event, patch)
        });
        let action = timeout(WAIT, reconcile(Arc::new(obj), ctx))
            .await
            .expect("reconcile hung")
            .expect("reconcile failed");
        let (event, patch) = server.await.unwrap();

        assert_eq!(action, Action::await_change());
        assert_eq!(event.body["reason"], "Deleting");
        assert_eq!(patch.method, "PATCH");
        assert_eq!(patch.path, object_path(""));
        assert_eq!(
            patch.body[1],
            json!({"op": "remove", "path": "/metadata/finalizers/0"})
        );
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    }
}
