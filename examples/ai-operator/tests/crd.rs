// Copyright 2026 The rsbuilder authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The committed CRD is what kube-derive makes of the Rust types: `rsbuilder manifests` wrote
//! `config/crd/bases/ai.example.com_aijobs.yaml` without compiling them, and this compares it
//! with `AIJob::crd()` (as parsed values, so formatting does not matter).

use ai_operator::api::v1::AIJob;
use kube::CustomResourceExt;
use serde_json::{Value, json};

fn committed_crd() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/crd/bases/ai.example.com_aijobs.yaml"
    );
    let text = std::fs::read_to_string(path).expect("config/crd holds the AIJob CRD");
    serde_saphyr::from_str(&text).expect("the CRD is valid YAML")
}

#[test]
fn committed_crd_equals_kube_derive_crd() {
    let derived = serde_json::to_value(AIJob::crd()).unwrap();
    assert_eq!(committed_crd(), derived);
}

#[test]
fn crd_has_the_seed_spec() {
    let crd = committed_crd();
    assert_eq!(crd["metadata"]["name"], "aijobs.ai.example.com");
    assert_eq!(crd["spec"]["group"], "ai.example.com");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v1");
    assert_eq!(version["subresources"]["status"], json!({}));
    let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["properties"]["modelName"]["type"], "string");
    assert_eq!(spec["properties"]["gpuCount"]["type"], "integer");
    assert_eq!(spec["properties"]["gpuCount"]["format"], "int32");
    let replicas = &spec["properties"]["replicas"];
    assert_eq!(replicas["type"], "integer");
    assert_eq!(replicas["maximum"], 100.0);
    assert_eq!(replicas["nullable"], true);
    assert_eq!(spec["required"], json!(["gpuCount", "modelName"]));
}
