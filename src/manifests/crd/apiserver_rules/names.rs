//! The names of the CRD object that `#[kube]`'s group, kind and plural combine into, beyond
//! the checks of each attribute on its own (`assemble::check_names`): the object's name
//! `<plural>.<group>` is a DNS-1123 subdomain of at most 253 characters, and the list kind
//! kube-derive derives (`<Kind>List`) is, lower-cased, a DNS-1035 label of at most 63.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::{Location, Violation};
use crate::model::validate::{dns1035_label, dns1123_subdomain};

pub(super) fn check(crd: &CustomResourceDefinition) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut add = |rule: String, help: &str| {
        out.push(Violation {
            version: String::new(),
            at: Location::Names,
            rule,
            construct: None,
            help: Some(help.to_string()),
        })
    };
    if let Some(name) = &crd.metadata.name
        && let Err(why) = dns1123_subdomain(name)
    {
        add(
            format!("the CRD's name {name:?} (plural.group) {why}"),
            "shorten the plural (#[kube(plural = \"...\")]) or the group",
        );
    }
    // The API server fills in `<Kind>List` when the CRD names none, as kube-derive's do.
    let n = &crd.spec.names;
    let list = n
        .list_kind
        .clone()
        .unwrap_or_else(|| format!("{}List", n.kind));
    if let Err(why) = dns1035_label(&list.to_lowercase()) {
        add(
            format!("the list kind {list:?} lower-cased {why}"),
            "shorten the kind: the list kind is the kind followed by `List`",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;

    #[test]
    fn the_crd_name_and_the_list_kind_fit_the_api_servers_limits() {
        let crd = |plural: &str, kind: &str| apiext::CustomResourceDefinition {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(format!("{plural}.t.example.com")),
                ..Default::default()
            },
            spec: apiext::CustomResourceDefinitionSpec {
                names: apiext::CustomResourceDefinitionNames {
                    kind: kind.into(),
                    plural: plural.into(),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(super::check(&crd("things", "Thing")).is_empty());
        let long = "A".repeat(60);
        let got = super::check(&crd("things", &long));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].rule.contains("no more than 63"), "{got:?}");
        let plural = format!("{}.{}", "a".repeat(60), "b".repeat(60));
        let plural = format!("{plural}.{plural}.x");
        let got = super::check(&crd(&plural, "Thing"));
        assert!(got[0].rule.contains("no more than 253"), "{got:?}");
    }
}
