// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The priority and fairness configuration: FlowSchema and PriorityLevelConfiguration objects
//! of `flowcontrol.apiserver.k8s.io/v1` (k8s-openapi's types), read from YAML, checked as
//! k8s.io/apiserver's `apis/flowcontrol/validation` checks them, and turned into the typed
//! values the server matches and queues with. [`Configuration::bootstrap`] is the default
//! (`bootstrap.yaml`, kube's suggested configuration reduced to what reaches this server).

use std::collections::HashSet;

use k8s_openapi::api::flowcontrol::v1::{
    FlowSchema, NonResourcePolicyRule, PriorityLevelConfiguration, ResourcePolicyRule, Subject,
};
use serde_json::Value;

use super::queueset::Queuing;
use super::shuffle_sharding::Dealer;

/// The default configuration, as YAML.
pub const BOOTSTRAP_YAML: &str = include_str!("bootstrap.yaml");

const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";

/// An invalid object: which one, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{object}: {field}: {message}")]
pub struct ConfigError {
    /// `FlowSchema "name"`, `PriorityLevelConfiguration "name"` or `document N`.
    pub object: String,
    /// The field's path (`spec.matchingPrecedence`), or `kind`, `apiVersion`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn error(object: &str, field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        object: object.to_string(),
        field: field.into(),
        message: message.into(),
    }
}

/// How a flow schema splits its requests into flows (`spec.distinguisherMethod.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    /// One flow per user name.
    ByUser,
    /// One flow per namespace (cluster-scoped and non-resource requests: one flow).
    ByNamespace,
}

/// Who a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubjectMatch {
    /// A user name, or `*` for every user.
    User(String),
    /// A group, or `*` for every group.
    Group(String),
    /// A service account of `namespace`; `name` may be `*`.
    ServiceAccount {
        /// Its namespace.
        namespace: String,
        /// Its name or `*`.
        name: String,
    },
}

/// One `rules[]` entry: the subjects, and what they do, any of the resource or non-resource
/// rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Who.
    pub subjects: Vec<SubjectMatch>,
    /// On which resources.
    pub resource_rules: Vec<ResourcePolicyRule>,
    /// On which other paths.
    pub non_resource_rules: Vec<NonResourcePolicyRule>,
}

/// A checked FlowSchema.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`, or one derived from the name when the file gives none.
    pub uid: String,
    /// `spec.matchingPrecedence` (1..=10000; lower is tried first).
    pub precedence: i32,
    /// The priority level's name.
    pub level: String,
    /// `None`: all the schema's requests are one flow.
    pub distinguisher: Option<Distinguisher>,
    /// Any one matching is enough.
    pub rules: Vec<Rules>,
}

/// What a priority level does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    /// Never limited.
    Exempt {
        /// `nominalConcurrencyShares` (counted in the split of seats).
        shares: u32,
    },
    /// Limited to its share of the server's seats.
    Limited {
        /// `nominalConcurrencyShares`.
        shares: u32,
        /// What happens when its seats are taken.
        queuing: Queuing,
    },
}

/// A checked PriorityLevelConfiguration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`, or one derived from the name.
    pub uid: String,
    /// Exempt or limited.
    pub kind: LevelKind,
}

/// A checked configuration: schemas sorted by precedence then name (the order they are tried,
/// as kube sorts them), and their levels. Only [`Self::bootstrap`], [`Self::from_yaml`] and
/// [`Self::from_objects`] make one, so every value has been checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    schemas: Vec<Schema>,
    levels: Vec<Level>,
}

impl Default for Configuration {
    fn default() -> Self {
        Self::bootstrap()
    }
}

impl Configuration {
    /// The default configuration ([`BOOTSTRAP_YAML`]).
    pub fn bootstrap() -> Self {
        Self::from_yaml(BOOTSTRAP_YAML).expect("the bootstrap configuration is valid")
    }

    /// The schemas, in the order they are tried.
    pub fn schemas(&self) -> &[Schema] {
        &self.schemas
    }

    /// The levels.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// Reads `text`: YAML documents (`---`-separated), each a FlowSchema, a
    /// PriorityLevelConfiguration or a `List` of them, all `flowcontrol.apiserver.k8s.io/v1`.
    /// Errors name the document or object and the field.
    pub fn from_yaml(text: &str) -> Result<Self, ConfigError> {
        let docs: Vec<Value> = serde_saphyr::from_multiple(text)
            .map_err(|e| error("the file", "", format!("not YAML: {e}")))?;
        let (mut schemas, mut levels) = (Vec::new(), Vec::new());
        let mut items = Vec::new();
        for (i, doc) in docs.into_iter().enumerate() {
            let at = format!("document {}", i + 1);
            match doc.get("kind").and_then(Value::as_str) {
                Some("List") => {
                    let Some(list) = doc.get("items").and_then(Value::as_array) else {
                        return Err(error(&at, "items", "a List needs items"));
                    };
                    for (j, item) in list.iter().enumerate() {
                        items.push((format!("{at}, item {}", j + 1), item.clone()));
                    }
                }
                _ if doc.is_null() => {}
                _ => items.push((at, doc)),
            }
        }
        for (at, item) in items {
            let version = item.get("apiVersion").and_then(Value::as_str);
            if version != Some(API_VERSION) {
                return Err(error(
                    &at,
                    "apiVersion",
                    format!("must be {API_VERSION}, not {version:?}"),
                ));
            }
            match item.get("kind").and_then(Value::as_str) {
                Some("FlowSchema") => schemas.push(
                    serde_json::from_value::<FlowSchema>(item)
                        .map_err(|e| error(&at, "", format!("not a FlowSchema: {e}")))?,
                ),
                Some("PriorityLevelConfiguration") => levels.push(
                    serde_json::from_value::<PriorityLevelConfiguration>(item).map_err(|e| {
                        error(&at, "", format!("not a PriorityLevelConfiguration: {e}"))
                    })?,
                ),
                other => {
                    return Err(error(
                        &at,
                        "kind",
                        format!("must be FlowSchema or PriorityLevelConfiguration, not {other:?}"),
                    ));
                }
            }
        }
        Self::from_objects(schemas, levels)
    }

    /// Checks `schemas` and `levels` and adds kube's mandatory `exempt` and `catch-all`
    /// objects (schema and level) that are missing, as kube-apiserver does. Errors name the
    /// object and the field: a missing or duplicate name, a precedence outside 1..=10000, an
    /// unknown distinguisher, subject kind, level type or limit response, a rule without
    /// subjects or without anything to match, a resource rule without verbs, groups,
    /// resources, or namespaces (unless cluster-scoped), queuing sizes that cannot be dealt,
    /// a schema naming a level that does not exist, a limited level with 0 shares.
    pub fn from_objects(
        schemas: Vec<FlowSchema>,
        levels: Vec<PriorityLevelConfiguration>,
    ) -> Result<Self, ConfigError> {
        let mut out_levels = Vec::new();
        let mut names = HashSet::new();
        for l in &levels {
            let level = check_level(l)?;
            if !names.insert(level.name.clone()) {
                return Err(error(
                    &format!("PriorityLevelConfiguration {:?}", level.name),
                    "metadata.name",
                    "defined twice",
                ));
            }
            out_levels.push(level);
        }
        let mut out_schemas = Vec::new();
        let mut schema_names = HashSet::new();
        for s in &schemas {
            let schema = check_schema(s)?;
            if !schema_names.insert(schema.name.clone()) {
                return Err(error(
                    &format!("FlowSchema {:?}", schema.name),
                    "metadata.name",
                    "defined twice",
                ));
            }
            out_schemas.push(schema);
        }
        let mandatory_missing = ["exempt", "catch-all"]
            .iter()
            .any(|n| !names.contains(*n) || !schema_names.contains(*n));
        if mandatory_missing {
            let mandatory = Self::bootstrap();
            for name in ["exempt", "catch-all"] {
                if !names.contains(name)
                    && let Some(l) = mandatory.levels.iter().find(|l| l.name == name)
                {
                    out_levels.push(l.clone());
                }
                if !schema_names.contains(name)
                    && let Some(s) = mandatory.schemas.iter().find(|s| s.name == name)
                {
                    out_schemas.push(s.clone());
                }
            }
        }
        for s in &out_schemas {
            if !out_levels.iter().any(|l| l.name == s.level) {
                return Err(error(
                    &format!("FlowSchema {:?}", s.name),
                    "spec.priorityLevelConfiguration.name",
                    format!("no PriorityLevelConfiguration {:?} is defined", s.level),
                ));
            }
        }
        out_schemas.sort_by(|a, b| (a.precedence, &a.name).cmp(&(b.precedence, &b.name)));
        Ok(Self {
            schemas: out_schemas,
            levels: out_levels,
        })
    }
}

/// A UID for an object the file gave none: the same for the same kind and name on every
/// start (two FNV-1a hashes shaped as a UUID).
fn derived_uid(kind: &str, name: &str) -> String {
    let a = super::fnv1a(&[kind.as_bytes(), b"/", name.as_bytes()]);
    let b = super::fnv1a(&[name.as_bytes(), b"/", kind.as_bytes()]);
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn shares(v: Option<i32>, at: &str, field: &str, default: i32) -> Result<u32, ConfigError> {
    let v = v.unwrap_or(default);
    u32::try_from(v).map_err(|_| error(at, field, format!("must not be negative, got {v}")))
}

fn check_level(l: &PriorityLevelConfiguration) -> Result<Level, ConfigError> {
    let name = l.metadata.name.clone().unwrap_or_default();
    let at = format!("PriorityLevelConfiguration {name:?}");
    if name.is_empty() {
        return Err(error(&at, "metadata.name", "required"));
    }
    let spec = &l.spec;
    let kind = match spec.type_.as_str() {
        "Exempt" => {
            if name != "exempt" {
                return Err(error(
                    &at,
                    "spec.type",
                    "must be Limited unless the name is exempt",
                ));
            }
            let e = spec.exempt.as_ref();
            LevelKind::Exempt {
                shares: shares(
                    e.and_then(|e| e.nominal_concurrency_shares),
                    &at,
                    "spec.exempt.nominalConcurrencyShares",
                    0,
                )?,
            }
        }
        "Limited" => {
            if name == "exempt" {
                return Err(error(&at, "spec.type", "must be Exempt for exempt"));
            }
            let Some(limited) = &spec.limited else {
                return Err(error(&at, "spec.limited", "required when type is Limited"));
            };
            let field = "spec.limited.nominalConcurrencyShares";
            let shares = shares(limited.nominal_concurrency_shares, &at, field, 30)?;
            if shares == 0 {
                return Err(error(
                    &at,
                    field,
                    "must be positive here: borrowing seats from other levels is not done, so a level with 0 shares would never run a request",
                ));
            }
            let response = &limited.limit_response;
            let queuing = match response.type_.as_str() {
                "Reject" => Queuing::Reject,
                "Queue" => {
                    let q = response.queuing.clone().unwrap_or_default();
                    let f = "spec.limited.limitResponse.queuing";
                    let positive = |v: Option<i32>, field: &str, default: i32| {
                        let v = v.unwrap_or(default);
                        u32::try_from(v).ok().filter(|v| *v > 0).ok_or_else(|| {
                            error(
                                &at,
                                format!("{f}.{field}"),
                                format!("must be positive, got {v}"),
                            )
                        })
                    };
                    let queues = positive(q.queues, "queues", 64)?;
                    let hand = positive(q.hand_size, "handSize", 8)?;
                    let queue_length_limit =
                        positive(q.queue_length_limit, "queueLengthLimit", 50)?;
                    let dealer = Dealer::new(i64::from(queues), i64::from(hand))
                        .map_err(|e| error(&at, format!("{f}.handSize"), e))?;
                    Queuing::Queue {
                        queues,
                        dealer,
                        queue_length_limit,
                    }
                }
                other => {
                    return Err(error(
                        &at,
                        "spec.limited.limitResponse.type",
                        format!("must be Queue or Reject, not {other:?}"),
                    ));
                }
            };
            LevelKind::Limited { shares, queuing }
        }
        other => {
            return Err(error(
                &at,
                "spec.type",
                format!("must be Exempt or Limited, not {other:?}"),
            ));
        }
    };
    Ok(Level {
        uid: l
            .metadata
            .uid
            .clone()
            .unwrap_or_else(|| derived_uid("PriorityLevelConfiguration", &name)),
        name,
        kind,
    })
}

fn check_subject(s: &Subject, at: &str, field: &str) -> Result<SubjectMatch, ConfigError> {
    let missing = |what: &str| error(at, format!("{field}.{what}"), "required for this kind");
    Ok(match s.kind.as_str() {
        "User" => SubjectMatch::User(s.user.as_ref().ok_or_else(|| missing("user"))?.name.clone()),
        "Group" => SubjectMatch::Group(
            s.group
                .as_ref()
                .ok_or_else(|| missing("group"))?
                .name
                .clone(),
        ),
        "ServiceAccount" => {
            let sa = s
                .service_account
                .as_ref()
                .ok_or_else(|| missing("serviceAccount"))?;
            if sa.namespace.is_empty() || sa.name.is_empty() {
                return Err(error(
                    at,
                    format!("{field}.serviceAccount"),
                    "namespace and name are required",
                ));
            }
            SubjectMatch::ServiceAccount {
                namespace: sa.namespace.clone(),
                name: sa.name.clone(),
            }
        }
        other => {
            return Err(error(
                at,
                format!("{field}.kind"),
                format!("must be User, Group or ServiceAccount, not {other:?}"),
            ));
        }
    })
}

fn check_schema(s: &FlowSchema) -> Result<Schema, ConfigError> {
    let name = s.metadata.name.clone().unwrap_or_default();
    let at = format!("FlowSchema {name:?}");
    if name.is_empty() {
        return Err(error(&at, "metadata.name", "required"));
    }
    let spec = &s.spec;
    let precedence = spec.matching_precedence.unwrap_or(1000);
    if !(1..=10000).contains(&precedence) {
        return Err(error(
            &at,
            "spec.matchingPrecedence",
            format!("must be between 1 and 10000, got {precedence}"),
        ));
    }
    let level = spec.priority_level_configuration.name.clone();
    if level.is_empty() {
        return Err(error(
            &at,
            "spec.priorityLevelConfiguration.name",
            "required",
        ));
    }
    let distinguisher = match spec.distinguisher_method.as_ref().map(|d| d.type_.as_str()) {
        None => None,
        Some("ByUser") => Some(Distinguisher::ByUser),
        Some("ByNamespace") => Some(Distinguisher::ByNamespace),
        Some(other) => {
            return Err(error(
                &at,
                "spec.distinguisherMethod.type",
                format!("must be ByUser or ByNamespace, not {other:?}"),
            ));
        }
    };
    let mut rules = Vec::new();
    for (i, r) in spec.rules.iter().flatten().enumerate() {
        let field = format!("spec.rules[{i}]");
        if r.subjects.is_empty() {
            return Err(error(&at, format!("{field}.subjects"), "required"));
        }
        let subjects = r
            .subjects
            .iter()
            .enumerate()
            .map(|(j, s)| check_subject(s, &at, &format!("{field}.subjects[{j}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let resource_rules = r.resource_rules.clone().unwrap_or_default();
        let non_resource_rules = r.non_resource_rules.clone().unwrap_or_default();
        if resource_rules.is_empty() && non_resource_rules.is_empty() {
            return Err(error(
                &at,
                &field,
                "at least one of resourceRules and nonResourceRules is required",
            ));
        }
        for (j, rr) in resource_rules.iter().enumerate() {
            let f = format!("{field}.resourceRules[{j}]");
            for (list, what) in [
                (&rr.verbs, "verbs"),
                (&rr.api_groups, "apiGroups"),
                (&rr.resources, "resources"),
            ] {
                if list.is_empty() {
                    return Err(error(&at, format!("{f}.{what}"), "required"));
                }
            }
            if rr.namespaces.as_ref().is_none_or(Vec::is_empty) && rr.cluster_scope != Some(true) {
                return Err(error(
                    &at,
                    format!("{f}.namespaces"),
                    "required unless clusterScope is true",
                ));
            }
        }
        for (j, nr) in non_resource_rules.iter().enumerate() {
            let f = format!("{field}.nonResourceRules[{j}]");
            if nr.verbs.is_empty() {
                return Err(error(&at, format!("{f}.verbs"), "required"));
            }
            if nr.non_resource_urls.is_empty() {
                return Err(error(&at, format!("{f}.nonResourceURLs"), "required"));
            }
        }
        rules.push(Rules {
            subjects,
            resource_rules,
            non_resource_rules,
        });
    }
    Ok(Schema {
        uid: s
            .metadata
            .uid
            .clone()
            .unwrap_or_else(|| derived_uid("FlowSchema", &name)),
        name,
        precedence,
        level,
        distinguisher,
        rules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_configuration_is_kubes_reduced() {
        let c = Configuration::bootstrap();
        let order: Vec<(&str, i32, &str)> = c
            .schemas()
            .iter()
            .map(|s| (s.name.as_str(), s.precedence, s.level.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("exempt", 1, "exempt"),
                ("probes", 2, "exempt"),
                ("system-leader-election", 100, "leader-election"),
                ("workload-leader-election", 200, "leader-election"),
                ("kube-controller-manager", 800, "workload-high"),
                ("kube-system-service-accounts", 900, "workload-high"),
                ("service-accounts", 9000, "workload-low"),
                ("global-default", 9900, "global-default"),
                ("catch-all", 10000, "catch-all"),
            ]
        );
        let shares: Vec<(&str, u32)> = c
            .levels()
            .iter()
            .map(|l| match l.kind {
                LevelKind::Exempt { shares } | LevelKind::Limited { shares, .. } => {
                    (l.name.as_str(), shares)
                }
            })
            .collect();
        assert_eq!(
            shares,
            [
                ("exempt", 0),
                ("leader-election", 10),
                ("workload-high", 40),
                ("workload-low", 100),
                ("global-default", 20),
                ("catch-all", 5),
            ]
        );
        let catch_all = &c.levels()[5];
        assert!(matches!(
            catch_all.kind,
            LevelKind::Limited {
                queuing: Queuing::Reject,
                ..
            }
        ));
        // UIDs are stable across starts.
        assert_eq!(
            Configuration::bootstrap().schemas()[0].uid,
            c.schemas()[0].uid
        );
        assert_ne!(c.schemas()[0].uid, c.levels()[0].uid);
    }

    const LEVEL: &str = "apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: mine}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse: {type: Queue, queuing: {queues: 4, handSize: 2, queueLengthLimit: 3}}
";

    fn schema(spec: &str) -> String {
        format!(
            "{LEVEL}---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {{name: s}}\nspec:\n{spec}"
        )
    }

    #[test]
    fn a_users_file_gets_the_mandatory_objects_and_keeps_its_own() {
        let c = Configuration::from_yaml(&schema(
            "  matchingPrecedence: 50\n  priorityLevelConfiguration: {name: mine}\n  rules:\n  - subjects: [{kind: User, user: {name: alice}}]\n    nonResourceRules: [{verbs: [get], nonResourceURLs: [\"/x/*\"]}]\n",
        ))
        .unwrap();
        let names: Vec<&str> = c.schemas().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["exempt", "s", "catch-all"]);
        let levels: Vec<&str> = c.levels().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(levels, ["mine", "exempt", "catch-all"]);
        assert_eq!(
            c.levels()[0].kind,
            LevelKind::Limited {
                shares: 10,
                queuing: Queuing::Queue {
                    queues: 4,
                    dealer: Dealer::new(4, 2).unwrap(),
                    queue_length_limit: 3
                }
            }
        );
    }

    #[test]
    fn invalid_objects_are_errors_naming_the_object_and_field() {
        let cases = [
            (
                schema("  matchingPrecedence: 0\n  priorityLevelConfiguration: {name: mine}\n"),
                "FlowSchema \"s\": spec.matchingPrecedence: must be between 1 and 10000, got 0",
            ),
            (
                schema("  priorityLevelConfiguration: {name: nowhere}\n"),
                "FlowSchema \"s\": spec.priorityLevelConfiguration.name: no PriorityLevelConfiguration \"nowhere\" is defined",
            ),
            (
                schema(
                    "  priorityLevelConfiguration: {name: mine}\n  distinguisherMethod: {type: ByGroup}\n",
                ),
                "FlowSchema \"s\": spec.distinguisherMethod.type: must be ByUser or ByNamespace, not \"ByGroup\"",
            ),
            (
                schema(
                    "  priorityLevelConfiguration: {name: mine}\n  rules:\n  - subjects: [{kind: Robot}]\n    nonResourceRules: [{verbs: [get], nonResourceURLs: [/]}]\n",
                ),
                "FlowSchema \"s\": spec.rules[0].subjects[0].kind: must be User, Group or ServiceAccount, not \"Robot\"",
            ),
            (
                schema(
                    "  priorityLevelConfiguration: {name: mine}\n  rules:\n  - subjects: [{kind: Group, group: {name: g}}]\n    resourceRules: [{verbs: [get], apiGroups: [\"\"], resources: [pods]}]\n",
                ),
                "FlowSchema \"s\": spec.rules[0].resourceRules[0].namespaces: required unless clusterScope is true",
            ),
            (
                LEVEL.replace("handSize: 2", "handSize: 5"),
                "PriorityLevelConfiguration \"mine\": spec.limited.limitResponse.queuing.handSize: handSize 5 is greater than deckSize 4",
            ),
            (
                LEVEL.replace("queueLengthLimit: 3", "queueLengthLimit: 0"),
                "PriorityLevelConfiguration \"mine\": spec.limited.limitResponse.queuing.queueLengthLimit: must be positive, got 0",
            ),
            (
                LEVEL.replace("type: Limited", "type: Exempt"),
                "PriorityLevelConfiguration \"mine\": spec.type: must be Limited unless the name is exempt",
            ),
            (
                LEVEL.replace("type: Queue,", "type: Drop,"),
                "PriorityLevelConfiguration \"mine\": spec.limited.limitResponse.type: must be Queue or Reject, not \"Drop\"",
            ),
            (
                LEVEL.replace(
                    "nominalConcurrencyShares: 10",
                    "nominalConcurrencyShares: 0",
                ),
                "PriorityLevelConfiguration \"mine\": spec.limited.nominalConcurrencyShares: must be positive here",
            ),
            (
                format!("{LEVEL}---\n{LEVEL}"),
                "PriorityLevelConfiguration \"mine\": metadata.name: defined twice",
            ),
            (
                LEVEL.replace(
                    "flowcontrol.apiserver.k8s.io/v1",
                    "flowcontrol.apiserver.k8s.io/v1beta3",
                ),
                "document 1: apiVersion: must be flowcontrol.apiserver.k8s.io/v1, not Some(\"flowcontrol.apiserver.k8s.io/v1beta3\")",
            ),
            (
                "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: Pod\n".to_string(),
                "document 1: kind: must be FlowSchema or PriorityLevelConfiguration, not Some(\"Pod\")",
            ),
        ];
        for (text, expected) in cases {
            let err = Configuration::from_yaml(&text).unwrap_err().to_string();
            assert!(err.starts_with(expected), "{err}\nexpected: {expected}");
        }
    }

    #[test]
    fn a_list_of_objects_is_read_as_its_items() {
        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}",
            LEVEL.trim_end().replace('\n', "\n  ")
        );
        let c = Configuration::from_yaml(&list).unwrap();
        assert!(c.levels().iter().any(|l| l.name == "mine"));
    }
}
