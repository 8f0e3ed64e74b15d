// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! PATCH of an object or its `/status`, as k8s.io/apiserver's `handlers/patch.go` serves
//! it: the patch type of `Content-Type`, options (`ValidatePatchOptions`), unknown fields
//! of a merge patch or an applied configuration (`fieldValidation`), the registry's patch
//! (retried on a concurrent write there) or server-side apply (201 when it created the
//! object), the stored object.

use axum::http::StatusCode;

use super::super::registry::PatchType;
use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::{self, Answer};
use super::options::Verb;

/// Applies the body to object `name` (or its status). Errors: 415 for an unknown patch
/// type, the options' (400, 422), the registry's (400, 404, 409, 422).
pub async fn patch<S: Storage>(s: &Scope<'_, S>, name: &str) -> Result<Answer, ApiError> {
    let patch_type = match decode::patch_type(s.headers, s.kind)? {
        PatchType::Apply { .. } => PatchType::Apply {
            force: s.opts.force.unwrap_or(false),
        },
        other => other,
    };
    s.opts.validate(Verb::Patch(patch_type))?;
    let body = match patch_type {
        PatchType::Apply { .. } => decode::apply_body(&s.body)?,
        _ => s.body.clone(),
    };
    let warnings = decode::unknown_fields(s.kind, s.opts.field_validation, &body)?;
    let registry = &s.srv.registry;
    let manager = s.manager();
    let (patched, created) = match patch_type {
        PatchType::Apply { force } => {
            registry
                .apply_with(
                    s.kind,
                    s.namespace,
                    name,
                    s.part,
                    &body,
                    &manager,
                    force,
                    s.opts.write(),
                )
                .await?
        }
        _ => {
            let patched = registry
                .patch_with(
                    s.kind,
                    s.namespace,
                    name,
                    s.part,
                    patch_type,
                    &body,
                    &manager,
                    s.opts.write(),
                )
                .await?;
            (patched, false)
        }
    };
    let body = encode::object(s.kind, s.accepts, s.opts.include_object, patched);
    let code = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Answer::new(code, body).warn(warnings))
}
