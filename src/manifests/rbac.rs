//! `config/rbac/role.yaml` from `+kubebuilder:rbac` markers.
//!
//! Mirrors controller-tools `pkg/rbac/parser.go` (`GenerateRoles`):
//! 1. markers are grouped by (namespace, roleName) — no namespace means the ClusterRole;
//! 2. each marker becomes one rule per resource (a marker without resources, one rule);
//! 3. `core` in groups becomes `""`;
//! 4. rules with equal groups, resources, resourceNames and URLs are merged by uniting their
//!    verbs; then rules that differ only in resources are merged, then rules that differ
//!    only in groups, then rules that differ only in URLs (every list de-duplicated and
//!    sorted);
//! 5. rules are sorted by their `groups + resources + resourceNames + urls` key, and a rule
//!    whose verbs contain `*` keeps only `*`;
//! 6. the ClusterRole comes first, then Roles by namespace, then by name; every object is
//!    written as its own `---` document.
//!
//! rsbuilder additions: with `namespaced` (PROJECT `namespaced: true`) rules without a
//! namespace go to a Role (no namespace: kustomize sets it) instead of the ClusterRole, and
//! rules the API server would reject are errors at the marker's file:line (resources without
//! groups, non-resource URLs together with resources or in a Role, neither resources nor URLs).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::diag::Diagnostic;
use super::markers::Marker;
use super::markers::typed::RbacRule;
use super::yaml::push_document;

/// Name of the role that receives rules without `roleName`, as in Kubebuilder projects
/// (`controller-gen rbac:roleName=manager-role`).
pub const DEFAULT_ROLE_NAME: &str = "manager-role";

/// Name of the rbac marker.
pub use super::markers::typed::RBAC_MARKER as MARKER;

/// One rule while merging. Lists are kept de-duplicated and sorted (BTreeSet).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    groups: BTreeSet<String>,
    resources: BTreeSet<String>,
    resource_names: BTreeSet<String>,
    urls: BTreeSet<String>,
    verbs: BTreeSet<String>,
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().map(String::as_str).collect::<Vec<_>>().join("&")
}

impl Rule {
    /// controller-gen's `ruleKey` rendered as its `String()`: what rules are sorted by.
    fn sort_key(&self) -> String {
        format!(
            "{} + {} + {} + {}",
            join(&self.groups),
            join(&self.resources),
            join(&self.resource_names),
            join(&self.urls)
        )
    }

    fn into_policy_rule(self) -> PolicyRule {
        fn opt(set: BTreeSet<String>) -> Option<Vec<String>> {
            (!set.is_empty()).then(|| set.into_iter().collect())
        }
        let verbs = if self.verbs.contains("*") {
            vec!["*".to_string()]
        } else {
            self.verbs.into_iter().collect()
        };
        PolicyRule {
            api_groups: opt(self.groups),
            non_resource_urls: opt(self.urls),
            resource_names: opt(self.resource_names),
            resources: opt(self.resources),
            verbs,
        }
    }
}

/// Merges rules whose key (everything but the field `field` picks) is equal, uniting that
/// field. `key` gives the part that must match.
fn merge_by<K: Ord>(
    rules: Vec<Rule>,
    key: impl Fn(&Rule) -> K,
    field: impl Fn(&mut Rule) -> &mut BTreeSet<String>,
) -> Vec<Rule> {
    let mut merged: BTreeMap<K, Rule> = BTreeMap::new();
    for mut rule in rules {
        match merged.entry(key(&rule)) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(rule);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let add = std::mem::take(field(&mut rule));
                field(o.get_mut()).extend(add);
            }
        }
    }
    merged.into_values().collect()
}

/// Normalizes the rules of one role as controller-gen's `NormalizeRules` does.
fn normalize(rules: Vec<Rule>) -> Vec<PolicyRule> {
    // Same groups, resources, resourceNames and URLs: unite verbs.
    let rules = merge_by(
        rules,
        |r| {
            (
                r.groups.clone(),
                r.resources.clone(),
                r.resource_names.clone(),
                r.urls.clone(),
            )
        },
        |r| &mut r.verbs,
    );
    // Differ only in resources.
    let rules = merge_by(
        rules,
        |r| {
            (
                r.groups.clone(),
                r.resource_names.clone(),
                r.urls.clone(),
                r.verbs.clone(),
            )
        },
        |r| &mut r.resources,
    );
    // Differ only in groups.
    let rules = merge_by(
        rules,
        |r| {
            (
                r.resources.clone(),
                r.resource_names.clone(),
                r.urls.clone(),
                r.verbs.clone(),
            )
        },
        |r| &mut r.groups,
    );
    // Differ only in URLs.
    let mut rules = merge_by(
        rules,
        |r| {
            (
                r.groups.clone(),
                r.resources.clone(),
                r.resource_names.clone(),
                r.verbs.clone(),
            )
        },
        |r| &mut r.urls,
    );
    rules.sort_by_cached_key(Rule::sort_key);
    rules.into_iter().map(Rule::into_policy_rule).collect()
}

fn set(list: &[String]) -> BTreeSet<String> {
    list.iter().cloned().collect()
}

/// The `+kubebuilder:rbac` markers among `markers`, typed.
pub fn rbac_rules(markers: &[Marker]) -> impl Iterator<Item = RbacRule<'_>> {
    markers.iter().filter_map(|m| RbacRule::try_from(m).ok())
}

/// Checks one rbac marker for rules the API server rejects.
fn check(r: &RbacRule<'_>, namespaced: bool, errors: &mut Vec<Diagnostic>) {
    let m = r.marker;
    let (groups, resources, urls) = (
        !r.groups.is_empty(),
        !r.resources.is_empty(),
        !r.urls.is_empty(),
    );
    if urls && (resources || groups || !r.resource_names.is_empty()) {
        errors.push(
            m.diag_at(
                "urls",
                "a rule cannot hold both non-resource `urls` and `groups`/`resources`/`resourceNames`",
            )
            .with_help("write two markers: one with groups and resources, one with urls"),
        );
    } else if urls && (r.namespace.is_some() || namespaced) {
        errors.push(
            m.diag_at(
                "urls",
                "non-resource `urls` can only be granted by a ClusterRole",
            )
            .with_help(if namespaced {
                "this project is namespaced (PROJECT `namespaced: true`), so its rules go to Roles"
            } else {
                "drop `namespace` from this marker"
            }),
        );
    } else if !urls && !resources {
        errors.push(
            m.diag("+kubebuilder:rbac needs `resources` (with `groups`) or `urls`")
                .with_help("e.g. groups=apps,resources=deployments,verbs=get;list;watch"),
        );
    } else if resources && !groups {
        errors.push(
            m.diag_at("resources", "`resources` needs `groups`")
                .with_help("write groups=\"\" (or groups=core) for the core API group"),
        );
    }
    if r.verbs.is_some_and(<[String]>::is_empty) {
        errors.push(m.diag_at("verbs", "`verbs` must name at least one verb"));
    }
    if r.namespace == Some("") {
        errors.push(m.diag_at("namespace", "`namespace` is empty"));
    }
    if r.role_name == Some("") {
        errors.push(m.diag_at("roleName", "`roleName` is empty"));
    }
}

/// One generated RBAC object.
#[derive(Debug, Clone, PartialEq)]
pub enum RoleObject {
    /// The cluster-wide role.
    ClusterRole(ClusterRole),
    /// A namespaced role (namespace unset in namespaced projects: kustomize sets it).
    Role(Role),
}

/// Builds the roles from the `+kubebuilder:rbac` markers of `markers` (others are skipped),
/// in output order. Errors: see [`generate`].
pub fn roles(markers: &[Marker], namespaced: bool) -> Result<Vec<RoleObject>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    // (namespace, role name) → rules, one per resource.
    let mut by_role: BTreeMap<(String, String), Vec<Rule>> = BTreeMap::new();
    for r in rbac_rules(markers) {
        check(&r, namespaced, &mut errors);
        let base = Rule {
            groups: set(&r.groups),
            resources: BTreeSet::new(),
            resource_names: set(r.resource_names),
            urls: set(r.urls),
            verbs: set(r.verbs.unwrap_or_default()),
        };
        let key = (
            r.namespace.unwrap_or_default().to_string(),
            r.role_name.unwrap_or(DEFAULT_ROLE_NAME).to_string(),
        );
        let rules = by_role.entry(key).or_default();
        let resources = r.resources;
        if resources.is_empty() {
            rules.push(base);
        } else {
            for r in resources {
                let mut rule = base.clone();
                rule.resources.insert(r.clone());
                rules.push(rule);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut out = Vec::new();
    for ((namespace, name), rules) in by_role {
        let rules = normalize(rules);
        if rules.is_empty() {
            continue;
        }
        if namespace.is_empty() && !namespaced {
            out.push(RoleObject::ClusterRole(ClusterRole {
                metadata: ObjectMeta {
                    name: Some(name),
                    ..Default::default()
                },
                rules: Some(rules),
                ..Default::default()
            }));
        } else {
            out.push(RoleObject::Role(Role {
                metadata: ObjectMeta {
                    name: Some(name),
                    namespace: (!namespace.is_empty()).then_some(namespace),
                    ..Default::default()
                },
                rules: Some(rules),
            }));
        }
    }
    Ok(out)
}

/// `config/rbac/role.yaml` for the `+kubebuilder:rbac` markers among `markers`, or `None` when
/// there are none. `namespaced` (PROJECT `namespaced: true`) turns the ClusterRole into a Role.
///
/// The text matches controller-gen's `role.yaml` byte layout: every object starts with
/// `---`, keys in API order (which is alphabetical within a rule), lists not indented under
/// their key.
///
/// Errors (all markers are checked, every error is returned), each at the marker's
/// file:line: a rule with non-resource URLs and resources, URLs in a Role, a rule with neither
/// resources nor URLs, resources without groups, no verbs (`verbs={}`), an empty namespace or
/// roleName.
pub fn generate(markers: &[Marker], namespaced: bool) -> Result<Option<String>, Vec<Diagnostic>> {
    let objects = roles(markers, namespaced)?;
    if objects.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    for obj in &objects {
        match obj {
            RoleObject::ClusterRole(r) => push_document(&mut out, r, "role.yaml")?,
            RoleObject::Role(r) => push_document(&mut out, r, "role.yaml")?,
        }
    }
    Ok(Some(out))
}

/// The verbs Kubernetes' authorizers know: the API request verbs (`get` … `deletecollection`),
/// the special verbs some resources check (`use`, `bind`, `escalate`, `impersonate`,
/// `approve`, `sign`, `attest`), and the lower-case HTTP methods of non-resource URLs.
pub const KNOWN_VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "use",
    "bind",
    "escalate",
    "impersonate",
    "approve",
    "sign",
    "attest",
    "post",
    "put",
    "head",
    "options",
];

/// Warnings (not errors) for the `+kubebuilder:rbac` markers of `markers`: each verb that is
/// neither `*` nor one of [`KNOWN_VERBS`], at the marker's `verbs`, with the closest known
/// verb when one is a near miss (`gt` → `get`). The API server accepts any verb, and an
/// aggregated API server may check verbs of its own, so these stay warnings; but a misspelt
/// verb grants nothing, which the manager only finds out when a request is forbidden.
/// controller-gen does not check verbs.
pub fn verb_warnings(markers: &[Marker]) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for r in rbac_rules(markers) {
        let m = r.marker;
        for verb in r.verbs.unwrap_or_default() {
            if verb == "*" || KNOWN_VERBS.contains(&verb.as_str()) {
                continue;
            }
            let lower = verb.to_ascii_lowercase();
            let near = KNOWN_VERBS
                .iter()
                .map(|known| (strsim::osa_distance(&lower, known), *known))
                .filter(|(distance, known)| *distance <= (known.len() / 4).max(1))
                .min();
            let help = match near {
                Some((_, known)) => format!("did you mean `{known}`?"),
                None => format!(
                    "Kubernetes' verbs are {}; keep it only if an aggregated API server checks this verb",
                    KNOWN_VERBS.join(", ")
                ),
            };
            warnings.push(
                m.diag_at("verbs", format!("unknown verb `{verb}`: it grants nothing"))
                    .with_help(help),
            );
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::markers::collect_text;
    use std::path::Path;

    fn markers(src: &str) -> Vec<Marker> {
        let (markers, errors) = collect_text(Path::new("src/controller.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        markers
    }

    fn yaml(src: &str) -> String {
        generate(&markers(src), false).unwrap().unwrap()
    }

    fn rules(src: &str) -> Vec<PolicyRule> {
        match roles(&markers(src), false).unwrap().as_slice() {
            [RoleObject::ClusterRole(r)] => r.rules.clone().unwrap(),
            other => panic!("expected one ClusterRole, got {other:?}"),
        }
    }

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        PolicyRule {
            api_groups: (!groups.is_empty()).then(|| v(groups)),
            resources: (!resources.is_empty()).then(|| v(resources)),
            verbs: v(verbs),
            ..Default::default()
        }
    }

    fn errors(src: &str, namespaced: bool) -> Vec<String> {
        generate(&markers(src), namespaced)
            .unwrap_err()
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    #[test]
    fn unknown_verbs_are_warned_about_with_the_near_miss() {
        let src = "\
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=gt;list;WATCH;*
// +kubebuilder:rbac:urls=/metrics,verbs=get;post
// +kubebuilder:rbac:groups=example.com,resources=widgets,verbs=frobnicate
fn f() {}
";
        let (markers, errors) = collect_text(Path::new("src/c.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        let warnings: Vec<String> = verb_warnings(&markers)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            warnings,
            [
                "src/c.rs:1:56: unknown verb `gt`: it grants nothing\n  help: did you mean `get`?",
                "src/c.rs:1:56: unknown verb `WATCH`: it grants nothing\n  help: did you mean `watch`?",
                "src/c.rs:3:59: unknown verb `frobnicate`: it grants nothing\n  help: Kubernetes' verbs are get, list, watch, create, update, patch, delete, deletecollection, use, bind, escalate, impersonate, approve, sign, attest, post, put, head, options; keep it only if an aggregated API server checks this verb",
            ]
        );
        // Warnings only: the role is still generated, with the verbs as written.
        let role = generate(&markers, false).unwrap().unwrap();
        assert!(role.contains("  - frobnicate\n"), "{role}");
    }

    /// Case A: the AIJob controller's markers, written the way Kubebuilder's controller
    /// template writes them, plus the events rule kube-runtime's Recorder needs.
    #[test]
    fn case_a_role_is_merged_and_sorted_like_controller_gen() {
        let src = "\
// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
pub async fn reconcile() {}
";
        let expected = "\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs/finalizers
  verbs:
  - update
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs/status
  verbs:
  - get
  - patch
  - update
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
";
        assert_eq!(yaml(src), expected);
    }

    #[test]
    fn no_rbac_markers_means_no_file() {
        let src = "// +kubebuilder:scaffold:imports\nfn main() {}\n";
        assert_eq!(generate(&markers(src), false).unwrap(), None);
    }

    #[test]
    fn core_group_is_the_empty_group_and_merges_with_it() {
        let src = "\
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=list
";
        assert_eq!(rules(src), vec![rule(&[""], &["pods"], &["get", "list"])]);
        assert!(
            yaml(src).contains("- apiGroups:\n  - \"\"\n"),
            "{}",
            yaml(src)
        );
    }

    #[test]
    fn lists_are_deduplicated_and_sorted() {
        let src = "// +kubebuilder:rbac:groups=apps;apps,resources=deployments,verbs=watch;get;get;list\n";
        assert_eq!(
            rules(src),
            vec![rule(&["apps"], &["deployments"], &["get", "list", "watch"])]
        );
    }

    #[test]
    fn verbs_for_the_same_resource_are_united_across_markers() {
        let src = "\
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=watch
";
        assert_eq!(
            rules(src),
            vec![
                rule(&["apps"], &["deployments"], &["get", "watch"]),
                rule(&["apps"], &["statefulsets"], &["watch"]),
            ]
        );
    }

    #[test]
    fn rules_that_differ_only_in_resources_merge() {
        let src = "\
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;get
";
        assert_eq!(
            rules(src),
            vec![rule(
                &["apps"],
                &["deployments", "statefulsets"],
                &["get", "list"]
            )]
        );
    }

    #[test]
    fn rules_that_differ_only_in_groups_merge() {
        let src = "\
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get
// +kubebuilder:rbac:groups=example.com,resources=jobs,verbs=get
";
        assert_eq!(
            rules(src),
            vec![rule(&["batch", "example.com"], &["jobs"], &["get"])]
        );
    }

    /// Resources are merged per group first, groups afterwards, so two groups with
    /// different resources stay apart (controller-gen's order of merges).
    #[test]
    fn rules_differing_in_two_fields_do_not_merge() {
        let src = "\
// +kubebuilder:rbac:groups=a.example.com,resources=xs,verbs=get
// +kubebuilder:rbac:groups=b.example.com,resources=ys,verbs=get
// +kubebuilder:rbac:groups=c.example.com,resources=zs,verbs=get;list
// +kubebuilder:rbac:groups=c.example.com,resources=ws,verbs=get
";
        assert_eq!(
            rules(src),
            vec![
                rule(&["a.example.com"], &["xs"], &["get"]),
                rule(&["b.example.com"], &["ys"], &["get"]),
                rule(&["c.example.com"], &["ws"], &["get"]),
                rule(&["c.example.com"], &["zs"], &["get", "list"]),
            ]
        );
    }

    #[test]
    fn groups_merge_after_resources_merged_within_each_group() {
        let src = "\
// +kubebuilder:rbac:groups=a.example.com,resources=xs,verbs=get
// +kubebuilder:rbac:groups=a.example.com,resources=ys,verbs=get
// +kubebuilder:rbac:groups=b.example.com,resources=xs;ys,verbs=get
";
        assert_eq!(
            rules(src),
            vec![rule(
                &["a.example.com", "b.example.com"],
                &["xs", "ys"],
                &["get"]
            )]
        );
    }

    #[test]
    fn star_absorbs_the_other_verbs() {
        let src = "\
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=*
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=watch;*
";
        // After merging, deployments has {*, get, list} and replicasets {*, watch}: they
        // do not merge (their verb sets differ before `*` is applied), both print `*`.
        assert_eq!(
            rules(src),
            vec![
                rule(&["apps"], &["deployments"], &["*"]),
                rule(&["apps"], &["replicasets"], &["*"]),
            ]
        );
    }

    #[test]
    fn resource_names_stay_in_their_own_rule() {
        let src = "\
// +kubebuilder:rbac:groups=\"\",resources=configmaps,resourceNames=b;a,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=list
";
        let mut named = rule(&[""], &["configmaps"], &["get"]);
        named.resource_names = Some(vec!["a".into(), "b".into()]);
        // Key order: "" + configmaps + "" sorts before "" + configmaps + a&b.
        assert_eq!(
            rules(src),
            vec![rule(&[""], &["configmaps"], &["list"]), named]
        );
    }

    #[test]
    fn non_resource_urls_with_the_same_verbs_merge() {
        let src = "\
// +kubebuilder:rbac:urls=/metrics,verbs=get
// +kubebuilder:rbac:urls=/healthz;/readyz,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get
";
        let r = rules(src);
        assert_eq!(r.len(), 2);
        // The URL rule has no groups, so its key ("" + "" + ...) sorts first.
        assert_eq!(
            r[0],
            PolicyRule {
                non_resource_urls: Some(vec![
                    "/healthz".into(),
                    "/metrics".into(),
                    "/readyz".into()
                ]),
                verbs: vec!["get".into()],
                ..Default::default()
            }
        );
        assert!(
            yaml(src).contains("- nonResourceURLs:\n  - /healthz\n"),
            "{}",
            yaml(src)
        );
    }

    #[test]
    fn rules_sort_by_group_then_resource() {
        let src = "\
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get
// +kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=create
// +kubebuilder:rbac:groups=core,resources=pods,verbs=delete
";
        let order: Vec<(String, String)> = rules(src)
            .into_iter()
            .map(|r| {
                (
                    r.api_groups.unwrap().join(","),
                    r.resources.unwrap().join(","),
                )
            })
            .collect();
        let expect = [
            ("", "pods"),
            ("apps", "deployments"),
            ("apps", "deployments/status"),
            ("batch", "jobs"),
        ];
        assert_eq!(
            order,
            expect.map(|(g, r)| (g.to_string(), r.to_string())).to_vec()
        );
    }

    #[test]
    fn namespace_markers_make_roles_after_the_cluster_role() {
        let src = "\
// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get,namespace=zeta
// +kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=get,namespace=alpha
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get
// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get,namespace=alpha,roleName=pod-reader
";
        let objs = roles(&markers(src), false).unwrap();
        let ids: Vec<(String, Option<String>, String)> = objs
            .iter()
            .map(|o| match o {
                RoleObject::ClusterRole(r) => {
                    ("ClusterRole".into(), None, r.metadata.name.clone().unwrap())
                }
                RoleObject::Role(r) => (
                    "Role".into(),
                    r.metadata.namespace.clone(),
                    r.metadata.name.clone().unwrap(),
                ),
            })
            .collect();
        assert_eq!(
            ids,
            vec![
                ("ClusterRole".into(), None, "manager-role".into()),
                ("Role".into(), Some("alpha".into()), "manager-role".into()),
                ("Role".into(), Some("alpha".into()), "pod-reader".into()),
                ("Role".into(), Some("zeta".into()), "manager-role".into()),
            ]
        );
        let text = yaml(src);
        assert_eq!(text.matches("---\n").count(), 4);
        assert!(
            text.contains("kind: Role\nmetadata:\n  name: manager-role\n  namespace: alpha\n"),
            "{text}"
        );
    }

    #[test]
    fn namespaced_project_gets_a_role_without_namespace() {
        let src = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
        let text = generate(&markers(src), true).unwrap().unwrap();
        assert_eq!(
            text,
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: manager-role\nrules:\n- apiGroups:\n  - apps\n  resources:\n  - deployments\n  verbs:\n  - get\n"
        );
    }

    #[test]
    fn urls_cannot_be_mixed_with_resources() {
        let e = errors(
            "// +kubebuilder:rbac:groups=apps,resources=deployments,urls=/metrics,verbs=get\n",
            false,
        );
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("src/controller.rs:1:"), "{e:?}");
        assert!(e[0].contains("both non-resource `urls` and"), "{e:?}");
    }

    #[test]
    fn urls_are_rejected_in_roles() {
        let e = errors(
            "// +kubebuilder:rbac:urls=/metrics,verbs=get,namespace=x\n",
            false,
        );
        assert!(e[0].contains("only be granted by a ClusterRole"), "{e:?}");
        let e = errors("// +kubebuilder:rbac:urls=/metrics,verbs=get\n", true);
        assert!(e[0].contains("namespaced"), "{e:?}");
    }

    #[test]
    fn a_rule_needs_resources_or_urls_and_resources_need_groups() {
        let e = errors("// +kubebuilder:rbac:groups=apps,verbs=get\n", false);
        assert!(
            e[0].contains("needs `resources` (with `groups`) or `urls`"),
            "{e:?}"
        );
        let e = errors(
            "// +kubebuilder:rbac:groups=apps,resources=pods,verbs={}\n",
            false,
        );
        assert!(
            e[0].contains("`verbs` must name at least one verb"),
            "{e:?}"
        );
        let e = errors("\n// +kubebuilder:rbac:resources=pods,verbs=get\n", false);
        assert!(e[0].starts_with("src/controller.rs:2:"), "{e:?}");
        assert!(e[0].contains("`resources` needs `groups`"), "{e:?}");
        assert!(e[0].contains("groups=\"\""), "{e:?}");
    }
}
