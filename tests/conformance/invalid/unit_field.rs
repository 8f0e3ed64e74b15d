// expect-error: can only be null
// expect-line: 15
// crd: rejected
// crd-contains: "enum":[null]
// crd() succeeds, but a unit struct (or `()`) field's schema is only `enum: [null]`, with no
// type, which the API server rejects.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Flagged")]
pub struct FlaggedSpec {
    pub name: String,
    pub marker: Marker,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Marker;
