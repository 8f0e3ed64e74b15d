// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The discovery documents: `APIGroupList`, `APIGroup` and `APIResourceList` (the legacy
//! documents), and the `APIGroupDiscoveryList` of aggregated discovery v2, as
//! k8s.io/apiserver's `endpoints/discovery` serves them.

use serde_json::{Value, json};

use super::super::kind::ApiKind;

/// The versions of `group` in the order the kinds list them (`""`: the core group).
fn versions_of<'a>(kinds: &'a [ApiKind], group: &str) -> Vec<&'a str> {
    let mut vs: Vec<&str> = Vec::new();
    for k in kinds.iter().filter(|k| k.group == group) {
        if !vs.contains(&k.version.as_str()) {
            vs.push(&k.version);
        }
    }
    vs
}

fn group_doc(kinds: &[ApiKind], group: &str) -> Value {
    let versions: Vec<Value> = versions_of(kinds, group)
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`: every group but the core group, which `/api` lists.
pub fn group_list(kinds: &[ApiKind]) -> Value {
    let mut groups: Vec<&str> = Vec::new();
    for k in kinds.iter().filter(|k| !k.group.is_empty()) {
        if !groups.contains(&k.group.as_str()) {
            groups.push(&k.group);
        }
    }
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": groups.iter().map(|g| group_doc(kinds, g)).collect::<Vec<_>>(),
    })
}

/// `/apis` (the kinds of API groups) or `/api` (the core group's kinds) as an
/// `APIGroupDiscoveryList` (aggregated discovery v2): every group, version and resource in
/// one document.
pub fn aggregated(kinds: &[ApiKind]) -> Value {
    let mut groups: Vec<&str> = Vec::new();
    for k in kinds {
        if !groups.contains(&k.group.as_str()) {
            groups.push(&k.group);
        }
    }
    let items: Vec<Value> = groups
        .iter()
        .map(|g| {
            let versions: Vec<Value> = versions_of(kinds, g)
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = kinds
                        .iter()
                        .filter(|k| k.group == *g && k.version == *v)
                        .map(|k| {
                            let gvk = json!({"group": k.group, "version": k.version, "kind": k.kind});
                            let mut r = json!({
                                "resource": k.plural,
                                "responseKind": gvk,
                                "scope": if k.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": k.singular,
                                "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                            });
                            if !k.short_names.is_empty() {
                                r["shortNames"] = json!(k.short_names);
                            }
                            if !k.categories.is_empty() {
                                r["categories"] = json!(k.categories);
                            }
                            let mut subs = Vec::new();
                            if k.status_subresource {
                                subs.push(json!({
                                    "subresource": "status",
                                    "responseKind": gvk,
                                    "verbs": ["get", "patch", "update"],
                                }));
                            }
                            if k.scale.is_some() {
                                subs.push(json!({
                                    "subresource": "scale",
                                    "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                                    "verbs": ["get", "patch", "update"],
                                }));
                            }
                            if !subs.is_empty() {
                                r["subresources"] = json!(subs);
                            }
                            r
                        })
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// `/apis/<group>`.
pub fn group(kinds: &[ApiKind], group: &str) -> Option<Value> {
    if !kinds.iter().any(|k| k.group == group) {
        return None;
    }
    let mut doc = group_doc(kinds, group);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/apis/<group>/<version>`.
pub fn resource_list(kinds: &[ApiKind], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for k in kinds
        .iter()
        .filter(|k| k.group == group && k.version == version)
    {
        let mut r = json!({
            "name": k.plural,
            "singularName": k.singular,
            "namespaced": k.namespaced,
            "kind": k.kind,
            "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
        });
        if !k.short_names.is_empty() {
            r["shortNames"] = json!(k.short_names);
        }
        if !k.categories.is_empty() {
            r["categories"] = json!(k.categories);
        }
        resources.push(r);
        if k.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", k.plural),
                "singularName": "",
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if k.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", k.plural),
                "singularName": "",
                "namespaced": k.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": if group.is_empty() { version.to_string() } else { format!("{group}/{version}") },
        "resources": resources,
    }))
}

/// `/api`: the core group's `APIVersions` (empty when no core kind is served, as for an
/// aggregated API server; `["v1"]` in the test cluster).
pub fn api_versions(kinds: &[ApiKind]) -> Value {
    json!({"kind": "APIVersions", "versions": versions_of(kinds, ""), "serverAddressByClientCIDRs": null})
}
