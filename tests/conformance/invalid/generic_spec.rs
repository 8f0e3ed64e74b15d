// expect-error: generic
// crd: does-not-compile
// kube-derive does not support generic spec types (the generated root has no parameters).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Generic")]
pub struct GenericSpec<T> {
    pub value: T,
}
