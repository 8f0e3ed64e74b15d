//! `#[serde(default)]` values, evaluated statically as schemars_derive evaluates them at run
//! time: `<T>::default()`, `default_fn()` or the container's `Self::default().field`, then
//! `skip_serializing_if`, then serialized with serde's rules (renames, skips, flatten).
//!
//! Evaluable: std types, serde_json::Value, derived `Default` of the user's structs and enums
//! (`#[default]` variant), hand-written `impl Default` and default functions whose body is a
//! literal, a struct literal or a simple constructor. Anything else is an error naming it.

use serde_derive_internals::ast::{self as serde_ast, Style};
use serde_derive_internals::attr::{Default as SerdeDefault, TagType};
use serde_json::{Map, Value};

use super::attrs;
use super::eval;
use super::known::{self, Generic};
use super::resolve::{Crate, LocalItem, LocalValue, ModId, Resolved};

type Res<T> = Result<T, String>;

const MAX_DEPTH: usize = 24;

/// The `default` a field's schema gets, or `None` when `skip_serializing_if` drops it.
pub fn field_default(
    krate: &Crate<'_>,
    m: ModId,
    input: &syn::DeriveInput,
    container_default: &SerdeDefault,
    f: &serde_ast::Field,
) -> Res<Option<Value>> {
    if f.attrs.serialize_with().is_some() {
        return Err(
            "the field is serialized with `serialize_with`, which rsbuilder cannot run".into(),
        );
    }
    let v = match f.attrs.default() {
        SerdeDefault::Default => default_of(krate, m, f.ty, 0)?,
        SerdeDefault::Path(p) => call_fn(krate, m, &p.path, Some((m, f.ty)), 0)?,
        SerdeDefault::None => {
            let member = match &f.member {
                syn::Member::Named(i) => i.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            match container_default {
                SerdeDefault::Default => {
                    member_of_struct_default(krate, m, &input.ident.to_string(), &member, f.ty)?
                }
                SerdeDefault::Path(p) => {
                    let (fm, func) = local_fn(krate, m, &p.path)?;
                    member_of_block(
                        krate,
                        fm,
                        func.body().expect("checked by local_fn"),
                        &member,
                        m,
                        f.ty,
                        &input.ident.to_string(),
                    )?
                }
                SerdeDefault::None => return Ok(None),
            }
        }
    };
    if let Some(pred) = f.attrs.skip_serializing_if()
        && predicate(&pred.path, &v)?
    {
        return Ok(None);
    }
    Ok(Some(v))
}

fn predicate(path: &syn::Path, v: &Value) -> Res<bool> {
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
        )),
    }
}

fn local_fn<'a>(krate: &Crate<'a>, m: ModId, path: &syn::Path) -> Res<(ModId, LocalValue<'a>)> {
    match krate.resolve_value(m, path) {
        Some((fm, v)) if v.body().is_some() => Ok((fm, v)),
        _ => Err(format!(
            "the default function `{}` is not defined in the given sources",
            quote::ToTokens::to_token_stream(path)
                .to_string()
                .replace(' ', "")
        )),
    }
}

/// Calls a zero-argument function of the sources: its body's value, typed by `ty` (or by its
/// return type).
fn call_fn(
    krate: &Crate<'_>,
    m: ModId,
    path: &syn::Path,
    ty: Option<(ModId, &syn::Type)>,
    depth: usize,
) -> Res<Value> {
    if depth > MAX_DEPTH {
        return Err("the default evaluation recurses too deeply".into());
    }
    let (fm, func) = match local_fn(krate, m, path) {
        Ok(f) => f,
        Err(e) => {
            // `String::new`, `Vec::new`, `BTreeMap::new`, `T::default`, `Default::default`:
            // the type's Default.
            let last = path.segments.last().map(|s| s.ident.to_string());
            return match (last.as_deref(), ty) {
                (Some("new" | "default"), Some((tm, t))) if path.segments.len() >= 2 => {
                    default_of(krate, tm, t, depth + 1)
                }
                _ => Err(e),
            };
        }
    };
    let block = func.body().expect("checked by local_fn");
    let fname = func.name();
    let r = match ty {
        Some((tm, t)) => block_typed(krate, fm, block, tm, t, depth + 1),
        None => match func.output() {
            Some(syn::ReturnType::Type(_, t)) => block_typed(krate, fm, block, fm, t, depth + 1),
            _ => Ok(Value::Null),
        },
    };
    r.map_err(|e| format!("function `{fname}`: {e}"))
}

fn block_typed(
    krate: &Crate<'_>,
    m: ModId,
    block: &syn::Block,
    tm: ModId,
    ty: &syn::Type,
    depth: usize,
) -> Res<Value> {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => typed(krate, m, e, tm, ty, depth + 1),
        [syn::Stmt::Expr(syn::Expr::Return(r), _)] => match &r.expr {
            Some(e) => typed(krate, m, e, tm, ty, depth + 1),
            None => Ok(Value::Null),
        },
        _ => Err("its body is not a single expression (only literals and simple constructors are evaluated)".into()),
    }
}

/// What a type is, for evaluation.
enum Shape<'a> {
    Option(ModId, syn::Type),
    Seq(ModId, syn::Type),
    Map,
    Forward(ModId, syn::Type),
    Tuple(ModId, Vec<syn::Type>),
    Array(ModId, syn::Type, usize),
    Leaf(String),
    /// A struct or enum of the crate (its module and item), with the generic type arguments
    /// of the use site and the module they are written in.
    User(ModId, LocalItem<'a>, ModId, Vec<syn::Type>),
}

fn shape<'a>(krate: &Crate<'a>, m: ModId, ty: &syn::Type, depth: usize) -> Res<Shape<'a>> {
    if depth > MAX_DEPTH {
        return Err("type nesting too deep".into());
    }
    let text = || quote::ToTokens::to_token_stream(ty).to_string();
    match ty {
        syn::Type::Paren(p) => shape(krate, m, &p.elem, depth + 1),
        syn::Type::Group(g) => shape(krate, m, &g.elem, depth + 1),
        syn::Type::Reference(r) => Ok(Shape::Forward(m, (*r.elem).clone())),
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok(Shape::Leaf("()".into())),
        syn::Type::Tuple(t) => Ok(Shape::Tuple(m, t.elems.iter().cloned().collect())),
        syn::Type::Slice(s) => Ok(Shape::Seq(m, (*s.elem).clone())),
        syn::Type::Array(a) => {
            let n = match eval::eval(krate, m, &a.len)? {
                Value::Number(n) => n.as_u64().unwrap_or_default() as usize,
                _ => return Err(format!("array length of `{}`", text())),
            };
            Ok(Shape::Array(m, (*a.elem).clone(), n))
        }
        syn::Type::Path(p) if p.qself.is_none() => {
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
                        shape(krate, tm, &a.ty, depth + 1)
                    }
                    Some(item @ (LocalItem::Struct(_) | LocalItem::Enum(_))) => {
                        Ok(Shape::User(tm, item, m, args))
                    }
                    _ => Err(format!("type `{}`", text())),
                },
                Some(Resolved::External(path)) => {
                    let arg = |i: usize| {
                        args.get(i)
                            .cloned()
                            .ok_or_else(|| format!("type `{}`", text()))
                    };
                    let last = path.rsplit("::").next().unwrap_or_default();
                    match (known::std_generic(&path), last) {
                        (Some(Generic::Forward), _) => Ok(Shape::Forward(m, arg(0)?)),
                        (Some(_), "Option") => Ok(Shape::Option(m, arg(0)?)),
                        (
                            Some(_),
                            "Vec" | "VecDeque" | "LinkedList" | "BinaryHeap" | "BTreeSet"
                            | "HashSet",
                        ) => Ok(Shape::Seq(m, arg(0)?)),
                        (Some(_), "BTreeMap" | "HashMap") => {
                            let _ = arg(1)?;
                            Ok(Shape::Map)
                        }
                        _ if known::leaf_type(&path).is_some() => Ok(Shape::Leaf(path)),
                        _ => Err(format!("type `{}`", text())),
                    }
                }
                _ => Err(format!("type `{}` cannot be resolved", text())),
            }
        }
        _ => Err(format!("type `{}`", text())),
    }
}

/// `<T as Default>::default()`, serialized.
pub fn default_of(krate: &Crate<'_>, m: ModId, ty: &syn::Type, depth: usize) -> Res<Value> {
    if depth > MAX_DEPTH {
        return Err("the default evaluation recurses too deeply".into());
    }
    match shape(krate, m, ty, depth + 1)? {
        Shape::Option(..) => Ok(Value::Null),
        Shape::Seq(..) => Ok(Value::Array(Vec::new())),
        Shape::Map => Ok(Value::Object(Map::new())),
        Shape::Forward(fm, t) => default_of(krate, fm, &t, depth + 1),
        Shape::Tuple(tm, ts) => ts
            .iter()
            .map(|t| default_of(krate, tm, t, depth + 1))
            .collect::<Res<_>>()
            .map(Value::Array),
        Shape::Array(tm, t, n) => {
            let one = default_of(krate, tm, &t, depth + 1)?;
            Ok(Value::Array(vec![one; n]))
        }
        Shape::Leaf(p) => leaf_default(&p),
        Shape::User(tm, item, am, args) => user_default(krate, tm, item, (am, &args), depth + 1),
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
        "serde_json::Map" | "serde_json::value::Map" => Value::Object(Map::new()),
        other => match known::external_default(other) {
            Some(v) => v,
            None => {
                return Err(format!(
                    "the Default of `{other}` is not known to rsbuilder"
                ));
            }
        },
    })
}

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

/// `Default::default()` of the crate's struct or enum `item` (in module `tm`), used with the
/// generic type arguments `args` (written in module `am`): a derived Default evaluates each
/// field's default, a field whose type is a type parameter taking the argument's default
/// (`Wrapper<i32>` with `value: T` gives 0); an `impl Default` is evaluated when its body is
/// a single simple expression.
fn user_default(
    krate: &Crate<'_>,
    tm: ModId,
    item: LocalItem<'_>,
    (am, args): (ModId, &[syn::Type]),
    depth: usize,
) -> Res<Value> {
    let (attrs_, name) = match item {
        LocalItem::Struct(s) => (&s.attrs, s.ident.to_string()),
        LocalItem::Enum(e) => (&e.attrs, e.ident.to_string()),
        LocalItem::Alias(_) => return Err("alias".into()),
    };
    let self_ty: syn::Type = syn::parse_str(&name).map_err(|e| e.to_string())?;
    if attrs::derives(attrs_).iter().any(|d| d == "Default") {
        return match item {
            LocalItem::Struct(s) => {
                let params: Vec<&syn::Ident> = s.generics.type_params().map(|p| &p.ident).collect();
                let mut values = Vec::new();
                for f in &s.fields {
                    let arg = match &f.ty {
                        syn::Type::Path(p) if p.qself.is_none() => p
                            .path
                            .get_ident()
                            .and_then(|id| params.iter().position(|p| *p == id))
                            .and_then(|i| args.get(i)),
                        _ => None,
                    };
                    values.push(match arg {
                        Some(arg) => default_of(krate, am, arg, depth + 1)?,
                        None => default_of(krate, tm, &f.ty, depth + 1)?,
                    });
                }
                serialize_struct(krate, tm, item, values)
            }
            LocalItem::Enum(e) => {
                let v = e
                    .variants
                    .iter()
                    .find(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))
                    .ok_or_else(|| {
                        format!("enum `{name}` derives Default without a #[default] variant")
                    })?;
                serialize_unit_variant(tm, item, &v.ident.to_string())
            }
            LocalItem::Alias(_) => unreachable!(),
        };
    }
    match impl_default(krate, tm, &name) {
        Some((im, f)) => block_typed(krate, im, &f.block, tm, &self_ty, depth + 1)
            .map_err(|e| format!("`impl Default for {name}`: {e}")),
        None => Err(format!(
            "`{name}` has no Default (derive it or implement it)"
        )),
    }
}

/// Evaluates `expr` (in module `m`) as a value of type `ty` (in module `tm`), serialized.
fn typed(
    krate: &Crate<'_>,
    m: ModId,
    expr: &syn::Expr,
    tm: ModId,
    ty: &syn::Type,
    depth: usize,
) -> Res<Value> {
    if depth > MAX_DEPTH {
        return Err("the default evaluation recurses too deeply".into());
    }
    match expr {
        syn::Expr::Paren(p) => return typed(krate, m, &p.expr, tm, ty, depth + 1),
        syn::Expr::Group(g) => return typed(krate, m, &g.expr, tm, ty, depth + 1),
        syn::Expr::Block(b) => return block_typed(krate, m, &b.block, tm, ty, depth + 1),
        syn::Expr::Call(c) => {
            if let syn::Expr::Path(p) = &*c.func {
                let last = p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                if last == "default" && c.args.is_empty() {
                    return default_of(krate, tm, ty, depth + 1);
                }
                if c.args.is_empty() && krate.resolve_value(m, &p.path).is_some() {
                    return call_fn(krate, m, &p.path, Some((tm, ty)), depth + 1);
                }
                // Tuple-struct constructors: `Quantity("1Gi".into())`, `IntOrString::Int(3)`,
                // `Wrapper(x)` of the sources.
                match krate.resolve_type(m, &p.path) {
                    Some(Resolved::External(path)) if c.args.len() == 1 => {
                        let newtype = known::leaf_type(&path).is_some()
                            || path.ends_with("IntOrString::Int")
                            || path.ends_with("IntOrString::String");
                        if newtype {
                            return eval::eval(krate, m, &c.args[0]);
                        }
                    }
                    Some(Resolved::Local(sm, name)) => {
                        if let Some(item @ LocalItem::Struct(st)) = krate.item(sm, &name)
                            && let syn::Fields::Unnamed(fields) = &st.fields
                            && fields.unnamed.len() == c.args.len()
                        {
                            let mut values = Vec::new();
                            for (f, a) in fields.unnamed.iter().zip(&c.args) {
                                values.push(typed(krate, m, a, sm, &f.ty, depth + 1)?);
                            }
                            return serialize_struct(krate, sm, item, values);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    match shape(krate, tm, ty, depth + 1)? {
        Shape::Option(om, inner) => match expr {
            syn::Expr::Path(p) if p.path.is_ident("None") => Ok(Value::Null),
            syn::Expr::Call(c)
                if matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("Some"))
                    && c.args.len() == 1 =>
            {
                typed(krate, m, &c.args[0], om, &inner, depth + 1)
            }
            _ => eval::eval(krate, m, expr),
        },
        Shape::Forward(fm, inner) => {
            let e = match expr {
                syn::Expr::Call(c) if c.args.len() == 1 => &c.args[0],
                syn::Expr::Reference(r) => &r.expr,
                other => other,
            };
            typed(krate, m, e, fm, &inner, depth + 1)
        }
        Shape::Seq(sm, inner) => {
            let elems: Vec<syn::Expr> = match expr {
                syn::Expr::Array(a) => a.elems.iter().cloned().collect(),
                syn::Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
                    .mac
                    .parse_body_with(
                        syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                    )
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .collect(),
                _ => return eval::eval(krate, m, expr),
            };
            elems
                .iter()
                .map(|e| typed(krate, m, e, sm, &inner, depth + 1))
                .collect::<Res<_>>()
                .map(Value::Array)
        }
        Shape::User(um, item, ..) => user_value(krate, m, expr, um, item, depth + 1),
        // serde_json serializes an f32 through its f64 widening (0.1f32 -> 0.10000000149011612).
        Shape::Leaf(p) if p == "f32" => match eval::eval(krate, m, expr)? {
            Value::Number(n) => Ok(Value::from(n.as_f64().unwrap_or_default() as f32)),
            other => Ok(other),
        },
        Shape::Leaf(p) if p == "f64" => match eval::eval(krate, m, expr)? {
            Value::Number(n) => Ok(Value::from(n.as_f64().unwrap_or_default())),
            other => Ok(other),
        },
        _ => eval::eval(krate, m, expr),
    }
}

fn user_value(
    krate: &Crate<'_>,
    m: ModId,
    expr: &syn::Expr,
    um: ModId,
    item: LocalItem<'_>,
    depth: usize,
) -> Res<Value> {
    match (item, expr) {
        (LocalItem::Struct(s), syn::Expr::Struct(lit)) => {
            let mut values = Vec::new();
            for (i, f) in s.fields.iter().enumerate() {
                let member = f
                    .ident
                    .as_ref()
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| i.to_string());
                let given = lit.fields.iter().find(|fv| match &fv.member {
                    syn::Member::Named(n) => *n == member,
                    syn::Member::Unnamed(x) => x.index.to_string() == member,
                });
                let v = match given {
                    Some(fv) => typed(krate, m, &fv.expr, um, &f.ty, depth + 1)?,
                    None => match &lit.rest {
                        Some(rest) if is_default_call(rest) => {
                            default_of(krate, um, &f.ty, depth + 1)?
                        }
                        _ => {
                            return Err(format!(
                                "field `{member}` has no value in the struct literal"
                            ));
                        }
                    },
                };
                values.push(v);
            }
            serialize_struct(krate, um, item, values)
        }
        (LocalItem::Enum(_), syn::Expr::Path(p)) => {
            let variant = p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            serialize_unit_variant(um, item, &variant)
        }
        _ => Err(format!(
            "`{}` is not a struct literal or unit variant",
            quote::ToTokens::to_token_stream(expr)
        )),
    }
}

fn is_default_call(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Call(c) if c.args.is_empty() && matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "default")))
}

/// The value of member `member` in the struct `name`'s `Default`.
fn member_of_struct_default(
    krate: &Crate<'_>,
    m: ModId,
    name: &str,
    member: &str,
    fty: &syn::Type,
) -> Res<Value> {
    let Some(item) = krate.item(m, name) else {
        return Err(format!("`{name}` not found"));
    };
    let derives = match item {
        LocalItem::Struct(s) => attrs::derives(&s.attrs),
        _ => Vec::new(),
    };
    if derives.iter().any(|d| d == "Default") {
        return default_of(krate, m, fty, 0);
    }
    match impl_default(krate, m, name) {
        Some((im, f)) => member_of_block(krate, im, &f.block, member, m, fty, name),
        None => Err(format!("`{name}` has #[serde(default)] but no Default")),
    }
}

fn member_of_block(
    krate: &Crate<'_>,
    bm: ModId,
    block: &syn::Block,
    member: &str,
    tm: ModId,
    fty: &syn::Type,
    name: &str,
) -> Res<Value> {
    let expr = match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => e,
        _ => {
            return Err(format!(
                "the Default of `{name}` is not a single struct literal"
            ));
        }
    };
    let syn::Expr::Struct(lit) = expr else {
        return Err(format!("the Default of `{name}` is not a struct literal"));
    };
    for fv in &lit.fields {
        let matches = match &fv.member {
            syn::Member::Named(n) => n == member,
            syn::Member::Unnamed(x) => x.index.to_string() == member,
        };
        if matches {
            return typed(krate, bm, &fv.expr, tm, fty, 1);
        }
    }
    match &lit.rest {
        Some(rest) if is_default_call(rest) => default_of(krate, tm, fty, 1),
        _ => Err(format!(
            "field `{member}` has no value in the Default of `{name}`"
        )),
    }
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
    let _ = (krate, m);
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    let cont =
        serde_ast::Container::from_ast(&ctxt, &input, serde_derive_internals::Derive::Serialize);
    ctxt.check().map_err(|e| e.to_string())?;
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
                        ));
                    }
                    if predicate(&pred.path, &v)? {
                        continue;
                    }
                }
                if f.attrs.serialize_with().is_some() {
                    return Err("a field is serialized with `serialize_with`".into());
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
    match shape(krate, m, ty, 0) {
        Ok(Shape::Option(om, inner)) => may_serialize_null(krate, om, &inner, 0),
        _ => false,
    }
}

fn may_serialize_null(krate: &Crate<'_>, m: ModId, ty: &syn::Type, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    match shape(krate, m, ty, depth + 1) {
        Ok(Shape::Option(..)) => true,
        Ok(Shape::Forward(fm, t)) => may_serialize_null(krate, fm, &t, depth + 1),
        Ok(Shape::Seq(..) | Shape::Map | Shape::Array(..)) => false,
        Ok(Shape::Tuple(_, ts)) => ts.is_empty(),
        Ok(Shape::Leaf(path)) => path == "()" || path.starts_with("serde_json::"),
        Ok(Shape::User(_, LocalItem::Struct(s), ..)) => {
            !matches!(s.fields, syn::Fields::Named(_)) || has_word(&s.attrs, "transparent")
        }
        Ok(Shape::User(_, LocalItem::Enum(e), ..)) => {
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

fn serialize_unit_variant(_m: ModId, item: LocalItem<'_>, variant: &str) -> Res<Value> {
    let input = serde_container(item)?;
    let ctxt = serde_derive_internals::Ctxt::new();
    let cont =
        serde_ast::Container::from_ast(&ctxt, &input, serde_derive_internals::Derive::Serialize);
    ctxt.check().map_err(|e| e.to_string())?;
    let cont = cont.ok_or("cannot read serde attributes")?;
    let serde_ast::Data::Enum(variants) = &cont.data else {
        return Err("not an enum".into());
    };
    let v = variants
        .iter()
        .find(|v| v.ident == variant)
        .ok_or_else(|| format!("no variant `{variant}`"))?;
    if !matches!(v.style, Style::Unit) {
        return Err(format!("variant `{variant}` has data"));
    }
    let name = v.attrs.name().serialize_name().to_string();
    Ok(match (cont.attrs.tag(), v.attrs.untagged()) {
        (TagType::None, _) | (_, true) => Value::Null,
        (TagType::External, _) => Value::String(name),
        (TagType::Internal { tag }, _) => {
            Value::Object(Map::from_iter([(tag.clone(), Value::String(name))]))
        }
        (TagType::Adjacent { tag, .. }, _) => {
            Value::Object(Map::from_iter([(tag.clone(), Value::String(name))]))
        }
    })
}
