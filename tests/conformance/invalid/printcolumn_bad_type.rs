// expect-error: #[kube(printcolumn)]
// expect-error: the type "text" of column "Size" is not one of boolean, date, integer, number, string
// crd: rejected
// crd-contains: "type":"text"
// crd() succeeds, but a printer column's type must be one the API server knows.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "invalid.example.com",
    version = "v1",
    kind = "Sized",
    printcolumn = r#"{"name":"Size","type":"text","jsonPath":".spec.size"}"#
)]
pub struct SizedSpec {
    pub size: i32,
}
