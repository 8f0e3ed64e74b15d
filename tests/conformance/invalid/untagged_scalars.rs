// expect-error: untagged
// crd: rejected
// crd-contains: "anyOf"
// crd() succeeds but the property has no `type` (anyOf of scalars), which a structural schema
// requires; the API server rejects the CRD.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Scalar")]
pub struct ScalarSpec {
    pub value: IntOrText,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum IntOrText {
    Int(i64),
    Text(String),
}
