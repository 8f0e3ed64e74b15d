// expect-error: adjacently tagged
// crd: panics
// kube-derive's crd() panics on adjacently tagged enums (`#[serde(tag, content)]`).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Message")]
pub struct MessageSpec {
    pub body: Body,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(tag = "t", content = "c")]
pub enum Body {
    Text(String),
    Binary { bytes: Vec<u8> },
}
