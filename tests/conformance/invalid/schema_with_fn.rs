// expect-error: schema_with
// crd: unsupported
// `#[schemars(schema_with = "...")]` whose function has logic (here a branch on a computed
// value): rsbuilder cannot run it without compiling the crate, so `--evaluate static`
// refuses it (the default `auto` compiles it).
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
    let open = std::env::var("OPEN").is_ok();
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": open
    })
}
