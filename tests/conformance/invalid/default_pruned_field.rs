// expect-error: has the field .computed that the schema does not specify
// expect-line: 16
// crd: rejected
// crd-contains: "computed":0
// crd() succeeds, but the default is the serialized `Default` value, which holds the
// `skip_deserializing` field that the (deserialize) schema leaves out; the API server would
// prune it from the default, so it refuses the CRD.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Tuned")]
pub struct TunedSpec {
    #[serde(default)]
    pub tuning: Tuning,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct Tuning {
    pub level: u32,
    #[serde(skip_deserializing)]
    pub computed: u32,
}
