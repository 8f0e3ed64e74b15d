// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! POST to a collection, as k8s.io/apiserver's `handlers/create.go` serves it: options,
//! the body decoded (`fieldValidation`), the registry's create (admission and the
//! `managedFields` entry of the field manager, [`super::Scope::manager`], there), 201 with the
//! stored object.

use axum::http::StatusCode;

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::{self, Answer};
use super::options::Verb;

/// Creates the body's object. Errors: the options' (400, 422), the body's (400), the
/// registry's (400, 409, 422).
pub async fn create<S: Storage>(s: &Scope<'_, S>) -> Result<Answer, ApiError> {
    s.opts.validate(Verb::Create)?;
    let warnings = decode::unknown_fields(s.kind, s.opts.field_validation, &s.body)?;
    let obj = decode::json(&s.body)?;
    let manager = s.manager();
    let created = s
        .srv
        .registry
        .create_with(s.kind, s.namespace, obj, &manager, s.opts.write())
        .await?;
    let body = encode::object(s.kind, s.accepts, s.opts.include_object, created);
    Ok(Answer::new(StatusCode::CREATED, body).warn(warnings))
}
