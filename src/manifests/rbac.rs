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

/// Name of the role that receives rules without `roleName`, as in Kubebuilder projects
/// (`controller-gen rbac:roleName=manager-role`).
pub const DEFAULT_ROLE_NAME: &str = "manager-role";

/// Name of the rbac marker.
pub const MARKER: &str = "kubebuilder:rbac";

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

fn set(list: Option<&[String]>) -> BTreeSet<String> {
    list.unwrap_or_default().iter().cloned().collect()
}

/// Checks one rbac marker for rules the API server rejects.
fn check(m: &Marker, namespaced: bool, errors: &mut Vec<Diagnostic>) {
    let has = |name: &str| m.list(name).is_some_and(|l| !l.is_empty());
    let (groups, resources, urls) = (has("groups"), has("resources"), has("urls"));
    if urls && (resources || groups || has("resourceNames")) {
        errors.push(
            m.diag_at(
                "urls",
                "a rule cannot hold both non-resource `urls` and `groups`/`resources`/`resourceNames`",
            )
            .with_help("write two markers: one with groups and resources, one with urls"),
        );
    } else if urls && (m.string("namespace").is_some() || namespaced) {
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
    if let Some(ns) = m.string("namespace") {
        if ns.is_empty() {
            errors.push(m.diag_at("namespace", "`namespace` is empty"));
        }
    }
    if let Some(name) = m.string("roleName") {
        if name.is_empty() {
            errors.push(m.diag_at("roleName", "`roleName` is empty"));
        }
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
    for m in markers.iter().filter(|m| m.name() == MARKER) {
        check(m, namespaced, &mut errors);
        let groups: BTreeSet<String> = m
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
        let base = Rule {
            groups,
            resources: BTreeSet::new(),
            resource_names: set(m.list("resourceNames")),
            urls: set(m.list("urls")),
            verbs: set(m.list("verbs")),
        };
        let key = (
            m.string("namespace").unwrap_or_default().to_string(),
            m.string("roleName")
                .unwrap_or(DEFAULT_ROLE_NAME)
                .to_string(),
        );
        let rules = by_role.entry(key).or_default();
        let resources = m.list("resources").unwrap_or_default();
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
/// resources nor URLs, resources without groups, an empty namespace or roleName.
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

/// Appends `value` as one YAML document introduced by `---`, as controller-gen writes every
/// object of a manifest file. `target` names the file in the (practically impossible)
/// serialization error.
pub(crate) fn push_document<T: serde::Serialize>(
    out: &mut String,
    value: &T,
    target: &str,
) -> Result<(), Vec<Diagnostic>> {
    let yaml = super::generate::to_yaml(value).map_err(|e| {
        vec![Diagnostic::new(
            std::path::Path::new(target),
            1,
            1,
            format!("cannot serialize to YAML: {e}"),
        )]
    })?;
    out.push_str("---\n");
    out.push_str(&yaml);
    if !yaml.ends_with('\n') {
        out.push('\n');
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::markers::collect_text;
    use std::path::Path;

    fn gen_from(src: &str, namespaced: bool) -> Result<Option<String>, Vec<Diagnostic>> {
        let (markers, errors) = collect_text(Path::new("src/lib.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        generate(&markers, namespaced)
    }

    #[test]
    fn dbg_case_a() {
        let src = "// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete\n// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/status,verbs=get;update;patch\n// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/finalizers,verbs=update\n// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch\n// +kubebuilder:rbac:urls=/metrics,verbs=get\n";
        println!("{}", gen_from(src, false).unwrap().unwrap());
    }
}
