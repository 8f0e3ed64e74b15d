//! Scalars named by a path: constants and statics of the sources, `let` bindings, and the
//! associated constants of the primitive types (`u16::MAX`, `f64::EPSILON`).

use super::context::Ctx;
use super::scalar::{FloatTy, IntTy, Scalar, Want};
use super::shape::want_of_type;
use super::{Res, scalar};

/// `u64::MAX`, `i32::MIN`, `f64::EPSILON`, `std::f64::consts::PI` and the like, taken from
/// the std rsbuilder is built with.
fn primitive_const(path: &syn::Path) -> Option<Scalar> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let segs = match segs.as_slice() {
        ["std" | "core", rest @ ..] => rest.to_vec(),
        s => s.to_vec(),
    };
    macro_rules! int_consts {
        ($t:ident, $name:expr) => {
            match $name {
                "MAX" => Some($t::MAX as i128),
                "MIN" => Some($t::MIN as i128),
                "BITS" => return Some(Scalar::Int($t::BITS as i128, Some(IntTy::U32))),
                _ => None,
            }
        };
    }
    macro_rules! float_consts {
        ($t:ident, $name:expr) => {
            match $name {
                "MAX" => Some($t::MAX as f64),
                "MIN" => Some($t::MIN as f64),
                "EPSILON" => Some($t::EPSILON as f64),
                "MIN_POSITIVE" => Some($t::MIN_POSITIVE as f64),
                _ => None,
            }
        };
    }
    macro_rules! math_consts {
        ($t:ident, $name:expr) => {
            match $name {
                "PI" => Some(std::$t::consts::PI as f64),
                "TAU" => Some(std::$t::consts::TAU as f64),
                "E" => Some(std::$t::consts::E as f64),
                "SQRT_2" => Some(std::$t::consts::SQRT_2 as f64),
                "LN_2" => Some(std::$t::consts::LN_2 as f64),
                "LN_10" => Some(std::$t::consts::LN_10 as f64),
                "FRAC_PI_2" => Some(std::$t::consts::FRAC_PI_2 as f64),
                "FRAC_1_SQRT_2" => Some(std::$t::consts::FRAC_1_SQRT_2 as f64),
                _ => None,
            }
        };
    }
    let (ty, name) = match segs.as_slice() {
        [ty, name] => (*ty, *name),
        [ty @ ("f32" | "f64"), "consts", name] => {
            let v = if *ty == "f32" {
                math_consts!(f32, *name)?
            } else {
                math_consts!(f64, *name)?
            };
            let t = if *ty == "f32" {
                FloatTy::F32
            } else {
                FloatTy::F64
            };
            return Some(Scalar::Float(v, Some(t)));
        }
        _ => return None,
    };
    let int = match ty {
        "i8" => int_consts!(i8, name),
        "i16" => int_consts!(i16, name),
        "i32" => int_consts!(i32, name),
        "i64" => int_consts!(i64, name),
        "isize" => int_consts!(i64, name),
        "u8" => int_consts!(u8, name),
        "u16" => int_consts!(u16, name),
        "u32" => int_consts!(u32, name),
        "u64" => int_consts!(u64, name),
        "usize" => int_consts!(u64, name),
        "i128" => int_consts!(i128, name),
        "f32" => {
            return float_consts!(f32, name).map(|v| Scalar::Float(v, Some(FloatTy::F32)));
        }
        "f64" => {
            return float_consts!(f64, name).map(|v| Scalar::Float(v, Some(FloatTy::F64)));
        }
        "char" if name == "MAX" => return Some(Scalar::Char(char::MAX)),
        _ => None,
    }?;
    Some(Scalar::Int(int, IntTy::from_name(ty)))
}

pub(super) fn path_scalar(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    path: &syn::Path,
    want: Want,
) -> Res<Scalar> {
    if let Some((bcx, bexpr, bty)) = cx.let_binding(path) {
        let w = match &bty {
            Some(t) => want_of_type(&bcx, t).unwrap_or(want),
            None => want,
        };
        return scalar(&bcx, &bexpr, w);
    }
    if let Some(s) = primitive_const(path) {
        return Ok(s);
    }
    if let Some((ccx, cexpr, cty)) = cx.constant(path) {
        let w = want_of_type(&ccx, cty).ok_or_else(|| {
            cx.refuse(
                expr,
                "the constant's type is not a number, bool, char or string",
            )
        })?;
        let v = scalar(&ccx, cexpr, w)?;
        // The constant has its declared type from now on.
        return Ok(match (v, w) {
            (Scalar::Int(x, _), Want::Int(t)) => Scalar::Int(x, Some(t)),
            (Scalar::Float(x, _), Want::Float(t)) => Scalar::Float(x, Some(t)),
            (v, _) => v,
        });
    }
    Err(cx.refuse(
        expr,
        "not a constant, static or `let` binding rsbuilder can see",
    ))
}
