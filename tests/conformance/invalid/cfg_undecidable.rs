// expect-error: the custom resource `PlatformSpec` depends on `cfg(unix)`, which rsbuilder cannot decide
// expect-line: 14
// crd: unsupported
// crd() on Linux has the field and on Windows does not: the CRD depends on the target,
// which the sources alone do not decide.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Platform")]
pub struct PlatformSpec {
    pub name: String,
    #[cfg(unix)]
    pub socket: String,
}
