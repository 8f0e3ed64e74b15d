// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Errors as the API server reports them: a `metav1.Status` body with the HTTP code and the
//! machine-readable `reason` clients branch on (`k8s.io/apimachinery/pkg/api/errors`).

use serde_json::{Value, json};

/// What a Status error is about: the API group, resource (plural) and kind of the object at
/// fault. [`super::kind::ApiKind`] is one; the error constructors that name an object take it.
pub trait Subject {
    /// The API group (`example.com`; empty for the core group).
    fn group(&self) -> &str;
    /// The resource, plural (`databases`).
    fn resource(&self) -> &str;
    /// The kind (`Database`).
    fn kind(&self) -> &str;

    /// The group-qualified resource as Status messages print it (`databases.example.com`;
    /// the resource alone in the core group).
    fn qualified(&self) -> String {
        if self.group().is_empty() {
            self.resource().to_owned()
        } else {
            format!("{}.{}", self.resource(), self.group())
        }
    }
}

/// A failed request: HTTP code, Status reason, message and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code (and the Status `code`).
    pub code: u16,
    /// The Status `reason` (`NotFound`, `Conflict`, …).
    pub reason: &'static str,
    /// The human-readable message.
    pub message: String,
    /// The Status `details` (name, group, kind, causes), if any.
    pub details: Option<Value>,
    /// The Status `metadata.continue`: a 410 for a continue token whose revision was
    /// compacted carries a token that continues the list at the latest revision.
    pub continue_token: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

fn details(kind: &impl Subject, name: &str) -> Value {
    json!({"name": name, "group": kind.group(), "kind": kind.resource()})
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            continue_token: None,
        }
    }

    /// 404 NotFound for an object.
    pub fn not_found(kind: &impl Subject, name: &str) -> Self {
        Self {
            details: Some(details(kind, name)),
            ..Self::new(
                404,
                "NotFound",
                format!("{} \"{name}\" not found", kind.qualified()),
            )
        }
    }

    /// 409 AlreadyExists: a create found the name taken.
    pub fn already_exists(kind: &impl Subject, name: &str) -> Self {
        Self {
            details: Some(details(kind, name)),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", kind.qualified()),
            )
        }
    }

    /// 409 Conflict: a write carried a stale resourceVersion (or a failed precondition).
    pub fn conflict(kind: &impl Subject, name: &str, why: &str) -> Self {
        Self {
            details: Some(details(kind, name)),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": {why}",
                    kind.qualified()
                ),
            )
        }
    }

    /// 409 Conflict of a server-side apply that would change fields other managers own, as
    /// k8s.io/apiserver's `NewApplyConflict` answers it: the message of
    /// [`super::fieldmanager::managed::conflict_message`] and a `FieldManagerConflict` cause
    /// per field (`conflict with "<manager>"`, the field path).
    pub fn apply_conflict(conflicts: &[super::fieldmanager::conflicts::Conflict]) -> Self {
        let causes: Vec<Value> = conflicts
            .iter()
            .map(|c| {
                json!({
                    "reason": "FieldManagerConflict",
                    "message": format!("conflict with {}", c.manager),
                    "field": c.field,
                })
            })
            .collect();
        Self {
            details: Some(json!({ "causes": causes })),
            ..Self::new(
                409,
                "Conflict",
                super::fieldmanager::managed::conflict_message(conflicts),
            )
        }
    }

    /// The reason a stale write gives.
    pub const MODIFIED: &'static str = "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 Invalid, with one cause per `(field, message)`.
    pub fn invalid(kind: &impl Subject, name: &str, causes: &[(String, String)]) -> Self {
        Self::invalid_in(kind.group(), kind.kind(), name, causes)
    }

    /// 422 Invalid for the request's options (`ListOptions`, `CreateOptions`, `PatchOptions`,
    /// `DeleteOptions` …, of group `meta.k8s.io`), as k8s.io/apiserver's handlers answer
    /// options that fail `ValidateListOptions` and the other option validations.
    pub fn invalid_options(options_kind: &str, causes: &[(String, String)]) -> Self {
        Self::invalid_in("meta.k8s.io", options_kind, "", causes)
    }

    fn invalid_in(group: &str, kind: &str, name: &str, causes: &[(String, String)]) -> Self {
        let list: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        let message = match list.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = causes
            .iter()
            .map(|(f, m)| json!({"reason": cause_type(m), "message": m, "field": f}))
            .collect();
        // `schema.GroupKind`'s form: the kind alone in the core group (`Pod`).
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        Self {
            details: Some(json!({
                "name": name, "group": group, "kind": kind, "causes": causes,
            })),
            ..Self::new(
                422,
                "Invalid",
                format!("{qualified} \"{name}\" is invalid: {message}"),
            )
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 422 Invalid without causes, as apimachinery's `NewGenericServerResponse` builds it for
    /// a JSON patch that does not apply (k8s.io/apiserver's `applyJSPatch`): its message, "the
    /// server rejected our request due to an error in our request", followed here by `detail`
    /// (json-patch's error, which kube-apiserver leaves out) so the client learns which
    /// operation failed.
    pub fn patch_rejected(detail: impl std::fmt::Display) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("the server rejected our request due to an error in our request: {detail}"),
        )
    }

    /// 413 RequestEntityTooLarge with apimachinery's `NewRequestEntityTooLargeError` message,
    /// "Request entity too large: " and `message`.
    pub fn entity_too_large(message: impl std::fmt::Display) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: {message}"),
        )
    }

    /// 500 with no reason (`StatusReasonUnknown`) and `message`, as k8s.io/apiserver's
    /// `ErrorToAPIStatus` answers an error that is not a Status.
    pub fn unknown(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 Expired: a resourceVersion or continue token older than the store keeps.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 504 Timeout for a resourceVersion the store has not reached (after waiting for it),
    /// as k8s.io/apiserver's `NewTooLargeResourceVersionError` answers: the
    /// `ResourceVersionTooLarge` cause and a retry after one second.
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        Self {
            details: Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            ..Self::new(
                504,
                "Timeout",
                format!("Timeout: Too large resource version: {requested}, current: {current}"),
            )
        }
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message)
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 429 TooManyRequests: a limit on requests in flight is reached ([`super::limits`]);
    /// `details.retryAfterSeconds` is 1, as the `Retry-After` header the server adds.
    pub fn too_many_requests() -> Self {
        Self {
            details: Some(serde_json::json!({"retryAfterSeconds": 1})),
            ..Self::new(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
            )
        }
    }

    /// 504 Timeout: the request ran longer than the server allows.
    pub fn timeout(limit: std::time::Duration) -> Self {
        Self::new(
            504,
            "Timeout",
            format!(
                "Timeout: request did not complete within the allowed {}s",
                limit.as_secs()
            ),
        )
    }

    /// 408 (reason `Timeout`, which clients read as a timeout): the request body arrived
    /// slower than the server's floor of `rate` bytes per second.
    pub fn body_too_slow(rate: u64) -> Self {
        Self::new(
            408,
            "Timeout",
            format!("Timeout: the request body arrived slower than {rate} bytes per second"),
        )
    }

    /// 500 InternalError.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// 404 NotFound for a path that names no resource.
    pub fn no_route(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
    }

    /// The `metav1.Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty() {
            // `reason` is omitted when empty, as metav1.Status encodes it.
            if let Some(o) = status.as_object_mut() {
                o.remove("reason");
            }
        }
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        if let Some(token) = &self.continue_token {
            status["metadata"]["continue"] = Value::String(token.clone());
        }
        status
    }
}

/// The cause type (`field.ErrorType`) a validation message starts with. A schema's type or
/// format failure (`Invalid value: ...: spec.x in body must be of type ...`) is
/// `FieldValueTypeInvalid`, as the apiextensions server converts kube-openapi's
/// `InvalidTypeCode` (`field.TypeInvalid`).
fn cause_type(message: &str) -> &'static str {
    if message.starts_with("Invalid value") && message.contains(" in body must be of type ") {
        "FieldValueTypeInvalid"
    } else if message.starts_with("Required value") {
        "FieldValueRequired"
    } else if message.starts_with("Forbidden") {
        "FieldValueForbidden"
    } else if message.starts_with("Unsupported value") {
        "FieldValueNotSupported"
    } else if message.starts_with("Internal error") {
        "InternalError"
    } else if message.starts_with("Duplicate value") {
        "FieldValueDuplicate"
    } else if message.starts_with("Too long") {
        "FieldValueTooLong"
    } else if message.starts_with("Duplicate value") {
        "FieldValueDuplicate"
    } else if message.starts_with("Too many") {
        "FieldValueTooMany"
    } else {
        "FieldValueInvalid"
    }
}

#[cfg(test)]
mod tests {
    use super::cause_type;

    #[test]
    fn causes_get_the_reason_of_the_field_error_they_print() {
        let cases = [
            ("Required value", "FieldValueRequired"),
            ("Duplicate value: \"a\"", "FieldValueDuplicate"),
            (
                "Too many: 3: must have at most 2 items",
                "FieldValueTooMany",
            ),
            (
                "Invalid value: \"zzz\": spec.id in body must be of type uuid: \"zzz\"",
                "FieldValueTypeInvalid",
            ),
            (
                "Invalid value: 7: spec.n in body should be a multiple of 3",
                "FieldValueInvalid",
            ),
        ];
        for (message, reason) in cases {
            assert_eq!(cause_type(message), reason, "{message}");
        }
    }
}
