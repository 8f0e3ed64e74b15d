// expect-error: additionalProperties must not be used if x-kubernetes-embedded-resource is set
// expect-line: 16
// crd: rejected
// crd-contains: "x-kubernetes-embedded-resource":true
// crd() succeeds, but an embedded resource is a Kubernetes object with fields, and a map
// (additionalProperties) marked x-kubernetes-embedded-resource is refused.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Wrapper")]
pub struct WrapperSpec {
    #[schemars(extend("x-kubernetes-embedded-resource" = true))]
    pub template: BTreeMap<String, String>,
}
