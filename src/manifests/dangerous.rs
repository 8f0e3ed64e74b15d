//! Warnings for manifests that are valid but dangerous: RBAC grants that let the manager
//! escalate its privileges, read every Secret, run commands in Pods, reach the kubelet or
//! approve certificates or mint ServiceAccount tokens, wildcards (also in a subresource:
//! `pods/*`); admission webhooks that fail open, match every resource or
//! group, or send objects outside the cluster. controller-gen writes all of these without a
//! word.
//!
//! The rules are Kubernetes' "Role Based Access Control Good Practices" (escalate, bind,
//! impersonate, secrets, pods/exec and attach, nodes/proxy, CSR approval, wildcards) and the
//! checks kube-linter and kubescape make on roles and webhook configurations, as facts. Each
//! warning names the marker's file:line, the check's name and how to narrow the grant.
//! A webhook is checked as `manifests.yaml` holds it: the object [`super::webhook::build`]
//! makes, after the marker's `patch=`, each rule matched on its own; a warning points at
//! `patch` when the patch changed what the check reads (the object before and after the patch
//! are compared), and a marker whose webhook cannot be built is left to that module's errors.
//! `// +rsbuilder:allow=<check>;<check>` on a line before the marker acknowledges it (the next
//! rbac or webhook marker of the file), and `manifests --strict` turns the rest into errors.

use std::collections::BTreeSet;

use k8s_openapi::api::admissionregistration::v1::{MutatingWebhook, RuleWithOperations};

use super::diag::Diagnostic;
use super::markers::Marker;
use super::markers::grammar::Value;
use super::markers::typed::{RbacRule, WebhookMarker};
use super::webhook::Built;

/// The name of the acknowledging marker.
pub const ALLOW: &str = "rsbuilder:allow";

/// Every check, by the name `+rsbuilder:allow` takes, with what it is about.
pub const CHECKS: &[(&str, &str)] = &[
    ("wildcard-verbs", "an RBAC rule with `verbs=*`"),
    ("wildcard-resources", "an RBAC rule with `resources=*`"),
    ("wildcard-groups", "an RBAC rule with `groups=*`"),
    (
        "escalation",
        "the escalate, bind or impersonate verbs, which let the manager grant itself more",
    ),
    ("secrets", "reading Secrets (get, list, watch)"),
    (
        "exec",
        "pods/exec, pods/attach or pods/portforward, or writing pods/ephemeralcontainers",
    ),
    ("node-proxy", "nodes/proxy (the kubelet's API)"),
    (
        "serviceaccount-tokens",
        "creating serviceaccounts/token (minting ServiceAccount tokens)",
    ),
    (
        "csr-approval",
        "approving or signing CertificateSigningRequests",
    ),
    (
        "webhook-configurations",
        "writing Mutating- or ValidatingWebhookConfigurations",
    ),
    (
        "failure-policy-ignore",
        "a webhook with `failurePolicy=Ignore`",
    ),
    ("webhook-all-resources", "a webhook matching every resource"),
    ("webhook-all-groups", "a webhook matching every API group"),
    ("webhook-url", "a webhook called at a URL, not a Service"),
    (
        "webhook-own-namespace",
        "a webhook on the kinds the manager needs to start (Pods, ReplicaSets, Leases, ...), with no selector that could leave its own namespace out",
    ),
];

/// The kinds, by API group, that a Deployment's rollout in the manager's namespace writes: a
/// webhook that fails closed on them can keep the manager from coming back while the webhook
/// (the manager) is down.
const STARTUP_KINDS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "pods",
            "services",
            "endpoints",
            "configmaps",
            "secrets",
            "serviceaccounts",
            "events",
        ],
    ),
    ("apps", &["deployments", "replicasets"]),
    ("coordination.k8s.io", &["leases"]),
    ("discovery.k8s.io", &["endpointslices"]),
    ("events.k8s.io", &["events"]),
];

fn any(list: &[String], wanted: &[&str]) -> bool {
    list.iter().any(|x| wanted.contains(&x.as_str()))
}

/// The dangerous-manifest warnings of `markers` (in source order), without those a
/// `+rsbuilder:allow` acknowledges. Out: one diagnostic per check a marker fails, at the
/// marker, with the check's name in the message and how to narrow the grant as help.
pub fn warnings(markers: &[Marker]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut allowed: BTreeSet<String> = BTreeSet::new();
    let mut file = None;
    for m in markers {
        if file != Some(&m.file) {
            file = Some(&m.file);
            allowed.clear();
        }
        if m.name() == ALLOW {
            if let Some(Value::List(checks)) = m.args.first().map(|a| &a.value) {
                allowed.extend(checks.iter().cloned());
            }
            continue;
        }
        let found = if let Ok(r) = RbacRule::try_from(m) {
            rbac(&r)
        } else if let Ok(w) = WebhookMarker::try_from(m) {
            // A marker whose webhook cannot be built writes no manifest; its errors are
            // `webhook.rs`'s to report.
            super::webhook::build(&w)
                .map(|b| webhook(&b))
                .unwrap_or_default()
        } else {
            continue;
        };
        for (check, at, message, help) in found {
            if !allowed.contains(check) {
                out.push(
                    m.diag_at(at, format!("{message} [{check}]"))
                        .with_help(format!(
                            "{help}; if it is needed, acknowledge it with `// +{ALLOW}={check}` on the line above"
                        )),
                );
            }
        }
        allowed.clear();
    }
    out
}

/// A marker's unknown check names in `+rsbuilder:allow` (typos would silence nothing).
pub fn unknown_checks(markers: &[Marker]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for m in markers.iter().filter(|m| m.name() == ALLOW) {
        if let Some(Value::List(checks)) = m.args.first().map(|a| &a.value) {
            for c in checks {
                if !CHECKS.iter().any(|(name, _)| name == c) {
                    let names: Vec<&str> = CHECKS.iter().map(|(n, _)| *n).collect();
                    out.push(
                        m.diag(format!("unknown check `{c}` in +{ALLOW}"))
                            .with_help(format!("the checks are {}", names.join(", "))),
                    );
                }
            }
        }
    }
    out
}

type Found = (&'static str, &'static str, String, String);

/// Whether an RBAC rule on `groups` and `resources` grants `wanted` (`resource/subresource`
/// of API group `group`), as the API server's RBAC authorizer matches it: only when one of
/// the rule's groups is `group` or `*`; then a bare `*` matches every resource and
/// subresource, and `*` in the resource or the subresource part matches that part (`pods/*`,
/// `*/exec`, `*/*`). `pods/exec` under `groups=apps` grants nothing: the authorizer matches
/// the group first.
fn grants(groups: &[String], resources: &[String], group: &str, wanted: &str) -> bool {
    let (res, sub) = wanted.split_once('/').unwrap_or((wanted, ""));
    let in_group = groups.iter().any(|g| g == group || g == "*");
    in_group
        && resources.iter().any(|r| match r.split_once('/') {
            Some((rr, rs)) => (rr == "*" || rr == res) && (rs == "*" || rs == sub),
            None => r == "*" || (sub.is_empty() && r == res),
        })
}

fn rbac(r: &RbacRule<'_>) -> Vec<Found> {
    let verbs: Vec<String> = r.verbs.unwrap_or_default().to_vec();
    let resources = r.resources;
    let mut out: Vec<Found> = Vec::new();
    let mut push = |check, at, message: String, help: &str| {
        out.push((check, at, message, help.to_string()));
    };
    let reads = any(&verbs, &["*", "get", "list", "watch"]);
    if any(&verbs, &["*"]) {
        push(
            "wildcard-verbs",
            "verbs",
            "the rule grants every verb, also those added to Kubernetes later".into(),
            "list the verbs the manager uses (get;list;watch, and the writes it makes)",
        );
    }
    if any(resources, &["*"]) {
        push(
            "wildcard-resources",
            "resources",
            "the rule grants every resource of its groups, Secrets and subresources included"
                .into(),
            "list the resources the manager uses",
        );
    }
    if r.groups.iter().any(|g| g == "*") {
        push(
            "wildcard-groups",
            "groups",
            "the rule grants every API group, also those installed later".into(),
            "list the groups of the kinds the manager uses",
        );
    }
    // `verbs=*` grants these special verbs too, where the rule reaches what they act on: roles
    // and cluster roles (escalate, bind), users, groups, ServiceAccounts and user extras
    // (impersonate); RBAC matches the wildcard as it matches the verb.
    let rbac_group =
        |wanted: &str| grants(&r.groups, resources, "rbac.authorization.k8s.io", wanted);
    let wildcard = any(&verbs, &["*"]);
    let escalating: Vec<&str> = ["escalate", "bind", "impersonate"]
        .into_iter()
        .filter(|v| {
            verbs.iter().any(|x| x == v)
                || (wildcard
                    && match *v {
                        "impersonate" => {
                            ["users", "groups", "serviceaccounts"]
                                .iter()
                                .any(|w| grants(&r.groups, resources, "", w))
                                || ["userextras/*", "uids"].iter().any(|w| {
                                    grants(&r.groups, resources, "authentication.k8s.io", w)
                                })
                        }
                        _ => rbac_group("roles") || rbac_group("clusterroles"),
                    })
        })
        .collect();
    if !escalating.is_empty() {
        push(
            "escalation",
            "verbs",
            format!(
                "`{}` lets the manager grant itself or act with permissions it does not have",
                escalating.join("`, `")
            ),
            "remove the verb; bind only named roles with resourceNames if binding is the job",
        );
    }
    let on = |names: &[&str]| any(resources, names) || any(resources, &["*"]);
    if reads && on(&["secrets"]) && r.groups.iter().any(|g| g.is_empty() || g == "*") {
        push(
            "secrets",
            "resources",
            "the rule reads Secrets: every credential in its scope".into(),
            "narrow it with resourceNames, or to the namespace that holds the manager's Secrets (namespace=...)",
        );
    }
    let core = |wanted: &str| grants(&r.groups, resources, "", wanted);
    let writes_ephemeral =
        any(&verbs, &["*", "update", "patch"]) && core("pods/ephemeralcontainers");
    if ["pods/exec", "pods/attach", "pods/portforward"]
        .iter()
        .any(|s| core(s))
        || writes_ephemeral
    {
        push(
            "exec",
            "resources",
            "the rule lets the manager run commands in, attach to, forward ports of or add containers to Pods".into(),
            "remove the subresource; a controller rarely needs it",
        );
    }
    if core("nodes/proxy") {
        push(
            "node-proxy",
            "resources",
            "nodes/proxy reaches the kubelet's API, which runs commands in any Pod of the node"
                .into(),
            "remove it; read node metrics through metrics.k8s.io instead",
        );
    }
    let certificates = |wanted: &str| grants(&r.groups, resources, "certificates.k8s.io", wanted);
    if (any(&verbs, &["*", "update", "patch"])
        && certificates("certificatesigningrequests/approval"))
        || (any(&verbs, &["approve", "sign", "*"]) && certificates("signers"))
    {
        push(
            "csr-approval",
            "resources",
            "the rule lets the manager approve or sign certificates, and so mint credentials"
                .into(),
            "limit it to one signer with resourceNames",
        );
    }
    if any(&verbs, &["*", "create"]) && core("serviceaccounts/token") {
        push(
            "serviceaccount-tokens",
            "resources",
            "the rule lets the manager mint tokens for ServiceAccounts, and so act as any of them in its scope"
                .into(),
            "limit it to the ServiceAccounts the manager needs with resourceNames",
        );
    }
    let writes = any(&verbs, &["*", "create", "update", "patch", "delete"]);
    if writes
        && [
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ]
        .iter()
        .any(|w| grants(&r.groups, resources, "admissionregistration.k8s.io", w))
    {
        push(
            "webhook-configurations",
            "resources",
            "the rule lets the manager change admission webhooks, and so every write in the cluster"
                .into(),
            "limit it to the project's configurations with resourceNames",
        );
    }
    out
}

/// Whether a rule's `operations` include a write that a rollout makes (create, update).
fn writes(rule: &RuleWithOperations) -> bool {
    rule.operations.iter().flatten().any(|o| {
        ["*", "CREATE", "UPDATE"]
            .iter()
            .any(|w| o.eq_ignore_ascii_case(w))
    })
}

/// The values of every rule's `field` (`apiGroups`, `resources`), in order.
fn all(w: &MutatingWebhook, field: fn(&RuleWithOperations) -> &Option<Vec<String>>) -> Vec<&str> {
    w.rules
        .iter()
        .flatten()
        .flat_map(|r| field(r).iter().flatten())
        .map(String::as_str)
        .collect()
}

/// The kinds of [`STARTUP_KINDS`] that a rule matches on a write, in that list's order.
fn startup_kinds(w: &MutatingWebhook) -> Vec<&'static str> {
    let matches = |group: &str, kind: &str| {
        w.rules.iter().flatten().filter(|r| writes(r)).any(|r| {
            r.api_groups
                .iter()
                .flatten()
                .any(|g| g == "*" || g == group)
                && r.resources.iter().flatten().any(|res| {
                    let base = res.split('/').next().unwrap_or(res);
                    base == kind
                })
        })
    };
    STARTUP_KINDS
        .iter()
        .flat_map(|(group, kinds)| kinds.iter().map(move |k| (*group, *k)))
        .filter(|(group, kind)| matches(group, kind))
        .map(|(_, kind)| kind)
        .collect()
}

/// The checks of one webhook, run on the webhook as `manifests.yaml` holds it
/// ([`super::webhook::build`]: after the marker's `patch=`). A warning points at the argument
/// it comes from, or at `patch` when the patch changed what the check reads.
fn webhook(b: &Built) -> Vec<Found> {
    let (before, w) = (&b.unpatched, &b.patched);
    let at = |arg: &'static str, changed: bool| if changed { "patch" } else { arg };
    let fails_open = |w: &MutatingWebhook| {
        w.failure_policy
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case("ignore"))
    };
    let url = |w: &MutatingWebhook| w.client_config.url.clone();
    let groups = |w| all(w, |r| &r.api_groups);
    let resources = |w| all(w, |r| &r.resources);
    let mut out: Vec<Found> = Vec::new();
    if fails_open(w) {
        out.push((
            "failure-policy-ignore",
            at("failurePolicy", before.failure_policy != w.failure_policy),
            "the webhook fails open: while it is down, objects it should reject are admitted"
                .into(),
            "use failurePolicy=fail".into(),
        ));
    }
    if resources(w).iter().any(|r| *r == "*" || *r == "*/*") {
        out.push((
            "webhook-all-resources",
            at("resources", resources(before) != resources(w)),
            "the webhook is called for every resource: an outage blocks writes of every kind"
                .into(),
            "list the resources the webhook checks".into(),
        ));
    }
    if groups(w).contains(&"*") {
        out.push((
            "webhook-all-groups",
            at("groups", groups(before) != groups(w)),
            "the webhook is called for every API group".into(),
            "list the groups of the kinds the webhook checks".into(),
        ));
    }
    let startup = startup_kinds(w);
    let selector = w.namespace_selector.is_some() || w.object_selector.is_some();
    if !fails_open(w) && !startup.is_empty() && !selector {
        let changed = before.rules != w.rules || before.failure_policy != w.failure_policy;
        out.push((
            "webhook-own-namespace",
            at("resources", changed),
            format!(
                "the webhook fails closed on {} in every namespace, the manager's own included: while the manager is down, the API server refuses what its rollout writes, so it may not come back",
                startup.join(", ")
            ),
            "leave the manager's namespace out with a namespaceSelector (a kustomize patch of config/webhook: `kubernetes.io/metadata.name` NotIn the manager's namespace) or an objectSelector".into(),
        ));
    }
    if url(w).is_some() {
        out.push((
            "webhook-url",
            at("url", url(before) != url(w)),
            "the API server sends every admitted object to this URL, possibly outside the cluster"
                .into(),
            "serve the webhook from the manager's Service (the default without url)".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::markers::collect_text;
    use std::path::Path;

    fn checks(src: &str) -> Vec<String> {
        let (markers, errors) = collect_text(Path::new("src/controller.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        warnings(&markers)
            .iter()
            .map(|d| {
                let m = d.to_string();
                let check = m.rsplit_once('[').unwrap().1;
                let check = check.split_once(']').unwrap().0.to_string();
                format!("{}:{check}", d.line)
            })
            .collect()
    }

    #[test]
    fn each_dangerous_grant_is_a_warning_at_its_marker() {
        let src = "\
// +kubebuilder:rbac:groups=ai.example.com,resources=aijobs,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=*,resources=*,verbs=*
// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind;escalate
// +kubebuilder:rbac:groups=\"\",resources=users,verbs=impersonate
// +kubebuilder:rbac:groups=\"\",resources=pods/exec;pods/portforward,verbs=create
// +kubebuilder:rbac:groups=\"\",resources=nodes/proxy,verbs=get
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list
";
        assert_eq!(
            checks(src),
            [
                "2:wildcard-verbs",
                "2:wildcard-resources",
                "2:wildcard-groups",
                "2:escalation",
                "2:secrets",
                "2:exec",
                "2:node-proxy",
                "2:csr-approval",
                "2:serviceaccount-tokens",
                "2:webhook-configurations",
                "3:secrets",
                "5:escalation",
                "6:escalation",
                "7:exec",
                "8:node-proxy",
                "9:csr-approval",
                "10:webhook-configurations",
            ]
        );
    }

    /// A bare `*` grants every resource and subresource of its groups, as RBAC matches it, so
    /// each check still asks for its own acknowledgement; before, `resources=*` warned only
    /// `wildcard-resources`. Writing pods/ephemeralcontainers runs a container in a Pod.
    #[test]
    fn a_bare_wildcard_resource_is_every_check_of_its_groups() {
        let src = "\
// +kubebuilder:rbac:groups=core,resources=*,verbs=create
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=*,verbs=update;patch
// +kubebuilder:rbac:groups=apps,resources=*,verbs=create
// +kubebuilder:rbac:groups=\"\",resources=pods/ephemeralcontainers,verbs=patch
// +kubebuilder:rbac:groups=\"\",resources=pods/ephemeralcontainers,verbs=get
";
        assert_eq!(
            checks(src),
            [
                "1:wildcard-resources",
                "1:exec",
                "1:node-proxy",
                "1:serviceaccount-tokens",
                "2:wildcard-resources",
                "2:webhook-configurations",
                "3:wildcard-resources",
                "4:exec",
            ]
        );
    }

    /// `verbs=*` grants escalate, bind and impersonate where the rule reaches roles or the
    /// identities impersonated, so acknowledging `wildcard-verbs` does not hide `escalation`.
    #[test]
    fn a_wildcard_verb_escalates_where_it_reaches_roles_or_identities() {
        let src = "\
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=*
// +kubebuilder:rbac:groups=\"\",resources=users;groups;serviceaccounts,verbs=*
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=*
";
        assert_eq!(
            checks(src),
            [
                "1:wildcard-verbs",
                "1:escalation",
                "2:wildcard-verbs",
                "2:escalation",
                "3:wildcard-verbs",
            ]
        );
    }

    /// Only in the rule's groups, as the authorizer matches the group first: `pods/exec`
    /// under `groups=apps`, or `*/*` under admissionregistration.k8s.io, grants no exec.
    /// Before, both warned (and `--strict` refused them). The CSR approval subresource is
    /// found however it is written (`certificatesigningrequests/*`, `*/approval`); before,
    /// only its exact name warned.
    #[test]
    fn grants_match_the_rules_groups_and_wildcards() {
        let src = "\
// +kubebuilder:rbac:groups=apps,resources=pods/exec;nodes/proxy,verbs=get;create
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=*/*,verbs=get
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/*,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=*/approval,verbs=patch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=get
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=*,verbs=approve
// +kubebuilder:rbac:groups=apps,resources=certificatesigningrequests/approval,verbs=update
";
        assert_eq!(
            checks(src),
            [
                "3:csr-approval",
                "4:csr-approval",
                "6:wildcard-resources",
                "6:csr-approval",
            ]
        );
    }

    /// A wildcard in the resource or subresource part grants the subresources it matches, as
    /// the API server matches it: `pods/*` grants pods/exec, `nodes/*` nodes/proxy.
    #[test]
    fn wildcard_subresources_grant_exec_and_node_proxy() {
        let src = "\
// +kubebuilder:rbac:groups=\"\",resources=pods/*,verbs=create
// +kubebuilder:rbac:groups=\"\",resources=nodes/*,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=*/*,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=*/attach,verbs=create
// +kubebuilder:rbac:groups=\"\",resources=pods/status;nodes/status,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=serviceaccounts/token,verbs=create
// +kubebuilder:rbac:groups=\"\",resources=serviceaccounts/token,verbs=get
";
        assert_eq!(
            checks(src),
            [
                "1:exec",
                "2:node-proxy",
                "3:exec",
                "3:node-proxy",
                "4:exec",
                "6:serviceaccount-tokens",
            ]
        );
    }

    #[test]
    fn webhooks_that_fail_open_match_everything_or_leave_the_cluster_are_warnings() {
        let src = "\
// +kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create,versions=v1,name=v.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=Ignore,sideEffects=None,groups=*,resources=*,verbs=create,versions=v1,name=m.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:url=https://example.com/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.example.com,resources=aijobs,verbs=create,versions=v1,name=u.kb.io,admissionReviewVersions=v1
";
        assert_eq!(
            checks(src),
            [
                "2:failure-policy-ignore",
                "2:webhook-all-resources",
                "2:webhook-all-groups",
                "3:webhook-url",
            ]
        );
    }

    /// `patch=` is applied before the checks: a patch that makes the webhook fail open, match
    /// everything or call a URL warns at the marker, as the same arguments would; a patch that
    /// narrows the webhook (failurePolicy back to Fail, a namespaceSelector) removes the warning.
    #[test]
    fn the_checks_see_the_webhook_after_its_patch() {
        let w = |args: &str| {
            format!(
                "// +kubebuilder:webhook:path=/v,mutating=false,sideEffects=None,versions=v1,name=v.kb.io,admissionReviewVersions=v1,failurePolicy=fail,groups=ai.example.com,resources=aijobs,verbs=create,{args}\n"
            )
        };
        let src = [
            w("patch=`{\"failurePolicy\":\"Ignore\",\"clientConfig\":{\"url\":\"https://evil.example/x\",\"service\":null},\"rules\":[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"operations\":[\"*\"],\"apiVersions\":[\"*\"]}]}`"),
            w("patch=`{\"timeoutSeconds\":5}`"),
            w("patch=`{\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"operations\":[\"CREATE\"],\"apiVersions\":[\"v1\"]}]}`"),
            w("patch=`{\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"operations\":[\"CREATE\"],\"apiVersions\":[\"v1\"]}],\"namespaceSelector\":{\"matchLabels\":{\"a\":\"b\"}}}`"),
            w("url=https://x.example/v,patch=`{\"clientConfig\":null}`").replace("path=/v,", ""),
            "// +rsbuilder:allow=failure-policy-ignore\n".to_string(),
            w("patch=`{\"failurePolicy\":\"Ignore\"}`"),
        ]
        .concat();
        assert_eq!(
            checks(&src),
            [
                "1:failure-policy-ignore",
                "1:webhook-all-resources",
                "1:webhook-all-groups",
                "1:webhook-url",
                "3:webhook-own-namespace",
            ]
        );
        let (markers, _) = collect_text(Path::new("src/controller.rs"), &src);
        let first = warnings(&markers)[0].to_string();
        assert!(first.starts_with("src/controller.rs:1:"), "{first}");
    }

    /// Each warning of `src` as `line:argument:check`, the argument found from the column.
    fn pointed(src: &str) -> Vec<String> {
        let (markers, errors) = collect_text(Path::new("src/controller.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        warnings(&markers)
            .iter()
            .map(|d| {
                let line = src.lines().nth(d.line - 1).unwrap();
                let arg = line[d.column - 1..].split('=').next().unwrap();
                let m = d.to_string();
                let check = m.rsplit_once('[').unwrap().1.split_once(']').unwrap().0;
                format!("{}:{arg}:{check}", d.line)
            })
            .collect()
    }

    /// A warning points at `patch` when the patch changed what the check reads (also through a
    /// nested merge: a new `clientConfig.url`), and at the argument when the patch left it as
    /// the arguments made it (a patch of other fields, or one that repeats the value).
    #[test]
    fn a_warning_points_at_patch_only_when_the_patch_changed_what_it_reads() {
        let w = |args: &str| {
            format!(
                "// +kubebuilder:webhook:mutating=false,sideEffects=None,versions=v1,name=v.kb.io,admissionReviewVersions=v1,resources=aijobs,verbs=create,{args}\n"
            )
        };
        let src = [
            w("path=/v,failurePolicy=Ignore,groups=*,patch=`{\"timeoutSeconds\":5}`"),
            w("path=/v,failurePolicy=fail,groups=ai.example.com,patch=`{\"failurePolicy\":\"Ignore\"}`"),
            w("url=https://a.example/v,failurePolicy=fail,groups=ai.example.com,patch=`{\"clientConfig\":{\"url\":\"https://b.example/v\"}}`"),
            w("url=https://a.example/v,failurePolicy=Ignore,groups=ai.example.com,patch=`{\"failurePolicy\":\"Ignore\",\"clientConfig\":{\"url\":\"https://a.example/v\"}}`"),
        ]
        .concat();
        assert_eq!(
            pointed(&src),
            [
                "1:failurePolicy:failure-policy-ignore",
                "1:groups:webhook-all-groups",
                "2:patch:failure-policy-ignore",
                "3:patch:webhook-url",
                "4:failurePolicy:failure-policy-ignore",
                "4:url:webhook-url",
            ]
        );
    }

    /// The rules of a webhook are matched one by one, as the API server matches them. A patch
    /// with two rules, `apps` pods on create and core configmaps on delete, matches nothing a
    /// rollout writes: there are no pods in `apps`, and configmaps are only deleted. Read as
    /// one list of groups, resources and operations (as the checks once read the patch), the
    /// rules matched core pods and configmaps on create and warned.
    #[test]
    fn each_rule_of_a_patch_is_matched_on_its_own() {
        let rule = |group: &str, resource: &str, op: &str| {
            format!(
                "{{\"apiGroups\":[\"{group}\"],\"resources\":[\"{resource}\"],\"operations\":[\"{op}\"],\"apiVersions\":[\"v1\"]}}"
            )
        };
        let w = |rules: &[String]| {
            format!(
                "// +kubebuilder:webhook:path=/v,mutating=false,sideEffects=None,versions=v1,name=v.kb.io,admissionReviewVersions=v1,failurePolicy=fail,groups=ai.example.com,resources=aijobs,verbs=create,patch=`{{\"rules\":[{}]}}`\n",
                rules.join(",")
            )
        };
        let src = [
            w(&[
                rule("apps", "pods", "CREATE"),
                rule("", "configmaps", "DELETE"),
            ]),
            w(&[
                rule("apps", "pods", "DELETE"),
                rule("", "configmaps", "UPDATE"),
            ]),
        ]
        .concat();
        assert_eq!(pointed(&src), ["2:patch:webhook-own-namespace"]);
        let (markers, _) = collect_text(Path::new("src/controller.rs"), &src);
        let warning = warnings(&markers)[0].to_string();
        assert!(
            warning.contains("the webhook fails closed on configmaps in every namespace"),
            "{warning}"
        );
    }

    /// A marker whose webhook cannot be built (here a patch that is not JSON) gets no
    /// warning: it writes no manifest, and `webhook.rs` reports its error.
    #[test]
    fn a_webhook_that_cannot_be_built_is_left_to_its_errors() {
        let src = "// +kubebuilder:webhook:path=/v,mutating=false,sideEffects=None,versions=v1,name=v.kb.io,admissionReviewVersions=v1,failurePolicy=Ignore,groups=*,resources=*,verbs=create,patch=`{nope`\n";
        assert_eq!(checks(src), Vec::<String>::new());
    }

    #[test]
    fn a_fail_closed_webhook_on_what_the_managers_rollout_writes_is_a_warning() {
        let src = "\
// +kubebuilder:webhook:path=/p,mutating=true,failurePolicy=fail,sideEffects=None,groups=\"\",resources=pods,verbs=create;update,versions=v1,name=p.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/d,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments;statefulsets,verbs=create,versions=v1,name=d.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/i,mutating=true,failurePolicy=ignore,sideEffects=None,groups=\"\",resources=pods,verbs=create,versions=v1,name=i.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/x,mutating=false,failurePolicy=fail,sideEffects=None,groups=\"\",resources=pods,verbs=delete,versions=v1,name=x.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/s,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=statefulsets,verbs=create,versions=v1,name=s.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/e,mutating=false,failurePolicy=fail,sideEffects=None,groups=\"\",resources=pods/ephemeralcontainers,verbs=update,versions=v1,name=e.kb.io,admissionReviewVersions=v1
";
        // Pods on create: yes; Deployments: yes (StatefulSets are not the manager's); a webhook
        // that fails open, or only on delete, or on other kinds: no; a Pod subresource: yes.
        assert_eq!(
            checks(src),
            [
                "1:webhook-own-namespace",
                "2:webhook-own-namespace",
                "3:failure-policy-ignore",
                "6:webhook-own-namespace",
            ]
        );
        let (markers, _) = collect_text(Path::new("src/webhook.rs"), src);
        let first = warnings(&markers).remove(0).to_string();
        assert!(
            first.contains(
                "the webhook fails closed on pods in every namespace, the manager's own included"
            ),
            "{first}"
        );
    }

    #[test]
    fn an_allow_marker_acknowledges_its_checks_for_the_next_marker_only() {
        let src = "\
// +rsbuilder:allow=secrets
// The operator copies the database password into the StatefulSet's Secret.
// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=\"\",namespace=other,resources=secrets,verbs=get
// +rsbuilder:allow=wildcard-verbs
// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=*
";
        assert_eq!(checks(src), ["4:secrets", "6:secrets"]);
        let (markers, _) = collect_text(Path::new("src/c.rs"), src);
        assert!(unknown_checks(&markers).is_empty());
        let (markers, errors) = collect_text(Path::new("src/c.rs"), "// +rsbuilder:allow=secret\n");
        assert!(errors.is_empty(), "{errors:?}");
        let unknown = unknown_checks(&markers);
        assert_eq!(unknown.len(), 1);
        assert!(
            unknown[0].to_string().contains("unknown check `secret`"),
            "{}",
            unknown[0]
        );
    }

    #[test]
    fn other_rsbuilder_comments_are_not_markers() {
        let (markers, errors) =
            collect_text(Path::new("src/c.rs"), "// +rsbuilder:note this is prose\n");
        assert!(
            markers.is_empty() && errors.is_empty(),
            "{markers:?} {errors:?}"
        );
    }
}
