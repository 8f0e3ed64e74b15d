// Copyright 2026.
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

//! The `Database` kind of API group `db.example.com`, version `v1`, served by this
//! project's aggregated API server (`src/bin/apiserver.rs`), not installed as a CRD.
//!
//! The server reads everything it serves from these types: the names, the scope, the printer
//! columns (`kubectl get`), the short names and categories, the status subresource and the
//! OpenAPI schema (`kubectl explain`, and the validation of every write). `#[derive(CustomResource)]`
//! is how kube-rs describes a kind; here it only describes it: nothing installs a CRD for it
//! (keep it out of `config/crd/kustomization.yaml`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `spec` of `Database` objects: an engine, its version and how many replicas to run.
// One printcolumn(...) per column is kube-derive's syntax.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "db.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    category = "all",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    ),
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Version", type_ = "string", json_path = ".spec.version"),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    /// The database engine.
    pub engine: Engine,
    /// The engine's version, as three numbers (`8.0.26`).
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+\.[0-9]+$"))]
    pub version: String,
    /// How many replicas to run, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
}

/// The engines the specification offers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// MySQL.
    Mysql,
    /// PostgreSQL.
    Postgresql,
    /// MongoDB.
    Mongodb,
}

/// The `status` of `Database` objects, written through the `/status` subresource (by whatever
/// runs the databases: this server only stores it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// Where the database is in its life (`Creating`, `Running`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The names of the database's pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// How many replicas run (the scale subresource's `status.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}
