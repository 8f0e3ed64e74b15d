// expect-error: tuple
// expect-error: items must be a schema object
// expect-line: 17
// crd: rejected
// crd-contains: "items":[
// crd() succeeds, but a tuple's schema lists one `items` schema per position, and the API
// server accepts only a single `items` schema.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Paired")]
#[serde(rename_all = "camelCase")]
pub struct PairedSpec {
    pub name: String,
    pub pair: (String, i32),
}
