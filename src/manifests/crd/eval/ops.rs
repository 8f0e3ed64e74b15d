//! Operators on scalars: unary and binary arithmetic, comparisons and logic, computed in the
//! operands' Rust type as rustc computes them, and `as` casts.

use super::context::Ctx;
use super::scalar::{FloatTy, IntTy, Scalar, Want, int_of};
use super::{Res, scalar};

/// Gives an untyped operand the type of the other one (as rustc's inference does).
fn unify(
    cx: &Ctx<'_, '_>,
    at: &dyn quote::ToTokens,
    a: Scalar,
    b: Scalar,
) -> Res<(Scalar, Scalar)> {
    match (&a, &b) {
        (Scalar::Int(_, Some(t)), Scalar::Int(v, None)) => {
            if !t.fits(*v) {
                return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
            }
            Ok((a.clone(), Scalar::Int(*v, Some(*t))))
        }
        (Scalar::Int(v, None), Scalar::Int(_, Some(t))) => {
            if !t.fits(*v) {
                return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
            }
            Ok((Scalar::Int(*v, Some(*t)), b.clone()))
        }
        (Scalar::Int(_, Some(x)), Scalar::Int(_, Some(y))) if x != y => {
            Err(cx.invalid(at, "operands of different integer types"))
        }
        (Scalar::Float(_, Some(x)), Scalar::Float(_, Some(y))) if x != y => {
            Err(cx.invalid(at, "operands of different float types"))
        }
        _ => Ok((a, b)),
    }
}

pub(super) fn binary(cx: &Ctx<'_, '_>, b: &syn::ExprBinary, want: Want) -> Res<Scalar> {
    use syn::BinOp as B;
    let at = b as &dyn quote::ToTokens;
    let is_cmp = matches!(
        b.op,
        B::Eq(_) | B::Ne(_) | B::Lt(_) | B::Le(_) | B::Gt(_) | B::Ge(_)
    );
    let is_shift = matches!(b.op, B::Shl(_) | B::Shr(_));
    let operand_want = if is_cmp || matches!(b.op, B::And(_) | B::Or(_)) {
        Want::Any
    } else {
        want
    };
    let mut l = scalar(cx, &b.left, operand_want)?;
    let mut r = scalar(
        cx,
        &b.right,
        if is_shift { Want::Any } else { operand_want },
    )?;
    // An untyped float literal takes the other operand's float type: evaluate it again so
    // that its decimal text is rounded to that type directly.
    if let (Scalar::Float(_, Some(t)), Scalar::Float(_, None)) = (&l, &r) {
        r = scalar(cx, &b.right, Want::Float(*t))?;
    } else if let (Scalar::Float(_, None), Scalar::Float(_, Some(t))) = (&l, &r) {
        l = scalar(cx, &b.left, Want::Float(*t))?;
    }
    if !is_shift {
        (l, r) = unify(cx, at, l, r)?;
    }
    match (&l, &r) {
        (Scalar::Bool(x), Scalar::Bool(y)) => {
            let v = match b.op {
                B::And(_) | B::BitAnd(_) => *x && *y,
                B::Or(_) | B::BitOr(_) => *x || *y,
                B::BitXor(_) | B::Ne(_) => x != y,
                B::Eq(_) => x == y,
                _ => return Err(cx.refuse(at, "this operator on bools is not evaluated")),
            };
            Ok(Scalar::Bool(v))
        }
        (Scalar::Int(x, tx), Scalar::Int(y, ty)) => {
            let t = tx
                .or(if is_shift { None } else { *ty })
                .or(if is_cmp { None } else { int_of(want) })
                .unwrap_or(IntTy::I32);
            let (x, y) = (*x, *y);
            if is_cmp {
                return Ok(Scalar::Bool(compare(&b.op, x, y)));
            }
            let overflow = || cx.invalid(at, &format!("this arithmetic overflows {}", t.name()));
            let v = match b.op {
                B::Add(_) => x.checked_add(y).ok_or_else(overflow)?,
                B::Sub(_) => x.checked_sub(y).ok_or_else(overflow)?,
                B::Mul(_) => x.checked_mul(y).ok_or_else(overflow)?,
                B::Div(_) | B::Rem(_) if y == 0 => {
                    return Err(cx.invalid(at, "division by zero"));
                }
                B::Div(_) => x.checked_div(y).ok_or_else(overflow)?,
                B::Rem(_) => x.checked_rem(y).ok_or_else(overflow)?,
                B::BitAnd(_) => x & y,
                B::BitOr(_) => x | y,
                B::BitXor(_) => x ^ y,
                B::Shl(_) | B::Shr(_) => {
                    if y < 0 || y >= t.bits() as i128 {
                        return Err(cx.invalid(at, "the shift overflows"));
                    }
                    if t.bits() == 128 {
                        return Err(cx.refuse(at, "128-bit shifts are not evaluated"));
                    }
                    if matches!(b.op, B::Shl(_)) {
                        t.wrap(x << y)
                    } else {
                        x >> y
                    }
                }
                _ => return Err(cx.refuse(at, "this operator is not evaluated")),
            };
            if !t.fits(v) {
                return Err(overflow());
            }
            Ok(Scalar::Int(v, Some(t)))
        }
        (Scalar::Float(x, tx), Scalar::Float(y, ty)) => {
            let t = tx.or(*ty).or(match want {
                Want::Float(t) if !is_cmp => Some(t),
                _ => None,
            });
            let (x, y) = (*x, *y);
            if is_cmp {
                return Ok(Scalar::Bool(compare(&b.op, x, y)));
            }
            let v = match t {
                Some(FloatTy::F32) => {
                    let (x, y) = (x as f32, y as f32);
                    (match b.op {
                        B::Add(_) => x + y,
                        B::Sub(_) => x - y,
                        B::Mul(_) => x * y,
                        B::Div(_) => x / y,
                        B::Rem(_) => x % y,
                        _ => return Err(cx.refuse(at, "this operator on floats is not evaluated")),
                    }) as f64
                }
                _ => match b.op {
                    B::Add(_) => x + y,
                    B::Sub(_) => x - y,
                    B::Mul(_) => x * y,
                    B::Div(_) => x / y,
                    B::Rem(_) => x % y,
                    _ => return Err(cx.refuse(at, "this operator on floats is not evaluated")),
                },
            };
            Ok(Scalar::Float(v, t))
        }
        (Scalar::Str(x), Scalar::Str(y)) if is_cmp => Ok(Scalar::Bool(match b.op {
            B::Eq(_) => x == y,
            B::Ne(_) => x != y,
            B::Lt(_) => x < y,
            B::Le(_) => x <= y,
            B::Gt(_) => x > y,
            _ => x >= y,
        })),
        _ => Err(cx.refuse(at, "operands of these types are not evaluated")),
    }
}

pub(super) fn cast(cx: &Ctx<'_, '_>, c: &syn::ExprCast) -> Res<Scalar> {
    let target = match &*c.ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    let Some(target) = target else {
        return Err(cx.refuse(c, "a cast to this type is not evaluated"));
    };
    let v = scalar(cx, &c.expr, Want::Any)?;
    // An untyped literal cast is first given its fallback type (`i32`, `f64`).
    let v = match v {
        Scalar::Int(x, None) => {
            if !IntTy::I32.fits(x) {
                return Err(cx.invalid(c, &format!("{x} does not fit in i32")));
            }
            Scalar::Int(x, Some(IntTy::I32))
        }
        other => other,
    };
    if let Some(t) = IntTy::from_name(&target) {
        return Ok(Scalar::Int(
            match v {
                Scalar::Int(x, _) => t.wrap(x),
                Scalar::Float(f, _) => t.cast_float(f),
                Scalar::Bool(b) => b as i128,
                Scalar::Char(ch) => t.wrap(ch as i128),
                Scalar::Str(_) => return Err(cx.invalid(c, "a string cannot be cast")),
            },
            Some(t),
        ));
    }
    match (target.as_str(), v) {
        ("f64", Scalar::Int(x, _)) => Ok(Scalar::Float(x as f64, Some(FloatTy::F64))),
        ("f32", Scalar::Int(x, _)) => Ok(Scalar::Float(x as f32 as f64, Some(FloatTy::F32))),
        ("f64", Scalar::Float(f, _)) => Ok(Scalar::Float(f, Some(FloatTy::F64))),
        ("f32", Scalar::Float(f, _)) => Ok(Scalar::Float(f as f32 as f64, Some(FloatTy::F32))),
        ("char", Scalar::Int(x, Some(IntTy::U8))) => Ok(Scalar::Char(x as u8 as char)),
        ("bool", Scalar::Bool(b)) => Ok(Scalar::Bool(b)),
        ("char", Scalar::Char(ch)) => Ok(Scalar::Char(ch)),
        _ => Err(cx.refuse(c, "this cast is not evaluated")),
    }
}

/// `x <op> y` for a comparison operator (`==`, `!=`, `<`, `<=`, `>`, `>=`), as Rust's
/// `PartialEq`/`PartialOrd` of integers and floats compute it.
fn compare<T: PartialOrd>(op: &syn::BinOp, x: T, y: T) -> bool {
    use syn::BinOp as B;
    match op {
        B::Eq(_) => x == y,
        B::Ne(_) => x != y,
        B::Lt(_) => x < y,
        B::Le(_) => x <= y,
        B::Gt(_) => x > y,
        _ => x >= y,
    }
}
