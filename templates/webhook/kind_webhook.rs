//! Admission webhooks for `{{ n.kind }}` (`{{ n.api_version }}`).
//!
//! Each webhook has three parts: a `+kubebuilder:webhook` marker comment (which
//! `rsbuilder manifests` turns into `config/webhook/manifests.yaml`), an axum handler that
//! `crate::webhook::router` serves at the marker's path, and a plain function with your logic.
//! Edit the plain functions:
//!
//! - `default` sets default values before the object is stored (defaulting webhook);
//! - `validate_create`, `validate_update` and `validate_delete` admit or reject the object
//!   (validating webhook); rules shared by create and update go in `validate_spec`.
//!
//! `rsbuilder create webhook` for another webhook type of this kind adds its part before the
//! scaffold markers of this file and leaves the rest as you wrote it.

use axum::body::Bytes;
{%- if n.builtin %}
use {{ n.type_path }};
{%- endif %}

{% if !n.builtin -%}
use {{ n.type_path }};
{% endif -%}
use crate::webhook::ReviewResponse;
// +kubebuilder:scaffold:webhook-imports
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// An object of kind `{{ n.kind }}` as the API server sends it{% if n.builtin %}, with `labels`{% else %}, with `spec`{% endif %}.
    fn object({% if n.builtin %}labels{% else %}spec{% endif %}: Value) -> Value {
        json!({
            "apiVersion": "{{ n.api_version }}",
            "kind": "{{ n.kind }}",
            "metadata": {
                "name": "sample",
{%- if n.namespaced %}
                "namespace": "default",
{%- endif %}
                "uid": "5e2c1f0a-0000-4000-8000-000000000001",
{%- if n.builtin %}
                "labels": labels,
{%- endif %}
            },
{%- if !n.builtin %}
            "spec": spec,
{%- endif %}
        })
    }

    /// An AdmissionReview request for `operation` with the new and the old object.
    fn review(operation: &str, object: Value, old_object: Value) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "0b0a4b9e-0000-4000-8000-000000000002",
                "kind": {"group": "{{ n.api_group }}", "version": "{{ n.version }}", "kind": "{{ n.kind }}"},
                "resource": {"group": "{{ n.api_group }}", "version": "{{ n.version }}", "resource": "{{ n.plural }}"},
                "name": "sample",
{%- if n.namespaced %}
                "namespace": "default",
{%- endif %}
                "operation": operation,
                "userInfo": {"username": "kubernetes-admin"},
                "object": object,
                "oldObject": old_object,
                "dryRun": false,
            },
        })
    }

    /// The `response` of a handler's answer, as JSON.
    fn response(answer: ReviewResponse) -> Value {
        serde_json::to_value(answer.0).expect("the review serializes")["response"].clone()
    }

    /// Decodes an object of kind `{{ n.kind }}`.
    fn typed(object: Value) -> {{ n.kind }} {
        serde_json::from_value(object).expect("a valid object")
    }
    // +kubebuilder:scaffold:webhook-tests
}
