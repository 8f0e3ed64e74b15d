//! A real controller loop (`controller::run` of the runtime's `Reconciler`) against the
//! in-process test cluster, as a project's scaffolded controller test runs it: create an
//! object, wait for Ready and observedGeneration, change it, delete it (cleanup runs once,
//! the finalizer goes, the owned ConfigMap is garbage-collected).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::{Api, CustomResource, CustomResourceExt, Resource, ResourceExt};
use rsbuilder_runtime::controller::{self, Context, Reconciler};
use rsbuilder_runtime::testing::{Mode, TestCluster, wait};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const WAIT: Duration = Duration::from_secs(20);

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "test.rsbuilder.dev",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus"
)]
pub struct GadgetSpec {
    pub colour: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// How the reconciler writes its Ready condition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StatusWrite {
    /// A merge patch of the status subresource.
    MergePatch,
    /// The runtime's `Context::set_ready` (server-side apply).
    SetReady,
}

/// Keeps a ConfigMap named after each Gadget, holding its colour, and counts cleanups.
struct GadgetReconciler {
    cleanups: Arc<AtomicUsize>,
    status: StatusWrite,
}

impl Reconciler for GadgetReconciler {
    type Kind = Gadget;
    const NAME: &'static str = "gadget-controller";
    const FINALIZER: Option<&'static str> = Some("test.rsbuilder.dev/finalizer");

    async fn apply(&self, gadget: Arc<Gadget>, ctx: &Context) -> anyhow::Result<Action> {
        let ns = gadget.namespace().unwrap_or_default();
        let owner = gadget
            .controller_owner_ref(&())
            .expect("a stored object has a uid");
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(gadget.name_any()),
                owner_references: Some(vec![owner]),
                ..Default::default()
            },
            data: Some([("colour".to_string(), gadget.spec.colour.clone())].into()),
            ..Default::default()
        };
        let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
        match cms.get_opt(&gadget.name_any()).await? {
            None => {
                cms.create(&PostParams::default(), &cm).await?;
            }
            Some(_) => {
                cms.patch(
                    &gadget.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&cm),
                )
                .await?;
            }
        }
        let previous = gadget
            .status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
        match self.status {
            StatusWrite::SetReady => {
                ctx.set_ready(
                    gadget.as_ref(),
                    previous,
                    true,
                    "Reconciled",
                    "the ConfigMap is up to date",
                )
                .await?;
            }
            StatusWrite::MergePatch => {
                let condition = controller::ready_condition(
                    previous,
                    gadget.metadata.generation,
                    "True",
                    "Reconciled",
                    "the ConfigMap is up to date",
                );
                let gadgets: Api<Gadget> = Api::namespaced(ctx.client.clone(), &ns);
                let status = serde_json::json!({"status": {
                    "conditions": [condition],
                    "observedGeneration": gadget.metadata.generation,
                }});
                gadgets
                    .patch_status(
                        &gadget.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(status),
                    )
                    .await?;
            }
        }
        Ok(Action::await_change())
    }

    async fn cleanup(&self, _gadget: Arc<Gadget>, _ctx: &Context) -> anyhow::Result<Action> {
        self.cleanups.fetch_add(1, Ordering::SeqCst);
        Ok(Action::await_change())
    }

    fn watches(
        &self,
        controller: Controller<Gadget>,
        mgr: &rsbuilder_runtime::Manager,
    ) -> Controller<Gadget> {
        controller.owns(mgr.api::<ConfigMap>(), Default::default())
    }
}

async fn the_controller_loop_reconciles_and_finalizes(status: StatusWrite) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .crd(Gadget::crd())
        .start()
        .await
        .unwrap();
    let mgr = cluster.manager();
    let shutdown = mgr.shutdown.clone();
    let cleanups = Arc::new(AtomicUsize::new(0));
    let running = tokio::spawn(controller::run(
        mgr,
        GadgetReconciler {
            cleanups: cleanups.clone(),
            status,
        },
    ));
    let gadgets: Api<Gadget> = Api::default_namespaced(cluster.client());
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    gadgets
        .create(
            &PostParams::default(),
            &Gadget::new(
                "g",
                GadgetSpec {
                    colour: "red".into(),
                },
            ),
        )
        .await
        .unwrap();
    let ready = match wait::until(&gadgets, "g", WAIT, "be Ready", wait::is_ready).await {
        Ok(r) => r,
        Err(e) if running.is_finished() => panic!("{e}\nthe controller ended: {:?}", running.await),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(ready.finalizers(), ["test.rsbuilder.dev/finalizer"]);
    if status == StatusWrite::SetReady {
        // set_ready's apply is recorded as the controller's Apply of status.
        let entries = ready.metadata.managed_fields.clone().unwrap_or_default();
        let status_apply = entries
            .iter()
            .find(|e| e.operation.as_deref() == Some("Apply"))
            .unwrap_or_else(|| panic!("no Apply entry in {entries:?}"));
        assert_eq!(status_apply.subresource.as_deref(), Some("status"));
        let fields = &status_apply.fields_v1.as_ref().unwrap().0;
        assert!(fields["f:status"].get("f:conditions").is_some(), "{fields}");
    }
    assert_eq!(ready.status.unwrap().observed_generation, Some(1));
    let cm = cms.get("g").await.unwrap();
    assert_eq!(cm.data.unwrap()["colour"], "red");
    assert_eq!(
        cm.metadata.owner_references.unwrap()[0].uid,
        ready.metadata.uid.unwrap()
    );

    gadgets
        .patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"colour": "blue"}})),
        )
        .await
        .unwrap();
    let again = wait::until(&gadgets, "g", WAIT, "be Ready for generation 2", |g| {
        wait::is_ready(g) && g.metadata.generation == Some(2)
    })
    .await
    .unwrap();
    assert_eq!(again.status.unwrap().observed_generation, Some(2));
    wait::until(&cms, "g", WAIT, "hold the new colour", |c| {
        c.data.as_ref().is_some_and(|d| d["colour"] == "blue")
    })
    .await
    .unwrap();

    gadgets.delete("g", &DeleteParams::default()).await.unwrap();
    wait::until_gone(&gadgets, "g", WAIT).await.unwrap();
    wait::until_gone(&cms, "g", WAIT).await.unwrap();
    // A stale copy of the deleted object may still reach the controller; cleanup stays at one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    shutdown.cancel();
    tokio::time::timeout(WAIT, running)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_controller_writing_its_status_with_a_merge_patch_reconciles_and_finalizes() {
    the_controller_loop_reconciles_and_finalizes(StatusWrite::MergePatch).await;
}

#[tokio::test]
async fn a_controller_using_set_ready_reconciles_and_finalizes() {
    the_controller_loop_reconciles_and_finalizes(StatusWrite::SetReady).await;
}
