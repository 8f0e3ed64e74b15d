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

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `spec` of `Database` objects: their desired state.
//
// Add your fields to this struct. Each becomes a property of `spec` in the CRD schema:
// - a field's doc comment (`///`) becomes the property's `description`;
// - serde attributes name the property and decide whether it is required: names are camelCase
//   (`rename_all` below), `Option<T>` and `#[serde(default)]` fields are optional, the others
//   are required;
// - schemars attributes add validation: `#[schemars(range(min = 1, max = 100))]`,
//   `#[schemars(length(max = 63))]`, `#[schemars(regex(pattern = r"^[a-z]+$"))]`;
// - CEL rules: derive `kube::KubeSchema` instead of `JsonSchema` and write
//   `#[x_kube(validation = "self.minReplicas <= self.maxReplicas")]` on the struct or a field.
//
// `Default` is derived so that tests can build objects (`DatabaseSpec::default()`); keep every
// field type `Default`, or change those tests.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "database.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    /// An example field: replace it with your own. Being an `Option`, it is not required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// The `status` of `Database` objects: their observed state, written by the controller
/// through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// The latest observations of the object's state; the controller maintains `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` that the controller last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
