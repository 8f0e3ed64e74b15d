// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The request's options, read from the query (and, for a delete, the `DeleteOptions` body)
//! and checked in one place, so no verb can forget one.
//!
//! [`RequestOptions::parse`] decodes every option the API server knows; an integer that does
//! not parse is 400 BadRequest, as the API server's parameter codec answers it, and booleans
//! are read as it reads them ([`query_bool`]: never an error).
//! [`RequestOptions::validate`] then checks them for one [`Verb`], as k8s.io/apiserver's
//! handlers run `ValidateListOptions`, `ValidateCreateOptions`, `ValidateUpdateOptions`,
//! `ValidatePatchOptions` and `ValidateDeleteOptions` (422 Invalid of `<Kind>Options` in
//! `meta.k8s.io`), and refuses what this server parses but does not carry out yet
//! (400 BadRequest naming it): `sendInitialEvents=false`. `dryRun=All` is carried out by the
//! registry ([`RequestOptions::write`], [`super::super::registry::Write`]). Unknown query
//! parameters are ignored, as the API server ignores them.

use std::time::Duration;

use serde_json::Value;

use super::super::kind::ApiKind;
use super::super::registry::{ListOptions, PatchType, Write};
use super::super::request::query_bool;
use super::super::selector::{FieldSelector, LabelSelector};
use super::super::status::ApiError;
use super::super::table::IncludeObject;

/// The verb a request is served as: which options apply and how they are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object (or its `/status`, `/scale`).
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST to a collection.
    Create,
    /// PUT of an object (or its `/status`, `/scale`).
    Update,
    /// PATCH of an object with this patch type.
    Patch(PatchType),
    /// DELETE of an object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// `Exact`: the list at exactly that resourceVersion.
    Exact,
    /// `NotOlderThan`: a list at least as new as that resourceVersion.
    NotOlderThan,
}

impl ResourceVersionMatch {
    /// The value as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "Exact",
            Self::NotOlderThan => "NotOlderThan",
        }
    }
}

/// `fieldValidation`: what a write does with unknown fields in its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// `Ignore`: drop them silently.
    Ignore,
    /// `Warn` (the API server's default): drop them, with a `Warning` header each.
    #[default]
    Warn,
    /// `Strict`: refuse the write (400).
    Strict,
}

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// `Orphan`: dependents keep running without their owner.
    Orphan,
    /// `Background`: the owner goes at once, the garbage collector deletes dependents later.
    Background,
    /// `Foreground`: the owner stays until its blocking dependents are gone.
    Foreground,
}

/// Every option of a request, decoded. The defaults are what a request without the parameter
/// means.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// `resourceVersion` (empty counts as unset).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// A `resourceVersionMatch`, `fieldValidation` or `propagationPolicy` value the API
    /// server does not know, kept for [`Self::validate`] to report in the verb's options.
    unknown: Unknown,
    /// `limit` (0: no limit; a negative limit counts as 0, as the API server reads it).
    pub limit: usize,
    /// `continue` (empty counts as unset).
    pub continue_token: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
    /// `watch` ([`query_bool`]; only a collection's GET watches, a named GET ignores it).
    pub watch: bool,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (unset is `None`).
    pub send_initial_events: Option<bool>,
    /// `timeoutSeconds` (a watch's time limit).
    pub timeout_seconds: Option<u64>,
    /// `timeout`, as sent: a Go duration (`32s`, `1m30s`) that shortens the time limit of a
    /// request other than a watch ([`Self::request_timeout`]).
    pub timeout: Option<String>,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// `fieldManager`: the manager a write's `managedFields` entry is recorded under
    /// (required for an apply; else the User-Agent's prefix, see `Scope::manager`).
    pub field_manager: Option<String>,
    /// `force`: an apply takes the fields that conflict. Only `PatchOptions` has it; on a
    /// create or update it is an unknown parameter, which the API server ignores.
    pub force: Option<bool>,
    /// `dryRun` (each value once per parameter or body entry; after [`Self::validate`] every
    /// value is `All`).
    pub dry_run: Vec<String>,
    /// `propagationPolicy` (query or DeleteOptions body).
    pub propagation_policy: Option<Propagation>,
    /// `gracePeriodSeconds` (query or DeleteOptions body). A custom resource has no graceful
    /// deletion: the API server deletes it (or marks it deleting) at once whatever the value,
    /// and so does this server.
    pub grace_period_seconds: Option<i64>,
    /// `orphanDependents` (query or DeleteOptions body; deprecated for `propagationPolicy`).
    pub orphan_dependents: Option<bool>,
    /// `pretty`: indent the JSON answer.
    pub pretty: bool,
    /// `includeObject` of a Table answer.
    pub include_object: IncludeObject,
}

/// Values of enumerated options that are not among the known ones.
#[derive(Debug, Clone, Default)]
struct Unknown {
    resource_version_match: Option<String>,
    field_validation: Option<String>,
    propagation_policy: Option<String>,
}

fn bad_value(param: &str, value: &str, want: &str) -> ApiError {
    ApiError::bad_request(format!("{param}: invalid value {value:?}: {want}"))
}

/// `pretty` as k8s.io/apiserver's `isPrettyPrint` reads it: Go's `strconv.ParseBool`, a value
/// it refuses (`pretty=yes`) being false, not an error.
fn pretty_bool(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

fn parse_int(param: &str, value: &str) -> Result<i64, ApiError> {
    value
        .parse::<i64>()
        .map_err(|_| bad_value(param, value, "expected an integer"))
}

fn propagation(value: &str) -> Option<Propagation> {
    match value {
        "Orphan" => Some(Propagation::Orphan),
        "Background" => Some(Propagation::Background),
        "Foreground" => Some(Propagation::Foreground),
        _ => None,
    }
}

/// A list of strings as Go's `%#v` prints a `[]string` (how the API server quotes the
/// values of a list option it refuses).
fn go_strings(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

fn not_supported(field: &str, value: &str, supported: &str) -> (String, String) {
    (
        field.to_string(),
        format!("Unsupported value: {value}: supported values: {supported}"),
    )
}

impl RequestOptions {
    /// Decodes the query's `(name, value)` pairs, in order (a repeated `dryRun` keeps every
    /// value; for another repeated parameter the first one counts, as the API server's
    /// parameter codec reads it). Booleans are read by [`query_bool`] (`pretty` by Go's
    /// `strconv.ParseBool`, false when it refuses the value) and never fail. An unknown
    /// `resourceVersionMatch`, `fieldValidation` or `propagationPolicy` is kept for
    /// [`Self::validate`] (422 Invalid there, in the verb's options). Errors: 400 BadRequest
    /// for a value of the wrong type, a selector that does not parse, or an unknown
    /// `includeObject`.
    pub fn parse(query: &[(String, String)]) -> Result<Self, ApiError> {
        let mut o = Self::default();
        let mut seen = std::collections::HashSet::new();
        for (k, v) in query {
            // Go's `url.Values.Get` and the parameter codec's conversions read a repeated
            // parameter's first value; `dryRun` is a list and keeps them all.
            if k != "dryRun" && !seen.insert(k.as_str()) {
                continue;
            }
            match k.as_str() {
                "resourceVersion" => o.resource_version = Some(v.clone()).filter(|v| !v.is_empty()),
                "resourceVersionMatch" => {
                    o.resource_version_match = None;
                    o.unknown.resource_version_match = None;
                    match v.as_str() {
                        "" => {}
                        "Exact" => o.resource_version_match = Some(ResourceVersionMatch::Exact),
                        "NotOlderThan" => {
                            o.resource_version_match = Some(ResourceVersionMatch::NotOlderThan)
                        }
                        other => o.unknown.resource_version_match = Some(other.to_string()),
                    }
                }
                "limit" if !v.is_empty() => o.limit = parse_int(k, v)?.max(0) as usize,
                "continue" => o.continue_token = Some(v.clone()).filter(|v| !v.is_empty()),
                "labelSelector" => {
                    o.labels = LabelSelector::parse(v).map_err(ApiError::bad_request)?
                }
                "fieldSelector" => {
                    o.fields = FieldSelector::parse(v).map_err(ApiError::bad_request)?
                }
                "watch" => o.watch = query_bool(v),
                "allowWatchBookmarks" => o.allow_watch_bookmarks = query_bool(v),
                "sendInitialEvents" => o.send_initial_events = Some(query_bool(v)),
                "timeout" => o.timeout = Some(v.clone()).filter(|v| !v.is_empty()),
                "timeoutSeconds" if !v.is_empty() => {
                    o.timeout_seconds = Some(parse_int(k, v)?.max(0) as u64)
                }
                "fieldValidation" => {
                    o.unknown.field_validation = None;
                    o.field_validation = match v.as_str() {
                        "Ignore" => FieldValidation::Ignore,
                        "" | "Warn" => FieldValidation::Warn,
                        "Strict" => FieldValidation::Strict,
                        other => {
                            o.unknown.field_validation = Some(other.to_string());
                            FieldValidation::Warn
                        }
                    }
                }
                "fieldManager" => o.field_manager = Some(v.clone()).filter(|v| !v.is_empty()),
                "force" => o.force = Some(query_bool(v)),
                "dryRun" => o.dry_run.push(v.clone()),
                "propagationPolicy" if !v.is_empty() => o.set_propagation(v),
                "gracePeriodSeconds" if !v.is_empty() => {
                    o.grace_period_seconds = Some(parse_int(k, v)?)
                }
                "orphanDependents" => o.orphan_dependents = Some(query_bool(v)),
                "pretty" => o.pretty = pretty_bool(v),
                "includeObject" => {
                    o.include_object = match v.as_str() {
                        "None" => IncludeObject::None,
                        "Object" => IncludeObject::Object,
                        "" | "Metadata" => IncludeObject::Metadata,
                        other => {
                            return Err(ApiError::bad_request(format!(
                                "includeObject: invalid value {other:?}: must be 'Metadata', 'Object', 'None', or empty"
                            )));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(o)
    }

    fn set_propagation(&mut self, value: &str) {
        self.propagation_policy = propagation(value);
        self.unknown.propagation_policy =
            self.propagation_policy.is_none().then(|| value.to_string());
    }

    /// Takes the options of a `DeleteOptions` body over the query's (`dryRun`,
    /// `propagationPolicy`, `gracePeriodSeconds`, `orphanDependents`; `preconditions` are the
    /// registry's). Errors: 400 BadRequest for a field of the wrong type.
    pub fn merge_delete_body(&mut self, body: &Value) -> Result<(), ApiError> {
        let wrong = |field: &str, v: &Value| {
            ApiError::bad_request(format!("DeleteOptions.{field}: invalid value {v}"))
        };
        if let Some(v) = body.get("dryRun").filter(|v| !v.is_null()) {
            let values = v.as_array().ok_or_else(|| wrong("dryRun", v))?;
            for d in values {
                self.dry_run
                    .push(d.as_str().ok_or_else(|| wrong("dryRun", d))?.to_string());
            }
        }
        if let Some(v) = body.get("propagationPolicy").filter(|v| !v.is_null()) {
            let p = v.as_str().ok_or_else(|| wrong("propagationPolicy", v))?;
            self.set_propagation(p);
        }
        if let Some(v) = body.get("gracePeriodSeconds").filter(|v| !v.is_null()) {
            self.grace_period_seconds =
                Some(v.as_i64().ok_or_else(|| wrong("gracePeriodSeconds", v))?);
        }
        if let Some(v) = body.get("orphanDependents").filter(|v| !v.is_null()) {
            self.orphan_dependents = Some(v.as_bool().ok_or_else(|| wrong("orphanDependents", v))?);
        }
        Ok(())
    }

    /// Checks the options for `verb` as the API server does, then refuses what this server
    /// does not carry out. Errors: 422 Invalid of `ListOptions`, `CreateOptions`,
    /// `UpdateOptions`, `PatchOptions` (`ValidatePatchOptions`: `force` only on an apply,
    /// which needs a `fieldManager`) or `DeleteOptions` with one cause per failed rule;
    /// 400 BadRequest for `sendInitialEvents=false`.
    pub fn validate(&self, verb: Verb) -> Result<(), ApiError> {
        let (options_kind, causes) = match verb {
            Verb::Get => ("GetOptions", Vec::new()),
            Verb::List | Verb::DeleteCollection => ("ListOptions", self.list_causes()),
            Verb::Watch => ("ListOptions", self.watch_causes()),
            Verb::Create => ("CreateOptions", self.write_causes()),
            Verb::Update => ("UpdateOptions", self.write_causes()),
            Verb::Patch(patch_type) => {
                let mut causes = Vec::new();
                if !matches!(patch_type, PatchType::Apply { .. }) && self.force.is_some() {
                    causes.push((
                        "force".to_string(),
                        "Forbidden: may not be specified for non-apply patch".to_string(),
                    ));
                }
                if matches!(patch_type, PatchType::Apply { .. }) && self.field_manager.is_none() {
                    causes.push((
                        "fieldManager".to_string(),
                        "Required value: is required for apply patch".to_string(),
                    ));
                }
                causes.extend(self.write_causes());
                ("PatchOptions", causes)
            }
            Verb::Delete => ("DeleteOptions", self.delete_causes()),
        };
        if !causes.is_empty() {
            return Err(ApiError::invalid_options(options_kind, &causes));
        }
        if verb == Verb::DeleteCollection {
            let delete = self.delete_causes();
            if !delete.is_empty() {
                return Err(ApiError::invalid_options("DeleteOptions", &delete));
            }
        }
        self.refuse_unsupported(verb)
    }

    /// `ValidateListOptions` for a list (and the list half of a deletecollection).
    fn list_causes(&self) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        let unknown = self.unknown.resource_version_match.as_deref();
        if self.resource_version_match.is_some() || unknown.is_some() {
            if self.resource_version.is_none() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if self.continue_token.is_some() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        if let Some(m) = unknown {
            causes.push(not_supported(
                "resourceVersionMatch",
                &format!("{m:?}"),
                "\"Exact\", \"NotOlderThan\", \"\"",
            ));
        }
        if self.resource_version_match == Some(ResourceVersionMatch::Exact)
            && self.resource_version.as_deref() == Some("0")
        {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        if self.send_initial_events.is_some() {
            causes.push(forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        causes
    }

    /// `ValidateListOptions` for a watch (its `validateWatchOptions` half).
    fn watch_causes(&self) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        let m = self.resource_version_match;
        let unknown = self.unknown.resource_version_match.as_deref();
        if self.send_initial_events.is_some() && m != Some(ResourceVersionMatch::NotOlderThan) {
            causes.push(forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if let Some(m) = m.map(ResourceVersionMatch::as_str).or(unknown) {
            if self.send_initial_events.is_none() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != "NotOlderThan" {
                causes.push(not_supported(
                    "resourceVersionMatch",
                    &format!("{m:?}"),
                    "\"NotOlderThan\"",
                ));
            }
            if self.continue_token.is_some() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        causes
    }

    /// `ValidateFieldManager`, `ValidateDryRun` and `ValidateFieldValidation`, shared by
    /// create, update and patch.
    fn write_causes(&self) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        if let Some(m) = &self.field_manager {
            causes.extend(crate::apiserver::fieldmanager::manager::causes(m));
        }
        causes.extend(self.dry_run_causes());
        if let Some(v) = &self.unknown.field_validation {
            causes.push(not_supported(
                "fieldValidation",
                &format!("{v:?}"),
                "\"\", \"Ignore\", \"Strict\", \"Warn\"",
            ));
        }
        causes
    }

    fn dry_run_causes(&self) -> Vec<(String, String)> {
        if self.dry_run.iter().all(|d| d == "All") {
            return Vec::new();
        }
        vec![not_supported(
            "dryRun",
            &go_strings(&self.dry_run),
            "\"All\"",
        )]
    }

    /// `ValidateDeleteOptions`.
    fn delete_causes(&self) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        let policy = self
            .propagation_policy
            .map(|p| format!("{p:?}"))
            .or_else(|| self.unknown.propagation_policy.clone());
        if let (Some(_), Some(p)) = (self.orphan_dependents, &policy) {
            causes.push((
                "propagationPolicy".into(),
                format!(
                    "Invalid value: {p:?}: orphanDependents and deletionPropagation cannot be both set"
                ),
            ));
        }
        if let Some(p) = &self.unknown.propagation_policy {
            causes.push(not_supported(
                "propagationPolicy",
                &format!("{p:?}"),
                "\"Foreground\", \"Background\", \"Orphan\", \"nil\"",
            ));
        }
        causes.extend(self.dry_run_causes());
        causes
    }

    /// The options this server parses but does not carry out: refused, never ignored.
    fn refuse_unsupported(&self, verb: Verb) -> Result<(), ApiError> {
        if verb == Verb::Watch && self.send_initial_events == Some(false) {
            return Err(ApiError::bad_request(
                "sendInitialEvents=false is not supported yet by this server; leave it unset or send true",
            ));
        }
        Ok(())
    }

    /// Writes the request's propagation (`propagationPolicy`, `orphanDependents`, from the
    /// query or the body, validated) into the DeleteOptions `options` the registry reads
    /// ([`super::super::registry::gc_finalizers`]).
    pub fn propagation_into(&self, options: &mut Value) {
        let Some(o) = options.as_object_mut() else {
            return;
        };
        if let Some(p) = self.propagation_policy {
            o.insert("propagationPolicy".into(), Value::String(format!("{p:?}")));
        }
        if let Some(orphan) = self.orphan_dependents {
            o.insert("orphanDependents".into(), Value::Bool(orphan));
        }
    }

    /// The time limit of a request other than a watch, from the server's `default`, as
    /// k8s.io/apiserver's `WithRequestDeadline` sets it: the `timeout` parameter (a Go
    /// duration, as kubectl sends `timeout=32s`) when it is above zero and below the default,
    /// else the default (`timeoutSeconds` is a watch's, not read here). Errors: 400 BadRequest
    /// "invalid timeout specified in the request URL" for a value Go's `time.ParseDuration`
    /// refuses, with its reason.
    pub fn request_timeout(&self, default: Duration) -> Result<Duration, ApiError> {
        let Some(value) = &self.timeout else {
            return Ok(default);
        };
        let asked = go_duration(value).map_err(|e| {
            ApiError::bad_request(format!(
                "invalid timeout specified in the request URL - {e}"
            ))
        })?;
        Ok(match asked {
            Some(t) if !t.is_zero() && t < default => t,
            _ => default,
        })
    }

    /// How the registry carries out the write: a dry run when `dryRun` was given (validated:
    /// every value `All`, as `ValidateDryRun` allows only that one).
    pub fn write(&self) -> Write {
        Write {
            dry_run: !self.dry_run.is_empty(),
        }
    }

    /// The registry's view of the list options (selectors, paging, resourceVersion) for a
    /// list, watch or deletecollection of `kind`. Errors: 400 BadRequest for a field
    /// selector on a field the kind cannot be selected by
    /// ([`FieldSelector::for_kind`]'s message), as the API server's list handler answers it.
    pub fn list_options(&self, kind: &ApiKind) -> Result<ListOptions, ApiError> {
        Ok(ListOptions {
            labels: self.labels.clone(),
            fields: self
                .fields
                .clone()
                .for_kind(&kind.group, &kind.plural)
                .map_err(ApiError::bad_request)?,
            limit: self.limit,
            continue_token: self.continue_token.clone(),
            resource_version: self.resource_version.clone(),
            resource_version_match: self.resource_version_match.map(|m| m.as_str().to_string()),
        })
    }
}

/// A duration as Go's `time.ParseDuration` reads it: an optional sign, then one or more
/// decimal numbers (with an optional fraction), each with a unit (`ns`, `us`, `µs`, `ms`, `s`,
/// `m`, `h`); `0` alone is zero. Out: the duration, `None` for a negative one. Errors: Go's
/// messages (`time: invalid duration "x"`, `time: missing unit in duration "1"`,
/// `time: unknown unit "d" in duration "1d"`).
pub fn go_duration(text: &str) -> Result<Option<Duration>, String> {
    let invalid = || format!("time: invalid duration {text:?}");
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(Some(Duration::ZERO));
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        let value: f64 = number.parse().map_err(|_| invalid())?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = match unit {
            "" => return Err(format!("time: missing unit in duration {text:?}")),
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            other => return Err(format!("time: unknown unit {other:?} in duration {text:?}")),
        };
        nanos += value * scale;
    }
    // Go's durations are int64 nanoseconds (about 290 years).
    if nanos > i64::MAX as f64 {
        return Err(invalid());
    }
    Ok((!negative || nanos == 0.0).then(|| Duration::from_nanos(nanos as u64)))
}

fn forbidden(field: &str, why: &str) -> (String, String) {
    (field.to_string(), format!("Forbidden: {why}"))
}

#[cfg(test)]
mod tests;
