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

//! Admission webhooks for `AIJob` (`ai.example.com/v1`).
//!
//! Each webhook has three parts: a `+kubebuilder:webhook` marker comment (which
//! `rsbuilder manifests` turns into `config/webhook/manifests.yaml`), an axum handler that
//! `crate::webhook::router` serves at the marker's path, and a plain function with your logic.
//! Edit the plain functions:
//!
//! - `default` sets default values before the object is stored (defaulting webhook);
//! - `validate_create`, `validate_update` and `validate_delete` admit or reject the object
//!   (validating webhook); rules shared by create and update go in `validate_spec`.
//!
//! `rsbuilder create webhook` for another webhook type of this kind adds its part before the
//! scaffold markers of this file and leaves the rest as you wrote it.

use axum::body::Bytes;

use crate::api::v1::AIJob;
use crate::webhook::ReviewResponse;
use crate::webhook::{Denied, Validation, Validator};
// +kubebuilder:scaffold:webhook-imports

// +kubebuilder:webhook:path=/mutate-ai-example-com-v1-aijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=maijob-v1.kb.io,admissionReviewVersions=v1

/// Path of the defaulting webhook; equal to the `path` of the marker above.
pub const DEFAULTING_PATH: &str = "/mutate-ai-example-com-v1-aijob";

/// The defaulting webhook's handler: decodes the AdmissionReview, calls [`default`] and
/// answers with the JSON patch of what it changed.
pub async fn mutate(body: Bytes) -> ReviewResponse {
    crate::webhook::mutate::<AIJob>(&body, default)
}

/// The number of workers an `AIJob` gets when `spec.replicas` is absent (the seed's
/// `pointer.Int32Ptr(1)`).
pub const DEFAULT_REPLICAS: i32 = 1;

/// The most workers one `AIJob` may ask for; the CRD schema says the same
/// (`#[schemars(range(max = 100))]`), this webhook gives the clearer message.
pub const MAX_REPLICAS: i32 = 100;

/// Sets default values on an `AIJob` that is being created or updated: `spec.replicas`
/// becomes [`DEFAULT_REPLICAS`] when absent. A value that is set is kept.
pub fn default(ai_job: &mut AIJob) {
    if ai_job.spec.replicas.is_none() {
        ai_job.spec.replicas = Some(DEFAULT_REPLICAS);
    }
}

// +kubebuilder:webhook:path=/validate-ai-example-com-v1-aijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=vaijob-v1.kb.io,admissionReviewVersions=v1

/// Path of the validating webhook; equal to the `path` of the marker above.
pub const VALIDATION_PATH: &str = "/validate-ai-example-com-v1-aijob";

/// The validating webhook's handler: decodes the AdmissionReview and calls
/// [`validate_create`], [`validate_update`] or [`validate_delete`] by operation.
pub async fn validate(body: Bytes) -> ReviewResponse {
    crate::webhook::validate(&body, &validator())
}

/// The validating functions of `AIJob`, by operation.
pub fn validator() -> Validator<AIJob> {
    Validator {
        create: validate_create,
        update: validate_update,
        delete: validate_delete,
    }
}

/// Checks the `AIJob` object being created. `Ok(warnings)` admits it (kubectl prints the
/// warnings); `Err(Denied)` rejects it with the message.
pub fn validate_create(ai_job: &AIJob) -> Validation {
    validate_spec(ai_job)
}

/// Checks an update from `old` to `new`: the rules of [`validate_spec`], and a warning when the
/// model changes under running workers (they keep the old one until they are recreated).
pub fn validate_update(old: &AIJob, new: &AIJob) -> Validation {
    let mut warnings = validate_spec(new)?;
    if old.spec.model_name != new.spec.model_name {
        warnings.push(format!(
            "spec.modelName changed from {:?} to {:?}; existing workers keep the old model",
            old.spec.model_name, new.spec.model_name
        ));
    }
    Ok(warnings)
}

/// Checks the `AIJob` object being deleted. The API server calls the webhook for deletions only
/// when the marker's `verbs` include `delete` (`verbs=create;update;delete`).
pub fn validate_delete(_ai_job: &AIJob) -> Validation {
    Ok(Vec::new())
}

/// Rules that hold on create and on update: `spec.replicas` is at most [`MAX_REPLICAS`] (the
/// seed's `replicas 不能超过 100`) and not negative, `spec.gpuCount` is not negative, and
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
    use serde_json::{Value, json};

    use super::*;

    /// An object of kind `AIJob` as the API server sends it, with `spec`.
    fn object(spec: Value) -> Value {
        json!({
            "apiVersion": "ai.example.com/v1",
            "kind": "AIJob",
            "metadata": {
                "name": "sample",
                "namespace": "default",
                "uid": "5e2c1f0a-0000-4000-8000-000000000001",
            },
            "spec": spec,
        })
    }

    /// An AdmissionReview request for `operation` with the new and the old object.
    fn review(operation: &str, object: Value, old_object: Value) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "0b0a4b9e-0000-4000-8000-000000000002",
                "kind": {"group": "ai.example.com", "version": "v1", "kind": "AIJob"},
                "resource": {"group": "ai.example.com", "version": "v1", "resource": "aijobs"},
                "name": "sample",
                "namespace": "default",
                "operation": operation,
                "userInfo": {"username": "kubernetes-admin"},
                "object": object,
                "oldObject": old_object,
                "dryRun": false,
            },
        })
    }

    /// The `response` of a handler's answer, as JSON.
    fn response(answer: ReviewResponse) -> Value {
        serde_json::to_value(answer.0).expect("the review serializes")["response"].clone()
    }

    /// Decodes an object of kind `AIJob`.
    fn typed(object: Value) -> AIJob {
        serde_json::from_value(object).expect("a valid object")
    }

    /// Decodes the base64 JSON patch of an admission response.
    fn patch_of(response: &Value) -> Value {
        let bytes: Vec<u8> = serde_json::from_value(response["patch"].clone()).unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    #[test]
    fn default_sets_one_replica_only_when_absent() {
        let mut obj = typed(bare_object());
        default(&mut obj);
        assert_eq!(obj.spec.replicas, Some(1));
        let mut obj = typed(defaulted_object());
        default(&mut obj);
        assert_eq!(obj.spec.replicas, Some(7));
        let mut obj = typed(object(
            json!({"modelName": "resnet50", "gpuCount": 1, "replicas": 0}),
        ));
        default(&mut obj);
        assert_eq!(obj.spec.replicas, Some(0), "an explicit 0 is kept");
    }

    /// The patch that [`default`] gives for an object without `spec.replicas`.
    fn expected_patch() -> Value {
        json!([{"op": "add", "path": "/spec/replicas", "value": 1}])
    }

    /// An object that [`default`] leaves alone.
    fn defaulted_object() -> Value {
        object(json!({"modelName": "resnet50", "gpuCount": 2, "replicas": 7}))
    }

    /// An object that [`default`] changes.
    fn bare_object() -> Value {
        object(json!({"modelName": "resnet50", "gpuCount": 2}))
    }

    /// The defaulting handler's answer to `review`.
    fn defaulting_answer(review: &Value) -> Value {
        let body = review.to_string();
        response(crate::webhook::mutate::<AIJob>(body.as_bytes(), default))
    }

    #[test]
    fn mutate_answers_with_a_json_patch() {
        let resp = defaulting_answer(&review("CREATE", bare_object(), Value::Null));
        assert_eq!(resp["uid"], "0b0a4b9e-0000-4000-8000-000000000002");
        assert_eq!(resp["allowed"], true);
        assert_eq!(resp["patchType"], "JSONPatch");
        assert_eq!(patch_of(&resp), expected_patch());
        let resp = defaulting_answer(&review("UPDATE", defaulted_object(), defaulted_object()));
        assert_eq!(resp["allowed"], true);
        assert!(resp.get("patch").is_none(), "{resp}");
    }

    #[tokio::test]
    async fn defaulting_webhook_answers_over_https() {
        let server = crate::webhook::testing::start(crate::webhook::router()).await;
        let body = review("CREATE", bare_object(), Value::Null);
        let (status, answer) = server.post(DEFAULTING_PATH, &body).await;
        assert_eq!(status, 200);
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(answer["response"]["allowed"], true);
        assert_eq!(patch_of(&answer["response"]), expected_patch());
    }

    /// Rejected by [`validate_spec`]: 101 replicas.
    fn invalid_object() -> Value {
        object(json!({"modelName": "resnet50", "gpuCount": 2, "replicas": 101}))
    }

    /// The message of that rejection: it names the field and the limit.
    const INVALID_MESSAGE: &str = "spec.replicas: must be at most 100, got 101";

    /// A valid object (100 replicas, the limit) training model `value`.
    fn valid_object(value: &str) -> Value {
        object(json!({"modelName": value, "gpuCount": 2, "replicas": 100}))
    }

    /// The warning [`validate_update`] gives for a change from `a` to `b`.
    const CHANGE_WARNING: &str =
        "spec.modelName changed from \"a\" to \"b\"; existing workers keep the old model";

    #[test]
    fn replicas_up_to_100_are_accepted_and_101_is_rejected() {
        let at_limit = typed(valid_object("resnet50"));
        assert_eq!(at_limit.spec.replicas, Some(100));
        assert_eq!(validate_create(&at_limit), Ok(vec![]));
        assert_eq!(validate_update(&at_limit, &at_limit), Ok(vec![]));
        let over = typed(invalid_object());
        let denied = validate_create(&over).unwrap_err();
        assert_eq!(
            denied.message,
            "spec.replicas: must be at most 100, got 101"
        );
        assert_eq!(validate_update(&at_limit, &over).unwrap_err(), denied);
        let absent = typed(bare_object());
        assert_eq!(validate_create(&absent), Ok(vec![]));
    }

    #[test]
    fn negative_counts_and_an_empty_model_are_rejected() {
        let message = |spec: Value| validate_create(&typed(object(spec))).unwrap_err().message;
        assert_eq!(
            message(json!({"modelName": "m", "gpuCount": 1, "replicas": -1})),
            "spec.replicas: must not be negative, got -1"
        );
        assert_eq!(
            message(json!({"modelName": "m", "gpuCount": -2})),
            "spec.gpuCount: must not be negative, got -2"
        );
        assert_eq!(
            message(json!({"modelName": "", "gpuCount": 1})),
            "spec.modelName: must not be empty"
        );
    }

    #[test]
    fn update_to_101_replicas_is_denied_through_the_handler() {
        let resp = validation_answer(&review(
            "UPDATE",
            invalid_object(),
            valid_object("resnet50"),
        ));
        assert_eq!(resp["allowed"], false);
        assert_eq!(resp["status"]["message"], INVALID_MESSAGE);
    }

    /// The validating handler's answer to `review`.
    fn validation_answer(review: &Value) -> Value {
        let body = review.to_string();
        response(crate::webhook::validate(body.as_bytes(), &validator()))
    }

    #[test]
    fn validators_reject_on_create_and_update() {
        let ok = typed(valid_object("a"));
        assert_eq!(validate_create(&ok), Ok(vec![]));
        let bad = typed(invalid_object());
        let denied = validate_create(&bad).unwrap_err();
        assert_eq!(denied.message, INVALID_MESSAGE);
        assert_eq!(validate_update(&ok, &bad).unwrap_err(), denied);
        assert_eq!(validate_delete(&bad), Ok(vec![]));
    }

    #[test]
    fn validate_answers_by_operation_with_warnings() {
        let resp = validation_answer(&review("CREATE", invalid_object(), Value::Null));
        assert_eq!(resp["allowed"], false);
        assert_eq!(resp["status"]["message"], INVALID_MESSAGE);
        let resp = validation_answer(&review("UPDATE", valid_object("b"), valid_object("a")));
        assert_eq!(resp["allowed"], true);
        assert_eq!(resp["warnings"], json!([CHANGE_WARNING]));
        let resp = validation_answer(&review("DELETE", Value::Null, invalid_object()));
        assert_eq!(resp["allowed"], true);
    }

    #[tokio::test]
    async fn validating_webhook_answers_over_https() {
        let server = crate::webhook::testing::start(crate::webhook::router()).await;
        let body = review("CREATE", invalid_object(), Value::Null);
        let (status, answer) = server.post(VALIDATION_PATH, &body).await;
        assert_eq!(status, 200);
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["message"], INVALID_MESSAGE);
    }
    // +kubebuilder:scaffold:webhook-tests
}
