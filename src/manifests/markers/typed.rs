//! Typed values of the markers the generators consume, as controller-tools turns
//! `+kubebuilder:rbac` into an `rbac.Rule` and `+kubebuilder:webhook` into a `webhook.Config`:
//! the generators read struct fields, never argument names.
//!
//! Each conversion reads its arguments through [`Args`], which checks every name and type
//! against the marker's registry definition; a test converts every registered marker and
//! fails when the registry has an argument its typed value does not read, so the registry
//! (and with it the parser and docs/markers.md) and the generators cannot drift apart.

use std::cell::Cell;

use super::registry::{ArgDef, ArgType};
use super::{Marker, Value};

/// Name of the rbac marker, which [`RbacRule`] reads.
pub const RBAC_MARKER: &str = "kubebuilder:rbac";
/// Name of the webhook marker, which [`WebhookMarker`] reads.
pub const WEBHOOK_MARKER: &str = "kubebuilder:webhook";
/// Name of the marker that names the webhook configuration objects, which
/// [`WebhookConfigurationMarker`] reads.
pub const WEBHOOK_CONFIG_MARKER: &str = "kubebuilder:webhookconfiguration";

/// The marker given to a typed conversion is another marker (`+kubebuilder:webhook` where a
/// `+kubebuilder:rbac` was expected). Generators filter markers by name first, so this is a
/// caller's mistake, not bad input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongMarker {
    /// The marker the conversion takes.
    pub expected: &'static str,
    /// The marker it was given.
    pub found: &'static str,
}

impl std::fmt::Display for WrongMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected +{}, found +{}", self.expected, self.found)
    }
}

impl std::error::Error for WrongMarker {}

/// Reads the arguments of one marker by registered name and type, and remembers which
/// registered arguments were read.
struct Args<'m> {
    marker: &'m Marker,
    read: Cell<u64>,
}

impl<'m> Args<'m> {
    fn new(marker: &'m Marker, expected: &'static str) -> Result<Self, WrongMarker> {
        if marker.name() != expected {
            return Err(WrongMarker {
                expected,
                found: marker.name(),
            });
        }
        debug_assert!(marker.def.args().len() <= 64);
        Ok(Self {
            marker,
            read: Cell::new(0),
        })
    }

    /// The registered value of argument `name`, checked to have type `ty` in the registry.
    /// A name or type the registry does not have is a bug in the conversion (caught by the
    /// tests, which convert every marker), never bad input.
    fn get(&self, name: &str, ty: ArgType) -> Option<&'m Value> {
        let defs: &[ArgDef] = self.marker.def.args();
        let index = defs.iter().position(|a| a.name == name);
        debug_assert!(
            index.is_some_and(|i| defs[i].ty == ty),
            "+{} has no {} argument `{name}` in the registry",
            self.marker.name(),
            ty.describe()
        );
        if let Some(i) = index {
            self.read.set(self.read.get() | 1 << i);
        }
        self.marker
            .args
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }

    fn string(&self, name: &str) -> Option<&'m str> {
        match self.get(name, ArgType::String) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// A list argument; absent is the empty list.
    fn list(&self, name: &str) -> &'m [String] {
        match self.get(name, ArgType::StringList) {
            Some(Value::List(l)) => l,
            _ => &[],
        }
    }

    /// A list argument, `None` when it was not written (`verbs={}` is `Some(&[])`).
    fn list_given(&self, name: &str) -> Option<&'m [String]> {
        match self.get(name, ArgType::StringList) {
            Some(Value::List(l)) => Some(l),
            _ => None,
        }
    }

    fn int(&self, name: &str) -> Option<i64> {
        match self.get(name, ArgType::Int) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }

    fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name, ArgType::Bool) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// Registered arguments no accessor asked for.
    #[cfg(test)]
    fn unread(&self) -> Vec<&'static str> {
        let read = self.read.get();
        self.marker
            .def
            .args()
            .iter()
            .enumerate()
            .filter(|(i, _)| read & (1 << i) == 0)
            .map(|(_, a)| a.name)
            .collect()
    }
}

/// controller-gen's `core` alias becomes the empty core group `""`.
fn api_groups(groups: &[String]) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            if g == "core" {
                String::new()
            } else {
                g.clone()
            }
        })
        .collect()
}

/// `+kubebuilder:rbac` (controller-tools `rbac.Rule`): one permission of the manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RbacRule<'m> {
    /// The marker, for diagnostics.
    pub marker: &'m Marker,
    /// API groups, `core` already turned into `""`.
    pub groups: Vec<String>,
    pub resources: &'m [String],
    pub resource_names: &'m [String],
    /// `None` when the marker has no `verbs` (the parser reports that: it is required).
    pub verbs: Option<&'m [String]>,
    /// Non-resource URLs.
    pub urls: &'m [String],
    /// `Some`: the rule goes to a Role in this namespace.
    pub namespace: Option<&'m str>,
    /// The role that receives the rule; `None` is `manager-role`.
    pub role_name: Option<&'m str>,
}

impl<'m> TryFrom<&'m Marker> for RbacRule<'m> {
    type Error = WrongMarker;

    fn try_from(marker: &'m Marker) -> Result<Self, WrongMarker> {
        let a = Args::new(marker, RBAC_MARKER)?;
        Ok(Self::read(&a))
    }
}

impl<'m> RbacRule<'m> {
    fn read(a: &Args<'m>) -> Self {
        Self {
            marker: a.marker,
            groups: api_groups(a.list("groups")),
            resources: a.list("resources"),
            resource_names: a.list("resourceNames"),
            verbs: a.list_given("verbs"),
            urls: a.list("urls"),
            namespace: a.string("namespace"),
            role_name: a.string("roleName"),
        }
    }
}

/// `+kubebuilder:webhook` (controller-tools `webhook.Config`): one admission webhook. Values
/// are as written; the webhook generator checks and spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookMarker<'m> {
    /// The marker, for diagnostics.
    pub marker: &'m Marker,
    pub mutating: bool,
    pub failure_policy: Option<&'m str>,
    pub match_policy: Option<&'m str>,
    pub side_effects: Option<&'m str>,
    pub timeout_seconds: Option<i64>,
    /// API groups, `core` already turned into `""`.
    pub groups: Vec<String>,
    pub resources: &'m [String],
    /// Operations as written (`create;update`).
    pub verbs: &'m [String],
    pub versions: &'m [String],
    pub name: &'m str,
    pub service_name: Option<&'m str>,
    pub service_namespace: Option<&'m str>,
    pub service_port: Option<i64>,
    pub path: Option<&'m str>,
    pub url: Option<&'m str>,
    pub webhook_versions: &'m [String],
    pub admission_review_versions: &'m [String],
    pub reinvocation_policy: Option<&'m str>,
    /// A JSON merge patch for the webhook object.
    pub patch: Option<&'m str>,
}

impl<'m> TryFrom<&'m Marker> for WebhookMarker<'m> {
    type Error = WrongMarker;

    fn try_from(marker: &'m Marker) -> Result<Self, WrongMarker> {
        let a = Args::new(marker, WEBHOOK_MARKER)?;
        Ok(Self::read(&a))
    }
}

impl<'m> WebhookMarker<'m> {
    fn read(a: &Args<'m>) -> Self {
        Self {
            marker: a.marker,
            mutating: a.bool("mutating").unwrap_or_default(),
            failure_policy: a.string("failurePolicy"),
            match_policy: a.string("matchPolicy"),
            side_effects: a.string("sideEffects"),
            timeout_seconds: a.int("timeoutSeconds"),
            groups: api_groups(a.list("groups")),
            resources: a.list("resources"),
            verbs: a.list("verbs"),
            versions: a.list("versions"),
            name: a.string("name").unwrap_or_default(),
            service_name: a.string("serviceName"),
            service_namespace: a.string("serviceNamespace"),
            service_port: a.int("servicePort"),
            path: a.string("path"),
            url: a.string("url"),
            webhook_versions: a.list("webhookVersions"),
            admission_review_versions: a.list("admissionReviewVersions"),
            reinvocation_policy: a.string("reinvocationPolicy"),
            patch: a.string("patch"),
        }
    }

    /// Whether the marker wrote argument `name` (for arguments that conflict with others).
    pub fn wrote(&self, name: &str) -> bool {
        self.marker.args.iter().any(|a| a.name == name)
    }
}

/// `+kubebuilder:webhookconfiguration` (controller-tools `webhook.WebhookConfig`): the name of
/// the mutating or the validating configuration object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfigurationMarker<'m> {
    /// The marker, for diagnostics.
    pub marker: &'m Marker,
    pub mutating: bool,
    /// `None`: the default name.
    pub name: Option<&'m str>,
}

impl<'m> TryFrom<&'m Marker> for WebhookConfigurationMarker<'m> {
    type Error = WrongMarker;

    fn try_from(marker: &'m Marker) -> Result<Self, WrongMarker> {
        let a = Args::new(marker, WEBHOOK_CONFIG_MARKER)?;
        Ok(Self::read(&a))
    }
}

impl<'m> WebhookConfigurationMarker<'m> {
    fn read(a: &Args<'m>) -> Self {
        Self {
            marker: a.marker,
            mutating: a.bool("mutating").unwrap_or_default(),
            name: a.string("name"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::markers::{Form, MARKERS, collect_text};
    use std::path::Path;

    fn one(src: &str) -> Marker {
        let (mut markers, errors) = collect_text(Path::new("x.rs"), src);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(markers.len(), 1);
        markers.remove(0)
    }

    #[test]
    fn every_registered_argument_is_read_by_its_typed_value() {
        let sources = [
            "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n",
            "// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create,versions=v1,name=m.kb.io,admissionReviewVersions=v1\n",
            "// +kubebuilder:webhookconfiguration:mutating=true\n",
        ];
        let mut covered = Vec::new();
        for src in sources {
            let m = one(src);
            let unread = match m.name() {
                "kubebuilder:rbac" => {
                    let a = Args::new(&m, "kubebuilder:rbac").unwrap();
                    RbacRule::read(&a);
                    a.unread()
                }
                "kubebuilder:webhook" => {
                    let a = Args::new(&m, "kubebuilder:webhook").unwrap();
                    WebhookMarker::read(&a);
                    a.unread()
                }
                "kubebuilder:webhookconfiguration" => {
                    let a = Args::new(&m, "kubebuilder:webhookconfiguration").unwrap();
                    WebhookConfigurationMarker::read(&a);
                    a.unread()
                }
                other => panic!("no typed value for {other}"),
            };
            assert!(
                unread.is_empty(),
                "+{} arguments no generator reads: {unread:?}",
                m.name()
            );
            covered.push(m.name());
        }
        // Every marker with arguments has a typed value.
        let with_args: Vec<&str> = MARKERS
            .iter()
            .filter(|d| matches!(d.form, Form::Args(_)))
            .map(|d| d.name)
            .collect();
        assert_eq!(covered, with_args);
    }

    #[test]
    fn rbac_values_are_typed_with_core_as_the_empty_group() {
        let m = one(
            "// +kubebuilder:rbac:groups=core;apps,resources=pods;deployments,verbs=get;list,namespace=ops,roleName=r\n",
        );
        let r = RbacRule::try_from(&m).unwrap();
        assert_eq!(r.groups, ["", "apps"]);
        assert_eq!(r.resources, ["pods", "deployments"]);
        assert_eq!(r.verbs, Some(&["get".to_string(), "list".to_string()][..]));
        assert_eq!((r.namespace, r.role_name), (Some("ops"), Some("r")));
        assert!(r.urls.is_empty() && r.resource_names.is_empty());
    }

    #[test]
    fn a_conversion_refuses_another_marker() {
        let m = one("// +kubebuilder:webhookconfiguration:mutating=false,name=v\n");
        assert_eq!(
            RbacRule::try_from(&m).unwrap_err().to_string(),
            "expected +kubebuilder:rbac, found +kubebuilder:webhookconfiguration"
        );
        let c = WebhookConfigurationMarker::try_from(&m).unwrap();
        assert_eq!((c.mutating, c.name), (false, Some("v")));
    }
}
