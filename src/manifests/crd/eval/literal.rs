//! Literals: a Rust literal as a typed scalar, and attribute tokens that are JSON literals.

use serde_json::Value;

use super::Res;
use super::context::Ctx;
use super::scalar::{FloatTy, IntTy, Scalar, Want, int_of};
use crate::manifests::crd::resolve::Crate;

pub(super) fn lit_scalar(
    cx: &Ctx<'_, '_>,
    lit: &syn::Lit,
    want: Want,
    negative: bool,
) -> Res<Scalar> {
    let float = |digits: &str, ty: Option<FloatTy>, want: Want| -> Res<Scalar> {
        let ty = ty.or(match want {
            Want::Float(t) => Some(t),
            _ => None,
        });
        let text = if negative {
            format!("-{digits}")
        } else {
            digits.to_string()
        };
        // The decimal text rounds directly to the literal's type, as rustc rounds it.
        let v = match ty {
            Some(FloatTy::F32) => text.parse::<f32>().map(|f| f as f64).ok(),
            _ => text.parse::<f64>().ok(),
        };
        let v = v.ok_or_else(|| cx.refuse(lit, "cannot read this float literal"))?;
        Ok(Scalar::Float(v, ty))
    };
    match lit {
        syn::Lit::Str(s) => Ok(Scalar::Str(s.value())),
        syn::Lit::Char(c) => Ok(Scalar::Char(c.value())),
        syn::Lit::Bool(b) => Ok(Scalar::Bool(b.value)),
        syn::Lit::Byte(b) => Ok(Scalar::Int(b.value() as i128, Some(IntTy::U8))),
        syn::Lit::Int(i) => {
            let suffix = i.suffix();
            match suffix {
                "f32" => return float(i.base10_digits(), Some(FloatTy::F32), want),
                "f64" => return float(i.base10_digits(), Some(FloatTy::F64), want),
                _ => {}
            }
            let ty = if suffix.is_empty() {
                None
            } else {
                Some(
                    IntTy::from_name(suffix)
                        .ok_or_else(|| cx.refuse(lit, "unknown literal suffix"))?,
                )
            };
            if ty.is_none()
                && let Want::Float(_) = want
            {
                return Err(cx.invalid(lit, "an integer literal where a float is expected"));
            }
            // Attribute parsers may hand over a negative literal (`min = -79`) as one token.
            let v: i128 = i
                .base10_parse()
                .map_err(|_| cx.refuse(lit, "a literal beyond the 128-bit signed range"))?;
            let v = if negative { -v } else { v };
            let t = ty.or(int_of(want));
            if let Some(t) = t
                && !t.fits(v)
            {
                return Err(cx.invalid(lit, &format!("the literal does not fit in {}", t.name())));
            }
            Ok(Scalar::Int(v, ty))
        }
        syn::Lit::Float(f) => {
            let ty = match f.suffix() {
                "" => None,
                "f32" => Some(FloatTy::F32),
                "f64" => Some(FloatTy::F64),
                _ => return Err(cx.refuse(lit, "unknown literal suffix")),
            };
            float(f.base10_digits(), ty, want)
        }
        _ => Err(cx.refuse(lit, "this literal is not evaluated")),
    }
}

/// JSON written as `serde_json::json!` tokens (also used for schemars `extend` values):
/// JSON text, or a literal-only Rust form (raw strings, suffixed numbers, negatives).
pub fn json_tokens(tokens: &proc_macro2::TokenStream) -> Result<Value, String> {
    let text = tokens.to_string();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return Ok(v);
    }
    if let Ok(expr) = syn::parse2::<syn::Expr>(tokens.clone())
        && let Ok(v) = literal_only(&expr)
    {
        return Ok(v);
    }
    Err(format!("cannot evaluate `{text}` as JSON statically"))
}

fn literal_only(expr: &syn::Expr) -> Result<Value, ()> {
    match expr {
        syn::Expr::Lit(l) => lit_value(&l.lit).map_err(|_| ()),
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
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// A literal's JSON value with no type context (integers stay integers, float literals
/// become f64, an `f32` suffix widened as serde_json does).
pub fn lit_value(lit: &syn::Lit) -> Result<Value, String> {
    let krate = Crate::default();
    let cx = Ctx::new(&krate, 0);
    let s = lit_scalar(&cx, lit, Want::Any, false).map_err(|e| e.message)?;
    let want = match &s {
        Scalar::Float(_, Some(t)) => Want::Float(*t),
        _ => Want::Any,
    };
    s.to_json(&cx, lit, want).map_err(|e| e.message)
}
