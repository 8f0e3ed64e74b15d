// expect-error: storage
// crd: merge-error
// Two versions of one kind, neither marked `storage = false`: both claim to be the stored
// version, so they cannot be merged into one CRD.
pub mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(group = "invalid.example.com", version = "v1", kind = "Twice")]
    pub struct TwiceSpec {
        pub a: String,
    }
}

pub mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(group = "invalid.example.com", version = "v2", kind = "Twice")]
    pub struct TwiceSpec {
        pub a: String,
    }
}
