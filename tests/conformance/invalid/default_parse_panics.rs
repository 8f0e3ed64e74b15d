// expect-error: would panic
// expect-line: 14
// crd: panics
// A default whose `"…".parse::<u16>().unwrap()` fails on its literal: `crd()` calls the
// default function and panics there, so rsbuilder refuses it at the expression's line.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "invalid.example.com", version = "v1", kind = "Port")]
pub struct PortSpec {
    #[serde(default = "default_port")]
    pub port: u16,
}

fn default_port() -> u16 { "80000".parse::<u16>().unwrap() }
