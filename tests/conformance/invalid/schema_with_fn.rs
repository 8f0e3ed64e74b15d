// expect-error: schema_with
// crd: unsupported
// `#[schemars(schema_with = "...")]` runs a function at runtime; rsbuilder cannot evaluate it
// without compiling the crate.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Custom")]
pub struct CustomSpec {
    #[schemars(schema_with = "any_object")]
    pub payload: serde_json::Value,
}

fn any_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}
