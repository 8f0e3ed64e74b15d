// expect-error: its variants are structs without fields
// expect-line: 20
// crd: rejected
// crd-contains: "anyOf"
// crd() succeeds, but an untagged enum of structs without fields gives a property without
// `type`, which a structural schema requires; the API server rejects the CRD. Flattened, the
// same enum is accepted (cases/enums_in_context.rs).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Hollow")]
pub struct HollowSpec {
    pub mode: Mode,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum Mode {
    Slow {},
    Fast {},
}
