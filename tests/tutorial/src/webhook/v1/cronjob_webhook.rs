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

//! Admission webhooks for `CronJob` (`batch.tutorial.kubebuilder.io/v1`): defaulting fills in
//! the optional fields the controller otherwise assumes, and validation rejects a schedule
//! the controller could not read and a name too long for the Jobs named after it. They
//! implement the runtime's `Defaulter` and `Validator` (`rsbuilder_runtime::webhook`, which
//! decodes the AdmissionReview, answers with the patch or the denial, and serves it over
//! HTTPS).

use rsbuilder_runtime::webhook::prelude::*;

use crate::api::v1::{ConcurrencyPolicy, CronJob};
use crate::controller::cronjob_controller::{
    DEFAULT_FAILED_HISTORY, DEFAULT_SUCCESSFUL_HISTORY, parse_schedule,
};
// +kubebuilder:scaffold:webhook-imports

/// The longest `CronJob` name: a Job is named `<name>-<unix seconds>` (11 characters more,
/// for the next few centuries), and a Job's name is a DNS-1035 label of at most 63.
pub const MAX_NAME_LENGTH: usize = 63 - 11;

/// The webhooks of `CronJob`.
pub struct CronJobWebhook;

// +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1

/// Path of the defaulting webhook; equal to the `path` of the marker above.
pub const DEFAULTING_PATH: &str = "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob";

impl Defaulter<CronJob> for CronJobWebhook {
    /// Sets what is absent: `concurrencyPolicy: Allow`, `suspend: false`, and the history
    /// limits 3 (succeeded) and 1 (failed). A value the user set stays.
    async fn default(&self, cron_job: &mut CronJob) -> Result<(), Denied> {
        let spec = &mut cron_job.spec;
        spec.concurrency_policy
            .get_or_insert(ConcurrencyPolicy::Allow);
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit
            .get_or_insert(DEFAULT_SUCCESSFUL_HISTORY);
        spec.failed_jobs_history_limit
            .get_or_insert(DEFAULT_FAILED_HISTORY);
        Ok(())
    }
}

// +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1

/// Path of the validating webhook; equal to the `path` of the marker above.
pub const VALIDATION_PATH: &str = "/validate-batch-tutorial-kubebuilder-io-v1-cronjob";

/// Rejects what the CRD schema cannot: a schedule croner cannot parse, a name too long.
impl Validator<CronJob> for CronJobWebhook {
    async fn validate_create(&self, cron_job: &CronJob) -> Validation {
        validate_cron_job(cron_job)
    }

    async fn validate_update(&self, _old: &CronJob, new: &CronJob) -> Validation {
        validate_cron_job(new)
    }
}

/// The rules of create and update; every broken rule is named in one denial, `; `-separated.
fn validate_cron_job(cron_job: &CronJob) -> Validation {
    let mut problems = Vec::new();
    let name = cron_job.metadata.name.as_deref().unwrap_or_default();
    if name.len() > MAX_NAME_LENGTH {
        problems.push(format!(
            "metadata.name: must be no more than {MAX_NAME_LENGTH} characters, got {}",
            name.len()
        ));
    }
    if let Err(why) = parse_schedule(&cron_job.spec.schedule) {
        problems.push(format!("spec.schedule: {why}"));
    }
    if problems.is_empty() {
        Ok(Vec::new())
    } else {
        Err(Denied::new(problems.join("; ")))
    }
}
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    use super::*;

    /// A `CronJob` named `name` with `spec`.
    fn object(name: &str, spec: serde_json::Value) -> CronJob {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v1",
            "kind": "CronJob",
            "metadata": {"name": name},
            "spec": spec,
        }))
        .expect("a valid object")
    }

    #[tokio::test]
    async fn default_fills_only_absent_fields() {
        let mut obj = object(
            "nightly",
            serde_json::json!({"schedule": "@daily", "jobTemplate": {}}),
        );
        CronJobWebhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.concurrency_policy, Some(ConcurrencyPolicy::Allow));
        assert_eq!(obj.spec.suspend, Some(false));
        assert_eq!(obj.spec.successful_jobs_history_limit, Some(3));
        assert_eq!(obj.spec.failed_jobs_history_limit, Some(1));

        let mut mine = object(
            "nightly",
            serde_json::json!({
                "schedule": "@daily",
                "jobTemplate": {},
                "concurrencyPolicy": "Forbid",
                "suspend": true,
                "successfulJobsHistoryLimit": 0,
                "failedJobsHistoryLimit": 7,
            }),
        );
        let before = serde_json::to_value(&mine).unwrap();
        CronJobWebhook.default(&mut mine).await.unwrap();
        assert_eq!(serde_json::to_value(&mine).unwrap(), before);
    }

    #[tokio::test]
    async fn a_valid_cron_job_is_admitted() {
        let obj = object(
            "nightly",
            serde_json::json!({"schedule": "*/1 * * * *", "jobTemplate": {}}),
        );
        assert_eq!(CronJobWebhook.validate_create(&obj).await, Ok(Vec::new()));
        assert_eq!(
            CronJobWebhook.validate_update(&obj, &obj).await,
            Ok(Vec::new())
        );
        let longest = "a".repeat(MAX_NAME_LENGTH);
        let obj = object(
            &longest,
            serde_json::json!({"schedule": "@hourly", "jobTemplate": {}}),
        );
        assert_eq!(CronJobWebhook.validate_create(&obj).await, Ok(Vec::new()));
    }

    #[tokio::test]
    async fn a_bad_schedule_and_a_long_name_are_rejected_on_create_and_update() {
        let ok = object(
            "nightly",
            serde_json::json!({"schedule": "@hourly", "jobTemplate": {}}),
        );
        let bad = object(
            &"a".repeat(MAX_NAME_LENGTH + 1),
            serde_json::json!({"schedule": "every hour", "jobTemplate": {}}),
        );
        let denied = CronJobWebhook.validate_create(&bad).await.unwrap_err();
        assert!(
            denied
                .message
                .starts_with("metadata.name: must be no more than 52 characters, got 53; spec.schedule: cannot parse the schedule \"every hour\": "),
            "{denied}"
        );
        let denied = CronJobWebhook.validate_update(&ok, &bad).await.unwrap_err();
        assert!(denied.message.contains("spec.schedule"), "{denied}");
        // Seconds are not part of a Kubernetes cron schedule.
        let seconds = object(
            "nightly",
            serde_json::json!({"schedule": "0 0 * * * *", "jobTemplate": {}}),
        );
        assert!(CronJobWebhook.validate_create(&seconds).await.is_err());
    }
    // +kubebuilder:scaffold:webhook-tests
}
