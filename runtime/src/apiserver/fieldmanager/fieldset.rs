// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! A set of field paths, as structured-merge-diff's `fieldpath.Set`, and its `FieldsV1` encoding
//! (the `fieldsV1` object of a `metadata.managedFields` entry).
//!
//! Path elements are kept in their encoded form: `f:<name>` for a map key, `k:<json>` for an item
//! of a list of type `map` (its key fields as a JSON object, sorted by name), `v:<json>` for an item
//! of a list of type `set`, `i:<index>` for a list index. In `FieldsV1` a node owned itself and
//! having owned children carries the child `"."`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A tree of field paths: `member` says the node itself is in the set, `children` holds the
/// sets under each path element (encoded, see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    /// The node itself is in the set.
    pub member: bool,
    /// The sets below, by encoded path element.
    pub children: BTreeMap<String, FieldSet>,
}

/// The path element of a map key: `f:<name>`.
pub fn field(name: &str) -> String {
    format!("f:{name}")
}

/// The path element of a list-map item: `k:` and its key fields as a compact JSON object with the
/// fields in name order, as structured-merge-diff encodes it.
pub fn key(fields: &Map<String, Value>) -> String {
    let sorted: BTreeMap<&String, &Value> = fields.iter().collect();
    format!("k:{}", serde_json::to_string(&sorted).unwrap_or_default())
}

/// The path element of a set item: `v:` and the value as compact JSON.
pub fn value(item: &Value) -> String {
    format!("v:{}", serde_json::to_string(item).unwrap_or_default())
}

impl FieldSet {
    /// No path at all.
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// The child set under `element`, created empty when missing.
    pub fn child(&mut self, element: &str) -> &mut FieldSet {
        self.children.entry(element.to_owned()).or_default()
    }

    /// Adds the path `elements` (the node it names becomes a member).
    pub fn insert(&mut self, elements: &[&str]) {
        match elements.split_first() {
            None => self.member = true,
            Some((first, rest)) => self.child(first).insert(rest),
        }
    }

    /// The path `elements` is a member.
    pub fn contains(&self, elements: &[&str]) -> bool {
        match elements.split_first() {
            None => self.member,
            Some((first, rest)) => self.children.get(*first).is_some_and(|c| c.contains(rest)),
        }
    }

    /// Every path of `self` or `other`.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (element, set) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(set),
                None => set.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out.prune()
    }

    /// The paths of `self` not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (element, set) in &self.children {
            let rest = match other.children.get(element) {
                Some(theirs) => set.difference(theirs),
                None => set.clone(),
            };
            out.children.insert(element.clone(), rest);
        }
        out.prune()
    }

    /// The paths in both `self` and `other`.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (element, set) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                out.children
                    .insert(element.clone(), set.intersection(theirs));
            }
        }
        out.prune()
    }

    /// Every member path, each as its elements, in order; for conflict messages.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.member {
            out.push(prefix.clone());
        }
        for (element, set) in &self.children {
            prefix.push(element.clone());
            set.collect(prefix, out);
            prefix.pop();
        }
    }

    fn prune(mut self) -> FieldSet {
        self.children.retain(|_, set| !set.is_empty());
        self
    }

    /// The `FieldsV1` object: each child element a key, `"."` for a member with children.
    pub fn to_fields_v1(&self) -> Value {
        let mut object = Map::new();
        if self.member && !self.children.is_empty() {
            object.insert(".".to_owned(), Value::Object(Map::new()));
        }
        for (element, set) in &self.children {
            if !set.is_empty() {
                object.insert(element.clone(), set.to_fields_v1());
            }
        }
        Value::Object(object)
    }

    /// Reads a `FieldsV1` object written by [`FieldSet::to_fields_v1`] or by kube-apiserver.
    ///
    /// Errors name the path of an element that is not an object or whose prefix is none of
    /// `f:`, `k:`, `v:`, `i:`, `.`.
    pub fn from_fields_v1(fields: &Value) -> Result<FieldSet, String> {
        let mut set = FieldSet::default();
        read(fields, &mut set, "")?;
        Ok(set)
    }
}

fn read(fields: &Value, set: &mut FieldSet, at: &str) -> Result<(), String> {
    let Value::Object(object) = fields else {
        return Err(format!("fieldsV1 at {at:?}: expected an object"));
    };
    for (element, below) in object {
        let here = format!("{at}/{element}");
        if element == "." {
            set.member = true;
            continue;
        }
        let valid_prefix = ["f:", "k:", "v:", "i:"]
            .iter()
            .any(|p| element.starts_with(p));
        if !valid_prefix {
            return Err(format!("fieldsV1 at {here:?}: unknown path element"));
        }
        let child = set.child(element);
        let Value::Object(inner) = below else {
            return Err(format!("fieldsV1 at {here:?}: expected an object"));
        };
        if inner.is_empty() {
            child.member = true;
        } else {
            read(below, child, &here)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(fields: Value) -> FieldSet {
        FieldSet::from_fields_v1(&fields).unwrap()
    }

    #[test]
    fn fields_v1_round_trips_with_dot_for_owned_parents() {
        let fields = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}}}}
        });
        let parsed = set(fields.clone());
        assert!(parsed.contains(&["f:metadata", "f:labels"]));
        assert!(parsed.contains(&["f:metadata", "f:labels", "f:app"]));
        assert!(!parsed.contains(&["f:metadata"]));
        assert_eq!(parsed.to_fields_v1(), fields);
    }

    #[test]
    fn key_elements_sort_fields_by_name() {
        let item = json!({"protocol": "TCP", "port": 80});
        assert_eq!(
            key(item.as_object().unwrap()),
            r#"k:{"port":80,"protocol":"TCP"}"#
        );
        assert_eq!(value(&json!("a")), r#"v:"a""#);
    }

    #[test]
    fn union_difference_intersection() {
        let a = set(json!({"f:spec": {"f:replicas": {}, "f:paused": {}}}));
        let b = set(json!({"f:spec": {"f:replicas": {}, "f:image": {}}}));
        assert_eq!(
            a.union(&b).to_fields_v1(),
            json!({"f:spec": {"f:image": {}, "f:paused": {}, "f:replicas": {}}})
        );
        assert_eq!(
            a.difference(&b).to_fields_v1(),
            json!({"f:spec": {"f:paused": {}}})
        );
        assert_eq!(
            a.intersection(&b).to_fields_v1(),
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert!(a.difference(&a).is_empty());
        assert_eq!(
            a.intersection(&b).paths(),
            vec![vec!["f:spec".to_owned(), "f:replicas".to_owned()]]
        );
    }

    #[test]
    fn bad_fields_v1_names_the_element() {
        let err = FieldSet::from_fields_v1(&json!({"f:spec": {"x:bad": {}}})).unwrap_err();
        assert!(err.contains("/f:spec/x:bad"), "{err}");
        assert!(FieldSet::from_fields_v1(&json!({"f:spec": 1})).is_err());
    }
}
