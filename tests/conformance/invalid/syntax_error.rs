// expect-error: syntax error
// expect-line: 12
// crd: does-not-compile
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Broken")]
pub struct BrokenSpec {
    pub name: String,
    pub size: ,
}
