// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Label and field selectors, with apimachinery's grammar and matching rules
//! (`k8s.io/apimachinery/pkg/labels` and `pkg/fields`).
//!
//! Labels: requirements joined by commas, each one of `key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n`, `key<n`; all must
//! hold. `!=` and `notin` also match an object without the label, as in apimachinery.
//! Fields: `path=value`, `path==value`, `path!=value` joined by commas, on the paths a custom
//! resource supports: `metadata.name` and `metadata.namespace`.

use std::collections::BTreeMap;

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

/// A parsed field selector on `metadata.name` / `metadata.namespace`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    /// (field, value, equal?) terms; all must hold.
    terms: Vec<(String, String, bool)>,
}

/// The fields a custom resource can be selected by (the API server's default for CRs).
pub const SELECTABLE_FIELDS: [&str; 2] = ["metadata.name", "metadata.namespace"];

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
    /// Parses `text`. Errors: a term without an operator, or a field other than
    /// [`SELECTABLE_FIELDS`] (the API server's message names the fields it supports).
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
            let field = field.trim();
            if !SELECTABLE_FIELDS.contains(&field) {
                return Err(format!(
                    "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ));
            }
            terms.push((field.to_string(), unescape(value.trim()), equal));
        }
        Ok(Self { terms })
    }

    /// Whether an object named `name` in `namespace` (empty for cluster-wide) is selected.
    pub fn matches(&self, name: &str, namespace: &str) -> bool {
        self.terms.iter().all(|(field, value, equal)| {
            let actual = if field == "metadata.name" {
                name
            } else {
                namespace
            };
            (actual == value) == *equal
        })
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
        let s = FieldSelector::parse("metadata.name=a,metadata.namespace!=kube-system").unwrap();
        assert!(s.matches("a", "default"));
        assert!(!s.matches("a", "kube-system"));
        assert!(!s.matches("b", "default"));
        let err = FieldSelector::parse("spec.engine=mysql").unwrap_err();
        assert!(
            err.starts_with("\"spec.engine\" is not a known field selector"),
            "{err}"
        );
        assert!(FieldSelector::parse("metadata.name").is_err());
    }
}
