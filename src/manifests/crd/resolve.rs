//! The modules of the sources and rustc-like resolution of the type paths operators write:
//! `use` items (groups, renames, globs), `crate::` / `self::` / `super::`, inline modules,
//! `pub use` re-exports and type aliases. [`build`] fills the module table (`mod` files are
//! found by [`crate::manifests::modtree`]); this module resolves paths in it. Names that
//! leave the crate (`std::…`, `k8s_openapi::…`) resolve to their full external path, which
//! [`super::known`] maps to a schemars type.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::known::normalize_external;
use crate::manifests::source::SourceFile;

pub mod build;

/// Index of a module in [`Crate::modules`].
pub type ModId = usize;

thread_local! {
    /// The modules searched through glob imports during the current outermost lookup, with
    /// the name and namespace looked for (see `Crate::lookup_through_glob`).
    static GLOB_SEEN: std::cell::RefCell<Option<std::collections::HashSet<(ModId, String, bool)>>> =
        const { std::cell::RefCell::new(None) };
}

/// A struct, enum or type alias declared in the sources (the type namespace).
#[derive(Debug, Clone, Copy)]
pub enum LocalItem<'a> {
    /// `struct`.
    Struct(&'a syn::ItemStruct),
    /// `enum`.
    Enum(&'a syn::ItemEnum),
    /// `type X = …;`.
    Alias(&'a syn::ItemType),
}

/// A function, const or static (the value namespace), for default and example evaluation.
#[derive(Debug, Clone, Copy)]
pub enum LocalValue<'a> {
    /// `fn`.
    Fn(&'a syn::ItemFn),
    /// `const`.
    Const(&'a syn::ItemConst),
    /// `static`.
    Static(&'a syn::ItemStatic),
    /// An associated function (`Type::function`) of an inherent `impl`.
    Method(&'a syn::ImplItemFn),
}

impl<'a> LocalValue<'a> {
    /// The body of a function or associated function.
    pub fn body(&self) -> Option<&'a syn::Block> {
        match self {
            LocalValue::Fn(f) => Some(&f.block),
            LocalValue::Method(f) => Some(&f.block),
            _ => None,
        }
    }

    /// The declared return type of a function.
    pub fn output(&self) -> Option<&'a syn::ReturnType> {
        match self {
            LocalValue::Fn(f) => Some(&f.sig.output),
            LocalValue::Method(f) => Some(&f.sig.output),
            _ => None,
        }
    }

    /// The function's name, for messages.
    pub fn name(&self) -> String {
        match self {
            LocalValue::Fn(f) => f.sig.ident.to_string(),
            LocalValue::Method(f) => f.sig.ident.to_string(),
            LocalValue::Const(c) => c.ident.to_string(),
            LocalValue::Static(s) => s.ident.to_string(),
        }
    }
}

/// One `use` binding: `name` stands for `path` (`glob` for `path::*`).
#[derive(Debug, Clone)]
pub struct Import {
    /// The bound name (`None` for globs).
    pub name: Option<String>,
    /// Path segments as written.
    pub path: Vec<String>,
    /// `::`-prefixed path.
    pub leading_colon: bool,
    /// A plain `pub use`: the binding is a re-export outside code can name.
    pub public: bool,
}

/// One module of a crate.
#[derive(Debug)]
pub struct Module<'a> {
    /// File this module's items come from.
    pub file: &'a SourceFile,
    /// `crate::a::b` as segments (without `crate`).
    pub path: Vec<String>,
    /// Enclosing module.
    pub parent: Option<ModId>,
    /// The crate root of this module.
    pub root: ModId,
    /// Child modules by name.
    pub children: BTreeMap<String, ModId>,
    /// Types declared here.
    pub types: BTreeMap<String, LocalItem<'a>>,
    /// Names of [`Module::types`] in source order.
    pub type_order: Vec<String>,
    /// Values declared here.
    pub values: BTreeMap<String, LocalValue<'a>>,
    /// Named imports.
    pub imports: Vec<Import>,
    /// `impl` blocks written in this module.
    pub impls: Vec<&'a syn::ItemImpl>,
    /// Macro invocations in item position (`lazy_static! { … }`), in source order.
    pub macros: Vec<&'a syn::ItemMacro>,
    /// Whether its `mod` item is plain `pub` (a crate root counts as public): with every
    /// ancestor public, its `pub` items can be named from outside the crate.
    pub public: bool,
    /// Set when the module itself depends on a `cfg` rsbuilder cannot decide (its `mod` item,
    /// or an enclosing one, is marked): it is in no parent's [`Module::children`], and its
    /// items are neither resolved nor derived.
    pub undecided: Option<Undecided>,
    /// Names of the items here that depend on an undecided `cfg`: they resolve to nothing.
    pub undecided_names: BTreeMap<String, Undecided>,
    /// The undecided items themselves, in source order.
    pub undecided_items: Vec<(&'a syn::Item, Undecided)>,
}

/// An item or module that depends on a `cfg` predicate rsbuilder cannot decide (see
/// [`crate::manifests::cfg`]).
#[derive(Debug, Clone)]
pub struct Undecided {
    /// The predicate, as written (`target_os = "linux"`).
    pub predicate: String,
    /// The file it is written in.
    pub file: PathBuf,
    /// Where.
    pub span: proc_macro2::Span,
}

impl Undecided {
    /// The diagnostic for `what` (``"type `Foo`"``), which depends on this predicate: a
    /// [`Cause::NeedsCompile`](crate::manifests::diag::Cause::NeedsCompile) at the predicate.
    pub fn diagnostic(&self, what: &str) -> crate::manifests::diag::Diagnostic {
        crate::manifests::diag::Diagnostic::at(
            &self.file,
            self.span,
            format!(
                "{what} depends on `cfg({})`, which rsbuilder cannot decide: it depends on the target, the build profile or RUSTFLAGS, not on the sources and Cargo.toml",
                self.predicate
            ),
        )
        .with_help(
            "rsbuilder decides `feature = \"...\"` (from Cargo.toml, --features, --all-features, --no-default-features), `test`, `doc` and `miri` (false), `true`/`false`, and all/any/not of them; keep the types that make CRDs free of other predicates, or let `--evaluate compile` build them",
        )
        .needs_compile()
    }
}

/// Where a path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A type declared in module `.0` under name `.1`.
    Local(ModId, String),
    /// A path outside the sources, normalised (`std::collections::BTreeMap`).
    External(String),
    /// A module of the sources.
    Module(ModId),
}

/// All modules found in a [`SourceSet`]. Files that no other file includes with `mod` are
/// crate roots of their own (a single types file, `lib.rs`, `main.rs`).
#[derive(Debug, Default)]
pub struct Crate<'a> {
    /// Every module; roots first in file order.
    pub modules: Vec<Module<'a>>,
    /// Bytes `include_str!` has read so far in this run, at most [`MAX_INCLUDED_BYTES`]: the
    /// run's counter ([`crate::manifests::crd::Settings::included`]), `None` when this crate
    /// is read outside a run (each `include_str!` is then bounded on its own).
    pub included: Option<&'a std::sync::atomic::AtomicU64>,
}

/// The most bytes `include_str!` reads in one run, all files together (16 MiB): a doc comment
/// becomes a description, and one CRD holds at most 1.5 MiB
/// ([`crate::manifests::crd::MAX_CRD_BYTES`]), so this is room for ten kinds whose
/// descriptions all come from files, and it bounds what the descriptions cost in memory
/// before the CRDs are measured.
pub const MAX_INCLUDED_BYTES: u64 = 16 << 20;

/// Crate names that may begin an external path without a `use`.
const EXTERN_CRATES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "k8s_openapi",
    "kube",
    "kube_core",
    "kube_derive",
    "schemars",
    "serde",
    "serde_json",
    "chrono",
    "jiff",
];

/// Names every module sees through the standard prelude.
const PRELUDE: &[(&str, &str)] = &[
    ("Option", "std::option::Option"),
    ("Some", "std::option::Option::Some"),
    ("Vec", "std::vec::Vec"),
    ("String", "std::string::String"),
    ("Box", "std::boxed::Box"),
    ("Result", "std::result::Result"),
    ("ToString", "std::string::ToString"),
    ("Default", "std::default::Default"),
];

const PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
    "u128", "usize", "f32", "f64",
];

impl<'a> Crate<'a> {
    /// Why a path that does not resolve in module `m` fails, when the reason is an undecided
    /// `cfg`: its first segment names an undecided item of `m`, or its last one an undecided
    /// item of the module its prefix leads to.
    pub fn undecided_cause(&self, m: ModId, path: &syn::Path) -> Option<&Undecided> {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(u) = segs
            .first()
            .and_then(|f| self.modules[m].undecided_names.get(f))
        {
            return Some(u);
        }
        let (last, prefix) = segs.split_last()?;
        if prefix.is_empty() {
            return None;
        }
        match self.resolve_path_from(m, prefix, false, 0)? {
            Resolved::Module(t) => self.modules[t].undecided_names.get(last),
            _ => None,
        }
    }

    /// The custom resources (`#[derive(CustomResource)]`, possibly inside an undecided
    /// `cfg_attr`) that depend on an undecided `cfg`: undecided items, and every custom
    /// resource of an undecided module. `(module, ident, attributes, why)`, in module order.
    pub fn undecided_custom_resources(
        &self,
    ) -> Vec<(ModId, &'a syn::Ident, &'a [syn::Attribute], &Undecided)> {
        let mut out = Vec::new();
        for (mid, module) in self.modules.iter().enumerate() {
            if let Some(u) = &module.undecided {
                for name in &module.type_order {
                    if let Some((ident, attrs)) = module.types.get(name).and_then(item_ident)
                        && derives_custom_resource(attrs)
                    {
                        out.push((mid, ident, attrs, u));
                    }
                }
            }
            for (item, u) in &module.undecided_items {
                let (ident, attrs) = match item {
                    syn::Item::Struct(s) => (&s.ident, &s.attrs[..]),
                    syn::Item::Enum(e) => (&e.ident, &e.attrs[..]),
                    _ => continue,
                };
                if derives_custom_resource(attrs) {
                    out.push((mid, ident, attrs, u));
                }
            }
        }
        out
    }

    /// The module that declares an item written in `file` at the given span start, used to
    /// find the module of a `#[derive(CustomResource)]` struct.
    pub fn module(&self, id: ModId) -> &Module<'a> {
        &self.modules[id]
    }

    /// Resolves a path in the type namespace as written in module `m`.
    pub fn resolve_type(&self, m: ModId, path: &syn::Path) -> Option<Resolved> {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve_segments(m, &segs, path.leading_colon.is_some(), 0)
    }

    /// Resolves segments in module `m`. The last segment is looked up in the type namespace.
    pub fn resolve_segments(
        &self,
        m: ModId,
        segs: &[String],
        leading_colon: bool,
        depth: usize,
    ) -> Option<Resolved> {
        if depth > 32 || segs.is_empty() {
            return None;
        }
        if leading_colon {
            return Some(Resolved::External(normalize_external(&segs.join("::"))));
        }
        let first = segs[0].as_str();
        let (start, rest) = match first {
            "crate" => (Resolved::Module(self.modules[m].root), &segs[1..]),
            "self" => (Resolved::Module(m), &segs[1..]),
            "super" => {
                let mut cur = m;
                let mut i = 0;
                while i < segs.len() && segs[i] == "super" {
                    cur = self.modules[cur].parent?;
                    i += 1;
                }
                (Resolved::Module(cur), &segs[i..])
            }
            _ => {
                let found = self.lookup_in_scope(m, first, segs.len() == 1, depth)?;
                (found, &segs[1..])
            }
        };
        let mut cur = start;
        for (i, seg) in rest.iter().enumerate() {
            let last = i + 1 == rest.len();
            cur = match cur {
                Resolved::External(p) => Resolved::External(format!("{p}::{seg}")),
                Resolved::Module(mid) => self.lookup_member(mid, seg, last, depth)?,
                Resolved::Local(..) => return None, // associated items are not types we model
            };
        }
        Some(match cur {
            Resolved::External(p) => Resolved::External(normalize_external(&p)),
            other => other,
        })
    }

    /// A name visible in module `m`: its items, child modules, imports, globs, the prelude,
    /// primitives and extern crates.
    fn lookup_in_scope(
        &self,
        m: ModId,
        name: &str,
        want_type: bool,
        depth: usize,
    ) -> Option<Resolved> {
        if let Some(r) = self.lookup_member(m, name, want_type, depth) {
            return Some(r);
        }
        if let Some((_, p)) = PRELUDE.iter().find(|(n, _)| *n == name) {
            return Some(Resolved::External((*p).to_string()));
        }
        if PRIMITIVES.contains(&name) {
            return Some(Resolved::External(name.to_string()));
        }
        if EXTERN_CRATES.contains(&name) || !want_type {
            // Any other first segment of a multi-segment path is taken as an extern crate.
            return Some(Resolved::External(name.to_string()));
        }
        None
    }

    /// A member of module `m` (declared items, child modules, re-exports, globs).
    fn lookup_member(
        &self,
        m: ModId,
        name: &str,
        want_type: bool,
        depth: usize,
    ) -> Option<Resolved> {
        let module = &self.modules[m];
        if want_type && module.types.contains_key(name) {
            return Some(Resolved::Local(m, name.to_string()));
        }
        if let Some(c) = module.children.get(name)
            && (!want_type || !module.types.contains_key(name))
        {
            return Some(Resolved::Module(*c));
        }
        if !want_type && module.types.contains_key(name) {
            return Some(Resolved::Local(m, name.to_string()));
        }
        for imp in &module.imports {
            if imp.name.as_deref() == Some(name)
                && let Some(r) = self.resolve_use(m, imp, depth + 1)
            {
                return Some(r);
            }
        }
        // An item that may or may not exist: whatever a glob or the prelude would give
        // instead could be wrong.
        if module.undecided_names.contains_key(name) {
            return None;
        }
        for imp in module.imports.iter().filter(|i| i.name.is_none()) {
            match self.resolve_use_prefix(m, imp, depth + 1) {
                Some(Resolved::Module(g)) if g != m => {
                    if let Some(r) = self.lookup_through_glob(g, name, want_type, depth + 1) {
                        return Some(r);
                    }
                }
                Some(Resolved::Local(gm, enum_name)) => {
                    // `use Enum::*` brings variants, not types.
                    let _ = (gm, enum_name);
                }
                Some(Resolved::External(p)) => {
                    let full = format!("{p}::{name}");
                    if super::known::is_known_external(&full) {
                        return Some(Resolved::External(full));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// [`Self::lookup_member`] of module `g`, reached through a glob import, unless `g` was
    /// already searched for `name` during the same outermost lookup. Modules that import each
    /// other's items by glob (`pub use self::a::*` in the parent, `use super::*` in the child,
    /// as many crates write) would otherwise be searched again along every path, which grows
    /// exponentially with the number of globs: a name found nowhere (every prelude name,
    /// `String`, is looked up here first) took hours on a crate with five such modules.
    /// Searching a module again finds nothing new: rustc's glob imports add no names through
    /// a cycle either.
    fn lookup_through_glob(
        &self,
        g: ModId,
        name: &str,
        want_type: bool,
        depth: usize,
    ) -> Option<Resolved> {
        /// Clears the set when the outermost glob lookup ends, panicking or not.
        struct Outermost(bool);
        impl Drop for Outermost {
            fn drop(&mut self) {
                if self.0 {
                    GLOB_SEEN.with(|s| *s.borrow_mut() = None);
                }
            }
        }
        let (first, fresh) = GLOB_SEEN.with(|s| {
            let mut s = s.borrow_mut();
            let first = s.is_none();
            let fresh =
                s.get_or_insert_with(Default::default)
                    .insert((g, name.to_string(), want_type));
            (first, fresh)
        });
        let _outermost = Outermost(first);
        if fresh {
            self.lookup_member(g, name, want_type, depth)
        } else {
            None
        }
    }

    /// Resolves a named `use` binding declared in module `m`.
    fn resolve_use(&self, m: ModId, imp: &Import, depth: usize) -> Option<Resolved> {
        if imp.path.last().map(String::as_str) == Some("self") {
            let p = &imp.path[..imp.path.len() - 1];
            return self.resolve_use_path(m, p, imp.leading_colon, false, depth);
        }
        self.resolve_use_path(m, &imp.path, imp.leading_colon, true, depth)
    }

    /// Resolves the module (or external prefix) a glob import reads from.
    fn resolve_use_prefix(&self, m: ModId, imp: &Import, depth: usize) -> Option<Resolved> {
        self.resolve_use_path(m, &imp.path, imp.leading_colon, false, depth)
    }

    fn resolve_use_path(
        &self,
        m: ModId,
        segs: &[String],
        leading_colon: bool,
        want_type: bool,
        depth: usize,
    ) -> Option<Resolved> {
        if depth > 32 || segs.is_empty() {
            return None;
        }
        if leading_colon {
            return Some(Resolved::External(normalize_external(&segs.join("::"))));
        }
        let first = segs[0].as_str();
        if matches!(first, "crate" | "self" | "super") {
            return self.resolve_path_from(m, segs, want_type, depth);
        }
        // Uniform paths: a local name first, else an extern crate.
        let module = &self.modules[m];
        if module.children.contains_key(first)
            || module.types.contains_key(first)
            || module.imports.iter().any(|i| {
                i.name.as_deref() == Some(first)
                    && i.path.first().map(String::as_str) != Some(first)
            })
        {
            return self.resolve_path_from(m, segs, want_type, depth);
        }
        Some(Resolved::External(normalize_external(&segs.join("::"))))
    }

    fn resolve_path_from(
        &self,
        m: ModId,
        segs: &[String],
        want_type: bool,
        depth: usize,
    ) -> Option<Resolved> {
        if want_type {
            self.resolve_segments(m, segs, false, depth + 1)
        } else {
            // Resolve everything as modules/types without requiring the last to be a type.
            let (start, rest) = match segs[0].as_str() {
                "crate" => (Resolved::Module(self.modules[m].root), &segs[1..]),
                "self" => (Resolved::Module(m), &segs[1..]),
                "super" => {
                    let mut cur = m;
                    let mut i = 0;
                    while i < segs.len() && segs[i] == "super" {
                        cur = self.modules[cur].parent?;
                        i += 1;
                    }
                    (Resolved::Module(cur), &segs[i..])
                }
                first => (self.lookup_member(m, first, false, depth + 1)?, &segs[1..]),
            };
            let mut cur = start;
            for seg in rest {
                cur = match cur {
                    Resolved::External(p) => Resolved::External(format!("{p}::{seg}")),
                    Resolved::Module(mid) => self.lookup_member(mid, seg, false, depth + 1)?,
                    Resolved::Local(..) => return None,
                };
            }
            Some(match cur {
                Resolved::External(p) => Resolved::External(normalize_external(&p)),
                other => other,
            })
        }
    }

    /// Where a path written in module `m` leads without requiring a type at its end: a module of
    /// the sources, a local item, or an external path. For paths whose last segment names
    /// something rsbuilder does not model as an item (the root type kube-derive generates).
    pub fn resolve_prefix(
        &self,
        m: ModId,
        segs: &[String],
        leading_colon: bool,
    ) -> Option<Resolved> {
        if segs.is_empty() {
            return Some(Resolved::Module(m));
        }
        self.resolve_use_path(m, segs, leading_colon, false, 0)
    }

    /// Resolves a path in the value namespace (functions, consts, statics) as written in `m`.
    pub fn resolve_value(&self, m: ModId, path: &syn::Path) -> Option<(ModId, LocalValue<'a>)> {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let (last, prefix) = segs.split_last()?;
        let module = if prefix.is_empty() {
            if let Some(v) = self.modules[m].values.get(last) {
                return Some((m, *v));
            }
            if self.modules[m].undecided_names.contains_key(last) {
                return None;
            }
            // An imported function or const.
            for imp in &self.modules[m].imports {
                if imp.name.as_deref() == Some(last.as_str()) {
                    let (l, p) = imp.path.split_last()?;
                    let target = if p.is_empty() {
                        m
                    } else {
                        match self.resolve_use_path(m, p, imp.leading_colon, false, 0)? {
                            Resolved::Module(t) => t,
                            _ => continue,
                        }
                    };
                    if let Some(v) = self.modules[target].values.get(l) {
                        return Some((target, *v));
                    }
                }
            }
            for imp in self.modules[m].imports.iter().filter(|i| i.name.is_none()) {
                if let Some(Resolved::Module(g)) = self.resolve_use_prefix(m, imp, 0)
                    && let Some(v) = self.modules[g].values.get(last)
                {
                    return Some((g, *v));
                }
            }
            return None;
        } else {
            match self.resolve_path_from(m, prefix, false, 0)? {
                Resolved::Module(t) => t,
                Resolved::Local(tm, ty) => return self.associated_fn(tm, &ty, last),
                Resolved::External(_) => return None,
            }
        };
        self.modules[module].values.get(last).map(|v| (module, *v))
    }

    /// The associated function `name` of an inherent `impl` of the local type `ty`.
    pub fn associated_fn(
        &self,
        tm: ModId,
        ty: &str,
        name: &str,
    ) -> Option<(ModId, LocalValue<'a>)> {
        for (im, imp) in self.impls() {
            if imp.trait_.is_some() {
                continue;
            }
            let syn::Type::Path(tp) = &*imp.self_ty else {
                continue;
            };
            if self.resolve_type(im, &tp.path) != Some(Resolved::Local(tm, ty.to_string())) {
                continue;
            }
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item
                    && f.sig.ident == name
                {
                    return Some((im, LocalValue::Method(f)));
                }
            }
        }
        None
    }

    /// The `impl <trait_name> for <ty>` block of the local type `ty` (defined in module
    /// `tm`), if the sources hold one: the trait is matched by its last path segment
    /// (`JsonSchema`, `schemars::JsonSchema`), the type through name resolution.
    pub fn trait_impl(
        &self,
        tm: ModId,
        ty: &str,
        trait_name: &str,
    ) -> Option<(ModId, &'a syn::ItemImpl)> {
        self.impls().find(|(im, imp)| {
            let Some((_, path, _)) = &imp.trait_ else {
                return false;
            };
            if path.segments.last().is_none_or(|s| s.ident != trait_name) {
                return false;
            }
            let syn::Type::Path(tp) = &*imp.self_ty else {
                return false;
            };
            self.resolve_type(*im, &tp.path) == Some(Resolved::Local(tm, ty.to_string()))
        })
    }

    /// The type item a [`Resolved::Local`] names.
    /// The shortest path from the crate root by which outside code names `name` of module
    /// `target` (a `pub` item there, or one kube-derive generates beside a `pub` spec): through
    /// `pub` modules and `pub use` re-exports of modules and of the name itself, globs
    /// included, as rustc resolves them. `None`: no such path.
    pub fn public_path(&self, target: ModId, name: &str) -> Option<Vec<String>> {
        let root = self.modules[target].root;
        let mut seen = std::collections::HashSet::new();
        let mut queue = std::collections::VecDeque::from([(root, Vec::<String>::new())]);
        let with = |path: &[String], last: &str| {
            let mut p = path.to_vec();
            p.push(last.to_string());
            p
        };
        while let Some((m, path)) = queue.pop_front() {
            if !seen.insert(m) {
                continue;
            }
            if m == target {
                return Some(with(&path, name));
            }
            let module = &self.modules[m];
            for imp in module.imports.iter().filter(|i| i.public) {
                match &imp.name {
                    None => {
                        if let Some(Resolved::Module(t)) = self.resolve_use_prefix(m, imp, 0) {
                            queue.push_back((t, path.clone()));
                        }
                    }
                    Some(bound) => {
                        if let Some(Resolved::Module(t)) = self.resolve_use(m, imp, 0) {
                            queue.push_back((t, with(&path, bound)));
                            continue;
                        }
                        let Some((last, prefix)) = imp.path.split_last() else {
                            continue;
                        };
                        let parent = self.resolve_use_path(m, prefix, imp.leading_colon, false, 0);
                        if last == name
                            && matches!(parent, Some(Resolved::Module(t)) if t == target)
                        {
                            return Some(with(&path, bound));
                        }
                    }
                }
            }
            for (child, &c) in &module.children {
                if self.modules[c].public {
                    queue.push_back((c, with(&path, child)));
                }
            }
        }
        None
    }

    pub fn item(&self, m: ModId, name: &str) -> Option<LocalItem<'a>> {
        self.modules[m].types.get(name).copied()
    }

    /// The module whose items include the item with this identifier span, searched by file
    /// and identity.
    pub fn module_of_struct(&self, s: &syn::ItemStruct) -> Option<ModId> {
        self.modules.iter().position(|m| {
            m.types
                .get(&s.ident.to_string())
                .is_some_and(|i| matches!(i, LocalItem::Struct(x) if std::ptr::eq(*x, s)))
        })
    }

    /// Every `impl` block of the sources with its module.
    pub fn impls(&self) -> impl Iterator<Item = (ModId, &'a syn::ItemImpl)> + '_ {
        self.modules
            .iter()
            .enumerate()
            .filter(|(_, m)| m.undecided.is_none())
            .flat_map(|(i, m)| m.impls.iter().map(move |x| (i, *x)))
    }
}

fn item_ident<'a>(item: &LocalItem<'a>) -> Option<(&'a syn::Ident, &'a [syn::Attribute])> {
    match item {
        LocalItem::Struct(s) => Some((&s.ident, &s.attrs[..])),
        LocalItem::Enum(e) => Some((&e.ident, &e.attrs[..])),
        LocalItem::Alias(_) => None,
    }
}

/// Whether `#[derive(CustomResource)]` is among the attributes, or inside a `cfg_attr` left
/// undecided.
fn derives_custom_resource(attrs: &[syn::Attribute]) -> bool {
    super::attrs::derives(attrs)
        .iter()
        .any(|d| d == "CustomResource")
        || attrs.iter().any(|a| {
            a.path().is_ident("cfg_attr")
                && quote::ToTokens::to_token_stream(a)
                    .into_iter()
                    .any(|t| contains_ident(t, "CustomResource"))
        })
}

fn contains_ident(t: proc_macro2::TokenTree, name: &str) -> bool {
    match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| contains_ident(t, name)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::manifests::source::SourceSet;

    fn set(files: &[(&str, &str)]) -> SourceSet {
        SourceSet {
            files: files
                .iter()
                .map(|(p, t)| SourceSet::parse_text(Path::new(p), t.to_string()).unwrap())
                .collect(),
        }
    }

    fn ty_path(s: &str) -> syn::Path {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn resolves_uses_modules_and_reexports() {
        let s = set(&[
            (
                "src/lib.rs",
                "pub mod api; mod util { pub struct Helper; }\nuse std::collections::{BTreeMap as Map, self};\nuse k8s_openapi::api::core::v1 as corev1;\npub use api::v1::Thing as Reexported;",
            ),
            ("src/api/mod.rs", "pub mod v1;"),
            (
                "src/api/v1.rs",
                "use super::super::util::*;\nuse crate::Reexported as R2;\npub struct Thing;\ntype Alias = Thing;",
            ),
        ]);
        let c = Crate::build(&s);
        assert_eq!(
            c.modules.len(),
            4,
            "{:#?}",
            c.modules.iter().map(|m| &m.path).collect::<Vec<_>>()
        );
        let root = 0;
        assert_eq!(
            c.resolve_type(root, &ty_path("Map")),
            Some(Resolved::External("std::collections::BTreeMap".into()))
        );
        assert_eq!(
            c.resolve_type(root, &ty_path("collections::HashMap")),
            Some(Resolved::External("std::collections::HashMap".into()))
        );
        assert_eq!(
            c.resolve_type(root, &ty_path("corev1::Pod")),
            Some(Resolved::External("k8s_openapi::api::core::v1::Pod".into()))
        );
        let v1 = c
            .modules
            .iter()
            .position(|m| m.path == ["api", "v1"])
            .unwrap();
        assert_eq!(
            c.resolve_type(root, &ty_path("Reexported")),
            Some(Resolved::Local(v1, "Thing".into()))
        );
        let util = c.modules.iter().position(|m| m.path == ["util"]).unwrap();
        assert_eq!(
            c.resolve_type(v1, &ty_path("Helper")),
            Some(Resolved::Local(util, "Helper".into()))
        );
        assert_eq!(
            c.resolve_type(v1, &ty_path("R2")),
            Some(Resolved::Local(v1, "Thing".into()))
        );
        assert_eq!(
            c.resolve_type(v1, &ty_path("crate::api::v1::Alias")),
            Some(Resolved::Local(v1, "Alias".into()))
        );
        assert_eq!(
            c.resolve_type(v1, &ty_path("Option")),
            Some(Resolved::External("std::option::Option".into()))
        );
        assert_eq!(c.resolve_type(v1, &ty_path("Nope")), None);
    }

    /// The shape of linkerd's k8s-gateway-api: the root re-exports every module by glob and
    /// every module imports the root by glob. Each module is searched once per name: before,
    /// a name found nowhere (`String`, before the prelude answers) was searched along every
    /// path through the globs and this test did not finish.
    #[test]
    fn mutual_glob_imports_are_searched_once() {
        let mut files = vec![(
            "src/lib.rs".to_string(),
            "mod a; mod b; mod c; mod d; mod e; mod f;\npub use self::{a::*, b::*, c::*, d::*, e::*, f::*};".to_string(),
        )];
        for m in ["a", "b", "c", "d", "e", "f"] {
            files.push((
                format!("src/{m}.rs"),
                format!("use super::*;\nuse crate::*;\npub struct In{m};"),
            ));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let sources = set(&files);
        let c = Crate::build(&sources);
        let a = c.modules.iter().position(|m| m.path == ["a"]).unwrap();
        let f = c.modules.iter().position(|m| m.path == ["f"]).unwrap();
        assert_eq!(
            c.resolve_type(a, &ty_path("String")),
            Some(Resolved::External("std::string::String".into()))
        );
        assert_eq!(
            c.resolve_type(a, &ty_path("Inf")),
            Some(Resolved::Local(f, "Inf".into()))
        );
        assert_eq!(c.resolve_type(a, &ty_path("Nope")), None);
    }
}
