//! The `{{ n.kind }}` controller: reconciles objects of `{{ n.kind }}` (`{{ n.api_version }}`),
//! a kind another project defines and installs ({{ n.source }}).
//!
//! This project does not own `{{ n.kind }}` objects: change only what your controller is
//! responsible for (an annotation, a label), preferably with a patch. The machinery around
//! `apply` is the runtime's ([`rsbuilder_runtime::controller`], tool-owned): retries after
//! 409 Conflict, the quiet end when the object was deleted meanwhile, backoff on other errors,
//! metrics. `src/main.rs` starts it with `rsbuilder_runtime::controller::run`, which stops with
//! an error when the kind's CRD is not installed in the cluster.

use std::sync::Arc;

use kube::runtime::controller::Action;
use rsbuilder_runtime::controller::{Context, Reconciler, object_key};

use {{ n.type_path }};

// +kubebuilder:rbac:groups={{ n.group }},resources={{ n.plural }},verbs=get;list;watch;update;patch
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
        // 2. Observe and 3. compare: `obj.spec` (and `obj.status`, which the other project's
        //    controller writes) against what your controller wants.
        // 4. Act: patch only your part, e.g. `Api::<{{ n.kind }}>` on `ctx.client` with a merge
        //    patch (`Patch::Merge`, field manager `Self::NAME`).
        // 5. Report with events: `ctx.publish(obj.as_ref(), ..)`.
        // TODO(user): your logic here.
        tracing::debug!(object = %object_key(obj.as_ref()), "reconciling");
        let _ = ctx;

        // 6. Requeue: look again on the next change.
        Ok(Action::await_change())
    }
}
