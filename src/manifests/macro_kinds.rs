//! Kinds a declarative macro makes. `manifests` reads the sources without expanding macros,
//! so a `#[derive(CustomResource)]` inside a `macro_rules!` body, or inside the tokens given
//! to any macro, defines no kind it can see: the kind gets no CRD. Each such macro call is
//! reported at its `file:line:column`, naming the macro, so the kind is not lost silently.

use proc_macro2::{TokenStream, TokenTree};

use super::diag::Diagnostic;
use super::source::SourceSet;

/// One item-level macro call whose expansion derives `CustomResource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroKind {
    /// The macro's name, without `!`.
    pub name: String,
    /// Where the call is: file, 1-based line and column.
    pub at: (std::path::PathBuf, usize, usize),
    /// The `kind = "…"` written in the call's own tokens, when there is one.
    pub kind: Option<String>,
    /// Every string literal of the call's tokens (a kind passed as an argument is one).
    pub strings: Vec<String>,
}

impl MacroKind {
    /// Whether this call may make the kind `kind`: its `kind = "…"`, or a string argument.
    pub fn may_make(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind) || self.strings.iter().any(|s| s == kind)
    }
}

/// Every item-level macro call in `sources` (inline modules included) that derives
/// `CustomResource`: a call of a `macro_rules!` whose body names `CustomResource` or calls
/// such a macro (at any depth of calls), a call whose own tokens do, or an `include!` of a
/// file of the crate that does ([`included_text`]). In file order. Nothing is expanded; the search is on tokens only.
pub fn find(sources: &SourceSet) -> Vec<MacroKind> {
    // Every `macro_rules!` with the macros its body calls; a maker names `CustomResource`, or
    // calls a maker (`outer!` expanding to `inner!(...)`), found until nothing changes.
    let mut calls: Vec<(String, std::collections::BTreeSet<String>)> = Vec::new();
    let mut makers = std::collections::BTreeSet::new();
    for f in &sources.files {
        walk(&f.ast.items, &mut |m| {
            if m.mac.path.is_ident("macro_rules")
                && let Some(name) = &m.ident
            {
                if names_custom_resource(&m.mac.tokens) {
                    makers.insert(name.to_string());
                } else {
                    let mut called = std::collections::BTreeSet::new();
                    macro_calls(&m.mac.tokens, &mut called);
                    calls.push((name.to_string(), called));
                }
            }
        });
    }
    loop {
        let before = makers.len();
        for (name, called) in &calls {
            if !makers.contains(name) && called.iter().any(|c| makers.contains(c)) {
                makers.insert(name.clone());
            }
        }
        if makers.len() == before {
            break;
        }
    }
    let mut out = Vec::new();
    for f in &sources.files {
        walk(&f.ast.items, &mut |m| {
            if m.mac.path.is_ident("macro_rules") {
                return;
            }
            let Some(last) = m.mac.path.segments.last() else {
                return;
            };
            let name = last.ident.to_string();
            let included = (name == "include")
                .then(|| included_text(&f.path, &m.mac.tokens))
                .flatten();
            if let Some(text) = &included {
                if !text.contains("CustomResource") {
                    return;
                }
                let start = last.ident.span().start();
                let tokens: TokenStream = text.parse().unwrap_or_default();
                out.push(MacroKind {
                    name,
                    at: (f.path.clone(), start.line, start.column + 1),
                    kind: kind_literal(&tokens),
                    strings: strings(&tokens),
                });
                return;
            }
            if !makers.contains(&name) && !names_custom_resource(&m.mac.tokens) {
                return;
            }
            let start = last.ident.span().start();
            out.push(MacroKind {
                name,
                at: (f.path.clone(), start.line, start.column + 1),
                kind: kind_literal(&m.mac.tokens),
                strings: strings(&m.mac.tokens),
            });
        });
    }
    out
}

/// The warning for one [`MacroKind`]: at the call, naming the macro and the way out.
pub fn warning(m: &MacroKind) -> Diagnostic {
    let what = match &m.kind {
        Some(k) => format!("the kind {k}"),
        None => "a kind".to_string(),
    };
    Diagnostic::new(
        &m.at.0,
        m.at.1,
        m.at.2,
        format!(
            "`{}!` makes {what} with `#[derive(CustomResource)]` inside a macro; `manifests` reads the sources without expanding macros, so it cannot see that kind and writes no CRD for it",
            m.name
        ),
    )
    .with_help(format!(
        "write the type out in the source (the struct with its `#[derive(CustomResource)]` and `#[kube(...)]`) instead of making it with `{}!`",
        m.name
    ))
}

/// A warning at every struct or enum deriving kube's `CustomResource` under another name
/// (`use kube::CustomResource as Cr;` then `#[derive(Cr)]`): rustc expands it as the kind it
/// is, but `manifests` finds kinds by the derive's name, so that kind would get no CRD
/// without a word. The name is taken from the renaming `use` items of the same file.
pub fn renamed_derives(sources: &SourceSet) -> Vec<Diagnostic> {
    fn renames(tree: &syn::UseTree, out: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => renames(&p.tree, out),
            syn::UseTree::Rename(r) if r.ident == "CustomResource" => {
                out.push(r.rename.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| renames(t, out)),
            _ => {}
        }
    }
    fn items<'a>(
        list: &'a [syn::Item],
        uses: &mut Vec<String>,
        types: &mut Vec<(&'a syn::Ident, &'a [syn::Attribute])>,
    ) {
        for item in list {
            match item {
                syn::Item::Use(u) => renames(&u.tree, uses),
                syn::Item::Struct(s) => types.push((&s.ident, &s.attrs)),
                syn::Item::Enum(e) => types.push((&e.ident, &e.attrs)),
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        items(inner, uses, types);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for f in &sources.files {
        let (mut uses, mut types) = (Vec::new(), Vec::new());
        items(&f.ast.items, &mut uses, &mut types);
        if uses.is_empty() {
            continue;
        }
        for (ident, attrs) in types {
            let derived = crate::manifests::crd::attrs::derives(attrs);
            let Some(name) = derived.iter().find(|d| uses.contains(d)) else {
                continue;
            };
            let start = ident.span().start();
            out.push(
                Diagnostic::new(
                    &f.path,
                    start.line,
                    start.column + 1,
                    format!(
                        "`{ident}` derives `{name}`, which this file imports as kube's `CustomResource` renamed; `manifests` finds kinds by the name `CustomResource`, so it writes no CRD for this one"
                    ),
                )
                .with_help("derive it as `CustomResource` (drop the `as` rename)".to_string()),
            );
        }
    }
    out
}

/// Calls `f` on every item-level macro of `items`, inline modules included.
fn walk<'a>(items: &'a [syn::Item], f: &mut impl FnMut(&'a syn::ItemMacro)) {
    for item in items {
        match item {
            syn::Item::Macro(m) => f(m),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    walk(inner, f);
                }
            }
            _ => {}
        }
    }
}

/// The text of the file an item-level `include!("path")` in `source` brings in: the path
/// taken from the source file's directory, read only when it is a regular file inside the
/// crate (under the directory of the nearest Cargo.toml, links resolved) of at most 1 MiB.
/// `None` otherwise, and for a path that is not a string literal.
fn included_text(source: &std::path::Path, tokens: &TokenStream) -> Option<String> {
    let lit: syn::LitStr = syn::parse2(tokens.clone()).ok()?;
    let dir = source.parent()?;
    let target = std::fs::canonicalize(dir.join(lit.value())).ok()?;
    let root = crate::manifests::cfg::features::find_manifest(dir)?;
    let root = std::fs::canonicalize(root.parent()?).ok()?;
    if !target.starts_with(&root) {
        return None;
    }
    crate::engine::regular::read_path_at_most(&target, 1 << 20).ok()
}

/// The names of the macros `tokens` call (an identifier followed by `!`), at any depth.
fn macro_calls(tokens: &TokenStream, out: &mut std::collections::BTreeSet<String>) {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id) => {
                if let Some(TokenTree::Punct(p)) = trees.get(i + 1)
                    && p.as_char() == '!'
                {
                    out.insert(id.to_string());
                }
            }
            TokenTree::Group(g) => macro_calls(&g.stream(), out),
            _ => {}
        }
    }
}

/// Whether `tokens` hold the identifier `CustomResource` at any depth.
fn names_custom_resource(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "CustomResource",
        TokenTree::Group(g) => names_custom_resource(&g.stream()),
        _ => false,
    })
}

/// The string after `kind =` in `tokens` (at any depth), unquoted.
fn kind_literal(tokens: &TokenStream) -> Option<String> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id) if id == "kind" => {
                if let (Some(TokenTree::Punct(p)), Some(TokenTree::Literal(l))) =
                    (trees.get(i + 1), trees.get(i + 2))
                    && p.as_char() == '='
                    && let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string())
                {
                    return Some(s.value());
                }
            }
            TokenTree::Group(g) => {
                if let Some(k) = kind_literal(&g.stream()) {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Every string literal in `tokens` (at any depth), unquoted.
fn strings(tokens: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for t in tokens.clone() {
        match t {
            TokenTree::Literal(l) => {
                if let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string()) {
                    out.push(s.value());
                }
            }
            TokenTree::Group(g) => out.extend(strings(&g.stream())),
            _ => {}
        }
    }
    out
}
