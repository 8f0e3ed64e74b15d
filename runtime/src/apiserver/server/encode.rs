// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The answer's encoding: `Accept` negotiation (JSON, the `meta.k8s.io/v1` Table, aggregated
//! discovery), JSON bodies (indented with `pretty=true`), `Warning` headers (de-duplicated
//! and truncated as k8s.io/apiserver's warning recorder does), and errors as
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

/// A handler's successful answer: code, body and the warnings to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The HTTP code.
    pub code: StatusCode,
    /// The JSON body.
    pub body: Value,
    /// Warning texts, each sent as a `Warning: 299 - "<text>"` header ([`Warnings`]).
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

    /// The same answer with the warning texts `warnings` added.
    pub fn warn(mut self, warnings: Vec<String>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    /// The HTTP response (indented JSON when `pretty`), its warnings de-duplicated and
    /// truncated by [`Warnings`].
    pub fn into_response(self, pretty: bool) -> Response {
        let mut r = json_response(self.code, &self.body, pretty);
        let mut recorded = Warnings::default();
        for w in &self.warnings {
            recorded.add(w);
        }
        for h in recorded.headers() {
            if let Ok(v) = HeaderValue::from_bytes(h.as_bytes()) {
                r.headers_mut().append(header::WARNING, v);
            }
        }
        r
    }
}

/// The `Warning` headers of one answer, as k8s.io/apiserver's warning recorder
/// (`endpoints/filters/warning.go`) writes them: each text once (a repeat is dropped), empty
/// texts and texts with control characters dropped, each as `299 - "<text>"` (`"` and `\`
/// escaped). Past `total_runes` characters of text in all (4096), every text is cut to
/// `item_runes` characters (256), those already recorded too, and once the cut texts reach
/// the total again the rest are dropped: a write with thousands of unknown fields gets a few
/// kilobytes of headers, not megabytes.
#[derive(Debug, Clone)]
pub struct Warnings {
    total_runes: usize,
    item_runes: usize,
    seen: std::collections::HashSet<String>,
    ordered: Vec<String>,
    written: usize,
    truncating: bool,
    headers: Vec<String>,
}

impl Default for Warnings {
    /// k8s.io/apiserver's limits: 4096 characters in all, 256 per warning once truncating.
    fn default() -> Self {
        Self::with_limits(4 * 1024, 256)
    }
}

impl Warnings {
    /// A recorder with these limits (characters of text in all, and per warning once past
    /// the total).
    pub fn with_limits(total_runes: usize, item_runes: usize) -> Self {
        Self {
            total_runes,
            item_runes,
            seen: Default::default(),
            ordered: Vec::new(),
            written: 0,
            truncating: false,
            headers: Vec::new(),
        }
    }

    /// Records the warning `text`.
    pub fn add(&mut self, text: &str) {
        if text.is_empty() || (self.truncating && self.written >= self.total_runes) {
            return;
        }
        if !self.seen.insert(text.to_string()) {
            return;
        }
        self.ordered.push(text.to_string());
        let (text, runes) = self.cut(text);
        let Some(header) = warning_header(&text) else {
            return;
        };
        if self.truncating || self.written + runes <= self.total_runes {
            self.written += runes;
            self.headers.push(header);
            return;
        }
        // Over the total for the first time: start again with every text cut.
        self.truncating = true;
        self.written = 0;
        self.headers.clear();
        for text in std::mem::take(&mut self.ordered) {
            let (cut, runes) = self.cut(&text);
            if let Some(header) = warning_header(&cut) {
                self.written += runes;
                self.headers.push(header);
            }
            self.ordered.push(text);
        }
    }

    /// `text` cut to the per-warning limit when truncating, and its length in characters.
    fn cut(&self, text: &str) -> (String, usize) {
        let runes = text.chars().count();
        if self.truncating && runes > self.item_runes {
            (
                text.chars().take(self.item_runes).collect(),
                self.item_runes,
            )
        } else {
            (text.to_string(), runes)
        }
    }

    /// The `Warning` header values, in the order their texts were added.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }
}

/// `299 - "<text>"` with `"` and `\` escaped, as apimachinery's `NewWarningHeader` makes it;
/// `None` for a text with a control character, which it refuses.
fn warning_header(text: &str) -> Option<String> {
    if text.chars().any(char::is_control) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("299 - \"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// k8s.io/apiserver's `TestTruncation` case, with its small limits (25 in all, 5 each).
    #[test]
    fn warnings_are_deduplicated_then_truncated_past_the_total() {
        let mut w = Warnings::with_limits(25, 5);
        for text in ["aaaaaaaaaa", "aaaaaaaaaa", "bb", "ccc", "Iñtërnâtiô"] {
            w.add(text);
        }
        assert_eq!(
            w.headers(),
            [
                r#"299 - "aaaaaaaaaa""#,
                r#"299 - "bb""#,
                r#"299 - "ccc""#,
                r#"299 - "Iñtërnâtiô""#
            ]
        );
        // "e" goes past 25: every text is cut to 5 characters, then added until the cut
        // texts reach 25 again; "h" comes after that and is dropped.
        for text in ["e", "ffffffffff", "ffffffffff", "gggggggggg", "h"] {
            w.add(text);
        }
        assert_eq!(
            w.headers(),
            [
                r#"299 - "aaaaa""#,
                r#"299 - "bb""#,
                r#"299 - "ccc""#,
                r#"299 - "Iñtër""#,
                r#"299 - "e""#,
                r#"299 - "fffff""#,
                r#"299 - "ggggg""#
            ]
        );
    }

    #[test]
    fn a_warning_is_quoted_and_one_with_a_control_character_is_dropped() {
        let mut w = Warnings::default();
        for text in ["", "say \"hi\" \\ there", "two\nlines"] {
            w.add(text);
        }
        assert_eq!(w.headers(), [r#"299 - "say \"hi\" \\ there""#]);
    }

    #[test]
    fn thousands_of_warnings_make_a_few_kilobytes_of_headers() {
        let texts: Vec<String> = (0..100_000)
            .map(|i| format!("unknown field \"spec.field{i}\""))
            .collect();
        let answer = Answer::ok(json!({})).warn(texts);
        let r = answer.into_response(false);
        let headers: Vec<&str> = r
            .headers()
            .get_all(header::WARNING)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        let bytes: usize = headers.iter().map(|h| h.len()).sum();
        assert!(
            bytes < 8 * 1024,
            "{bytes} bytes in {} headers",
            headers.len()
        );
        assert_eq!(headers[0], r#"299 - "unknown field \"spec.field0\"""#);
    }
}
