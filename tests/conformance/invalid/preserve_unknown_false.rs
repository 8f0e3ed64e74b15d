// expect-error: x-kubernetes-preserve-unknown-fields: false
// expect-line: 14
// crd: rejected
// crd-contains: "x-kubernetes-preserve-unknown-fields":false
// crd() copies the extension as written; the API server accepts only `true` (or nothing:
// pruning unknown fields is the default).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Closed")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = false))]
pub struct ClosedSpec {
    pub name: String,
}
