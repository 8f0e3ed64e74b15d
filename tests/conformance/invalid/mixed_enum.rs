// expect-error: unit
// crd: panics
// kube-derive's crd() panics on enums mixing unit variants with struct/tuple variants.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Mixed")]
pub struct MixedSpec {
    pub choice: Choice,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Choice {
    Nothing,
    Something { value: String },
}
