// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Label and field selectors, with apimachinery's grammar and matching rules
//! (`k8s.io/apimachinery/pkg/labels` and `pkg/fields`).
//!
//! Labels: requirements joined by commas, each one of `key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n`, `key<n`; all must
//! hold. `!=` and `notin` also match an object without the label, as in apimachinery.
//! Fields: `path=value`, `path==value`, `path!=value` joined by commas, on the fields the kind
//! can be selected by ([`FieldSelector::for_kind`]): `metadata.name` and `metadata.namespace`
//! for a custom resource, and for the built-in kinds with more (Pods, core Events, Secrets,
//! Nodes, Namespaces, ReplicaSets, Jobs) the fields kube-apiserver's field label conversions
//! accept.

use std::collections::BTreeMap;

use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Exists,
    NotExists,
    In(Vec<String>),
    NotIn(Vec<String>),
    Gt(i64),
    Lt(i64),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    requirements: Vec<(String, Op)>,
}

/// A parsed field selector: terms on fields, all of which must hold. Parsed, it knows the
/// fields' names only; [`FieldSelector::for_kind`] checks them against a kind and says how
/// each is read from an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

#[derive(Debug, Clone, PartialEq)]
struct Term {
    field: String,
    value: String,
    equal: bool,
    /// How the field is read (`None` until [`FieldSelector::for_kind`] resolved it; such a
    /// term selects nothing).
    read: Option<Read>,
}

/// How a selectable field's value is read from an object, as the kind's `ToSelectableFields`
/// function of kube-apiserver prints it: an absent string is `""`, an absent boolean `false`,
/// an absent integer `0`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Read {
    Str(&'static str),
    Bool(&'static str),
    Int(&'static str),
    /// A core Event's `source`: `source.component`, else `reportingComponent`.
    EventSource,
}

/// A selectable field: its name and how it is read.
type Field = (&'static str, Read);

const NAME: Field = ("metadata.name", Read::Str("/metadata/name"));
const NAMESPACE: Field = ("metadata.namespace", Read::Str("/metadata/namespace"));

/// The fields a custom resource can be selected by (the API server's default for CRs).
pub const SELECTABLE_FIELDS: [&str; 2] = ["metadata.name", "metadata.namespace"];

/// The built-in kinds (group, plural) with their own field label conversion in kube-apiserver
/// (k8s.io/kubernetes `pkg/apis/core/v1/conversion.go`, `apps/v1`, `batch/v1`), the fields it
/// accepts (`spec.host` is the old name of `spec.nodeName`), and how each is read (the
/// kinds' `ToSelectableFields`).
const BUILTIN_FIELDS: &[(&str, &str, &[Field])] = &[
    (
        "",
        "pods",
        &[
            NAME,
            NAMESPACE,
            ("spec.nodeName", Read::Str("/spec/nodeName")),
            ("spec.host", Read::Str("/spec/nodeName")),
            ("spec.restartPolicy", Read::Str("/spec/restartPolicy")),
            ("spec.schedulerName", Read::Str("/spec/schedulerName")),
            (
                "spec.serviceAccountName",
                Read::Str("/spec/serviceAccountName"),
            ),
            ("spec.hostNetwork", Read::Bool("/spec/hostNetwork")),
            ("status.phase", Read::Str("/status/phase")),
            ("status.podIP", Read::Str("/status/podIP")),
            (
                "status.nominatedNodeName",
                Read::Str("/status/nominatedNodeName"),
            ),
        ],
    ),
    (
        "",
        "events",
        &[
            NAME,
            NAMESPACE,
            ("involvedObject.kind", Read::Str("/involvedObject/kind")),
            (
                "involvedObject.namespace",
                Read::Str("/involvedObject/namespace"),
            ),
            ("involvedObject.name", Read::Str("/involvedObject/name")),
            ("involvedObject.uid", Read::Str("/involvedObject/uid")),
            (
                "involvedObject.apiVersion",
                Read::Str("/involvedObject/apiVersion"),
            ),
            (
                "involvedObject.resourceVersion",
                Read::Str("/involvedObject/resourceVersion"),
            ),
            (
                "involvedObject.fieldPath",
                Read::Str("/involvedObject/fieldPath"),
            ),
            ("reason", Read::Str("/reason")),
            ("reportingComponent", Read::Str("/reportingComponent")),
            ("source", Read::EventSource),
            ("type", Read::Str("/type")),
        ],
    ),
    (
        "",
        "secrets",
        &[NAME, NAMESPACE, ("type", Read::Str("/type"))],
    ),
    (
        "",
        "nodes",
        &[
            NAME,
            ("spec.unschedulable", Read::Bool("/spec/unschedulable")),
        ],
    ),
    (
        "",
        "namespaces",
        &[NAME, ("status.phase", Read::Str("/status/phase"))],
    ),
    (
        "apps",
        "replicasets",
        &[
            NAME,
            NAMESPACE,
            ("status.replicas", Read::Int("/status/replicas")),
        ],
    ),
    (
        "batch",
        "jobs",
        &[
            NAME,
            NAMESPACE,
            ("status.successful", Read::Int("/status/successful")),
        ],
    ),
];

impl Read {
    fn value(self, obj: &Value) -> String {
        let str_at = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match self {
            Read::Str(p) => str_at(p),
            Read::Bool(p) => obj
                .pointer(p)
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .to_string(),
            Read::Int(p) => obj
                .pointer(p)
                .and_then(Value::as_i64)
                .unwrap_or(0)
                .to_string(),
            Read::EventSource => match str_at("/source/component") {
                c if c.is_empty() => str_at("/reportingComponent"),
                c => c,
            },
        }
    }
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, t: &str) -> bool {
        self.skip_ws();
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    /// A key or value: the characters labels allow, stopping at operators and separators.
    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c.is_ascii_whitespace() || b",=!()<>".contains(&c) {
                break;
            }
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    /// `in` / `notin` when they stand as a word.
    fn keyword(&mut self, k: &str) -> bool {
        self.skip_ws();
        let rest = &self.s[self.i..];
        if rest.starts_with(k.as_bytes())
            && rest
                .get(k.len())
                .is_none_or(|c| c.is_ascii_whitespace() || *c == b'(')
        {
            self.i += k.len();
            true
        } else {
            false
        }
    }
}

/// Whether `name` is a valid label key: an optional DNS-subdomain prefix and `/`, then a name of
/// at most 63 characters, alphanumeric at both ends, with `-`, `_` and `.` inside.
pub fn valid_label_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || p.len() > 253 || !crate::apiserver::names::is_dns_subdomain(p))
    {
        return false;
    }
    !name.is_empty() && valid_label_value(name)
}

/// Whether `value` is a valid label value: empty, or at most 63 characters, alphanumeric at both
/// ends, with `-`, `_` and `.` inside.
pub fn valid_label_value(value: &str) -> bool {
    let b = value.as_bytes();
    if b.is_empty() {
        return true;
    }
    b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
}

impl LabelSelector {
    /// Parses `text`. Errors: a message naming the requirement that does not parse, as the API
    /// server's 400 answer gives it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut lx = Lexer {
            s: text.as_bytes(),
            i: 0,
        };
        let mut requirements = Vec::new();
        if lx.peek().is_none() {
            return Ok(Self { requirements });
        }
        loop {
            let negated = lx.eat("!");
            let key = lx.word();
            if !valid_label_key(&key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key {key:?}"
                ));
            }
            let op = if negated {
                Op::NotExists
            } else if lx.eat("==") || lx.eat("=") {
                Op::In(vec![value(&mut lx)?])
            } else if lx.eat("!=") {
                Op::NotIn(vec![value(&mut lx)?])
            } else if lx.eat(">") {
                Op::Gt(integer(&mut lx)?)
            } else if lx.eat("<") {
                Op::Lt(integer(&mut lx)?)
            } else if lx.keyword("notin") {
                Op::NotIn(set(&mut lx)?)
            } else if lx.keyword("in") {
                Op::In(set(&mut lx)?)
            } else {
                Op::Exists
            };
            requirements.push((key, op));
            match lx.peek() {
                None => break,
                Some(b',') => {
                    lx.i += 1;
                }
                Some(c) => {
                    return Err(format!(
                        "unable to parse requirement: found '{}', expected: ',' or end of selector",
                        c as char
                    ));
                }
            }
        }
        Ok(Self { requirements })
    }

    /// Whether an object with `labels` is selected.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|(key, op)| {
            let v = labels.get(key);
            match op {
                Op::Exists => v.is_some(),
                Op::NotExists => v.is_none(),
                Op::In(vals) => v.is_some_and(|v| vals.contains(v)),
                Op::NotIn(vals) => v.is_none_or(|v| !vals.contains(v)),
                Op::Gt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v > *n),
                Op::Lt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v < *n),
            }
        })
    }

    /// Whether the selector is empty (selects everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

fn value(lx: &mut Lexer) -> Result<String, String> {
    let v = lx.word();
    if !valid_label_value(&v) {
        return Err(format!(
            "unable to parse requirement: invalid label value {v:?}"
        ));
    }
    Ok(v)
}

fn integer(lx: &mut Lexer) -> Result<i64, String> {
    let v = lx.word();
    v.parse()
        .map_err(|_| format!("unable to parse requirement: {v:?} is not an integer"))
}

fn set(lx: &mut Lexer) -> Result<Vec<String>, String> {
    if !lx.eat("(") {
        return Err("unable to parse requirement: expected '(' after in/notin".into());
    }
    let mut vals = Vec::new();
    loop {
        if lx.eat(")") {
            break;
        }
        vals.push(value(lx)?);
        if lx.eat(",") {
            continue;
        }
        if !lx.eat(")") {
            return Err("unable to parse requirement: expected ',' or ')' in a value set".into());
        }
        break;
    }
    Ok(vals)
}

impl FieldSelector {
    /// Parses `text` (the fields are checked by [`Self::for_kind`]). Errors: a term without an
    /// operator.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for term in split_unescaped(text, ',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let (field, value, equal) = if let Some((f, v)) = term.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, v, true)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, v, true)
            } else {
                return Err(format!(
                    "invalid selector: '{text}'; can't understand '{term}'"
                ));
            };
            terms.push(Term {
                field: field.trim().to_string(),
                value: unescape(value.trim()),
                equal,
                read: None,
            });
        }
        Ok(Self { terms })
    }

    /// The selector checked against the kind of `group` and `plural`, each field resolved to
    /// how it is read, as the API server's list and watch handlers convert a field selector's
    /// labels for the kind (`ConvertFieldLabel`). Errors: a field the kind is not selectable
    /// by, with kube-apiserver's message: `field label not supported: <field>` for a built-in
    /// kind with its own conversion, else (custom resources, and built-in kinds with none)
    /// `"<field>" is not a known field selector: only "metadata.name", "metadata.namespace"`.
    pub fn for_kind(mut self, group: &str, plural: &str) -> Result<Self, String> {
        let own = BUILTIN_FIELDS
            .iter()
            .find(|(g, p, _)| *g == group && *p == plural)
            .map(|(_, _, fields)| *fields);
        for term in &mut self.terms {
            let field = term.field.as_str();
            term.read = Some(match own {
                Some(fields) => fields
                    .iter()
                    .find(|(f, _)| *f == field)
                    .map(|(_, r)| *r)
                    .ok_or_else(|| format!("field label not supported: {field}"))?,
                None => [NAME, NAMESPACE]
                    .iter()
                    .find(|(f, _)| *f == field)
                    .map(|(_, r)| *r)
                    .ok_or_else(|| {
                        format!(
                            "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                        )
                    })?,
            });
        }
        Ok(self)
    }

    /// Whether `obj` is selected: every term holds for the field's value as the kind prints
    /// it. A term not resolved by [`Self::for_kind`] selects nothing.
    pub fn matches(&self, obj: &Value) -> bool {
        self.terms
            .iter()
            .all(|t| t.read.is_some_and(|r| (r.value(obj) == t.value) == t.equal))
    }

    /// Whether the selector is empty (selects everything).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// Splits on `sep` not preceded by a backslash (apimachinery's field selector escaping).
fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            out.last_mut().unwrap().push('\\');
            out.last_mut().unwrap().push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push(c);
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped || c != '\\' {
            out.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_label_operator_matches_as_apimachinery_defines_it() {
        let prod = labels(&[("env", "prod"), ("tier", "db"), ("size", "5")]);
        let bare = labels(&[]);
        let cases = [
            ("env=prod", true, false),
            ("env==prod", true, false),
            ("env!=prod", false, true),
            ("env in (prod, staging)", true, false),
            ("env notin (prod)", false, true),
            ("tier", true, false),
            ("!tier", false, true),
            ("size>3", true, false),
            ("size<3", false, false),
            ("env=prod,tier=web", false, false),
            (" env = prod , tier in (db) ", true, false),
            ("", true, true),
        ];
        for (sel, on_prod, on_bare) in cases {
            let s = LabelSelector::parse(sel).unwrap();
            assert_eq!(s.matches(&prod), on_prod, "{sel} on prod");
            assert_eq!(s.matches(&bare), on_bare, "{sel} on no labels");
        }
    }

    #[test]
    fn a_malformed_label_selector_is_an_error() {
        for bad in [
            "env=pr od",
            "env in prod",
            "=x",
            "env=(x",
            "a/b/c=x",
            "-x=y",
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        assert!(LabelSelector::parse("example.com/app=x").is_ok());
    }

    #[test]
    fn field_selectors_take_name_and_namespace_only() {
        let s = FieldSelector::parse("metadata.name=a,metadata.namespace!=kube-system")
            .unwrap()
            .for_kind("example.com", "databases")
            .unwrap();
        let obj = |name: &str, ns: &str| json!({"metadata": {"name": name, "namespace": ns}});
        assert!(s.matches(&obj("a", "default")));
        assert!(!s.matches(&obj("a", "kube-system")));
        assert!(!s.matches(&obj("b", "default")));
        let err = FieldSelector::parse("spec.engine=mysql")
            .unwrap()
            .for_kind("example.com", "databases")
            .unwrap_err();
        assert_eq!(
            err,
            r#""spec.engine" is not a known field selector: only "metadata.name", "metadata.namespace""#
        );
        // A built-in kind without its own conversion (ConfigMaps) has the same two.
        let err = FieldSelector::parse("spec.nodeName=n")
            .unwrap()
            .for_kind("", "configmaps")
            .unwrap_err();
        assert!(err.starts_with("\"spec.nodeName\" is not a known"), "{err}");
        assert!(FieldSelector::parse("metadata.name").is_err());
    }

    #[test]
    fn built_in_kinds_are_selected_by_the_fields_kube_apiserver_converts() {
        let pod = json!({"metadata": {"name": "p", "namespace": "d"},
            "spec": {"nodeName": "n1", "restartPolicy": "Always"},
            "status": {"phase": "Running", "podIP": "10.0.0.1"}});
        let bare = json!({"metadata": {"name": "q", "namespace": "d"}});
        let cases = [
            ("status.phase=Running", true, false),
            ("status.phase!=Running", false, true),
            ("spec.nodeName=", false, true),
            ("spec.nodeName!=", true, false),
            ("spec.host=n1", true, false),
            ("spec.hostNetwork=false", true, true),
            (
                "status.podIP=10.0.0.1,spec.restartPolicy=Always",
                true,
                false,
            ),
            ("metadata.namespace=d", true, true),
        ];
        for (sel, on_pod, on_bare) in cases {
            let s = FieldSelector::parse(sel)
                .unwrap()
                .for_kind("", "pods")
                .unwrap();
            assert_eq!(s.matches(&pod), on_pod, "{sel} on the pod");
            assert_eq!(s.matches(&bare), on_bare, "{sel} on a bare pod");
        }
        let err = FieldSelector::parse("spec.containers=x")
            .unwrap()
            .for_kind("", "pods")
            .unwrap_err();
        assert_eq!(err, "field label not supported: spec.containers");
        // A Node has no namespace field, as its conversion has none.
        let err = FieldSelector::parse("metadata.namespace=x")
            .unwrap()
            .for_kind("", "nodes")
            .unwrap_err();
        assert_eq!(err, "field label not supported: metadata.namespace");
        let event = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "Started", "type": "Normal", "reportingComponent": "kubelet"});
        for sel in [
            "involvedObject.kind=Pod,involvedObject.name=p",
            "reason=Started,type=Normal",
            "source=kubelet",
        ] {
            let s = FieldSelector::parse(sel)
                .unwrap()
                .for_kind("", "events")
                .unwrap();
            assert!(s.matches(&event), "{sel}");
        }
        let rs = FieldSelector::parse("status.replicas=0")
            .unwrap()
            .for_kind("apps", "replicasets")
            .unwrap();
        assert!(rs.matches(&bare));
        let job = FieldSelector::parse("status.successful=1")
            .unwrap()
            .for_kind("batch", "jobs")
            .unwrap();
        assert!(job.matches(&json!({"status": {"successful": 1}})));
        let node = FieldSelector::parse("spec.unschedulable=true")
            .unwrap()
            .for_kind("", "nodes")
            .unwrap();
        assert!(node.matches(&json!({"spec": {"unschedulable": true}})));
        assert!(!node.matches(&bare));
    }
}
