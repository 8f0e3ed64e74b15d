// expect-error: manual
// crd: unsupported
// `schema = "manual"`: the root's JsonSchema is a hand-written impl, which only runs when the
// crate is compiled.
use kube::CustomResource;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Manual", schema = "manual")]
pub struct ManualSpec {
    pub anything: String,
}

impl schemars::JsonSchema for Manual {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Manual".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true
        })
    }
}
