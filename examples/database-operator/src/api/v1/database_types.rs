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

//! The `Database` custom resource of API group `database.example.com`, version `v1`.
//!
//! These Rust types are the single source of the CRD in
//! `config/crd/bases/database.example.com_databases.yaml`: `rsbuilder manifests` (or `make manifests`)
//! reads them, without compiling, and writes the object that `Database::crd()` returns.
//! Edit the types, then run it again.

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a `Database` object: its `spec`.
///
/// `kubectl scale database <name> --replicas=3` writes `spec.replicas` through the scale
/// subresource; the controller makes the StatefulSet follow it.
//
// The printer columns use kube-derive's JSON form: with the structured form
// (`printcolumn(name = .., type_ = "string", ..)`) clippy's `duplicated_attributes` lint
// rejects the repeated `type_ = "string"`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "database.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    ),
    printcolumn = r#"{"name":"Engine","type":"string","jsonPath":".spec.engine"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.version"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    /// The database engine: `mysql`, `postgresql` or `mongodb`.
    pub engine: Engine,
    /// The engine's version, `major.minor` or `major.minor.patch`: the tag of the engine's
    /// official image (`mysql:8.0`, `postgres:16.4`, `mongo:7.0`).
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+(\.[0-9]+)?$"))]
    pub version: String,
    /// The number of database pods, 1 to 10.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
    /// The size of each pod's data volume (`10Gi`), a PersistentVolumeClaim of the default
    /// storage class. Without it the data lives in the pod and is lost when the pod goes.
    /// Deleting the `Database` deletes its volumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Quantity>,
    /// CPU and memory requests and limits of the database container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
}

/// One replica unless `spec.replicas` says otherwise.
fn default_replicas() -> i32 {
    1
}

/// A database engine, written in lower case in the manifest.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// MySQL (image `mysql`, port 3306).
    Mysql,
    /// PostgreSQL (image `postgres`, port 5432).
    Postgresql,
    /// MongoDB (image `mongo`, port 27017).
    Mongodb,
}

/// Where a `Database` is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Phase {
    /// Accepted; no database pod exists yet.
    Pending,
    /// Pods exist, but fewer than `spec.replicas` are ready.
    Creating,
    /// All `spec.replicas` pods are ready.
    Running,
    /// The objects could not be created, or a pod cannot start (image pull or crash loop).
    Failed,
}

/// The observed state of a `Database` object: its `status`, written by the controller
/// through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// Where the database is in its life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The names of the database's pods, sorted.
    #[serde(default)]
    pub nodes: Vec<String>,
    /// The number of pods the StatefulSet has (read by `kubectl scale` through the scale
    /// subresource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The number of those pods that are ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// The latest observations of the object's state; the controller maintains `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` that the controller last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
