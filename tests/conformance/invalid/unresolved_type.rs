// expect-error: NotDefinedAnywhere
// expect-line: 11
// crd: does-not-compile
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Unknown")]
pub struct UnknownSpec {
    pub thing: NotDefinedAnywhere,
}
