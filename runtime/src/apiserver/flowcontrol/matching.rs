// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Which flow schema a request matches and which flow it is in, as k8s.io/apiserver's
//! `util/flowcontrol/rule.go` matches: a rule matches when one of its subjects is the user
//! and one of its resource rules (for a resource request) or non-resource rules (for any
//! other path) covers the request; `*` matches anything in verbs, groups, resources,
//! namespaces, subject names; a non-resource URL ending in `*` matches by prefix.

use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::flowcontrol::v1::{NonResourcePolicyRule, ResourcePolicyRule};

use super::config::{Distinguisher, Rules, Schema, SubjectMatch};
use crate::apiserver::request::Attributes;

/// The request as flow control sees it.
#[derive(Debug, Clone)]
pub struct RequestDigest {
    /// The user name (`system:anonymous` when nobody authenticated).
    pub user: String,
    /// The user's groups (`system:authenticated` or `system:unauthenticated` among them).
    pub groups: Vec<String>,
    /// What the request does ([`crate::apiserver::request::attributes`]).
    pub attributes: Attributes,
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

fn subject_matches(s: &SubjectMatch, d: &RequestDigest) -> bool {
    match s {
        SubjectMatch::User(name) => name == "*" || *name == d.user,
        SubjectMatch::Group(name) => name == "*" || d.groups.iter().any(|g| g == name),
        SubjectMatch::ServiceAccount { namespace, name } => d
            .user
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(ns, n)| ns == namespace && (name == "*" || name == n)),
    }
}

fn resource_rule_matches(r: &ResourcePolicyRule, a: &ResourceAttributes) -> bool {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let resource = match a.subresource.as_deref().filter(|s| !s.is_empty()) {
        Some(sub) => format!("{}/{sub}", text(&a.resource)),
        None => text(&a.resource),
    };
    if !(has(&r.verbs, &text(&a.verb))
        && has(&r.resources, &resource)
        && has(&r.api_groups, &text(&a.group)))
    {
        return false;
    }
    match a.namespace.as_deref().filter(|n| !n.is_empty()) {
        None => r.cluster_scope == Some(true),
        Some(ns) => r.namespaces.as_deref().is_some_and(|list| has(list, ns)),
    }
}

fn non_resource_rule_matches(r: &NonResourcePolicyRule, verb: &str, path: &str) -> bool {
    has(&r.verbs, verb)
        && r.non_resource_urls.iter().any(|u| {
            u == "*"
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix))
        })
}

/// Whether `rules` covers the request.
pub fn rules_match(rules: &Rules, d: &RequestDigest) -> bool {
    if !rules.subjects.iter().any(|s| subject_matches(s, d)) {
        return false;
    }
    match &d.attributes {
        Attributes::Resource(a) => rules
            .resource_rules
            .iter()
            .any(|r| resource_rule_matches(r, a)),
        Attributes::NonResource(n) => {
            let (verb, path) = (
                n.verb.clone().unwrap_or_default(),
                n.path.clone().unwrap_or_default(),
            );
            rules
                .non_resource_rules
                .iter()
                .any(|r| non_resource_rule_matches(r, &verb, &path))
        }
    }
}

/// Whether the schema takes the request (any of its rules).
pub fn schema_matches(schema: &Schema, d: &RequestDigest) -> bool {
    schema.rules.iter().any(|r| rules_match(r, d))
}

/// The request's flow within `schema`: the user name (`ByUser`), the namespace
/// (`ByNamespace`, empty when there is none), or empty (no distinguisher).
pub fn flow_distinguisher(schema: &Schema, d: &RequestDigest) -> String {
    match schema.distinguisher {
        None => String::new(),
        Some(Distinguisher::ByUser) => d.user.clone(),
        Some(Distinguisher::ByNamespace) => match &d.attributes {
            Attributes::Resource(a) => a.namespace.clone().unwrap_or_default(),
            Attributes::NonResource(_) => String::new(),
        },
    }
}

/// The flow's hash, from the schema's name and the distinguisher, as kube's `hashFlowID`
/// hashes them (with FNV-1a where kube takes SHA-256: only the spread matters).
pub fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    super::fnv1a(&[schema.as_bytes(), &[0], distinguisher.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::flowcontrol::config::Configuration;
    use crate::apiserver::request::attributes;
    use axum::http::Method;

    fn digest(
        user: &str,
        groups: &[&str],
        method: Method,
        path: &str,
        q: Option<&str>,
    ) -> RequestDigest {
        RequestDigest {
            user: user.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            attributes: attributes(&method, path, q),
        }
    }

    fn first_match(d: &RequestDigest) -> String {
        let c = Configuration::bootstrap();
        c.schemas()
            .iter()
            .find(|s| schema_matches(s, d))
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    #[test]
    fn the_bootstrap_schemas_classify_as_kubes_do() {
        let auth = ["system:authenticated"];
        let cases = [
            (
                digest(
                    "admin",
                    &["system:masters", "system:authenticated"],
                    Method::DELETE,
                    "/apis/example.com/v1/namespaces/a/dbs",
                    None,
                ),
                "exempt",
            ),
            (
                digest(
                    "system:anonymous",
                    &["system:unauthenticated"],
                    Method::GET,
                    "/readyz",
                    None,
                ),
                "probes",
            ),
            (
                digest("alice", &auth, Method::GET, "/livez", None),
                "probes",
            ),
            (
                digest("alice", &auth, Method::POST, "/livez", None),
                "global-default",
            ),
            (
                digest(
                    "system:serviceaccount:kube-system:x",
                    &["system:serviceaccounts", "system:authenticated"],
                    Method::PUT,
                    "/apis/coordination.k8s.io/v1/namespaces/a/leases/l",
                    None,
                ),
                "system-leader-election",
            ),
            (
                digest(
                    "system:serviceaccount:kube-system:gc",
                    &["system:serviceaccounts", "system:authenticated"],
                    Method::GET,
                    "/apis/example.com/v1/dbs",
                    Some("watch=true"),
                ),
                "kube-system-service-accounts",
            ),
            (
                digest(
                    "system:kube-controller-manager",
                    &auth,
                    Method::GET,
                    "/apis/example.com/v1/dbs",
                    None,
                ),
                "kube-controller-manager",
            ),
            (
                digest(
                    "system:serviceaccount:apps:op",
                    &["system:serviceaccounts", "system:authenticated"],
                    Method::PATCH,
                    "/apis/example.com/v1/namespaces/a/dbs/d/status",
                    None,
                ),
                "service-accounts",
            ),
            (
                digest("alice", &auth, Method::GET, "/metrics", None),
                "global-default",
            ),
            (digest("bob", &[], Method::GET, "/version", None), ""),
        ];
        for (d, expected) in cases {
            assert_eq!(first_match(&d), expected, "{d:?}");
        }
    }

    #[test]
    fn distinguishers_and_hashes_are_per_user_or_namespace() {
        let c = Configuration::bootstrap();
        let by_user = c
            .schemas()
            .iter()
            .find(|s| s.name == "global-default")
            .unwrap();
        let by_ns = c
            .schemas()
            .iter()
            .find(|s| s.name == "kube-system-service-accounts")
            .unwrap();
        let d = digest(
            "alice",
            &[],
            Method::GET,
            "/apis/example.com/v1/namespaces/n1/dbs",
            None,
        );
        assert_eq!(flow_distinguisher(by_user, &d), "alice");
        assert_eq!(flow_distinguisher(by_ns, &d), "n1");
        let d = digest("alice", &[], Method::GET, "/apis/example.com/v1/dbs", None);
        assert_eq!(flow_distinguisher(by_ns, &d), "");
        assert_eq!(flow_hash("s", "alice"), flow_hash("s", "alice"));
        assert_ne!(flow_hash("s", "alice"), flow_hash("s", "bob"));
        assert_ne!(flow_hash("sa", "lice"), flow_hash("s", "alice"));
    }
}
