//! Admission webhooks for `{{ n.kind }}` (`{{ n.api_version }}`): `default` (defaulting) and
//! `validate_create`, `validate_update`, `validate_delete` (validation), implementing the
//! runtime's `Defaulter` and `Validator` (`rsbuilder_runtime::webhook`, which decodes the
//! AdmissionReview, answers with the patch or the denial, and serves it over HTTPS).
//!
//! Each webhook's `+kubebuilder:webhook` marker becomes its configuration in
//! `config/webhook/manifests.yaml` (`rsbuilder manifests`); `src/main.rs` registers it at the
//! marker's path. `rsbuilder create webhook` for another webhook type of this kind adds its
//! part before the scaffold markers of this file and leaves the rest as you wrote it.

use rsbuilder_runtime::webhook::prelude::*;

use {{ n.type_path }};
// +kubebuilder:scaffold:webhook-imports

/// The webhooks of `{{ n.kind }}`.
pub struct {{ n.kind }}Webhook;
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    //! The functions called directly, then the webhooks as the API server calls them: through
    //! the runtime's in-process test cluster (`rsbuilder_runtime::testing`, rsbuilder's
    //! docs/testing.md), with the CRDs of `config/crd/bases` and the webhook configurations of
    //! `config/webhook/manifests.yaml` (`make manifests` writes both; `make test` runs it
    //! first).

    use anyhow::Context as _;
    use kube::Api;
    use kube::api::PostParams;
    use rsbuilder_runtime::testing::{Mode, TestCluster};
    use rsbuilder_runtime::webhook::Webhooks;

    use super::*;

    /// This kind's webhooks, registered as `src/main.rs` registers them.
    #[allow(clippy::let_and_return)] // one line per webhook, as `create webhook` adds them
    fn webhooks() -> Webhooks {
        let webhooks = Webhooks::new();
        // +kubebuilder:scaffold:webhook-test-registrations
        webhooks
    }

    /// A test cluster that calls [`webhooks`] in its admission chain (in-process: envtest or
    /// a real cluster would call the deployed webhook server instead).
    async fn cluster() -> anyhow::Result<(TestCluster, Api<{{ n.kind }}>)> {
        let cluster = TestCluster::builder()
            .mode(Mode::InProcess)
            .webhooks(webhooks())
            .start()
            .await
            .context("starting the test cluster with the webhooks (run `make manifests` first)")?;
{%- if n.namespaced %}
        let api = Api::default_namespaced(cluster.client());
{%- else %}
        let api = Api::all(cluster.client());
{%- endif %}
        Ok((cluster, api))
    }

    /// An object of kind `{{ n.kind }}` named `sample`{% if !n.builtin %}, with `spec`{% endif %}.
    fn object({% if !n.builtin %}spec: serde_json::Value{% endif %}) -> {{ n.kind }} {
{%- if n.builtin %}
        let mut obj = {{ n.kind }}::default();
        obj.metadata.name = Some("sample".into());
        obj
{%- else %}
        serde_json::from_value(serde_json::json!({
            "apiVersion": "{{ n.api_version }}",
            "kind": "{{ n.kind }}",
            "metadata": {"name": "sample"},
            "spec": spec,
        }))
        .expect("a valid object")
{%- endif %}
    }
    // +kubebuilder:scaffold:webhook-tests
}
