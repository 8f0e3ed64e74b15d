// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The project's webhooks in the test cluster's admission chain, called as kube-apiserver
//! calls them: an `admission.k8s.io/v1` AdmissionReview POSTed (in-process, no socket) to the
//! path the webhook configuration names, served by the project's own
//! [`crate::webhook::Webhooks`] routes. Mutating webhooks run first and their JSON patch is
//! applied; validating webhooks run after the schema; a denial fails the request with the
//! webhook's code and the API server's wording (`admission webhook "<name>" denied the
//! request: <message>`). Which webhook sees which request comes from the webhook
//! configurations (`config/webhook/manifests.yaml`): rules (groups, versions, resources,
//! operations) and `failurePolicy`.
//!
//! Also here: the decoding of built-in kinds into their k8s-openapi types, the first step of
//! their admission ([`super::builtin`]).

use std::path::Path;

use anyhow::Context as _;
use http::StatusCode;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use crate::apiserver::admission::{BoxFuture, Erased, Op, Refused};
use crate::apiserver::kind::ApiKind;
use crate::apiserver::status::ApiError;
use crate::routes::Routes;

/// One webhook of a Mutating- or ValidatingWebhookConfiguration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WebhookConfig {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) mutating: bool,
    rules: Vec<Rule>,
    /// `failurePolicy: Fail` (the default): a webhook that cannot be called fails the request.
    fail: bool,
    /// `sideEffects` is `None` or `NoneOnDryRun`: the webhook may be called for a dry run.
    dry_run_safe: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    groups: Vec<String>,
    versions: Vec<String>,
    resources: Vec<String>,
    operations: Vec<String>,
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn listed(list: &[String], item: &str) -> bool {
    list.iter().any(|x| x == "*" || x == item)
}

impl Rule {
    fn resource_matches(&self, group: &str, plural: &str) -> bool {
        listed(&self.groups, group) && listed(&self.resources, plural)
    }
}

impl WebhookConfig {
    /// Whether this webhook is called for `operation` on `kind` (its main resource).
    fn matches(&self, kind: &ApiKind, operation: &str) -> bool {
        self.rules.iter().any(|r| {
            r.resource_matches(&kind.group, &kind.plural)
                && listed(&r.versions, &kind.version)
                && listed(&r.operations, operation)
        })
    }

    /// Whether a rule names `kind`'s group and resource at another version only: the API
    /// server would convert the object for it (`matchPolicy: Equivalent`).
    fn matches_other_version(&self, kind: &ApiKind) -> bool {
        self.rules
            .iter()
            .any(|r| r.resource_matches(&kind.group, &kind.plural))
            && !self.rules.iter().any(|r| {
                r.resource_matches(&kind.group, &kind.plural) && listed(&r.versions, &kind.version)
            })
    }
}

/// Checks that every defaulting and validating webhook registered in `webhooks` is named by
/// a configuration of `configs` (read from `manifests`): kube-apiserver calls a webhook only
/// at a `clientConfig.service.path` of a configuration, so a registered path that none names
/// would never be called and a test of it would pass without the webhook running. That
/// happens when `config/webhook/manifests.yaml` was not generated yet (`rsbuilder manifests`)
/// or a path constant and its `+kubebuilder:webhook` marker disagree. Errors: the first such
/// path, with the paths the file does name.
pub(crate) fn check_registered(
    webhooks: &crate::webhook::Webhooks,
    configs: &[WebhookConfig],
    manifests: &Path,
) -> anyhow::Result<()> {
    for path in webhooks.admission_paths() {
        if !configs.iter().any(|c| c.path == path) {
            let named: Vec<&str> = configs.iter().map(|c| c.path.as_str()).collect();
            anyhow::bail!(
                "the webhook registered at {path:?} is named by no webhook configuration in {} (it names {}): the API server would never call it. Run `rsbuilder manifests` (`make manifests`) to write the configurations from the +kubebuilder:webhook markers, and check that the marker's `path` equals the path the webhook is registered at",
                manifests.display(),
                if named.is_empty() {
                    "none".to_string()
                } else {
                    named.join(", ")
                }
            );
        }
    }
    Ok(())
}

/// The webhooks of the Mutating- and ValidatingWebhookConfigurations in the YAML file `path`
/// (`config/webhook/manifests.yaml`). Errors: the file cannot be read or is not YAML; a
/// webhook without a service path (a `url` webhook is outside the project).
pub(crate) fn read_configs(path: &Path) -> anyhow::Result<Vec<WebhookConfig>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .map_err(|e| anyhow::anyhow!("{}: not YAML: {e}", path.display()))?;
    let mut out = Vec::new();
    for doc in docs {
        let mutating = match doc.get("kind").and_then(Value::as_str) {
            Some("MutatingWebhookConfiguration") => true,
            Some("ValidatingWebhookConfiguration") => false,
            _ => continue,
        };
        for hook in doc
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = hook
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let path_of = hook
                .pointer("/clientConfig/service/path")
                .and_then(Value::as_str)
                .with_context(|| {
                    format!(
                        "{}: webhook {name:?} has no clientConfig.service.path; the test cluster calls only the project's own webhooks",
                        path.display()
                    )
                })?;
            let rules = hook
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|r| Rule {
                    groups: strings(r, "apiGroups"),
                    versions: strings(r, "apiVersions"),
                    resources: strings(r, "resources"),
                    operations: strings(r, "operations"),
                })
                .collect();
            out.push(WebhookConfig {
                name,
                path: path_of.to_string(),
                mutating,
                rules,
                fail: hook.get("failurePolicy").and_then(Value::as_str) != Some("Ignore"),
                dry_run_safe: matches!(
                    hook.get("sideEffects").and_then(Value::as_str),
                    Some("None" | "NoneOnDryRun")
                ),
            });
        }
    }
    Ok(out)
}

/// A kind's admission in the test cluster: decoding into its type (built-in kinds), then the
/// project's mutating webhooks; after the schema, its validating webhooks.
pub(crate) struct Chain {
    kind: ApiKind,
    decode: Option<super::builtin::Decode>,
    webhooks: Vec<WebhookConfig>,
    routes: Routes,
}

impl Chain {
    /// The chain of `kind`: `decode` for a built-in kind, and those of `webhooks` whose rules
    /// name the kind's group and resource. `None` when there is nothing to do.
    pub(crate) fn of(
        kind: &ApiKind,
        decode: Option<super::builtin::Decode>,
        webhooks: &[WebhookConfig],
        routes: &Routes,
    ) -> Option<Self> {
        let webhooks: Vec<WebhookConfig> = webhooks
            .iter()
            .filter(|w| {
                w.rules
                    .iter()
                    .any(|r| r.resource_matches(&kind.group, &kind.plural))
            })
            .cloned()
            .collect();
        (decode.is_some() || !webhooks.is_empty()).then(|| Self {
            kind: kind.clone(),
            decode,
            webhooks,
            routes: routes.clone(),
        })
    }

    /// Calls `hook` for `operation` with `object` and `old` (`dry_run`: the review's
    /// `request.dryRun`). Out: the webhook's `response`, or `None` when it failed and its
    /// failure policy is `Ignore`. Errors: the webhook denied (its Status), or failed under
    /// `failurePolicy: Fail` (500, as the API server answers "failed calling webhook"); a dry
    /// run for a webhook whose `sideEffects` are not `None` or `NoneOnDryRun` (400, as
    /// k8s.io/apiserver's webhook dispatcher refuses it, whatever the failure policy).
    async fn call(
        &self,
        hook: &WebhookConfig,
        operation: &str,
        object: Option<&Value>,
        old: Option<&Value>,
        dry_run: bool,
    ) -> Result<Option<Value>, Refused> {
        if dry_run && !hook.dry_run_safe {
            return Err(Refused::Status(ApiError::bad_request(format!(
                "admission webhook \"{}\" does not support dry run",
                hook.name
            ))));
        }
        let k = &self.kind;
        let meta = object.or(old).and_then(|o| o.get("metadata"));
        let field = |f: &str| meta.and_then(|m| m.get(f)).cloned().unwrap_or(Value::Null);
        let gvk = json!({"group": k.group, "version": k.version, "kind": k.kind});
        let gvr = json!({"group": k.group, "version": k.version, "resource": k.plural});
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": uid, "kind": gvk, "resource": gvr,
                "requestKind": gvk, "requestResource": gvr,
                "name": field("name"), "namespace": field("namespace"),
                "operation": operation,
                "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
                "object": object, "oldObject": old, "dryRun": dry_run,
            },
        });
        let failed = |why: String| -> Result<Option<Value>, Refused> {
            if hook.fail {
                Err(Refused::Status(ApiError::internal(format!(
                    "failed calling webhook \"{}\": {why}",
                    hook.name
                ))))
            } else {
                tracing::warn!(webhook = %hook.name, error = %why, "webhook failed; failurePolicy Ignore");
                Ok(None)
            }
        };
        let request = http::Request::post(&hook.path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(crate::routes::body(review.to_string()))
            .expect("a request with a valid path");
        let answer = self.routes.call(request).await;
        let code = answer.status();
        let body = match answer.into_body().collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => return failed(format!("reading the answer: {e}")),
        };
        if code != StatusCode::OK {
            return failed(format!(
                "the server responded with the status code {} ({})",
                code.as_u16(),
                String::from_utf8_lossy(&body).trim()
            ));
        }
        let Ok(review) = serde_json::from_slice::<Value>(&body) else {
            return failed("the answer is not JSON".into());
        };
        let Some(response) = review.get("response").cloned() else {
            return failed("the answer has no response".into());
        };
        if response.get("uid").and_then(Value::as_str) != Some(uid.as_str()) {
            return failed(format!("expected response.uid={uid:?}"));
        }
        if response.get("allowed") != Some(&Value::Bool(true)) {
            let status = response.get("status");
            let code = status
                .and_then(|s| s.get("code"))
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| *c >= 400)
                .unwrap_or(403);
            let message = status
                .and_then(|s| s.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let reason = match status.and_then(|s| s.get("reason")).and_then(Value::as_str) {
                Some("Invalid") => "Invalid",
                Some("BadRequest") => "BadRequest",
                Some("Conflict") => "Conflict",
                Some("NotFound") => "NotFound",
                Some("InternalError") => "InternalError",
                _ => "Forbidden",
            };
            return Err(Refused::Status(ApiError {
                code,
                reason,
                message: format!(
                    "admission webhook \"{}\" denied the request: {message}",
                    hook.name
                ),
                details: None,
                continue_token: None,
            }));
        }
        Ok(Some(response))
    }

    /// Refuses a request a webhook should see converted to another version, which the test
    /// cluster does not do.
    fn check_versions(&self) -> Result<(), Refused> {
        match self
            .webhooks
            .iter()
            .find(|w| w.matches_other_version(&self.kind))
        {
            Some(w) => Err(Refused::Status(ApiError::internal(format!(
                "the test cluster cannot call webhook \"{}\" for {}: its rules name other versions, and the API server would convert the object to one of them (matchPolicy Equivalent), which the test cluster does not do",
                w.name,
                self.kind.api_version()
            )))),
            None => Ok(()),
        }
    }
}

/// Applies a webhook's base64 JSON patch to `obj`. Errors: 500, as the API server answers
/// a patch it cannot apply.
fn apply_patch(name: &str, response: &Value, obj: &mut Value) -> Result<(), Refused> {
    use base64::Engine as _;
    let Some(patch) = response.get("patch").and_then(Value::as_str) else {
        return Ok(());
    };
    let bad = |why: String| {
        Refused::Status(ApiError::internal(format!(
            "the patch of webhook \"{name}\" cannot be applied: {why}"
        )))
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(patch)
        .map_err(|e| bad(e.to_string()))?;
    let patch: json_patch::Patch =
        serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    json_patch::patch(obj, &patch).map_err(|e| bad(e.to_string()))
}

impl Erased for Chain {
    fn default<'a>(
        &'a self,
        obj: &'a mut Value,
        dry_run: bool,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            if let Some(decode) = self.decode {
                *obj = decode(obj).map_err(|e| {
                    Refused::Status(ApiError::bad_request(format!(
                        "{kind} in version \"{v}\" cannot be handled as a {kind}: {e}",
                        kind = self.kind.kind,
                        v = self.kind.version
                    )))
                })?;
            }
            if self.webhooks.is_empty() {
                return Ok(());
            }
            self.check_versions()?;
            // The registry refuses a resourceVersion on create and requires one on update, so
            // it tells the two apart.
            let updating = obj
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .is_some_and(|rv| !rv.is_empty());
            let operation = if updating { "UPDATE" } else { "CREATE" };
            for hook in self.webhooks.iter().filter(|w| w.mutating) {
                if !hook.matches(&self.kind, operation) {
                    continue;
                }
                let Some(response) = self.call(hook, operation, Some(obj), None, dry_run).await?
                else {
                    continue;
                };
                apply_patch(&hook.name, &response, obj)?;
            }
            Ok(())
        })
    }

    fn validate<'a>(&'a self, op: Op<'a>, dry_run: bool) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            if self.webhooks.is_empty() {
                return Ok(());
            }
            self.check_versions()?;
            let (operation, object, old) = match op {
                Op::Create(o) => ("CREATE", Some(o), None),
                Op::Update { old, new } => ("UPDATE", Some(new), Some(old)),
                Op::Delete(o) => ("DELETE", None, Some(o)),
            };
            for hook in self.webhooks.iter().filter(|w| !w.mutating) {
                if hook.matches(&self.kind, operation) {
                    self.call(hook, operation, object, old, dry_run).await?;
                }
            }
            Ok(())
        })
    }
}
