// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The answer's encoding: `Accept` negotiation (JSON, the `meta.k8s.io/v1` Table, aggregated
//! discovery), JSON bodies (indented with `pretty=true`), `Warning` headers, and errors as
//! `metav1.Status` bodies, as k8s.io/apiserver's `endpoints/handlers/responsewriters` and
//! `negotiation` answer.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::super::kind::ApiKind;
use super::super::status::ApiError;
use super::super::table::{self, IncludeObject};

/// A JSON answer with `code`; indented when `pretty`.
pub fn json_response(code: StatusCode, body: &Value, pretty: bool) -> Response {
    let text = if pretty {
        serde_json::to_string_pretty(body).unwrap_or_else(|_| body.to_string())
    } else {
        body.to_string()
    };
    let mut r = (code, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(
            StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &self.to_status(),
            false,
        )
    }
}

/// A handler's successful answer: code, body and the `Warning` headers to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The HTTP code.
    pub code: StatusCode,
    /// The JSON body.
    pub body: Value,
    /// `Warning` header values (`299 - "..."`).
    pub warnings: Vec<String>,
}

impl Answer {
    /// 200 OK with `body`.
    pub fn ok(body: Value) -> Self {
        Self::new(StatusCode::OK, body)
    }

    /// `code` with `body` and no warnings.
    pub fn new(code: StatusCode, body: Value) -> Self {
        Self {
            code,
            body,
            warnings: Vec::new(),
        }
    }

    /// The same answer with `warnings` added.
    pub fn warn(mut self, warnings: Vec<String>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    /// The HTTP response (indented JSON when `pretty`).
    pub fn into_response(self, pretty: bool) -> Response {
        let mut r = json_response(self.code, &self.body, pretty);
        for w in self.warnings {
            if let Ok(v) = HeaderValue::from_str(&w) {
                r.headers_mut().append(header::WARNING, v);
            }
        }
        r
    }
}

/// What the client asked for in `Accept`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accept {
    /// A `meta.k8s.io/v1` Table instead of the objects.
    pub table: bool,
    /// `meta.k8s.io/v1` PartialObjectMetadata (and `...List`) instead of the objects: only
    /// their metadata, as kube-runtime's metadata watcher (a controller's `owns`) asks.
    pub metadata: bool,
}

/// The `Accept` header negotiated. Errors: 406 when it names nothing served here.
pub fn accept(headers: &HeaderMap) -> Result<Accept, ApiError> {
    let raw = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if raw.is_empty() {
        return Ok(Accept::default());
    }
    let mut json_ok = false;
    for item in raw.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        let params: Vec<&str> = parts.collect();
        let is_json = matches!(media, "application/json" | "*/*" | "application/*");
        let meta_v1 = params.contains(&"v=v1") && params.contains(&"g=meta.k8s.io");
        if is_json && params.contains(&"as=Table") {
            if meta_v1 {
                return Ok(Accept {
                    table: true,
                    metadata: false,
                });
            }
            continue;
        }
        if is_json
            && (params.contains(&"as=PartialObjectMetadata")
                || params.contains(&"as=PartialObjectMetadataList"))
        {
            if meta_v1 {
                return Ok(Accept {
                    table: false,
                    metadata: true,
                });
            }
            continue;
        }
        if is_json && !params.iter().any(|p| p.starts_with("as=")) {
            json_ok = true;
        }
    }
    if json_ok {
        Ok(Accept::default())
    } else {
        Err(ApiError::not_acceptable(
            "only the following media types are accepted: application/json, application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
        ))
    }
}

/// The media type of aggregated discovery (`apidiscovery.k8s.io/v2`).
pub const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether `Accept` asks for aggregated discovery v2 (kubectl asks for it first, with the
/// legacy documents as a fallback).
pub fn wants_aggregated(headers: &HeaderMap) -> bool {
    let raw = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    raw.split(',').any(|item| {
        let params: Vec<&str> = item.split(';').map(str::trim).collect();
        params.first() == Some(&"application/json")
            && params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// One object of `kind` as the client asked: itself, or a one-row Table. A body of another
/// kind (a Status) is sent as it is.
pub fn object(kind: &ApiKind, accepts: Accept, include: IncludeObject, v: Value) -> Value {
    let of_kind = v.get("kind").and_then(Value::as_str) == Some(kind.kind.as_str());
    if accepts.metadata && of_kind {
        return partial(&v);
    }
    if accepts.table && of_kind {
        let rv = v["metadata"]["resourceVersion"].clone();
        table::table(kind, &[v], json!({"resourceVersion": rv}), include, true)
    } else {
        v
    }
}

/// A `<Kind>List` as the client asked: itself, or a Table of its items.
pub fn list(kind: &ApiKind, accepts: Accept, include: IncludeObject, list: Value) -> Value {
    if accepts.metadata {
        let items: Vec<Value> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(partial)
            .collect();
        return json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadataList",
            "metadata": list["metadata"],
            "items": items,
        });
    }
    if !accepts.table {
        return list;
    }
    let items = list["items"].as_array().cloned().unwrap_or_default();
    table::table(kind, &items, list["metadata"].clone(), include, true)
}

/// An object as a `meta.k8s.io/v1` PartialObjectMetadata: its metadata alone, as
/// k8s.io/apiserver's handlers transform it for `as=PartialObjectMetadata`.
pub fn partial(v: &Value) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": v.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}
