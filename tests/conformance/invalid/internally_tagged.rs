// expect-error: internally tagged
// expect-line: 13, 16, 17, 18
// crd: panics
// kube-derive's crd() panics on internally tagged enums (`#[serde(tag)]`): the variants'
// schemas cannot be merged into one structural schema.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Login")]
pub struct LoginSpec {
    pub auth: Auth,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(tag = "type")]
pub enum Auth {
    Basic { user: String },
    Token { token: String },
}
