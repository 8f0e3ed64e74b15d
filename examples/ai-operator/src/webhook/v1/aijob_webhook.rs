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

//! Admission webhooks for `AIJob` (`ai.example.com/v1`): `default` (defaulting) and
//! `validate_create`, `validate_update`, `validate_delete` (validation), implementing the
//! runtime's `Defaulter` and `Validator` (`rsbuilder_runtime::webhook`, which decodes the
//! AdmissionReview, answers with the patch or the denial, and serves it over HTTPS).
//!
//! Each webhook's `+kubebuilder:webhook` marker becomes its configuration in
//! `config/webhook/manifests.yaml` (`rsbuilder manifests`); `src/main.rs` registers it at the
//! marker's path. The rules, from the Go tutorial this example is ported from: `replicas` defaults
//! to 1 and may be at most 100.

use rsbuilder_runtime::webhook::prelude::*;

use crate::api::v1::AIJob;
// +kubebuilder:scaffold:webhook-imports

/// The webhooks of `AIJob`.
pub struct AIJobWebhook;

// +kubebuilder:webhook:path=/mutate-ai-example-com-v1-aijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=maijob-v1.kb.io,admissionReviewVersions=v1

/// Path of the defaulting webhook; equal to the `path` of the marker above.
pub const DEFAULTING_PATH: &str = "/mutate-ai-example-com-v1-aijob";

/// The number of workers an `AIJob` gets when `spec.replicas` is absent (the Go
/// original's `pointer.Int32Ptr(1)`).
pub const DEFAULT_REPLICAS: i32 = 1;

/// The most workers one `AIJob` may ask for; the CRD schema says the same
/// (`#[schemars(range(max = 100))]`), this webhook gives the clearer message.
pub const MAX_REPLICAS: i32 = 100;

impl Defaulter<AIJob> for AIJobWebhook {
    /// `spec.replicas` becomes [`DEFAULT_REPLICAS`] when absent; a value that is set (also 0)
    /// is kept. The answer patches only that field.
    async fn default(&self, ai_job: &mut AIJob) -> Result<(), Denied> {
        if ai_job.spec.replicas.is_none() {
            ai_job.spec.replicas = Some(DEFAULT_REPLICAS);
        }
        Ok(())
    }
}

// +kubebuilder:webhook:path=/validate-ai-example-com-v1-aijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=vaijob-v1.kb.io,admissionReviewVersions=v1

/// Path of the validating webhook; equal to the `path` of the marker above.
pub const VALIDATION_PATH: &str = "/validate-ai-example-com-v1-aijob";

/// `Ok(warnings)` admits the object (kubectl prints the warnings); `Err(Denied)` rejects it
/// with the message (403).
impl Validator<AIJob> for AIJobWebhook {
    async fn validate_create(&self, ai_job: &AIJob) -> Validation {
        validate_spec(ai_job)
    }

    /// The rules of [`validate_spec`], and a warning when the model changes under running
    /// workers (they keep the old one until they are recreated).
    async fn validate_update(&self, old: &AIJob, new: &AIJob) -> Validation {
        let mut warnings = validate_spec(new)?;
        if old.spec.model_name != new.spec.model_name {
            warnings.push(format!(
                "spec.modelName changed from {:?} to {:?}; existing workers keep the old model",
                old.spec.model_name, new.spec.model_name
            ));
        }
        Ok(warnings)
    }

    /// Called only when the marker's `verbs` include `delete`.
    async fn validate_delete(&self, _ai_job: &AIJob) -> Validation {
        Ok(Vec::new())
    }
}

/// Rules that hold on create and on update: `spec.replicas` is at most [`MAX_REPLICAS`] (the
/// tutorial's `replicas 不能超过 100`) and not negative, `spec.gpuCount` is not negative, and
/// `spec.modelName` is not empty. Each message names the field and the rule.
pub fn validate_spec(ai_job: &AIJob) -> Validation {
    if let Some(replicas) = ai_job.spec.replicas {
        if replicas > MAX_REPLICAS {
            return Err(Denied::new(format!(
                "spec.replicas: must be at most {MAX_REPLICAS}, got {replicas}"
            )));
        }
        if replicas < 0 {
            return Err(Denied::new(format!(
                "spec.replicas: must not be negative, got {replicas}"
            )));
        }
    }
    if ai_job.spec.gpu_count < 0 {
        return Err(Denied::new(format!(
            "spec.gpuCount: must not be negative, got {}",
            ai_job.spec.gpu_count
        )));
    }
    if ai_job.spec.model_name.is_empty() {
        return Err(Denied::new("spec.modelName: must not be empty"));
    }
    Ok(Vec::new())
}
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of kind `AIJob` named `sample`, with `spec`.
    fn object(spec: serde_json::Value) -> AIJob {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "ai.example.com/v1",
            "kind": "AIJob",
            "metadata": {"name": "sample"},
            "spec": spec,
        }))
        .expect("a valid object")
    }

    /// A job training `model` with `replicas` workers.
    fn job(model: &str, replicas: i32) -> AIJob {
        object(serde_json::json!({"modelName": model, "gpuCount": 2, "replicas": replicas}))
    }

    #[tokio::test]
    async fn default_sets_one_replica_only_when_absent() {
        let mut obj = object(serde_json::json!({"modelName": "resnet50", "gpuCount": 2}));
        AIJobWebhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.replicas, Some(1));
        let mut obj = job("resnet50", 7);
        AIJobWebhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.replicas, Some(7));
        let mut obj = job("resnet50", 0);
        AIJobWebhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.replicas, Some(0), "an explicit 0 is kept");
    }

    #[tokio::test]
    async fn replicas_up_to_100_are_accepted_and_101_is_rejected() {
        let at_limit = job("resnet50", 100);
        assert_eq!(AIJobWebhook.validate_create(&at_limit).await, Ok(vec![]));
        let over = job("resnet50", 101);
        let denied = AIJobWebhook.validate_create(&over).await.unwrap_err();
        assert_eq!(
            denied.message,
            "spec.replicas: must be at most 100, got 101"
        );
        assert_eq!(
            AIJobWebhook.validate_update(&at_limit, &over).await,
            Err(denied)
        );
        let absent = object(serde_json::json!({"modelName": "m", "gpuCount": 1}));
        assert_eq!(AIJobWebhook.validate_create(&absent).await, Ok(vec![]));
        assert_eq!(AIJobWebhook.validate_delete(&over).await, Ok(vec![]));
    }

    #[tokio::test]
    async fn negative_counts_and_an_empty_model_are_rejected() {
        let message = |spec| validate_spec(&object(spec)).unwrap_err().message;
        assert_eq!(
            message(serde_json::json!({"modelName": "m", "gpuCount": 1, "replicas": -1})),
            "spec.replicas: must not be negative, got -1"
        );
        assert_eq!(
            message(serde_json::json!({"modelName": "m", "gpuCount": -2})),
            "spec.gpuCount: must not be negative, got -2"
        );
        assert_eq!(
            message(serde_json::json!({"modelName": "", "gpuCount": 1})),
            "spec.modelName: must not be empty"
        );
    }

    #[tokio::test]
    async fn a_model_change_is_admitted_with_a_warning() {
        let warnings = AIJobWebhook
            .validate_update(&job("a", 1), &job("b", 1))
            .await
            .unwrap();
        assert_eq!(
            warnings,
            ["spec.modelName changed from \"a\" to \"b\"; existing workers keep the old model"]
        );
    }
    // +kubebuilder:scaffold:webhook-tests
}
