//! The webhook server: admission (defaulting and validating) and conversion webhooks served
//! over HTTPS, as the Kubernetes API server requires.
//!
//! - [`router`] lists the webhook routes. `rsbuilder create webhook` adds one line per webhook
//!   before the `+kubebuilder:scaffold:webhook-routes` marker.
//! - [`serve`] serves a router with TLS (rustls, through [`rsbuilder_runtime::tls::serve`]) on
//!   `--webhook-port`, using `tls.crt` and `tls.key` from `--webhook-cert-dir` (the Secret that
//!   cert-manager fills, mounted by `config/default/manager_webhook_patch.yaml`). The files are
//!   re-read every [`RELOAD_INTERVAL`]; a renewed certificate is used for new connections
//!   without a restart.
//! - [`mutate`] and [`validate`] turn an `AdmissionReview` into typed calls of your defaulting
//!   and validating functions, and their results into the `AdmissionReview` the API server
//!   expects (a JSON patch for defaulting; allowed / denied with warnings for validation).
//!
//! The server runs on every replica of the manager (not only on the leader): the API server
//! sends webhook requests to any ready pod behind `webhook-service`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use kube::Resource;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use rsbuilder_runtime::tls::{CERT_FILE, KEY_FILE, RELOAD_INTERVAL};

// +kubebuilder:scaffold:webhook-modules

#[cfg(test)]
pub mod testing;

/// The webhook routes: one `POST` route per webhook path. Paths must equal the `path` of the
/// `+kubebuilder:webhook` markers (which `rsbuilder manifests` turns into the webhook
/// configurations).
pub fn router() -> Router {
    let router = Router::new();
    // +kubebuilder:scaffold:webhook-routes
    router
}

/// Binds `addr` (see [`rsbuilder_runtime::tls::bind`]: `[::]` is dual stack) and serves `router` over
/// TLS with `certs` until `shutdown` is cancelled; see [`serve_listener`]. `certs` comes from
/// [`rsbuilder_runtime::tls::Certificates::from_dir`] on `--webhook-cert-dir`, loaded by `main` before it
/// connects to the cluster, so that a missing certificate is reported at once. Errors: the
/// address cannot be bound.
pub async fn serve(
    addr: SocketAddr,
    certs: rsbuilder_runtime::tls::Certificates,
    router: Router,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let listener = rsbuilder_runtime::tls::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("webhook server: cannot listen on {addr}: {e}"))?;
    serve_listener(listener, certs, router, shutdown).await
}

/// Serves `router` over TLS (HTTP/1.1 only, as a Kubebuilder manager by default) on an
/// already bound listener until `shutdown` is cancelled, then lets open connections finish
/// for up to 10 seconds. A client gets [`rsbuilder_runtime::tls::HEADER_READ_TIMEOUT`] to send each
/// request's headers; see [`rsbuilder_runtime::tls::serve_with`].
///
/// The certificate directory `certs` was read from (`tls.crt` and `tls.key`) is re-read every
/// [`RELOAD_INTERVAL`]; when the files change and parse, new connections use the new
/// certificate; when they do not parse, the previous certificate stays in use and a warning
/// is logged. Errors: serving fails.
pub async fn serve_listener(
    listener: TcpListener,
    certs: rsbuilder_runtime::tls::Certificates,
    router: Router,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    rsbuilder_runtime::tls::serve(
        listener,
        Arc::new(certs),
        router,
        shutdown,
        "webhook server",
    )
    .await
}

/// Warnings returned to the client (`kubectl` prints them) with an admission answer.
pub type Warnings = Vec<String>;

/// A validation failure: the message the API server shows the user, and optional warnings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Denied {
    /// Why the object is rejected; name the field and the rule (`spec.replicas: must be at
    /// most 100, got 200`).
    pub message: String,
    /// Warnings returned alongside the denial.
    pub warnings: Warnings,
}

impl Denied {
    /// A denial with a message and no warnings.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            warnings: Vec::new(),
        }
    }
}

/// The answer of a validating function: allowed with warnings, or [`Denied`].
pub type Validation = Result<Warnings, Denied>;

/// Functions that validate objects of kind `K` on create, update and delete.
pub struct Validator<K> {
    /// Called for `CREATE` with the new object.
    pub create: fn(&K) -> Validation,
    /// Called for `UPDATE` with the old and the new object.
    pub update: fn(&K, &K) -> Validation,
    /// Called for `DELETE` with the object being deleted.
    pub delete: fn(&K) -> Validation,
}

/// The response body of a webhook: the review with the answer.
pub type ReviewResponse = Json<AdmissionReview<DynamicObject>>;

/// Handles a defaulting webhook request: decodes the `AdmissionReview` in `body`, calls
/// `default` on the object, and answers with the JSON patch from the object as received to
/// the defaulted object (no patch when nothing changed). A body that is not an
/// AdmissionReview, or an object that is not a valid `K`, is answered as invalid (denied).
pub fn mutate<K>(body: &[u8], default: fn(&mut K)) -> ReviewResponse
where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    let req = match decode(body) {
        Ok(req) => req,
        Err(e) => return Json(AdmissionResponse::invalid(e).into_review()),
    };
    let response = AdmissionResponse::from(&req);
    let Some(raw) = req.object.as_ref() else {
        return Json(response.into_review());
    };
    let answer = (|| -> Result<AdmissionResponse, String> {
        let raw = serde_json::to_value(raw).map_err(|e| e.to_string())?;
        let mut object: K = serde_json::from_value(raw.clone()).map_err(|e| e.to_string())?;
        default(&mut object);
        let patch = defaulting_patch(&raw, &object).map_err(|e| e.to_string())?;
        if patch.0.is_empty() {
            return Ok(response.clone());
        }
        response
            .clone()
            .with_patch(patch)
            .map_err(|e| e.to_string())
    })();
    match answer {
        Ok(resp) => Json(resp.into_review()),
        Err(e) => Json(
            response
                .deny(format!("cannot default {}: {e}", K::kind(&())))
                .into_review(),
        ),
    }
}

/// Handles a validating webhook request: decodes the `AdmissionReview` in `body`, calls the
/// validator's function for the operation (`CREATE`, `UPDATE`, `DELETE`; `CONNECT` is
/// allowed), and answers allowed with warnings, or denied with the message.
pub fn validate<K>(body: &[u8], validator: &Validator<K>) -> ReviewResponse
where
    K: Resource + DeserializeOwned,
{
    let req = match decode(body) {
        Ok(req) => req,
        Err(e) => return Json(AdmissionResponse::invalid(e).into_review()),
    };
    let response = AdmissionResponse::from(&req);
    let typed = |o: &Option<DynamicObject>, which: &str| -> Result<K, String> {
        let o = o
            .as_ref()
            .ok_or_else(|| format!("the request has no {which}"))?;
        let v = serde_json::to_value(o).map_err(|e| e.to_string())?;
        serde_json::from_value(v).map_err(|e| format!("{which}: {e}"))
    };
    let verdict = match req.operation {
        Operation::Create => typed(&req.object, "object").map(|new| (validator.create)(&new)),
        Operation::Update => typed(&req.old_object, "oldObject")
            .and_then(|old| typed(&req.object, "object").map(|new| (validator.update)(&old, &new))),
        Operation::Delete => {
            typed(&req.old_object, "oldObject").map(|old| (validator.delete)(&old))
        }
        Operation::Connect => Ok(Ok(Vec::new())),
    };
    let answered = match verdict {
        Ok(Ok(warnings)) => with_warnings(response, warnings),
        Ok(Err(denied)) => with_warnings(response.deny(denied.message), denied.warnings),
        Err(e) => response.deny(format!("cannot decode the request: {e}")),
    };
    Json(answered.into_review())
}

fn with_warnings(mut response: AdmissionResponse, warnings: Warnings) -> AdmissionResponse {
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// Decodes an AdmissionReview body into its request, or the "invalid" answer.
fn decode(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, String> {
    let review: AdmissionReview<DynamicObject> =
        serde_json::from_slice(body).map_err(|e| format!("not an AdmissionReview: {e}"))?;
    review.try_into().map_err(|e| format!("{e}"))
}

/// The JSON patch (RFC 6902) that turns the object as received (`raw`) into `defaulted`.
/// `null` members are dropped on both sides first: for the typed object an absent optional
/// field and `null` are the same, so only real changes end up in the patch. Errors when
/// `defaulted` cannot be serialized.
pub fn defaulting_patch<K: Serialize>(
    raw: &serde_json::Value,
    defaulted: &K,
) -> Result<json_patch::Patch, serde_json::Error> {
    let mut before = raw.clone();
    let mut after = serde_json::to_value(defaulted)?;
    strip_nulls(&mut before);
    strip_nulls(&mut after);
    Ok(json_patch::diff(&before, &after))
}

fn strip_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_ignores_nulls_and_reports_changes() {
        let raw = serde_json::json!({"metadata": {"name": "a", "creationTimestamp": null}, "spec": {"x": 1}});
        let after =
            serde_json::json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": null, "z": "set"}});
        let patch = defaulting_patch(&raw, &after).unwrap();
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            serde_json::json!([{"op": "add", "path": "/spec/z", "value": "set"}])
        );
    }

    #[test]
    fn a_body_that_is_not_a_review_is_denied() {
        let Json(review) = validate::<k8s_openapi::api::core::v1::ConfigMap>(
            b"{}",
            &Validator {
                create: |_| Ok(Vec::new()),
                update: |_, _| Ok(Vec::new()),
                delete: |_| Ok(Vec::new()),
            },
        );
        let response = review.response.unwrap();
        assert!(!response.allowed);
        assert!(
            response.result.message.contains("AdmissionReview"),
            "{}",
            response.result.message
        );
    }
}
