// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! What a rule's expression uses, read off its syntax tree once at compile time: its size
//! and how deeply its comprehensions nest (the cost bound `eval.rs` checks before each call),
//! and the functions and free names it refers to, checked against what this module provides
//! (cel-rust's standard library and extensions, and `library.rs`).

use std::collections::HashSet;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};

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

/// What a compiled expression uses: its size, comprehension depth, functions and free names.
#[derive(Default)]
pub(super) struct Shape {
    pub(super) nodes: u64,
    pub(super) depth: u32,
    functions: HashSet<String>,
    pub(super) idents: HashSet<String>,
}

impl Shape {
    /// Errors: a function this module does not provide, or a name other than `self`,
    /// `oldSelf`, a comprehension variable or a type name.
    pub(super) fn check(&self) -> Result<(), String> {
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

/// The [`Shape`] of a compiled expression.
pub(super) fn shape_of(expr: &IdedExpr) -> Shape {
    let mut s = Shape::default();
    visit(expr, &mut Vec::new(), 0, &mut s);
    s
}

/// Adds `e` and what is under it to `s`; `bound`: the comprehension variables in scope,
/// `depth`: how many iterating comprehensions enclose `e`.
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
