// expect-error: there is no openAPIV3Schema
// expect-error: requires a schema for every version
// expect-line: 13
// crd: rejected
// crd-contains: "schema":{}
// crd() succeeds, but with `schema = "disabled"` the version has no openAPIV3Schema, and the
// API server requires one for every version of an apiextensions.k8s.io/v1 CRD.
use kube::CustomResource;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Opaque", schema = "disabled")]
pub struct OpaqueSpec {
    pub anything: String,
}
