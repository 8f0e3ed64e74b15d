// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The schema's `x-kubernetes-validations` rules, evaluated as apiextensions-apiserver's
//! `pkg/apiserver/schema/cel` evaluates them for custom resources, on cel-rust (the `cel`
//! crate).
//!
//! - A rule attaches at any schema node; `self` is the value there (objects and maps as CEL
//!   maps, property names escaped as the API server escapes them: `__dash__`, `__dot__`,
//!   `__slash__`, `__underscores__`, `__{keyword}__`; `x-kubernetes-int-or-string` as `int`
//!   or `string`; `format: byte` as `bytes`, `date`/`date-time` as timestamps, `duration`
//!   as durations; at the root only `apiVersion`, `kind` and
//!   `metadata.name`/`generateName`), and the rule runs only where the value is present and
//!   not null.
//! - Failures: `message`, `messageExpression` (a string, falling back to the message on any
//!   error), `reason` (`FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired`,
//!   `FieldValueDuplicate`) and `fieldPath` (appended to the node's path), as the API
//!   server's causes word them (`spec: Invalid value: "object": <message>`).
//! - Transition rules (`oldSelf`) run on updates only, where the old object has a value at the
//!   correlatable path (object fields and map keys; `x-kubernetes-list-type: map` items by
//!   their keys; never items of other lists); `optionalOldSelf: true` runs them anyway with
//!   `oldSelf` an optional.
//! - Rules compile once per schema ([`Rules::compile`], cached by [`rules_for`]); a rule that
//!   does not parse, names a function or variable this module does not provide (the
//!   Kubernetes libraries `url`, `quantity`, `ip`, `cidr`, `format`, `authz`, `semver` …), or
//!   has a malformed `fieldPath`, or sits under `anyOf`/`oneOf`/`not` makes the kind fail to
//!   load with an error naming the rule and its schema path ([`check`]). Rules under `allOf`
//!   run at their node.
//! - Cost: cel-rust counts no evaluation cost, so the API server's exact runtime cost cannot
//!   be measured. Each call is refused beforehand when an upper bound of its cost, the rule's
//!   size times the number of values in `self` and `oldSelf` raised to the rule's
//!   comprehension nesting depth, passes the API server's per-call limit ([`PER_CALL_LIMIT`]),
//!   or the bounds of one object's calls pass its budget ([`RUNTIME_BUDGET`]); the
//!   CRD-creation-time estimate (from `maxItems`, `maxLength`, `maxProperties`) is not
//!   done. docs/apiserver.md says what that means.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, RwLock};

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::{Context, ExecutionError, Program, Value as Cel};
use serde_json::Value;

mod library;

use library::{ENV, context};

/// The largest cost one rule's evaluation may have, k8s.io/apiserver's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The cost all the rules of one object may add up to, k8s.io/apiserver's
/// `RuntimeCELCostBudget`.
pub const RUNTIME_BUDGET: u64 = 10_000_000;

/// What an evaluation collects: the causes, and the cost budget left.
struct Out {
    causes: Vec<(String, String)>,
    budget: u64,
}

/// The longest a `messageExpression`'s result may be (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The functions and member functions a rule may call: cel-rust's standard library, its
/// `strings` and `lists` extensions, and what this module adds from the Kubernetes `lists`
/// and `regex` libraries. Operators (`_==_`, `@in`, …) are always allowed.
const FUNCTIONS: &[&str] = &[
    // Standard library.
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "type",
    "dyn",
    "duration",
    "timestamp",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getFullYear",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getSeconds",
    "optional.of",
    "optional.none",
    "optional.ofNonZeroValue",
    "hasValue",
    "value",
    "or",
    "orValue",
    // The `strings` extension.
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "join",
    "strings.quote",
    "reverse",
    // The `lists` extension.
    "slice",
    "flatten",
    "distinct",
    "sort",
    "lists.range",
    // Added here: the Kubernetes `lists` and `regex` libraries.
    "isSorted",
    "sum",
    "min",
    "max",
    "find",
    "findAll",
];

/// The type names a rule may use as values (`type(self) == string`).
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// Namespaces of qualified function names (`optional.none()`).
const NAMESPACES: &[&str] = &["optional", "strings", "lists"];

/// One `x-kubernetes-validations` entry, compiled.
struct Rule {
    source: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    reason: Reason,
    /// The normalised `fieldPath` (`spec.replicas`, `labels[a.b]`), appended to the node's path.
    field_path: Option<String>,
    uses_old_self: bool,
    optional_old_self: bool,
    /// The rule's expression nodes, and how deeply its comprehensions nest: the cost bound.
    nodes: u64,
    depth: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// The compiled rules of a schema node and of the nodes under it that have any.
#[derive(Default)]
struct Node {
    rules: Vec<Rule>,
    properties: Vec<(String, Node)>,
    additional: Option<Box<Node>>,
    items: Option<Box<Node>>,
    all_of: Vec<Node>,
}

impl Node {
    fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
            && self.all_of.is_empty()
    }
}

/// The compiled `x-kubernetes-validations` of one schema, with the schema they came from.
pub struct Rules {
    schema: Value,
    root: Node,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules").finish_non_exhaustive()
    }
}

impl Rules {
    /// Compiles every rule of `schema` (a kind's `openAPIV3Schema`). Out: `None` when it has
    /// no rules. Errors: the first rule that does not compile, uses a function or variable
    /// that is not provided, or has a bad `reason` or `fieldPath`, named with its schema path
    /// (`openAPIV3Schema.properties[spec].x-kubernetes-validations[0]`), as the apiextensions
    /// server refuses such a CRD.
    pub fn compile(schema: &Value) -> Result<Option<Self>, String> {
        let root = compile_node(schema, schema, true, "openAPIV3Schema")?;
        Ok((!root.is_empty()).then(|| Self {
            schema: schema.clone(),
            root,
        }))
    }

    /// Evaluates the rules on `obj` (the whole object), with `old` the stored object on an
    /// update. Out: `(field, message)` causes in the API server's wording, empty when every
    /// rule holds.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<(String, String)> {
        let mut out = Out {
            causes: Vec::new(),
            budget: RUNTIME_BUDGET,
        };
        let _ = walk(&self.root, &self.schema, "", obj, old, false, &mut out);
        out.causes
    }
}

/// The compiled rules for `schema`, compiled on first use and kept for the process (the
/// server's kinds are few and fixed; a schema that changes is compiled anew). Errors: as
/// [`Rules::compile`].
pub fn rules_for(schema: &Value) -> Result<Option<Arc<Rules>>, String> {
    // Read on every write request, written once per schema: readers do not wait on each other.
    type Cache = RwLock<Vec<(Value, Option<Arc<Rules>>)>>;
    static CACHE: LazyLock<Cache> = LazyLock::new(RwLock::default);
    if let Some((_, rules)) = CACHE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(s, _)| s == schema)
    {
        return Ok(rules.clone());
    }
    let rules = Rules::compile(schema)?.map(Arc::new);
    let mut cache = CACHE.write().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= 256 {
        cache.remove(0);
    }
    cache.push((schema.clone(), rules.clone()));
    Ok(rules)
}

/// Compiles `schema`'s rules once, so that a kind whose rules do not compile fails to load
/// (as the apiextensions server refuses to create such a CRD). Errors: as [`Rules::compile`].
pub fn check(schema: Option<&Value>) -> Result<(), String> {
    match schema {
        Some(s) => rules_for(s).map(|_| ()),
        None => Ok(()),
    }
}

/// The rules of `schema` evaluated on `obj` (`old`: the stored object on an update). A
/// schema whose rules do not compile (a kind built without [`check`]) answers one cause
/// saying so, as the API server reports a rule compile error at validation. Out: causes.
pub fn validate(schema: Option<&Value>, obj: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    match rules_for(schema) {
        Ok(Some(rules)) => rules.validate(obj, old),
        Ok(None) => Vec::new(),
        Err(e) => vec![(
            "<nil>".into(),
            format!("Invalid value: \"object\": rule compiler initialization error: {e}"),
        )],
    }
}

/// The rules' causes after the schema's and metadata's `causes`, as the custom-resource
/// strategy runs them: not at all when a cause is of a blocking type (required, unsupported,
/// too long, too many, wrong type; one cause then says the rules were not checked), else
/// [`validate`]'s.
pub fn after_schema(
    schema: Option<&Value>,
    obj: &Value,
    old: Option<&Value>,
    causes: &[(String, String)],
) -> Vec<(String, String)> {
    let blocking = causes.iter().any(|(_, m)| {
        [
            "Required value",
            "Unsupported value",
            "Too long",
            "Too many",
        ]
        .iter()
        .any(|p| m.starts_with(p))
            || m.contains(" must be of type ")
    });
    if !blocking {
        return validate(schema, obj, old);
    }
    match rules_for_quiet(schema) {
        true => vec![(
            "<nil>".into(),
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
        )],
        false => Vec::new(),
    }
}

/// Whether `schema` has rules (or rules that do not compile).
fn rules_for_quiet(schema: Option<&Value>) -> bool {
    schema.is_some_and(|s| !matches!(rules_for(s), Ok(None)))
}

/// The rules of `schema` and under it; `spine` is the structural schema at the same place
/// (itself, except under `allOf`, whose entries may only add rules to the spine's fields).
fn compile_node(schema: &Value, spine: &Value, root: bool, path: &str) -> Result<Node, String> {
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

fn has_rules(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Object(m)) => {
            m.contains_key("x-kubernetes-validations") || m.values().any(|v| has_rules(Some(v)))
        }
        Some(Value::Array(a)) => a.iter().any(|v| has_rules(Some(v))),
        _ => false,
    }
}

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

/// What a compiled expression uses: its size, comprehension depth, functions and free names.
#[derive(Default)]
struct Shape {
    nodes: u64,
    depth: u32,
    functions: HashSet<String>,
    idents: HashSet<String>,
}

impl Shape {
    /// Errors: a function this module does not provide, or a name other than `self`,
    /// `oldSelf`, a comprehension variable or a type name.
    fn check(&self) -> Result<(), String> {
        let mut unknown: Vec<&String> = self
            .functions
            .iter()
            .filter(|f| !FUNCTIONS.contains(&f.as_str()))
            .collect();
        unknown.sort();
        if let Some(f) = unknown.first() {
            return Err(format!(
                "compilation failed: function {f:?} is not supported by this API server (docs/apiserver.md lists the CEL functions it provides)"
            ));
        }
        let mut names: Vec<&String> = self
            .idents
            .iter()
            .filter(|n| !matches!(n.as_str(), "self" | "oldSelf"))
            .filter(|n| !TYPE_NAMES.contains(&n.as_str()))
            .collect();
        names.sort();
        if let Some(n) = names.first() {
            return Err(format!("compilation failed: undeclared reference to {n:?}"));
        }
        Ok(())
    }
}

fn shape_of(expr: &IdedExpr) -> Shape {
    let mut s = Shape::default();
    visit(expr, &mut Vec::new(), 0, &mut s);
    s
}

fn visit(e: &IdedExpr, bound: &mut Vec<String>, depth: u32, s: &mut Shape) {
    s.nodes += 1;
    s.depth = s.depth.max(depth);
    match &e.expr {
        Expr::Call(c) => {
            let qualified = match c.target.as_deref().map(|t| &t.expr) {
                Some(Expr::Ident(ns))
                    if NAMESPACES.contains(&ns.as_str()) && !bound.contains(ns) =>
                {
                    Some(format!("{ns}.{}", c.func_name))
                }
                _ => None,
            };
            let name = qualified.clone().unwrap_or_else(|| c.func_name.clone());
            if !(name.starts_with('_')
                || name.starts_with('@')
                || name.starts_with('!')
                || name.starts_with('-'))
            {
                s.functions.insert(name);
            }
            if qualified.is_none()
                && let Some(t) = &c.target
            {
                visit(t, bound, depth, s);
            }
            for a in &c.args {
                visit(a, bound, depth, s);
            }
        }
        Expr::Comprehension(c) => {
            visit(&c.iter_range, bound, depth, s);
            visit(&c.accu_init, bound, depth, s);
            let n = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v) = &c.iter_var2 {
                bound.push(v.clone());
            }
            bound.push(c.accu_var.clone());
            // `cel.bind` iterates over no element: its step adds no depth.
            let iterates = !matches!(&c.iter_range.expr, Expr::List(l) if l.elements.is_empty());
            let inner = depth + u32::from(iterates);
            visit(&c.loop_cond, bound, inner, s);
            visit(&c.loop_step, bound, inner, s);
            bound.truncate(n);
            bound.push(c.accu_var.clone());
            visit(&c.result, bound, depth, s);
            bound.truncate(n);
        }
        Expr::Ident(name) => {
            if !bound.contains(name) {
                s.idents.insert(name.clone());
            }
        }
        Expr::List(l) => {
            for x in &l.elements {
                visit(x, bound, depth, s);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => {
                        visit(&me.key, bound, depth, s);
                        visit(&me.value, bound, depth, s);
                    }
                    EntryExpr::StructField(f) => visit(&f.value, bound, depth, s),
                }
            }
        }
        Expr::Struct(st) => {
            // Kubernetes declares no message types a rule could construct.
            s.functions
                .insert(format!("{} (a message literal)", st.type_name));
        }
        Expr::Select(sel) => visit(&sel.operand, bound, depth, s),
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// `schema` as rules see it: at the root with `apiVersion`, `kind` and `metadata` (`name`,
/// `generateName`) declared, as `WithTypeAndObjectMeta` declares them.
fn self_schema(schema: &Value, root: bool) -> Value {
    let mut s = schema.clone();
    if root && let Some(props) = s.get_mut("properties").and_then(Value::as_object_mut) {
        let string = serde_json::json!({"type": "string"});
        props.insert("apiVersion".into(), string.clone());
        props.insert("kind".into(), string.clone());
        props.insert(
            "metadata".into(),
            serde_json::json!({"type": "object", "properties": {"name": string, "generateName": string}}),
        );
    }
    s
}

/// The schema of what `e` selects, where it is known, checking every field selection on a
/// known object against its declared properties, as cel-go's type check refuses
/// `undefined field 'z'` when the CRD is created. `vars`: the names in scope and their schemas.
/// Errors: a selected field the object's schema does not declare.
fn fields<'e, 's>(
    e: &'e IdedExpr,
    vars: &mut Vec<(&'e str, Option<&'s Value>)>,
) -> Result<Option<&'s Value>, String> {
    let declared = |s: &'s Value| {
        (s.get("x-kubernetes-preserve-unknown-fields") != Some(&Value::Bool(true)))
            .then(|| s.get("properties").and_then(Value::as_object))
            .flatten()
    };
    let element = |s: Option<&'s Value>| {
        s.and_then(|s| {
            s.get("items")
                .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
        })
    };
    Ok(match &e.expr {
        Expr::Ident(name) => vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name.as_str())
            .and_then(|(_, s)| *s),
        Expr::Select(sel) => {
            let operand = fields(&sel.operand, vars)?;
            match operand {
                Some(s) => match declared(s) {
                    Some(props) => match props
                        .iter()
                        .find(|(k, _)| escape(k).as_deref() == Some(&sel.field))
                    {
                        Some((_, p)) => Some(p),
                        None => return Err(format!("undefined field '{}'", sel.field)),
                    },
                    None => s.get("additionalProperties").filter(|a| a.is_object()),
                },
                None => None,
            }
        }
        Expr::Call(c) => {
            let target = match &c.target {
                Some(t) => fields(t, vars)?,
                None => None,
            };
            let mut args = Vec::new();
            for a in &c.args {
                args.push(fields(a, vars)?);
            }
            match (c.func_name.as_str(), args.first()) {
                ("_[_]", Some(s)) => element(*s),
                _ => {
                    let _ = target;
                    None
                }
            }
        }
        Expr::Comprehension(c) => {
            let range = fields(&c.iter_range, vars)?;
            fields(&c.accu_init, vars)?;
            let n = vars.len();
            // Over a list the variable is an item; over a map it is a key (a string).
            let item = range.and_then(|r| r.get("items"));
            vars.push((c.iter_var.as_str(), item));
            if let Some(v2) = &c.iter_var2 {
                vars.push((v2.as_str(), None));
            }
            vars.push((c.accu_var.as_str(), None));
            fields(&c.loop_cond, vars)?;
            fields(&c.loop_step, vars)?;
            vars.truncate(n);
            vars.push((c.accu_var.as_str(), None));
            fields(&c.result, vars)?;
            vars.truncate(n);
            None
        }
        Expr::List(l) => {
            for x in &l.elements {
                fields(x, vars)?;
            }
            None
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => {
                        fields(&me.key, vars)?;
                        fields(&me.value, vars)?;
                    }
                    EntryExpr::StructField(f) => {
                        fields(&f.value, vars)?;
                    }
                }
            }
            None
        }
        Expr::Struct(_) | Expr::Literal(_) | Expr::Unspecified => None,
    })
}

/// `fieldPath` (`.spec.x`, `.labels['a.b']`, `['x']`) checked against `schema` and written as
/// the API server's field paths write it (`spec.x`, `labels[a.b]`), as `ValidFieldPath`
/// does. Errors: the path is malformed or names no field of the schema.
fn normalize_field_path(path: &str, schema: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut schema = schema;
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    let step = |name: String, out: &mut String, schema: &mut &Value| -> Result<(), String> {
        if let Some(p) = schema.get("properties").and_then(Value::as_object) {
            *schema = p.get(&name).ok_or("does not refer to a valid field")?;
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
        } else if let Some(a) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            *schema = a;
            out.push_str(&format!("[{name}]"));
        } else {
            return Err("does not refer to a valid field".into());
        }
        Ok(())
    };
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && !matches!(chars[j], '.' | '[' | ']') {
                    j += 1;
                }
                if j == start {
                    return Err("unexpected end of JSON path".into());
                }
                step(chars[start..j].iter().collect(), &mut out, &mut schema)?;
                i = j;
            }
            '[' => {
                if chars.get(i + 1) != Some(&'\'') {
                    return Err("expected single quoted string".into());
                }
                let mut j = i + 2;
                let mut name = String::new();
                while j < chars.len() && chars[j] != '\'' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    name.push(chars[j]);
                    j += 1;
                }
                if chars.get(j + 1) != Some(&']') {
                    return Err("expected ]".into());
                }
                step(name, &mut out, &mut schema)?;
                i = j + 2;
            }
            c => return Err(format!("expected [ or . but got: {c}")),
        }
    }
    Ok(out)
}

/// The child path `path.k` (`k` at the root).
fn child(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// Evaluates `node`'s rules on `v` (at `path`, `""` for the root) and walks down. Out: `Err(())` when the cost limit stopped
/// validation (no further rule runs, as the API server stops).
fn walk(
    node: &Node,
    schema: &Value,
    path: &str,
    v: &Value,
    old: Option<&Value>,
    parent_unchanged: bool,
    out: &mut Out,
) -> Result<(), ()> {
    if v.is_null() {
        return Ok(());
    }
    let old = old.filter(|o| !o.is_null());
    // Ratcheting (`CRDValidationRatcheting`): a value equal to its correlated old value, or
    // under an unchanged one, keeps passing the rules that do not use oldSelf.
    let unchanged = match old {
        Some(o) => o == v,
        None => parent_unchanged,
    };
    if !node.rules.is_empty() {
        eval_rules(node, schema, path, v, old, unchanged, out)?;
    }
    for sub in &node.all_of {
        walk(sub, schema, path, v, old, parent_unchanged, out)?;
    }
    match v {
        Value::Object(map) => {
            // Every map type (granular or atomic) correlates by key.
            for (k, sub) in &node.properties {
                if let Some(x) = map.get(k) {
                    let s = &schema["properties"][k];
                    walk(
                        sub,
                        s,
                        &child(path, k),
                        x,
                        old.and_then(|o| o.get(k)),
                        unchanged,
                        out,
                    )?;
                }
            }
            if let Some(sub) = &node.additional {
                let s = &schema["additionalProperties"];
                for (k, x) in map {
                    let p = format!("{}[{k}]", if path.is_empty() { "<nil>" } else { path });
                    walk(sub, s, &p, x, old.and_then(|o| o.get(k)), unchanged, out)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = &node.items {
                let s = &schema["items"];
                let keys: Option<Vec<&str>> = (schema.get("x-kubernetes-list-type")
                    == Some(&Value::String("map".into())))
                .then(|| {
                    schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default()
                });
                for (i, x) in items.iter().enumerate() {
                    let old_item = match (&keys, old.and_then(Value::as_array)) {
                        (Some(keys), Some(olds)) if !keys.is_empty() => olds
                            .iter()
                            .find(|o| keys.iter().all(|k| o.get(k) == x.get(k))),
                        _ => None,
                    };
                    let p = format!("{}[{i}]", if path.is_empty() { "<nil>" } else { path });
                    walk(sub, s, &p, x, old_item, unchanged, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The schema type the API server names in `Invalid value: "<type>"`.
fn type_of(schema: &Value) -> &str {
    // `""` for an `x-kubernetes-int-or-string` node, which declares no type.
    schema.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Upper bound of the values a comprehension may visit in `v`: every list item and map entry.
fn count(v: &Value) -> u64 {
    match v {
        Value::Array(a) => a.iter().map(|x| 1 + count(x)).sum(),
        Value::Object(m) => m.values().map(|x| 1 + count(x)).sum(),
        _ => 0,
    }
}

fn eval_rules(
    node: &Node,
    schema: &Value,
    path: &str,
    v: &Value,
    old: Option<&Value>,
    unchanged: bool,
    out: &mut Out,
) -> Result<(), ()> {
    let ty = type_of(schema);
    let root = path.is_empty();
    let field = if root { "<nil>" } else { path };
    let self_val = to_cel(schema, v, root);
    let old_val = old.map(|o| to_cel(schema, o, root));
    let values = 1 + count(v) + old.map_or(0, count);
    for rule in &node.rules {
        if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
            continue;
        }
        if unchanged && !rule.uses_old_self {
            continue;
        }
        let bound = (values as f64).powi(rule.depth as i32) * rule.nodes as f64;
        if bound > PER_CALL_LIMIT as f64 {
            out.causes.push((
                field.to_string(),
                format!(
                    "Invalid value: \"{ty}\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    error_string(rule)
                ),
            ));
            return Err(());
        }
        // The bounds of the object's calls add up against the whole object's budget.
        if bound > out.budget as f64 {
            out.causes.push((
                field.to_string(),
                format!("Invalid value: \"{ty}\": validation failed due to running out of cost budget, no further validation rules will be run"),
            ));
            return Err(());
        }
        out.budget -= bound as u64;
        let mut ctx = context();
        ctx.add_variable_from_value("self", self_val.clone());
        if rule.uses_old_self {
            let old = match (&old_val, rule.optional_old_self) {
                (Some(o), false) => o.clone(),
                (o, true) => optional(o.clone()),
                (None, false) => continue,
            };
            ctx.add_variable_from_value("oldSelf", old);
        }
        match guarded(|| rule.program.execute(&ctx)) {
            Ok(Cel::Bool(true)) => {}
            Ok(Cel::Bool(false)) => {
                let detail = rule
                    .message_expression
                    .as_ref()
                    .and_then(|m| message(m, &ctx))
                    .unwrap_or_else(|| match &rule.message {
                        Some(m) => m.trim().to_string(),
                        None => format!("failed rule: {}", rule.source.trim()),
                    });
                let at = match &rule.field_path {
                    // As `field.Path.Child` joins it: `spec.[a.b]` for a key of the node's map.
                    Some(p) if path.is_empty() => p.clone(),
                    Some(p) => format!("{path}.{p}"),
                    None => field.to_string(),
                };
                let body = match rule.reason {
                    Reason::Invalid => format!("Invalid value: \"{ty}\": {detail}"),
                    Reason::Forbidden => format!("Forbidden: {detail}"),
                    Reason::Required => format!("Required value: {detail}"),
                    Reason::Duplicate => format!("Duplicate value: \"{ty}\""),
                };
                out.causes.push((at, body));
            }
            Ok(other) => out.causes.push((
                field.to_string(),
                format!(
                    "Invalid value: \"{ty}\": rule did not evaluate to a bool but to {:?} evaluating rule: {}",
                    other.type_of().to_string(),
                    error_string(rule)
                ),
            )),
            Err(ExecutionError::InternalError(e)) => out.causes.push((
                field.to_string(),
                format!(
                    "Internal error: {e} evaluating rule: {}",
                    error_string(rule)
                ),
            )),
            Err(e) if overload_error(&e).is_some() => out.causes.push((
                field.to_string(),
                format!(
                    "Invalid value: \"{ty}\": '{}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                    overload_error(&e).unwrap_or_default(),
                    error_string(rule)
                ),
            )),
            Err(e) => out.causes.push((
                field.to_string(),
                format!(
                    "Invalid value: \"{ty}\": {} evaluating rule: {}",
                    lower_first(&e.to_string()),
                    error_string(rule)
                ),
            )),
        }
    }
    Ok(())
}

/// `source` compiled in [`ENV`]. Errors: the parser's, or its panic (which an odd input must
/// not turn into a crash of the loader).
fn compile(source: &str) -> Result<Program, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ENV.compile(source))) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("the CEL parser failed on this expression".into()),
    }
}

/// An evaluation, its panic (an interpreter bug an odd object could reach) turned into an
/// internal error, so that a request is answered instead of its task aborted.
fn guarded(f: impl FnOnce() -> Result<Cel, ExecutionError>) -> Result<Cel, ExecutionError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ExecutionError::InternalError(
            "the CEL interpreter failed".into(),
        ))
    })
}

/// An error of arguments no overload accepts, in cel-go's words (`found no matching overload
/// for '_+_' applied to '(int, string)'`); `None` for other errors.
fn overload_error(e: &ExecutionError) -> Option<String> {
    let (op, a, b) = match e {
        ExecutionError::NoSuchOverload(o) => return Some(o.to_string()),
        ExecutionError::UnsupportedBinaryOperator(op, a, b) => (*op, a, b),
        _ => return None,
    };
    let op = match op {
        "add" => "_+_",
        "sub" => "_-_",
        "mul" => "_*_",
        "div" => "_/_",
        "rem" => "_%_",
        other => other,
    };
    Some(format!(
        "found no matching overload for '{op}' applied to '({}, {})'",
        a.type_of(),
        b.type_of()
    ))
}

/// The API server's errors start in lower case (`no such key: x`).
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The rule as errors name it: its message when it has one, else its text.
fn error_string(rule: &Rule) -> String {
    match &rule.message {
        Some(m) => m.trim().to_string(),
        None => rule.source.trim().to_string(),
    }
}

/// A `messageExpression`'s result, or `None` (the rule's message is used) when it fails, is
/// not a string, is empty, too long, or has a line break, as `evalMessageExpression` decides.
fn message(p: &Program, ctx: &Context) -> Option<String> {
    match guarded(|| p.execute(ctx)) {
        Ok(Cel::String(s)) => {
            let t = s.trim();
            (!t.is_empty() && t.len() <= MAX_MESSAGE_BYTES && !t.contains('\n'))
                .then(|| t.to_string())
        }
        _ => None,
    }
}

/// `optional.of(v)` or `optional.none()`, made by the environment's own functions.
fn optional(v: Option<Cel>) -> Cel {
    static OF: LazyLock<Program> =
        LazyLock::new(|| ENV.compile("optional.of(v)").expect("optional.of compiles"));
    static NONE: LazyLock<Program> = LazyLock::new(|| {
        ENV.compile("optional.none()")
            .expect("optional.none compiles")
    });
    let mut ctx = Context::with_env(ENV.clone());
    let r = match v {
        Some(v) => {
            ctx.add_variable_from_value("v", v);
            OF.execute(&ctx)
        }
        None => NONE.execute(&ctx),
    };
    r.unwrap_or(Cel::Null)
}

/// A `date-time`, `date` (midnight UTC) or `duration` string as the CEL timestamp or duration
/// it is to rules, made by the environment's own `timestamp()` and `duration()`; `None` when
/// it does not parse (the schema's format check reports it).
fn time_value(format: &str, s: &str) -> Option<Cel> {
    static TIMESTAMP: LazyLock<Option<Program>> = LazyLock::new(|| compile("timestamp(v)").ok());
    static DURATION: LazyLock<Option<Program>> = LazyLock::new(|| compile("duration(v)").ok());
    let (program, text) = match format {
        "date" => (&*TIMESTAMP, format!("{s}T00:00:00Z")),
        "date-time" => (&*TIMESTAMP, s.to_string()),
        _ => (&*DURATION, s.to_string()),
    };
    let mut ctx = Context::with_env(ENV.clone());
    ctx.add_variable_from_value("v", Cel::from(text));
    guarded(|| program.as_ref().map_or(Ok(Cel::Null), |p| p.execute(&ctx)))
        .ok()
        .filter(|v| !matches!(v, Cel::Null))
}

/// A property name as CEL sees it (`foo-bar` → `foo__dash__bar`), as the API server escapes
/// it; `None` when it cannot be escaped (the property is then not visible to rules).
pub fn escape(name: &str) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if KEYWORDS.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return None,
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    Some(
        name.replace("__", "__underscores__")
            .replace('.', "__dot__")
            .replace('-', "__dash__")
            .replace('/', "__slash__"),
    )
}

/// `v` as CEL sees it under `schema`: numbers of type `number` as doubles, integers as
/// ints, `format: byte` strings as bytes, `date`/`date-time`/`duration` strings as timestamps
/// and durations, objects with properties as maps of escaped names
/// (null fields left out, as absent), maps as maps, lists as lists.
fn to_cel(schema: &Value, v: &Value, root: bool) -> Cel {
    let ty = schema.get("type").and_then(Value::as_str);
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if ty == Some("number") {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => match schema.get("format").and_then(Value::as_str) {
            Some("byte") => {
                use base64::Engine as _;
                match base64::engine::general_purpose::STANDARD.decode(s) {
                    Ok(b) => Cel::Bytes(Arc::new(b)),
                    Err(_) => Cel::from(s.as_str()),
                }
            }
            Some(f @ ("date-time" | "date" | "duration")) => {
                time_value(f, s).unwrap_or_else(|| Cel::from(s.as_str()))
            }
            _ => Cel::from(s.as_str()),
        },
        Value::Array(a) => {
            let items = schema.get("items").unwrap_or(&Value::Null);
            Cel::List(Arc::new(
                a.iter().map(|x| to_cel(items, x, false)).collect(),
            ))
        }
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            let mut out = std::collections::HashMap::new();
            for (k, x) in m {
                if root && k == "metadata" {
                    // At the root, rules see only the name and generateName of metadata.
                    let mut meta = std::collections::HashMap::new();
                    for f in ["name", "generateName"] {
                        if let Some(Value::String(s)) = x.get(f) {
                            meta.insert(f.to_string(), Cel::from(s.as_str()));
                        }
                    }
                    out.insert("metadata".to_string(), Cel::from(meta));
                    continue;
                }
                match (props, extra) {
                    (Some(p), _) => {
                        if x.is_null() {
                            continue;
                        }
                        let sub = p.get(k).unwrap_or(&Value::Null);
                        if let Some(name) = escape(k) {
                            out.insert(name, to_cel(sub, x, false));
                        }
                    }
                    (None, Some(e)) => {
                        out.insert(k.clone(), to_cel(e, x, false));
                    }
                    (None, None) => {
                        out.insert(k.clone(), to_cel(&Value::Null, x, false));
                    }
                }
            }
            Cel::from(out)
        }
    }
}

#[cfg(test)]
mod tests;
