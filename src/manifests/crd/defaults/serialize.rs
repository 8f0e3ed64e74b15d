//! A struct or enum value serialized as serde's derived `Serialize` does: renames, skips,
//! `skip_serializing_if`, `flatten`, and the enum tagging styles.

use serde_derive_internals::ast as serde_ast;
use serde_derive_internals::ast::Style;
use serde_derive_internals::attr::TagType;
use serde_json::Map;
use serde_json::Value;

use super::predicate;
use crate::manifests::crd::attrs;
use crate::manifests::crd::eval::Ctx;
use crate::manifests::crd::eval::Res;
use crate::manifests::crd::eval::UserTy;
use crate::manifests::crd::eval::{Shape, shape};
use crate::manifests::crd::resolve::Crate;
use crate::manifests::crd::resolve::LocalItem;
use crate::manifests::crd::resolve::ModId;

fn serde_container(item: LocalItem<'_>) -> Res<syn::DeriveInput> {
    Ok(match item {
        LocalItem::Struct(s) => syn::DeriveInput::from(s.clone()),
        LocalItem::Enum(e) => syn::DeriveInput::from(e.clone()),
        LocalItem::Alias(_) => return Err("alias".into()),
    })
}

/// Serializes a struct from its field values (declaration order) with serde's rules.
pub(super) fn serialize_struct(
    krate: &Crate<'_>,
    m: ModId,
    item: LocalItem<'_>,
    values: Vec<Value>,
) -> Res<Value> {
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    // serde's `camelCase` rule panics on a name that starts with a non-ASCII letter.
    let cont = crate::manifests::crd::quiet::quietly(|| {
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

pub(super) fn may_serialize_null(cx: &Ctx<'_, '_>, m: ModId, ty: &syn::Type, depth: usize) -> bool {
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
pub(super) enum VariantData {
    Unit,
    /// The serialized fields of a newtype, tuple or struct variant (declaration order).
    Fields(Vec<Value>),
}

/// Serializes variant `variant` of enum `item` with serde's representation of the enum.
pub(super) fn serialize_variant(
    krate: &Crate<'_>,
    m: ModId,
    item: LocalItem<'_>,
    variant: &str,
    data: VariantData,
) -> Res<Value> {
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    // serde's `camelCase` rule panics on a name that starts with a non-ASCII letter.
    let cont = crate::manifests::crd::quiet::quietly(|| {
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
