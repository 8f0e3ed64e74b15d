// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The CRD conversion webhook: the API server posts a ConversionReview
//! (`apiextensions.k8s.io/v1`) with objects to convert to `desiredAPIVersion`, and reads back
//! the converted objects in the same order, or a failure.
//!
//! Versions convert hub and spoke, as in controller-runtime: one version of a kind is the
//! hub, every other version (a spoke) converts to the hub and back ([`Convert`]), so any
//! version reaches any other through the hub. The converted object is the received one with
//! only what the conversion changed (see [`super::patch::merge`]): `metadata`, which the API
//! server requires unchanged apart from labels and annotations, and everything else the
//! versions share stay as they were sent.

use std::sync::Arc;

use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::admission::read_body;
use super::{WebhookKind, patch};
use crate::routes::{self, Request, Response};

/// Path of the conversion webhook, as the CRD's `spec.conversion.webhook.clientConfig`
/// names it (`config/crd/patches/webhook_in_<plural>.yaml`).
pub const CONVERSION_PATH: &str = "/convert";

/// A spoke version `Self` of the kind whose hub version is `Hub`: both conversions, for
/// example `impl Convert<v1::AIJob> for v2::AIJob`. They must be lossless together (what
/// the hub cannot hold goes into an annotation and comes back from it), because the API
/// server stores one version and serves the others by converting.
pub trait Convert<Hub>: Sized {
    /// Converts this spoke object to the hub version. Errors fail the whole review with
    /// the message.
    fn to_hub(self) -> anyhow::Result<Hub>;
    /// Converts a hub object to this spoke version.
    fn from_hub(hub: Hub) -> anyhow::Result<Self>;
}

type ToHub<H> = fn(&Value) -> Result<(Value, H), String>;
type FromHub<H> = fn(H) -> Result<Value, String>;

struct Spoke<H> {
    api_version: String,
    kind: String,
    to_hub: ToHub<H>,
    from_hub: FromHub<H>,
}

/// The conversions of one kind: its hub version `H` and the spokes added with
/// [`Conversion::spoke`]. Register it with [`super::Webhooks::conversion`].
pub struct Conversion<H> {
    spokes: Vec<Spoke<H>>,
}

impl<H: WebhookKind> Default for Conversion<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: WebhookKind> Conversion<H> {
    /// The hub `H` with no spokes yet.
    pub fn new() -> Self {
        Self { spokes: Vec::new() }
    }

    /// Adds the spoke version `S`, converted by its [`Convert<H>`] implementation.
    pub fn spoke<S: WebhookKind + Convert<H>>(mut self) -> Self {
        self.spokes.push(Spoke {
            api_version: S::api_version(&()).to_string(),
            kind: S::kind(&()).to_string(),
            to_hub: spoke_to_hub::<H, S>,
            from_hub: hub_to_spoke::<H, S>,
        });
        self
    }

    /// Spokes that cannot belong to this hub: another kind, or the hub's own version.
    pub(super) fn problems(&self) -> Vec<String> {
        let (hub_version, hub_kind) = (H::api_version(&()), H::kind(&()));
        self.spokes
            .iter()
            .filter(|s| s.kind != hub_kind || s.api_version == hub_version)
            .map(|s| {
                format!(
                    "the spoke {} {} cannot convert to the hub {hub_version} {hub_kind}",
                    s.api_version, s.kind
                )
            })
            .collect()
    }

    fn versions(&self) -> String {
        std::iter::once(H::api_version(&()).to_string())
            .chain(self.spokes.iter().map(|s| s.api_version.clone()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads `from` as the version `B`: every field with the same JSON name carries over, and
/// `apiVersion` becomes `B`'s. What a scaffolded [`Convert`] does until the versions' fields
/// differ. Errors: `from` does not read as a `B` (a field `B` requires is missing, or has
/// another type), with serde's message naming the field.
pub fn carry_over<A: Serialize, B: WebhookKind>(from: &A) -> anyhow::Result<B> {
    let mut value = serde_json::to_value(from)?;
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "apiVersion".into(),
            Value::String(B::api_version(&()).into_owned()),
        );
    }
    B::deserialize(value).map_err(|e| {
        anyhow::anyhow!(
            "cannot carry the fields over to {} {}: {e}",
            B::api_version(&()),
            B::kind(&())
        )
    })
}

fn spoke_to_hub<H, S: WebhookKind + Convert<H>>(raw: &Value) -> Result<(Value, H), String> {
    let spoke: S = read(raw)?;
    let before = json(&spoke)?;
    let hub = spoke
        .to_hub()
        .map_err(|e| format!("{} {}: {e:#}", S::api_version(&()), S::kind(&())))?;
    Ok((before, hub))
}

fn hub_to_spoke<H, S: WebhookKind + Convert<H>>(hub: H) -> Result<Value, String> {
    let spoke = S::from_hub(hub)
        .map_err(|e| format!("to {} {}: {e:#}", S::api_version(&()), S::kind(&())))?;
    json(&spoke)
}

fn read<K: WebhookKind>(raw: &Value) -> Result<K, String> {
    K::deserialize(raw).map_err(|e| {
        format!(
            "cannot read the object as {} {}: {e}",
            K::api_version(&()),
            K::kind(&())
        )
    })
}

fn json<K: WebhookKind>(object: &K) -> Result<Value, String> {
    serde_json::to_value(object).map_err(|e| format!("cannot serialize {}: {e}", K::kind(&())))
}

/// One kind's conversions with the hub type erased, for the server's table.
pub(super) trait KindConversion: Send + Sync {
    fn group(&self) -> String;
    fn kind(&self) -> String;
    /// `raw` (of this kind, in its `apiVersion`) in `desired`.
    fn convert(&self, raw: &Value, desired: &str) -> Result<Value, String>;
}

impl<H: WebhookKind> KindConversion for Conversion<H> {
    fn group(&self) -> String {
        H::group(&()).to_string()
    }

    fn kind(&self) -> String {
        H::kind(&()).to_string()
    }

    fn convert(&self, raw: &Value, desired: &str) -> Result<Value, String> {
        let from = raw["apiVersion"].as_str().unwrap_or_default();
        if from == desired {
            return Ok(raw.clone());
        }
        let hub_version = H::api_version(&());
        let unknown = |v: &str| {
            format!(
                "{} has no version {v:?} here (conversions: {})",
                H::kind(&()),
                self.versions()
            )
        };
        let (before, hub) = if from == hub_version {
            let hub: H = read(raw)?;
            (json(&hub)?, hub)
        } else {
            let spoke = self.spokes.iter().find(|s| s.api_version == from);
            (spoke.ok_or_else(|| unknown(from))?.to_hub)(raw)?
        };
        let mut after = if desired == hub_version {
            json(&hub)?
        } else {
            let spoke = self.spokes.iter().find(|s| s.api_version == desired);
            (spoke.ok_or_else(|| unknown(desired))?.from_hub)(hub)?
        };
        if let Some(object) = after.as_object_mut() {
            object.insert("apiVersion".into(), Value::String(desired.to_string()));
        }
        Ok(patch::merge(raw, &before, &after).0)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConversionReview {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    request: Option<ConversionRequest>,
}

#[derive(Deserialize)]
struct ConversionRequest {
    uid: String,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: String,
    #[serde(default)]
    objects: Vec<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversionAnswer {
    api_version: String,
    kind: &'static str,
    response: ConversionResponse,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversionResponse {
    uid: String,
    converted_objects: Vec<Value>,
    result: ConversionResult,
}

#[derive(Serialize)]
struct ConversionResult {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn answer(
    api_version: Option<String>,
    uid: String,
    converted: Result<Vec<Value>, String>,
) -> ConversionAnswer {
    let (converted_objects, result) = match converted {
        Ok(objects) => (
            objects,
            ConversionResult {
                status: "Success",
                message: None,
            },
        ),
        Err(message) => (
            Vec::new(),
            ConversionResult {
                status: "Failure",
                message: Some(message),
            },
        ),
    };
    ConversionAnswer {
        api_version: api_version.unwrap_or_else(|| "apiextensions.k8s.io/v1".to_string()),
        kind: "ConversionReview",
        response: ConversionResponse {
            uid,
            converted_objects,
            result,
        },
    }
}

/// Answers one ConversionReview POST: every object converted to `desiredAPIVersion` with the
/// conversion of its group and kind, in order, or a `Failure` naming the first object that
/// could not be converted. A body that cannot be read or is not a ConversionReview gets
/// HTTP 400 (413 over `limit`) with a `Failure` review saying why.
pub(super) async fn serve(
    request: Request,
    conversions: Arc<Vec<Arc<dyn KindConversion>>>,
    limit: usize,
) -> Response {
    let bad = |code: u16, message: String| {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
        routes::json(status, &answer(None, String::new(), Err(message)))
    };
    let body = match read_body(request, limit).await {
        Ok(body) => body,
        Err((code, message)) => return bad(code, message),
    };
    let review: ConversionReview = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(e) => {
            return bad(
                400,
                format!("the request body is not a ConversionReview: {e}"),
            );
        }
    };
    let Some(request) = review.request else {
        return bad(400, "the ConversionReview has no request".to_string());
    };
    let desired = &request.desired_api_version;
    let converted = request
        .objects
        .iter()
        .enumerate()
        .map(|(i, object)| {
            convert_one(&conversions, object, desired).map_err(|e| {
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                format!("object {i} ({name:?}): {e}")
            })
        })
        .collect();
    routes::json(
        StatusCode::OK,
        &answer(review.api_version, request.uid, converted),
    )
}

fn convert_one(
    conversions: &[Arc<dyn KindConversion>],
    object: &Value,
    desired: &str,
) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let desired_group = desired.rsplit_once('/').map_or("", |(g, _)| g);
    if group != desired_group {
        return Err(format!(
            "cannot convert {kind} from {api_version} to {desired}: another API group"
        ));
    }
    let conversion = conversions
        .iter()
        .find(|c| c.group() == group && c.kind() == kind)
        .ok_or_else(|| format!("no conversion for {kind} of {group:?} is served here"))?;
    conversion.convert(object, desired)
}
