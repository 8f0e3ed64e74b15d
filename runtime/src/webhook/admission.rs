// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! One AdmissionReview request, from the HTTP body to the answer: reading the body within
//! the limit, the kind check, and the calls of the user's [`Defaulter`] and [`Validator`].
//! The codes and messages of the failures are controller-runtime's (`webhook/admission`).

use std::future::Future;

use bytes::Bytes;
use http::StatusCode;
use http_body_util::BodyExt as _;

use super::review::{AdmissionRequest, AdmissionResponse, AdmissionReview, AdmissionReviewAnswer};
use super::{ADMISSION_BODY_LIMIT, Defaulter, Validator, WebhookKind, patch};
use crate::routes::{self, Request, Response};

/// Why a body could not be read: the HTTP-like code and the message.
pub(super) type BodyError = (u16, String);

/// Reads a JSON request body of at most `limit` bytes. Errors: 400 for a content type other
/// than `application/json` or an empty or unreadable body, 413 over `limit`.
pub(super) async fn read_body(request: Request, limit: usize) -> Result<Bytes, BodyError> {
    let content_type = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err((
            400,
            format!("contentType={content_type}, expected application/json"),
        ));
    }
    let too_large = || {
        (
            413,
            format!("request entity is too large; limit is {limit} bytes"),
        )
    };
    let declared = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut body = request.into_body();
    // Sized once from the declared length: growing by doubling would copy the body and could
    // hold twice its length.
    let mut read = Vec::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| (400, format!("cannot read the request body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if read.len() + data.len() > limit {
                return Err(too_large());
            }
            read.extend_from_slice(&data);
        }
    }
    let body = Bytes::from(read);
    if body.is_empty() {
        return Err((400, "request body is empty".to_string()));
    }
    Ok(body)
}

/// Answers one AdmissionReview POST: reads the body (up to [`ADMISSION_BODY_LIMIT`]),
/// decodes the review and passes its request to `handle`. Every answer is an AdmissionReview
/// with HTTP status 200, failures included, as controller-runtime answers: the API server
/// then shows the failure's message to the client.
pub(super) async fn serve<H, F>(request: Request, handle: H) -> Response
where
    H: FnOnce(AdmissionRequest) -> F,
    F: Future<Output = AdmissionResponse>,
{
    let ok = |answer: AdmissionReviewAnswer| routes::json(StatusCode::OK, &answer);
    let body = match read_body(request, ADMISSION_BODY_LIMIT).await {
        Ok(body) => body,
        Err((code, message)) => {
            return ok(AdmissionResponse::errored("", code, message).into_review(None));
        }
    };
    let review: AdmissionReview = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(e) => {
            let message = format!("the request body is not an AdmissionReview: {e}");
            return ok(AdmissionResponse::errored("", 400, message).into_review(None));
        }
    };
    let api_version = review.api_version;
    let response = match review.request {
        Some(request) => handle(request).await,
        None => AdmissionResponse::errored("", 400, "the AdmissionReview has no request"),
    };
    ok(response.into_review(api_version.as_deref()))
}

/// `group/version`, or `version` alone for the core group.
fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// A request the webhook cannot handle: the code and message of its "errored" answer.
type Failure = (u16, String);

/// Denies (code 400) a request whose `kind` or `resource` is not `K`: the webhook reads the
/// object as a `K`, and a patch computed that way would rewrite another kind's object. A
/// `CONNECT` request is checked on its resource alone (its kind is the connect options).
fn check_kind<K: WebhookKind>(req: &AdmissionRequest) -> Result<(), Failure> {
    let (group, version, kind, plural) =
        (K::group(&()), K::version(&()), K::kind(&()), K::plural(&()));
    let k = &req.kind;
    let r = &req.resource;
    // A CONNECT request carries the connect options (`PodExecOptions` for `pods/exec`) as
    // its kind; only its resource names the webhook's kind.
    let kind_matches =
        req.operation == "CONNECT" || (k.group == group && k.version == version && k.kind == kind);
    let resource_matches = r.group == group && r.version == version && r.resource == plural;
    if kind_matches && resource_matches {
        return Ok(());
    }
    Err((
        400,
        format!(
            "this webhook admits {kind} of {} (resource {plural}), not {} of {} (resource {}); \
             the rules of its webhook configuration must select only {plural} in {}",
            group_version(&group, &version),
            k.kind,
            group_version(&k.group, &k.version),
            r.resource,
            group_version(&group, &version),
        ),
    ))
}

/// Reads `which` (`object` or `oldObject`) of the request as a `K`, or the 400 answer.
fn typed<K: WebhookKind>(
    req: &AdmissionRequest,
    value: Option<&serde_json::Value>,
    which: &str,
) -> Result<K, Failure> {
    let value =
        value.ok_or_else(|| (400, format!("the {} request has no {which}", req.operation)))?;
    K::deserialize(value)
        .map_err(|e| (400, format!("cannot read {which} as {}: {e}", K::kind(&()))))
}

fn to_json<K: WebhookKind>(object: &K) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(object)
        .map_err(|e| (500, format!("cannot serialize {}: {e}", K::kind(&()))))
}

/// The defaulting answer: `DELETE` (and `CONNECT`) are admitted untouched; otherwise the
/// object is read as a `K`, `defaulter.default` runs on it, and the answer carries the JSON
/// patch of what it changed (see [`patch::merge`]), none when it changed nothing.
pub(super) async fn default<K: WebhookKind, D: Defaulter<K>>(
    defaulter: &D,
    req: AdmissionRequest,
) -> AdmissionResponse {
    let answer = async {
        check_kind::<K>(&req)?;
        if !matches!(req.operation.as_str(), "CREATE" | "UPDATE") {
            return Ok(AdmissionResponse::allowed(&req.uid));
        }
        let raw = req.object.as_ref();
        let mut object: K = typed(&req, raw, "object")?;
        let before = to_json(&object)?;
        if let Err(denied) = defaulter.default(&mut object).await {
            return Ok(
                AdmissionResponse::denied(&req.uid, denied.message).with_warnings(denied.warnings)
            );
        }
        let after = to_json(&object)?;
        let raw = raw.cloned().unwrap_or_default();
        let (_, ops) = patch::merge(&raw, &before, &after);
        Ok(AdmissionResponse::allowed(&req.uid).with_patch(&ops))
    };
    answer
        .await
        .unwrap_or_else(|(code, message)| AdmissionResponse::errored(&req.uid, code, message))
}

/// The validating answer: `validate_create` with the object on `CREATE`, `validate_update`
/// with the old and the new object on `UPDATE`, `validate_delete` with the old object on
/// `DELETE`. `CONNECT` (a `pods/exec`, `pods/attach` or `pods/portforward` request, whose
/// object is the connect options, not a `K`) is admitted without calling the validator, as
/// controller-runtime's `CustomValidator` admits it; any other operation is a bad request.
pub(super) async fn validate<K: WebhookKind, V: Validator<K>>(
    validator: &V,
    req: AdmissionRequest,
) -> AdmissionResponse {
    let answer = async {
        check_kind::<K>(&req)?;
        let verdict = match req.operation.as_str() {
            "CREATE" => {
                let object: K = typed(&req, req.object.as_ref(), "object")?;
                validator.validate_create(&object).await
            }
            "UPDATE" => {
                let new: K = typed(&req, req.object.as_ref(), "object")?;
                let old: K = typed(&req, req.old_object.as_ref(), "oldObject")?;
                validator.validate_update(&old, &new).await
            }
            "DELETE" => {
                let old: K = typed(&req, req.old_object.as_ref(), "oldObject")?;
                validator.validate_delete(&old).await
            }
            "CONNECT" => Ok(Vec::new()),
            other => {
                return Err((400, format!("unknown operation {other:?}")));
            }
        };
        Ok(match verdict {
            Ok(warnings) => AdmissionResponse::allowed(&req.uid).with_warnings(warnings),
            Err(denied) => {
                AdmissionResponse::denied(&req.uid, denied.message).with_warnings(denied.warnings)
            }
        })
    };
    answer
        .await
        .unwrap_or_else(|(code, message)| AdmissionResponse::errored(&req.uid, code, message))
}
