// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Field names and paths checked against the schema: the fields a rule selects (refused when
//! the object's schema does not declare them, as cel-go's type check refuses them), a rule's
//! `fieldPath` in the API server's notation, and the paths causes are reported at.

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value;

use super::value::escape;

/// `schema` as rules see it: at the root with `apiVersion`, `kind` and `metadata` (`name`,
/// `generateName`) declared, as `WithTypeAndObjectMeta` declares them.
pub(super) fn self_schema(schema: &Value, root: bool) -> Value {
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
pub(super) fn fields<'e, 's>(
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
pub(super) fn normalize_field_path(path: &str, schema: &Value) -> Result<String, String> {
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
pub(super) fn child(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}
