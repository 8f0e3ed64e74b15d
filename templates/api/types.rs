//! The `{{ n.kind }}` custom resource of API group `{{ n.group }}`, version `{{ n.version }}`.
//!
//! These Rust types are the single source of the CRD in
//! `config/crd/bases/{{ n.crd_file }}`: `rsbuilder manifests` (or `make manifests`)
//! reads them, without compiling, and writes the object that `{{ n.kind }}::crd()` returns.
//! Edit the types, then run it again.
{%- if !n.stored_elsewhere.is_empty() %}
//!
//! A CRD stores exactly one of its versions; {{ n.stored_elsewhere.join(", ") }} came first, so this version
//! has `storage = false`. To store `{{ n.version }}` instead, remove that here and add
//! `storage = false` to the stored version (a conversion webhook keeps other versions readable).
{%- endif %}

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `spec` of `{{ n.kind }}` objects: their desired state.
//
// Add your fields to this struct. Each becomes a property of `spec` in the CRD schema:
// - a field's doc comment (`///`) becomes the property's `description`;
// - serde attributes name the property and decide whether it is required: names are camelCase
//   (`rename_all` below), `Option<T>` and `#[serde(default)]` fields are optional, the others
//   are required;
// - schemars attributes add validation: `#[schemars(range(min = 1, max = 100))]`,
//   `#[schemars(length(max = 63))]`, `#[schemars(regex(pattern = r"^[a-z]+$"))]`;
// - CEL rules: derive `kube::KubeSchema` instead of `JsonSchema` and write
//   `#[x_kube(validation = "self.minReplicas <= self.maxReplicas")]` on the struct or a field.
//
// `Default` is derived so that tests can build objects (`{{ n.kind }}Spec::default()`); keep every
// field type `Default`, or change those tests.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "{{ n.group }}",
    version = "{{ n.version }}",
    kind = "{{ n.kind }}",
{%- if n.plural_overridden %}
    plural = "{{ n.plural }}",
{%- endif %}
{%- if n.namespaced %}
    namespaced,
{%- endif %}
{%- if !n.stored_elsewhere.is_empty() %}
    storage = false,
{%- endif %}
    status = "{{ n.kind }}Status"
)]
#[serde(rename_all = "camelCase")]
pub struct {{ n.kind }}Spec {
{%- if let Some(d) = n.deploy %}
    /// How many Pods of the operand to run. The range is Kubebuilder's deploy-image default:
    /// widen it as far as your operand scales.
    #[schemars(range(min = 1, max = 3))]
    pub size: i32,
{%- if let Some(port) = d.port %}
    /// The port the operand's container listens on.
    #[serde(default = "default_container_port")]
    pub container_port: i32,
{%- endif %}
{%- else %}
    /// An example field: replace it with your own. Being an `Option`, it is not required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
{%- endif %}
}
{%- if let Some(d) = n.deploy %}
{%- if let Some(port) = d.port %}

/// `spec.containerPort` when the object does not set it (`create api --image-container-port`).
fn default_container_port() -> i32 {
    {{ port }}
}
{%- endif %}
{%- endif %}

/// The `status` of `{{ n.kind }}` objects: their observed state, written by the controller
/// through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {{ n.kind }}Status {
    /// The latest observations of the object's state; the controller maintains `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` that the controller last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
