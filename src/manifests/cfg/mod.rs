//! `cfg` as cargo sees it when it builds the crate's library: one pass right after parsing
//! removes what `#[cfg(...)]` leaves out and expands `#[cfg_attr(...)]`, on the syn tree, so
//! the rest of the engine never sees either.
//!
//! Predicates are decided from what `cargo build` gives rustc: `test`, `doc`, `doctest`,
//! `miri`, `proc_macro` are false; `feature = "…"` follows the crate's features (see
//! [`features`]); `true`/`false` are themselves; `all`/`any`/`not` combine. What depends on
//! the target, the profile or `RUSTFLAGS` (`unix`, `target_os = "…"`, `debug_assertions`,
//! `panic = "…"`, custom `--cfg` names such as `docsrs`) follows what rustc answers (see
//! [`target`]), and a name it does not set is false; without that answer (or for a name a
//! build script may set) such a predicate is *undecided*.
//!
//! An undecided node is not guessed: it stays in the tree marked with one `#[cfg(<atom>)]`
//! attribute naming the first predicate that could not be decided, and so does the item of
//! the module it lies in (a struct with an undecided field, a function with an undecided
//! statement, an impl with an undecided method). Name resolution ([`super::crd::resolve`],
//! over the module tree of [`super::modtree`]) keeps marked items out, so a kind that needs
//! one is refused with the predicate's name, while undecided code that no kind uses (a
//! `#[cfg(unix)]` signal handler in `main.rs`) stops nothing. An undecided `cfg_attr` whose attributes cannot change a schema
//! (`doc(cfg(...))`, lints, `derive(Debug)`) is dropped: either way the result is the same.
//!
//! A `mod` item that `cfg` leaves out stays in the tree marked `#[cfg(false)]`, unwalked, so
//! that [`excluded_files`] can leave out the files it (and its descendants) would include.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Attribute, Meta, Token};

pub mod features;
pub mod target;

pub use features::{FeatureFlags, FeatureSource};
pub use target::TargetCfg;

/// The configuration the crate is compiled under, as far as rsbuilder decides it.
#[derive(Debug)]
pub struct Cfg {
    features: BTreeSet<String>,
    source: FeatureSource,
    /// Set when a `feature = "…"` predicate was decided (for the "no Cargo.toml" note).
    feature_read: AtomicBool,
    /// What rustc sets for the target, the profile and the flags; `None`: not known, and
    /// every such predicate is undecided.
    target: Option<TargetCfg>,
    /// How to ask rustc for `target` when a predicate first needs it (a run whose sources
    /// test no target name never starts rustc).
    query: Option<TargetQuery>,
    /// rustc's answer to `query`, once asked.
    asked: std::sync::OnceLock<Result<TargetCfg, String>>,
}

/// What [`TargetCfg::query`] needs, kept until a predicate asks for the target
/// ([`Cfg::with_target_query`]).
#[derive(Debug, Clone)]
pub struct TargetQuery {
    /// The crate's directory (rustc runs there, as cargo runs it).
    pub dir: std::path::PathBuf,
    /// The crate's Cargo.toml text (its `[profile.dev]`).
    pub manifest: Option<String>,
    /// The crate's build script text, if any.
    pub build_script: Option<String>,
}

impl Default for Cfg {
    /// No Cargo.toml: no features.
    fn default() -> Self {
        Self::new(BTreeSet::new(), FeatureSource::NoManifest)
    }
}

impl Cfg {
    /// A configuration with these features enabled.
    pub fn new(features: BTreeSet<String>, source: FeatureSource) -> Self {
        Self {
            features,
            source,
            feature_read: AtomicBool::new(false),
            target: None,
            query: None,
            asked: std::sync::OnceLock::new(),
        }
    }

    /// This configuration with the target's names and pairs known (see [`target`]): a
    /// predicate on them is decided, and a name rustc does not set is false.
    pub fn with_target(mut self, target: TargetCfg) -> Self {
        self.target = Some(target);
        self
    }

    /// This configuration asking rustc for the target's names and pairs (see [`target`]) the
    /// first time a predicate needs them; when rustc cannot answer, such predicates stay
    /// undecided and [`Cfg::target_error`] says why.
    pub fn with_target_query(mut self, query: TargetQuery) -> Self {
        self.query = Some(query);
        self
    }

    /// The target configuration, when known (asking rustc now if that was deferred).
    pub fn target(&self) -> Option<&TargetCfg> {
        if let Some(t) = &self.target {
            return Some(t);
        }
        let q = self.query.as_ref()?;
        self.asked
            .get_or_init(|| {
                TargetCfg::query(&q.dir, q.manifest.as_deref(), q.build_script.as_deref())
            })
            .as_ref()
            .ok()
    }

    /// Why rustc could not tell the target configuration, when it was asked and failed.
    pub fn target_error(&self) -> Option<&str> {
        match self.asked.get() {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// The configuration of the package whose Cargo.toml is the nearest at or above `dir`
    /// (none: no features but the named ones), with cargo's feature `flags`. Errors: see
    /// [`features::resolve`].
    pub fn for_dir(dir: &Path, flags: &FeatureFlags) -> Result<Self, features::FeatureError> {
        let manifest = features::find_manifest(dir);
        let (set, source) = features::resolve(manifest.as_deref(), flags)?;
        Ok(Self::new(set, source))
    }

    /// The configuration of the package whose `Cargo.toml` is `manifest` (`(path, text)`, read
    /// by the caller), or of loose files without one, with `flags`: as [`Cfg::for_dir`] finds
    /// it, without reading. Errors: an invalid manifest, unknown features.
    pub fn for_manifest(
        manifest: Option<(&Path, &str)>,
        flags: &FeatureFlags,
    ) -> Result<Self, features::FeatureError> {
        let (set, source) = features::resolve_text(manifest, flags)?;
        Ok(Self::new(set, source))
    }

    /// The enabled features.
    pub fn features(&self) -> &BTreeSet<String> {
        &self.features
    }

    /// Where the features came from.
    pub fn source(&self) -> &FeatureSource {
        &self.source
    }

    /// Whether any `feature = "…"` predicate was decided with this configuration.
    pub fn features_were_read(&self) -> bool {
        self.feature_read.load(Ordering::Relaxed)
    }

    /// Decides one `cfg` predicate.
    pub fn eval(&self, pred: &Pred) -> Truth {
        match pred {
            Pred::Bool(b, _) => Truth::from(*b),
            Pred::Name(name) => match name.to_string().as_str() {
                // What `cargo build` of the library never sets.
                "test" | "doc" | "doctest" | "miri" | "proc_macro" | "rustfmt" | "clippy"
                | "rust_analyzer" => Truth::False,
                // Names rustc sets only with a value: bare, they are false.
                "feature"
                | "target_os"
                | "target_family"
                | "target_arch"
                | "target_env"
                | "target_vendor"
                | "target_endian"
                | "target_pointer_width"
                | "target_abi"
                | "target_has_atomic"
                | "target_feature"
                | "panic" => Truth::False,
                other => match self.target().and_then(|t| t.name(other)) {
                    Some(b) => Truth::from(b),
                    None => Truth::Undecided(Atom::of(pred)),
                },
            },
            Pred::KeyValue(key, value) => {
                if key == "feature" {
                    self.feature_read.store(true, Ordering::Relaxed);
                    Truth::from(self.features.contains(&value.value()))
                } else {
                    let key = key.to_string();
                    match self.target().and_then(|t| t.pair(&key, &value.value())) {
                        Some(b) => Truth::from(b),
                        None => Truth::Undecided(Atom::of(pred)),
                    }
                }
            }
            Pred::All(list, _) => self.combine(list, false),
            Pred::Any(list, _) => self.combine(list, true),
            Pred::Not(p, _) => match self.eval(p) {
                Truth::True => Truth::False,
                Truth::False => Truth::True,
                u => u,
            },
        }
    }
}

impl Cfg {
    /// `any` (`decisive` true) or `all` (false): a part with the decisive value decides;
    /// otherwise the first undecided part leaves the whole undecided.
    fn combine(&self, list: &[Pred], decisive: bool) -> Truth {
        let mut out = Truth::from(!decisive);
        for p in list {
            match self.eval(p) {
                t if t == Truth::from(decisive) => return t,
                Truth::Undecided(a) if out == Truth::from(!decisive) => out = Truth::Undecided(a),
                _ => {}
            }
        }
        out
    }
}

/// A `cfg` predicate, as rustc reads it.
#[derive(Debug, Clone)]
pub enum Pred {
    /// `true` / `false`.
    Bool(bool, Span),
    /// `unix`, `test`.
    Name(syn::Ident),
    /// `feature = "x"`.
    KeyValue(syn::Ident, syn::LitStr),
    /// `all(...)`.
    All(Vec<Pred>, Span),
    /// `any(...)`.
    Any(Vec<Pred>, Span),
    /// `not(...)`.
    Not(Box<Pred>, Span),
}

impl Pred {
    fn span(&self) -> Span {
        match self {
            Pred::Bool(_, s) | Pred::All(_, s) | Pred::Any(_, s) | Pred::Not(_, s) => *s,
            Pred::Name(i) => i.span(),
            Pred::KeyValue(k, _) => k.span(),
        }
    }

    fn parse_one(input: ParseStream) -> syn::Result<Self> {
        if input.peek(syn::LitBool) {
            let b: syn::LitBool = input.parse()?;
            return Ok(Pred::Bool(b.value, b.span));
        }
        let name: syn::Ident = syn::ext::IdentExt::parse_any(input)?;
        if input.peek(Token![::]) {
            return Err(input.error("a `cfg` predicate key must be an identifier"));
        }
        if input.peek(Token![=]) {
            let _: Token![=] = input.parse()?;
            let lit: syn::Lit = input.parse()?;
            return match lit {
                syn::Lit::Str(s) => Ok(Pred::KeyValue(name, s)),
                other => Err(syn::Error::new(
                    other.span(),
                    "the value of a `cfg` predicate must be a string literal",
                )),
            };
        }
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            let list: Vec<Pred> =
                Punctuated::<Pred, Token![,]>::parse_terminated_with(&content, Pred::parse_one)?
                    .into_iter()
                    .collect();
            let span = name.span();
            return match name.to_string().as_str() {
                "all" => Ok(Pred::All(list, span)),
                "any" => Ok(Pred::Any(list, span)),
                "not" if list.len() == 1 => {
                    Ok(Pred::Not(Box::new(list.into_iter().next().unwrap()), span))
                }
                "not" => Err(syn::Error::new(span, "`not` takes exactly one predicate")),
                other => Err(syn::Error::new(
                    span,
                    format!("invalid `cfg` predicate `{other}(...)`: expected all, any or not"),
                )),
            };
        }
        Ok(Pred::Name(name))
    }

    /// Parses the tokens inside `cfg(...)`: exactly one predicate (a trailing comma allowed).
    pub fn parse_tokens(tokens: TokenStream) -> syn::Result<Self> {
        let span = tokens.span();
        let parser = |input: ParseStream| {
            Punctuated::<Pred, Token![,]>::parse_terminated_with(input, Pred::parse_one)
        };
        let list = parser
            .parse2(tokens)
            .map_err(|e| syn::Error::new(e.span(), format!("invalid `cfg` predicate: {e}")))?;
        match list.len() {
            0 => Err(syn::Error::new(span, "`cfg` predicate is not specified")),
            1 => Ok(list.into_iter().next().unwrap()),
            _ => Err(syn::Error::new(
                list[1].span(),
                "several `cfg` predicates: combine them with all(...) or any(...)",
            )),
        }
    }
}

/// The first predicate that could not be decided: its text and where it is written.
#[derive(Debug, Clone)]
pub struct Atom {
    /// `target_os = "linux"`, `unix`.
    pub text: String,
    /// Its tokens, spans kept (they go into the marker attribute).
    tokens: TokenStream,
}

impl PartialEq for Atom {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Atom {
    fn of(pred: &Pred) -> Self {
        let tokens = match pred {
            Pred::Name(n) => quote::quote!(#n),
            Pred::KeyValue(k, v) => quote::quote!(#k = #v),
            _ => TokenStream::new(),
        };
        Self {
            text: tokens.to_string(),
            tokens,
        }
    }
}

/// The value of a predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Truth {
    /// Set.
    True,
    /// Not set.
    False,
    /// Depends on the target, the profile or the flags; the atom is the first undecided one.
    Undecided(Atom),
}

impl From<bool> for Truth {
    fn from(b: bool) -> Self {
        if b { Truth::True } else { Truth::False }
    }
}

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
    use super::modtree::{mod_files, normalize};
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

#[cfg(test)]
mod tests;
