//! `#[schemars(schema_with = "path")]` functions that build their schema from literals, run
//! statically. schemars_derive wraps the function in a type whose `json_schema` calls it and
//! which is always inlined, so the field's schema is exactly the function's return value
//! (before the field's own attributes apply).
//!
//! The bodies rsbuilder runs are straight-line code over one schema value:
//!
//! - the schema: `json_schema!({...})` / `json_schema!(true)`, `Schema::try_from(json!(...))`,
//!   `serde_json::from_value(json!(...))` (each with `.unwrap()` or `.expect(..)`),
//!   `json!(...).try_into()`, `generator.subschema_for::<T>()`;
//! - `let [mut] name = <schema>;`, then `name.insert("key".into(), <value>)`,
//!   `name.ensure_object().insert(...)`, `name.remove("key")`, and `name` as the result;
//! - values: `json!(...)` and the literal spellings `"text".into()`, `true.into()`.
//!
//! Inside `json!`, keys are string literals and values are JSON-shaped: objects, arrays,
//! `null`, `true`, `false`, string literals, and number literals typed as rustc types them
//! (unsuffixed integers are `i32`, unsuffixed floats `f64`, `f32` widened as serde_json
//! widens it). Anything else (a call, a variable, a `const`, a branch) is left to the
//! compiler: [`Cause::NeedsCompile`](crate::manifests::diag::Cause::NeedsCompile), with the
//! expression named.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens as _;
use schemars::Schema;
use serde_json::{Map, Number, Value};
use syn::spanned::Spanned;

use super::{Deriver, R};
use crate::manifests::crd::known::Eval;
use crate::manifests::crd::resolve::{LocalValue, ModId};

/// Why a body cannot be run: the span and the expression, for the diagnostic.
struct Stop {
    span: proc_macro2::Span,
    what: String,
}

type Run<T> = Result<T, Stop>;

fn stop(at: &dyn quote::ToTokens, why: &str) -> Stop {
    let text = at.to_token_stream().to_string();
    let text = if text.chars().count() > 120 {
        format!("{}…", text.chars().take(117).collect::<String>())
    } else {
        text
    };
    Stop {
        span: at.span(),
        what: format!("{why}: `{text}`"),
    }
}

impl Deriver<'_, '_> {
    /// The schema of `#[schemars(schema_with = "path")]`, written in module `m`: the
    /// function's body run as described in the module docs. Errors: a function rsbuilder does
    /// not find in the sources, or a body it cannot run, are recorded as
    /// [`Cause::NeedsCompile`](crate::manifests::diag::Cause::NeedsCompile) (the probe
    /// compiles the kind).
    pub(super) fn schema_fn(&mut self, m: ModId, path: &syn::Path) -> R<Eval> {
        let text = quote::ToTokens::to_token_stream(path)
            .to_string()
            .replace(' ', "");
        let help = Some(
            "rsbuilder runs schema_with functions that build a literal schema (json_schema!, \
             json!, subschema_for::<T>() with insert/remove of literal keys); with \
             `--evaluate auto` (the default) the kind is compiled instead"
                .to_string(),
        );
        let func =
            match self.krate.resolve_value(m, path) {
                Some((fm, LocalValue::Fn(f))) if f.sig.generics.params.is_empty() => (fm, f),
                _ => return Err(self.undecidable(
                    m,
                    path.span(),
                    format!(
                        "`schema_with = \"{text}\"` names a function rsbuilder does not find as a \
                         plain `fn` in the given sources"
                    ),
                    help,
                )),
            };
        let (fm, f) = func;
        let param = f.sig.inputs.first().and_then(|a| match a {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        });
        match self.run_block(fm, &f.block, param.as_deref()) {
            Ok(schema) => Ok(Eval::plain(schema)),
            Err(Ok(s)) => Err(self.undecidable(
                fm,
                s.span,
                format!(
                    "`schema_with = \"{text}\"`: rsbuilder cannot run this statically ({})",
                    s.what
                ),
                help,
            )),
            Err(Err(failed)) => Err(failed),
        }
    }

    /// Runs the function body; `Err(Ok(stop))` where it cannot, `Err(Err(_))` where a
    /// `subschema_for` type failed (its diagnostics are recorded).
    fn run_block(
        &mut self,
        m: ModId,
        block: &syn::Block,
        param: Option<&str>,
    ) -> Result<Schema, Result<Stop, super::Failed>> {
        let mut var: Option<(String, Schema)> = None;
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                syn::Stmt::Local(l) => {
                    let name = match &l.pat {
                        syn::Pat::Ident(p) if p.subpat.is_none() => p.ident.to_string(),
                        syn::Pat::Type(t) => match &*t.pat {
                            syn::Pat::Ident(p) => p.ident.to_string(),
                            other => return Err(Ok(stop(other, "a pattern"))),
                        },
                        other => return Err(Ok(stop(other, "a pattern"))),
                    };
                    let Some(init) = &l.init else {
                        return Err(Ok(stop(l, "a `let` without a value")));
                    };
                    if init.diverge.is_some() {
                        return Err(Ok(stop(l, "`let ... else`")));
                    }
                    if var.is_some() {
                        return Err(Ok(stop(l, "a second binding")));
                    }
                    let s = self.schema_expr(m, &init.expr, param)?;
                    var = Some((name, s));
                }
                syn::Stmt::Expr(e, semi) => {
                    if last && semi.is_none() {
                        return match (e, &var) {
                            (syn::Expr::Path(p), Some((name, _))) if p.path.is_ident(name) => {
                                Ok(var.take().expect("matched").1)
                            }
                            _ if var.is_none() => self.schema_expr(m, e, param),
                            _ => Err(Ok(stop(e, "a result other than the schema variable"))),
                        };
                    }
                    let Some((name, schema)) = &mut var else {
                        return Err(Ok(stop(e, "a statement")));
                    };
                    mutate(name, schema, e).map_err(Ok)?;
                }
                other => return Err(Ok(stop(other, "an item or macro statement"))),
            }
        }
        Err(Ok(stop(block, "a body without a result")))
    }

    /// A schema-valued expression.
    fn schema_expr(
        &mut self,
        m: ModId,
        e: &syn::Expr,
        param: Option<&str>,
    ) -> Result<Schema, Result<Stop, super::Failed>> {
        match e {
            syn::Expr::Macro(mac) if is_macro(&mac.mac, "json_schema") => {
                let v = json_tokens(mac.mac.tokens.clone()).map_err(Ok)?;
                to_schema(v, e).map_err(Ok)
            }
            // `X.unwrap()` / `X.expect("..")` of a conversion that cannot fail on a literal
            // object or bool.
            syn::Expr::MethodCall(mc)
                if (mc.method == "unwrap" && mc.args.is_empty())
                    || (mc.method == "expect" && mc.args.len() == 1) =>
            {
                let v = fallible_conversion(&mc.receiver).map_err(Ok)?;
                to_schema(v, e).map_err(Ok)
            }
            syn::Expr::MethodCall(mc) if mc.method == "subschema_for" => {
                let receiver_ok = matches!(&*mc.receiver, syn::Expr::Path(p)
                    if param.is_some_and(|name| p.path.is_ident(name)));
                let ty = mc.turbofish.as_ref().and_then(|t| match t.args.first() {
                    Some(syn::GenericArgument::Type(ty)) if t.args.len() == 1 => Some(ty),
                    _ => None,
                });
                match (receiver_ok, ty) {
                    (true, Some(ty)) => self.ty(m, ty).map(|e| e.schema).map_err(Err),
                    _ => Err(Ok(stop(e, "a call"))),
                }
            }
            syn::Expr::Paren(p) => self.schema_expr(m, &p.expr, param),
            _ => Err(Ok(stop(e, "an expression"))),
        }
    }
}

/// `Schema::try_from(json!(..))`, `serde_json::from_value(json!(..))`, `json!(..).try_into()`:
/// the literal value.
fn fallible_conversion(e: &syn::Expr) -> Run<Value> {
    match e {
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(p) = &*c.func else {
                return Err(stop(e, "a call"));
            };
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            match segs.as_slice() {
                [.., "Schema", "try_from"] | ["serde_json", "from_value"] | ["from_value"] => {
                    json_value(&c.args[0])
                }
                _ => Err(stop(e, "a call")),
            }
        }
        syn::Expr::MethodCall(mc) if mc.method == "try_into" && mc.args.is_empty() => {
            json_value(&mc.receiver)
        }
        _ => Err(stop(e, "an expression")),
    }
}

/// A schema from a JSON value as `Schema::try_from` makes one: objects and bools only.
fn to_schema(v: Value, at: &dyn quote::ToTokens) -> Run<Schema> {
    Schema::try_from(v).map_err(|_| stop(at, "a schema that is neither an object nor a bool"))
}

/// `name.insert(key, value)`, `name.ensure_object().insert(key, value)`, `name.remove(key)`.
fn mutate(name: &str, schema: &mut Schema, e: &syn::Expr) -> Run<()> {
    let syn::Expr::MethodCall(mc) = e else {
        return Err(stop(e, "a statement"));
    };
    let on_var = |r: &syn::Expr| matches!(r, syn::Expr::Path(p) if p.path.is_ident(name));
    let target_ok = on_var(&mc.receiver)
        || matches!(&*mc.receiver, syn::Expr::MethodCall(inner)
            if inner.method == "ensure_object" && inner.args.is_empty() && on_var(&inner.receiver));
    if !target_ok {
        return Err(stop(e, "a call on something other than the schema"));
    }
    match (mc.method.to_string().as_str(), mc.args.len()) {
        ("insert", 2) => {
            let key = string_key(&mc.args[0])?;
            let value = json_value(&mc.args[1])?;
            // `Schema::insert` and `ensure_object().insert` both turn a bool schema into an
            // object first (`false` becomes `{"not": {}}`).
            schema.ensure_object().insert(key, value);
            Ok(())
        }
        ("remove", 1) => {
            let key = string_key(&mc.args[0])?;
            if let Some(o) = schema.as_object_mut() {
                o.remove(&key);
            }
            Ok(())
        }
        _ => Err(stop(e, "a method")),
    }
}

/// `"key"`, `"key".into()`, `"key".to_string()`, `"key".to_owned()`, `String::from("key")`.
fn string_key(e: &syn::Expr) -> Run<String> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.value()),
        syn::Expr::Reference(r) => string_key(&r.expr),
        syn::Expr::MethodCall(mc)
            if mc.args.is_empty()
                && ["into", "to_string", "to_owned"].contains(&mc.method.to_string().as_str()) =>
        {
            string_key(&mc.receiver)
        }
        syn::Expr::Call(c) if c.args.len() == 1 && is_path(&c.func, &["String", "from"]) => {
            string_key(&c.args[0])
        }
        _ => Err(stop(e, "a key that is not a string literal")),
    }
}

/// A `serde_json::Value` written as `json!(...)` or a literal's `.into()`.
fn json_value(e: &syn::Expr) -> Run<Value> {
    match e {
        syn::Expr::Macro(mac) if is_macro(&mac.mac, "json") => json_tokens(mac.mac.tokens.clone()),
        syn::Expr::MethodCall(mc) if mc.method == "into" && mc.args.is_empty() => {
            literal(&mc.receiver)
        }
        _ => Err(stop(e, "a value that is not json!(...) or a literal")),
    }
}

fn is_path(e: &syn::Expr, tail: &[&str]) -> bool {
    let syn::Expr::Path(p) = e else { return false };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segs.len() >= tail.len() && segs[segs.len() - tail.len()..] == *tail
}

/// `name!`, `schemars::name!` or `serde_json::name!`.
fn is_macro(mac: &syn::Macro, name: &str) -> bool {
    let segs: Vec<String> = mac
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segs.as_slice() {
        [n] => n == name,
        [k, n] => n == name && (k == "schemars" || k == "serde_json"),
        _ => false,
    }
}

/// The value `json!` builds from `tokens`, for JSON-shaped input with literal leaves.
fn json_tokens(tokens: TokenStream) -> Run<Value> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    json_trees(&trees, &tokens_of(&trees))
}

fn tokens_of(trees: &[TokenTree]) -> TokenStream {
    trees.iter().cloned().collect()
}

fn json_trees(trees: &[TokenTree], whole: &TokenStream) -> Run<Value> {
    match trees {
        [] => Err(stop(whole, "an empty value")),
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Brace => {
            let mut map = Map::new();
            for entry in split_commas(g.stream()) {
                let colon = entry
                    .iter()
                    .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'));
                let Some(colon) = colon else {
                    return Err(stop(&tokens_of(&entry), "an object entry without `:`"));
                };
                // `::` in a key would be a path: only a single string literal is a key here.
                let key = match &entry[..colon] {
                    [TokenTree::Literal(l)] => {
                        match syn::parse2::<syn::LitStr>(l.to_token_stream()) {
                            Ok(s) => s.value(),
                            Err(_) => return Err(stop(l, "a key that is not a string literal")),
                        }
                    }
                    other => {
                        return Err(stop(
                            &tokens_of(other),
                            "a key that is not a string literal",
                        ));
                    }
                };
                let rest = &entry[colon + 1..];
                if matches!(rest.first(), Some(TokenTree::Punct(p)) if p.as_char() == ':') {
                    return Err(stop(&tokens_of(&entry), "a path in an object"));
                }
                let value = json_trees(rest, &tokens_of(rest))?;
                // json! inserts in order; a repeated key keeps the last value.
                map.insert(key, value);
            }
            Ok(Value::Object(map))
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Bracket => split_commas(g.stream())
            .iter()
            .map(|item| json_trees(item, &tokens_of(item)))
            .collect::<Run<Vec<_>>>()
            .map(Value::Array),
        [TokenTree::Ident(i)] if i == "null" => Ok(Value::Null),
        _ => {
            let expr: syn::Expr = syn::parse2(whole.clone()).map_err(|_| stop(whole, "a value"))?;
            literal(&expr)
        }
    }
}

/// Splits at top-level commas, dropping a trailing empty entry.
fn split_commas(stream: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut out = vec![Vec::new()];
    for t in stream {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => out.push(Vec::new()),
            _ => out.last_mut().expect("never empty").push(t),
        }
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out
}

/// A literal leaf as `serde_json::to_value` serializes it: `true`/`false`, strings, chars,
/// numbers typed as rustc types the literal (and `-` before a number).
fn literal(e: &syn::Expr) -> Run<Value> {
    match e {
        syn::Expr::Lit(l) => lit_value(&l.lit, false, e),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
            syn::Expr::Lit(l) => lit_value(&l.lit, true, e),
            _ => Err(stop(e, "a value")),
        },
        syn::Expr::Paren(p) => literal(&p.expr),
        _ => Err(stop(e, "a value that is not a literal")),
    }
}

fn lit_value(lit: &syn::Lit, neg: bool, at: &syn::Expr) -> Run<Value> {
    let number = |n: Option<Number>| n.map(Value::Number).ok_or_else(|| stop(at, "a number"));
    match lit {
        syn::Lit::Str(s) if !neg => Ok(Value::String(s.value())),
        syn::Lit::Char(c) if !neg => Ok(Value::String(c.value().to_string())),
        syn::Lit::Bool(b) if !neg => Ok(Value::Bool(b.value)),
        syn::Lit::Int(i) => {
            let digits: i128 = i
                .base10_parse()
                .map_err(|_| stop(at, "an integer literal"))?;
            let v = if neg { -digits } else { digits };
            let (lo, hi): (i128, i128) = match i.suffix() {
                // An unsuffixed literal in json! is serialized as the i32 rustc infers.
                "" | "i32" => (i32::MIN.into(), i32::MAX.into()),
                "i8" => (i8::MIN.into(), i8::MAX.into()),
                "i16" => (i16::MIN.into(), i16::MAX.into()),
                "i64" | "isize" => (i64::MIN.into(), i64::MAX.into()),
                "u8" => (0, u8::MAX.into()),
                "u16" => (0, u16::MAX.into()),
                "u32" => (0, u32::MAX.into()),
                "u64" | "usize" => (0, u64::MAX.into()),
                _ => return Err(stop(at, "an integer literal of this type")),
            };
            // Out of range (or a negated unsigned literal) does not compile.
            if v < lo || v > hi || (neg && i.suffix().starts_with('u')) {
                return Err(stop(at, "an integer literal out of its type's range"));
            }
            number(if v < 0 {
                i64::try_from(v).ok().map(Number::from)
            } else {
                u64::try_from(v).ok().map(Number::from)
            })
        }
        syn::Lit::Float(f) => {
            let v = match f.suffix() {
                "" | "f64" => f.base10_parse::<f64>().ok(),
                // serde_json writes an f32 widened to f64.
                "f32" => f.base10_parse::<f32>().ok().map(f64::from),
                _ => None,
            };
            let v = v.ok_or_else(|| stop(at, "a float literal"))?;
            number(Number::from_f64(if neg { -v } else { v }))
        }
        _ => Err(stop(at, "a literal of this kind")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(tokens: &str) -> Run<Value> {
        json_tokens(tokens.parse().unwrap())
    }

    #[test]
    fn json_tokens_follow_json_and_rustc_literal_types() {
        assert_eq!(
            json(r#"{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "a": [1, -2, 0.5, null, "s", 'c']}"#).ok(),
            Some(serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "a": [1, -2, 0.5, null, "s", "c"]}))
        );
        // f32 widened as serde_json serializes it.
        assert_eq!(
            json("0.1f32").ok(),
            Some(serde_json::json!(0.10000000149011612))
        );
        assert_eq!(json("1e3").ok(), Some(serde_json::json!(1000.0)));
        assert_eq!(
            json("4000000000u64").ok(),
            Some(serde_json::json!(4000000000u64))
        );
        // Does not compile: an unsuffixed literal is an i32.
        assert!(json("4000000000").is_err());
        assert!(json("-1u8").is_err());
        // Not literal: left to the compiler.
        for t in ["{\"a\": X}", "{\"a\": f()}", "{k: 1}", "[1, 2 + 3]"] {
            assert!(json(t).is_err(), "{t}");
        }
        // A repeated key keeps the last value, as json! does.
        assert_eq!(
            json(r#"{"a": 1, "a": 2}"#).ok(),
            Some(serde_json::json!({"a": 2}))
        );
    }

    #[test]
    fn mutations_are_those_of_schemars_schema() {
        let mut s = Schema::from(false);
        let e: syn::Expr =
            syn::parse_quote!(s.insert("x-kubernetes-list-type".into(), "map".into()));
        mutate("s", &mut s, &e).ok().unwrap();
        assert_eq!(
            s.as_value(),
            &serde_json::json!({"not": {}, "x-kubernetes-list-type": "map"})
        );
        let e: syn::Expr = syn::parse_quote!(s.remove("not"));
        mutate("s", &mut s, &e).ok().unwrap();
        let e: syn::Expr = syn::parse_quote!(s.ensure_object().insert("a".to_string(), json!([1])));
        mutate("s", &mut s, &e).ok().unwrap();
        assert_eq!(
            s.as_value(),
            &serde_json::json!({"x-kubernetes-list-type": "map", "a": [1]})
        );
        let e: syn::Expr = syn::parse_quote!(other.insert("a".into(), true.into()));
        assert!(mutate("s", &mut s, &e).is_err());
        let e: syn::Expr = syn::parse_quote!(s.insert(KEY.into(), true.into()));
        assert!(mutate("s", &mut s, &e).is_err());
    }
}
