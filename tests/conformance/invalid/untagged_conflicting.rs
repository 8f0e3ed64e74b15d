// expect-error: crd() panics
// crd: panics
// kube-derive's crd() panics when variants of an untagged enum give one property different
// schemas.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Conflict")]
pub struct ConflictSpec {
    pub value: Either,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum Either {
    Text { inner: String },
    Number { inner: u32 },
}
