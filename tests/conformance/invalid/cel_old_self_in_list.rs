// expect-error: the rule reads oldSelf, but the list .spec.steps is not of type map
// expect-line: 13
// crd: rejected
// crd-contains: "rule":"self.name == oldSelf.name"
// crd() succeeds, but a transition rule (one reading `oldSelf`) on the items of an atomic
// list cannot pair old and new items, and the API server refuses it.
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Pipeline")]
pub struct PipelineSpec {
    pub steps: Vec<Step>,
}

#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug)]
#[x_kube(validation = "self.name == oldSelf.name")]
pub struct Step {
    pub name: String,
    pub image: String,
}
