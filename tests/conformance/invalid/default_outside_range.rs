// expect-error: does not validate against its own schema
// expect-error: below the minimum
// expect-line: 17
// crd: rejected
// crd-contains: "default":0
// crd() succeeds, but the default (0) is outside the field's own range (1 to 10), and the API
// server validates every default against the schema it sits in.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Pool")]
pub struct PoolSpec {
    #[serde(default = "default_size")]
    #[schemars(range(min = 1, max = 10))]
    pub size: i32,
}

fn default_size() -> i32 {
    0
}
