//! Scalar values with their Rust types: the integer and float types, the scalar type a
//! context expects ([`Want`]), a computed [`Scalar`] and the JSON serde_json gives it.

use serde_json::Value;

use super::Res;
use super::context::Ctx;

/// A Rust integer type (`isize`/`usize` are 64-bit, as on the targets operators run on).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[allow(missing_docs)]
pub enum IntTy {
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
}

impl IntTy {
    /// The type a primitive name (or literal suffix) names.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "i8" => Self::I8,
            "i16" => Self::I16,
            "i32" => Self::I32,
            "i64" => Self::I64,
            "i128" => Self::I128,
            "isize" => Self::Isize,
            "u8" => Self::U8,
            "u16" => Self::U16,
            "u32" => Self::U32,
            "u64" => Self::U64,
            "u128" => Self::U128,
            "usize" => Self::Usize,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::I8 => "i8",
            Self::I16 => "i16",
            Self::I32 => "i32",
            Self::I64 => "i64",
            Self::I128 => "i128",
            Self::Isize => "isize",
            Self::U8 => "u8",
            Self::U16 => "u16",
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::U128 => "u128",
            Self::Usize => "usize",
        }
    }

    /// Smallest and largest value (`u128` above `i128::MAX` is not representable here).
    pub(super) fn bounds(self) -> (i128, i128) {
        match self {
            Self::I8 => (i8::MIN as i128, i8::MAX as i128),
            Self::I16 => (i16::MIN as i128, i16::MAX as i128),
            Self::I32 => (i32::MIN as i128, i32::MAX as i128),
            Self::I64 | Self::Isize => (i64::MIN as i128, i64::MAX as i128),
            Self::I128 => (i128::MIN, i128::MAX),
            Self::U8 => (0, u8::MAX as i128),
            Self::U16 => (0, u16::MAX as i128),
            Self::U32 => (0, u32::MAX as i128),
            Self::U64 | Self::Usize => (0, u64::MAX as i128),
            Self::U128 => (0, i128::MAX),
        }
    }

    pub(super) fn bits(self) -> u32 {
        match self {
            Self::I8 | Self::U8 => 8,
            Self::I16 | Self::U16 => 16,
            Self::I32 | Self::U32 => 32,
            Self::I64 | Self::Isize | Self::U64 | Self::Usize => 64,
            Self::I128 | Self::U128 => 128,
        }
    }

    pub(super) fn signed(self) -> bool {
        matches!(
            self,
            Self::I8 | Self::I16 | Self::I32 | Self::I64 | Self::I128 | Self::Isize
        )
    }

    pub(super) fn fits(self, v: i128) -> bool {
        let (lo, hi) = self.bounds();
        lo <= v && v <= hi
    }

    /// `v as Self` for `v` of any integer type (two's complement truncation).
    pub(super) fn wrap(self, v: i128) -> i128 {
        match self {
            Self::I8 => v as i8 as i128,
            Self::I16 => v as i16 as i128,
            Self::I32 => v as i32 as i128,
            Self::I64 | Self::Isize => v as i64 as i128,
            Self::I128 => v,
            Self::U8 => v as u8 as i128,
            Self::U16 => v as u16 as i128,
            Self::U32 => v as u32 as i128,
            Self::U64 | Self::Usize => v as u64 as i128,
            Self::U128 => v,
        }
    }

    /// `f as Self` (saturating, NaN to 0, as Rust's `as` does).
    pub(super) fn cast_float(self, f: f64) -> i128 {
        match self {
            Self::I8 => f as i8 as i128,
            Self::I16 => f as i16 as i128,
            Self::I32 => f as i32 as i128,
            Self::I64 | Self::Isize => f as i64 as i128,
            Self::I128 => f as i128,
            Self::U8 => f as u8 as i128,
            Self::U16 => f as u16 as i128,
            Self::U32 => f as u32 as i128,
            Self::U64 | Self::Usize => f as u64 as i128,
            Self::U128 => (f as u128).min(i128::MAX as u128) as i128,
        }
    }

    /// Whether `From<self> for to` exists (lossless integer widening).
    pub(super) fn widens_to(self, to: IntTy) -> bool {
        if self == to {
            return true;
        }
        let (fb, tb) = (self.bits(), to.bits());
        let size = |t: IntTy| matches!(t, IntTy::Isize | IntTy::Usize);
        match (self.signed(), to.signed()) {
            // std implements From between pointer-sized and fixed types only for a few pairs.
            _ if size(to) => matches!(
                (self, to),
                (IntTy::U8 | IntTy::U16, IntTy::Usize)
                    | (IntTy::U8 | IntTy::I8 | IntTy::I16, IntTy::Isize)
            ),
            _ if size(self) => false,
            (false, false) | (true, true) => fb < tb,
            (false, true) => fb < tb,
            (true, false) => false,
        }
    }
}

/// `NonZeroU8::MIN`, `NonZeroI64::MAX` and the like: the value, for `ty` the integer name
/// after `NonZero` (`"U8"`).
pub fn nonzero_const(ty: &str, name: &str) -> Option<i128> {
    let t = IntTy::from_name(&ty.to_lowercase())?;
    let (lo, hi) = t.bounds();
    match name {
        "MAX" if t != IntTy::U128 => Some(hi),
        "MIN" => Some(if t.signed() { lo } else { 1 }),
        _ => None,
    }
}

/// A float type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[allow(missing_docs)]
pub enum FloatTy {
    F32,
    F64,
}

/// The scalar type the context expects.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[allow(missing_docs)]
pub enum Want {
    Int(IntTy),
    Float(FloatTy),
    Bool,
    Char,
    /// `String`, `&str`, `PathBuf`, `Cow<str>` and the like: serialized as a JSON string.
    Str,
    /// Not known (attribute values): integer literals are not range-checked.
    Any,
}

impl Want {
    /// The scalar a normalized leaf type path is, if it is one.
    pub fn of_leaf(path: &str) -> Option<Want> {
        Some(match path {
            "f32" => Want::Float(FloatTy::F32),
            "f64" => Want::Float(FloatTy::F64),
            "bool" => Want::Bool,
            "char" => Want::Char,
            "str" | "std::string::String" | "std::path::PathBuf" | "std::path::Path" => Want::Str,
            p => Want::Int(IntTy::from_name(p)?),
        })
    }
}

/// A scalar value with its Rust type (`None`: an unsuffixed literal whose type is not yet
/// decided). A float holds its exact value; an `f32` one is an `f32` widened to `f64`.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Scalar {
    Int(i128, Option<IntTy>),
    Float(f64, Option<FloatTy>),
    Bool(bool),
    Char(char),
    Str(String),
}

impl Scalar {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Scalar::Int(_, Some(t)) => t.name(),
            Scalar::Int(..) => "integer",
            Scalar::Float(_, Some(FloatTy::F32)) => "f32",
            Scalar::Float(..) => "f64",
            Scalar::Bool(_) => "bool",
            Scalar::Char(_) => "char",
            Scalar::Str(_) => "string",
        }
    }

    /// The `Display` text (`to_string()`, `format!("{}")`), untyped integers as `i32`.
    pub(super) fn display(&self, cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens) -> Res<String> {
        Ok(match self {
            Scalar::Int(v, t) => {
                let t = t.unwrap_or(IntTy::I32);
                if !t.fits(*v) {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
                }
                v.to_string()
            }
            Scalar::Float(v, Some(FloatTy::F32)) => (*v as f32).to_string(),
            Scalar::Float(v, _) => v.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Char(c) => c.to_string(),
            Scalar::Str(s) => s.clone(),
        })
    }

    /// The JSON serde_json gives this value as the scalar type `want`.
    pub fn to_json(&self, cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, want: Want) -> Res<Value> {
        let mismatch = || {
            cx.refuse(
                at,
                &format!(
                    "a {} value where {} is expected",
                    self.kind(),
                    want_name(want)
                ),
            )
        };
        match (self, want) {
            (Scalar::Int(v, t), Want::Int(w)) => {
                if t.is_some_and(|t| t != w) {
                    return Err(mismatch());
                }
                if !w.fits(*v) {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", w.name())));
                }
                int_json(cx, at, *v)
            }
            (Scalar::Int(v, t), Want::Any) => {
                if let Some(t) = t
                    && !t.fits(*v)
                {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
                }
                int_json(cx, at, *v)
            }
            (Scalar::Float(v, t), Want::Float(w)) => {
                if t.is_some_and(|t| t != w) {
                    return Err(mismatch());
                }
                let v = if w == FloatTy::F32 {
                    *v as f32 as f64
                } else {
                    *v
                };
                float_json(cx, at, v)
            }
            (Scalar::Float(v, _), Want::Any) => float_json(cx, at, *v),
            (Scalar::Bool(b), Want::Bool | Want::Any) => Ok(Value::Bool(*b)),
            (Scalar::Char(c), Want::Char | Want::Any) => Ok(Value::String(c.to_string())),
            (Scalar::Str(s), Want::Str | Want::Any) => Ok(Value::String(s.clone())),
            _ => Err(mismatch()),
        }
    }
}

pub(super) fn want_name(w: Want) -> &'static str {
    match w {
        Want::Int(t) => t.name(),
        Want::Float(FloatTy::F32) => "f32",
        Want::Float(FloatTy::F64) => "f64",
        Want::Bool => "bool",
        Want::Char => "char",
        Want::Str => "a string",
        Want::Any => "a value",
    }
}

fn int_json(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: i128) -> Res<Value> {
    if let Ok(i) = i64::try_from(v) {
        Ok(Value::from(i))
    } else if let Ok(u) = u64::try_from(v) {
        Ok(Value::from(u))
    } else {
        Err(cx.refuse(at, "a 128-bit value outside the 64-bit range"))
    }
}

fn float_json(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: f64) -> Res<Value> {
    match serde_json::Number::from_f64(v) {
        Some(n) => Ok(Value::Number(n)),
        None => Err(cx.refuse(at, "a NaN or infinite float")),
    }
}

pub(super) fn int_of(w: Want) -> Option<IntTy> {
    match w {
        Want::Int(t) => Some(t),
        _ => None,
    }
}
