// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! GET of one object (or its `/status`), as k8s.io/apiserver's `handlers/get.go` serves
//! it: options, the registry's read, the answer (or a one-row Table).

use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::encode::{self, Answer};
use super::options::Verb;

/// Object `name`. Errors: the options' (400, 422), 404.
pub async fn get<S: Storage>(s: &Scope<'_, S>, name: &str) -> Result<Answer, ApiError> {
    s.opts.validate(Verb::Get)?;
    let obj = s.srv.registry.get(s.kind, s.namespace, name).await?;
    Ok(Answer::ok(encode::object(
        s.kind,
        s.accepts,
        s.opts.include_object,
        obj,
    )))
}
