// expect-error: patternproperties
// expect-error: key the map by string
// expect-line: 17
// crd: rejected
// crd-contains: "patternProperties"
// crd() succeeds, but schemars describes a map with integer keys by `patternProperties`,
// which the API server does not support.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Lookup")]
#[serde(rename_all = "camelCase")]
pub struct LookupSpec {
    pub by_id: HashMap<i32, String>,
}
