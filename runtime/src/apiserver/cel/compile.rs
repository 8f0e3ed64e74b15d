// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! One schema's `x-kubernetes-validations` compiled: each rule's texts checked as CRD
//! validation checks them, its expressions compiled and their functions, names and selected
//! fields checked, and the tree of schema nodes that carry rules.

use cel::Program;
use serde_json::Value;

use super::fields::{fields, normalize_field_path, self_schema};
use super::guard::compile;
use super::shape::shape_of;

/// One `x-kubernetes-validations` entry, compiled.
pub(super) struct Rule {
    pub(super) source: String,
    pub(super) program: Program,
    pub(super) message: Option<String>,
    pub(super) message_expression: Option<Program>,
    pub(super) reason: Reason,
    /// The normalised `fieldPath` (`spec.replicas`, `labels[a.b]`), appended to the node's path.
    pub(super) field_path: Option<String>,
    pub(super) uses_old_self: bool,
    pub(super) optional_old_self: bool,
    /// The rule's expression nodes, and how deeply its comprehensions nest: the cost bound.
    pub(super) nodes: u64,
    pub(super) depth: u32,
}

/// A rule's `reason`: which kind of cause its failure is (`FieldValueInvalid`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// The compiled rules of a schema node and of the nodes under it that have any.
#[derive(Default)]
pub(super) struct Node {
    pub(super) rules: Vec<Rule>,
    pub(super) properties: Vec<(String, Node)>,
    pub(super) additional: Option<Box<Node>>,
    pub(super) items: Option<Box<Node>>,
    pub(super) all_of: Vec<Node>,
}

impl Node {
    pub(super) fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
            && self.all_of.is_empty()
    }
}

/// The rules of `schema` and under it; `spine` is the structural schema at the same place
/// (itself, except under `allOf`, whose entries may only add rules to the spine's fields).
pub(super) fn compile_node(
    schema: &Value,
    spine: &Value,
    root: bool,
    path: &str,
) -> Result<Node, String> {
    let mut node = Node::default();
    if let Some(list) = schema.get("x-kubernetes-validations") {
        let list = list
            .as_array()
            .ok_or_else(|| format!("{path}.x-kubernetes-validations: not a list"))?;
        for (i, rule) in list.iter().enumerate() {
            let at = format!("{path}.x-kubernetes-validations[{i}]");
            node.rules.push(compile_rule(rule, spine, root, &at)?);
        }
    }
    let on_spine = |sub: Option<&Value>, at: &str, sub_path: &str| match sub {
        Some(s) => Ok(s.clone()),
        None if !has_rules(schema.pointer(at)) => Ok(Value::Null),
        None => Err(format!(
            "{sub_path}: x-kubernetes-validations on a field the schema's properties do not declare"
        )),
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            let sub_path = format!("{path}.properties[{k}]");
            let at = format!("/properties/{}", k.replace('~', "~0").replace('/', "~1"));
            let spine_sub = on_spine(
                spine.get("properties").and_then(|p| p.get(k)),
                &at,
                &sub_path,
            )?;
            let child = compile_node(sub, &spine_sub, false, &sub_path)?;
            if !child.is_empty() {
                node.properties.push((k.clone(), child));
            }
        }
    }
    if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        let sub_path = format!("{path}.additionalProperties");
        let spine_sub = on_spine(
            spine.get("additionalProperties"),
            "/additionalProperties",
            &sub_path,
        )?;
        let child = compile_node(extra, &spine_sub, false, &sub_path)?;
        if !child.is_empty() {
            node.additional = Some(Box::new(child));
        }
    }
    if let Some(items) = schema.get("items").filter(|a| a.is_object()) {
        let sub_path = format!("{path}.items");
        let spine_sub = on_spine(spine.get("items"), "/items", &sub_path)?;
        let child = compile_node(items, &spine_sub, false, &sub_path)?;
        if !child.is_empty() {
            node.items = Some(Box::new(child));
        }
    }
    // `allOf` entries add rules at this node, evaluated on the same value (as the API
    // server's AllOfValidators).
    for (i, entry) in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let child = compile_node(entry, spine, root, &format!("{path}.allOf[{i}]"))?;
        if !child.is_empty() {
            node.all_of.push(child);
        }
    }
    // The API server refuses rules under these when a CRD is created (they would never run).
    for key in ["anyOf", "oneOf", "not"] {
        if has_rules(schema.get(key)) {
            return Err(format!(
                "{path}.{key}: x-kubernetes-validations inside {key} are not allowed"
            ));
        }
    }
    Ok(node)
}

/// Whether `v` or anything under it carries `x-kubernetes-validations`.
fn has_rules(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Object(m)) => {
            m.contains_key("x-kubernetes-validations") || m.values().any(|v| has_rules(Some(v)))
        }
        Some(Value::Array(a)) => a.iter().any(|v| has_rules(Some(v))),
        _ => false,
    }
}

/// One `x-kubernetes-validations` entry `rule` at schema path `at`, on the node `schema`
/// (`root`: the object's root). Errors: the first check CRD validation would fail, worded
/// with `at` and the rule's text.
fn compile_rule(rule: &Value, schema: &Value, root: bool, at: &str) -> Result<Rule, String> {
    let text = |k: &str| rule.get(k).and_then(Value::as_str).map(str::to_string);
    let source = text("rule").unwrap_or_default();
    let fail = |what: &str| format!("{at}: rule {source:?}: {what}");
    if source.trim().is_empty() {
        return Err(fail("rule is not specified"));
    }
    // The checks CRD validation makes on the rule's texts.
    match text("message") {
        Some(m) if m.trim().is_empty() => {
            return Err(fail("message must be non-empty if specified"));
        }
        Some(m) if m.contains('\n') => return Err(fail("message must not contain line breaks")),
        None if source.contains('\n') => {
            return Err(fail(
                "message must be specified if rule contains line breaks",
            ));
        }
        _ => {}
    }
    if text("messageExpression").is_some_and(|m| m.trim().is_empty()) {
        return Err(fail("messageExpression must be non-empty if specified"));
    }
    let program = compile(&source).map_err(|e| fail(&format!("compilation failed: {e}")))?;
    let shape = shape_of(program.expression());
    shape.check().map_err(|e| fail(&e))?;
    let typed = self_schema(schema, root);
    fields(
        program.expression(),
        &mut vec![("self", Some(&typed)), ("oldSelf", Some(&typed))],
    )
    .map_err(|e| fail(&format!("compilation failed: {e}")))?;
    let uses_old_self = shape.idents.contains("oldSelf");
    let optional_old_self = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
    if optional_old_self && !uses_old_self {
        return Err(fail(
            "optionalOldSelf may only be set when the rule uses oldSelf",
        ));
    }
    let message_expression = match text("messageExpression").filter(|m| !m.trim().is_empty()) {
        Some(m) => {
            let p = compile(&m)
                .map_err(|e| fail(&format!("messageExpression compilation failed: {e}")))?;
            let s = shape_of(p.expression());
            s.check()
                .map_err(|e| fail(&format!("messageExpression: {e}")))?;
            fields(
                p.expression(),
                &mut vec![("self", Some(&typed)), ("oldSelf", Some(&typed))],
            )
            .map_err(|e| fail(&format!("messageExpression compilation failed: {e}")))?;
            Some(p)
        }
        None => None,
    };
    let reason = match text("reason").as_deref() {
        None | Some("FieldValueInvalid") => Reason::Invalid,
        Some("FieldValueForbidden") => Reason::Forbidden,
        Some("FieldValueRequired") => Reason::Required,
        Some("FieldValueDuplicate") => Reason::Duplicate,
        Some(other) => {
            return Err(fail(&format!(
                "reason: Unsupported value: {other:?}: supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
            )));
        }
    };
    let field_path = match text("fieldPath").filter(|p| !p.is_empty()) {
        Some(p) => Some(
            normalize_field_path(&p, schema).map_err(|e| fail(&format!("fieldPath {p:?}: {e}")))?,
        ),
        None => None,
    };
    Ok(Rule {
        message: text("message").filter(|m| !m.trim().is_empty()),
        source,
        program,
        message_expression,
        reason,
        field_path,
        uses_old_self,
        optional_old_self,
        nodes: shape.nodes,
        depth: shape.depth,
    })
}
