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
//! What cannot be evaluated exactly is an [`EvalError`] naming the expression and its
//! `file:line`, so rsbuilder never guesses. docs/attributes.md lists what is accepted.

use std::rc::Rc;

use serde_json::Value;

use super::defaults::{self, Shape};
use super::resolve::{Crate, LocalValue, ModId, Resolved};
use crate::manifests::diag::Cause;

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

/// Recursion bound: deeper evaluations are refused rather than followed.
const MAX_DEPTH: usize = 48;

/// A `let` binding in scope: evaluated where it is used, in the scope it was written in
/// (bodies are pure: no statement but `let` is accepted, so inlining is exact).
struct Binding {
    name: String,
    expr: syn::Expr,
    ty: Option<syn::Type>,
    prev: Option<Rc<Binding>>,
}

/// Where an expression is evaluated: its module, the type `Self` names, the `let` bindings
/// in scope, and the recursion depth.
#[derive(Clone)]
pub struct Ctx<'k, 'a> {
    /// The sources.
    pub krate: &'k Crate<'a>,
    /// The module the expression is written in.
    pub m: ModId,
    /// `Self` (module and name of a local type) inside an `impl` block.
    pub self_ty: Option<(ModId, String)>,
    env: Option<Rc<Binding>>,
    depth: usize,
}

impl<'k, 'a> Ctx<'k, 'a> {
    /// A context for an expression written in module `m`, outside any function.
    pub fn new(krate: &'k Crate<'a>, m: ModId) -> Self {
        Self {
            krate,
            m,
            self_ty: None,
            env: None,
            depth: 0,
        }
    }

    /// One level deeper (the same scope); refused past [`MAX_DEPTH`].
    pub fn deeper(&self) -> Res<Self> {
        if self.depth > MAX_DEPTH {
            return Err("the evaluation recurses too deeply".into());
        }
        let mut c = self.clone();
        c.depth += 1;
        Ok(c)
    }

    /// The scope of an item's body in module `m` (no bindings), one level deeper.
    pub fn item_scope(&self, m: ModId, self_ty: Option<(ModId, String)>) -> Res<Self> {
        let mut c = self.deeper()?;
        c.m = m;
        c.self_ty = self_ty;
        c.env = None;
        Ok(c)
    }

    /// An error naming `expr`, its `file:line`, and `reason`.
    pub fn refuse(&self, expr: &dyn quote::ToTokens, reason: &str) -> EvalError {
        EvalError::beyond(self.located(expr, reason))
    }

    /// Like [`Ctx::refuse`], for input rustc rejects.
    pub fn invalid(&self, expr: &dyn quote::ToTokens, reason: &str) -> EvalError {
        EvalError {
            message: self.located(expr, reason),
            cause: Cause::Invalid,
        }
    }

    fn located(&self, expr: &dyn quote::ToTokens, reason: &str) -> String {
        let tokens = expr.to_token_stream();
        let span = tokens
            .clone()
            .into_iter()
            .next()
            .map(|t| t.span())
            .unwrap_or_else(proc_macro2::Span::call_site);
        // The source text as written when the span knows it, else the tokens.
        let mut text = syn::spanned::Spanned::span(&tokens)
            .source_text()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| tokens.to_string());
        text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > 80 {
            text = text.chars().take(77).collect::<String>() + "...";
        }
        let file = self
            .krate
            .modules
            .get(self.m)
            .map(|m| m.file.path.display().to_string())
            .unwrap_or_default();
        let line = span.start().line;
        if file.is_empty() || line == 0 {
            format!("`{text}`: {reason}")
        } else {
            format!("`{text}` ({file}:{line}): {reason}")
        }
    }

    /// The `let` binding `name` in scope, as the context to evaluate it in, its expression
    /// and its declared type.
    fn binding(&self, name: &str) -> Option<(Self, syn::Expr, Option<syn::Type>)> {
        let mut cur = self.env.clone();
        while let Some(b) = cur {
            if b.name == name {
                let mut c = self.clone();
                c.env = b.prev.clone();
                c.depth += 1;
                return Some((c, b.expr.clone(), b.ty.clone()));
            }
            cur = b.prev.clone();
        }
        None
    }

    /// Enters `block`: binds its `let` statements and returns the scope of its tail
    /// expression with that expression. Refuses any other statement.
    pub fn enter_block<'b>(&self, block: &'b syn::Block) -> Res<(Self, &'b syn::Expr)> {
        let mut c = self.deeper()?;
        let Some((last, lets)) = block.stmts.split_last() else {
            return Err(self.refuse(block, "an empty body gives `()`"));
        };
        for stmt in lets {
            let syn::Stmt::Local(local) = stmt else {
                return Err(self.refuse(
                    stmt,
                    "only `let` statements and a final expression are evaluated",
                ));
            };
            let (name, ty) = match &local.pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    (p.ident.to_string(), None)
                }
                syn::Pat::Type(t) => match &*t.pat {
                    syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        (p.ident.to_string(), Some((*t.ty).clone()))
                    }
                    _ => return Err(self.refuse(local, "only `let name = …;` is evaluated")),
                },
                _ => return Err(self.refuse(local, "only `let name = …;` is evaluated")),
            };
            let Some(init) = &local.init else {
                return Err(self.refuse(local, "a `let` without a value"));
            };
            if init.diverge.is_some() {
                return Err(self.refuse(local, "`let … else` is not evaluated"));
            }
            c.env = Some(Rc::new(Binding {
                name,
                expr: (*init.expr).clone(),
                ty,
                prev: c.env.take(),
            }));
        }
        match last {
            syn::Stmt::Expr(e, None) => Ok((c, e)),
            syn::Stmt::Expr(syn::Expr::Return(syn::ExprReturn { expr: Some(e), .. }), _) => {
                Ok((c, e))
            }
            other => Err(self.refuse(other, "the body does not end in a value")),
        }
    }

    /// The `let` binding a single-identifier path names, if any.
    pub fn let_binding(&self, path: &syn::Path) -> Option<(Self, syn::Expr, Option<syn::Type>)> {
        self.env.as_ref()?;
        path.get_ident().and_then(|i| self.binding(&i.to_string()))
    }

    /// A value path (`CONST`, `Self::PORT`, `Type::PORT`, `module::CONST`, `STATIC`) as the
    /// scope of its defining item, its expression and its declared type.
    pub fn constant(&self, path: &syn::Path) -> Option<(Self, &'a syn::Expr, &'a syn::Type)> {
        let (im, self_ty, expr, ty) = self.lookup_const(path)?;
        let mut c = self.item_scope(im, self_ty).ok()?;
        c.depth = self.depth + 1;
        Some((c, expr, ty))
    }

    #[allow(clippy::type_complexity)]
    fn lookup_const(
        &self,
        path: &syn::Path,
    ) -> Option<(ModId, Option<(ModId, String)>, &'a syn::Expr, &'a syn::Type)> {
        if path.segments.len() == 2 && path.leading_colon.is_none() {
            let ty = syn::Path::from(path.segments[0].ident.clone());
            if let Some(found) = self.assoc_const(&ty, &path.segments[1].ident.to_string()) {
                return Some(found);
            }
        }
        match self.krate.resolve_value(self.m, path)? {
            (cm, LocalValue::Const(c)) => Some((cm, None, &c.expr, &c.ty)),
            (cm, LocalValue::Static(s)) if matches!(s.mutability, syn::StaticMutability::None) => {
                Some((cm, None, &s.expr, &s.ty))
            }
            _ => None,
        }
    }

    /// The local type a path to a type names (`Self`, `Probe`, `crate::x::Probe`).
    pub fn local_type(&self, path: &syn::Path) -> Option<(ModId, String)> {
        if path.is_ident("Self") {
            return self.self_ty.clone();
        }
        match self.krate.resolve_type(self.m, path)? {
            Resolved::Local(tm, name) => Some((tm, name)),
            _ => None,
        }
    }

    #[allow(clippy::type_complexity)]
    fn assoc_const(
        &self,
        ty: &syn::Path,
        name: &str,
    ) -> Option<(ModId, Option<(ModId, String)>, &'a syn::Expr, &'a syn::Type)> {
        let (tm, tname) = self.local_type(ty)?;
        for (im, imp) in self.krate.impls() {
            let syn::Type::Path(tp) = &*imp.self_ty else {
                continue;
            };
            if self.krate.resolve_type(im, &tp.path) != Some(Resolved::Local(tm, tname.clone())) {
                continue;
            }
            for item in &imp.items {
                if let syn::ImplItem::Const(c) = item
                    && c.ident == name
                {
                    return Some((im, Some((tm, tname.clone())), &c.expr, &c.ty));
                }
            }
        }
        None
    }

    /// A zero-argument function a call path names (`f`, `module::f`, `Type::f`, `Self::f`):
    /// the scope of its body (with `Self` of its `impl`), the body and its return type.
    pub fn function(
        &self,
        path: &syn::Path,
    ) -> Option<(Self, &'a syn::Block, Option<&'a syn::Type>)> {
        let found = if path.segments.len() == 2 && path.segments[0].ident == "Self" {
            let (tm, name) = self.self_ty.clone()?;
            self.krate
                .associated_fn(tm, &name, &path.segments[1].ident.to_string())
        } else {
            self.krate.resolve_value(self.m, path)
        };
        let (fm, v) = found?;
        let (block, inputs, output) = match v {
            LocalValue::Fn(f) => (&*f.block, &f.sig.inputs, &f.sig.output),
            LocalValue::Method(f) => (&f.block, &f.sig.inputs, &f.sig.output),
            _ => return None,
        };
        if !inputs.is_empty() {
            return None;
        }
        let self_ty = match v {
            LocalValue::Method(f) => impl_self(self.krate, f),
            _ => None,
        };
        let ret = match output {
            syn::ReturnType::Type(_, t) => Some(&**t as &syn::Type),
            syn::ReturnType::Default => None,
        };
        let mut c = self.item_scope(fm, self_ty).ok()?;
        c.depth = self.depth + 1;
        Some((c, block, ret))
    }
}

/// The local type whose `impl` block holds the function `f`.
pub fn impl_self(krate: &Crate<'_>, f: &syn::ImplItemFn) -> Option<(ModId, String)> {
    for (im, imp) in krate.impls() {
        let holds = imp
            .items
            .iter()
            .any(|i| matches!(i, syn::ImplItem::Fn(g) if std::ptr::eq(g, f)));
        if !holds {
            continue;
        }
        let syn::Type::Path(tp) = &*imp.self_ty else {
            return None;
        };
        return match krate.resolve_type(im, &tp.path)? {
            Resolved::Local(tm, name) => Some((tm, name)),
            _ => None,
        };
    }
    None
}

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

    fn name(self) -> &'static str {
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
    fn bounds(self) -> (i128, i128) {
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

    fn bits(self) -> u32 {
        match self {
            Self::I8 | Self::U8 => 8,
            Self::I16 | Self::U16 => 16,
            Self::I32 | Self::U32 => 32,
            Self::I64 | Self::Isize | Self::U64 | Self::Usize => 64,
            Self::I128 | Self::U128 => 128,
        }
    }

    fn signed(self) -> bool {
        matches!(
            self,
            Self::I8 | Self::I16 | Self::I32 | Self::I64 | Self::I128 | Self::Isize
        )
    }

    fn fits(self, v: i128) -> bool {
        let (lo, hi) = self.bounds();
        lo <= v && v <= hi
    }

    /// `v as Self` for `v` of any integer type (two's complement truncation).
    fn wrap(self, v: i128) -> i128 {
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
    fn cast_float(self, f: f64) -> i128 {
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
    fn widens_to(self, to: IntTy) -> bool {
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
pub enum S {
    Int(i128, Option<IntTy>),
    Float(f64, Option<FloatTy>),
    Bool(bool),
    Char(char),
    Str(String),
}

impl S {
    fn kind(&self) -> &'static str {
        match self {
            S::Int(_, Some(t)) => t.name(),
            S::Int(..) => "integer",
            S::Float(_, Some(FloatTy::F32)) => "f32",
            S::Float(..) => "f64",
            S::Bool(_) => "bool",
            S::Char(_) => "char",
            S::Str(_) => "string",
        }
    }

    /// The `Display` text (`to_string()`, `format!("{}")`), untyped integers as `i32`.
    fn display(&self, cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens) -> Res<String> {
        Ok(match self {
            S::Int(v, t) => {
                let t = t.unwrap_or(IntTy::I32);
                if !t.fits(*v) {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
                }
                v.to_string()
            }
            S::Float(v, Some(FloatTy::F32)) => (*v as f32).to_string(),
            S::Float(v, _) => v.to_string(),
            S::Bool(b) => b.to_string(),
            S::Char(c) => c.to_string(),
            S::Str(s) => s.clone(),
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
            (S::Int(v, t), Want::Int(w)) => {
                if t.is_some_and(|t| t != w) {
                    return Err(mismatch());
                }
                if !w.fits(*v) {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", w.name())));
                }
                int_json(cx, at, *v)
            }
            (S::Int(v, t), Want::Any) => {
                if let Some(t) = t
                    && !t.fits(*v)
                {
                    return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
                }
                int_json(cx, at, *v)
            }
            (S::Float(v, t), Want::Float(w)) => {
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
            (S::Float(v, _), Want::Any) => float_json(cx, at, *v),
            (S::Bool(b), Want::Bool | Want::Any) => Ok(Value::Bool(*b)),
            (S::Char(c), Want::Char | Want::Any) => Ok(Value::String(c.to_string())),
            (S::Str(s), Want::Str | Want::Any) => Ok(Value::String(s.clone())),
            _ => Err(mismatch()),
        }
    }
}

fn want_name(w: Want) -> &'static str {
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

/// Evaluates `expr` (written in module `m`) with no expected type, to the JSON value its
/// serialization gives (attribute values such as `range(min = …)` and `example = …`).
pub fn eval(krate: &Crate<'_>, m: ModId, expr: &syn::Expr) -> Result<Value, String> {
    let cx = Ctx::new(krate, m);
    defaults::value(&cx, expr, &Shape::Any).map_err(|e| e.message)
}

/// Evaluates a scalar expression expecting the scalar type `want`.
pub fn scalar(cx: &Ctx<'_, '_>, expr: &syn::Expr, want: Want) -> Res<S> {
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
                    S::Int(v, t) => {
                        if let Some(t) = t {
                            if !t.signed() {
                                return Err(cx.invalid(expr, "negation of an unsigned integer"));
                            }
                            if !t.fits(-v) {
                                return Err(cx.invalid(expr, "the negation overflows"));
                            }
                        }
                        Ok(S::Int(-v, t))
                    }
                    S::Float(v, t) => Ok(S::Float(-v, t)),
                    _ => Err(cx.refuse(expr, "negation of a value that is not a number")),
                }
            }
            syn::UnOp::Not(_) => match scalar(cx, &u.expr, want)? {
                S::Bool(b) => Ok(S::Bool(!b)),
                S::Int(v, t) => {
                    let t = t.or(int_of(want)).unwrap_or(IntTy::I32);
                    Ok(S::Int(t.wrap(!v), Some(t)))
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

fn int_of(w: Want) -> Option<IntTy> {
    match w {
        Want::Int(t) => Some(t),
        _ => None,
    }
}

fn lit_scalar(cx: &Ctx<'_, '_>, lit: &syn::Lit, want: Want, negative: bool) -> Res<S> {
    let float = |digits: &str, ty: Option<FloatTy>, want: Want| -> Res<S> {
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
        Ok(S::Float(v, ty))
    };
    match lit {
        syn::Lit::Str(s) => Ok(S::Str(s.value())),
        syn::Lit::Char(c) => Ok(S::Char(c.value())),
        syn::Lit::Bool(b) => Ok(S::Bool(b.value)),
        syn::Lit::Byte(b) => Ok(S::Int(b.value() as i128, Some(IntTy::U8))),
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
            Ok(S::Int(v, ty))
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

/// Gives an untyped operand the type of the other one (as rustc's inference does).
fn unify(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, a: S, b: S) -> Res<(S, S)> {
    match (&a, &b) {
        (S::Int(_, Some(t)), S::Int(v, None)) => {
            if !t.fits(*v) {
                return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
            }
            Ok((a.clone(), S::Int(*v, Some(*t))))
        }
        (S::Int(v, None), S::Int(_, Some(t))) => {
            if !t.fits(*v) {
                return Err(cx.invalid(at, &format!("{v} does not fit in {}", t.name())));
            }
            Ok((S::Int(*v, Some(*t)), b.clone()))
        }
        (S::Int(_, Some(x)), S::Int(_, Some(y))) if x != y => {
            Err(cx.invalid(at, "operands of different integer types"))
        }
        (S::Float(_, Some(x)), S::Float(_, Some(y))) if x != y => {
            Err(cx.invalid(at, "operands of different float types"))
        }
        _ => Ok((a, b)),
    }
}

fn binary(cx: &Ctx<'_, '_>, b: &syn::ExprBinary, want: Want) -> Res<S> {
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
    if let (S::Float(_, Some(t)), S::Float(_, None)) = (&l, &r) {
        r = scalar(cx, &b.right, Want::Float(*t))?;
    } else if let (S::Float(_, None), S::Float(_, Some(t))) = (&l, &r) {
        l = scalar(cx, &b.left, Want::Float(*t))?;
    }
    if !is_shift {
        (l, r) = unify(cx, at, l, r)?;
    }
    match (&l, &r) {
        (S::Bool(x), S::Bool(y)) => {
            let v = match b.op {
                B::And(_) | B::BitAnd(_) => *x && *y,
                B::Or(_) | B::BitOr(_) => *x || *y,
                B::BitXor(_) | B::Ne(_) => x != y,
                B::Eq(_) => x == y,
                _ => return Err(cx.refuse(at, "this operator on bools is not evaluated")),
            };
            Ok(S::Bool(v))
        }
        (S::Int(x, tx), S::Int(y, ty)) => {
            let t = tx
                .or(if is_shift { None } else { *ty })
                .or(if is_cmp { None } else { int_of(want) })
                .unwrap_or(IntTy::I32);
            let (x, y) = (*x, *y);
            if is_cmp {
                return Ok(S::Bool(compare(&b.op, x, y)));
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
            Ok(S::Int(v, Some(t)))
        }
        (S::Float(x, tx), S::Float(y, ty)) => {
            let t = tx.or(*ty).or(match want {
                Want::Float(t) if !is_cmp => Some(t),
                _ => None,
            });
            let (x, y) = (*x, *y);
            if is_cmp {
                return Ok(S::Bool(compare(&b.op, x, y)));
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
            Ok(S::Float(v, t))
        }
        (S::Str(x), S::Str(y)) if is_cmp => Ok(S::Bool(match b.op {
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

fn cast(cx: &Ctx<'_, '_>, c: &syn::ExprCast) -> Res<S> {
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
        S::Int(x, None) => {
            if !IntTy::I32.fits(x) {
                return Err(cx.invalid(c, &format!("{x} does not fit in i32")));
            }
            S::Int(x, Some(IntTy::I32))
        }
        other => other,
    };
    if let Some(t) = IntTy::from_name(&target) {
        return Ok(S::Int(
            match v {
                S::Int(x, _) => t.wrap(x),
                S::Float(f, _) => t.cast_float(f),
                S::Bool(b) => b as i128,
                S::Char(ch) => t.wrap(ch as i128),
                S::Str(_) => return Err(cx.invalid(c, "a string cannot be cast")),
            },
            Some(t),
        ));
    }
    match (target.as_str(), v) {
        ("f64", S::Int(x, _)) => Ok(S::Float(x as f64, Some(FloatTy::F64))),
        ("f32", S::Int(x, _)) => Ok(S::Float(x as f32 as f64, Some(FloatTy::F32))),
        ("f64", S::Float(f, _)) => Ok(S::Float(f, Some(FloatTy::F64))),
        ("f32", S::Float(f, _)) => Ok(S::Float(f as f32 as f64, Some(FloatTy::F32))),
        ("char", S::Int(x, Some(IntTy::U8))) => Ok(S::Char(x as u8 as char)),
        ("bool", S::Bool(b)) => Ok(S::Bool(b)),
        ("char", S::Char(ch)) => Ok(S::Char(ch)),
        _ => Err(cx.refuse(c, "this cast is not evaluated")),
    }
}

/// `u64::MAX`, `i32::MIN`, `f64::EPSILON`, `std::f64::consts::PI` and the like, taken from
/// the std rsbuilder is built with.
fn primitive_const(path: &syn::Path) -> Option<S> {
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
                "BITS" => return Some(S::Int($t::BITS as i128, Some(IntTy::U32))),
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
            return Some(S::Float(v, Some(t)));
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
            return float_consts!(f32, name).map(|v| S::Float(v, Some(FloatTy::F32)));
        }
        "f64" => {
            return float_consts!(f64, name).map(|v| S::Float(v, Some(FloatTy::F64)));
        }
        "char" if name == "MAX" => return Some(S::Char(char::MAX)),
        _ => None,
    }?;
    Some(S::Int(int, IntTy::from_name(ty)))
}

fn path_scalar(cx: &Ctx<'_, '_>, expr: &syn::Expr, path: &syn::Path, want: Want) -> Res<S> {
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
            (S::Int(x, _), Want::Int(t)) => S::Int(x, Some(t)),
            (S::Float(x, _), Want::Float(t)) => S::Float(x, Some(t)),
            (v, _) => v,
        });
    }
    Err(cx.refuse(
        expr,
        "not a constant, static or `let` binding rsbuilder can see",
    ))
}

/// The scalar a type is (`u16`, `&'static str`, `String`, an alias of one), if it is one.
pub fn want_of_type(cx: &Ctx<'_, '_>, ty: &syn::Type) -> Option<Want> {
    match defaults::shape(cx, cx.m, ty).ok()? {
        Shape::Leaf(p) => Want::of_leaf(&p),
        Shape::Forward(fm, inner, _) => {
            let mut c = cx.clone();
            c.m = fm;
            want_of_type(&c, &inner)
        }
        _ => None,
    }
}

/// `From<from> for to` between scalars, as std implements it.
fn convert(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: S, to: Want) -> Res<S> {
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
        (S::Str(_), Want::Str) => Ok(v.clone()),
        (S::Char(c), Want::Str) => Ok(S::Str(c.to_string())),
        (S::Int(x, Some(f)), Want::Int(t)) if f.widens_to(t) => Ok(S::Int(*x, Some(t))),
        (S::Int(x, Some(IntTy::U8)), Want::Char) => Ok(S::Char(*x as u8 as char)),
        (
            S::Int(
                x,
                Some(IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::U8 | IntTy::U16 | IntTy::U32),
            ),
            Want::Float(FloatTy::F64),
        ) => Ok(S::Float(*x as f64, Some(FloatTy::F64))),
        (
            S::Int(x, Some(IntTy::I8 | IntTy::I16 | IntTy::U8 | IntTy::U16)),
            Want::Float(FloatTy::F32),
        ) => Ok(S::Float(*x as f64, Some(FloatTy::F32))),
        (S::Float(x, Some(FloatTy::F32)), Want::Float(FloatTy::F64)) => {
            Ok(S::Float(*x, Some(FloatTy::F64)))
        }
        (S::Float(_, Some(a)), Want::Float(b)) if *a == b => Ok(v.clone()),
        (S::Bool(b), Want::Int(t)) => Ok(S::Int(*b as i128, Some(t))),
        (S::Bool(_), Want::Bool) | (S::Char(_), Want::Char) => Ok(v.clone()),
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
fn parse_as(s: &str, to: Want) -> Result<S, String> {
    fn int<T: std::str::FromStr<Err = std::num::ParseIntError> + Into<i128>>(
        s: &str,
        t: IntTy,
    ) -> Result<S, String> {
        s.parse::<T>()
            .map(|v| S::Int(v.into(), Some(t)))
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
                .map(|v| S::Int(v.into(), Some(t)))
                .map_err(|e| e.to_string()),
            IntTy::Usize => s
                .parse::<u64>()
                .map(|v| S::Int(v.into(), Some(t)))
                .map_err(|e| e.to_string()),
            IntTy::U128 => s.parse::<u128>().map_err(|e| e.to_string()).and_then(|v| {
                i128::try_from(v)
                    .map(|v| S::Int(v, Some(t)))
                    .map_err(|_| "beyond the evaluator's range".into())
            }),
        },
        Want::Float(FloatTy::F32) => s
            .parse::<f32>()
            .map(|v| S::Float(v as f64, Some(FloatTy::F32)))
            .map_err(|e| e.to_string()),
        Want::Float(FloatTy::F64) => s
            .parse::<f64>()
            .map(|v| S::Float(v, Some(FloatTy::F64)))
            .map_err(|e| e.to_string()),
        Want::Bool => s.parse::<bool>().map(S::Bool).map_err(|e| e.to_string()),
        Want::Char => s.parse::<char>().map(S::Char).map_err(|e| e.to_string()),
        Want::Str => Ok(S::Str(s.to_string())),
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
fn try_from_int(cx: &Ctx<'_, '_>, at: &dyn quote::ToTokens, v: S, to: IntTy) -> Res<S> {
    match v {
        S::Int(x, from) => {
            // An untyped literal argument falls back to `i32`, as rustc's inference does.
            let from = from.unwrap_or(IntTy::I32);
            if !from.fits(x) {
                return Err(cx.invalid(at, &format!("{x} does not fit in {}", from.name())));
            }
            if to.fits(x) {
                Ok(S::Int(x, Some(to)))
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
fn unwrapped_conversion(cx: &Ctx<'_, '_>, mc: &syn::ExprMethodCall, want: Want) -> Option<Res<S>> {
    let recv = match &*mc.receiver {
        syn::Expr::Paren(p) => &*p.expr,
        e => e,
    };
    let parse = |text_expr: &syn::Expr, to: Option<Want>, at: &dyn quote::ToTokens| -> Res<S> {
        let Some(to) = to else {
            return Err(cx.refuse(at, "the target type of this `parse` is not known"));
        };
        match scalar(cx, text_expr, Want::Str)? {
            S::Str(s) => parse_as(&s, to).map_err(|e| {
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

fn method_scalar(cx: &Ctx<'_, '_>, mc: &syn::ExprMethodCall, want: Want) -> Res<S> {
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
            Ok(S::Str(v.display(cx, &mc.receiver)?))
        }
        ("to_owned" | "clone", 0) => scalar(cx, &mc.receiver, recv_want),
        ("into", 0) => {
            let v = scalar(cx, &mc.receiver, Want::Any)?;
            // Every `From<&str>` std and serde_json offer gives a value that
            // serializes as the same string, so the target need not be known.
            if want == Want::Any
                && let S::Str(_) = v
            {
                return convert(cx, at, v, Want::Str);
            }
            if matches!(v, S::Int(_, None) | S::Float(_, None)) && want != Want::Any {
                return Err(cx.refuse(at, "`.into()` of an untyped number literal"));
            }
            if want == Want::Any {
                return Err(cx.refuse(at, "`.into()` where the target type is not known"));
            }
            convert(cx, at, v, want)
        }
        ("to_lowercase" | "to_uppercase" | "trim", 0) => match scalar(cx, &mc.receiver, Want::Any)?
        {
            S::Str(s) => Ok(S::Str(match name.as_str() {
                "to_lowercase" => s.to_lowercase(),
                "to_uppercase" => s.to_uppercase(),
                _ => s.trim().to_string(),
            })),
            _ => Err(cx.refuse(at, "a string method on a value that is not a string")),
        },
        _ => Err(cx.refuse(at, "this method call is not evaluated")),
    }
}

fn call_scalar(cx: &Ctx<'_, '_>, expr: &syn::Expr, c: &syn::ExprCall, want: Want) -> Res<S> {
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
        (Some("String"), "new", 0) => Ok(S::Str(String::new())),
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
            if matches!(v, S::Int(_, None) | S::Float(_, None)) {
                return Err(cx.refuse(expr, "a conversion of an untyped number literal"));
            }
            convert(cx, expr, v, to)
        }
        _ => Err(cx.refuse(expr, "this call is not evaluated")),
    }
}

fn comma_args(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<Vec<syn::Expr>> {
    mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .map(|p| p.into_iter().collect())
        .map_err(|_| cx.refuse(mac, "cannot read the macro's arguments"))
}

fn macro_scalar(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<S> {
    let name = mac
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    match name.as_str() {
        "format" => {
            let args = comma_args(cx, mac)?;
            let Some((fmt, rest)) = args.split_first() else {
                return Err(cx.refuse(mac, "`format!` without a format string"));
            };
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(fmt),
                ..
            }) = fmt
            else {
                return Err(cx.refuse(mac, "the format string is not a literal"));
            };
            let fmt = fmt.value();
            let mut out = String::new();
            let mut args = rest.iter();
            let mut chars = fmt.chars().peekable();
            while let Some(ch) = chars.next() {
                match ch {
                    '{' if chars.peek() == Some(&'{') => {
                        chars.next();
                        out.push('{');
                    }
                    '}' if chars.peek() == Some(&'}') => {
                        chars.next();
                        out.push('}');
                    }
                    '{' if chars.peek() == Some(&'}') => {
                        chars.next();
                        let Some(a) = args.next() else {
                            return Err(cx.invalid(mac, "more `{}` than arguments"));
                        };
                        if matches!(a, syn::Expr::Assign(_)) {
                            return Err(
                                cx.refuse(mac, "named `format!` arguments are not evaluated")
                            );
                        }
                        out.push_str(&scalar(cx, a, Want::Any)?.display(cx, a)?);
                    }
                    '{' | '}' => {
                        return Err(cx.refuse(
                            mac,
                            "only `{}`, `{{` and `}}` are evaluated in a format string",
                        ));
                    }
                    c => out.push(c),
                }
            }
            if args.next().is_some() {
                return Err(cx.invalid(mac, "more arguments than `{}`"));
            }
            Ok(S::Str(out))
        }
        "concat" => {
            let mut out = String::new();
            for e in comma_args(cx, mac)? {
                if let syn::Expr::Macro(inner) = &e {
                    // `concat!(include_str!("a.md"), stringify!(X))`: macros expanding to
                    // literals are expanded first, as rustc does.
                    match macro_scalar(cx, &inner.mac)? {
                        S::Str(text) => out.push_str(&text),
                        _ => return Err(cx.refuse(&e, "this macro in `concat!` is not evaluated")),
                    }
                    continue;
                }
                let syn::Expr::Lit(l) = &e else {
                    return Err(cx.invalid(&e, "`concat!` takes literals"));
                };
                match &l.lit {
                    syn::Lit::Str(s) => out.push_str(&s.value()),
                    syn::Lit::Char(c) => out.push(c.value()),
                    syn::Lit::Bool(b) => out.push_str(&b.value.to_string()),
                    syn::Lit::Int(i)
                        if i.suffix().is_empty() && i.to_string() == i.base10_digits() =>
                    {
                        out.push_str(i.base10_digits())
                    }
                    _ => return Err(cx.refuse(&e, "this `concat!` literal is not evaluated")),
                }
            }
            Ok(S::Str(out))
        }
        "stringify" => stringify(cx, mac).map(S::Str),
        "include_str" => include_str(cx, mac).map(S::Str),
        _ => Err(cx.refuse(mac, "this macro is not evaluated")),
    }
}

/// `stringify!(...)` of identifiers and literals, which rustc writes separated by one space;
/// punctuation is refused (rustc's spacing around it is its own).
fn stringify(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<String> {
    let mut parts = Vec::new();
    for t in mac.tokens.clone() {
        match t {
            proc_macro2::TokenTree::Ident(i) => parts.push(i.to_string()),
            proc_macro2::TokenTree::Literal(l) => parts.push(l.to_string()),
            _ => {
                return Err(cx.refuse(
                    mac,
                    "`stringify!` is evaluated for identifiers and literals only (rustc spaces punctuation its own way)",
                ));
            }
        }
    }
    Ok(parts.join(" "))
}

/// `include_str!("path")`: the file's text, the path taken relative to the source file as
/// rustc takes it; only a file inside the crate (under the directory of the nearest
/// Cargo.toml above the source file, or the source file's directory without one) is read.
fn include_str(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<String> {
    use crate::manifests::crd::resolve::normalize;
    let args = comma_args(cx, mac)?;
    let [
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(path),
            ..
        }),
    ] = &args[..]
    else {
        return Err(cx.refuse(
            mac,
            "`include_str!` is evaluated with a string literal path",
        ));
    };
    let source = &cx.krate.modules[cx.m].file.path;
    let dir = source.parent().unwrap_or(std::path::Path::new(""));
    let absolute = |p: &std::path::Path| normalize(&std::path::absolute(p).unwrap_or(p.into()));
    let target = absolute(&dir.join(path.value()));
    let root = crate::manifests::cfg::features::find_manifest(dir)
        .and_then(|m| m.parent().map(absolute))
        .unwrap_or_else(|| absolute(dir));
    if !target.starts_with(&root) {
        return Err(cx.refuse(
            mac,
            &format!(
                "`include_str!` of a file outside the crate ({}) is not read",
                root.display()
            ),
        ));
    }
    crate::engine::regular::read_path(&target).map_err(|e| {
        cx.invalid(
            mac,
            &format!("`include_str!` cannot read {}: {e}", target.display()),
        )
    })
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
        S::Float(_, Some(t)) => Want::Float(*t),
        _ => Want::Any,
    };
    s.to_json(&cx, lit, want).map_err(|e| e.message)
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
#[cfg(test)]
mod tests;
