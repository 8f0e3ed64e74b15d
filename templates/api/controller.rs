//! The `{{ n.kind }}` controller: reconciles each `{{ n.kind }}` (`{{ n.api_version }}`) toward its
//! `spec` and reports the outcome in its `status`.
//!
//! This file holds what is yours: `apply`, `cleanup` and what the controller watches. The
//! machinery around them is the runtime's ([`rsbuilder_runtime::controller`], tool-owned):
//! the finalizer (so `cleanup` runs once before the object is gone), retries after 409
//! Conflict, the quiet end when the object was deleted meanwhile, backoff on other errors,
//! events and metrics. `src/main.rs` starts it with `rsbuilder_runtime::controller::run`.

use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use rsbuilder_runtime::controller::{Context, Reconciler};

use {{ n.type_path }};

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/status,verbs=get;update;patch
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// How long to wait before reconciling a healthy object again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);

/// Reconciles `{{ n.kind }}` objects.
pub struct {{ n.reconciler }};

impl Reconciler for {{ n.reconciler }} {
    type Kind = {{ n.kind }};
    const NAME: &'static str = "{{ n.controller_name }}";
    const FINALIZER: Option<&'static str> = Some("{{ n.finalizer }}");

    /// Brings the world in line with `obj.spec`. An error is retried with backoff.
    async fn apply(&self, obj: Arc<{{ n.kind }}>, ctx: &Context) -> anyhow::Result<Action> {
        // 1. Fetch: `obj` is the latest version the watch delivered; read what it owns
        //    through `ctx.client` (e.g. `Api::<Deployment>::namespaced(..).get_opt(..)`).
        // 2. Observe: what exists now (child objects, an external system).
        // 3. Compare: what `obj.spec` asks for against what exists.
        // 4. Act: create, update or delete until they match (server-side apply with the
        //    field manager `Self::NAME`, and an owner reference to `obj`).
        // TODO(user): your logic here.

        // 5. Update status: `observedGeneration` and the `Ready` condition (an event when
        //    it changes).
        let ready = obj
            .status
            .as_ref()
            .and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
        let message = format!("{{ n.kind }} {} is ready", obj.name_any());
        ctx.set_ready(obj.as_ref(), ready, true, "Reconciled", &message)
            .await?;

        // 6. Requeue: look again after RESYNC, or at once on a change.
        Ok(Action::requeue(RESYNC))
    }

    /// Releases what `obj` holds outside the cluster before it is deleted (what it owns
    /// through `ownerReferences` is garbage-collected). An error keeps the object until a
    /// retry succeeds.
    async fn cleanup(&self, obj: Arc<{{ n.kind }}>, ctx: &Context) -> anyhow::Result<Action> {
        // TODO(user): delete external resources created for this object.
        let note = format!("cleaning up {{ n.kind }} {}", obj.name_any());
        ctx.publish(obj.as_ref(), EventType::Normal, "Deleting", "Cleanup", note)
            .await;
        Ok(Action::await_change())
    }

    // Reconcile a `{{ n.kind }}` again when an object it owns changes (Kubebuilder's `Owns()`);
    // add the RBAC marker for that kind too:
    //
    // fn watches(
    //     &self,
    //     controller: kube::runtime::Controller<{{ n.kind }}>,
    //     mgr: &rsbuilder_runtime::Manager,
    // ) -> kube::runtime::Controller<{{ n.kind }}> {
    //     use k8s_openapi::api::apps::v1::Deployment;
    //     controller.owns(mgr.api::<Deployment>(), Default::default())
    // }
}
