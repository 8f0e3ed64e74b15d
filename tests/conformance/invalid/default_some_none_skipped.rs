// A nested default whose `Option<Option<T>>` field is `Some(None)` under
// `skip_serializing_if = "Option::is_none"`: serde writes it as null (it is not `None`), but
// its JSON value is that of `None`, which the predicate would skip. Found by tests/manifests/difftest.rs
// (seed 4, kind 144), where rsbuilder dropped the field from the default.
// expect-error: cannot be told apart statically
// expect-line: 16, 17
// crd: unsupported
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "x.example.com", version = "v1", kind = "Thing")]
pub struct ThingSpec {
    #[serde(default)]
    pub inner: Inner,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Inner {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Option<u16>>,
}

impl Default for Inner {
    fn default() -> Self {
        Inner { size: Some(None) }
    }
}
