//! Stripping a parsed file as cargo compiles it under a [`Cfg`]: nodes whose `cfg` is false
//! are removed, `cfg_attr`s that hold are applied, undecided nodes are kept with a [`Mark`],
//! and left-out `mod` items are marked so that [`excluded_files`] can leave their files out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Attribute, Meta, Token};

use super::{Atom, Cfg, Pred, Truth};

/// What a node's `cfg` attributes say about it.
enum Verdict {
    Keep,
    Remove,
    Undecided(Atom),
}

/// The mark [`strip`] leaves on a node: `#[cfg(false)]` on a left-out `mod`, `#[cfg(atom)]`
/// on an undecided node.
#[derive(Debug, Clone)]
pub enum Mark {
    /// A `mod` that cargo leaves out (with its files).
    Excluded,
    /// Undecided: the predicate's text and its position.
    Undecided(String, Span),
}

/// The mark on a node's attributes, if [`strip`] left one.
pub fn mark(attrs: &[Attribute]) -> Option<Mark> {
    let a = attrs.iter().find(|a| a.path().is_ident("cfg"))?;
    let Meta::List(list) = &a.meta else {
        return Some(Mark::Undecided(
            quote::ToTokens::to_token_stream(&a.meta).to_string(),
            a.span(),
        ));
    };
    let text = list.tokens.to_string();
    if text == "false" {
        return Some(Mark::Excluded);
    }
    let span = list
        .tokens
        .clone()
        .into_iter()
        .next()
        .map_or(a.span(), |t| t.span());
    Some(Mark::Undecided(text, span))
}

/// Whether a `mod` item with these attributes is left out by cargo ([`strip`] marked it
/// [`Mark::Excluded`]).
pub fn left_out(attrs: &[Attribute]) -> bool {
    matches!(mark(attrs), Some(Mark::Excluded))
}

/// Attributes that cannot change a schema, a default or a kind, whatever their `cfg_attr`
/// predicate: lints, `doc(...)` lists (not `doc = "…"`), codegen hints, crate-level
/// `feature(...)` and limits, neutral derives.
fn irrelevant(meta: &Meta) -> bool {
    const NEUTRAL_DERIVES: &[&str] = &[
        "Debug",
        "Clone",
        "Copy",
        "PartialEq",
        "Eq",
        "PartialOrd",
        "Ord",
        "Hash",
    ];
    let path = meta.path();
    let first = path.segments.first().map(|s| s.ident.to_string());
    if matches!(first.as_deref(), Some("rustfmt" | "clippy")) {
        return true;
    }
    let Some(name) = path.get_ident().map(|i| i.to_string()) else {
        return false;
    };
    match name.as_str() {
        "allow"
        | "warn"
        | "deny"
        | "forbid"
        | "expect"
        | "must_use"
        | "inline"
        | "cold"
        | "track_caller"
        | "non_exhaustive"
        | "automatically_derived"
        // Crate-level: `#![cfg_attr(docsrs, feature(doc_cfg))]` allows a nightly feature.
        | "feature"
        | "recursion_limit"
        | "type_length_limit" => true,
        "doc" => matches!(meta, Meta::List(_)),
        "derive" => match meta {
            Meta::List(l) => l
                .parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
                .is_ok_and(|paths| {
                    paths.iter().all(|p| {
                        p.segments.last().is_some_and(|s| {
                            NEUTRAL_DERIVES.contains(&s.ident.to_string().as_str())
                        })
                    })
                }),
            _ => false,
        },
        "cfg_attr" => match meta {
            Meta::List(l) => split_cfg_attr(l.tokens.clone())
                .is_ok_and(|(_, attrs)| attrs.iter().all(irrelevant)),
            _ => false,
        },
        _ => false,
    }
}

/// `cfg_attr(pred, a, b, ...)` split into the predicate and the attributes.
fn split_cfg_attr(tokens: TokenStream) -> syn::Result<(Pred, Vec<Meta>)> {
    let span = tokens.span();
    (|input: ParseStream| {
        if input.is_empty() {
            return Err(syn::Error::new(span, "`cfg_attr` needs a predicate"));
        }
        let pred = Pred::parse_one(input)?;
        if input.is_empty() {
            return Err(syn::Error::new(
                span,
                "`cfg_attr` needs `,` and the attributes after its predicate",
            ));
        }
        let _: Token![,] = input.parse()?;
        let attrs = Punctuated::<Meta, Token![,]>::parse_terminated(input)?;
        Ok((pred, attrs.into_iter().collect()))
    })
    .parse2(tokens)
}

/// The strip pass; see the module docs.
struct Strip<'c> {
    cfg: &'c Cfg,
    errors: Vec<syn::Error>,
    /// The first undecided node found inside the module-level item being walked.
    undecided: Option<Atom>,
}

impl Strip<'_> {
    /// Expands the `cfg_attr`s of one node and decides its `cfg`s (a conjunction).
    fn settle(&mut self, attrs: &mut Vec<Attribute>) -> Verdict {
        if !attrs
            .iter()
            .any(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"))
        {
            return Verdict::Keep;
        }
        let mut out: Vec<Attribute> = Vec::with_capacity(attrs.len());
        let mut pending = std::mem::take(attrs);
        pending.reverse();
        let mut undecided: Option<Atom> = None;
        let mut removed = false;
        let mut kept_undecided_attr: Vec<Attribute> = Vec::new();
        while let Some(a) = pending.pop() {
            if a.path().is_ident("cfg_attr") {
                let Meta::List(list) = &a.meta else {
                    self.errors.push(syn::Error::new(
                        a.span(),
                        "expected `cfg_attr(predicate, attributes...)`",
                    ));
                    continue;
                };
                let (pred, metas) = match split_cfg_attr(list.tokens.clone()) {
                    Ok(x) => x,
                    Err(e) => {
                        self.errors.push(e);
                        continue;
                    }
                };
                match self.cfg.eval(&pred) {
                    Truth::True => {
                        for meta in metas.into_iter().rev() {
                            pending.push(Attribute {
                                pound_token: a.pound_token,
                                style: a.style,
                                bracket_token: a.bracket_token,
                                meta,
                            });
                        }
                    }
                    Truth::False => {}
                    Truth::Undecided(atom) => {
                        if !metas.iter().all(irrelevant) {
                            undecided.get_or_insert(atom);
                            kept_undecided_attr.push(a);
                        }
                    }
                }
                continue;
            }
            if a.path().is_ident("cfg") {
                let pred = match &a.meta {
                    Meta::List(list) => Pred::parse_tokens(list.tokens.clone()),
                    _ => Err(syn::Error::new(a.span(), "expected `cfg(predicate)`")),
                };
                match pred.map(|p| self.cfg.eval(&p)) {
                    Ok(Truth::True) => {}
                    Ok(Truth::False) => removed = true,
                    Ok(Truth::Undecided(atom)) => {
                        undecided.get_or_insert(atom);
                    }
                    Err(e) => self.errors.push(e),
                }
                continue;
            }
            out.push(a);
        }
        if removed {
            *attrs = out;
            return Verdict::Remove;
        }
        out.extend(kept_undecided_attr);
        *attrs = out;
        match undecided {
            Some(atom) => Verdict::Undecided(atom),
            None => Verdict::Keep,
        }
    }

    /// A module-level item list (a file, an inline module): each item is a unit of its own.
    fn module_items(&mut self, items: &mut Vec<syn::Item>) {
        let mut kept = Vec::with_capacity(items.len());
        for mut item in std::mem::take(items) {
            let saved = self.undecided.take();
            let verdict = item_attrs_mut(&mut item).map_or(Verdict::Keep, |a| self.settle(a));
            match verdict {
                Verdict::Remove => {
                    // A left-out module keeps its place, so its files are left out too.
                    if let syn::Item::Mod(m) = &mut item {
                        m.attrs = vec![syn::parse_quote!(#[cfg(false)])];
                        kept.push(item);
                    }
                }
                Verdict::Undecided(atom) => {
                    set_mark(&mut item, &atom);
                    kept.push(item);
                }
                Verdict::Keep => {
                    self.visit_item_mut(&mut item);
                    let inner = self.undecided.take();
                    if let (Some(atom), false) = (inner, matches!(item, syn::Item::Mod(_))) {
                        set_mark(&mut item, &atom);
                    }
                    kept.push(item);
                }
            }
            self.undecided = saved;
        }
        *items = kept;
    }

    /// A list of nodes inside a unit: a removed node goes, an undecided one makes the unit
    /// undecided.
    fn inner_list<T>(
        &mut self,
        nodes: Vec<T>,
        attrs: impl Fn(&mut T) -> Option<&mut Vec<Attribute>>,
        mut visit: impl FnMut(&mut Self, &mut T),
    ) -> Vec<T> {
        let mut kept = Vec::with_capacity(nodes.len());
        for mut n in nodes {
            match attrs(&mut n).map_or(Verdict::Keep, |a| self.settle(a)) {
                Verdict::Remove => {}
                Verdict::Undecided(atom) => {
                    self.undecided.get_or_insert(atom);
                    kept.push(n);
                }
                Verdict::Keep => {
                    visit(self, &mut n);
                    kept.push(n);
                }
            }
        }
        kept
    }
}

fn punctuated<T, P: Default>(list: &mut Punctuated<T, P>) -> Vec<T> {
    std::mem::take(list).into_iter().collect()
}

impl VisitMut for Strip<'_> {
    fn visit_file_mut(&mut self, f: &mut syn::File) {
        self.module_items(&mut f.items);
    }

    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut m.content {
            self.module_items(items);
        }
    }

    fn visit_item_impl_mut(&mut self, i: &mut syn::ItemImpl) {
        let items = std::mem::take(&mut i.items);
        i.items = self.inner_list(items, impl_item_attrs, |s, n| s.visit_impl_item_mut(n));
        self.visit_type_mut(&mut i.self_ty);
    }

    fn visit_item_trait_mut(&mut self, t: &mut syn::ItemTrait) {
        let items = std::mem::take(&mut t.items);
        t.items = self.inner_list(items, trait_item_attrs, |s, n| s.visit_trait_item_mut(n));
    }

    fn visit_item_enum_mut(&mut self, e: &mut syn::ItemEnum) {
        let variants = punctuated(&mut e.variants);
        e.variants = self
            .inner_list(
                variants,
                |v| Some(&mut v.attrs),
                |s, v| s.visit_variant_mut(v),
            )
            .into_iter()
            .collect();
        self.visit_generics_mut(&mut e.generics);
    }

    fn visit_fields_named_mut(&mut self, f: &mut syn::FieldsNamed) {
        let fields = punctuated(&mut f.named);
        f.named = self
            .inner_list(fields, |f| Some(&mut f.attrs), |s, f| s.visit_field_mut(f))
            .into_iter()
            .collect();
    }

    fn visit_fields_unnamed_mut(&mut self, f: &mut syn::FieldsUnnamed) {
        let fields = punctuated(&mut f.unnamed);
        f.unnamed = self
            .inner_list(fields, |f| Some(&mut f.attrs), |s, f| s.visit_field_mut(f))
            .into_iter()
            .collect();
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let stmts = std::mem::take(&mut b.stmts);
        b.stmts = self.inner_list(
            stmts,
            |s| match s {
                syn::Stmt::Local(l) => Some(&mut l.attrs),
                syn::Stmt::Item(i) => item_attrs_mut(i),
                syn::Stmt::Macro(m) => Some(&mut m.attrs),
                syn::Stmt::Expr(..) => None,
            },
            |s, n| s.visit_stmt_mut(n),
        );
    }

    fn visit_expr_struct_mut(&mut self, e: &mut syn::ExprStruct) {
        let fields = punctuated(&mut e.fields);
        e.fields = self
            .inner_list(
                fields,
                |f| Some(&mut f.attrs),
                |s, f| s.visit_field_value_mut(f),
            )
            .into_iter()
            .collect();
        if let Some(rest) = &mut e.rest {
            self.visit_expr_mut(rest);
        }
    }

    fn visit_expr_match_mut(&mut self, e: &mut syn::ExprMatch) {
        self.visit_expr_mut(&mut e.expr);
        let arms = std::mem::take(&mut e.arms);
        e.arms = self.inner_list(arms, |a| Some(&mut a.attrs), |s, a| s.visit_arm_mut(a));
    }

    /// A `cfg` still here sits where rsbuilder does not remove nodes (an expression, a
    /// pattern field, a generic parameter): unless it is decidably true, its unit is undecided.
    fn visit_attribute_mut(&mut self, a: &mut Attribute) {
        if !a.path().is_ident("cfg") {
            return;
        }
        let truth = match &a.meta {
            Meta::List(list) => Pred::parse_tokens(list.tokens.clone()).map(|p| self.cfg.eval(&p)),
            _ => Err(syn::Error::new(a.span(), "expected `cfg(predicate)`")),
        };
        match truth {
            Ok(Truth::True) => {}
            Ok(Truth::False) => {
                let tokens = match &a.meta {
                    Meta::List(l) => l.tokens.clone(),
                    _ => TokenStream::new(),
                };
                self.undecided.get_or_insert(Atom {
                    text: format!("{tokens} (on an expression, where rsbuilder does not apply it)"),
                    tokens,
                });
            }
            Ok(Truth::Undecided(atom)) => {
                self.undecided.get_or_insert(atom);
            }
            Err(e) => self.errors.push(e),
        }
    }
}

macro_rules! item_attrs {
    ($name:ident, $($ref:tt)+) => {
        /// The attributes of a module-level item (`None` for verbatim tokens).
        pub(crate) fn $name(item: $($ref)+ syn::Item) -> Option<$($ref)+ Vec<Attribute>> {
            use syn::Item::*;
            Some(match item {
                Const(i) => $($ref)+ i.attrs,
                Enum(i) => $($ref)+ i.attrs,
                ExternCrate(i) => $($ref)+ i.attrs,
                Fn(i) => $($ref)+ i.attrs,
                ForeignMod(i) => $($ref)+ i.attrs,
                Impl(i) => $($ref)+ i.attrs,
                Macro(i) => $($ref)+ i.attrs,
                Mod(i) => $($ref)+ i.attrs,
                Static(i) => $($ref)+ i.attrs,
                Struct(i) => $($ref)+ i.attrs,
                Trait(i) => $($ref)+ i.attrs,
                TraitAlias(i) => $($ref)+ i.attrs,
                Type(i) => $($ref)+ i.attrs,
                Union(i) => $($ref)+ i.attrs,
                Use(i) => $($ref)+ i.attrs,
                _ => return None,
            })
        }
    };
}
item_attrs!(item_attrs_mut, &mut);
item_attrs!(item_attrs_ref, &);

/// The attributes of a module-level item (none for verbatim tokens).
pub(crate) fn item_attrs(item: &syn::Item) -> &[Attribute] {
    item_attrs_ref(item).map_or(&[], |a| &a[..])
}

fn impl_item_attrs(item: &mut syn::ImplItem) -> Option<&mut Vec<Attribute>> {
    Some(match item {
        syn::ImplItem::Const(i) => &mut i.attrs,
        syn::ImplItem::Fn(i) => &mut i.attrs,
        syn::ImplItem::Type(i) => &mut i.attrs,
        syn::ImplItem::Macro(i) => &mut i.attrs,
        _ => return None,
    })
}

fn trait_item_attrs(item: &mut syn::TraitItem) -> Option<&mut Vec<Attribute>> {
    Some(match item {
        syn::TraitItem::Const(i) => &mut i.attrs,
        syn::TraitItem::Fn(i) => &mut i.attrs,
        syn::TraitItem::Type(i) => &mut i.attrs,
        syn::TraitItem::Macro(i) => &mut i.attrs,
        _ => return None,
    })
}

/// Marks a module-level item undecided: its `cfg`s give way to one `#[cfg(<atom>)]`.
fn set_mark(item: &mut syn::Item, atom: &Atom) {
    if let Some(attrs) = item_attrs_mut(item) {
        attrs.retain(|a| !a.path().is_ident("cfg"));
        let tokens = &atom.tokens;
        let mut mark: Attribute = syn::parse_quote!(#[cfg(#tokens)]);
        if atom.tokens.is_empty() {
            // A predicate with no atom of its own (an expression's cfg): keep its text.
            let text = &atom.text;
            mark = syn::parse_quote!(#[cfg(#text)]);
        }
        attrs.insert(0, mark);
    }
}

/// Applies `cfg` to one parsed file (see the module docs). Returns the file's errors:
/// malformed `cfg` and `cfg_attr` attributes, which rustc rejects too.
///
/// A file whose inner `#![cfg(...)]` is false keeps no items and gets the inner attribute
/// `#![cfg(false)]`, so [`excluded_files`] leaves it out; an undecided one is marked as an
/// undecided module.
pub fn strip(file: &mut syn::File, cfg: &Cfg) -> Vec<syn::Error> {
    let mut s = Strip {
        cfg,
        errors: Vec::new(),
        undecided: None,
    };
    match s.settle(&mut file.attrs) {
        Verdict::Remove => {
            file.items.clear();
            file.attrs = vec![syn::parse_quote!(#![cfg(false)])];
        }
        Verdict::Undecided(atom) => {
            let tokens = &atom.tokens;
            file.attrs.retain(|a| !a.path().is_ident("cfg"));
            file.attrs.insert(0, syn::parse_quote!(#![cfg(#tokens)]));
            s.module_items(&mut file.items);
        }
        Verdict::Keep => s.module_items(&mut file.items),
    }
    s.errors
}

/// Files of `files` (`(path, syntax tree)`, after [`strip`]) that cargo does not compile: those
/// whose own `#![cfg]` is false, those a left-out `mod` would include, and every file below
/// them.
pub fn excluded_files<'f>(
    files: impl IntoIterator<Item = (&'f Path, &'f syn::File)> + Clone,
) -> BTreeSet<PathBuf> {
    use crate::manifests::modtree::{mod_files, normalize};
    let mut excluded: BTreeSet<PathBuf> = BTreeSet::new();
    for (path, ast) in files.clone() {
        if matches!(mark(&ast.attrs), Some(Mark::Excluded)) {
            excluded.insert(normalize(path));
        }
        mod_files(path, &ast.items, &left_out, &mut |target, left_out| {
            if left_out {
                excluded.insert(target);
            }
        });
    }
    // Everything an excluded file includes is excluded: repeat until nothing changes
    // (each round reaches one level further down).
    loop {
        let before = excluded.len();
        for (path, ast) in files.clone() {
            if excluded.contains(&normalize(path)) {
                mod_files(path, &ast.items, &left_out, &mut |target, _| {
                    excluded.insert(target);
                });
            }
        }
        if excluded.len() == before {
            return excluded;
        }
    }
}
