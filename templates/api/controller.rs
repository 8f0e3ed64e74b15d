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

#[cfg(test)]
mod tests {
    //! The controller against the runtime's in-process test cluster
    //! (`rsbuilder_runtime::testing`, rsbuilder's docs/testing.md): the real controller loop,
    //! the project's CRDs from `config/crd/bases` (`make manifests` writes them; `make test`
    //! runs it first) and the kind's sample:
    //! `{{ n.sample_path }}`.
    //! `RSBUILDER_TEST_CLUSTER=envtest` runs the same test on a real kube-apiserver.

    use std::time::Duration;

    use anyhow::Context as _;
    use kube::Api;
    use kube::api::{DeleteParams, PostParams};
    use rsbuilder_runtime::testing::{TestCluster, wait};

    use super::*;

    /// How long the controller may take for each step.
    const WAIT: Duration = Duration::from_secs(30);

    /// The sample, as `kubectl apply -f` would create it.
    fn sample() -> anyhow::Result<{{ n.kind }}> {
        let path = "{{ n.sample_path }}";
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        let yaml: serde_json::Value =
            serde_saphyr::from_str(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        serde_json::from_value(yaml).with_context(|| format!("{path}: does not decode as {{ n.kind }}"))
    }

    /// Creates the sample, waits for `Ready` with `observedGeneration` equal to its
    /// generation, deletes it and waits until it is gone: `cleanup` ran and the runtime took
    /// the finalizer off.
    #[tokio::test]
    async fn the_sample_becomes_ready_and_is_cleaned_up_on_delete() -> anyhow::Result<()> {
        let cluster = TestCluster::start()
            .await
            .context("starting the test cluster (`make manifests` writes config/crd/bases)")?;
        let mgr = cluster.manager();
        let shutdown = mgr.shutdown.clone();
        let running = tokio::spawn(rsbuilder_runtime::controller::run(mgr, {{ n.reconciler }}));
{%- if n.namespaced %}
        let api: Api<{{ n.kind }}> = Api::default_namespaced(cluster.client());
{%- else %}
        let api: Api<{{ n.kind }}> = Api::all(cluster.client());
{%- endif %}
        let obj = sample()?;
        let name = obj.name_any();
        api.create(&PostParams::default(), &obj)
            .await
            .with_context(|| format!("creating {name}; is its CRD in config/crd/bases?"))?;

        let ready = match wait::until(&api, &name, WAIT, "be Ready", wait::is_ready).await {
            Ok(obj) => obj,
            // The loop ended early (an error at its start, a panic): how it ended says why.
            Err(e) if running.is_finished() => {
                return Err(e.context(format!("the controller ended: {:?}", running.await)));
            }
            Err(e) => return Err(e),
        };
        assert_eq!(ready.finalizers(), ["{{ n.finalizer }}"]);
        assert_eq!(
            ready.status.as_ref().and_then(|s| s.observed_generation),
            ready.metadata.generation
        );

        api.delete(&name, &DeleteParams::default()).await?;
        wait::until_gone(&api, &name, WAIT).await?;
        shutdown.cancel();
        running.await??;
        Ok(())
    }
}
