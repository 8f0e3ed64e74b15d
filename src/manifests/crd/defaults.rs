//! `#[serde(default)]` values, evaluated statically as schemars_derive evaluates them at run
//! time: `<T>::default()`, `default_fn()` or the container's `Self::default().field`, then
//! `skip_serializing_if`, then serialized with serde's rules (renames, skips, flatten).
//!
//! The evaluation is directed by the type each value has in Rust: a struct literal is
//! evaluated field by field against the field types, `..base` fills the missing fields from
//! the value of `base` (`Default::default()` is the type's own `Default`: derived, or the
//! hand-written `impl Default` evaluated in turn), and every scalar is computed with its own
//! type by [`super::eval`] (so an `f32` inside a `Vec<f32>` or a struct field widens as
//! serde_json widens it). What cannot be evaluated exactly is an error naming the
//! expression and its `file:line`.
//!
//! This module holds a field's default and `skip_serializing_if`, the entry points the
//! pieces call back into ([`value()`] and the defaults of a struct's fields), and
//! [`eval_untyped`] for attribute values. The pieces: [`value`](mod@value) (an expression of
//! a known type), [`leaf`] (std and k8s-openapi types known by path: durations, addresses,
//! times), [`type_default`] (a type's own `Default`) and [`serialize`] (serde's derived
//! `Serialize` of a struct or enum). What a type is for evaluation, and scalars, are
//! [`super::eval`]'s.

use serde_derive_internals::ast as serde_ast;
use serde_derive_internals::attr::Default as SerdeDefault;
use serde_json::Value;

use super::eval::{Ctx, EvalError, FwdKind, Res, Shape, UserTy, shape};
use super::resolve::{Crate, LocalItem, LocalValue, ModId};

pub mod leaf;
pub mod serialize;
pub mod type_default;
pub mod value;

use leaf::leaf_value;
use serialize::{may_serialize_null, serialize_struct};
use type_default::{default_of, derives_default, hand_default};
use value::{
    any_value, call_path, collect_seq, enum_value, forward_value, is_default_ctor, last_ident,
    map_value, path_user_type, seq_elems, some_or_ok, struct_fields,
};

/// Evaluates `expr` (written in module `m`) with no expected type, to the JSON value its
/// serialization gives (attribute values such as `range(min = …)` and `example = …`).
pub fn eval_untyped(krate: &Crate<'_>, m: ModId, expr: &syn::Expr) -> Result<Value, String> {
    eval_untyped_with_cause(krate, m, expr).map_err(|e| e.message)
}

/// [`eval_untyped`] keeping the error's [`Cause`](crate::manifests::diag::Cause): whether
/// compiling could decide it, or the input is refused whatever rustc would do with it (an
/// `include_str!` that leads out of the crate or past what a CRD holds).
pub fn eval_untyped_with_cause(
    krate: &Crate<'_>,
    m: ModId,
    expr: &syn::Expr,
) -> Result<Value, crate::manifests::crd::eval::EvalError> {
    let cx = Ctx::new(krate, m);
    value(&cx, expr, &Shape::Any)
}

/// The `default` a field's schema gets, or `None` when `skip_serializing_if` drops it.
/// `m` is the module of the container `input`; `container_default` its `#[serde(default)]`.
pub fn field_default(
    krate: &Crate<'_>,
    m: ModId,
    input: &syn::DeriveInput,
    container_default: &SerdeDefault,
    f: &serde_ast::Field,
) -> Res<Option<Value>> {
    // No `Self`: serde calls the default path inside its visitor, where `Self` is the
    // visitor (`default = "Self::f"` does not compile).
    let cx = Ctx::new(krate, m);
    let v = match f.attrs.default() {
        SerdeDefault::Default => default_of(&cx, &shape(&cx, m, f.ty)?)?,
        SerdeDefault::Path(p) => call_default_path(&cx, &p.path, &shape(&cx, m, f.ty)?)?,
        SerdeDefault::None => {
            let Some(LocalItem::Struct(s)) = krate.item(m, &input.ident.to_string()) else {
                return Err(format!("`{}` is not a struct of the sources", input.ident).into());
            };
            let member = match &f.member {
                syn::Member::Named(i) => i.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            let index = s
                .fields
                .iter()
                .enumerate()
                .position(|(i, sf)| member_name(sf, i) == member)
                .ok_or_else(|| format!("field `{member}` not found"))?;
            let user = UserTy {
                m,
                item: LocalItem::Struct(s),
                am: m,
                args: Vec::new(),
            };
            let fields = match container_default {
                SerdeDefault::Default => default_struct_fields(&cx, &user, s)?,
                SerdeDefault::Path(p) => {
                    let Some((fcx, block, _)) = cx.function(&p.path) else {
                        return Err(cx.refuse(
                            &p.path,
                            "the default function is not defined in the given sources",
                        ));
                    };
                    let (bcx, tail) = fcx.enter_block(block)?;
                    struct_fields(&bcx, tail, &user, s)?
                }
                SerdeDefault::None => return Ok(None),
            };
            fields.into_iter().nth(index).unwrap_or(Value::Null)
        }
    };
    if let Some(pred) = f.attrs.skip_serializing_if()
        && predicate(&cx, m, f.ty, &pred.path, &v)?
    {
        // Skipped before serialization: a `serialize_with` function never runs.
        return Ok(None);
    }
    if f.attrs.serialize_with().is_some() {
        return Err(
            "the field is serialized with `serialize_with`, which rsbuilder cannot run (and its skip_serializing_if does not skip this default)".into(),
        );
    }
    Ok(Some(v))
}

fn member_name(f: &syn::Field, i: usize) -> String {
    f.ident
        .as_ref()
        .map(|i| i.to_string())
        .unwrap_or_else(|| i.to_string())
}

/// `default = "path"`: a zero-argument function of the sources, or a std constructor
/// (`String::new`, `Vec::new`, `Default::default`, `T::default`) giving the type's Default.
fn call_default_path(cx: &Ctx<'_, '_>, path: &syn::Path, ty: &Shape<'_>) -> Res<Value> {
    if let Some((fcx, block, ret)) = cx.function(path) {
        let ret_shape = match ret {
            Some(t) => shape(&fcx, fcx.m, t)?,
            None => return Err(cx.refuse(path, "the default function returns `()`")),
        };
        let (bcx, tail) = fcx.enter_block(block)?;
        return value(&bcx, tail, &ret_shape)
            .map_err(|e| prefix(e, &format!("function `{}`", last_ident(path))));
    }
    match is_default_ctor(cx, path) {
        true => default_of(cx, ty),
        false => Err(cx.refuse(
            path,
            "the default function is not defined in the given sources",
        )),
    }
}

/// Whether the `skip_serializing_if` function `path` skips the value `v` (serialized) of a
/// field of type `ty` written in module `m`. Known: `Option::is_none` / `is_some`, the
/// `is_empty` methods, `std::ops::Not::not`, and a generic "is the default" function of the
/// sources (see [`is_default_fn`]); any other function of the sources is refused.
fn predicate(cx: &Ctx<'_, '_>, m: ModId, ty: &syn::Type, path: &syn::Path, v: &Value) -> Res<bool> {
    if let Some((_, local)) = cx.krate.resolve_value(m, path) {
        return match local {
            LocalValue::Fn(f) if is_default_fn(f) => equals_default(cx, m, ty, v)
                .map_err(|e| prefix(e, &format!("skip_serializing_if `{}`", f.sig.ident))),
            _ => Err(cx.refuse(
                path,
                "the skip_serializing_if function of the sources is not a generic `*v == T::default()` comparison, and cannot be evaluated statically",
            )),
        };
    }
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segs.last().map(String::as_str) {
        Some("is_none") => Ok(v.is_null()),
        Some("is_some") => Ok(!v.is_null()),
        Some("is_empty") => Ok(match v {
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::String(s) => s.is_empty(),
            Value::Null => true,
            _ => false,
        }),
        Some("not") => Ok(v == &Value::Bool(false)),
        _ => Err(format!(
            "the skip_serializing_if function `{}` cannot be evaluated statically",
            quote::ToTokens::to_token_stream(path)
                .to_string()
                .replace(' ', "")
        )
        .into()),
    }
}

/// Whether `f` is `fn name<T: Default + PartialEq>(v: &T) -> bool` whose body is only a
/// comparison of the argument with `T`'s Default: `*v == T::default()`,
/// `v == &T::default()`, either side first, with `T::default()`, `<T>::default()`,
/// `<T as Default>::default()` or `Default::default()`.
fn is_default_fn(f: &syn::ItemFn) -> bool {
    let params: Vec<&syn::TypeParam> = f.sig.generics.type_params().collect();
    let [tp] = params.as_slice() else {
        return false;
    };
    let t = &tp.ident;
    let is_t = |ty: &syn::Type| matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(t));
    let mut inputs = f.sig.inputs.iter();
    let (Some(syn::FnArg::Typed(arg)), None) = (inputs.next(), inputs.next()) else {
        return false;
    };
    let syn::Pat::Ident(pi) = &*arg.pat else {
        return false;
    };
    let syn::Type::Reference(r) = &*arg.ty else {
        return false;
    };
    if pi.by_ref.is_some() || pi.subpat.is_some() || r.mutability.is_some() || !is_t(&r.elem) {
        return false;
    }
    if !matches!(&f.sig.output, syn::ReturnType::Type(_, o) if matches!(&**o, syn::Type::Path(p) if p.path.is_ident("bool")))
    {
        return false;
    }
    let [syn::Stmt::Expr(body, None)] = f.block.stmts.as_slice() else {
        return false;
    };
    let syn::Expr::Binary(b) = strip_parens(body) else {
        return false;
    };
    if !matches!(b.op, syn::BinOp::Eq(_)) {
        return false;
    }
    // An operand: the argument (`Some(true)`) or the Default (`Some(false)`), with how
    // many references it is behind.
    let side = |e: &syn::Expr| -> Option<(bool, i8)> {
        match strip_parens(e) {
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                matches!(strip_parens(&u.expr), syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident(&pi.ident))
                    .then_some((true, 0))
            }
            syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident(&pi.ident) => Some((true, 1)),
            syn::Expr::Reference(r) if r.mutability.is_none() => {
                is_default_call(&r.expr, &is_t).then_some((false, 1))
            }
            e => is_default_call(e, &is_t).then_some((false, 0)),
        }
    };
    match (side(&b.left), side(&b.right)) {
        (Some((a, la)), Some((d, ld))) => a != d && la == ld,
        _ => false,
    }
}

fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        e => e,
    }
}

/// `T::default()`, `<T>::default()`, `<T as Default>::default()` or `Default::default()`.
fn is_default_call(e: &syn::Expr, is_t: &dyn Fn(&syn::Type) -> bool) -> bool {
    let syn::Expr::Call(c) = strip_parens(e) else {
        return false;
    };
    let syn::Expr::Path(p) = &*c.func else {
        return false;
    };
    if !c.args.is_empty() {
        return false;
    }
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let plain = p.path.segments.iter().all(|s| s.arguments.is_none());
    match &p.qself {
        None => {
            plain
                && (segs == ["Default", "default"]
                    || matches!(&p.path.segments.first(), Some(s) if segs.len() == 2 && is_t(&syn::parse_quote!(#s)) && segs[1] == "default"))
        }
        Some(q) => {
            plain
                && is_t(&q.ty)
                && ((q.position == 0 && segs == ["default"])
                    || (q.position == 1 && segs == ["Default", "default"]))
        }
    }
}

/// Whether the value `v` (serialized) of type `ty` equals `<T as Default>::default()` by
/// `T`'s `PartialEq`: decided where the serialized form tells it exactly (primitives,
/// strings, `Option`s whose `Some` never serializes as null, collections against empty,
/// tuples and arrays element by element, smart pointers by their content); other types are
/// refused, their `PartialEq` may be hand-written or see what serde does not write.
fn equals_default(cx: &Ctx<'_, '_>, m: ModId, ty: &syn::Type, v: &Value) -> Res<bool> {
    let cx = &cx.deeper()?;
    let text = quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(' ', "");
    let refuse = || -> Res<bool> {
        Err(format!("comparing a `{text}` value with its Default is not evaluated").into())
    };
    let all = |tm: ModId, tys: &mut dyn Iterator<Item = &syn::Type>, vals: &[Value]| {
        let mut eq = true;
        for (t, x) in tys.zip(vals) {
            eq &= equals_default(cx, tm, t, x)?;
        }
        Ok::<bool, EvalError>(eq)
    };
    match shape(cx, m, ty)? {
        Shape::Option(om, inner) => match v.is_null() {
            true if may_serialize_null(cx, om, &inner, 0) => refuse(),
            null => Ok(null),
        },
        Shape::Seq(..) => match v {
            Value::Array(a) => Ok(a.is_empty()),
            _ => refuse(),
        },
        Shape::Map(..) => match v {
            Value::Object(o) => Ok(o.is_empty()),
            _ => refuse(),
        },
        Shape::Forward(_, _, FwdKind::Weak) => refuse(),
        Shape::Forward(fm, t, _) => equals_default(cx, fm, &t, v),
        Shape::Tuple(tm, ts) => match v {
            Value::Array(a) if a.len() == ts.len() => all(tm, &mut ts.iter(), a),
            _ => refuse(),
        },
        Shape::Array(tm, t, n) => match v {
            Value::Array(a) if a.len() == n => all(tm, &mut std::iter::repeat_n(&t, n), a),
            _ => refuse(),
        },
        Shape::Leaf(p) => match (p.as_str(), v) {
            ("f32" | "f64", Value::Number(n)) => Ok(n.as_f64() == Some(0.0)),
            // NaN serializes as null, and is not equal to 0.0.
            ("f32" | "f64", Value::Null) => Ok(false),
            (
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize",
                Value::Number(n),
            ) => Ok(n.as_u64() == Some(0) || n.as_i64() == Some(0)),
            ("bool", Value::Bool(b)) => Ok(!b),
            ("char" | "str" | "std::string::String", Value::String(s)) => {
                Ok(s == if p == "char" { "\0" } else { "" })
            }
            ("()" | "serde_json::Value" | "serde_json::value::Value", v) => Ok(v.is_null()),
            _ => refuse(),
        },
        Shape::User(_) | Shape::Any => refuse(),
    }
}

/// The shape of `ty` for a value written in `cx`.
fn shape_in<'a>(cx: &Ctx<'_, 'a>, m: ModId, ty: &syn::Type) -> Res<Shape<'a>> {
    shape(cx, m, ty)
}

fn prefix(e: EvalError, what: &str) -> EvalError {
    EvalError {
        message: format!("{what}: {}", e.message),
        cause: e.cause,
    }
}

/// The serialized value of each field of `Default::default()` of struct `s` (declaration
/// order): a derived Default takes each field type's Default (a field whose type is a type
/// parameter takes the argument's: `Wrapper<i32>` with `value: T` gives 0); a hand-written
/// `impl Default` is evaluated.
fn default_struct_fields(cx: &Ctx<'_, '_>, u: &UserTy<'_>, s: &syn::ItemStruct) -> Res<Vec<Value>> {
    if derives_default(u.item) {
        let params: Vec<&syn::Ident> = s.generics.type_params().map(|p| &p.ident).collect();
        let mut values = Vec::new();
        for f in &s.fields {
            let arg = match &f.ty {
                syn::Type::Path(p) if p.qself.is_none() => p
                    .path
                    .get_ident()
                    .and_then(|id| params.iter().position(|p| *p == id))
                    .and_then(|i| u.args.get(i)),
                _ => None,
            };
            // The Default of `Vec<T>`, `Option<T>`, … does not depend on `T`; a `T` that
            // matters (`Box<T>`) is left unresolved and refused.
            values.push(match arg {
                Some(arg) => default_of(cx, &shape_in(cx, u.am, arg)?)?,
                None => default_of(cx, &shape_in(cx, u.m, &f.ty)?)?,
            });
        }
        return Ok(values);
    }
    let name = s.ident.to_string();
    match hand_default(cx, u)? {
        Some((bcx, tail)) => struct_fields(&bcx, tail, u, s)
            .map_err(|e| prefix(e, &format!("`impl Default for {name}`"))),
        None => Err(format!("`{name}` has no Default (derive it or implement it)").into()),
    }
}

/// Evaluates `expr` as a value of the type `shape`, serialized as serde_json would.
pub fn value(cx: &Ctx<'_, '_>, expr: &syn::Expr, shape: &Shape<'_>) -> Res<Value> {
    let cx = &cx.deeper()?;
    // Forms that do not depend on the type: grouping, blocks, bindings, constants, calls of
    // the sources' functions, `Default::default()`.
    match expr {
        syn::Expr::Paren(p) => return value(cx, &p.expr, shape),
        syn::Expr::Group(g) => return value(cx, &g.expr, shape),
        syn::Expr::Block(b) if b.label.is_none() => {
            let (inner, tail) = cx.enter_block(&b.block)?;
            return value(&inner, tail, shape);
        }
        syn::Expr::MethodCall(mc) if mc.method == "clone" && mc.args.is_empty() => {
            return value(cx, &mc.receiver, shape);
        }
        // `Some(e).unwrap()`, `Ok(e).expect("…")`: `e` itself, as rustc computes it.
        syn::Expr::MethodCall(mc)
            if (mc.method == "unwrap" && mc.args.is_empty())
                || (mc.method == "expect" && mc.args.len() == 1) =>
        {
            if let Some(inner) = some_or_ok(&mc.receiver) {
                return value(cx, inner, shape);
            }
        }
        syn::Expr::Path(p) if p.qself.is_none() => {
            if let Some((bcx, bexpr, bty)) = cx.let_binding(&p.path) {
                return match (&bty, shape) {
                    (Some(t), Shape::Any) => {
                        let s = shape_in(&bcx, bcx.m, t)?;
                        value(&bcx, &bexpr, &s)
                    }
                    _ => value(&bcx, &bexpr, shape),
                };
            }
            if let Some((ccx, cexpr, cty)) = cx.constant(&p.path) {
                let s = shape_in(&ccx, ccx.m, cty)?;
                return value(&ccx, cexpr, &s);
            }
        }
        _ => {}
    }
    if let Some((path, args)) = call_path(expr)
        && args.is_empty()
    {
        if let Some((fcx, block, ret)) = cx.function(path) {
            let Some(ret) = ret else {
                return Err(cx.refuse(expr, "the function returns `()`"));
            };
            let s = shape_in(&fcx, fcx.m, ret)?;
            let (bcx, tail) = fcx.enter_block(block)?;
            return value(&bcx, tail, &s)
                .map_err(|e| prefix(e, &format!("function `{}`", last_ident(path))));
        }
        if is_default_ctor(cx, path) {
            return match shape {
                Shape::Any => match path_user_type(cx, path) {
                    Some(u) => default_of(cx, &Shape::User(u)),
                    None => Err(cx.refuse(expr, "the type of this Default is not known")),
                },
                s => default_of(cx, s),
            };
        }
    }
    match shape {
        Shape::Any => any_value(cx, expr),
        Shape::Leaf(p) => leaf_value(cx, expr, p),
        Shape::Option(om, inner) => match expr {
            syn::Expr::Path(p) if last_ident(&p.path) == "None" && p.path.segments.len() <= 2 => {
                Ok(Value::Null)
            }
            _ => match call_path(expr) {
                Some((path, args)) if last_ident(path) == "Some" && args.len() == 1 => {
                    value(cx, &args[0], &shape_in(cx, *om, inner)?)
                }
                _ => Err(cx.refuse(expr, "an Option is evaluated from `Some(…)` or `None`")),
            },
        },
        Shape::Forward(fm, inner, kind) => forward_value(cx, expr, *fm, inner, *kind),
        Shape::Seq(kind, sm, inner) => {
            let elems = seq_elems(cx, expr)?;
            let inner_shape = shape_in(cx, *sm, inner)?;
            let values = elems
                .iter()
                .map(|e| value(cx, e, &inner_shape))
                .collect::<Res<Vec<_>>>()?;
            collect_seq(cx, expr, *kind, &inner_shape, values)
        }
        Shape::Array(am, inner, n) => {
            let elems = seq_elems(cx, expr)?;
            if elems.len() != *n {
                return Err(cx.invalid(expr, &format!("an array of {n} elements is expected")));
            }
            let inner_shape = shape_in(cx, *am, inner)?;
            elems
                .iter()
                .map(|e| value(cx, e, &inner_shape))
                .collect::<Res<Vec<_>>>()
                .map(Value::Array)
        }
        Shape::Tuple(tm, ts) => match expr {
            syn::Expr::Tuple(t) if t.elems.len() == ts.len() => t
                .elems
                .iter()
                .zip(ts)
                .map(|(e, t)| value(cx, e, &shape_in(cx, *tm, t)?))
                .collect::<Res<Vec<_>>>()
                .map(Value::Array),
            _ => Err(cx.refuse(expr, "a tuple is evaluated from a tuple expression")),
        },
        Shape::Map(hash, mm, k, v) => map_value(cx, expr, *hash, *mm, k, v),
        Shape::User(u) => match u.item {
            LocalItem::Struct(s) => {
                let fields = struct_fields(cx, expr, u, s)?;
                serialize_struct(cx.krate, u.m, u.item, fields)
            }
            LocalItem::Enum(e) => enum_value(cx, expr, u, e),
            LocalItem::Alias(_) => Err(cx.refuse(expr, "a generic type alias")),
        },
    }
}

#[cfg(test)]
mod tests;
