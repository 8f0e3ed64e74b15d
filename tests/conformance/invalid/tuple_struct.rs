// expect-error: tuple
// expect-error: .spec.origin
// expect-line: 15
// crd: rejected
// crd-contains: "items":[
// crd() succeeds, but a tuple struct of several fields is a fixed-position array, whose
// `items` list the API server rejects.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Plot")]
pub struct PlotSpec {
    pub origin: Point,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Point(pub i32, pub i32);
