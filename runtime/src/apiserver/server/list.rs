// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! GET of a collection, as k8s.io/apiserver's `handlers/get.go` lists: options
//! (`ValidateListOptions`), the registry's list with selectors and paging, the
//! `<Kind>List` (or a Table of it).

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::encode::{self, Answer};
use super::options::Verb;

/// The collection, in the namespace of the path or everywhere. Errors: the options' (400,
/// 422), the registry's (400 on a bad continue token, 410, 504).
pub async fn list<S: Storage>(s: &Scope<'_, S>) -> Result<Answer, ApiError> {
    s.opts.validate(Verb::List)?;
    let list = s
        .srv
        .registry
        .list(s.kind, s.namespace, &s.opts.list_options(s.kind)?)
        .await?;
    Ok(Answer::ok(encode::list(
        s.kind,
        s.accepts,
        s.opts.include_object,
        list,
    )))
}
