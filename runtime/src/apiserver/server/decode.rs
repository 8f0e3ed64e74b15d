// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The request body, decoded: JSON objects, the patch type of `Content-Type`, apply patches
//! (YAML or JSON), and the unknown fields `fieldValidation` rules on (refused with `Strict`, a
//! `Warning` header each with `Warn`, dropped silently with `Ignore`), as k8s.io/apiserver's
//! handlers decode them.

use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use serde_json::Value;

use super::super::kind::ApiKind;
use super::super::registry::PatchType;
use super::super::status::ApiError;
use super::options::FieldValidation;

/// The body as JSON. Errors: 400 when it does not parse.
pub fn json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

/// A DeleteOptions body: `{}` when the body is empty. Errors: 400 when it does not parse.
pub fn delete_options(body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        Ok(Value::Object(Default::default()))
    } else {
        json(body)
    }
}

/// The answer to a strategic merge patch of a kind without merge facts (a custom resource),
/// as kube-apiserver refuses it for custom resources.
pub const NO_STRATEGIC_MERGE_PATCH: &str = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

/// The patch type of a PATCH's `Content-Type` for `kind`. Errors: 415 for another media type,
/// and for a strategic merge patch of a kind without merge facts ([`ApiKind::merge_facts`]).
pub fn patch_type(headers: &HeaderMap, kind: &ApiKind) -> Result<PatchType, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    match content_type {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/apply-patch+yaml" => Ok(PatchType::Apply { force: false }),
        "application/strategic-merge-patch+json" if kind.merge_facts.is_some() => {
            Ok(PatchType::Strategic)
        }
        "application/strategic-merge-patch+json" => {
            Err(ApiError::unsupported_media_type(NO_STRATEGIC_MERGE_PATCH))
        }
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other:?}); accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        ))),
    }
}

/// The body of an apply patch (`application/apply-patch+yaml`: YAML, of which JSON is a
/// part) as JSON bytes, for the registry and the unknown-field check. Errors: 400 when it
/// parses as neither, or is not an object.
pub fn apply_body(body: &Bytes) -> Result<Bytes, ApiError> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|e| {
                ApiError::bad_request(format!("the apply patch is not UTF-8 YAML: {e}"))
            })?;
            serde_saphyr::from_str(text).map_err(|e| {
                ApiError::bad_request(format!("the apply patch is neither JSON nor YAML: {e}"))
            })?
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request("the apply patch must be an object"));
    }
    Ok(Bytes::from(value.to_string()))
}

/// The unknown fields of a write's body (an object, or a merge patch) by `kind`'s schema, as
/// `validation` rules: Out: the `Warning` header values for `Warn`, none for `Ignore`.
/// Errors: 400 `strict decoding error` naming them for `Strict`. A body that is not a JSON
/// object (a JSON patch, or one that does not parse) has none here; the registry answers it.
pub fn unknown_fields(
    kind: &ApiKind,
    validation: FieldValidation,
    body: &Bytes,
) -> Result<Vec<String>, ApiError> {
    if validation == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let Ok(mut probe) = serde_json::from_slice::<Value>(body) else {
        return Ok(Vec::new());
    };
    if !probe.is_object() {
        return Ok(Vec::new());
    }
    let unknown = kind.prune(&mut probe);
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    if validation == FieldValidation::Strict {
        let list: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect();
        return Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            list.join(", ")
        )));
    }
    Ok(unknown
        .iter()
        .map(|f| format!("299 - \"unknown field \\\"{f}\\\"\""))
        .collect())
}
