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

//! The `AIJob` custom resource of API group `ai.example.com`, version `v1`.
//!
//! These Rust types are the single source of the CRD in
//! `config/crd/bases/ai.example.com_aijobs.yaml`: `rsbuilder manifests` (or `make manifests`)
//! reads them, without compiling, and writes the object that `AIJob::crd()` returns.
//! Edit the types, then run it again.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of an `AIJob`: which model to train, on how many GPUs per worker, and
/// how many worker Pods to run.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "ai.example.com",
    version = "v1",
    kind = "AIJob",
    namespaced,
    status = "AIJobStatus",
    printcolumn = r#"{"name":"Model","type":"string","jsonPath":".spec.modelName"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Ready","type":"integer","jsonPath":".status.readyReplicas"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct AIJobSpec {
    /// The model the workers train, e.g. `resnet50`.
    pub model_name: String,
    /// GPUs each worker Pod requests (`nvidia.com/gpu` in its resource limits).
    pub gpu_count: i32,
    /// How many worker Pods to run. The defaulting webhook sets 1 when absent; the API server
    /// and the validating webhook reject more than 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100))]
    pub replicas: Option<i32>,
}

/// The observed state of an `AIJob`, written by the controller through the status
/// subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AIJobStatus {
    /// Where the job stands: `Pending` (no worker ready yet), `ScalingUp`, `ScalingDown` or
    /// `Running` (every desired worker exists and is ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// How many worker Pods report the `Ready` condition.
    #[serde(default)]
    pub ready_replicas: i32,
    /// The latest observations of the object's state; the controller maintains `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` that the controller last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
