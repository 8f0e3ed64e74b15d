// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The wire format of `admission.k8s.io/v1` AdmissionReview, as kube-apiserver sends and
//! reads it.
//!
//! Written here rather than taken from kube-core's `admission` module for two reasons: its
//! `AdmissionResponse` serializes `patch` as a JSON array of numbers where the API documents
//! (and the API server decodes) a base64 string (kube-rs issue #1781), and its request holds
//! the objects as `DynamicObject`, whose typed `metadata` re-encodes what it reads, while a
//! defaulting patch must be computed against the object exactly as it was sent.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `apiVersion` of the AdmissionReview answered when the request names none.
pub const ADMISSION_V1: &str = "admission.k8s.io/v1";

/// An AdmissionReview as the API server posts it: only `request` is read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1` (or `v1beta1`, same shape); the answer carries the same.
    #[serde(default)]
    pub api_version: Option<String>,
    /// The request; an AdmissionReview without one is answered as a bad request.
    #[serde(default)]
    pub request: Option<AdmissionRequest>,
}

/// The `request` of an AdmissionReview: what is being admitted. Objects stay JSON values, as
/// sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Identifies the request; the answer must carry the same.
    pub uid: String,
    /// Kind of `object` / `oldObject`, in the version the webhook registered for.
    pub kind: GroupVersionKind,
    /// The resource being admitted.
    pub resource: GroupVersionResource,
    /// The subresource (`status`, `scale`), if any.
    #[serde(default)]
    pub sub_resource: Option<String>,
    /// Name of the object (absent on a create with `generateName`).
    #[serde(default)]
    pub name: Option<String>,
    /// Namespace of the object, for a namespaced resource.
    #[serde(default)]
    pub namespace: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// The object being created or updated (absent on delete).
    #[serde(default)]
    pub object: Option<Value>,
    /// The object before an update, or the object being deleted.
    #[serde(default)]
    pub old_object: Option<Value>,
    /// Whether nothing will be persisted (`kubectl --dry-run=server`).
    #[serde(default)]
    pub dry_run: Option<bool>,
}

/// A group, version and kind as the API server names them (`""` is the core group).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionKind {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// A group, version and resource (plural) as the API server names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionResource {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// The answer: an AdmissionReview with only `response`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReviewAnswer {
    /// Same as the request's.
    pub api_version: String,
    /// Always `AdmissionReview`.
    pub kind: &'static str,
    /// The verdict.
    pub response: AdmissionResponse,
}

/// The `response` of an AdmissionReview.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's `uid` (empty when the request could not be read).
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why: `code` 200 when allowed; 403 `Forbidden` when denied; 400, 413 or 500 when the
    /// request could not be handled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// The JSON patch (RFC 6902), base64-encoded as the API's `[]byte` fields are in JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// `JSONPatch`, exactly when `patch` is set (the API server rejects one without the
    /// other).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// Warnings shown to the client (kubectl prints them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The `metav1.Status` of an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    /// HTTP-like code.
    pub code: u16,
    /// `Forbidden` for a denial; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The message the API server shows the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl AdmissionResponse {
    /// Admitted, with code 200, as controller-runtime's `Allowed`.
    pub fn allowed(uid: &str) -> Self {
        Self {
            uid: uid.to_string(),
            allowed: true,
            status: Some(Status {
                code: 200,
                ..Status::default()
            }),
            ..Self::default()
        }
    }

    /// Rejected by the webhook's rule, with code 403 and reason `Forbidden`, as
    /// controller-runtime's `Denied`: the API server turns it into a 403 for the client with
    /// `admission webhook "<name>" denied the request: <message>`.
    pub fn denied(uid: &str, message: impl Into<String>) -> Self {
        Self {
            uid: uid.to_string(),
            allowed: false,
            status: Some(Status {
                code: 403,
                reason: Some("Forbidden"),
                message: Some(message.into()),
            }),
            ..Self::default()
        }
    }

    /// Not admitted because the request could not be handled (`code`: 400 for a request
    /// that is not a valid review of the webhook's kind, 413 for one over the size limit, 500
    /// for a failure of the webhook), as controller-runtime's `Errored`.
    pub fn errored(uid: &str, code: u16, message: impl Into<String>) -> Self {
        Self {
            uid: uid.to_string(),
            allowed: false,
            status: Some(Status {
                code,
                reason: None,
                message: Some(message.into()),
            }),
            ..Self::default()
        }
    }

    /// Adds the JSON patch `ops` (an array of RFC 6902 operations), base64-encoded, with
    /// `patchType: JSONPatch`. An empty list sets nothing: the API server rejects an empty
    /// patch with a patch type.
    pub fn with_patch(mut self, ops: &[Value]) -> Self {
        if !ops.is_empty() {
            let json = Value::Array(ops.to_vec()).to_string();
            self.patch = Some(base64::engine::general_purpose::STANDARD.encode(json));
            self.patch_type = Some("JSONPatch");
        }
        self
    }

    /// Adds warnings.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    /// The AdmissionReview that carries this response, in `api_version` (the request's).
    pub fn into_review(self, api_version: Option<&str>) -> AdmissionReviewAnswer {
        AdmissionReviewAnswer {
            api_version: api_version.unwrap_or(ADMISSION_V1).to_string(),
            kind: "AdmissionReview",
            response: self,
        }
    }
}
