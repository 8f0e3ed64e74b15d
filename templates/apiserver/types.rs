//! The `{{ n.kind }}` kind of API group `{{ n.group }}`, version `{{ n.version }}`, served by this
//! project's aggregated API server (`src/bin/apiserver.rs`), not installed as a CRD.
//!
//! The server reads everything it serves from these types: the names, the scope, the printer
//! columns (`kubectl get`), the short names and categories, the status subresource and the
//! OpenAPI schema (`kubectl explain`, and the validation of every write). `#[derive(CustomResource)]`
//! is how kube-rs describes a kind; here it only describes it: nothing installs a CRD for it
//! (keep it out of `config/crd/kustomization.yaml`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `spec` of `{{ n.kind }}` objects.
//
// Add your fields here. As for a CRD kind: a field's doc comment becomes its description;
// `Option<T>` and `#[serde(default)]` fields are optional, the others required; schemars
// attributes add validation that the server enforces (`#[schemars(range(min = 1, max = 10))]`,
// `#[schemars(length(max = 63))]`, `#[schemars(regex(pattern = r"^[a-z]+$"))]`). Printer columns,
// short names and categories go into `#[kube(...)]`: `printcolumn(name = "Foo", type_ = "string",
// json_path = ".spec.foo")`, `shortname = "..."`, `category = "all"`, and a scale subresource
// (`kubectl scale`) as `scale(spec_replicas_path = ".spec.replicas", status_replicas_path =
// ".status.replicas")` over an integer `replicas` in the spec and in the status.
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
    status = "{{ n.kind }}Status"
)]
#[serde(rename_all = "camelCase")]
pub struct {{ n.kind }}Spec {
    /// An example field: replace it with your own. Being an `Option`, it is not required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// The `status` of `{{ n.kind }}` objects, written through the `/status` subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {{ n.kind }}Status {
    /// An example field: replace it with your own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}
