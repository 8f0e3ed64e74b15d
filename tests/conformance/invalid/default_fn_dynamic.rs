// expect-error: default_image
// crd: unsupported
// A default function whose body is computed at run time (from the environment) cannot be
// evaluated statically.
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
    std::env::var("APP_IMAGE").unwrap_or_else(|_| "registry.example.com/app".into())
}
