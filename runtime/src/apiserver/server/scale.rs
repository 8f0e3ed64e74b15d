// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! `/<plural>/<name>/scale`: GET, PUT and PATCH (server-side apply included) of the
//! object's `autoscaling/v1` Scale,
//! as the apiextensions server's scale subresource serves them
//! ([`super::super::registry::Registry::get_scale`]).

use axum::http::Method;

use super::super::registry::PatchType;
use super::super::status::ApiError;
use super::super::storage::Storage;
use super::Scope;
use super::decode;
use super::encode::Answer;
use super::options::Verb;

/// The Scale of object `name`, read or written by `method`. Errors: 404 on the collection,
/// 405 for another method, the options' (400, 422), the registry's.
pub async fn scale<S: Storage>(
    s: &Scope<'_, S>,
    name: Option<&str>,
    method: &Method,
) -> Result<Answer, ApiError> {
    let Some(name) = name else {
        return Err(ApiError::no_route(&s.kind.plural));
    };
    let reg = &s.srv.registry;
    let scale = match *method {
        Method::GET => {
            s.opts.validate(Verb::Get)?;
            reg.get_scale(s.kind, s.namespace, name).await?
        }
        Method::PUT => {
            s.opts.validate(Verb::Update)?;
            let body = decode::json(&s.body)?;
            reg.update_scale(
                s.kind,
                s.namespace,
                name,
                body,
                &s.manager(),
                s.opts.write(),
            )
            .await?
        }
        Method::PATCH => {
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
            reg.patch_scale(
                s.kind,
                s.namespace,
                name,
                patch_type,
                &body,
                &s.manager(),
                s.opts.write(),
            )
            .await?
        }
        _ => {
            return Err(ApiError::method_not_allowed(format!(
                "{method} is not supported on the scale subresource"
            )));
        }
    };
    Ok(Answer::ok(scale))
}
