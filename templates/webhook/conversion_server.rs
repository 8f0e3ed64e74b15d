//! The CRD conversion webhook at `/convert`. The API server sends a ConversionReview with
//! objects to convert to `desiredAPIVersion`; each object goes to the conversion function of
//! its group and kind, which `rsbuilder create webhook --conversion` registers before the
//! `+kubebuilder:scaffold:conversion-kinds` marker below.

use axum::Json;
use axum::body::Bytes;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

/// Path of the conversion webhook, as the CRD patches under `config/crd/patches` name it.
pub const CONVERSION_PATH: &str = "/convert";

/// The conversion webhook's handler.
pub async fn convert(body: Bytes) -> Json<ConversionReview> {
    Json(review(&body))
}

/// Answers a ConversionReview body: every object converted, in order, or a failure naming
/// the first object that could not be converted. A body that is not a ConversionReview is
/// answered as a failure too.
pub fn review(body: &[u8]) -> ConversionReview {
    let request = serde_json::from_slice::<ConversionReview>(body)
        .map_err(|e| format!("not a ConversionReview: {e}"))
        .and_then(|r| ConversionRequest::from_review(r).map_err(|e| e.to_string()));
    let request = match request {
        Ok(request) => request,
        Err(e) => {
            return ConversionResponse::invalid(Status::failure(&e, "BadRequest")).into_review();
        }
    };
    let desired = request.desired_api_version.clone();
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| convert_object(object.clone(), &desired))
        .collect();
    let response = ConversionResponse::for_request(request);
    match converted {
        Ok(objects) => response.success(objects).into_review(),
        Err(e) => response
            .failure(Status::failure(&e, "ConversionFailed"))
            .into_review(),
    }
}

/// Converts one object to `desired_api_version` with the function of its group and kind.
/// Objects already at that version are returned as they are.
pub fn convert_object(object: Value, desired_api_version: &str) -> Result<Value, String> {
    let api_version = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    if api_version == desired_api_version {
        return Ok(object);
    }
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    match (group, kind.as_str()) {
        // +kubebuilder:scaffold:conversion-kinds
        _ => Err(format!(
            "no conversion for {kind} from {api_version} to {desired_api_version}"
        )),
    }
}
