//! The shape of a Rust type for evaluation: an option, a collection, a map, a wrapper, a tuple,
//! an array, a leaf type rsbuilder knows, or a struct or enum of the sources.

use super::context::Ctx;
use super::scalar::{IntTy, Scalar, Want};
use super::{EvalError, Res};
use crate::manifests::crd::known;
use crate::manifests::crd::known::Generic;
use crate::manifests::crd::resolve::LocalItem;
use crate::manifests::crd::resolve::ModId;
use crate::manifests::crd::resolve::Resolved;

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
    pub(crate) m: ModId,
    pub(crate) item: LocalItem<'a>,
    pub(crate) am: ModId,
    pub(crate) args: Vec<syn::Type>,
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
            let n = match super::scalar(&lcx, &a.len, Want::Int(IntTy::Usize))? {
                Scalar::Int(n, _) => usize::try_from(n).map_err(|_| unknown())?,
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

/// The scalar a type is (`u16`, `&'static str`, `String`, an alias of one), if it is one.
pub fn want_of_type(cx: &Ctx<'_, '_>, ty: &syn::Type) -> Option<Want> {
    match shape(cx, cx.m, ty).ok()? {
        Shape::Leaf(p) => Want::of_leaf(&p),
        Shape::Forward(fm, inner, _) => {
            let mut c = cx.clone();
            c.m = fm;
            want_of_type(&c, &inner)
        }
        _ => None,
    }
}
