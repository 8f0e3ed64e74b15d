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

use serde_derive_internals::ast::{self as serde_ast, Style};
use serde_derive_internals::attr::{Default as SerdeDefault, TagType};
use serde_json::{Map, Value};

use super::attrs;
use super::eval::{self, Ctx, EvalError, Res, Want};
use super::known::{self, Generic};
use super::resolve::{Crate, LocalItem, LocalValue, ModId, Resolved};
use crate::manifests::diag::Cause;

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

/// How a collection serializes its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqKind {
    /// `Vec`, `VecDeque`, `LinkedList`, slices: in order.
    List,
    /// `BTreeSet`: sorted, without duplicates.
    SortedSet,
    /// `HashSet`, `BinaryHeap`: an order that is not known statically.
    Unordered,
}

/// A wrapper that serializes as its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwdKind {
    /// `&T`.
    Ref,
    /// `Box`, `Rc`, `Arc` (`X::new(x)`, `x.into()`).
    Boxed,
    /// `Cow` (`Cow::Borrowed(x)`, `Cow::Owned(x)`, `x.into()`).
    Cow,
    /// `Mutex`, `RwLock`, `Cell`, `RefCell` (`X::new(x)`), `Wrapping`, `Reverse` (`X(x)`).
    Other,
    /// `rc::Weak`, `sync::Weak`: serialized as an upgrade attempt; not evaluated.
    Weak,
}

/// A user struct or enum as a value's type: its module and item, with the generic type
/// arguments of the use site and the module they are written in.
#[derive(Clone)]
pub struct UserTy<'a> {
    m: ModId,
    item: LocalItem<'a>,
    am: ModId,
    args: Vec<syn::Type>,
}

/// What a type is, for evaluation (short-lived: built per value, so its size does not matter).
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Shape<'a> {
    /// `Option<T>`.
    Option(ModId, syn::Type),
    /// A sequence or set of `T`.
    Seq(SeqKind, ModId, syn::Type),
    /// A map (`true`: a `HashMap`), with its key and value types.
    Map(bool, ModId, syn::Type, syn::Type),
    /// A wrapper of `T`.
    Forward(ModId, syn::Type, FwdKind),
    /// A tuple.
    Tuple(ModId, Vec<syn::Type>),
    /// `[T; N]`.
    Array(ModId, syn::Type, usize),
    /// A type rsbuilder knows by its normalized path (primitives, std, k8s-openapi, …).
    Leaf(String),
    /// A struct or enum of the sources.
    User(UserTy<'a>),
    /// Not known (attribute values): inferred from the expression.
    Any,
}

/// The [`Shape`] of `ty` written in module `m` (`Self` is `cx`'s self type).
pub fn shape<'a>(cx: &Ctx<'_, 'a>, m: ModId, ty: &syn::Type) -> Res<Shape<'a>> {
    let krate = cx.krate;
    let cx = &cx.deeper()?;
    let text = || quote::ToTokens::to_token_stream(ty).to_string();
    let unknown = || EvalError::beyond(format!("values of type `{}` are not evaluated", text()));
    match ty {
        syn::Type::Paren(p) => shape(cx, m, &p.elem),
        syn::Type::Group(g) => shape(cx, m, &g.elem),
        syn::Type::Reference(r) => Ok(Shape::Forward(m, (*r.elem).clone(), FwdKind::Ref)),
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok(Shape::Leaf("()".into())),
        syn::Type::Tuple(t) => Ok(Shape::Tuple(m, t.elems.iter().cloned().collect())),
        syn::Type::Slice(s) => Ok(Shape::Seq(SeqKind::List, m, (*s.elem).clone())),
        syn::Type::Array(a) => {
            let mut lcx = cx.clone();
            lcx.m = m;
            let n = match eval::scalar(&lcx, &a.len, Want::Int(eval::IntTy::Usize))? {
                eval::S::Int(n, _) => usize::try_from(n).map_err(|_| unknown())?,
                _ => return Err(unknown()),
            };
            Ok(Shape::Array(m, (*a.elem).clone(), n))
        }
        syn::Type::Path(p) if p.qself.is_none() => {
            if p.path.is_ident("Self") {
                let (tm, name) = cx.self_ty.clone().ok_or_else(unknown)?;
                return match krate.item(tm, &name) {
                    Some(item @ (LocalItem::Struct(_) | LocalItem::Enum(_))) => {
                        Ok(Shape::User(UserTy {
                            m: tm,
                            item,
                            am: m,
                            args: Vec::new(),
                        }))
                    }
                    _ => Err(unknown()),
                };
            }
            let args: Vec<syn::Type> = match &p.path.segments.last().map(|s| &s.arguments) {
                Some(syn::PathArguments::AngleBracketed(a)) => a
                    .args
                    .iter()
                    .filter_map(|g| match g {
                        syn::GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            match krate.resolve_type(m, &p.path) {
                Some(Resolved::Local(tm, name)) => match krate.item(tm, &name) {
                    Some(LocalItem::Alias(a)) if a.generics.params.is_empty() => {
                        shape(cx, tm, &a.ty)
                    }
                    Some(item @ (LocalItem::Struct(_) | LocalItem::Enum(_))) => {
                        Ok(Shape::User(UserTy {
                            m: tm,
                            item,
                            am: m,
                            args,
                        }))
                    }
                    _ => Err(unknown()),
                },
                Some(Resolved::External(path)) => {
                    let arg = |i: usize| args.get(i).cloned().ok_or_else(unknown);
                    let last = path.rsplit("::").next().unwrap_or_default();
                    match (known::std_generic(&path), last) {
                        (Some(Generic::Forward), _) => {
                            let kind = match last {
                                "Box" | "Rc" | "Arc" => FwdKind::Boxed,
                                "Cow" => FwdKind::Cow,
                                "Weak" => FwdKind::Weak,
                                _ => FwdKind::Other,
                            };
                            // `Cow<'a, str>`: the lifetime is not a type argument.
                            Ok(Shape::Forward(m, arg(0)?, kind))
                        }
                        (Some(_), "Option") => Ok(Shape::Option(m, arg(0)?)),
                        (Some(_), "Vec" | "VecDeque" | "LinkedList") => {
                            Ok(Shape::Seq(SeqKind::List, m, arg(0)?))
                        }
                        (Some(_), "BTreeSet") => Ok(Shape::Seq(SeqKind::SortedSet, m, arg(0)?)),
                        (Some(_), "HashSet" | "BinaryHeap") => {
                            Ok(Shape::Seq(SeqKind::Unordered, m, arg(0)?))
                        }
                        (Some(_), "BTreeMap" | "HashMap") => {
                            Ok(Shape::Map(last == "HashMap", m, arg(0)?, arg(1)?))
                        }
                        _ if known::leaf_type(&path).is_some() => Ok(Shape::Leaf(path)),
                        _ => Err(unknown()),
                    }
                }
                _ => Err(format!("type `{}` cannot be resolved", text()).into()),
            }
        }
        _ => Err(unknown()),
    }
}

/// The shape of `ty` for a value written in `cx`.
fn shape_in<'a>(cx: &Ctx<'_, 'a>, m: ModId, ty: &syn::Type) -> Res<Shape<'a>> {
    shape(cx, m, ty)
}

/// `<T as Default>::default()`, serialized.
pub fn default_of(cx: &Ctx<'_, '_>, shape: &Shape<'_>) -> Res<Value> {
    let cx = &cx.deeper()?;
    match shape {
        Shape::Option(..) => Ok(Value::Null),
        Shape::Seq(..) => Ok(Value::Array(Vec::new())),
        Shape::Map(..) => Ok(Value::Object(Map::new())),
        Shape::Forward(_, _, FwdKind::Weak) => {
            Err("the Default of a `Weak` is not evaluated".into())
        }
        Shape::Forward(fm, t, _) => default_of(cx, &shape_in(cx, *fm, t)?),
        Shape::Tuple(tm, ts) => ts
            .iter()
            .map(|t| default_of(cx, &shape_in(cx, *tm, t)?))
            .collect::<Res<_>>()
            .map(Value::Array),
        Shape::Array(tm, t, n) => {
            let one = default_of(cx, &shape_in(cx, *tm, t)?)?;
            Ok(Value::Array(vec![one; *n]))
        }
        Shape::Leaf(p) => leaf_default(p),
        Shape::User(u) => user_default(cx, u),
        Shape::Any => Err("`Default::default()` of a type that is not known".into()),
    }
}

fn leaf_default(path: &str) -> Res<Value> {
    Ok(match path {
        "bool" => Value::Bool(false),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => Value::from(0),
        "f32" | "f64" => Value::from(0.0),
        "char" => Value::String("\0".into()),
        "str" | "std::string::String" | "std::path::PathBuf" => Value::String(String::new()),
        "()" | "serde_json::Value" | "serde_json::value::Value" => Value::Null,
        "std::time::Duration" => serde_json::json!({"secs": 0, "nanos": 0}),
        "serde_json::Map" | "serde_json::value::Map" => Value::Object(Map::new()),
        other => match known::external_default(other) {
            Some(v) => v,
            None => {
                return Err(format!("the Default of `{other}` is not known to rsbuilder").into());
            }
        },
    })
}

/// The `impl Default for <name>` of the sources, with its module.
fn impl_default<'a>(
    krate: &Crate<'a>,
    tm: ModId,
    name: &str,
) -> Option<(ModId, &'a syn::ImplItemFn)> {
    for (im, imp) in krate.impls() {
        let Some((_, trait_path, _)) = &imp.trait_ else {
            continue;
        };
        if trait_path
            .segments
            .last()
            .map(|s| s.ident != "Default")
            .unwrap_or(true)
        {
            continue;
        }
        let syn::Type::Path(tp) = &*imp.self_ty else {
            continue;
        };
        if krate.resolve_type(im, &tp.path) != Some(Resolved::Local(tm, name.to_string())) {
            continue;
        }
        for item in &imp.items {
            if let syn::ImplItem::Fn(f) = item
                && f.sig.ident == "default"
            {
                return Some((im, f));
            }
        }
    }
    None
}

fn item_name(item: LocalItem<'_>) -> String {
    match item {
        LocalItem::Struct(s) => s.ident.to_string(),
        LocalItem::Enum(e) => e.ident.to_string(),
        LocalItem::Alias(a) => a.ident.to_string(),
    }
}

/// The scope and tail expression of the hand-written `impl Default` of a user type.
fn hand_default<'k, 'a>(
    cx: &Ctx<'k, 'a>,
    u: &UserTy<'a>,
) -> Res<Option<(Ctx<'k, 'a>, &'a syn::Expr)>> {
    let name = item_name(u.item);
    let Some((im, f)) = impl_default(cx.krate, u.m, &name) else {
        return Ok(None);
    };
    let fcx = cx.item_scope(im, Some((u.m, name)))?;
    let (bcx, tail) = fcx.enter_block(&f.block)?;
    Ok(Some((bcx, tail)))
}

fn derives_default(item: LocalItem<'_>) -> bool {
    let attrs = match item {
        LocalItem::Struct(s) => &s.attrs,
        LocalItem::Enum(e) => &e.attrs,
        LocalItem::Alias(_) => return false,
    };
    attrs::derives(attrs).iter().any(|d| d == "Default")
}

/// `Default::default()` of a struct or enum of the sources, serialized.
fn user_default(cx: &Ctx<'_, '_>, u: &UserTy<'_>) -> Res<Value> {
    match u.item {
        LocalItem::Struct(s) => {
            let fields = default_struct_fields(cx, u, s)?;
            serialize_struct(cx.krate, u.m, u.item, fields)
        }
        LocalItem::Enum(e) => {
            let name = e.ident.to_string();
            if derives_default(u.item) {
                let v = e
                    .variants
                    .iter()
                    .find(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))
                    .ok_or_else(|| EvalError {
                        message: format!(
                            "enum `{name}` derives Default without a #[default] variant"
                        ),
                        cause: Cause::Invalid,
                    })?;
                return serialize_variant(
                    cx.krate,
                    u.m,
                    u.item,
                    &v.ident.to_string(),
                    VariantData::Unit,
                );
            }
            match hand_default(cx, u)? {
                Some((bcx, tail)) => value(&bcx, tail, &Shape::User(u.clone()))
                    .map_err(|e| prefix(e, &format!("`impl Default for {name}`"))),
                None => Err(format!("`{name}` has no Default (derive it or implement it)").into()),
            }
        }
        LocalItem::Alias(_) => Err("alias".into()),
    }
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

/// The shape of a field of a user type, refused when it mentions `Self` or a type
/// parameter (their meaning depends on the use site).
fn field_shape<'a>(cx: &Ctx<'_, 'a>, u: &UserTy<'a>, f: &syn::Field) -> Res<Shape<'a>> {
    let generics = match u.item {
        LocalItem::Struct(s) => &s.generics,
        LocalItem::Enum(e) => &e.generics,
        LocalItem::Alias(a) => &a.generics,
    };
    let params: Vec<String> = generics
        .type_params()
        .map(|p| p.ident.to_string())
        .collect();
    let mentions = |t: &syn::Type| {
        quote::ToTokens::to_token_stream(t)
            .into_iter()
            .flat_map(flatten_tokens)
            .any(|i| i == "Self" || params.contains(&i))
    };
    if mentions(&f.ty) {
        return Err(format!(
            "the field type `{}` depends on `Self` or a type parameter",
            quote::ToTokens::to_token_stream(&f.ty)
        )
        .into());
    }
    shape_in(cx, u.m, &f.ty)
}

fn flatten_tokens(t: proc_macro2::TokenTree) -> Vec<String> {
    match t {
        proc_macro2::TokenTree::Ident(i) => vec![i.to_string()],
        proc_macro2::TokenTree::Group(g) => {
            g.stream().into_iter().flat_map(flatten_tokens).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a call path is `Default::default`, `<T>::default` or a std `T::new` that gives the
/// Default of the type the context expects (an inherent function of the sources is not).
fn is_default_ctor(cx: &Ctx<'_, '_>, path: &syn::Path) -> bool {
    if cx.function(path).is_some() {
        return false;
    }
    let mut prefix = path.clone();
    let Some(last) = prefix
        .segments
        .pop()
        .map(|p| p.into_value().ident.to_string())
    else {
        return false;
    };
    prefix.segments.pop_punct();
    if prefix.segments.is_empty() {
        return false;
    }
    let local = cx.local_type(&prefix).is_some();
    let known_external = || match cx.krate.resolve_type(cx.m, &prefix) {
        Some(Resolved::External(p)) => {
            known::leaf_type(&p).is_some() || known::std_generic(&p).is_some()
        }
        _ => false,
    };
    let ty = last_ident(&prefix);
    match last.as_str() {
        // `Default::default`, `Type::default` of a type rsbuilder knows; not a free function
        // of another crate that happens to be called `default`.
        "default" => ty == "Default" || local || known_external(),
        "new" => {
            !local
                && known_external()
                && matches!(
                    ty.as_str(),
                    "String"
                        | "Vec"
                        | "VecDeque"
                        | "LinkedList"
                        | "BTreeMap"
                        | "HashMap"
                        | "BTreeSet"
                        | "HashSet"
                        | "BinaryHeap"
                        | "Map"
                        | "PathBuf"
                )
        }
        _ => false,
    }
}

fn call_path(
    e: &syn::Expr,
) -> Option<(
    &syn::Path,
    &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
)> {
    match e {
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) if p.qself.is_none() => Some((&p.path, &c.args)),
            _ => None,
        },
        _ => None,
    }
}

fn last_ident(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

fn prev_ident(path: &syn::Path) -> Option<String> {
    let n = path.segments.len();
    (n >= 2).then(|| path.segments[n - 2].ident.to_string())
}

/// The `e` of `Some(e)` / `Option::Some(e)` / `Ok(e)` / `Result::Ok(e)` (in parentheses or
/// not), whose `unwrap()` and `expect(..)` are `e`.
fn some_or_ok(e: &syn::Expr) -> Option<&syn::Expr> {
    match strip_parens(e) {
        syn::Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            syn::Expr::Path(p)
                if p.qself.is_none()
                    && matches!(
                        p.path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect::<Vec<_>>()
                            .iter()
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                            .as_slice(),
                        ["Some"] | ["Option", "Some"] | ["Ok"] | ["Result", "Ok"]
                    ) =>
            {
                Some(&c.args[0])
            }
            _ => None,
        },
        _ => None,
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

/// The user type a path or a value path's prefix names (`Probe`, `Self`, `Mode::Fast`'s
/// `Mode`).
fn path_user_type<'a>(cx: &Ctx<'_, 'a>, path: &syn::Path) -> Option<UserTy<'a>> {
    let user = |path: &syn::Path| {
        let (tm, name) = cx.local_type(path)?;
        match cx.krate.item(tm, &name)? {
            item @ (LocalItem::Struct(_) | LocalItem::Enum(_)) => Some(UserTy {
                m: tm,
                item,
                am: cx.m,
                args: Vec::new(),
            }),
            _ => None,
        }
    };
    if let Some(u) = user(path) {
        return Some(u);
    }
    let mut prefix = path.clone();
    prefix.segments.pop()?;
    prefix.segments.pop_punct();
    if prefix.segments.is_empty() {
        return None;
    }
    user(&prefix)
}

/// A value whose type is not known: inferred from the expression's form.
fn any_value(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Value> {
    match expr {
        syn::Expr::Path(p) if p.path.is_ident("None") => return Ok(Value::Null),
        syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
            return seq_elems(cx, expr)?
                .iter()
                .map(|e| any_value(cx, e))
                .collect::<Res<Vec<_>>>()
                .map(Value::Array);
        }
        syn::Expr::Macro(m) if last_ident(&m.mac.path) == "vec" => {
            return seq_elems(cx, expr)?
                .iter()
                .map(|e| any_value(cx, e))
                .collect::<Res<Vec<_>>>()
                .map(Value::Array);
        }
        syn::Expr::Macro(m) if last_ident(&m.mac.path) == "json" => {
            return eval::json_tokens(&m.mac.tokens).map_err(|e| cx.refuse(expr, &e));
        }
        syn::Expr::Tuple(t) if t.elems.is_empty() => return Ok(Value::Null),
        syn::Expr::Tuple(t) => {
            return t
                .elems
                .iter()
                .map(|e| any_value(cx, e))
                .collect::<Res<Vec<_>>>()
                .map(Value::Array);
        }
        syn::Expr::Reference(r) => return any_value(cx, &r.expr),
        syn::Expr::Struct(s) => {
            if let Some(u) = path_user_type(cx, &s.path) {
                return value(cx, expr, &Shape::User(u));
            }
        }
        syn::Expr::Path(p) => {
            if let Some(u) = path_user_type(cx, &p.path) {
                return value(cx, expr, &Shape::User(u));
            }
        }
        _ => {}
    }
    if let Some((path, args)) = call_path(expr) {
        if last_ident(path) == "Some" && args.len() == 1 {
            return any_value(cx, &args[0]);
        }
        if let Some(u) = path_user_type(cx, path) {
            return value(cx, expr, &Shape::User(u));
        }
    }
    let s = eval::scalar(cx, expr, Want::Any)?;
    let want = match &s {
        eval::S::Float(_, Some(t)) => Want::Float(*t),
        _ => Want::Any,
    };
    s.to_json(cx, expr, want)
}

/// A value of a type rsbuilder knows by path.
fn leaf_value(cx: &Ctx<'_, '_>, expr: &syn::Expr, path: &str) -> Res<Value> {
    if let Some(want) = Want::of_leaf(path) {
        return eval::scalar(cx, expr, want)?.to_json(cx, expr, want);
    }
    let call = call_path(expr).map(|(p, a)| (last_ident(p), prev_ident(p), a));
    let str_arg =
        |e: &syn::Expr| -> Res<Value> { eval::scalar(cx, e, Want::Str)?.to_json(cx, e, Want::Str) };
    match path {
        "()" => match expr {
            syn::Expr::Tuple(t) if t.elems.is_empty() => Ok(Value::Null),
            _ => Err(cx.refuse(expr, "a `()` value")),
        },
        "serde_json::Value" | "serde_json::value::Value" => match expr {
            syn::Expr::Macro(m) if last_ident(&m.mac.path) == "json" => {
                eval::json_tokens(&m.mac.tokens).map_err(|e| cx.refuse(expr, &e))
            }
            syn::Expr::Path(p) if last_ident(&p.path) == "Null" => Ok(Value::Null),
            _ => match call {
                Some((f, Some(v), a)) if v == "Value" && a.len() == 1 && f == "String" => {
                    str_arg(&a[0])
                }
                Some((f, Some(v), a)) if v == "Value" && a.len() == 1 && f == "Bool" => {
                    eval::scalar(cx, &a[0], Want::Bool)?.to_json(cx, &a[0], Want::Bool)
                }
                _ => Err(cx.refuse(
                    expr,
                    "a serde_json::Value is evaluated from `json!(…)` of literals, `Value::Null`, `Value::String(…)` or `Value::Bool(…)`",
                )),
            },
        },
        p if p.ends_with("::Quantity") => match call {
            Some((f, _, a)) if f == "Quantity" && a.len() == 1 => str_arg(&a[0]),
            _ => Err(cx.refuse(expr, "a Quantity is evaluated from `Quantity(…)`")),
        },
        p if p.ends_with("::IntOrString") => match call {
            Some((f, _, a)) if f == "Int" && a.len() == 1 => {
                let w = Want::Int(eval::IntTy::I32);
                eval::scalar(cx, &a[0], w)?.to_json(cx, &a[0], w)
            }
            Some((f, _, a)) if f == "String" && a.len() == 1 => str_arg(&a[0]),
            _ => Err(cx.refuse(
                expr,
                "an IntOrString is evaluated from `IntOrString::Int(…)` or `IntOrString::String(…)`",
            )),
        },
        "std::time::Duration" => duration_value(cx, expr),
        "std::time::SystemTime" => match expr {
            syn::Expr::Path(p) if last_ident(&p.path) == "UNIX_EPOCH" => {
                Ok(serde_json::json!({"secs_since_epoch": 0, "nanos_since_epoch": 0}))
            }
            _ => Err(cx.refuse(expr, "a SystemTime is evaluated from `UNIX_EPOCH`")),
        },
        "std::net::Ipv4Addr" | "std::net::Ipv6Addr" | "std::net::IpAddr" => ip_value(cx, expr, path),
        p if p.starts_with("std::num::NonZero") => {
            let ty = &p["std::num::NonZero".len()..];
            let found = match expr {
                syn::Expr::Path(e) if prev_ident(&e.path).is_some_and(|t| t.ends_with(ty)) => {
                    eval::nonzero_const(ty, &last_ident(&e.path))
                }
                // `NonZeroU32::new(3).unwrap()`: the value, or the panic `crd()` would hit.
                syn::Expr::MethodCall(mc) if eval::is_unwrap(mc) => {
                    match (call_path(strip_parens(&mc.receiver)), eval::IntTy::from_name(&ty.to_lowercase())) {
                        (Some((f, a)), Some(int))
                            if last_ident(f) == "new"
                                && a.len() == 1
                                && prev_ident(f).is_some_and(|t| t.ends_with(ty)) =>
                        {
                            let want = Want::Int(int);
                            let v = eval::scalar(cx, &a[0], want)?;
                            // Checks the argument's type and range as rustc does.
                            v.to_json(cx, &a[0], want)?;
                            return match v {
                                eval::S::Int(0, _) => Err(eval::panics(
                                    cx,
                                    &mc.receiver,
                                    &format!("`NonZero{ty}::new(0)` is `None`"),
                                )),
                                eval::S::Int(n, _) => eval::S::Int(n, None).to_json(cx, expr, Want::Any),
                                _ => Err(cx.refuse(&a[0], "an integer is expected")),
                            };
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            match found {
                Some(v) => eval::S::Int(v, None).to_json(cx, expr, Want::Any),
                None => Err(cx.refuse(
                    expr,
                    "a NonZero value is evaluated from its `MIN` or `MAX`, or `new(n).unwrap()`",
                )),
            }
        }
        _ => Err(cx.refuse(
            expr,
            &format!("values of `{path}` are not evaluated (only its Default)"),
        )),
    }
}

/// `Ipv4Addr::LOCALHOST` / `UNSPECIFIED` / `BROADCAST`, `Ipv4Addr::new(a, b, c, d)`,
/// `Ipv6Addr::LOCALHOST` / `UNSPECIFIED`, `IpAddr::V4(…)` / `IpAddr::V6(…)`: serialized as
/// their `Display` text, as serde does for human-readable formats such as JSON.
fn ip_value(cx: &Ctx<'_, '_>, expr: &syn::Expr, path: &str) -> Res<Value> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let v4 = path.ends_with("Ipv4Addr") || path.ends_with("IpAddr");
    let v6 = path.ends_with("Ipv6Addr") || path.ends_with("IpAddr");
    let text = match expr {
        syn::Expr::Path(p) => {
            match (prev_ident(&p.path).as_deref(), last_ident(&p.path).as_str()) {
                (Some("Ipv4Addr"), "LOCALHOST") if v4 => Ipv4Addr::LOCALHOST.to_string(),
                (Some("Ipv4Addr"), "UNSPECIFIED") if v4 => Ipv4Addr::UNSPECIFIED.to_string(),
                (Some("Ipv4Addr"), "BROADCAST") if v4 => Ipv4Addr::BROADCAST.to_string(),
                (Some("Ipv6Addr"), "LOCALHOST") if v6 => Ipv6Addr::LOCALHOST.to_string(),
                (Some("Ipv6Addr"), "UNSPECIFIED") if v6 => Ipv6Addr::UNSPECIFIED.to_string(),
                _ => return Err(cx.refuse(expr, "this address is not evaluated")),
            }
        }
        _ => match call_path(expr).map(|(p, a)| (prev_ident(p), last_ident(p), a)) {
            Some((Some(t), f, a)) if t == "Ipv4Addr" && f == "new" && a.len() == 4 && v4 => {
                let mut octets = [0u8; 4];
                for (o, e) in octets.iter_mut().zip(a) {
                    *o = match eval::scalar(cx, e, Want::Int(eval::IntTy::U8))? {
                        eval::S::Int(v, _) => {
                            u8::try_from(v).map_err(|_| cx.invalid(e, "does not fit in u8"))?
                        }
                        _ => return Err(cx.refuse(e, "a u8 is expected")),
                    };
                }
                Ipv4Addr::from(octets).to_string()
            }
            Some((Some(t), f, a))
                if t == "IpAddr"
                    && (f == "V4" || f == "V6")
                    && a.len() == 1
                    && path.ends_with("::IpAddr") =>
            {
                let inner = if f == "V4" {
                    "std::net::Ipv4Addr"
                } else {
                    "std::net::Ipv6Addr"
                };
                return ip_value(cx, &a[0], inner);
            }
            _ => return Err(cx.refuse(expr, "this address is not evaluated")),
        },
    };
    Ok(Value::String(text))
}

/// `Duration::from_secs(n)`, `from_millis`, `from_micros`, `from_nanos`, `new(s, n)`,
/// `Duration::ZERO`: serialized as serde does, `{"secs": …, "nanos": …}`.
fn duration_value(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Value> {
    use std::time::Duration;
    let u64_arg = |e: &syn::Expr| -> Res<u64> {
        match eval::scalar(cx, e, Want::Int(eval::IntTy::U64))? {
            eval::S::Int(v, t) if t.is_none_or(|t| t == eval::IntTy::U64) => {
                u64::try_from(v).map_err(|_| cx.invalid(e, "the value does not fit in u64"))
            }
            _ => Err(cx.refuse(e, "a u64 is expected")),
        }
    };
    let d = if let syn::Expr::Path(p) = expr {
        if last_ident(&p.path) == "ZERO" {
            Duration::ZERO
        } else {
            return Err(cx.refuse(expr, "this Duration is not evaluated"));
        }
    } else {
        match call_path(expr).map(|(p, a)| (last_ident(p), a)) {
            Some((f, a)) if a.len() == 1 => {
                let n = u64_arg(&a[0])?;
                match f.as_str() {
                    "from_secs" => Duration::from_secs(n),
                    "from_millis" => Duration::from_millis(n),
                    "from_micros" => Duration::from_micros(n),
                    "from_nanos" => Duration::from_nanos(n),
                    _ => return Err(cx.refuse(expr, "this Duration constructor is not evaluated")),
                }
            }
            Some((f, a)) if f == "new" && a.len() == 2 => {
                let s = u64_arg(&a[0])?;
                let n = match eval::scalar(cx, &a[1], Want::Int(eval::IntTy::U32))? {
                    eval::S::Int(v, _) => {
                        u32::try_from(v).map_err(|_| cx.invalid(&a[1], "does not fit in u32"))?
                    }
                    _ => return Err(cx.refuse(&a[1], "a u32 is expected")),
                };
                s.checked_add(u64::from(n / 1_000_000_000))
                    .ok_or_else(|| cx.invalid(expr, "the Duration overflows"))?;
                Duration::new(s, n)
            }
            _ => return Err(cx.refuse(expr, "this Duration is not evaluated")),
        }
    };
    Ok(serde_json::json!({"secs": d.as_secs(), "nanos": d.subsec_nanos()}))
}

fn forward_value(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    fm: ModId,
    inner: &syn::Type,
    kind: FwdKind,
) -> Res<Value> {
    let inner_shape = shape_in(cx, fm, inner)?;
    let into_arg = match expr {
        syn::Expr::MethodCall(mc) if mc.method == "into" && mc.args.is_empty() => {
            Some(&*mc.receiver)
        }
        _ => None,
    };
    let call = call_path(expr).map(|(p, a)| (last_ident(p), prev_ident(p), a));
    let arg = match (kind, &call) {
        (FwdKind::Ref, _) => match expr {
            syn::Expr::Reference(r) => Some(&*r.expr),
            other => Some(other),
        },
        (FwdKind::Boxed, Some((f, Some(_), a))) if f == "new" && a.len() == 1 => Some(&a[0]),
        (FwdKind::Boxed | FwdKind::Cow, _) if into_arg.is_some() => into_arg,
        (FwdKind::Cow, Some((f, _, a))) if (f == "Borrowed" || f == "Owned") && a.len() == 1 => {
            Some(&a[0])
        }
        (FwdKind::Other, Some((f, Some(_), a))) if f == "new" && a.len() == 1 => Some(&a[0]),
        (FwdKind::Other, Some((f, _, a)))
            if (f == "Wrapping" || f == "Reverse") && a.len() == 1 =>
        {
            Some(&a[0])
        }
        _ => None,
    };
    match arg {
        Some(a) => value(cx, a, &inner_shape),
        None => Err(cx.refuse(expr, "this wrapper value is not evaluated")),
    }
}

/// The element expressions of an array, `[x; N]`, `vec![…]`, `vec![x; n]`, `X::from([…])`,
/// `[…].to_vec()` or `[…].into()`.
fn seq_elems(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Vec<syn::Expr>> {
    let repeat = |e: &syn::Expr, n: &syn::Expr| -> Res<Vec<syn::Expr>> {
        let n = match eval::scalar(cx, n, Want::Int(eval::IntTy::Usize))? {
            eval::S::Int(n, _) => usize::try_from(n).map_err(|_| cx.invalid(expr, "bad length"))?,
            _ => return Err(cx.refuse(expr, "the repeat count is not a number")),
        };
        if n > 4096 {
            return Err(cx.refuse(expr, "more than 4096 elements"));
        }
        Ok(vec![e.clone(); n])
    };
    match expr {
        syn::Expr::Paren(p) => seq_elems(cx, &p.expr),
        syn::Expr::Reference(r) => seq_elems(cx, &r.expr),
        syn::Expr::Array(a) => Ok(a.elems.iter().cloned().collect()),
        syn::Expr::Repeat(r) => repeat(&r.expr, &r.len),
        syn::Expr::Macro(m) if last_ident(&m.mac.path) == "vec" => {
            if let Ok(r) = m.mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
                let e: syn::Expr = input.parse()?;
                input.parse::<syn::Token![;]>()?;
                let n: syn::Expr = input.parse()?;
                Ok((e, n))
            }) {
                return repeat(&r.0, &r.1);
            }
            m.mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .map(|p| p.into_iter().collect())
                .map_err(|_| cx.refuse(expr, "cannot read the `vec!` elements"))
        }
        syn::Expr::MethodCall(mc)
            if (mc.method == "to_vec" || mc.method == "into") && mc.args.is_empty() =>
        {
            match &*mc.receiver {
                r @ (syn::Expr::Array(_) | syn::Expr::Repeat(_) | syn::Expr::Reference(_)) => {
                    seq_elems(cx, r)
                }
                syn::Expr::Macro(m) if last_ident(&m.mac.path) == "vec" => {
                    seq_elems(cx, &mc.receiver)
                }
                _ => Err(cx.refuse(expr, "a collection is evaluated from an array or `vec![…]`")),
            }
        }
        _ => match call_path(expr) {
            Some((p, a))
                if (last_ident(p) == "from" || last_ident(p) == "from_iter") && a.len() == 1 =>
            {
                seq_elems(cx, &a[0])
            }
            _ => Err(cx.refuse(expr, "a collection is evaluated from an array or `vec![…]`")),
        },
    }
}

/// Orders and deduplicates elements as the collection type does.
fn collect_seq(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    kind: SeqKind,
    inner: &Shape<'_>,
    mut values: Vec<Value>,
) -> Res<Value> {
    match kind {
        SeqKind::List => return Ok(Value::Array(values)),
        SeqKind::SortedSet | SeqKind::Unordered => {}
    }
    let scalar = match inner {
        Shape::Leaf(p) => matches!(
            Want::of_leaf(p),
            Some(Want::Int(_) | Want::Bool | Want::Char | Want::Str)
        ),
        _ => false,
    };
    if scalar {
        // Rust's Ord of integers, bools, chars and strings is the order of these JSON values
        // (strings compare by their UTF-8 bytes, as `str` does).
        values.sort_by(|a, b| match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let k = |n: &serde_json::Number| {
                    n.as_i64().map(i128::from).or(n.as_u64().map(i128::from))
                };
                k(x).cmp(&k(y))
            }
            (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
            _ => std::cmp::Ordering::Equal,
        });
        values.dedup();
    }
    if values.len() > 1 && (kind == SeqKind::Unordered || !scalar) {
        return Err(cx.refuse(
            expr,
            "the order this collection serializes its elements in is not known statically",
        ));
    }
    Ok(Value::Array(values))
}

fn map_value(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    hash: bool,
    mm: ModId,
    k: &syn::Type,
    v: &syn::Type,
) -> Res<Value> {
    let _ = hash; // JSON objects have no order: a HashMap's random order does not show.
    let pairs = seq_elems(cx, expr)?;
    let ks = shape_in(cx, mm, k)?;
    let vs = shape_in(cx, mm, v)?;
    let mut out = Map::new();
    for pair in &pairs {
        let syn::Expr::Tuple(t) = pair else {
            return Err(cx.refuse(pair, "a map entry is evaluated from a `(key, value)` tuple"));
        };
        if t.elems.len() != 2 {
            return Err(cx.invalid(pair, "a map entry is a pair"));
        }
        let key = match value(cx, &t.elems[0], &ks)? {
            Value::String(s) => s,
            Value::Number(n) if matches!(&ks, Shape::Leaf(p) if matches!(Want::of_leaf(p), Some(Want::Int(_)))) => {
                n.to_string()
            }
            _ => return Err(cx.refuse(&t.elems[0], "this map key does not serialize as a string")),
        };
        // Later entries replace earlier ones, as `BTreeMap::from` and `HashMap::from` do.
        out.insert(key, value(cx, &t.elems[1], &vs)?);
    }
    Ok(Value::Object(out))
}

/// The serialized value of each field of a struct value (declaration order): a struct
/// literal (`..base` fills the fields it does not name from the value of `base`), a tuple
/// struct constructor, a unit struct, or a binding, constant, function or Default giving one.
fn struct_fields(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    u: &UserTy<'_>,
    s: &syn::ItemStruct,
) -> Res<Vec<Value>> {
    let cx = &cx.deeper()?;
    let names_this = |path: &syn::Path| cx.local_type(path) == Some((u.m, s.ident.to_string()));
    match expr {
        syn::Expr::Paren(p) => return struct_fields(cx, &p.expr, u, s),
        syn::Expr::Group(g) => return struct_fields(cx, &g.expr, u, s),
        syn::Expr::Block(b) if b.label.is_none() => {
            let (inner, tail) = cx.enter_block(&b.block)?;
            return struct_fields(&inner, tail, u, s);
        }
        syn::Expr::MethodCall(mc) if mc.method == "clone" && mc.args.is_empty() => {
            return struct_fields(cx, &mc.receiver, u, s);
        }
        syn::Expr::Struct(lit) if lit.qself.is_none() => {
            if !names_this(&lit.path) {
                return Err(cx.refuse(expr, &format!("not a literal of `{}`", s.ident)));
            }
            for fv in &lit.fields {
                let known = s.fields.iter().enumerate().any(|(i, f)| match &fv.member {
                    syn::Member::Named(n) => f.ident.as_ref() == Some(n),
                    syn::Member::Unnamed(x) => x.index as usize == i,
                });
                if !known {
                    return Err(cx.invalid(fv, &format!("`{}` has no such field", s.ident)));
                }
            }
            let mut base: Option<Vec<Value>> = None;
            let mut values = Vec::new();
            for (i, f) in s.fields.iter().enumerate() {
                let member = member_name(f, i);
                let given = lit.fields.iter().find(|fv| match &fv.member {
                    syn::Member::Named(n) => *n == member,
                    syn::Member::Unnamed(x) => x.index.to_string() == member,
                });
                let v = match given {
                    Some(fv) => value(cx, &fv.expr, &field_shape(cx, u, f)?)?,
                    None => {
                        let Some(rest) = &lit.rest else {
                            return Err(cx.invalid(
                                expr,
                                &format!("field `{member}` has no value in the struct literal"),
                            ));
                        };
                        if base.is_none() {
                            base = Some(struct_fields(cx, rest, u, s)?);
                        }
                        base.as_ref()
                            .and_then(|b| b.get(i))
                            .cloned()
                            .unwrap_or(Value::Null)
                    }
                };
                values.push(v);
            }
            return Ok(values);
        }
        syn::Expr::Path(p) if p.qself.is_none() => {
            if let Some((bcx, bexpr, _)) = cx.let_binding(&p.path) {
                return struct_fields(&bcx, &bexpr, u, s);
            }
            if let Some((ccx, cexpr, _)) = cx.constant(&p.path) {
                return struct_fields(&ccx, cexpr, u, s);
            }
            if matches!(s.fields, syn::Fields::Unit) && names_this(&p.path) {
                return Ok(Vec::new());
            }
        }
        _ => {}
    }
    if let Some((path, args)) = call_path(expr) {
        if args.is_empty() {
            if let Some((fcx, block, _)) = cx.function(path) {
                let (bcx, tail) = fcx.enter_block(block)?;
                return struct_fields(&bcx, tail, u, s);
            }
            if last_ident(path) == "default" && is_default_ctor(cx, path) {
                let ty_ok = match prev_ident(path).as_deref() {
                    None | Some("Default") => true,
                    Some(_) => {
                        let mut p = path.clone();
                        p.segments.pop();
                        p.segments.pop_punct();
                        names_this(&p)
                    }
                };
                if ty_ok {
                    return default_struct_fields(cx, u, s);
                }
            }
        }
        if let syn::Fields::Unnamed(fields) = &s.fields
            && names_this(path)
        {
            if fields.unnamed.len() != args.len() {
                return Err(cx.invalid(expr, "wrong number of fields"));
            }
            let mut values = Vec::new();
            for (f, a) in fields.unnamed.iter().zip(args) {
                values.push(value(cx, a, &field_shape(cx, u, f)?)?);
            }
            return Ok(values);
        }
    }
    Err(cx.refuse(
        expr,
        &format!(
            "a `{}` value is evaluated from a struct literal, a constructor or a Default",
            s.ident
        ),
    ))
}

/// The value of a user enum: a unit variant, a newtype or tuple variant call, a struct
/// variant literal, or a binding, constant, function or Default giving one.
fn enum_value(cx: &Ctx<'_, '_>, expr: &syn::Expr, u: &UserTy<'_>, e: &syn::ItemEnum) -> Res<Value> {
    let variant_of = |path: &syn::Path| -> Option<&syn::Variant> {
        let mut prefix = path.clone();
        let last = prefix.segments.pop()?.into_value().ident;
        prefix.segments.pop_punct();
        if cx.local_type(&prefix) != Some((u.m, e.ident.to_string())) {
            return None;
        }
        e.variants.iter().find(|v| v.ident == last)
    };
    let fields_of = |v: &syn::Variant, exprs: Vec<&syn::Expr>| -> Res<Vec<Value>> {
        v.fields
            .iter()
            .zip(exprs)
            .map(|(f, x)| value(cx, x, &field_shape(cx, u, f)?))
            .collect()
    };
    match expr {
        syn::Expr::Path(p) if p.qself.is_none() => {
            if let Some(v) = variant_of(&p.path) {
                if !matches!(v.fields, syn::Fields::Unit) {
                    return Err(cx.refuse(expr, "a variant with data used as a function"));
                }
                return serialize_variant(
                    cx.krate,
                    u.m,
                    u.item,
                    &v.ident.to_string(),
                    VariantData::Unit,
                );
            }
        }
        syn::Expr::Struct(lit) if lit.qself.is_none() => {
            if let Some(v) = variant_of(&lit.path) {
                if lit.rest.is_some() {
                    return Err(cx.invalid(expr, "struct update syntax on an enum variant"));
                }
                let syn::Fields::Named(named) = &v.fields else {
                    return Err(cx.refuse(expr, "not a struct variant"));
                };
                let mut exprs = Vec::new();
                for f in &named.named {
                    let Some(fv) = lit.fields.iter().find(|fv| matches!(&fv.member, syn::Member::Named(n) if Some(n) == f.ident.as_ref())) else {
                        return Err(cx.invalid(expr, "a variant field has no value"));
                    };
                    exprs.push(&fv.expr);
                }
                if lit.fields.len() != named.named.len() {
                    return Err(cx.invalid(expr, "unknown variant field"));
                }
                let values = fields_of(v, exprs)?;
                return serialize_variant(
                    cx.krate,
                    u.m,
                    u.item,
                    &v.ident.to_string(),
                    VariantData::Fields(values),
                );
            }
        }
        _ => {}
    }
    if let Some((path, args)) = call_path(expr)
        && let Some(v) = variant_of(path)
    {
        let syn::Fields::Unnamed(un) = &v.fields else {
            return Err(cx.refuse(expr, "not a tuple variant"));
        };
        if un.unnamed.len() != args.len() {
            return Err(cx.invalid(expr, "wrong number of variant fields"));
        }
        let values = fields_of(v, args.iter().collect())?;
        return serialize_variant(
            cx.krate,
            u.m,
            u.item,
            &v.ident.to_string(),
            VariantData::Fields(values),
        );
    }
    Err(cx.refuse(
        expr,
        &format!(
            "a `{}` value is evaluated from one of its variants",
            e.ident
        ),
    ))
}

fn serde_container(item: LocalItem<'_>) -> Res<syn::DeriveInput> {
    Ok(match item {
        LocalItem::Struct(s) => syn::DeriveInput::from(s.clone()),
        LocalItem::Enum(e) => syn::DeriveInput::from(e.clone()),
        LocalItem::Alias(_) => return Err("alias".into()),
    })
}

/// Serializes a struct from its field values (declaration order) with serde's rules.
fn serialize_struct(
    krate: &Crate<'_>,
    m: ModId,
    item: LocalItem<'_>,
    values: Vec<Value>,
) -> Res<Value> {
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    // serde's `camelCase` rule panics on a name that starts with a non-ASCII letter.
    let cont = crate::manifests::crd::derive::transforms::quietly(|| {
        serde_ast::Container::from_ast(&ctxt, &input, serde_derive_internals::Derive::Serialize)
    });
    let checked = ctxt.check();
    let cont = cont.map_err(|panic| format!("serde_derive panics on this type: {panic}"))?;
    checked.map_err(|e| e.to_string())?;
    let cont = cont.ok_or("cannot read serde attributes")?;
    let serde_ast::Data::Struct(style, fields) = &cont.data else {
        return Err("not a struct".into());
    };
    if cont.attrs.transparent() {
        let i = fields
            .iter()
            .position(|f| f.attrs.transparent())
            .unwrap_or(0);
        return Ok(values.into_iter().nth(i).unwrap_or(Value::Null));
    }
    if cont.attrs.type_into().is_some() || cont.attrs.remote().is_some() {
        return Err("the struct is serialized through another type (`into`/`remote`)".into());
    }
    let v = serialize_fields(krate, m, *style, fields, values)?;
    match (cont.attrs.tag(), v) {
        // `#[serde(tag = "t")]` on a struct writes `"t": "<name>"` before the fields.
        (TagType::Internal { tag }, Value::Object(fields)) if matches!(style, Style::Struct) => {
            let mut obj = Map::new();
            obj.insert(
                tag.clone(),
                Value::String(cont.attrs.name().serialize_name().to_string()),
            );
            obj.extend(fields);
            Ok(Value::Object(obj))
        }
        (TagType::External, v) => Ok(v),
        _ => Err("a struct with a serde tag in this form is not evaluated".into()),
    }
}

fn serialize_fields(
    krate: &Crate<'_>,
    m: ModId,
    style: Style,
    fields: &[serde_ast::Field],
    values: Vec<Value>,
) -> Res<Value> {
    match style {
        Style::Unit => Ok(Value::Null),
        Style::Newtype => Ok(values.into_iter().next().unwrap_or(Value::Null)),
        Style::Tuple => Ok(Value::Array(
            fields
                .iter()
                .zip(values)
                .filter(|(f, _)| !f.attrs.skip_serializing())
                .map(|(_, v)| v)
                .collect(),
        )),
        Style::Struct => {
            let mut obj = Map::new();
            for (f, v) in fields.iter().zip(values) {
                if f.attrs.skip_serializing() {
                    continue;
                }
                if let Some(pred) = f.attrs.skip_serializing_if() {
                    if v.is_null() && is_option_of_nullable(krate, m, f.ty) {
                        // `None` and `Some(None)` both serialize as null, but only `None` is
                        // skipped: the JSON value cannot tell which the Rust value was.
                        return Err(format!(
                            "field `{}` is an Option of a type that can serialize as null, with skip_serializing_if: `None` (skipped) and `Some(null)` (written as null) cannot be told apart statically",
                            f.attrs.name().serialize_name()
                        )
                        .into());
                    }
                    if predicate(&Ctx::new(krate, m), m, f.ty, &pred.path, &v)? {
                        continue;
                    }
                }
                // Reached only when no skip_serializing_if skipped the field.
                if f.attrs.serialize_with().is_some() {
                    return Err(format!(
                        "field `{}` is serialized with `serialize_with`, which rsbuilder cannot run (and its skip_serializing_if does not skip this value)",
                        f.attrs.name().serialize_name()
                    )
                    .into());
                }
                if f.attrs.flatten() {
                    match v {
                        Value::Object(o) => obj.extend(o),
                        Value::Null => {}
                        _ => return Err("a flattened field is not an object".into()),
                    }
                    continue;
                }
                obj.insert(f.attrs.name().serialize_name().to_string(), v);
            }
            Ok(Value::Object(obj))
        }
    }
}

/// Whether `ty` is an `Option<T>` whose `Some(..)` values can serialize as null (`T` an
/// `Option`, `()`, `serde_json::Value`, a unit or newtype struct, an untagged enum, or a type
/// rsbuilder cannot resolve), so that a null value does not tell `None` from `Some`.
fn is_option_of_nullable(krate: &Crate<'_>, m: ModId, ty: &syn::Type) -> bool {
    let cx = Ctx::new(krate, m);
    match shape(&cx, m, ty) {
        Ok(Shape::Option(om, inner)) => may_serialize_null(&cx, om, &inner, 0),
        _ => false,
    }
}

fn may_serialize_null(cx: &Ctx<'_, '_>, m: ModId, ty: &syn::Type, depth: usize) -> bool {
    if depth > 24 {
        return true;
    }
    match shape(cx, m, ty) {
        Ok(Shape::Option(..)) => true,
        Ok(Shape::Forward(fm, t, _)) => may_serialize_null(cx, fm, &t, depth + 1),
        Ok(Shape::Seq(..) | Shape::Map(..) | Shape::Array(..)) => false,
        Ok(Shape::Tuple(_, ts)) => ts.is_empty(),
        Ok(Shape::Leaf(path)) => path == "()" || path.starts_with("serde_json::"),
        Ok(Shape::User(UserTy {
            item: LocalItem::Struct(s),
            ..
        })) => !matches!(s.fields, syn::Fields::Named(_)) || has_word(&s.attrs, "transparent"),
        Ok(Shape::User(UserTy {
            item: LocalItem::Enum(e),
            ..
        })) => {
            has_word(&e.attrs, "untagged")
                || e.variants.iter().any(|v| has_word(&v.attrs, "untagged"))
        }
        _ => true,
    }
}

/// Whether a `#[serde(word)]` or `#[schemars(word)]` is among `attrs` (unreadable attributes
/// count as present: the caller errs on the side of refusing).
fn has_word(attrs: &[syn::Attribute], word: &str) -> bool {
    ["serde", "schemars"]
        .iter()
        .any(|name| match attrs::items(attrs, name) {
            Ok(items) => items
                .iter()
                .any(|i| matches!(i, attrs::Item::Meta(syn::Meta::Path(p)) if p.is_ident(word))),
            Err(_) => true,
        })
}

/// The payload of an enum value being serialized.
enum VariantData {
    Unit,
    /// The serialized fields of a newtype, tuple or struct variant (declaration order).
    Fields(Vec<Value>),
}

/// Serializes variant `variant` of enum `item` with serde's representation of the enum.
fn serialize_variant(
    krate: &Crate<'_>,
    m: ModId,
    item: LocalItem<'_>,
    variant: &str,
    data: VariantData,
) -> Res<Value> {
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    // serde's `camelCase` rule panics on a name that starts with a non-ASCII letter.
    let cont = crate::manifests::crd::derive::transforms::quietly(|| {
        serde_ast::Container::from_ast(&ctxt, &input, serde_derive_internals::Derive::Serialize)
    });
    let checked = ctxt.check();
    let cont = cont.map_err(|panic| format!("serde_derive panics on this type: {panic}"))?;
    checked.map_err(|e| e.to_string())?;
    let cont = cont.ok_or("cannot read serde attributes")?;
    if cont.attrs.type_into().is_some() || cont.attrs.remote().is_some() {
        return Err("the enum is serialized through another type (`into`/`remote`)".into());
    }
    let serde_ast::Data::Enum(variants) = &cont.data else {
        return Err("not an enum".into());
    };
    let v = variants
        .iter()
        .find(|v| v.ident == variant)
        .ok_or_else(|| format!("no variant `{variant}`"))?;
    if v.attrs.skip_serializing() || v.attrs.serialize_with().is_some() {
        return Err(format!("variant `{variant}` is not serialized by serde's derive").into());
    }
    let name = v.attrs.name().serialize_name().to_string();
    let untagged = matches!(cont.attrs.tag(), TagType::None) || v.attrs.untagged();
    match data {
        VariantData::Unit => {
            if !matches!(v.style, Style::Unit) {
                return Err(format!("variant `{variant}` has data").into());
            }
            Ok(match (cont.attrs.tag(), untagged) {
                (_, true) => Value::Null,
                (TagType::External, _) => Value::String(name),
                (TagType::Internal { tag }, _) | (TagType::Adjacent { tag, .. }, _) => {
                    Value::Object(Map::from_iter([(tag.clone(), Value::String(name))]))
                }
                (TagType::None, _) => Value::Null,
            })
        }
        VariantData::Fields(values) => {
            // Field-level skips and renames of the variant apply as for a struct.
            let payload = serialize_fields(krate, m, v.style, &v.fields, values)?;
            if untagged {
                return Ok(payload);
            }
            match (cont.attrs.tag(), v.style, payload) {
                (TagType::External, _, payload) => {
                    Ok(Value::Object(Map::from_iter([(name, payload)])))
                }
                (TagType::Adjacent { tag, content }, _, payload) => {
                    Ok(Value::Object(Map::from_iter([
                        (tag.clone(), Value::String(name)),
                        (content.clone(), payload),
                    ])))
                }
                // Internally tagged: the tag first, then the fields of the struct variant or of
                // the newtype's object.
                (
                    TagType::Internal { tag },
                    Style::Struct | Style::Newtype,
                    Value::Object(fields),
                ) => {
                    let mut obj = Map::from_iter([(tag.clone(), Value::String(name))]);
                    obj.extend(fields);
                    Ok(Value::Object(obj))
                }
                _ => Err("an internally tagged variant whose content is not an object".into()),
            }
        }
    }
}

#[cfg(test)]
mod tests;
