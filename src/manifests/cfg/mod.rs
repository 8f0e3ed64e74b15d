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
//! `#[cfg(unix)]` signal handler in `main.rs`) stops nothing. An undecided `cfg_attr` whose
//! attributes cannot change a schema (`doc(cfg(...))`, lints, `derive(Debug)`) is dropped:
//! either way the result is the same.
//!
//! A `mod` item that `cfg` leaves out stays in the tree marked `#[cfg(false)]`, unwalked, so
//! that [`excluded_files`] can leave out the files it (and its descendants) would include.
//!
//! This module holds the configuration and its predicates; [`mod@strip`] walks the syntax
//! tree with them.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use proc_macro2::{Span, TokenStream};
use syn::Token;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

pub mod features;
pub mod target;

pub mod strip;

pub use features::{FeatureFlags, FeatureSource};
pub(crate) use strip::item_attrs;
pub use strip::{Mark, excluded_files, left_out, mark, strip};
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

#[cfg(test)]
mod tests;
