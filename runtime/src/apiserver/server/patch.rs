// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! PATCH of an object or its `/status`, as k8s.io/apiserver's `handlers/patch.go` serves
//! it: the patch type of `Content-Type`, options (`ValidatePatchOptions`), unknown fields
//! of a merge patch (`fieldValidation`), the registry's patch (retried on a concurrent
//! write there), the stored object.

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::{self, Answer};
use super::options::Verb;

/// Applies the body to object `name` (or its status). Errors: 415 for an unknown patch
/// type, the options' (400, 422), the registry's (400, 404, 409, 422).
pub async fn patch<S: Storage>(s: &Scope<'_, S>, name: &str) -> Result<Answer, ApiError> {
    let patch_type = decode::patch_type(s.headers)?;
    s.opts.validate(Verb::Patch(patch_type))?;
    let warnings = decode::unknown_fields(s.kind, s.opts.field_validation, &s.body)?;
    let patched = s
        .srv
        .registry
        .patch_with(
            s.kind,
            s.namespace,
            name,
            s.part,
            patch_type,
            &s.body,
            s.opts.write(),
        )
        .await?;
    let body = encode::object(s.kind, s.accepts, s.opts.include_object, patched);
    Ok(Answer::ok(body).warn(warnings))
}
