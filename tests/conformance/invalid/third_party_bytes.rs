// expect-error: not a valid JSONSchemaProps
// expect-line: 11
// crd: panics
// crd() panics on `bytes::Bytes`: its schema's `type` is ["array", "string"], and a CRD schema's `type` is one string.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Blob")]
pub struct BlobSpec {
    pub value: bytes::Bytes,
}
