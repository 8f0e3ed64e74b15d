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

/// The `spec` of `Database` objects.
//
// Add your fields here. As for a CRD kind: a field's doc comment becomes its description;
// `Option<T>` and `#[serde(default)]` fields are optional, the others required; schemars
// attributes add validation that the server enforces (`#[schemars(range(min = 1, max = 10))]`,
// `#[schemars(length(max = 63))]`, `#[schemars(regex(pattern = r"^[a-z]+$"))]`). Printer columns,
// short names and categories go into `#[kube(...)]`: `printcolumn(name = "Foo", type_ = "string",
// json_path = ".spec.foo")`, `shortname = "..."`, `category = "all"`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "db.example.com",
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

/// The `status` of `Database` objects, written through the `/status` subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// An example field: replace it with your own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}
