// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! DELETE of an object and of a collection (deletecollection), as k8s.io/apiserver's
//! `handlers/delete.go` serves them: the DeleteOptions of the body and the query
//! (`ValidateDeleteOptions`, and for a collection `ValidateListOptions`), the registry's
//! delete (preconditions, finalizers), the answer.

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::{self, Answer};
use super::options::Verb;

/// Deletes object `name` (or marks it deleting while it has finalizers). Out: the marked
/// object, or a Success Status. Errors: the options' (400, 422), the registry's (404, 409).
pub async fn delete<S: Storage>(s: &Scope<'_, S>, name: &str) -> Result<Answer, ApiError> {
    let mut options = decode::delete_options(&s.body)?;
    let mut opts = s.opts.clone();
    opts.merge_delete_body(&options)?;
    opts.validate(Verb::Delete)?;
    opts.propagation_into(&mut options);
    let out = s
        .srv
        .registry
        .delete_with(s.kind, s.namespace, name, &options, opts.write())
        .await?;
    Ok(Answer::ok(encode::object(
        s.kind,
        s.accepts,
        opts.include_object,
        out,
    )))
}

/// Deletes every object the selectors pick. Out: a `<Kind>List` of them. Errors: the
/// options' (400, 422), the registry's.
pub async fn delete_collection<S: Storage>(s: &Scope<'_, S>) -> Result<Answer, ApiError> {
    let mut options = decode::delete_options(&s.body)?;
    let mut opts = s.opts.clone();
    opts.merge_delete_body(&options)?;
    opts.validate(Verb::DeleteCollection)?;
    opts.propagation_into(&mut options);
    let list = s
        .srv
        .registry
        .delete_collection_with(
            s.kind,
            s.namespace,
            &opts.list_options(s.kind)?,
            &options,
            opts.write(),
        )
        .await?;
    Ok(Answer::ok(list))
}
