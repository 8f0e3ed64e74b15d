//! Static evaluation of the small Rust expressions that defaults and attribute values are
//! written with, computed as rustc, serde and serde_json would compute them.
//!
//! Scalars are evaluated with their Rust types: an integer keeps its type (from a suffix, a
//! `const`'s declared type, a `let` annotation or the type the context expects, else `i32`
//! as rustc's fallback) and arithmetic is checked in that type; an `f32` is computed in
//! `f32` and serialized widened to `f64`, as serde_json does (`0.1f32` gives
//! `0.10000000149011612`); `.to_string()` and `format!("{}")` use the very `Display` impls of
//! the std rsbuilder is built with. Composite values (structs, enums, collections) are
//! evaluated against their type in [`super::defaults`].
//!
//! One module per idea: [`context`] (where an expression is evaluated and how its names are
//! looked up), [`scalar`] (scalar types and values), [`shape`] (what a type is for
//! evaluation), and the expressions a scalar is written with: [`literal`], [`ops`],
//! [`paths`], [`calls`] and [`macros`]. [`scalar()`] dispatches an expression to them.
//!
//! What cannot be evaluated exactly is an [`EvalError`] naming the expression and its
//! `file:line`, so rsbuilder never guesses. docs/attributes.md lists what is accepted.

use crate::manifests::diag::Cause;

pub mod calls;
pub mod context;
pub mod literal;
pub mod macros;
pub mod ops;
pub mod paths;
pub mod scalar;
pub mod shape;

pub use calls::{is_unwrap, panics};
pub use context::{Ctx, impl_self};
pub use literal::{json_tokens, lit_value};
pub use scalar::{FloatTy, IntTy, Scalar, Want, nonzero_const};
pub use shape::{FwdKind, SeqKind, Shape, UserTy, shape, want_of_type};

use calls::{call_scalar, method_scalar};
use literal::lit_scalar;
use macros::macro_scalar;
use ops::{binary, cast};
use paths::path_scalar;
use scalar::int_of;

/// Why a value could not be evaluated: the message names the expression and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    /// What could not be evaluated, and why.
    pub message: String,
    /// [`Cause::NeedsCompile`] when the expression is valid Rust beyond the evaluator (the
    /// probe compiles it), [`Cause::Invalid`] when rustc itself rejects it (an overflowing
    /// constant, a struct literal without a field).
    pub cause: Cause,
}

impl EvalError {
    /// An error beyond the evaluator ([`Cause::NeedsCompile`]).
    pub fn beyond(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            cause: Cause::NeedsCompile,
        }
    }
}

impl From<String> for EvalError {
    fn from(message: String) -> Self {
        Self::beyond(message)
    }
}

impl From<&str> for EvalError {
    fn from(message: &str) -> Self {
        Self::beyond(message)
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Result of an evaluation step.
pub type Res<T> = Result<T, EvalError>;

/// Evaluates a scalar expression expecting the scalar type `want`.
pub fn scalar(cx: &Ctx<'_, '_>, expr: &syn::Expr, want: Want) -> Res<Scalar> {
    let cx = &cx.deeper()?;
    match expr {
        syn::Expr::Lit(l) => lit_scalar(cx, &l.lit, want, false),
        syn::Expr::Paren(p) => scalar(cx, &p.expr, want),
        syn::Expr::Group(g) => scalar(cx, &g.expr, want),
        syn::Expr::Reference(r) => scalar(cx, &r.expr, want),
        syn::Expr::Block(b) if b.label.is_none() => {
            let (inner, tail) = cx.enter_block(&b.block)?;
            scalar(&inner, tail, want)
        }
        syn::Expr::Unary(u) => match u.op {
            syn::UnOp::Neg(_) => {
                // `-128i8` is a literal of its own for rustc's range check.
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: l @ (syn::Lit::Int(_) | syn::Lit::Float(_)),
                    ..
                }) = &*u.expr
                {
                    return lit_scalar(cx, l, want, true);
                }
                match scalar(cx, &u.expr, want)? {
                    Scalar::Int(v, t) => {
                        if let Some(t) = t {
                            if !t.signed() {
                                return Err(cx.invalid(expr, "negation of an unsigned integer"));
                            }
                            if !t.fits(-v) {
                                return Err(cx.invalid(expr, "the negation overflows"));
                            }
                        }
                        Ok(Scalar::Int(-v, t))
                    }
                    Scalar::Float(v, t) => Ok(Scalar::Float(-v, t)),
                    _ => Err(cx.refuse(expr, "negation of a value that is not a number")),
                }
            }
            syn::UnOp::Not(_) => match scalar(cx, &u.expr, want)? {
                Scalar::Bool(b) => Ok(Scalar::Bool(!b)),
                Scalar::Int(v, t) => {
                    let t = t.or(int_of(want)).unwrap_or(IntTy::I32);
                    Ok(Scalar::Int(t.wrap(!v), Some(t)))
                }
                _ => Err(cx.refuse(expr, "`!` of a value that is not a bool or integer")),
            },
            _ => Err(cx.refuse(expr, "dereference is not evaluated")),
        },
        syn::Expr::Binary(b) => binary(cx, b, want),
        syn::Expr::Cast(c) => cast(cx, c),
        syn::Expr::Path(p) if p.qself.is_none() => path_scalar(cx, expr, &p.path, want),
        syn::Expr::MethodCall(mc) => method_scalar(cx, mc, want),
        syn::Expr::Call(c) => call_scalar(cx, expr, c, want),
        syn::Expr::Macro(mac) => macro_scalar(cx, &mac.mac),
        _ => Err(cx.refuse(expr, "this expression is not evaluated statically")),
    }
}

#[cfg(test)]
mod tests;
