//! `config/webhook/manifests.yaml` from `+kubebuilder:webhook` and
//! `+kubebuilder:webhookconfiguration` markers.
//!
//! Mirrors controller-tools `pkg/webhook/parser.go`: each webhook marker becomes one webhook
//! with one rule (groups with `core` → `""`, versions, resources, verbs as upper-case
//! operations), `failurePolicy`/`matchPolicy`/`sideEffects`/`reinvocationPolicy` spelled as
//! the API spells them whatever the marker's letter case, a `clientConfig.service` of
//! `webhook-service` in `system` (or the marker's `serviceName`/`serviceNamespace`/
//! `servicePort`) with the marker's `path`, or `clientConfig.url`. Webhooks are sorted by name;
//! the MutatingWebhookConfiguration (`mutating-webhook-configuration`) comes before the
//! ValidatingWebhookConfiguration (`validating-webhook-configuration`); a
//! `webhookconfiguration` marker renames either. `patch` is applied to the webhook as a JSON
//! merge patch (controller-gen uses a strategic merge patch; both agree on every field a
//! generated webhook can have, except list directives such as `$patch`, which are rejected).
//!
//! What controller-gen rejects is rejected here too, at the marker's file:line: sideEffects
//! missing or `Some`/`Unknown`, timeoutSeconds outside 1–30, not exactly one of `path` and
//! `url`, an unknown matchPolicy, no admissionReviewVersions, a webhookVersion other than
//! `v1`, two `webhookconfiguration` markers for the same kind. Where controller-gen passes
//! bad values through to the API server (or drops them), rsbuilder reports them too: unknown
//! failurePolicy, sideEffects, reinvocationPolicy or verb, reinvocationPolicy on a validating
//! webhook, a name that is not a domain of three or more segments, duplicate webhook names, a
//! path without a leading `/`, a URL that is not `https://`, service settings next to `url`,
//! a port outside 1–65535, and a patch that is not a JSON object of webhook fields.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::diag::Diagnostic;
use super::markers::Marker;

/// Name of the webhook marker.
pub const MARKER: &str = "kubebuilder:webhook";
/// Name of the marker that names the configuration objects.
pub const CONFIG_MARKER: &str = "kubebuilder:webhookconfiguration";
/// Default name of the MutatingWebhookConfiguration.
pub const DEFAULT_MUTATING_NAME: &str = "mutating-webhook-configuration";
/// Default name of the ValidatingWebhookConfiguration.
pub const DEFAULT_VALIDATING_NAME: &str = "validating-webhook-configuration";
/// Default Service name in `clientConfig.service`.
pub const DEFAULT_SERVICE_NAME: &str = "webhook-service";
/// Default Service namespace in `clientConfig.service` (kustomize replaces it).
pub const DEFAULT_SERVICE_NAMESPACE: &str = "system";

/// The generated configuration objects (either may be absent when it has no webhooks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookConfigurations {
    /// All mutating webhooks, sorted by name.
    pub mutating: Option<MutatingWebhookConfiguration>,
    /// All validating webhooks, sorted by name.
    pub validating: Option<ValidatingWebhookConfiguration>,
}

/// Maps `value` case-insensitively onto one of `allowed` (the API spelling).
fn spelled(value: &str, allowed: &[&'static str]) -> Option<&'static str> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value))
        .copied()
}

fn one_of(
    m: &Marker,
    arg: &str,
    allowed: &[&'static str],
    errors: &mut Vec<Diagnostic>,
) -> Option<&'static str> {
    let value = m.string(arg)?;
    let found = spelled(value, allowed);
    if found.is_none() {
        errors.push(m.diag_at(
            arg,
            format!(
                "`{arg}` must be one of {}, not `{value}`",
                allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    found
}

/// The API's view of a webhook marker before it becomes a Mutating- or ValidatingWebhook.
struct Hook {
    mutating: bool,
    /// Serialized common fields (as a `MutatingWebhook`, whose fields are a superset).
    webhook: MutatingWebhook,
}

/// Checks and converts one webhook marker. Errors are pushed; `None` when there were any.
fn hook(m: &Marker, errors: &mut Vec<Diagnostic>) -> Option<Hook> {
    let before = errors.len();
    let mutating = m.bool("mutating").unwrap_or_default();
    let name = m.string("name").unwrap_or_default().to_string();
    if let Err(why) = crate::model::validate::dns1123_subdomain(&name) {
        errors.push(m.diag_at("name", format!("webhook name `{name}` is invalid: {why}")));
    } else if name.split('.').count() < 3 {
        errors.push(
            m.diag_at(
                "name",
                format!("webhook name `{name}` must be a domain with at least three segments separated by dots"),
            )
            .with_help("Kubebuilder names them m<kind>-<version>.kb.io and v<kind>-<version>.kb.io"),
        );
    }

    let failure_policy = one_of(m, "failurePolicy", &["Fail", "Ignore"], errors);
    let match_policy = one_of(m, "matchPolicy", &["Exact", "Equivalent"], errors);
    let side_effects = match m.string("sideEffects") {
        None => {
            errors.push(
                m.diag("`sideEffects` is required for admissionregistration.k8s.io/v1 webhooks")
                    .with_help("add sideEffects=None (or NoneOnDryRun)"),
            );
            None
        }
        Some(v) if spelled(v, &["Some", "Unknown"]).is_some() => {
            errors.push(m.diag_at(
                "sideEffects",
                format!("sideEffects `{v}` is not allowed for admissionregistration.k8s.io/v1 webhooks; use `None` or `NoneOnDryRun`"),
            ));
            None
        }
        Some(_) => one_of(m, "sideEffects", &["None", "NoneOnDryRun"], errors),
    };
    let timeout = m.int("timeoutSeconds").and_then(|t| {
        if (1..=30).contains(&t) {
            Some(t as i32)
        } else {
            errors.push(m.diag_at(
                "timeoutSeconds",
                format!("`timeoutSeconds` must be between 1 and 30 seconds, not {t}"),
            ));
            None
        }
    });
    let reinvocation = if m.string("reinvocationPolicy").is_some() && !mutating {
        errors.push(m.diag_at(
            "reinvocationPolicy",
            "`reinvocationPolicy` applies to mutating webhooks only (this one has mutating=false)",
        ));
        None
    } else {
        one_of(m, "reinvocationPolicy", &["Never", "IfNeeded"], errors)
    };
    for v in m.list("webhookVersions").unwrap_or_default() {
        if v != "v1" {
            errors.push(m.diag_at(
                "webhookVersions",
                format!("unsupported webhook version `{v}`: only `v1` is supported"),
            ));
        }
    }
    let review_versions = m
        .list("admissionReviewVersions")
        .unwrap_or_default()
        .to_vec();
    if review_versions.is_empty() {
        errors.push(m.diag_at(
            "admissionReviewVersions",
            "`admissionReviewVersions` must name at least one version (v1)",
        ));
    }
    let mut operations = Vec::new();
    for verb in m.list("verbs").unwrap_or_default() {
        match spelled(verb, &["CREATE", "UPDATE", "DELETE", "CONNECT", "*"]) {
            Some(op) => operations.push(op.to_string()),
            None => errors.push(m.diag_at(
                "verbs",
                format!(
                    "`{verb}` is not a webhook operation: use create, update, delete, connect or *"
                ),
            )),
        }
    }

    let client_config = client_config(m, errors);

    if errors.len() > before {
        return None;
    }
    let groups = m
        .list("groups")
        .unwrap_or_default()
        .iter()
        .map(|g| {
            if g == "core" {
                String::new()
            } else {
                g.clone()
            }
        })
        .collect();
    let webhook = MutatingWebhook {
        admission_review_versions: review_versions,
        client_config: client_config?,
        failure_policy: failure_policy.map(str::to_string),
        match_policy: match_policy.map(str::to_string),
        name,
        reinvocation_policy: reinvocation.map(str::to_string),
        rules: Some(vec![RuleWithOperations {
            api_groups: Some(groups),
            api_versions: Some(m.list("versions").unwrap_or_default().to_vec()),
            operations: Some(operations),
            resources: Some(m.list("resources").unwrap_or_default().to_vec()),
            scope: None,
        }]),
        side_effects: side_effects?.to_string(),
        timeout_seconds: timeout,
        ..Default::default()
    };
    let webhook = match m.string("patch") {
        Some(p) if !p.trim().is_empty() => apply_patch(m, webhook, p, mutating, errors)?,
        _ => webhook,
    };
    Some(Hook { mutating, webhook })
}

fn client_config(m: &Marker, errors: &mut Vec<Diagnostic>) -> Option<WebhookClientConfig> {
    match (m.string("path"), m.string("url")) {
        (Some(path), None) => {
            if !path.starts_with('/') {
                errors.push(m.diag_at("path", format!("`path` must start with `/`, not `{path}`")));
            }
            let port = m.int("servicePort").and_then(|p| {
                if (1..=65535).contains(&p) {
                    Some(p as i32)
                } else {
                    errors.push(m.diag_at(
                        "servicePort",
                        format!("`servicePort` must be between 1 and 65535, not {p}"),
                    ));
                    None
                }
            });
            Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    name: m
                        .string("serviceName")
                        .unwrap_or(DEFAULT_SERVICE_NAME)
                        .to_string(),
                    namespace: m
                        .string("serviceNamespace")
                        .unwrap_or(DEFAULT_SERVICE_NAMESPACE)
                        .to_string(),
                    path: Some(path.to_string()),
                    port,
                }),
                ..Default::default()
            })
        }
        (None, Some(url)) => {
            if !url.starts_with("https://") {
                errors
                    .push(m.diag_at("url", format!("`url` must be an https:// URL, not `{url}`")));
            }
            for arg in ["serviceName", "serviceNamespace", "servicePort"] {
                if m.args.iter().any(|a| a.name == arg) {
                    errors.push(m.diag_at(
                        arg,
                        format!("`{arg}` has no effect with `url`: the API server calls the URL directly"),
                    ));
                }
            }
            Some(WebhookClientConfig {
                url: Some(url.to_string()),
                ..Default::default()
            })
        }
        (Some(_), Some(_)) => {
            errors.push(m.diag_at(
                "url",
                "`path` and `url` are mutually exclusive: give exactly one",
            ));
            None
        }
        (None, None) => {
            errors.push(
                m.diag("a webhook needs exactly one of `path` and `url`")
                    .with_help(
                        "add path=/mutate-<group-with-dashes>-<version>-<kind> (or /validate-...)",
                    ),
            );
            None
        }
    }
}

/// Applies `patch` (a JSON object) to the webhook as an RFC 7386 merge patch.
fn apply_patch(
    m: &Marker,
    webhook: MutatingWebhook,
    patch: &str,
    mutating: bool,
    errors: &mut Vec<Diagnostic>,
) -> Option<MutatingWebhook> {
    let patch: serde_json::Value = match serde_json::from_str(patch) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => {
            errors.push(m.diag_at("patch", "`patch` must be a JSON object"));
            return None;
        }
        Err(e) => {
            errors.push(
                m.diag_at("patch", format!("`patch` is not valid JSON: {e}"))
                    .with_help("write it in backticks: patch=`{\"timeoutSeconds\":5}`"),
            );
            return None;
        }
    };
    if let Some(key) = directive(&patch) {
        errors.push(m.diag_at(
            "patch",
            format!("`patch` uses the strategic-merge directive `{key}`, which rsbuilder does not support"),
        ));
        return None;
    }
    let mut value = serde_json::to_value(&webhook).ok()?;
    merge(&mut value, &patch);
    // Round-trip through the typed object: a field the API does not know disappears, so
    // compare to find it.
    let typed: Result<MutatingWebhook, _> = serde_json::from_value(value.clone());
    let typed = match typed {
        Ok(t) => t,
        Err(e) => {
            errors.push(m.diag_at(
                "patch",
                format!("`patch` gives a field a value of the wrong type: {e}"),
            ));
            return None;
        }
    };
    let back = serde_json::to_value(&typed).ok()?;
    if let Some(path) = first_difference(&value, &back, String::new()) {
        errors.push(m.diag_at(
            "patch",
            format!("`patch` sets `{path}`, which is not a field of a webhook"),
        ));
        return None;
    }
    if !mutating && typed.reinvocation_policy.is_some() {
        errors.push(m.diag_at(
            "patch",
            "`reinvocationPolicy` applies to mutating webhooks only",
        ));
        return None;
    }
    Some(typed)
}

fn directive(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k.starts_with('$') {
                Some(k.clone())
            } else {
                directive(v)
            }
        }),
        serde_json::Value::Array(items) => items.iter().find_map(directive),
        _ => None,
    }
}

fn merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
    match (target, patch) {
        (serde_json::Value::Object(t), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(serde_json::Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: String) -> Option<String> {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            x.iter().find_map(|(k, v)| {
                let here = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match y.get(k) {
                    None => Some(here),
                    Some(w) => first_difference(v, w, here),
                }
            })
        }
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, format!("{at}[{i}]"))),
        _ => None,
    }
}

fn validating(w: MutatingWebhook) -> ValidatingWebhook {
    ValidatingWebhook {
        admission_review_versions: w.admission_review_versions,
        client_config: w.client_config,
        failure_policy: w.failure_policy,
        match_conditions: w.match_conditions,
        match_policy: w.match_policy,
        name: w.name,
        namespace_selector: w.namespace_selector,
        object_selector: w.object_selector,
        rules: w.rules,
        side_effects: w.side_effects,
        timeout_seconds: w.timeout_seconds,
    }
}

/// Builds the configuration objects from the webhook markers among `markers` (others are
/// skipped). Errors: see [`generate`].
pub fn configurations(markers: &[Marker]) -> Result<WebhookConfigurations, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut names: [Option<(&Marker, String)>; 2] = [None, None];
    for m in markers.iter().filter(|m| m.name() == CONFIG_MARKER) {
        let mutating = m.bool("mutating").unwrap_or_default();
        let slot = &mut names[usize::from(mutating)];
        let kind = if mutating { "mutating" } else { "validating" };
        if let Some((first, _)) = slot {
            errors.push(
                m.diag(format!(
                    "a second +{CONFIG_MARKER} for the {kind} configuration (the first is at {}:{})",
                    first.file.display(),
                    first.line
                ))
                .with_help("keep one marker per configuration kind"),
            );
            continue;
        }
        let name = m.string("name").unwrap_or_default().to_string();
        if !name.is_empty() {
            if let Err(why) = crate::model::validate::dns1123_subdomain(&name) {
                errors.push(m.diag_at(
                    "name",
                    format!("configuration name `{name}` is invalid: {why}"),
                ));
            }
        }
        *slot = Some((m, name));
    }

    let mut mutating: Vec<(MutatingWebhook, &Marker)> = Vec::new();
    let mut validating_hooks: Vec<(ValidatingWebhook, &Marker)> = Vec::new();
    for m in markers.iter().filter(|m| m.name() == MARKER) {
        if let Some(h) = hook(m, &mut errors) {
            if h.mutating {
                mutating.push((h.webhook, m));
            } else {
                validating_hooks.push((validating(h.webhook), m));
            }
        }
    }
    mutating.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    validating_hooks.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    for pair in mutating.windows(2) {
        if pair[0].0.name == pair[1].0.name {
            errors.push(duplicate(pair[1].1, pair[0].1, &pair[0].0.name));
        }
    }
    for pair in validating_hooks.windows(2) {
        if pair[0].0.name == pair[1].0.name {
            errors.push(duplicate(pair[1].1, pair[0].1, &pair[0].0.name));
        }
    }
    if !errors.is_empty() {
        errors.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        return Err(errors);
    }

    let name_of = |slot: &Option<(&Marker, String)>, default: &str| -> String {
        match slot {
            Some((_, n)) if !n.is_empty() => n.clone(),
            _ => default.to_string(),
        }
    };
    Ok(WebhookConfigurations {
        mutating: (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
            metadata: ObjectMeta {
                name: Some(name_of(&names[1], DEFAULT_MUTATING_NAME)),
                ..Default::default()
            },
            webhooks: Some(mutating.into_iter().map(|(w, _)| w).collect()),
        }),
        validating: (!validating_hooks.is_empty()).then(|| ValidatingWebhookConfiguration {
            metadata: ObjectMeta {
                name: Some(name_of(&names[0], DEFAULT_VALIDATING_NAME)),
                ..Default::default()
            },
            webhooks: Some(validating_hooks.into_iter().map(|(w, _)| w).collect()),
        }),
    })
}

fn duplicate(m: &Marker, first: &Marker, name: &str) -> Diagnostic {
    m.diag_at(
        "name",
        format!(
            "webhook name `{name}` is already used at {}:{}; names must be unique within a configuration",
            first.file.display(),
            first.line
        ),
    )
}

/// `config/webhook/manifests.yaml` for the webhook markers among `markers`, or `None` when
/// there are no `+kubebuilder:webhook` markers.
///
/// The text matches controller-gen's layout: the MutatingWebhookConfiguration, then the
/// ValidatingWebhookConfiguration, each introduced by `---`, keys in API order.
///
/// Errors: every problem of every marker (see the module docs), each at its file:line.
pub fn generate(markers: &[Marker]) -> Result<Option<String>, Vec<Diagnostic>> {
    let cfgs = configurations(markers)?;
    let mut out = String::new();
    if let Some(m) = &cfgs.mutating {
        super::rbac::push_document(&mut out, m, "manifests.yaml")?;
    }
    if let Some(v) = &cfgs.validating {
        super::rbac::push_document(&mut out, v, "manifests.yaml")?;
    }
    Ok((!out.is_empty()).then_some(out))
}
