//! The `{{ n.kind }}` controller: reconciles objects of the built-in Kubernetes kind
//! `{{ n.kind }}` (group `{{ n.rbac_group }}`, version `{{ n.version }}`; the k8s-openapi type
//! `{{ n.type_path }}`).
//!
//! This project does not own `{{ n.kind }}` objects: change only what your controller is
//! responsible for (an annotation, a label), preferably with a patch. The machinery around
//! `apply` is the runtime's ([`rsbuilder_runtime::controller`], tool-owned): retries after
//! 409 Conflict, the quiet end when the object was deleted meanwhile, backoff on other errors,
//! metrics. `src/main.rs` starts it with `rsbuilder_runtime::controller::run`.

use std::sync::Arc;

use kube::runtime::controller::Action;
use rsbuilder_runtime::controller::{Context, Reconciler, object_key};

use {{ n.type_path }};

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// Reconciles `{{ n.kind }}` objects.
pub struct {{ n.reconciler }};

impl Reconciler for {{ n.reconciler }} {
    type Kind = {{ n.kind }};
    const NAME: &'static str = "{{ n.controller_name }}";
    // Not this project's kind: no finalizer, no cleanup.
    const FINALIZER: Option<&'static str> = None;

    /// Brings the object (or what it stands for) to the state you want. An error is retried
    /// with backoff.
    async fn apply(&self, obj: Arc<{{ n.kind }}>, ctx: &Context) -> anyhow::Result<Action> {
        // 1. Fetch: `obj` is the latest version the watch delivered.
        // 2. Observe and 3. compare: what it has against what your controller wants of it.
        // 4. Act: patch only your part, e.g. `Api::<{{ n.kind }}>` on `ctx.client` with a merge
        //    patch (`Patch::Merge`, field manager `Self::NAME`; put
        //    `metadata.resourceVersion` in the patch to get a 409 when it changed meanwhile).
        //    Avoid server-side apply here: on an object that is gone it would create it again.
        // 5. Report with events: `ctx.publish(obj.as_ref(), ..)`.
        // TODO(user): your logic here.
        tracing::debug!(object = %object_key(obj.as_ref()), "reconciling");
        let _ = ctx;

        // 6. Requeue: look again on the next change.
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
    //     use k8s_openapi::api::core::v1::ConfigMap;
    //     controller.owns(mgr.api::<ConfigMap>(), Default::default())
    // }
}
