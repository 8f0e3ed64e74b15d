// expect-error: default_image
// crd: unsupported
// A default function whose body is computed at runtime cannot be evaluated statically.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Dynamic")]
pub struct DynamicSpec {
    #[serde(default = "default_image")]
    pub image: String,
}

fn default_image() -> String {
    format!("registry.example.com/app:{}", 1 + 2)
}
