// expect-error: recursive
// expect-line: 14, 17, 18, 20
// crd: rejected
// crd-contains: $ref
// crd() succeeds but leaves a `$ref` to a definition it never emits; the API server rejects
// the CRD (a structural schema cannot be recursive).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Tree")]
pub struct TreeSpec {
    pub root: Node,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Node {
    pub name: String,
    pub children: Vec<Node>,
}
