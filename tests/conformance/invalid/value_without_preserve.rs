// expect-error: without a `type`
// expect-error: x-kubernetes-preserve-unknown-fields
// expect-line: 16
// crd: rejected
// crd-contains: "payload":{}
// crd() succeeds, but a bare serde_json::Value field has the schema `{}`; the API server
// requires a type on every field unless it preserves unknown fields.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Blob")]
pub struct BlobSpec {
    pub name: String,
    pub payload: serde_json::Value,
}
