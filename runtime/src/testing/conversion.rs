// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Serving every version of a multi-version CRD, as the apiextensions server does: objects are
//! stored in the storage version, and a request for another version has its body converted
//! to the storage version on the way in and its answer (object, list, watch events) converted
//! back on the way out. The CRD's `spec.conversion.strategy` says how: `None` changes only
//! `apiVersion`; `Webhook` sends an `apiextensions.k8s.io/v1` ConversionReview to the
//! project's conversion webhook (its [`crate::webhook::Webhooks`] routes, in-process), at the
//! path of `spec.conversion.webhook.clientConfig.service.path`.
//!
//! A PATCH of a version other than the storage version is refused (400): the patch would have
//! to be applied to the object in that version, which the front door does not do.

use std::collections::HashMap;

use http_body_util::BodyExt as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use crate::apiserver::status::ApiError;
use crate::routes::Routes;

/// How one multi-version CRD converts.
#[derive(Debug, Clone)]
pub(crate) struct Versions {
    pub(crate) storage: String,
    group: String,
    kind: String,
    /// The conversion webhook's path; `None` for strategy `None`.
    webhook: Option<String>,
}

/// The multi-version CRDs, by (group, plural), and the project's webhook routes.
#[derive(Default)]
pub(crate) struct Conversions {
    crds: HashMap<(String, String), Versions>,
    routes: Routes,
}

impl Conversions {
    /// The conversions of `crds` that serve more than one version. Errors: a `Webhook`
    /// strategy without a service path, or without the project's webhooks to call.
    pub(crate) fn new(
        crds: &[CustomResourceDefinition],
        routes: Option<&Routes>,
    ) -> anyhow::Result<Self> {
        let mut out = HashMap::new();
        for crd in crds {
            if crd.spec.versions.iter().filter(|v| v.served).count() < 2 {
                continue;
            }
            let name = crd.metadata.name.clone().unwrap_or_default();
            let storage = super::crds::storage_version(crd)
                .ok_or_else(|| anyhow::anyhow!("CRD {name} has no storage version"))?
                .to_string();
            let webhook = match crd.spec.conversion.as_ref().map(|c| c.strategy.as_str()) {
                None | Some("None") => None,
                Some("Webhook") => {
                    let path = crd
                        .spec
                        .conversion
                        .as_ref()
                        .and_then(|c| c.webhook.as_ref())
                        .and_then(|w| w.client_config.as_ref())
                        .and_then(|c| c.service.as_ref())
                        .and_then(|s| s.path.clone())
                        .ok_or_else(|| anyhow::anyhow!("CRD {name}: conversion strategy Webhook without spec.conversion.webhook.clientConfig.service.path"))?;
                    if routes.is_none() {
                        anyhow::bail!(
                            "CRD {name} converts with a webhook: give the test cluster the project's webhooks (Builder::webhooks)"
                        );
                    }
                    Some(path)
                }
                Some(other) => anyhow::bail!("CRD {name}: unknown conversion strategy {other:?}"),
            };
            out.insert(
                (crd.spec.group.clone(), crd.spec.names.plural.clone()),
                Versions {
                    storage,
                    group: crd.spec.group.clone(),
                    kind: crd.spec.names.kind.clone(),
                    webhook,
                },
            );
        }
        Ok(Self {
            crds: out,
            routes: routes.cloned().unwrap_or_default(),
        })
    }

    /// The storage version of `group`/`plural`, for a multi-version CRD.
    pub(crate) fn storage_version(&self, group: &str, plural: &str) -> Option<&str> {
        self.crds
            .get(&(group.to_string(), plural.to_string()))
            .map(|v| v.storage.as_str())
    }

    /// How `group`/`plural` converts, when a request for `version` needs it (another version
    /// than the storage version of a multi-version CRD).
    pub(crate) fn needed(&self, group: &str, plural: &str, version: &str) -> Option<&Versions> {
        self.crds
            .get(&(group.to_string(), plural.to_string()))
            .filter(|v| v.storage != version)
    }

    /// `objects` (of the CRD's kind, in any served version) in `desired` (`group/version`).
    /// Errors: 500 when the webhook fails or answers a failure, as the apiextensions server
    /// answers a failed conversion.
    pub(crate) async fn convert(
        &self,
        versions: &Versions,
        objects: Vec<Value>,
        desired: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let Some(path) = &versions.webhook else {
            return Ok(objects
                .into_iter()
                .map(|mut o| {
                    o["apiVersion"] = Value::String(desired.to_string());
                    o
                })
                .collect());
        };
        if objects.iter().all(|o| o["apiVersion"] == desired) {
            return Ok(objects);
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
        });
        let failed = |why: String| {
            ApiError::internal(format!(
                "conversion webhook for {}, Kind={} failed: {why}",
                versions.group, versions.kind
            ))
        };
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(crate::routes::body(review.to_string()))
            .map_err(|e| failed(e.to_string()))?;
        let answer = self.routes.call(request).await;
        let code = answer.status();
        let body = answer
            .into_body()
            .collect()
            .await
            .map_err(|e| failed(e.to_string()))?
            .to_bytes();
        if !code.is_success() {
            return Err(failed(format!(
                "the webhook answered {code}: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        let review: Value = serde_json::from_slice(&body).map_err(|e| failed(e.to_string()))?;
        let response = &review["response"];
        if response["uid"] != uid.as_str() {
            return Err(failed(format!("expected response.uid={uid:?}")));
        }
        if response.pointer("/result/status").and_then(Value::as_str) != Some("Success") {
            let message = response
                .pointer("/result/message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Err(failed(message.to_string()));
        }
        let converted = response["convertedObjects"]
            .as_array()
            .cloned()
            .ok_or_else(|| failed("no convertedObjects".into()))?;
        Ok(converted)
    }

    /// One object in `desired`.
    pub(crate) async fn convert_one(
        &self,
        versions: &Versions,
        object: Value,
        desired: &str,
    ) -> Result<Value, ApiError> {
        self.convert(versions, vec![object], desired)
            .await?
            .pop()
            .ok_or_else(|| ApiError::internal("the conversion returned no object"))
    }

    /// An answer's body in `desired`: an object of the kind, or the items of a list (a
    /// Status or anything else passes as it is).
    pub(crate) async fn convert_answer(
        &self,
        versions: &Versions,
        mut body: Value,
        desired: &str,
    ) -> Result<Value, ApiError> {
        let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == versions.kind {
            return self.convert_one(versions, body, desired).await;
        }
        if kind == format!("{}List", versions.kind) {
            let items = body["items"].as_array().cloned().unwrap_or_default();
            body["items"] = Value::Array(self.convert(versions, items, desired).await?);
            body["apiVersion"] = Value::String(desired.to_string());
        }
        Ok(body)
    }
}
