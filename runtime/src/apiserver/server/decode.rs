// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The request body, decoded: JSON objects, the patch type of `Content-Type`, apply patches
//! (YAML or JSON), and the unknown fields `fieldValidation` rules on (refused with `Strict`, a
//! `Warning` header each with `Warn`, dropped silently with `Ignore`), as k8s.io/apiserver's
//! handlers decode them.

use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use serde_json::Value;

use super::super::kind::ApiKind;
use super::super::objectmeta;
use super::super::registry::PatchType;
use super::super::status::ApiError;
use super::options::FieldValidation;

/// The body as JSON. Errors: 400 when it does not parse.
pub fn json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

/// A DeleteOptions body: `{}` when the body is empty. Errors: 400 when it does not parse.
pub fn delete_options(body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        Ok(Value::Object(Default::default()))
    } else {
        json(body)
    }
}

/// The patch type of a PATCH's `Content-Type` for `kind`. Errors: 415 for another media type,
/// and for a strategic merge patch of a kind without merge facts ([`ApiKind::merge_facts`]).
pub fn patch_type(headers: &HeaderMap, kind: &ApiKind) -> Result<PatchType, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    match content_type {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/apply-patch+yaml" => Ok(PatchType::Apply { force: false }),
        "application/strategic-merge-patch+json" if kind.merge_facts.is_some() => {
            Ok(PatchType::Strategic)
        }
        "application/strategic-merge-patch+json" => Err(ApiError::unsupported_media_type(
            crate::apiserver::strategic::NO_STRATEGIC_MERGE_PATCH,
        )),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other:?}); accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        ))),
    }
}

/// The body of an apply patch (`application/apply-patch+yaml`: YAML, of which JSON is a
/// part) as JSON bytes, for the registry and the unknown-field check. Errors: 400 when it
/// parses as neither, or is not an object.
pub fn apply_body(body: &Bytes) -> Result<Bytes, ApiError> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|e| {
                ApiError::bad_request(format!("the apply patch is not UTF-8 YAML: {e}"))
            })?;
            serde_saphyr::from_str(text).map_err(|e| {
                ApiError::bad_request(format!("the apply patch is neither JSON nor YAML: {e}"))
            })?
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request("the apply patch must be an object"));
    }
    Ok(Bytes::from(value.to_string()))
}

/// The duplicate keys ([`duplicate_fields`]) and the unknown fields of a write's body (an
/// object, or a merge patch) by `kind`'s schema, as `validation` rules: Out: the warning
/// texts (`duplicate field "spec.replicas"`, then `unknown field "spec.x"`) for `Warn`, none
/// for `Ignore`.
/// Errors: 400 `strict decoding error` naming them for `Strict`; 400 `<Kind> in version "v1"
/// cannot be handled as a <Kind>: json: cannot unmarshal ...` for a `metadata` that does not
/// decode as ObjectMeta ([`objectmeta::decode_error`]), whatever `validation`. A body that is not a JSON
/// object (a JSON patch, or one that does not parse) has none here; the registry answers it.
pub fn unknown_fields(
    kind: &ApiKind,
    validation: FieldValidation,
    body: &Bytes,
) -> Result<Vec<String>, ApiError> {
    let Ok(mut probe) = serde_json::from_slice::<Value>(body) else {
        return Ok(Vec::new());
    };
    if !probe.is_object() {
        return Ok(Vec::new());
    }
    if let Some(e) = probe.get("metadata").and_then(objectmeta::decode_error) {
        // The create and update handlers' `transformDecodeError` wording.
        return Err(ApiError::bad_request(format!(
            "{kind_name} in version {version:?} cannot be handled as a {kind_name}: {e}",
            kind_name = kind.kind,
            version = kind.version,
        )));
    }
    if validation == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let mut problems: Vec<String> = duplicate_fields(body)
        .iter()
        .map(|f| format!("duplicate field {f:?}"))
        .collect();
    problems.extend(
        kind.prune(&mut probe)
            .iter()
            .map(|f| format!("unknown field {f:?}")),
    );
    if validation == FieldValidation::Strict && !problems.is_empty() {
        return Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            problems.join(", ")
        )));
    }
    Ok(problems)
}

/// The paths of the keys that appear more than once in one object of the JSON text `body`
/// (`spec.replicas`, `spec.items[0].name`), in document order, each once, as
/// sigs.k8s.io/json's strict decoding names them (`duplicate field "spec.replicas"`); the
/// last value is the one kept, as serde_json and Go keep it. Empty for a body that is not
/// JSON.
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut scanner = Scanner { text: body, at: 0 };
    let mut found = Vec::new();
    scanner.value("", &mut found);
    found
}

/// A walk over JSON text already known to parse (serde_json read it first): only the
/// structure is followed, a malformed text ends the walk.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    /// A string token, decoded; the scanner is left after it.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.at += 1;
        while self.at < self.text.len() {
            match self.text[self.at] {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return serde_json::from_slice(&self.text[start..self.at]).ok();
                }
                _ => self.at += 1,
            }
        }
        None
    }

    fn value(&mut self, path: &str, found: &mut Vec<String>) -> Option<()> {
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut seen = std::collections::HashSet::new();
                let mut reported = std::collections::HashSet::new();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.peek()?;
                    let key = self.string()?;
                    let child = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    if !seen.insert(key.clone()) && reported.insert(key) {
                        found.push(child.clone());
                    }
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    self.value(&child, found)?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                if self.peek()? == b']' {
                    self.at += 1;
                    return Some(());
                }
                let mut i = 0;
                loop {
                    self.value(&format!("{path}[{i}]"), found)?;
                    i += 1;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while self.at < self.text.len()
                    && !matches!(self.text[self.at], b',' | b'}' | b']')
                    && !self.text[self.at].is_ascii_whitespace()
                {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_named_by_path_once_each_in_document_order() {
        let body = br#"{"metadata":{"name":"a","name":"b"},"spec":{"replicas":1,"items":[{"k":1},{"k":1,"k":2,"k":3}],"replicas":2,"x\"y":0,"x\"y":1},"spec":{}}"#;
        assert_eq!(
            duplicate_fields(body),
            [
                "metadata.name",
                "spec.items[1].k",
                "spec.replicas",
                "spec.x\"y",
                "spec"
            ]
        );
        assert!(duplicate_fields(br#"{"a":{"a":1},"b":[1,"a",{"a":null}]}"#).is_empty());
        assert!(duplicate_fields(b"not json").is_empty());
    }
}
