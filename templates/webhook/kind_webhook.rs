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
    use super::*;

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
