// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The rules of one schema node evaluated on one value: the cost bound checked first, then
//! each rule run and its failure, wrong result or error worded as the API server words the
//! cause.

use cel::{Context, ExecutionError, Program, Value as Cel};
use serde_json::Value;

use super::PER_CALL_LIMIT;
use super::compile::{Node, Reason, Rule};
use super::guard::guarded;
use super::library::context;
use super::value::{optional, to_cel};

/// What an evaluation collects: the causes, and the cost budget left.
pub(super) struct Out {
    pub(super) causes: Vec<(String, String)>,
    pub(super) budget: u64,
}

/// The longest a `messageExpression`'s result may be (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

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

/// Runs `node`'s rules on `v` at `path` (`old`: the correlated old value; `unchanged`: `v`
/// equals it or sits under an unchanged value, so only transition rules run), pushing causes
/// and spending budget in `out`. Out: `Err(())` when the cost limit or budget stopped
/// validation.
pub(super) fn eval_rules(
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
