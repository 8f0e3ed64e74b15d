//! Static evaluation of the small Rust expressions attribute values and default functions are
//! written with: literals, negation, `&x`, arrays and `vec![…]`, `String::from`, `.to_string()`
//! / `.into()` / `.to_owned()`, `Some(x)` / `None`, consts and statics, zero-argument
//! functions whose body is such an expression, `concat!` and `serde_json::json!`.
//!
//! What cannot be evaluated is an error naming the expression, so rsbuilder never guesses.

use serde_json::Value;

use super::resolve::{Crate, LocalValue, ModId};

/// Evaluates `expr` (written in module `m`) to the JSON value its serialization would give.
pub fn eval(krate: &Crate<'_>, m: ModId, expr: &syn::Expr) -> Result<Value, String> {
    eval_depth(krate, m, expr, 0)
}

fn unsupported(expr: &dyn quote::ToTokens) -> String {
    let text = quote::ToTokens::to_token_stream(expr).to_string();
    format!("cannot evaluate `{text}` statically")
}

/// A literal's JSON value (integers stay integers, float literals become floats).
pub fn lit_value(lit: &syn::Lit) -> Result<Value, String> {
    Ok(match lit {
        syn::Lit::Str(s) => Value::String(s.value()),
        syn::Lit::Char(c) => Value::String(c.value().to_string()),
        syn::Lit::Bool(b) => Value::Bool(b.value),
        syn::Lit::Int(i) => {
            if matches!(i.suffix(), "f32" | "f64") {
                let f: f64 = i.base10_parse().map_err(|e| e.to_string())?;
                Value::from(f)
            } else if let Ok(v) = i.base10_parse::<i64>() {
                Value::from(v)
            } else {
                Value::from(i.base10_parse::<u64>().map_err(|e| e.to_string())?)
            }
        }
        syn::Lit::Float(f) => {
            let v: f64 = f.base10_parse().map_err(|e| e.to_string())?;
            Value::from(v)
        }
        other => return Err(unsupported(other)),
    })
}

fn eval_depth(
    krate: &Crate<'_>,
    m: ModId,
    expr: &syn::Expr,
    depth: usize,
) -> Result<Value, String> {
    if depth > 32 {
        return Err(unsupported(expr));
    }
    let recurse = |e: &syn::Expr| eval_depth(krate, m, e, depth + 1);
    match expr {
        syn::Expr::Lit(l) => lit_value(&l.lit),
        syn::Expr::Paren(p) => recurse(&p.expr),
        syn::Expr::Group(g) => recurse(&g.expr),
        syn::Expr::Reference(r) => recurse(&r.expr),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match recurse(&u.expr)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Value::from(-i))
                } else {
                    Ok(Value::from(-n.as_f64().unwrap_or_default()))
                }
            }
            _ => Err(unsupported(expr)),
        },
        syn::Expr::Array(a) => a
            .elems
            .iter()
            .map(recurse)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        syn::Expr::Tuple(t) if t.elems.is_empty() => Ok(Value::Null),
        syn::Expr::Tuple(t) => t
            .elems
            .iter()
            .map(recurse)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        syn::Expr::Block(b) => block_value(krate, m, &b.block, depth + 1),
        syn::Expr::Return(r) => match &r.expr {
            Some(e) => recurse(e),
            None => Ok(Value::Null),
        },
        syn::Expr::MethodCall(mc) => {
            let name = mc.method.to_string();
            match name.as_str() {
                "to_string" | "to_owned" | "into" | "clone" | "to_vec" | "into_owned"
                    if mc.args.is_empty() =>
                {
                    recurse(&mc.receiver)
                }
                _ => Err(unsupported(expr)),
            }
        }
        syn::Expr::Call(c) => {
            let syn::Expr::Path(func) = &*c.func else {
                return Err(unsupported(expr));
            };
            let segs: Vec<String> = func
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let last = segs.last().map(String::as_str).unwrap_or_default();
            let prev = segs.len().checked_sub(2).map(|i| segs[i].as_str());
            match (prev, last, c.args.len()) {
                (_, "Some", 1)
                | (Some("Box" | "Arc" | "Rc"), "new", 1)
                | (Some("String"), "from", 1) => recurse(&c.args[0]),
                (Some("String"), "new", 0) => Ok(Value::String(String::new())),
                (Some("Vec" | "VecDeque" | "BTreeSet" | "HashSet"), "new", 0) => {
                    Ok(Value::Array(Vec::new()))
                }
                (Some("BTreeMap" | "HashMap"), "new", 0) => Ok(Value::Object(Default::default())),
                (_, _, 0) => match krate.resolve_value(m, &func.path) {
                    Some((fm, v)) => match v.body() {
                        Some(b) => block_value(krate, fm, b, depth + 1),
                        None => Err(unsupported(expr)),
                    },
                    _ => Err(unsupported(expr)),
                },
                _ => Err(unsupported(expr)),
            }
        }
        syn::Expr::Path(p) => {
            if p.path.is_ident("None") {
                return Ok(Value::Null);
            }
            match krate.resolve_value(m, &p.path) {
                Some((cm, LocalValue::Const(c))) => eval_depth(krate, cm, &c.expr, depth + 1),
                Some((cm, LocalValue::Static(s))) => eval_depth(krate, cm, &s.expr, depth + 1),
                _ => Err(unsupported(expr)),
            }
        }
        syn::Expr::Macro(mac) => macro_value(krate, m, &mac.mac, depth),
        _ => Err(unsupported(expr)),
    }
}

/// The value of a block whose only statement is its tail expression (or a `return`).
pub fn block_value(
    krate: &Crate<'_>,
    m: ModId,
    block: &syn::Block,
    depth: usize,
) -> Result<Value, String> {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => eval_depth(krate, m, e, depth + 1),
        [syn::Stmt::Expr(e @ syn::Expr::Return(_), Some(_))] => eval_depth(krate, m, e, depth + 1),
        [syn::Stmt::Macro(sm)] => macro_value(krate, m, &sm.mac, depth),
        _ => Err(unsupported(block)),
    }
}

fn macro_value(
    krate: &Crate<'_>,
    m: ModId,
    mac: &syn::Macro,
    depth: usize,
) -> Result<Value, String> {
    let name = mac
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    match name.as_str() {
        "vec" => {
            let elems = mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .map_err(|_| unsupported(mac))?;
            elems
                .iter()
                .map(|e| eval_depth(krate, m, e, depth + 1))
                .collect::<Result<_, _>>()
                .map(Value::Array)
        }
        "concat" => {
            let elems = mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .map_err(|_| unsupported(mac))?;
            let mut out = String::new();
            for e in &elems {
                match eval_depth(krate, m, e, depth + 1)? {
                    Value::String(s) => out.push_str(&s),
                    other => out.push_str(&other.to_string()),
                }
            }
            Ok(Value::String(out))
        }
        "json" => json_tokens(&mac.tokens),
        _ => Err(unsupported(mac)),
    }
}

/// JSON written as `serde_json::json!` tokens (also used for schemars `extend` values).
pub fn json_tokens(tokens: &proc_macro2::TokenStream) -> Result<Value, String> {
    let text = tokens.to_string();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return Ok(v);
    }
    // Rust literal forms that are not JSON (raw strings, suffixed numbers) go through syn.
    if let Ok(expr) = syn::parse2::<syn::Expr>(tokens.clone()) {
        let empty = super::resolve::Crate::default();
        if let Ok(v) = eval_tokens_expr(&empty, &expr) {
            return Ok(v);
        }
    }
    Err(format!("cannot evaluate `{text}` as JSON statically"))
}

fn eval_tokens_expr(krate: &Crate<'_>, expr: &syn::Expr) -> Result<Value, String> {
    if krate.modules.is_empty() {
        // Only literal forms: evaluate without module context.
        return match expr {
            syn::Expr::Lit(l) => lit_value(&l.lit),
            syn::Expr::Unary(_)
            | syn::Expr::Array(_)
            | syn::Expr::Reference(_)
            | syn::Expr::Paren(_) => literal_only(expr),
            _ => Err(unsupported(expr)),
        };
    }
    Err(unsupported(expr))
}

fn literal_only(expr: &syn::Expr) -> Result<Value, String> {
    match expr {
        syn::Expr::Lit(l) => lit_value(&l.lit),
        syn::Expr::Paren(p) => literal_only(&p.expr),
        syn::Expr::Reference(r) => literal_only(&r.expr),
        syn::Expr::Array(a) => a
            .elems
            .iter()
            .map(literal_only)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match literal_only(&u.expr)? {
            Value::Number(n) => Ok(n
                .as_i64()
                .map(|i| Value::from(-i))
                .unwrap_or_else(|| Value::from(-n.as_f64().unwrap_or_default()))),
            _ => Err(unsupported(expr)),
        },
        _ => Err(unsupported(expr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::source::SourceSet;
    use std::path::Path;

    #[test]
    fn evaluates_literals_consts_and_simple_functions() {
        let set = SourceSet {
            files: vec![SourceSet::parse_text(
                Path::new("x.rs"),
                "const N: i32 = 3; fn name() -> String { \"db\".to_string() } fn list() -> Vec<String> { vec![String::from(\"a\"), name()] } fn bad() -> i32 { let x = 1; x }".into(),
            )
            .unwrap()],
        };
        let k = Crate::build(&set);
        let e = |s: &str| eval(&k, 0, &syn::parse_str(s).unwrap());
        assert_eq!(e("-5").unwrap(), serde_json::json!(-5));
        assert_eq!(e("1.5").unwrap(), serde_json::json!(1.5));
        assert_eq!(e("&\"x\"").unwrap(), serde_json::json!("x"));
        assert_eq!(e("N").unwrap(), serde_json::json!(3));
        assert_eq!(e("list()").unwrap(), serde_json::json!(["a", "db"]));
        assert_eq!(e("None").unwrap(), Value::Null);
        assert!(e("bad()").unwrap_err().contains("cannot evaluate"));
        assert_eq!(
            json_tokens(&"{\"a\": [1, true]}".parse().unwrap()).unwrap(),
            serde_json::json!({"a": [1, true]})
        );
        assert_eq!(
            json_tokens(&"true".parse().unwrap()).unwrap(),
            serde_json::json!(true)
        );
    }
}
