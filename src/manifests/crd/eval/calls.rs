//! Scalars from calls and method calls: `From`/`TryFrom` conversions between scalars, `parse`,
//! `to_string`, and calls of the sources' own zero-argument functions.

use super::context::Ctx;
use super::scalar::{FloatTy, IntTy, Scalar, Want, int_of, want_name};
use super::shape::want_of_type;
use super::{EvalError, Res, scalar};

/// `From<from> for to` between scalars, as std implements it.
fn convert(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: Scalar, to: Want) -> Res<Scalar> {
    let no = || {
        cx.refuse(
            at,
            &format!(
                "no conversion from {} to {} is evaluated",
                v.kind(),
                want_name(to)
            ),
        )
    };
    match (&v, to) {
        (Scalar::Str(_), Want::Str) => Ok(v.clone()),
        (Scalar::Char(c), Want::Str) => Ok(Scalar::Str(c.to_string())),
        (Scalar::Int(x, Some(f)), Want::Int(t)) if f.widens_to(t) => Ok(Scalar::Int(*x, Some(t))),
        (Scalar::Int(x, Some(IntTy::U8)), Want::Char) => Ok(Scalar::Char(*x as u8 as char)),
        (
            Scalar::Int(
                x,
                Some(IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::U8 | IntTy::U16 | IntTy::U32),
            ),
            Want::Float(FloatTy::F64),
        ) => Ok(Scalar::Float(*x as f64, Some(FloatTy::F64))),
        (
            Scalar::Int(x, Some(IntTy::I8 | IntTy::I16 | IntTy::U8 | IntTy::U16)),
            Want::Float(FloatTy::F32),
        ) => Ok(Scalar::Float(*x as f64, Some(FloatTy::F32))),
        (Scalar::Float(x, Some(FloatTy::F32)), Want::Float(FloatTy::F64)) => {
            Ok(Scalar::Float(*x, Some(FloatTy::F64)))
        }
        (Scalar::Float(_, Some(a)), Want::Float(b)) if *a == b => Ok(v.clone()),
        (Scalar::Bool(b), Want::Int(t)) => Ok(Scalar::Int(*b as i128, Some(t))),
        (Scalar::Bool(_), Want::Bool) | (Scalar::Char(_), Want::Char) => Ok(v.clone()),
        _ => Err(no()),
    }
}

/// `true` for `e.unwrap()` and `e.expect(msg)`.
pub fn is_unwrap(mc: &syn::ExprMethodCall) -> bool {
    (mc.method == "unwrap" && mc.args.is_empty() && mc.turbofish.is_none())
        || (mc.method == "expect" && mc.args.len() == 1 && mc.turbofish.is_none())
}

/// The error for a conversion `at` that fails on these literals: `crd()` would panic in the
/// `unwrap` / `expect` around it, so compiling cannot help either.
pub fn panics(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, why: &str) -> EvalError {
    cx.invalid(
        at,
        &format!(
            "{why}: the `unwrap`/`expect` on it panics, so `crd()` would panic; write a value the conversion accepts"
        ),
    )
}

/// `s.parse::<T>()` for the scalar type `to`, with the very `FromStr` impls of the std
/// rsbuilder is built with: `Ok` value or the error's text.
fn parse_as(s: &str, to: Want) -> Result<Scalar, String> {
    fn int<T: std::str::FromStr<Err = std::num::ParseIntError> + Into<i128>>(
        s: &str,
        t: IntTy,
    ) -> Result<Scalar, String> {
        s.parse::<T>()
            .map(|v| Scalar::Int(v.into(), Some(t)))
            .map_err(|e| e.to_string())
    }
    match to {
        Want::Int(t) => match t {
            IntTy::I8 => int::<i8>(s, t),
            IntTy::I16 => int::<i16>(s, t),
            IntTy::I32 => int::<i32>(s, t),
            IntTy::I64 => int::<i64>(s, t),
            IntTy::I128 => int::<i128>(s, t),
            IntTy::U8 => int::<u8>(s, t),
            IntTy::U16 => int::<u16>(s, t),
            IntTy::U32 => int::<u32>(s, t),
            IntTy::U64 => int::<u64>(s, t),
            IntTy::Isize => s
                .parse::<i64>()
                .map(|v| Scalar::Int(v.into(), Some(t)))
                .map_err(|e| e.to_string()),
            IntTy::Usize => s
                .parse::<u64>()
                .map(|v| Scalar::Int(v.into(), Some(t)))
                .map_err(|e| e.to_string()),
            IntTy::U128 => s.parse::<u128>().map_err(|e| e.to_string()).and_then(|v| {
                i128::try_from(v)
                    .map(|v| Scalar::Int(v, Some(t)))
                    .map_err(|_| "beyond the evaluator's range".into())
            }),
        },
        Want::Float(FloatTy::F32) => s
            .parse::<f32>()
            .map(|v| Scalar::Float(v as f64, Some(FloatTy::F32)))
            .map_err(|e| e.to_string()),
        Want::Float(FloatTy::F64) => s
            .parse::<f64>()
            .map(|v| Scalar::Float(v, Some(FloatTy::F64)))
            .map_err(|e| e.to_string()),
        Want::Bool => s
            .parse::<bool>()
            .map(Scalar::Bool)
            .map_err(|e| e.to_string()),
        Want::Char => s
            .parse::<char>()
            .map(Scalar::Char)
            .map_err(|e| e.to_string()),
        Want::Str => Ok(Scalar::Str(s.to_string())),
        Want::Any => Err("the target type is not known".into()),
    }
}

/// The target of `.parse::<T>()`: the turbofish's scalar type, else the type the context
/// expects.
fn parse_target(cx: &Ctx<'_, '_>, mc: &syn::ExprMethodCall, want: Want) -> Option<Want> {
    match &mc.turbofish {
        None => (want != Want::Any).then_some(want),
        Some(tf) if tf.args.len() == 1 => match &tf.args[0] {
            syn::GenericArgument::Type(t) => want_of_type(cx, t),
            _ => None,
        },
        Some(_) => None,
    }
}

/// `checked` conversion of the integer `v` to `to`, as `TryFrom` between integers does it.
fn try_from_int(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: Scalar, to: IntTy) -> Res<Scalar> {
    match v {
        Scalar::Int(x, from) => {
            // An untyped literal argument falls back to `i32`, as rustc's inference does.
            let from = from.unwrap_or(IntTy::I32);
            if !from.fits(x) {
                return Err(cx.invalid(at, &format!("{x} does not fit in {}", from.name())));
            }
            if to.fits(x) {
                Ok(Scalar::Int(x, Some(to)))
            } else {
                Err(panics(
                    cx,
                    at,
                    &format!(
                        "`{}::try_from({x}{})` fails (out of range)",
                        to.name(),
                        from.name()
                    ),
                ))
            }
        }
        other => Err(cx.refuse(
            at,
            &format!(
                "`try_from` of a {} is not evaluated (integers only)",
                other.kind()
            ),
        )),
    }
}

/// `e.unwrap()` / `e.expect(..)` where `e` is a fallible scalar conversion whose result the
/// literals decide: `s.parse::<T>()`, `T::from_str(s)`, `T::try_from(x)` and
/// `x.try_into()` (integers). `None`: the receiver is not such a conversion.
fn unwrapped_conversion(
    cx: &Ctx<'_, '_>,
    mc: &syn::ExprMethodCall,
    want: Want,
) -> Option<Res<Scalar>> {
    let recv = match &*mc.receiver {
        syn::Expr::Paren(p) => &*p.expr,
        e => e,
    };
    let parse =
        |text_expr: &syn::Expr, to: Option<Want>, at: &dyn quote::ToTokens| -> Res<Scalar> {
            let Some(to) = to else {
                return Err(cx.refuse(at, "the target type of this `parse` is not known"));
            };
            match scalar(cx, text_expr, Want::Str)? {
                Scalar::Str(s) => parse_as(&s, to).map_err(|e| {
                    panics(
                        cx,
                        at,
                        &format!("`{s:?}` does not parse as {} ({e})", want_name(to)),
                    )
                }),
                other => Err(cx.refuse(
                    at,
                    &format!("`parse` of a {} value, not a string", other.kind()),
                )),
            }
        };
    match recv {
        syn::Expr::MethodCall(inner) if inner.method == "parse" && inner.args.is_empty() => {
            let to = parse_target(cx, inner, want);
            Some(parse(&inner.receiver, to, inner))
        }
        syn::Expr::MethodCall(inner)
            if inner.method == "try_into" && inner.args.is_empty() && inner.turbofish.is_none() =>
        {
            Some(match int_of(want) {
                Some(to) => scalar(cx, &inner.receiver, Want::Any)
                    .and_then(|v| try_from_int(cx, inner, v, to)),
                None => Err(cx.refuse(
                    inner,
                    "`try_into` is evaluated only to an integer type the context names",
                )),
            })
        }
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(func) = &*c.func else {
                return None;
            };
            if func.qself.is_some() || func.path.segments.len() != 2 {
                return None;
            }
            let ty = func.path.segments[0].ident.to_string();
            let f = func.path.segments[1].ident.to_string();
            let to = Want::of_leaf(match ty.as_str() {
                "String" => "std::string::String",
                t => t,
            })?;
            match f.as_str() {
                "from_str" => Some(parse(&c.args[0], Some(to), c)),
                "try_from" => Some(match to {
                    Want::Int(t) => {
                        scalar(cx, &c.args[0], Want::Any).and_then(|v| try_from_int(cx, c, v, t))
                    }
                    _ => Err(cx.refuse(c, "`try_from` is evaluated to integer types only")),
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn method_scalar(cx: &Ctx<'_, '_>, mc: &syn::ExprMethodCall, want: Want) -> Res<Scalar> {
    let name = mc.method.to_string();
    let at = mc as &dyn quote::ToTokens;
    if is_unwrap(mc)
        && let Some(r) = unwrapped_conversion(cx, mc, want)
    {
        return r;
    }
    if mc.turbofish.is_some() {
        return Err(cx.refuse(at, "turbofish calls are not evaluated"));
    }
    let recv_want = match name.as_str() {
        "to_string" | "to_owned" | "clone" | "into" => match want {
            Want::Str => Want::Any,
            w => w,
        },
        _ => Want::Any,
    };
    match (name.as_str(), mc.args.len()) {
        ("to_string", 0) => {
            let v = scalar(cx, &mc.receiver, Want::Any)?;
            Ok(Scalar::Str(v.display(cx, &mc.receiver)?))
        }
        ("to_owned" | "clone", 0) => scalar(cx, &mc.receiver, recv_want),
        ("into", 0) => {
            let v = scalar(cx, &mc.receiver, Want::Any)?;
            // Every `From<&str>` std and serde_json offer gives a value that
            // serializes as the same string, so the target need not be known.
            if want == Want::Any
                && let Scalar::Str(_) = v
            {
                return convert(cx, at, v, Want::Str);
            }
            if matches!(v, Scalar::Int(_, None) | Scalar::Float(_, None)) && want != Want::Any {
                return Err(cx.refuse(at, "`.into()` of an untyped number literal"));
            }
            if want == Want::Any {
                return Err(cx.refuse(at, "`.into()` where the target type is not known"));
            }
            convert(cx, at, v, want)
        }
        ("to_lowercase" | "to_uppercase" | "trim", 0) => match scalar(cx, &mc.receiver, Want::Any)?
        {
            Scalar::Str(s) => Ok(Scalar::Str(match name.as_str() {
                "to_lowercase" => s.to_lowercase(),
                "to_uppercase" => s.to_uppercase(),
                _ => s.trim().to_string(),
            })),
            _ => Err(cx.refuse(at, "a string method on a value that is not a string")),
        },
        _ => Err(cx.refuse(at, "this method call is not evaluated")),
    }
}

pub(super) fn call_scalar(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    c: &syn::ExprCall,
    want: Want,
) -> Res<Scalar> {
    let syn::Expr::Path(func) = &*c.func else {
        return Err(cx.refuse(expr, "this call is not evaluated"));
    };
    if func.qself.is_some() {
        return Err(cx.refuse(expr, "this call is not evaluated"));
    }
    let segs: Vec<String> = func
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let last = segs.last().map(String::as_str).unwrap_or_default();
    let prev = segs.len().checked_sub(2).map(|i| segs[i].as_str());
    if c.args.is_empty()
        && let Some((fcx, block, ret)) = cx.function(&func.path)
    {
        let w = ret
            .and_then(|t| want_of_type(&fcx, t))
            .ok_or_else(|| cx.refuse(expr, "the function does not return a scalar"))?;
        let (bcx, tail) = fcx.enter_block(block)?;
        return scalar(&bcx, tail, w);
    }
    match (prev, last, c.args.len()) {
        (Some("String"), "new", 0) => Ok(Scalar::Str(String::new())),
        (Some("String" | "PathBuf"), "from", 1) => {
            let v = scalar(cx, &c.args[0], Want::Str)?;
            convert(cx, expr, v, Want::Str)
        }
        (Some("Cow"), "Borrowed" | "Owned", 1) | (Some("Box" | "Rc" | "Arc"), "new", 1) => {
            scalar(cx, &c.args[0], want)
        }
        (Some(t), "from", 1)
            if IntTy::from_name(t).is_some() || matches!(t, "f32" | "f64" | "char") =>
        {
            let to = Want::of_leaf(t).unwrap_or(Want::Any);
            let v = scalar(cx, &c.args[0], Want::Any)?;
            if matches!(v, Scalar::Int(_, None) | Scalar::Float(_, None)) {
                return Err(cx.refuse(expr, "a conversion of an untyped number literal"));
            }
            convert(cx, expr, v, to)
        }
        _ => Err(cx.refuse(expr, "this call is not evaluated")),
    }
}
