// expect-error: additionalproperties
// expect-error: #[serde(flatten)]
// expect-line: 18
// crd: rejected
// crd-contains: "additionalProperties":{"type":"string"}
// crd() succeeds, but a map of strings flattened into a struct gives the struct both
// `properties` and `additionalProperties`, which the API server says are mutually exclusive.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Labelled")]
pub struct LabelledSpec {
    pub id: u32,
    #[serde(flatten)]
    pub extra: BTreeMap<String, String>,
}
