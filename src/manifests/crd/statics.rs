//! Regexes held in lazily built statics, as validation attributes name them:
//! `#[schemars(regex(pattern = *RE))]`, `#[schemars(pattern(RE))]`,
//! `#[validate(regex(path = *RE))]` (or `path = "RE"`). schemars_derive writes
//! `(expr).to_string()`, which reaches `Regex`'s `Display` through the lazy cell's `Deref`:
//! the pattern text the regex was built from (`Regex::as_str`). Recognized only when the
//! static is a `std::sync::LazyLock<Regex>` or `once_cell::sync::Lazy<Regex>` built by
//! `Regex::new(<string literal>)` followed by `.unwrap()` or `.expect(..)`, or a
//! `static ref RE: Regex = …;` of a `lazy_static!` in the same module, built the same way.

use super::resolve::{Crate, LocalValue, ModId, Resolved};

/// What a regex-static expression gives.
#[derive(Debug, PartialEq, Eq)]
pub enum RegexStatic {
    /// Not a regex static of the recognized form: evaluate `e` as any other expression.
    NotOne,
    /// The pattern text.
    Pattern(String),
    /// The literal is not a valid regex: building the static panics when `crd()` runs.
    Invalid(String),
}

/// The pattern of `e` (`RE`, `*RE`, `&*RE`, `RE.as_str()`, in parentheses or not) written in
/// module `m`, when `RE` is a static of the sources of the form this module describes.
pub fn regex_static(krate: &Crate<'_>, m: ModId, e: &syn::Expr) -> RegexStatic {
    let Some(path) = static_path(e) else {
        return RegexStatic::NotOne;
    };
    let Some((sm, LocalValue::Static(s))) = krate.resolve_value(m, path) else {
        return lazy_static_regex(krate, m, path).unwrap_or(RegexStatic::NotOne);
    };
    if s.mutability != syn::StaticMutability::None {
        return RegexStatic::NotOne;
    }
    let ty_ok = match &*s.ty {
        syn::Type::Path(tp) if tp.qself.is_none() => {
            is_lazy(krate, sm, &tp.path)
                && match tp.path.segments.last().map(|l| &l.arguments) {
                    Some(syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1 => {
                        matches!(a.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(r)))
                            if r.qself.is_none() && is_regex(krate, sm, &r.path))
                    }
                    _ => false,
                }
        }
        _ => false,
    };
    if !ty_ok {
        return RegexStatic::NotOne;
    }
    let syn::Expr::Call(new) = &*s.expr else {
        return RegexStatic::NotOne;
    };
    let syn::Expr::Path(f) = &*new.func else {
        return RegexStatic::NotOne;
    };
    if f.qself.is_some() || new.args.len() != 1 || !assoc_of(krate, sm, &f.path, "new", is_lazy) {
        return RegexStatic::NotOne;
    }
    let Some(syn::Expr::Closure(c)) = new.args.first() else {
        return RegexStatic::NotOne;
    };
    if !c.inputs.is_empty() {
        return RegexStatic::NotOne;
    }
    let Some(lit) = regex_new_literal(krate, sm, &c.body) else {
        return RegexStatic::NotOne;
    };
    checked(&s.ident, lit)
}

fn checked(name: &syn::Ident, lit: String) -> RegexStatic {
    match regex::Regex::new(&lit) {
        Ok(re) => RegexStatic::Pattern(re.as_str().to_string()),
        Err(err) => RegexStatic::Invalid(format!(
            "the regex of static `{name}` does not compile, so building it panics: {err}"
        )),
    }
}

/// One `static ref NAME: Type = expr;` of a `lazy_static!` block.
struct LazyEntry {
    attrs: Vec<syn::Attribute>,
    name: syn::Ident,
    ty: syn::Type,
    expr: syn::Expr,
}

struct LazyEntries(Vec<LazyEntry>);

impl syn::parse::Parse for LazyEntries {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let mut out = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(syn::Attribute::parse_outer)?;
            let _: syn::Visibility = input.parse()?;
            let _: syn::Token![static] = input.parse()?;
            let _: syn::Token![ref] = input.parse()?;
            let name: syn::Ident = input.parse()?;
            let _: syn::Token![:] = input.parse()?;
            let ty: syn::Type = input.parse()?;
            let _: syn::Token![=] = input.parse()?;
            let expr: syn::Expr = input.parse()?;
            let _: syn::Token![;] = input.parse()?;
            out.push(LazyEntry {
                attrs,
                name,
                ty,
                expr,
            });
        }
        Ok(LazyEntries(out))
    }
}

/// `NAME` as a `static ref NAME: Regex = Regex::new("…").unwrap();` of a `lazy_static!`
/// block of module `m` itself. `None` when there is no such entry (entries under an
/// attribute such as `cfg` are not taken).
fn lazy_static_regex(krate: &Crate<'_>, m: ModId, path: &syn::Path) -> Option<RegexStatic> {
    let name = path.get_ident()?;
    for mac in &krate.modules[m].macros {
        if mac
            .mac
            .path
            .segments
            .last()
            .map(|s| s.ident != "lazy_static")?
        {
            continue;
        }
        let Ok(LazyEntries(entries)) = mac.mac.parse_body::<LazyEntries>() else {
            continue;
        };
        let Some(e) = entries.into_iter().find(|e| &e.name == name) else {
            continue;
        };
        let regex_ty =
            matches!(&e.ty, syn::Type::Path(r) if r.qself.is_none() && is_regex(krate, m, &r.path));
        if !e.attrs.is_empty() || !regex_ty {
            return Some(RegexStatic::NotOne);
        }
        return Some(match regex_new_literal(krate, m, &e.expr) {
            Some(lit) => checked(&e.name, lit),
            None => RegexStatic::NotOne,
        });
    }
    None
}

fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}

fn static_path(e: &syn::Expr) -> Option<&syn::Path> {
    match strip(e) {
        syn::Expr::Path(p) if p.qself.is_none() => Some(&p.path),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => static_path(&u.expr),
        syn::Expr::Reference(r) if r.mutability.is_none() => static_path(&r.expr),
        syn::Expr::MethodCall(mc) if mc.method == "as_str" && mc.args.is_empty() => {
            static_path(&mc.receiver)
        }
        _ => None,
    }
}

fn resolves_to(krate: &Crate<'_>, m: ModId, path: &syn::Path, names: &[&str]) -> bool {
    matches!(krate.resolve_type(m, path), Some(Resolved::External(p)) if names.contains(&p.as_str()))
}

fn is_lazy(krate: &Crate<'_>, m: ModId, path: &syn::Path) -> bool {
    resolves_to(
        krate,
        m,
        path,
        &["std::sync::LazyLock", "once_cell::sync::Lazy"],
    )
}

fn is_regex(krate: &Crate<'_>, m: ModId, path: &syn::Path) -> bool {
    resolves_to(krate, m, path, &["regex::Regex", "regex::bytes::Regex"])
}

/// Whether `path` is `<Type>::<name>` with `Type` accepted by `is_type` (type arguments
/// as in `Lazy::<Regex>::new` allowed).
fn assoc_of(
    krate: &Crate<'_>,
    m: ModId,
    path: &syn::Path,
    name: &str,
    is_type: fn(&Crate<'_>, ModId, &syn::Path) -> bool,
) -> bool {
    let mut ty = path.clone();
    match ty.segments.pop() {
        Some(last) if last.value().ident == name && last.value().arguments.is_none() => {}
        _ => return false,
    }
    ty.segments.pop_punct();
    !ty.segments.is_empty() && is_type(krate, m, &ty)
}

/// The string literal of `Regex::new("…").unwrap()` / `.expect(…)`, alone or as the only
/// expression of a block.
fn regex_new_literal(krate: &Crate<'_>, m: ModId, body: &syn::Expr) -> Option<String> {
    let body = match strip(body) {
        syn::Expr::Block(b) if b.label.is_none() => match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => strip(e),
            _ => return None,
        },
        e => e,
    };
    let syn::Expr::MethodCall(mc) = body else {
        return None;
    };
    let ok = match mc.method.to_string().as_str() {
        "unwrap" => mc.args.is_empty(),
        "expect" => mc.args.len() == 1,
        _ => false,
    };
    if !ok || mc.turbofish.is_some() {
        return None;
    }
    let syn::Expr::Call(call) = strip(&mc.receiver) else {
        return None;
    };
    let syn::Expr::Path(f) = &*call.func else {
        return None;
    };
    if f.qself.is_some() || !assoc_of(krate, m, &f.path, "new", is_regex) {
        return None;
    }
    match call.args.first().map(strip) {
        Some(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) if call.args.len() == 1 => Some(s.value()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use std::path::Path;

    use crate::manifests::diag::{Cause, Diagnostic};
    use crate::manifests::{SourceSet, crds_from_sources};

    const HEADER: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\nuse regex::Regex;\nuse std::sync::LazyLock;\n";

    fn run(body: &str) -> Result<Value, Vec<Diagnostic>> {
        let set = SourceSet {
            files: vec![
                SourceSet::parse_text(
                    Path::new("x.rs"),
                    format!(
                        "{HEADER}{body}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec {{\n  #[schemars(regex(pattern = *A))] pub a: String,\n  #[schemars(pattern(B))] pub b: String,\n  #[validate(regex(path = *C))] pub c: String,\n  #[validate(regex(path = \"D\"))] pub d: String,\n}}\n"
                    ),
                )
                .unwrap(),
            ],
        };
        let crds = crds_from_sources(&set)?;
        let v = serde_json::to_value(&crds[0].crd).unwrap();
        let props = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        Ok(["a", "b", "c", "d"]
            .iter()
            .map(|k| (k.to_string(), props[k]["pattern"].clone()))
            .collect::<serde_json::Map<_, _>>()
            .into())
    }

    #[test]
    fn patterns_come_from_the_literal_of_lazily_built_regex_statics() {
        let v = run(
            "static A: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"^v[0-9]+$\").unwrap());\n\
             static B: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| { Regex::new(r\"^\\d+\\.\\d+$\").expect(\"valid\") });\n\
             static C: once_cell::sync::Lazy<Regex> = once_cell::sync::Lazy::new(|| Regex::new(r#\"^\"[a-z]\"$\"#).unwrap());\n\
             mod res { pub static D: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| regex::Regex::new(\"^x|y$\").unwrap()); }\n\
             use res::D;\n",
        )
        .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(
            v,
            json!({"a": "^v[0-9]+$", "b": "^\\d+\\.\\d+$", "c": "^\"[a-z]\"$", "d": "^x|y$"})
        );
    }

    #[test]
    fn patterns_come_from_lazy_static_regexes_of_the_module() {
        let v = run(
            "lazy_static::lazy_static! {\n  static ref A: Regex = Regex::new(\"^a+$\").unwrap();\n  pub static ref B: regex::Regex = regex::Regex::new(r\"^b\\.$\").expect(\"valid\");\n}\n\
             lazy_static! { pub(crate) static ref C: Regex = Regex::new(\"^c$\").unwrap(); static ref D: Regex = Regex::new(\"^d$\").unwrap(); }\n",
        )
        .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(
            v,
            json!({"a": "^a+$", "b": "^b\\.$", "c": "^c$", "d": "^d$"})
        );
    }

    #[test]
    fn a_lazy_static_entry_of_another_type_or_under_cfg_is_refused() {
        let d = run(
            "lazy_static! {\n  #[cfg(unix)] static ref A: Regex = Regex::new(\"^a$\").unwrap();\n  static ref B: Regex = Regex::new(\"b\").unwrap();\n  static ref C: Regex = Regex::new(\"c\").unwrap();\n  static ref D: Regex = Regex::new(\"d\").unwrap();\n}\n",
        )
        .expect_err("must be refused");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].cause, Cause::NeedsCompile);
        assert!(d[0].message.contains("*A"), "{}", d[0].message);
    }

    #[test]
    fn a_regex_static_built_otherwise_is_refused() {
        // A pattern made at run time: only the compiler knows it.
        let d = run(
            "static A: LazyLock<Regex> = LazyLock::new(|| Regex::new(&format!(\"^{}$\", 1)).unwrap());\n\
             static B: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"b\").unwrap());\n\
             static C: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"c\").unwrap());\n\
             static D: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"d\").unwrap());\n",
        )
        .expect_err("must be refused");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].cause, Cause::NeedsCompile);
        // At the attribute, naming the expression.
        assert_eq!(d[0].line, 14);
        assert!(d[0].message.contains("*A"), "{}", d[0].message);
    }

    #[test]
    fn a_regex_static_as_a_title_is_not_a_pattern() {
        // schemars passes `title` on as it is: a `Regex` there does not compile.
        let set = SourceSet {
            files: vec![
                SourceSet::parse_text(
                    Path::new("x.rs"),
                    format!(
                        "{HEADER}static T: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"t\").unwrap());\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec {{ #[schemars(title = *T)] pub a: String }}\n"
                    ),
                )
                .unwrap(),
            ],
        };
        let d = crds_from_sources(&set).expect_err("must be refused");
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("*T"), "{}", d[0].message);
    }

    #[test]
    fn a_regex_static_that_does_not_compile_is_an_error() {
        let d = run(
            "static A: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"(unclosed\").unwrap());\n\
             static B: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"b\").unwrap());\n\
             static C: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"c\").unwrap());\n\
             static D: LazyLock<Regex> = LazyLock::new(|| Regex::new(\"d\").unwrap());\n",
        )
        .expect_err("must be refused");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].cause, Cause::Invalid);
        assert!(
            d[0].message
                .contains("the regex of static `A` does not compile"),
            "{}",
            d[0].message
        );
    }
}
