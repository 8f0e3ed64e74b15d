//! The value of an expression of a known type: struct and enum literals field by field,
//! collections, maps, wrappers, tuples and arrays element by element. Leaf types (std and
//! k8s-openapi types known by path) are in `leaf`.

use serde_json::Map;
use serde_json::Value;

use super::serialize::{VariantData, serialize_variant};
use super::{default_struct_fields, member_name, shape_in, strip_parens, value};
use crate::manifests::crd::eval;
use crate::manifests::crd::eval::Ctx;
use crate::manifests::crd::eval::FwdKind;
use crate::manifests::crd::eval::Res;
use crate::manifests::crd::eval::SeqKind;
use crate::manifests::crd::eval::Shape;
use crate::manifests::crd::eval::UserTy;
use crate::manifests::crd::eval::Want;
use crate::manifests::crd::known;
use crate::manifests::crd::resolve::LocalItem;
use crate::manifests::crd::resolve::ModId;
use crate::manifests::crd::resolve::Resolved;

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
pub(super) fn is_default_ctor(cx: &Ctx<'_, '_>, path: &syn::Path) -> bool {
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

pub(super) fn call_path(
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

pub(super) fn last_ident(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

pub(super) fn prev_ident(path: &syn::Path) -> Option<String> {
    let n = path.segments.len();
    (n >= 2).then(|| path.segments[n - 2].ident.to_string())
}

/// The `e` of `Some(e)` / `Option::Some(e)` / `Ok(e)` / `Result::Ok(e)` (in parentheses or
/// not), whose `unwrap()` and `expect(..)` are `e`.
pub(super) fn some_or_ok(e: &syn::Expr) -> Option<&syn::Expr> {
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

/// The user type a path or a value path's prefix names (`Probe`, `Self`, `Mode::Fast`'s
/// `Mode`).
pub(super) fn path_user_type<'a>(cx: &Ctx<'_, 'a>, path: &syn::Path) -> Option<UserTy<'a>> {
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
pub(super) fn any_value(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Value> {
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
        eval::Scalar::Float(_, Some(t)) => Want::Float(*t),
        _ => Want::Any,
    };
    s.to_json(cx, expr, want)
}

pub(super) fn forward_value(
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
pub(super) fn seq_elems(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Vec<syn::Expr>> {
    let repeat = |e: &syn::Expr, n: &syn::Expr| -> Res<Vec<syn::Expr>> {
        let n = match eval::scalar(cx, n, Want::Int(eval::IntTy::Usize))? {
            eval::Scalar::Int(n, _) => {
                usize::try_from(n).map_err(|_| cx.invalid(expr, "bad length"))?
            }
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
pub(super) fn collect_seq(
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

pub(super) fn map_value(
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
pub(super) fn struct_fields(
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
pub(super) fn enum_value(
    cx: &Ctx<'_, '_>,
    expr: &syn::Expr,
    u: &UserTy<'_>,
    e: &syn::ItemEnum,
) -> Res<Value> {
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
