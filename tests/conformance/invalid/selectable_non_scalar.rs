// expect-error: #[kube(selectable)]
// expect-error: must name a field of type string, boolean or integer, not array
// expect-line: 19
// crd: rejected
// crd-contains: "selectableFields":[{"jsonPath":".spec.tags"}]
// crd() succeeds, but a selectable field must be a string, boolean or integer field, and
// `.spec.tags` is a list.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "invalid.example.com",
    version = "v1",
    kind = "Tagged",
    selectable = ".spec.tags"
)]
pub struct TaggedSpec {
    pub tags: Vec<String>,
}
