// expect-error: the list map key "name" must be a required field or have a default
// expect-line: 20
// crd: rejected
// crd-contains: "x-kubernetes-list-map-keys":["name"]
// crd() succeeds, but the list map key `name` is an optional (nullable) field, and the API
// server requires list map keys to be required or defaulted, and never null.
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Router")]
pub struct RouterSpec {
    #[x_kube(merge_strategy = ListMerge::Map(vec!["name".into()]))]
    pub routes: Vec<Route>,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Route {
    pub name: Option<String>,
    pub target: String,
}
