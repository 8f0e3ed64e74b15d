// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Object metadata validation, as k8s.io/apimachinery's `ValidateObjectMetaAccessor` and
//! `ValidateObjectMetaAccessorUpdate` (`pkg/api/validation/objectmeta.go`) run it on every
//! custom resource: the name and `generateName` (DNS-1123 subdomains), labels
//! (`ValidateLabels`: qualified-name keys, label values), annotations (qualified-name keys
//! checked lower-cased, 256 KiB in all), `ownerReferences` and finalizers (qualified names;
//! not both `orphan` and `foregroundDeletion`); on update, the fields kube keeps or refuses to
//! change. Messages are the API server's (`pkg/util/validation`'s wording, `field.Error`'s
//! `<Type>: <value>: <detail>` form); a cause is `(field path, message)`.
//!
//! Where kube prints a Go value in a message, strings are quoted as Go's `%q` does; lists and
//! structs are printed as JSON, as kube-apiserver prints them (`Invalid value: [{"apiVersion":…}]`).

use serde_json::{Map, Value};

use crate::apiserver::quote::go_quote;

/// A failed rule: the field path and the message (`Invalid value: "x": …`).
pub(super) type Cause = (String, String);

/// `TotalAnnotationSizeLimitB`: keys and values of all annotations together, in bytes.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// `RegexError`'s sentence: the rule, examples, and the regex.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_shape(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
}

/// `IsDNS1123Subdomain`: what is wrong with `s` as a DNS-1123 subdomain (nothing: empty).
pub fn dns_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !super::super::names::is_subdomain_shape(s) {
        errs.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// `IsQualifiedName`: what is wrong with `s` as a qualified name (an optional DNS-subdomain
/// prefix and `/`, then a name of at most 63 characters).
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_shape(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: what is wrong with `s` as a label value (at most 63 characters, may
/// be empty).
pub fn label_value_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_shape(s) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

fn invalid(value: &str, detail: &str) -> String {
    format!("Invalid value: {}: {detail}", go_quote(value))
}

/// A string-to-string map at `metadata.<field>`, or the cause saying it is not one.
fn string_map<'a>(
    meta: &'a Map<String, Value>,
    field: &str,
    causes: &mut Vec<Cause>,
) -> Vec<(&'a str, &'a str)> {
    match meta.get(field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => {
            let mut out = Vec::new();
            for (k, v) in m {
                match v.as_str() {
                    Some(v) => out.push((k.as_str(), v)),
                    None => causes.push((
                        format!("metadata.{field}"),
                        format!("Invalid value: {v}: {field} must be a map of strings"),
                    )),
                }
            }
            out
        }
        Some(other) => {
            causes.push((
                format!("metadata.{field}"),
                format!("Invalid value: {other}: {field} must be a map of strings"),
            ));
            Vec::new()
        }
    }
}

/// `ValidateLabels`: each key a qualified name, each value a label value, all at
/// `metadata.labels`.
fn labels(meta: &Map<String, Value>, causes: &mut Vec<Cause>) {
    for (k, v) in string_map(meta, "labels", causes) {
        for m in qualified_name_errors(k) {
            causes.push(("metadata.labels".into(), invalid(k, &m)));
        }
        for m in label_value_errors(v) {
            causes.push(("metadata.labels".into(), invalid(v, &m)));
        }
    }
}

/// `ValidateAnnotations`: each key a qualified name once lower-cased (the message quotes the
/// key as sent), and keys and values at most [`ANNOTATIONS_MAX_BYTES`] together.
fn annotations(meta: &Map<String, Value>, causes: &mut Vec<Cause>) {
    let mut size = 0usize;
    for (k, v) in string_map(meta, "annotations", causes) {
        for m in qualified_name_errors(&k.to_lowercase()) {
            causes.push(("metadata.annotations".into(), invalid(k, &m)));
        }
        size += k.len() + v.len();
    }
    if size > ANNOTATIONS_MAX_BYTES {
        causes.push((
            "metadata.annotations".into(),
            format!("Too long: must have at most {ANNOTATIONS_MAX_BYTES} bytes"),
        ));
    }
}

/// `ValidateOwnerReferences`: `apiVersion` with a version, `kind`, `name` and `uid` set, no
/// core `v1` Event as owner, at most one reference with `controller: true`. The paths carry
/// no index, as kube's do.
fn owner_references(meta: &Map<String, Value>, causes: &mut Vec<Cause>) {
    let refs = match meta.get("ownerReferences") {
        None | Some(Value::Null) => return,
        Some(Value::Array(refs)) => refs,
        Some(other) => {
            causes.push((
                "metadata.ownerReferences".into(),
                format!("Invalid value: {other}: ownerReferences must be a list of objects"),
            ));
            return;
        }
    };
    let path = "metadata.ownerReferences";
    let mut first_controller: Option<String> = None;
    for r in refs {
        let s = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind, name, uid) = (s("apiVersion"), s("kind"), s("name"), s("uid"));
        // `schema.ParseGroupVersion`: "v1", "group/v1"; more than one '/' parses to nothing.
        let version = match api_version.matches('/').count() {
            0 => api_version,
            1 => api_version.split_once('/').map_or("", |(_, v)| v),
            _ => "",
        };
        let group = match api_version.split_once('/') {
            Some((g, _)) if api_version.matches('/').count() == 1 => g,
            _ => "",
        };
        if version.is_empty() {
            causes.push((
                format!("{path}.apiVersion"),
                invalid(api_version, "version must not be empty"),
            ));
        }
        if kind.is_empty() {
            causes.push((
                format!("{path}.kind"),
                invalid(kind, "kind must not be empty"),
            ));
        }
        if name.is_empty() {
            causes.push((
                format!("{path}.name"),
                invalid(name, "name must not be empty"),
            ));
        }
        if uid.is_empty() {
            causes.push((format!("{path}.uid"), invalid(uid, "uid must not be empty")));
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            causes.push((
                path.into(),
                format!("Invalid value: {r}: /v1, Kind=Event is disallowed from being an owner"),
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{name}");
            match &first_controller {
                Some(first) => causes.push((
                    path.into(),
                    format!(
                        "Invalid value: {}: Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}",
                        Value::Array(refs.clone())
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
}

/// `ValidateFinalizers`: each a qualified name; not both `orphan` and `foregroundDeletion`,
/// the garbage collector's two opposite policies.
fn finalizers(meta: &Map<String, Value>, causes: &mut Vec<Cause>) {
    let list = match meta.get("finalizers") {
        None | Some(Value::Null) => return,
        Some(Value::Array(list)) => list,
        Some(other) => {
            causes.push((
                "metadata.finalizers".into(),
                format!("Invalid value: {other}: finalizers must be a list of strings"),
            ));
            return;
        }
    };
    let mut names = Vec::new();
    for f in list {
        match f.as_str() {
            Some(f) => names.push(f),
            None => causes.push((
                "metadata.finalizers".into(),
                format!("Invalid value: {f}: finalizers must be a list of strings"),
            )),
        }
    }
    for f in &names {
        for m in qualified_name_errors(f) {
            causes.push(("metadata.finalizers".into(), invalid(f, &m)));
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        causes.push((
            "metadata.finalizers".into(),
            format!(
                "Invalid value: {}: finalizer orphan and foregroundDeletion cannot be both set",
                Value::from(names.clone())
            ),
        ));
    }
}

/// `ValidateObjectMetaAccessor` for a custom resource whose name generation has been done:
/// `generateName` (a DNS-1123 subdomain once a trailing `-` is masked), the name (a
/// DNS-1123 subdomain), labels, annotations, owner references, finalizers. Out: the causes,
/// empty when the metadata is valid.
pub fn validate(meta: &Map<String, Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let text = |f: &str| meta.get(f).and_then(Value::as_str).unwrap_or("");
    let generate = text("generateName");
    if !generate.is_empty() {
        // `maskTrailingDash`: a prefix may end in '-', the generated suffix follows it.
        let masked = match generate.strip_suffix('-') {
            Some(rest) if generate.len() > 1 => format!("{}a", &rest[..rest.len() - 1]),
            _ => generate.to_string(),
        };
        for m in dns_subdomain_errors(&masked) {
            causes.push(("metadata.generateName".into(), invalid(generate, &m)));
        }
    }
    let name = text("name");
    if name.is_empty() {
        causes.push((
            "metadata.name".into(),
            "Required value: name or generateName is required".into(),
        ));
    } else {
        for m in dns_subdomain_errors(name) {
            causes.push(("metadata.name".into(), invalid(name, &m)));
        }
    }
    labels(meta, &mut causes);
    annotations(meta, &mut causes);
    owner_references(meta, &mut causes);
    finalizers(meta, &mut causes);
    causes
}

/// A `metav1.Time` as Go prints it in a message (`time.Time.String()`): `2026-01-02
/// 03:04:05 +0000 UTC`; a value that is not an RFC 3339 time as JSON.
fn go_time(v: &Value) -> String {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string())
        .unwrap_or_else(|| v.to_string())
}

/// The rules of `rest.BeforeUpdate` and `ValidateObjectMetaAccessorUpdate` for the fields the
/// server owns, on a write of `new` over `old` (both whole objects): kube silently keeps
/// `creationTimestamp`, a `uid` left out, a `deletionTimestamp` already set and a
/// `deletionGracePeriodSeconds` left out (the caller restores them from `old`); it refuses a
/// changed `uid` (a PUT's body uid is checked before, as a 409 precondition),
/// a `deletionTimestamp` set on an object not being deleted, and a changed
/// `deletionGracePeriodSeconds` with "field is immutable". Out: the causes.
pub fn validate_update(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    const IMMUTABLE: &str = "field is immutable";
    let uid = new.get("uid").and_then(Value::as_str).unwrap_or("");
    if !uid.is_empty() && Some(uid) != old.get("uid").and_then(Value::as_str) {
        causes.push(("metadata.uid".into(), invalid(uid, IMMUTABLE)));
    }
    let set = |m: &Map<String, Value>, f: &str| m.get(f).filter(|v| !v.is_null()).cloned();
    if let (None, Some(t)) = (set(old, "deletionTimestamp"), set(new, "deletionTimestamp")) {
        causes.push((
            "metadata.deletionTimestamp".into(),
            format!("Invalid value: {}: {IMMUTABLE}", go_time(&t)),
        ));
    }
    if let Some(g) = set(new, "deletionGracePeriodSeconds")
        && set(old, "deletionGracePeriodSeconds").as_ref() != Some(&g)
    {
        causes.push((
            "metadata.deletionGracePeriodSeconds".into(),
            format!("Invalid value: {g}: {IMMUTABLE}"),
        ));
    }
    causes
}

#[cfg(test)]
mod tests;
