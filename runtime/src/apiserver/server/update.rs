// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! PUT of an object or its `/status`, as k8s.io/apiserver's `handlers/update.go` serves
//! it: options, the body decoded (`fieldValidation`), the registry's update (admission and
//! the resourceVersion check run there, and the field manager's `managedFields` entry), the
//! stored object.

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::{self, Answer};
use super::options::Verb;

/// Replaces object `name` (or its status) with the body. Errors: the options' (400, 422),
/// the body's (400), the registry's (400, 404, 409, 422).
pub async fn update<S: Storage>(s: &Scope<'_, S>, name: &str) -> Result<Answer, ApiError> {
    s.opts.validate(Verb::Update)?;
    let warnings = decode::unknown_fields(s.kind, s.opts.field_validation, &s.body)?;
    let obj = decode::json(&s.body)?;
    let updated = s
        .srv
        .registry
        .update_with(
            s.kind,
            s.namespace,
            name,
            s.part,
            obj,
            &s.manager(),
            s.opts.write(),
        )
        .await?;
    let body = encode::object(s.kind, s.accepts, s.opts.include_object, updated);
    Ok(Answer::ok(body).warn(warnings))
}
