//! The generator's model of one type file: the items, fields, attributes and default values a
//! kube-rs user writes, kept as data so that a file can be rendered, garbage-collected and
//! shrunk (see `shrink.rs`) without re-parsing Rust.
//!
//! Rendering is total: every model renders to Rust that compiles with kube-derive. Values
//! (`Val`) are rendered against the type they are for, so a struct literal whose struct lost a
//! field while shrinking still names exactly the struct's current fields.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// One generated type file: one kind (possibly in several versions, one module each).
#[derive(Clone, Debug)]
pub struct Case {
    /// File stem: `s<seed>_k<index>`.
    pub name: String,
    /// Seed and index the case came from (its header says so, for reproduction).
    pub seed: u64,
    pub index: u64,
    /// One module per version (`name: None` for a single version at the top of the file).
    pub modules: Vec<Module>,
    /// How the file's text is spelled on disk (the lexical layer).
    pub spelling: Spelling,
}

/// Spellings of a file that rustc reads as the plain one: line endings, a byte order mark,
/// identifiers in decomposed form. Applied to the whole rendered file, so string literals and
/// comments are decomposed too (rustc keeps literals as written and only composes
/// identifiers again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spelling {
    /// Every line ends with `\r\n`.
    pub crlf: bool,
    /// The file opens with U+FEFF.
    pub bom: bool,
    /// The text in Unicode NFD.
    pub nfd: bool,
}

impl Spelling {
    /// `text` (LF, composed, no byte order mark) spelled this way.
    pub fn apply(self, text: String) -> String {
        use unicode_normalization::UnicodeNormalization;
        let text = if self.nfd { text.nfd().collect() } else { text };
        let text = if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        };
        if self.bom {
            format!("\u{feff}{text}")
        } else {
            text
        }
    }
}

/// A module of a case: the items of one version of the kind.
#[derive(Clone, Debug)]
pub struct Module {
    pub name: Option<String>,
    pub items: Vec<Item>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Struct(Struct),
    Enum(Enum),
    /// `fn name() -> ty { body }`, or an associated fn in `impl Owner { ... }`.
    Fn(DefaultFn),
    /// `const NAME: ty = value;`
    Const(Const),
}

impl Item {
    pub fn name(&self) -> &str {
        match self {
            Item::Struct(s) => &s.name,
            Item::Enum(e) => &e.name,
            Item::Fn(f) => &f.name,
            Item::Const(c) => &c.name,
        }
    }
}

/// An attribute (or one `#[kube(...)]` argument) as written, with the items it names, so the
/// shrinker keeps what it references and drops what nothing references.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub text: String,
    pub refs: Vec<String>,
}

impl Attr {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            refs: Vec::new(),
        }
    }
    pub fn with_ref(mut self, name: impl Into<String>) -> Self {
        self.refs.push(name.into());
        self
    }
}

/// Doc comment lines, already spelled (`/// text` or `#[doc = "text"]`).
pub type Doc = Vec<String>;

#[derive(Clone, Debug, Default)]
pub struct Derives {
    /// `Default` is derived.
    pub default: bool,
    /// `KubeSchema` instead of `JsonSchema` (needed for `#[x_kube]`; structs only).
    pub kube_schema: bool,
    /// `PartialEq, Eq, Hash, PartialOrd, Ord` (set elements, map keys).
    pub ord: bool,
}

#[derive(Clone, Debug)]
pub struct Struct {
    pub name: String,
    pub doc: Doc,
    pub derives: Derives,
    /// `Some((group, version, kind))` for a `#[derive(CustomResource)]` spec.
    pub kube_core: Option<String>,
    /// The other `#[kube(...)]` arguments.
    pub kube: Vec<Attr>,
    /// Container attributes (`#[serde(...)]`, `#[schemars(...)]`, `#[x_kube(...)]`).
    pub attrs: Vec<Attr>,
    pub body: Body,
    /// `impl Default for Name { fn default() -> Self { value } }`.
    pub hand_default: Option<Val>,
}

impl Struct {
    /// A struct with the required derives only: no attributes, docs or `Default`.
    pub fn plain(name: impl Into<String>, body: Body) -> Self {
        Struct {
            name: name.into(),
            doc: Vec::new(),
            derives: Derives::default(),
            kube_core: None,
            kube: Vec::new(),
            attrs: Vec::new(),
            body,
            hand_default: None,
        }
    }
}

impl Field {
    /// A field without attributes or docs (`name` empty for a newtype's field).
    pub fn plain(name: impl Into<String>, ty: Ty) -> Self {
        Field {
            name: name.into(),
            ty,
            doc: Vec::new(),
            attrs: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Body {
    Named(Vec<Field>),
    /// `struct X(T);` / variant `X(T)`: the one field's attributes are kept.
    Newtype(Box<Field>),
    Tuple(Vec<Ty>),
    Unit,
}

#[derive(Clone, Debug)]
pub struct Field {
    /// Rust name (may be a raw identifier, `r#type`); empty for a newtype's field.
    pub name: String,
    pub ty: Ty,
    pub doc: Doc,
    pub attrs: Vec<Attr>,
}

#[derive(Clone, Debug)]
pub struct Enum {
    pub name: String,
    pub doc: Doc,
    pub derives: Derives,
    pub attrs: Vec<Attr>,
    pub variants: Vec<Variant>,
    /// With `derives.default`: the `#[default]` (unit) variant.
    pub default_variant: Option<String>,
    pub hand_default: Option<Val>,
}

#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub doc: Doc,
    pub attrs: Vec<Attr>,
    pub body: Body,
}

#[derive(Clone, Debug)]
pub struct DefaultFn {
    pub name: String,
    /// `Some(type)`: an associated fn of that user type, called as `Type::name`.
    pub owner: Option<String>,
    pub ret: Ty,
    pub body: Val,
    /// Spelled `Self { .. }` / `Self::default()` inside the impl.
    pub self_spelling: bool,
}

#[derive(Clone, Debug)]
pub struct Const {
    pub name: String,
    pub ty: Ty,
    pub value: String,
}

/// A Rust type of the supported space.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// A std type without parameters, as spelled (`String`, `u16`, `std::net::IpAddr`, ...).
    Leaf(&'static str),
    Option(Box<Ty>),
    Vec(Box<Ty>),
    VecDeque(Box<Ty>),
    Array(Box<Ty>, usize),
    /// `BTreeMap` (false) or `HashMap` (true).
    Map(bool, Box<Ty>, Box<Ty>),
    /// `BTreeSet` (false) or `HashSet` (true).
    Set(bool, Box<Ty>),
    /// `Box`, `Arc` or `Rc`.
    Ptr(&'static str, Box<Ty>),
    Tuple(Vec<Ty>),
    /// `serde_json::Value`.
    Json,
    /// `serde_json::Map<String, serde_json::Value>`.
    JsonMap,
    /// A k8s-openapi type: full path (without `k8s_openapi::`) and how it is spelled
    /// (0: full path, 1: imported by name, 2: through a module alias).
    K8s(String, u8),
    /// A type of the case, by name.
    User(String),
}

/// A value for a default, rendered against its type.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// Rust expression text for a leaf type (`5`, `"a".to_string()`, `C_1`).
    Expr(String),
    /// The simplest value of the type (see [`Renderer::zero`]).
    Zero,
    /// `Default::default()`.
    DefaultCall,
    Some(Box<Val>),
    None,
    Seq(Vec<Val>),
    Map(Vec<(String, Val)>),
    /// A struct literal; `update`: `Some(true)` `..Self::default()`, `Some(false)`
    /// `..Default::default()`.
    Struct(Vec<(String, Val)>, Option<bool>),
    /// An enum variant: name and payload (unit when `None`).
    Variant(String, Option<Box<Val>>),
    /// A call of a default fn of the case (`name()` or `Owner::name()`).
    Call(String),
    /// `Box::new(v)` / `Arc::new(v)` / `Rc::new(v)`.
    Ptr(Box<Val>),
    Tuple(Vec<Val>),
}

impl Module {
    pub fn find(&self, name: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.name() == name)
    }
}

/// The names a value refers to.
fn val_refs(v: &Val, out: &mut Vec<String>) {
    match v {
        Val::Call(n) => out.push(n.clone()),
        Val::Expr(e) => {
            // Constants are named `C_<n>` (see grammar.rs).
            for tok in e.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if tok.starts_with("C_") {
                    out.push(tok.to_string());
                }
            }
        }
        Val::Some(x) | Val::Ptr(x) => val_refs(x, out),
        Val::Variant(_, Some(x)) => val_refs(x, out),
        Val::Seq(xs) | Val::Tuple(xs) => xs.iter().for_each(|x| val_refs(x, out)),
        Val::Map(kv) | Val::Struct(kv, _) => kv.iter().for_each(|(_, x)| val_refs(x, out)),
        _ => {}
    }
}

fn ty_refs(t: &Ty, out: &mut Vec<String>) {
    match t {
        Ty::User(n) => out.push(n.clone()),
        Ty::Option(x) | Ty::Vec(x) | Ty::VecDeque(x) | Ty::Array(x, _) | Ty::Set(_, x) => {
            ty_refs(x, out)
        }
        Ty::Ptr(_, x) => ty_refs(x, out),
        Ty::Map(_, k, v) => {
            ty_refs(k, out);
            ty_refs(v, out);
        }
        Ty::Tuple(xs) => xs.iter().for_each(|x| ty_refs(x, out)),
        _ => {}
    }
}

fn body_refs(b: &Body, out: &mut Vec<String>) {
    let field = |f: &Field, out: &mut Vec<String>| {
        ty_refs(&f.ty, out);
        f.attrs
            .iter()
            .for_each(|a| out.extend(a.refs.iter().cloned()));
    };
    match b {
        Body::Named(fs) => fs.iter().for_each(|f| field(f, out)),
        Body::Newtype(f) => field(f, out),
        Body::Tuple(ts) => ts.iter().for_each(|t| ty_refs(t, out)),
        Body::Unit => {}
    }
}

/// The names an item refers to (types, functions, constants).
pub fn item_refs(item: &Item) -> Vec<String> {
    let mut out = Vec::new();
    match item {
        Item::Struct(s) => {
            s.kube
                .iter()
                .chain(&s.attrs)
                .for_each(|a| out.extend(a.refs.iter().cloned()));
            body_refs(&s.body, &mut out);
            if let Some(v) = &s.hand_default {
                val_refs(v, &mut out);
            }
        }
        Item::Enum(e) => {
            e.attrs
                .iter()
                .for_each(|a| out.extend(a.refs.iter().cloned()));
            for v in &e.variants {
                v.attrs
                    .iter()
                    .for_each(|a| out.extend(a.refs.iter().cloned()));
                body_refs(&v.body, &mut out);
            }
            if let Some(v) = &e.hand_default {
                val_refs(v, &mut out);
            }
        }
        Item::Fn(f) => {
            ty_refs(&f.ret, &mut out);
            val_refs(&f.body, &mut out);
            out.extend(f.owner.iter().cloned());
        }
        Item::Const(c) => ty_refs(&c.ty, &mut out),
    }
    out
}

/// Removes the items of each module that no custom resource reaches.
pub fn collect_garbage(case: &mut Case) {
    for m in &mut case.modules {
        let mut live: BTreeSet<String> = BTreeSet::new();
        let mut todo: Vec<String> = m
            .items
            .iter()
            .filter(|i| matches!(i, Item::Struct(s) if s.kube_core.is_some()))
            .map(|i| i.name().to_string())
            .collect();
        // Associated default fns live with their owner's impl and are reached through
        // attributes; an owner is reached through its fns as well.
        while let Some(n) = todo.pop() {
            if !live.insert(n.clone()) {
                continue;
            }
            if let Some(item) = m.find(&n) {
                todo.extend(item_refs(item));
            }
        }
        m.items.retain(|i| live.contains(i.name()));
    }
}

/// Renders the case as the type file a user would write.
pub fn render(case: &Case) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "// Generated by tests/difftest (seed {}, kind {}): compared with kube-derive's crd().",
        case.seed, case.index
    )
    .unwrap();
    let top = case.modules.len() == 1 && case.modules[0].name.is_none();
    out.push_str(PRELUDE);
    for m in &case.modules {
        let r = Renderer { module: m };
        let mut body = String::new();
        r.k8s_uses(&mut body);
        for item in &m.items {
            body.push('\n');
            r.item(item, &mut body);
        }
        if top {
            out.push_str(&body);
        } else {
            let name = m.name.as_deref().unwrap_or("v1");
            writeln!(out, "\npub mod {name} {{\n    use super::*;").unwrap();
            for line in body.lines() {
                if line.is_empty() {
                    out.push('\n');
                } else {
                    writeln!(out, "    {line}").unwrap();
                }
            }
            out.push_str("}\n");
        }
    }
    case.spelling.apply(out)
}

const PRELUDE: &str = "use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
";

struct Renderer<'a> {
    module: &'a Module,
}

/// The last segment of a path.
fn last(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// The module alias of a k8s-openapi module path (`api::core::v1` → `core_v1`).
fn alias(module: &str) -> String {
    let segs: Vec<&str> = module.split("::").collect();
    let n = segs.len();
    if n >= 2 {
        format!("{}_{}", segs[n - 2], segs[n - 1]).replace('-', "_")
    } else {
        module.replace("::", "_")
    }
}

impl Renderer<'_> {
    /// The k8s-openapi types used in the module, by path and spelling.
    fn k8s_types(&self) -> Vec<(String, u8)> {
        fn walk(t: &Ty, out: &mut Vec<(String, u8)>) {
            match t {
                Ty::K8s(p, s) => out.push((p.clone(), *s)),
                Ty::Option(x) | Ty::Vec(x) | Ty::VecDeque(x) | Ty::Array(x, _) | Ty::Set(_, x) => {
                    walk(x, out)
                }
                Ty::Ptr(_, x) => walk(x, out),
                Ty::Map(_, k, v) => {
                    walk(k, out);
                    walk(v, out);
                }
                Ty::Tuple(xs) => xs.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        fn body(b: &Body, out: &mut Vec<(String, u8)>) {
            match b {
                Body::Named(fs) => fs.iter().for_each(|f| walk(&f.ty, out)),
                Body::Newtype(f) => walk(&f.ty, out),
                Body::Tuple(ts) => ts.iter().for_each(|t| walk(t, out)),
                Body::Unit => {}
            }
        }
        let mut out = Vec::new();
        for item in &self.module.items {
            match item {
                Item::Struct(s) => body(&s.body, &mut out),
                Item::Enum(e) => e.variants.iter().for_each(|v| body(&v.body, &mut out)),
                Item::Fn(f) => walk(&f.ret, &mut out),
                Item::Const(c) => walk(&c.ty, &mut out),
            }
        }
        out
    }

    /// `use` lines for k8s-openapi types spelled by name or through a module alias. A name
    /// imported twice from different modules is spelled in full instead (see `k8s_name`).
    fn k8s_uses(&self, out: &mut String) {
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        let mut aliases: BTreeSet<String> = BTreeSet::new();
        for (path, spelling) in self.k8s_types() {
            match spelling {
                1 => {
                    names.entry(last(&path).to_string()).or_insert(path);
                }
                2 => {
                    let (module, _) = path.rsplit_once("::").unwrap();
                    aliases.insert(module.to_string());
                }
                _ => {}
            }
        }
        for (name, path) in &names {
            if self.module.find(name).is_none() {
                writeln!(out, "use k8s_openapi::{path};").unwrap();
            }
        }
        for module in &aliases {
            writeln!(out, "use k8s_openapi::{module} as {};", alias(module)).unwrap();
        }
    }

    fn k8s_name(&self, path: &str, spelling: u8) -> String {
        match spelling {
            1 => {
                // The first path imported under this name wins (same rule as k8s_uses).
                let first = self
                    .k8s_types()
                    .into_iter()
                    .find(|(p, s)| *s == 1 && last(p) == last(path))
                    .map(|(p, _)| p);
                if first.as_deref() == Some(path) && self.module.find(last(path)).is_none() {
                    last(path).to_string()
                } else {
                    format!("k8s_openapi::{path}")
                }
            }
            2 => {
                let (module, name) = path.rsplit_once("::").unwrap();
                format!("{}::{name}", alias(module))
            }
            _ => format!("k8s_openapi::{path}"),
        }
    }

    pub fn ty(&self, t: &Ty) -> String {
        match t {
            Ty::Leaf(s) => s.to_string(),
            Ty::Option(x) => format!("Option<{}>", self.ty(x)),
            Ty::Vec(x) => format!("Vec<{}>", self.ty(x)),
            Ty::VecDeque(x) => format!("VecDeque<{}>", self.ty(x)),
            Ty::Array(x, n) => format!("[{}; {n}]", self.ty(x)),
            Ty::Map(h, k, v) => format!(
                "{}<{}, {}>",
                if *h { "HashMap" } else { "BTreeMap" },
                self.ty(k),
                self.ty(v)
            ),
            Ty::Set(h, x) => format!(
                "{}<{}>",
                if *h { "HashSet" } else { "BTreeSet" },
                self.ty(x)
            ),
            Ty::Ptr(p, x) => format!("{p}<{}>", self.ty(x)),
            Ty::Tuple(xs) => format!(
                "({})",
                xs.iter().map(|x| self.ty(x)).collect::<Vec<_>>().join(", ")
            ),
            Ty::Json => "serde_json::Value".into(),
            Ty::JsonMap => "serde_json::Map<String, serde_json::Value>".into(),
            Ty::K8s(p, s) => self.k8s_name(p, *s),
            Ty::User(n) => n.clone(),
        }
    }

    fn derives(&self, d: &Derives, cr: bool, is_struct: bool) -> String {
        let mut v: Vec<&str> = Vec::new();
        if cr {
            v.push("CustomResource");
        }
        v.extend(["Serialize", "Deserialize", "Clone", "Debug"]);
        v.push(if d.kube_schema && is_struct {
            "KubeSchema"
        } else {
            "JsonSchema"
        });
        if d.default {
            v.push("Default");
        }
        if d.ord {
            v.extend(["PartialEq", "Eq", "Hash", "PartialOrd", "Ord"]);
        }
        format!("#[derive({})]", v.join(", "))
    }

    fn item(&self, item: &Item, out: &mut String) {
        match item {
            Item::Struct(s) => self.strukt(s, out),
            Item::Enum(e) => self.enumm(e, out),
            Item::Fn(f) => {
                let body = self.val_in(&f.body, &f.ret, f.owner.as_deref(), f.self_spelling);
                let ret = if f.self_spelling
                    && f.owner
                        .as_ref()
                        .is_some_and(|o| f.ret == Ty::User(o.clone()))
                {
                    "Self".to_string()
                } else {
                    self.ty(&f.ret)
                };
                match &f.owner {
                    Some(owner) => writeln!(
                        out,
                        "impl {owner} {{\n    pub fn {}() -> {ret} {{\n        {body}\n    }}\n}}",
                        f.name
                    )
                    .unwrap(),
                    None => writeln!(out, "fn {}() -> {ret} {{\n    {body}\n}}", f.name).unwrap(),
                }
            }
            Item::Const(c) => {
                writeln!(out, "const {}: {} = {};", c.name, self.ty(&c.ty), c.value).unwrap()
            }
        }
    }

    fn doc(doc: &Doc, indent: &str, out: &mut String) {
        for line in doc {
            writeln!(out, "{indent}{line}").unwrap();
        }
    }

    fn attrs(attrs: &[Attr], indent: &str, out: &mut String) {
        for a in attrs {
            writeln!(out, "{indent}{}", a.text).unwrap();
        }
    }

    fn fields(&self, fields: &[Field], indent: &str, vis: &str, out: &mut String) {
        for f in fields {
            Self::doc(&f.doc, indent, out);
            Self::attrs(&f.attrs, indent, out);
            writeln!(out, "{indent}{vis}{}: {},", f.name, self.ty(&f.ty)).unwrap();
        }
    }

    fn body(&self, b: &Body, vis: &str, indent: &str, out: &mut String) {
        match b {
            Body::Named(fs) => {
                out.push_str(" {\n");
                self.fields(fs, &format!("{indent}    "), vis, out);
                write!(out, "{indent}}}").unwrap();
            }
            Body::Newtype(f) => {
                out.push('(');
                for a in &f.attrs {
                    write!(out, "{} ", a.text).unwrap();
                }
                write!(out, "{vis}{})", self.ty(&f.ty)).unwrap();
            }
            Body::Tuple(ts) => {
                let parts: Vec<String> =
                    ts.iter().map(|t| format!("{vis}{}", self.ty(t))).collect();
                write!(out, "({})", parts.join(", ")).unwrap();
            }
            Body::Unit => {}
        }
    }

    fn strukt(&self, s: &Struct, out: &mut String) {
        Self::doc(&s.doc, "", out);
        writeln!(
            out,
            "{}",
            self.derives(&s.derives, s.kube_core.is_some(), true)
        )
        .unwrap();
        if let Some(core) = &s.kube_core {
            let mut args = vec![core.clone()];
            args.extend(s.kube.iter().map(|a| a.text.clone()));
            writeln!(out, "#[kube({})]", args.join(", ")).unwrap();
        }
        Self::attrs(&s.attrs, "", out);
        write!(out, "pub struct {}", s.name).unwrap();
        self.body(&s.body, "pub ", "", out);
        if !matches!(s.body, Body::Named(_)) {
            out.push(';');
        }
        out.push('\n');
        if let Some(v) = &s.hand_default {
            writeln!(
                out,
                "\nimpl Default for {} {{\n    fn default() -> Self {{\n        {}\n    }}\n}}",
                s.name,
                self.default_impl(v, &s.name)
            )
            .unwrap();
        }
    }

    fn enumm(&self, e: &Enum, out: &mut String) {
        Self::doc(&e.doc, "", out);
        writeln!(out, "{}", self.derives(&e.derives, false, false)).unwrap();
        Self::attrs(&e.attrs, "", out);
        writeln!(out, "pub enum {} {{", e.name).unwrap();
        for v in &e.variants {
            Self::doc(&v.doc, "    ", out);
            Self::attrs(&v.attrs, "    ", out);
            if e.derives.default && e.default_variant.as_deref() == Some(&v.name) {
                out.push_str("    #[default]\n");
            }
            write!(out, "    {}", v.name).unwrap();
            self.body(&v.body, "", "    ", out);
            out.push_str(",\n");
        }
        out.push_str("}\n");
        if let Some(v) = &e.hand_default {
            writeln!(
                out,
                "\nimpl Default for {} {{\n    fn default() -> Self {{\n        {}\n    }}\n}}",
                e.name,
                self.default_impl(v, &e.name)
            )
            .unwrap();
        }
    }

    /// A value of type `ty`; `owner`: the impl the value is written in (its `Default` impl or
    /// an associated fn), where `Self` and `..Self::default()` may be used.
    fn val_in(&self, v: &Val, ty: &Ty, owner: Option<&str>, self_spelling: bool) -> String {
        Ctx {
            r: self,
            owner,
            self_spelling,
            default_impl: false,
        }
        .val(v, ty, 0)
    }

    /// The value of `impl Default for owner`.
    fn default_impl(&self, v: &Val, owner: &str) -> String {
        Ctx {
            r: self,
            owner: Some(owner),
            self_spelling: false,
            default_impl: true,
        }
        .val(v, &Ty::User(owner.to_string()), 0)
    }

    fn user(&self, name: &str) -> Option<&Item> {
        self.module.find(name)
    }

    /// Whether a value of `ty` can be written (a k8s-openapi type without `Default` cannot).
    pub fn constructible(&self, ty: &Ty, seen: &mut Vec<String>) -> bool {
        match ty {
            Ty::K8s(p, _) => k8s_has_default(p),
            Ty::Option(_) | Ty::Vec(_) | Ty::VecDeque(_) | Ty::Map(..) | Ty::Set(..) => true,
            Ty::Array(x, _) | Ty::Ptr(_, x) => self.constructible(x, seen),
            Ty::Tuple(xs) => xs.iter().all(|x| self.constructible(x, seen)),
            Ty::User(n) => {
                if seen.contains(n) {
                    return false;
                }
                seen.push(n.clone());
                let ok = match self.user(n) {
                    Some(Item::Struct(s)) => {
                        s.derives.default
                            || s.hand_default.is_some()
                            || self.body_constructible(&s.body, seen)
                    }
                    Some(Item::Enum(e)) => {
                        e.derives.default
                            || e.hand_default.is_some()
                            || e.variants
                                .iter()
                                .any(|v| self.body_constructible(&v.body, seen))
                    }
                    _ => false,
                };
                seen.pop();
                ok
            }
            _ => true,
        }
    }

    fn body_constructible(&self, b: &Body, seen: &mut Vec<String>) -> bool {
        match b {
            Body::Named(fs) => fs.iter().all(|f| self.constructible(&f.ty, seen)),
            Body::Newtype(f) => self.constructible(&f.ty, seen),
            Body::Tuple(ts) => ts.iter().all(|t| self.constructible(t, seen)),
            Body::Unit => true,
        }
    }
}

/// Whether a value of `ty` can be written in `module` (a k8s-openapi type without `Default`
/// cannot, nor a struct holding one).
pub fn constructible(module: &Module, ty: &Ty) -> bool {
    Renderer { module }.constructible(ty, &mut Vec::new())
}

/// Whether a k8s-openapi type (path without `k8s_openapi::`) implements `Default`.
pub fn k8s_has_default(path: &str) -> bool {
    rsbuilder::manifests::crd::known::external_default(&format!("k8s_openapi::{path}")).is_some()
}

struct Ctx<'a, 'b> {
    r: &'a Renderer<'b>,
    owner: Option<&'a str>,
    self_spelling: bool,
    /// Rendering `impl Default for owner`: `Default::default()` of the owner would recurse.
    default_impl: bool,
}

impl Ctx<'_, '_> {
    fn val(&self, v: &Val, ty: &Ty, depth: usize) -> String {
        if depth > 12 {
            return self.zero(ty, depth);
        }
        let d = depth + 1;
        match (v, ty) {
            (Val::Zero, _) => self.zero(ty, depth),
            (Val::DefaultCall, Ty::User(n)) if self.default_impl && self.owner == Some(n) => {
                self.zero(ty, depth)
            }
            (Val::DefaultCall, _) => "Default::default()".into(),
            (Val::Expr(e), _) => e.clone(),
            (Val::Call(name), _) => {
                let owner = self.r.module.items.iter().find_map(|i| match i {
                    Item::Fn(f) if &f.name == name => Some(f.owner.clone()),
                    _ => None,
                });
                match owner {
                    Some(Some(o)) => format!("{o}::{name}()"),
                    _ => format!("{name}()"),
                }
            }
            (Val::Some(x), Ty::Option(t)) => format!("Some({})", self.val(x, t, d)),
            (Val::None, Ty::Option(_)) => "None".into(),
            (Val::Seq(xs), Ty::Vec(t)) => format!("vec![{}]", self.list(xs, t, d)),
            (Val::Seq(xs), Ty::VecDeque(t)) => {
                format!("VecDeque::from(vec![{}])", self.list(xs, t, d))
            }
            (Val::Seq(xs), Ty::Array(t, n)) => {
                let mut items: Vec<String> =
                    xs.iter().take(*n).map(|x| self.val(x, t, d)).collect();
                while items.len() < *n {
                    items.push(self.zero(t, d));
                }
                format!("[{}]", items.join(", "))
            }
            (Val::Seq(xs), Ty::Set(h, t)) => {
                let name = if *h { "HashSet" } else { "BTreeSet" };
                if xs.is_empty() {
                    format!("{name}::new()")
                } else {
                    format!("{name}::from([{}])", self.list(xs, t, d))
                }
            }
            (Val::Map(kv), Ty::Map(h, k, vt)) => {
                let name = if *h { "HashMap" } else { "BTreeMap" };
                if kv.is_empty() {
                    format!("{name}::new()")
                } else {
                    let parts: Vec<String> = kv
                        .iter()
                        .map(|(key, x)| format!("({}, {})", self.key(key, k), self.val(x, vt, d)))
                        .collect();
                    format!("{name}::from([{}])", parts.join(", "))
                }
            }
            (Val::Map(kv), Ty::JsonMap) if kv.is_empty() => "serde_json::Map::new()".into(),
            (Val::Ptr(x), Ty::Ptr(p, t)) => format!("{p}::new({})", self.val(x, t, d)),
            (Val::Tuple(xs), Ty::Tuple(ts)) if xs.len() == ts.len() => {
                let parts: Vec<String> =
                    xs.iter().zip(ts).map(|(x, t)| self.val(x, t, d)).collect();
                format!(
                    "({}{})",
                    parts.join(", "),
                    if parts.len() == 1 { "," } else { "" }
                )
            }
            (Val::Struct(kv, update), Ty::User(n)) => self.struct_lit(n, kv, *update, d),
            (Val::Variant(name, payload), Ty::User(n)) => {
                self.variant_lit(n, name, payload.as_deref(), d)
            }
            _ => self.zero(ty, depth),
        }
    }

    fn list(&self, xs: &[Val], t: &Ty, d: usize) -> String {
        xs.iter()
            .map(|x| self.val(x, t, d))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A map key literal of key type `k`.
    fn key(&self, key: &str, k: &Ty) -> String {
        match k {
            Ty::Leaf("String") => format!("{key:?}.to_string()"),
            Ty::User(n) => format!("{n}::{key}"),
            _ => key.to_string(),
        }
    }

    fn type_name(&self, n: &str) -> String {
        if self.self_spelling && self.owner == Some(n) {
            "Self".into()
        } else {
            n.to_string()
        }
    }

    fn struct_lit(&self, n: &str, kv: &[(String, Val)], update: Option<bool>, d: usize) -> String {
        let Some(Item::Struct(s)) = self.r.user(n) else {
            return self.zero(&Ty::User(n.into()), d);
        };
        let has_default = s.derives.default || s.hand_default.is_some();
        // `..Default::default()` inside the type's own Default impl would recurse forever.
        let inside_own_default = self.default_impl && self.owner == Some(n);
        let update = update.filter(|_| has_default && !inside_own_default);
        let tn = self.type_name(n);
        match &s.body {
            Body::Named(fs) => {
                let mut parts = Vec::new();
                for f in fs {
                    match kv.iter().find(|(k, _)| k == &f.name) {
                        Some((_, x)) => {
                            parts.push(format!("{}: {}", f.name, self.val(x, &f.ty, d)))
                        }
                        None if update.is_some() => {}
                        None => parts.push(format!("{}: {}", f.name, self.zero(&f.ty, d))),
                    }
                }
                match update {
                    Some(true) if self.owner == Some(n) => parts.push("..Self::default()".into()),
                    Some(_) => parts.push("..Default::default()".into()),
                    None => {}
                }
                if parts.is_empty() {
                    format!("{tn} {{}}")
                } else {
                    format!("{tn} {{ {} }}", parts.join(", "))
                }
            }
            Body::Newtype(f) => {
                let x = kv.first().map(|(_, x)| x.clone()).unwrap_or(Val::Zero);
                format!("{tn}({})", self.val(&x, &f.ty, d))
            }
            Body::Tuple(ts) => {
                let parts: Vec<String> = ts
                    .iter()
                    .enumerate()
                    .map(|(i, t)| match kv.get(i) {
                        Some((_, x)) => self.val(x, t, d),
                        None => self.zero(t, d),
                    })
                    .collect();
                format!("{tn}({})", parts.join(", "))
            }
            Body::Unit => tn,
        }
    }

    fn variant_lit(&self, n: &str, name: &str, payload: Option<&Val>, d: usize) -> String {
        let Some(Item::Enum(e)) = self.r.user(n) else {
            return self.zero(&Ty::User(n.into()), d);
        };
        let Some(v) = e.variants.iter().find(|v| v.name == name) else {
            return self.zero(&Ty::User(n.into()), d);
        };
        let tn = self.type_name(n);
        let payload = payload.cloned().unwrap_or(Val::Zero);
        match &v.body {
            Body::Unit => format!("{tn}::{name}"),
            Body::Newtype(f) => format!("{tn}::{name}({})", self.val(&payload, &f.ty, d)),
            Body::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| self.zero(t, d)).collect();
                format!("{tn}::{name}({})", parts.join(", "))
            }
            Body::Named(fs) => {
                let kv = match &payload {
                    Val::Struct(kv, _) => kv.clone(),
                    _ => Vec::new(),
                };
                let parts: Vec<String> = fs
                    .iter()
                    .map(|f| match kv.iter().find(|(k, _)| k == &f.name) {
                        Some((_, x)) => format!("{}: {}", f.name, self.val(x, &f.ty, d)),
                        None => format!("{}: {}", f.name, self.zero(&f.ty, d)),
                    })
                    .collect();
                format!("{tn}::{name} {{ {} }}", parts.join(", "))
            }
        }
    }

    /// The simplest value of a type: what a struct literal uses for a field the value does
    /// not give.
    fn zero(&self, ty: &Ty, d: usize) -> String {
        match ty {
            Ty::Leaf(l) => leaf_zero(l).to_string(),
            Ty::Option(_) => "None".into(),
            Ty::Vec(_) => "Vec::new()".into(),
            Ty::VecDeque(_) => "VecDeque::new()".into(),
            Ty::Array(t, n) => {
                let items: Vec<String> = (0..*n).map(|_| self.zero(t, d + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Map(h, ..) => format!("{}::new()", if *h { "HashMap" } else { "BTreeMap" }),
            Ty::Set(h, _) => format!("{}::new()", if *h { "HashSet" } else { "BTreeSet" }),
            Ty::Ptr(p, t) => format!("{p}::new({})", self.zero(t, d + 1)),
            Ty::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| self.zero(t, d + 1)).collect();
                format!(
                    "({}{})",
                    parts.join(", "),
                    if parts.len() == 1 { "," } else { "" }
                )
            }
            Ty::Json => "serde_json::Value::Null".into(),
            Ty::JsonMap => "serde_json::Map::new()".into(),
            Ty::K8s(..) => "Default::default()".into(),
            Ty::User(n) => match self.r.user(n) {
                Some(Item::Struct(s))
                    if (s.derives.default || s.hand_default.is_some())
                        && self.owner != Some(n.as_str()) =>
                {
                    "Default::default()".into()
                }
                Some(Item::Enum(e))
                    if (e.derives.default || e.hand_default.is_some())
                        && self.owner != Some(n.as_str()) =>
                {
                    "Default::default()".into()
                }
                Some(Item::Struct(_)) => self.struct_lit(n, &[], None, d + 1),
                Some(Item::Enum(e)) => {
                    // The first variant that can be written.
                    let v = e
                        .variants
                        .iter()
                        .find(|v| self.r.body_constructible(&v.body, &mut vec![n.clone()]))
                        .unwrap_or(&e.variants[0]);
                    self.variant_lit(n, &v.name, None, d + 1)
                }
                _ => "Default::default()".into(),
            },
        }
    }
}

/// The simplest value of a std leaf type.
pub fn leaf_zero(l: &str) -> &'static str {
    match l {
        "String" => "String::new()",
        "bool" => "false",
        "char" => "'a'",
        "f32" | "f64" => "0.0",
        "std::path::PathBuf" => "std::path::PathBuf::new()",
        "std::net::IpAddr" => "std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)",
        "std::net::Ipv4Addr" => "std::net::Ipv4Addr::LOCALHOST",
        "std::net::Ipv6Addr" => "std::net::Ipv6Addr::LOCALHOST",
        "std::time::Duration" => "std::time::Duration::ZERO",
        "std::borrow::Cow<'static, str>" => "std::borrow::Cow::Borrowed(\"\")",
        "std::num::NonZeroU8" => "std::num::NonZeroU8::MIN",
        "std::num::NonZeroU16" => "std::num::NonZeroU16::MIN",
        "std::num::NonZeroU32" => "std::num::NonZeroU32::MIN",
        "std::num::NonZeroU64" => "std::num::NonZeroU64::MIN",
        "std::num::NonZeroI32" => "std::num::NonZeroI32::MIN",
        "std::num::NonZeroI64" => "std::num::NonZeroI64::MIN",
        "std::num::Wrapping<u32>" => "std::num::Wrapping(0)",
        "std::ffi::OsString" => "std::ffi::OsString::new()",
        "std::time::SystemTime" => "std::time::SystemTime::UNIX_EPOCH",
        "std::ops::Range<u32>" => "0..0",
        "Result<u8, String>" => "Ok(0)",
        "std::marker::PhantomData<u8>" => "std::marker::PhantomData",
        "()" => "()",
        _ => "0",
    }
}
