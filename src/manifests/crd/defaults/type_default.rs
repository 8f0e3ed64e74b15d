//! `<T as Default>::default()`, serialized: the default of a leaf type, of a struct or enum
//! that derives `Default`, or of a hand-written `impl Default` evaluated in turn.

use serde_json::Map;
use serde_json::Value;

use super::serialize::{VariantData, serialize_struct, serialize_variant};
use super::{default_struct_fields, prefix, shape_in, value};
use crate::manifests::crd::attrs;
use crate::manifests::crd::eval::Ctx;
use crate::manifests::crd::eval::EvalError;
use crate::manifests::crd::eval::FwdKind;
use crate::manifests::crd::eval::Res;
use crate::manifests::crd::eval::Shape;
use crate::manifests::crd::eval::UserTy;
use crate::manifests::crd::known;
use crate::manifests::crd::resolve::Crate;
use crate::manifests::crd::resolve::LocalItem;
use crate::manifests::crd::resolve::ModId;
use crate::manifests::crd::resolve::Resolved;
use crate::manifests::diag::Cause;

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
pub(super) fn hand_default<'k, 'a>(
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

pub(super) fn derives_default(item: LocalItem<'_>) -> bool {
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
