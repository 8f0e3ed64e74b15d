//! The synthetic types both benchmarks derive CRDs from (`manifests.rs`: one kind per file;
//! `scale.rs`: every kind in one file).

use std::fmt::Write as _;

/// Types every kind uses: an enum and a struct (after the file's `use` lines).
pub const SHARED_TYPES: &str = r#"/// Lifecycle phase.
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Phase {
    /// Waiting to start.
    Pending,
    Running,
    Failed,
}

/// A network endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub host: String,
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
    pub tls_secret: Option<String>,
}
"#;

/// The `use` lines of a file with kinds (`common`: where [`SHARED_TYPES`] are, `None` when they
/// are in the same file).
pub fn uses(common: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(path) = common {
        writeln!(out, "use {path}::{{Endpoint, Phase}};").unwrap();
    }
    out.push_str(
        "use k8s_openapi::apimachinery::pkg::api::resource::Quantity;\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;\n\
         use kube::CustomResource;\n\
         use schemars::JsonSchema;\n\
         use serde::{Deserialize, Serialize};\n\
         use std::collections::BTreeMap;\n",
    );
    out
}

/// One kind (47 lines) named `kind`, number `i`, its own items suffixed with `sfx` (so that
/// many kinds can share a file): a spec with std, k8s-openapi and own types, a default function, an
/// enum, a nested struct, a status and a printer column.
pub fn kind(out: &mut String, kind: &str, i: usize, sfx: &str) {
    write!(
        out,
        r##"
/// {kind} is synthetic kind number {i}.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "bench{g}.example.com", version = "v1", kind = "{kind}", namespaced,
       status = "{kind}Status", shortname = "t{i}",
       printcolumn = r#"{{"name":"Phase","type":"string","jsonPath":".status.phase"}}"#)]
#[serde(rename_all = "camelCase")]
pub struct {kind}Spec {{
    /// Image to run.
    #[schemars(length(min = 1))]
    pub image: String,
    #[schemars(range(min = 0, max = 100))]
    #[serde(default = "default_replicas{sfx}")]
    pub replicas: i32,
    pub endpoints: Vec<Endpoint>,
    pub labels: BTreeMap<String, String>,
    pub memory: Option<Quantity>,
    pub mode: Mode{sfx},
    pub tuning: Option<Tuning{sfx}>,
}}

fn default_replicas{sfx}() -> i32 {{
    1
}}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode{sfx} {{
    Fast,
    Safe,
}}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tuning{sfx} {{
    pub max_connections: u32,
    pub timeout_seconds: Option<u64>,
    pub ratio: f64,
}}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {kind}Status {{
    pub phase: Option<Phase>,
    pub conditions: Vec<Condition>,
    pub observed_generation: Option<i64>,
}}
"##,
        g = i % 10
    )
    .unwrap();
}
