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

//! The `CronJob` custom resource of API group `batch.tutorial.kubebuilder.io`, version `v1`:
//! run a Job on a cron schedule. This version is the hub of the conversions (see
//! `src/webhook/v1/cronjob_conversion.rs`) and the version the API server stores.
//!
//! `rsbuilder manifests` reads these types, without compiling, and writes
//! `config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml`.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a `CronJob` asks for: a Job template and when to run it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "batch.tutorial.kubebuilder.io",
    version = "v1",
    kind = "CronJob",
    namespaced,
    status = "CronJobStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// When to run the Job, in cron format: five fields (minute, hour, day of month, month,
    /// day of week) or a nickname such as `@hourly`.
    #[schemars(length(min = 0))]
    pub schedule: String,

    /// How many seconds after its scheduled time a run may still start; a run missed by
    /// more is skipped. No limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub starting_deadline_seconds: Option<i64>,

    /// What to do when a run is due while an earlier Job still runs: `Allow` (the default)
    /// runs both, `Forbid` skips the new run, `Replace` deletes the running Job first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,

    /// Stops new runs (Jobs already started go on). Defaults to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,

    /// The Job each run creates.
    pub job_template: JobTemplateSpec,

    /// How many succeeded Jobs to keep (3 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub successful_jobs_history_limit: Option<i32>,

    /// How many failed Jobs to keep (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub failed_jobs_history_limit: Option<i32>,
}

/// How runs of one `CronJob` may overlap.
//
// An enum of unit variants is a string enum in the schema: the API server accepts only these
// three values (Kubebuilder's `+kubebuilder:validation:Enum`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Runs may overlap.
    #[default]
    Allow,
    /// A run due while another Job is active is skipped.
    Forbid,
    /// A run due while another Job is active deletes that Job and starts anew.
    Replace,
}

/// What the controller observed, written through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// The Jobs of this `CronJob` that are still running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,

    /// When the latest Job was scheduled to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,

    /// The latest observations of the object's state; the controller maintains `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,

    /// The `metadata.generation` that the controller last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
