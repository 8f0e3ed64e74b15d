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
//! `url`, an unknown matchPolicy, no admissionReviewVersions (rsbuilder: none of v1, v1beta1), a webhookVersion other than
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
use super::markers::typed::{WebhookConfigurationMarker, WebhookMarker};

/// Name of the marker that names the configuration objects.
pub use super::markers::typed::WEBHOOK_CONFIG_MARKER as CONFIG_MARKER;
/// Name of the webhook marker.
pub use super::markers::typed::WEBHOOK_MARKER as MARKER;
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
    value: Option<&str>,
    allowed: &[&'static str],
    errors: &mut Vec<Diagnostic>,
) -> Option<&'static str> {
    let value = value?;
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

/// A webhook marker's webhook, before it becomes a Mutating- or ValidatingWebhook (as a
/// `MutatingWebhook`, whose fields are a superset of a validating one's).
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// `mutating=true`: the webhook goes into the MutatingWebhookConfiguration.
    pub mutating: bool,
    /// The webhook the marker's arguments make, before its `patch=`.
    pub unpatched: MutatingWebhook,
    /// The webhook after its `patch=` (equal to `unpatched` without one): what
    /// `manifests.yaml` holds.
    pub patched: MutatingWebhook,
}

/// Checks one webhook marker and builds its webhook, before and after its `patch=` (a JSON
/// merge patch). Errors: every problem of the marker (see the module docs), each at its
/// file:line.
pub fn build(w: &WebhookMarker<'_>) -> Result<Built, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let built = from_arguments(w, &mut errors).and_then(|unpatched| {
        let patched = match w.patch {
            Some(p) if !p.trim().is_empty() => {
                apply_patch(w.marker, unpatched.clone(), p, w.mutating, &mut errors)?
            }
            _ => unpatched.clone(),
        };
        Some(Built {
            mutating: w.mutating,
            unpatched,
            patched,
        })
    });
    match built {
        Some(b) if errors.is_empty() => Ok(b),
        _ => Err(errors),
    }
}

/// Checks a webhook marker's arguments and converts them (all but `patch`). Errors are
/// pushed; `None` when there were any.
fn from_arguments(w: &WebhookMarker<'_>, errors: &mut Vec<Diagnostic>) -> Option<MutatingWebhook> {
    let m = w.marker;
    let before = errors.len();
    let mutating = w.mutating;
    let name = w.name.to_string();
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

    let failure_policy = one_of(
        m,
        "failurePolicy",
        w.failure_policy,
        &["Fail", "Ignore"],
        errors,
    );
    let match_policy = one_of(
        m,
        "matchPolicy",
        w.match_policy,
        &["Exact", "Equivalent"],
        errors,
    );
    let side_effects = match w.side_effects {
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
        v @ Some(_) => one_of(m, "sideEffects", v, &["None", "NoneOnDryRun"], errors),
    };
    let timeout = w.timeout_seconds.and_then(|t| {
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
    let reinvocation = if w.reinvocation_policy.is_some() && !mutating {
        errors.push(m.diag_at(
            "reinvocationPolicy",
            "`reinvocationPolicy` applies to mutating webhooks only (this one has mutating=false)",
        ));
        None
    } else {
        one_of(
            m,
            "reinvocationPolicy",
            w.reinvocation_policy,
            &["Never", "IfNeeded"],
            errors,
        )
    };
    for v in w.webhook_versions {
        if v != "v1" {
            errors.push(m.diag_at(
                "webhookVersions",
                format!("unsupported webhook version `{v}`: only `v1` is supported"),
            ));
        }
    }
    let review_versions = w.admission_review_versions.to_vec();
    if !review_versions.iter().any(|v| v == "v1" || v == "v1beta1") {
        errors.push(m.diag_at(
            "admissionReviewVersions",
            "`admissionReviewVersions` must name at least one version the API server speaks (v1 or v1beta1)",
        ));
    }
    let mut operations = Vec::new();
    for verb in w.verbs {
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

    let client_config = client_config(w, errors);

    if errors.len() > before {
        return None;
    }
    let groups = w.groups.clone();
    let webhook = MutatingWebhook {
        admission_review_versions: review_versions,
        client_config: client_config?,
        failure_policy: failure_policy.map(str::to_string),
        match_policy: match_policy.map(str::to_string),
        name,
        reinvocation_policy: reinvocation.map(str::to_string),
        rules: Some(vec![RuleWithOperations {
            api_groups: Some(groups),
            api_versions: Some(w.versions.to_vec()),
            operations: Some(operations),
            resources: Some(w.resources.to_vec()),
            scope: None,
        }]),
        side_effects: side_effects?.to_string(),
        timeout_seconds: timeout,
        ..Default::default()
    };
    Some(webhook)
}

fn client_config(
    w: &WebhookMarker<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<WebhookClientConfig> {
    let m = w.marker;
    match (w.path, w.url) {
        (Some(path), None) => {
            if !path.starts_with('/') {
                errors.push(m.diag_at("path", format!("`path` must start with `/`, not `{path}`")));
            }
            let port = w.service_port.and_then(|p| {
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
                    name: w.service_name.unwrap_or(DEFAULT_SERVICE_NAME).to_string(),
                    namespace: w
                        .service_namespace
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
                if w.wrote(arg) {
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
    for c in markers
        .iter()
        .filter_map(|m| WebhookConfigurationMarker::try_from(m).ok())
    {
        let m = c.marker;
        let mutating = c.mutating;
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
        let name = c.name.unwrap_or_default().to_string();
        if !name.is_empty()
            && let Err(why) = crate::model::validate::dns1123_subdomain(&name)
        {
            errors.push(m.diag_at(
                "name",
                format!("configuration name `{name}` is invalid: {why}"),
            ));
        }
        *slot = Some((m, name));
    }

    let mut mutating: Vec<(MutatingWebhook, &Marker)> = Vec::new();
    let mut validating_hooks: Vec<(ValidatingWebhook, &Marker)> = Vec::new();
    for w in markers
        .iter()
        .filter_map(|m| WebhookMarker::try_from(m).ok())
    {
        let m = w.marker;
        match build(&w) {
            Ok(b) if b.mutating => mutating.push((b.patched, m)),
            Ok(b) => validating_hooks.push((validating(b.patched), m)),
            Err(diags) => errors.extend(diags),
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
        super::yaml::push_document(&mut out, m, "manifests.yaml")?;
    }
    if let Some(v) = &cfgs.validating {
        super::yaml::push_document(&mut out, v, "manifests.yaml")?;
    }
    Ok((!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::markers::collect_text;
    use std::path::Path;

    const MUTATE_AIJOB: &str = "// +kubebuilder:webhook:path=/mutate-ai-ai-example-com-v1-aijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ai.ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=maijob-v1.kb.io,admissionReviewVersions=v1";
    const VALIDATE_AIJOB: &str = "// +kubebuilder:webhook:path=/validate-ai-ai-example-com-v1-aijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=vaijob-v1.kb.io,admissionReviewVersions=v1";

    fn markers(src: &str) -> Vec<Marker> {
        let (markers, errors) = collect_text(Path::new("src/webhook/v1/aijob_webhook.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        markers
    }

    fn yaml(src: &str) -> String {
        generate(&markers(src)).unwrap().unwrap()
    }

    /// The error texts of generating from `src`.
    fn errors(src: &str) -> Vec<String> {
        generate(&markers(src))
            .unwrap_err()
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    /// A valid mutating marker with `extra` arguments appended.
    fn mutating_with(extra: &str) -> String {
        format!(
            "// +kubebuilder:webhook:mutating=true,failurePolicy=fail,groups=g.example.com,resources=things,verbs=create,versions=v1,name=mthing-v1.kb.io,admissionReviewVersions=v1{extra}"
        )
    }

    fn validating_with(extra: &str) -> String {
        mutating_with(extra)
            .replace("mutating=true", "mutating=false")
            .replace("name=mthing", "name=vthing")
    }

    fn first_error(line: &str) -> String {
        let e = errors(line);
        assert!(!e.is_empty());
        assert!(
            e[0].starts_with("src/webhook/v1/aijob_webhook.rs:1:"),
            "{e:?}"
        );
        e[0].clone()
    }

    /// Case A: the markers `create webhook --defaulting --programmatic-validation` writes,
    /// against controller-gen's layout (as in Kubebuilder's CronJob tutorial).
    #[test]
    fn case_a_webhook_configurations() {
        let src = format!("{VALIDATE_AIJOB}\n{MUTATE_AIJOB}\n");
        let expected = "\
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-ai-ai-example-com-v1-aijob
  failurePolicy: Fail
  name: maijob-v1.kb.io
  rules:
  - apiGroups:
    - ai.ai.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - aijobs
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-ai-ai-example-com-v1-aijob
  failurePolicy: Fail
  name: vaijob-v1.kb.io
  rules:
  - apiGroups:
    - ai.ai.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - aijobs
  sideEffects: None
";
        assert_eq!(yaml(&src), expected);
    }

    #[test]
    fn no_webhook_markers_means_no_file() {
        let src = "// +kubebuilder:webhookconfiguration:mutating=true,name=x\n";
        assert_eq!(generate(&markers(src)).unwrap(), None);
    }

    #[test]
    fn only_mutating_webhooks_give_only_the_mutating_configuration() {
        let text = yaml(MUTATE_AIJOB);
        assert_eq!(text.matches("---\n").count(), 1);
        assert!(text.contains("kind: MutatingWebhookConfiguration"));
        assert!(!text.contains("Validating"));
    }

    #[test]
    fn webhooks_are_sorted_by_name() {
        let src = format!(
            "{}\n{}\n",
            validating_with(",sideEffects=None,path=/v").replace("vthing-v1", "zeta.example.com"),
            validating_with(",sideEffects=None,path=/v").replace("vthing-v1", "alpha.example.com")
        );
        let cfg = configurations(&markers(&src)).unwrap();
        let names: Vec<String> = cfg
            .validating
            .unwrap()
            .webhooks
            .unwrap()
            .into_iter()
            .map(|w| w.name)
            .collect();
        assert_eq!(names, ["alpha.example.com.kb.io", "zeta.example.com.kb.io"]);
    }

    #[test]
    fn webhookconfiguration_renames_the_objects() {
        let src = format!(
            "// +kubebuilder:webhookconfiguration:mutating=true,name=ai-mutating\n// +kubebuilder:webhookconfiguration:mutating=false,name=ai-validating\n{MUTATE_AIJOB}\n{VALIDATE_AIJOB}\n"
        );
        let text = yaml(&src);
        assert!(
            text.contains("kind: MutatingWebhookConfiguration\nmetadata:\n  name: ai-mutating\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "kind: ValidatingWebhookConfiguration\nmetadata:\n  name: ai-validating\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn policies_are_spelled_as_the_api_spells_them() {
        let line = mutating_with(",sideEffects=noneondryrun,matchPolicy=equivalent,reinvocationPolicy=ifneeded,timeoutSeconds=5,path=/m")
            .replace("failurePolicy=fail", "failurePolicy=IGNORE")
            .replace("verbs=create", "verbs=Delete;connect;*");
        let cfg = configurations(&markers(&line)).unwrap();
        let w = &cfg.mutating.unwrap().webhooks.unwrap()[0];
        assert_eq!(w.failure_policy.as_deref(), Some("Ignore"));
        assert_eq!(w.side_effects, "NoneOnDryRun");
        assert_eq!(w.match_policy.as_deref(), Some("Equivalent"));
        assert_eq!(w.reinvocation_policy.as_deref(), Some("IfNeeded"));
        assert_eq!(w.timeout_seconds, Some(5));
        assert_eq!(
            w.rules.as_ref().unwrap()[0].operations.as_deref().unwrap(),
            ["DELETE", "CONNECT", "*"]
        );
    }

    #[test]
    fn core_group_and_service_overrides() {
        let line = validating_with(",sideEffects=None,path=/validate--v1-pod,serviceName=hooks,serviceNamespace=ops,servicePort=8443")
            .replace("groups=g.example.com", "groups=core");
        let cfg = configurations(&markers(&line)).unwrap();
        let w = &cfg.validating.unwrap().webhooks.unwrap()[0];
        assert_eq!(
            w.rules.as_ref().unwrap()[0].api_groups.as_deref().unwrap(),
            [""]
        );
        let svc = w.client_config.service.as_ref().unwrap();
        assert_eq!(
            (
                svc.name.as_str(),
                svc.namespace.as_str(),
                svc.path.as_deref(),
                svc.port
            ),
            ("hooks", "ops", Some("/validate--v1-pod"), Some(8443))
        );
    }

    #[test]
    fn url_replaces_the_service() {
        let line = mutating_with(",sideEffects=None,url=\"https://hooks.example.com:8443/mutate\"");
        let text = yaml(&line);
        assert!(
            text.contains("  clientConfig:\n    url: https://hooks.example.com:8443/mutate\n"),
            "{text}"
        );
        assert!(!text.contains("service:"), "{text}");
    }

    #[test]
    fn patch_sets_fields_without_arguments() {
        let line = mutating_with(
            ",sideEffects=None,path=/m,patch=`{\"namespaceSelector\":{\"matchLabels\":{\"webhook\":\"on\"}},\"timeoutSeconds\":7}`",
        );
        let cfg = configurations(&markers(&line)).unwrap();
        let w = &cfg.mutating.unwrap().webhooks.unwrap()[0];
        assert_eq!(w.timeout_seconds, Some(7));
        let labels = w
            .namespace_selector
            .as_ref()
            .unwrap()
            .match_labels
            .as_ref()
            .unwrap();
        assert_eq!(labels.get("webhook").map(String::as_str), Some("on"));
    }

    #[test]
    fn side_effects_are_required_and_must_be_none_or_none_on_dry_run() {
        assert!(first_error(&mutating_with(",path=/m")).contains("`sideEffects` is required"));
        let e = first_error(&mutating_with(",path=/m,sideEffects=Some"));
        assert!(e.contains("sideEffects `Some` is not allowed"), "{e}");
        let e = first_error(&mutating_with(",path=/m,sideEffects=Unknown"));
        assert!(e.contains("sideEffects `Unknown` is not allowed"), "{e}");
        let e = first_error(&mutating_with(",path=/m,sideEffects=Maybe"));
        assert!(
            e.contains("`sideEffects` must be one of `None`, `NoneOnDryRun`"),
            "{e}"
        );
    }

    #[test]
    fn timeout_must_be_between_1_and_30() {
        for t in [0, 31, -1] {
            let e = first_error(&mutating_with(&format!(
                ",path=/m,sideEffects=None,timeoutSeconds={t}"
            )));
            assert!(
                e.contains(&format!("between 1 and 30 seconds, not {t}")),
                "{e}"
            );
        }
        for t in [1, 30] {
            let line = mutating_with(&format!(",path=/m,sideEffects=None,timeoutSeconds={t}"));
            assert!(generate(&markers(&line)).is_ok());
        }
    }

    #[test]
    fn exactly_one_of_path_and_url() {
        let e = first_error(&mutating_with(",sideEffects=None"));
        assert!(e.contains("exactly one of `path` and `url`"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,url=\"https://x/m\"",
        ));
        assert!(e.contains("mutually exclusive"), "{e}");
    }

    #[test]
    fn match_and_failure_policies_are_checked() {
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,matchPolicy=Fuzzy",
        ));
        assert!(
            e.contains("`matchPolicy` must be one of `Exact`, `Equivalent`, not `Fuzzy`"),
            "{e}"
        );
        let e = first_error(
            &mutating_with(",sideEffects=None,path=/m")
                .replace("failurePolicy=fail", "failurePolicy=retry"),
        );
        assert!(
            e.contains("`failurePolicy` must be one of `Fail`, `Ignore`"),
            "{e}"
        );
    }

    #[test]
    fn admission_review_versions_are_required() {
        let line =
            mutating_with(",sideEffects=None,path=/m").replace(",admissionReviewVersions=v1", "");
        let (_, e) = collect_text(Path::new("x.rs"), &line);
        assert!(
            e[0].message
                .contains("missing the required argument `admissionReviewVersions`"),
            "{e:?}"
        );
        let line = mutating_with(",sideEffects=None,path=/m")
            .replace("admissionReviewVersions=v1", "admissionReviewVersions={}");
        assert!(first_error(&line).contains("must name at least one version"));
        let line = line.replace("admissionReviewVersions={}", "admissionReviewVersions=v2");
        assert!(first_error(&line).contains("(v1 or v1beta1)"));
    }

    #[test]
    fn reinvocation_policy_is_for_mutating_webhooks_only() {
        let e = first_error(&validating_with(
            ",sideEffects=None,path=/v,reinvocationPolicy=Never",
        ));
        assert!(e.contains("applies to mutating webhooks only"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,reinvocationPolicy=Always",
        ));
        assert!(e.contains("`Never`, `IfNeeded`"), "{e}");
    }

    #[test]
    fn only_v1_configurations_are_written() {
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,webhookVersions=v1beta1",
        ));
        assert!(e.contains("unsupported webhook version `v1beta1`"), "{e}");
        assert!(
            generate(&markers(&mutating_with(
                ",sideEffects=None,path=/m,webhookVersions=v1"
            )))
            .is_ok()
        );
    }

    #[test]
    fn verbs_must_be_operations() {
        let e = first_error(
            &mutating_with(",sideEffects=None,path=/m")
                .replace("verbs=create", "verbs=create;patch"),
        );
        assert!(e.contains("`patch` is not a webhook operation"), "{e}");
    }

    #[test]
    fn names_need_three_segments_and_must_be_unique() {
        let e = first_error(
            &mutating_with(",sideEffects=None,path=/m").replace("mthing-v1.kb.io", "mthing.io"),
        );
        assert!(e.contains("at least three segments"), "{e}");
        let line = mutating_with(",sideEffects=None,path=/m");
        let e = errors(&format!("{line}\n{line}\n"));
        assert_eq!(e.len(), 1);
        assert!(
            e[0].contains("`mthing-v1.kb.io` is already used at src/webhook/v1/aijob_webhook.rs:1"),
            "{e:?}"
        );
        // The same name in the mutating and the validating configuration is fine.
        let both = format!(
            "{line}\n{}\n",
            line.replace("mutating=true", "mutating=false")
        );
        assert!(generate(&markers(&both)).is_ok());
    }

    #[test]
    fn a_second_webhookconfiguration_of_a_kind_is_an_error() {
        let src = format!(
            "// +kubebuilder:webhookconfiguration:mutating=true,name=a\n// +kubebuilder:webhookconfiguration:mutating=true,name=b\n{MUTATE_AIJOB}\n"
        );
        let e = errors(&src);
        assert!(
            e[0].starts_with("src/webhook/v1/aijob_webhook.rs:2:"),
            "{e:?}"
        );
        assert!(
            e[0].contains(
                "a second +kubebuilder:webhookconfiguration for the mutating configuration"
            ),
            "{e:?}"
        );
    }

    #[test]
    fn client_config_values_are_checked() {
        let e = first_error(&mutating_with(",sideEffects=None,path=mutate"));
        assert!(e.contains("`path` must start with `/`"), "{e}");
        let e = first_error(&mutating_with(",sideEffects=None,url=\"http://x/m\""));
        assert!(e.contains("https://"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,url=\"https://x/m\",serviceName=s",
        ));
        assert!(e.contains("`serviceName` has no effect with `url`"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,servicePort=70000",
        ));
        assert!(e.contains("between 1 and 65535"), "{e}");
    }

    #[test]
    fn patch_must_be_a_json_object_of_webhook_fields() {
        let e = first_error(&mutating_with(",sideEffects=None,path=/m,patch=`{nope`"));
        assert!(e.contains("not valid JSON"), "{e}");
        let e = first_error(&mutating_with(",sideEffects=None,path=/m,patch=`[1]`"));
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,patch=`{\"namespaceSeletor\":{}}`",
        ));
        assert!(
            e.contains("`namespaceSeletor`, which is not a field of a webhook"),
            "{e}"
        );
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,patch=`{\"timeoutSeconds\":\"x\"}`",
        ));
        assert!(e.contains("wrong type"), "{e}");
        let e = first_error(&mutating_with(
            ",sideEffects=None,path=/m,patch=`{\"$patch\":\"replace\"}`",
        ));
        assert!(e.contains("`$patch`"), "{e}");
    }

    #[test]
    fn all_errors_of_all_markers_are_reported_in_line_order() {
        let src = format!(
            "{}\n{}\n",
            mutating_with(",path=/m"),
            validating_with(",sideEffects=None,path=/v,timeoutSeconds=99")
        );
        let lines: Vec<usize> = generate(&markers(&src))
            .unwrap_err()
            .iter()
            .map(|d| d.line)
            .collect();
        assert_eq!(lines, [1, 2]);
    }
}
