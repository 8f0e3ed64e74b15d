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

//! The CRD in `config/crd/bases/`, written by `rsbuilder manifests` from the sources without
//! compiling them, is the object kube-derive's `Database::crd()` returns, and it carries the
//! specification's validation, subresources, short name and printer columns.

use database_operator::api::v1::Database;
use kube::CustomResourceExt;
use serde_json::{Value, json};

const CRD_FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/config/crd/bases/database.example.com_databases.yaml"
);

fn crd() -> Value {
    serde_json::to_value(Database::crd()).expect("the CRD serializes")
}

#[test]
fn the_generated_crd_file_is_what_crd_returns() {
    let text = std::fs::read_to_string(CRD_FILE).expect("run `rsbuilder manifests` first");
    let file: Value = serde_saphyr::from_str(&text).expect("the CRD file is YAML");
    assert_eq!(file, crd());
}

#[test]
fn spec_validation_is_the_seeds() {
    let crd = crd();
    let version = &crd["spec"]["versions"][0];
    let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], json!(["engine", "version"]));
    let fields = &spec["properties"];
    assert_eq!(fields["engine"]["type"], "string");
    assert_eq!(
        fields["engine"]["enum"],
        json!(["mysql", "postgresql", "mongodb"])
    );
    assert_eq!(fields["version"]["pattern"], r"^[0-9]+\.[0-9]+(\.[0-9]+)?$");
    assert_eq!(fields["replicas"]["type"], "integer");
    assert_eq!(fields["replicas"]["minimum"], 1.0);
    assert_eq!(fields["replicas"]["maximum"], 10.0);
    assert_eq!(fields["replicas"]["default"], 1);
    assert_eq!(fields["storage"]["x-kubernetes-int-or-string"], true);
}

#[test]
fn status_and_scale_subresources_short_name_and_columns() {
    let crd = crd();
    assert_eq!(crd["metadata"]["name"], "databases.database.example.com");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["names"]["shortNames"], json!(["db"]));
    let version = &crd["spec"]["versions"][0];
    assert_eq!(
        version["subresources"],
        json!({
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        })
    );
    let columns: Vec<(&str, &str, &str)> = version["additionalPrinterColumns"]
        .as_array()
        .expect("printer columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["type"].as_str().unwrap(),
                c["jsonPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Engine", "string", ".spec.engine"),
            ("Version", "string", ".spec.version"),
            ("Replicas", "integer", ".spec.replicas"),
            ("Phase", "string", ".status.phase"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    );
    let status = &version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
    assert_eq!(
        status["phase"]["enum"],
        json!(["Pending", "Creating", "Running", "Failed"])
    );
    assert_eq!(status["nodes"]["items"]["type"], "string");
}
