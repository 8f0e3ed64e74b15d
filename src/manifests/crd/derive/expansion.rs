//! How large a kind's schema becomes once every subschema is inlined, estimated from the
//! sources without building it.
//!
//! kube-derive's `crd()` generates with schemars' openapi3 settings and inlines every
//! subschema: a type used twice is copied twice. A type holding two fields of the next type,
//! thirty levels deep, is copied 2^30 times, and building that schema (in `crd()` as in
//! [`Deriver::root_schema`], whose cache holds whole inlined schemas) takes all the memory
//! there is. Such a CRD is always refused in the end (larger than etcd takes, see
//! [`crate::manifests::crd::MAX_CRD_BYTES`]), so it is refused here, first: each user type is
//! sized once (memoized per type and per argument sizes of a generic type) from its own
//! bytes and the sizes of the types it holds.
//!
//! The size is a lower bound of the YAML of the inlined schema, counted in bytes and lines
//! (a schema nested one level deeper has every line two spaces longer), written where a
//! CRD's YAML puts the spec's schema. A struct counts its `properties:` and `type: object`
//! lines, a line per property name and its fields' schemas two levels deeper (fields of one
//! name, after serde's renaming rules, once); a string, number or boolean its `type:` line; a
//! container (`Option`, `Vec`, maps, `Box`) its item; a known type (k8s-openapi's) the
//! `type` and property lines of the schema schemars gives it and its properties'
//! descriptions (its own gives way to a field's doc comment). An enum counts
//! the properties kube-core's rewriter hoists out of its `oneOf`: externally tagged, one per
//! variant with data; untagged or internally tagged, the variants' fields (or those of a
//! newtype variant's struct) merged by name; else its largest variant. What cannot be told
//! statically (`schema_with`, `transform`, a hand-written `JsonSchema`, a recursive type)
//! counts nothing, and neither do a user type's descriptions, `required` and `nullable`. A
//! kind whose count exceeds [`Deriver::MAX_EXPANDED_YAML`] is refused.

use std::collections::{BTreeMap, HashMap};

use super::Deriver;
use crate::manifests::crd::MAX_CRD_BYTES;
use crate::manifests::crd::attrs::{self, With};
use crate::manifests::crd::known::{self, Generic};
use crate::manifests::crd::resolve::{Crate, LocalItem, ModId, Resolved};

/// A lower bound of the YAML of an inlined schema written at indentation 0: its bytes and
/// lines (each line written `2 * d` spaces deeper when the schema is nested `d` levels
/// deeper), and the user types it holds directly (node, how many times).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(super) struct Size {
    bytes: u128,
    lines: u128,
    holds: Vec<(usize, u128)>,
}

impl Size {
    fn text(bytes: u128, lines: u128) -> Self {
        Self {
            bytes,
            lines,
            holds: Vec::new(),
        }
    }

    /// The bytes of this schema written `depth` levels deeper.
    fn bytes_at(&self, depth: u128) -> u128 {
        self.bytes
            .saturating_add(self.lines.saturating_mul(depth.saturating_mul(2)))
    }

    /// Adds `other`, written `depth` levels deeper than this schema's lines.
    fn add_at(&mut self, other: &Size, depth: u128) {
        self.bytes = self.bytes.saturating_add(other.bytes_at(depth));
        self.lines = self.lines.saturating_add(other.lines);
        let mut merged: BTreeMap<usize, u128> = self.holds.iter().copied().collect();
        for (n, k) in &other.holds {
            let e = merged.entry(*n).or_default();
            *e = e.saturating_add(*k);
        }
        self.holds = merged.into_iter().collect();
    }

    fn add(&mut self, other: &Size) {
        self.add_at(other, 0);
    }

    /// Without its `type: object` line, which kube-core's rewriter may drop from a variant
    /// whose properties it hoists.
    fn without_type(mut self) -> Self {
        self.bytes = self.bytes.saturating_sub(TYPE_LINE);
        self.lines = self.lines.saturating_sub(1);
        self
    }

    fn larger(self, other: Size) -> Self {
        if other.bytes > self.bytes {
            other
        } else {
            self
        }
    }
}

/// One user type (with the sizes of its type arguments) once sized.
struct Node {
    module: ModId,
    name: String,
    line: usize,
    size: Size,
    /// Its properties by name, for a struct of named fields.
    props: Option<Props>,
}

/// The sizes of user types computed so far (see the module docs).
#[derive(Default)]
pub(super) struct Expansion {
    /// Sized types, in the order they were finished: a type after every type it holds.
    nodes: Vec<Node>,
    /// By (module, name, argument sizes); `None` while being sized (a recursive use).
    memo: HashMap<(ModId, String, Vec<Size>), Option<usize>>,
    /// User types and aliases being sized, one inside the other.
    depth: usize,
    /// The sizes of known types' schemas, by path.
    leaves: HashMap<String, Size>,
    /// `crd()`'s generator, for those schemas.
    generator: Option<schemars::SchemaGenerator>,
}

/// Why a kind's schema is too large to build, found by [`Deriver::expansion_refusal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    /// The lower bound of the bytes of YAML of the inlined schema in the CRD.
    pub bytes: u128,
    /// The type whose copies weigh most: its name, file and line.
    pub type_name: String,
    /// Its file (display form) and 1-based line.
    pub at: String,
    /// How many times its schema is inlined.
    pub copies: u128,
}

/// `type: string` and its newline, the smallest schema of a string, number or boolean;
/// `type: object` is as long.
const TYPE_LINE: u128 = 13;
/// `properties:` and its newline.
const PROPERTIES_LINE: u128 = 12;
/// `x:` and its newline at indentation 2 under `properties:`, the smallest property name.
const PROPERTY_LINE: u128 = 5;
/// How many levels deep the YAML of a CRD writes the properties of the spec type (under
/// `spec.versions[].schema.openAPIV3Schema.properties.spec`, 12 spaces; 8 for a spec
/// flattened into the root with `#[kube(no_spec)]`, the lesser is counted).
const SPEC_DEPTH: u128 = 4;
/// How deep user types and aliases are followed; deeper ones count nothing. The deriver
/// itself stops at [`Deriver::MAX_TYPE_NESTING`].
const MAX_DEPTH: usize = 128;

const SCALARS: &[&str] = &[
    "std::string::String",
    "bool",
    "char",
    "str",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "f32",
    "f64",
];

type Params = HashMap<String, Size>;

/// What `#[serde(...)]` and `#[schemars(...)]` say that changes which schema an item has.
#[derive(Default)]
struct Flags {
    skip: bool,
    flatten: bool,
    transparent: bool,
    transform: bool,
    /// `with` or `schema_with` (of a variant).
    with: bool,
    /// `#[serde(untagged)]`, `#[serde(tag = "...")]`, `#[serde(content = "...")]`.
    untagged: bool,
    tag: bool,
    content: bool,
    from: Option<syn::Type>,
}

fn flags(attrs_: &[syn::Attribute]) -> Flags {
    use proc_macro2::TokenTree;
    let mut f = Flags::default();
    for a in attrs_
        .iter()
        .filter(|a| a.path().is_ident("serde") || a.path().is_ident("schemars"))
    {
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            let TokenTree::Ident(id) = t else { continue };
            let follows_eq =
                matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '=');
            let after_comma = i == 0
                || matches!(tokens.get(i - 1), Some(TokenTree::Punct(p)) if p.as_char() == ',');
            if !after_comma {
                continue;
            }
            match id.to_string().as_str() {
                "skip" | "skip_deserializing" => f.skip = true,
                "flatten" => f.flatten = true,
                "transparent" => f.transparent = true,
                "transform" => f.transform = true,
                "with" | "schema_with" | "deserialize_with" => f.with = true,
                "untagged" => f.untagged = true,
                "tag" if follows_eq => f.tag = true,
                "content" if follows_eq => f.content = true,
                "from" | "try_from" if follows_eq => {
                    if let Some(TokenTree::Literal(l)) = tokens.get(i + 2)
                        && let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string())
                    {
                        f.from = s.parse().ok();
                    }
                }
                _ => {}
            }
        }
    }
    f
}

/// What the property of a named field is called, up to case and `_`/`-` (what serde's
/// `rename_all` rules change, so that names that one of them may make equal compare equal):
/// its `rename` (the deserialize one) or its identifier. `None` when a `rename` cannot be
/// read.
fn property_key(ident: &syn::Ident, attrs_: &[syn::Attribute]) -> Option<String> {
    use proc_macro2::TokenTree;
    let lit = |t: Option<&TokenTree>| match t {
        Some(TokenTree::Literal(l)) => syn::parse_str::<syn::LitStr>(&l.to_string())
            .ok()
            .map(|s| s.value()),
        _ => None,
    };
    let mut name = ident.to_string();
    if let Some(raw) = name.strip_prefix("r#") {
        name = raw.to_string();
    }
    for a in attrs_
        .iter()
        .filter(|a| a.path().is_ident("serde") || a.path().is_ident("schemars"))
    {
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            if !matches!(t, TokenTree::Ident(id) if id == "rename") {
                continue;
            }
            match tokens.get(i + 1) {
                Some(TokenTree::Punct(p)) if p.as_char() == '=' => name = lit(tokens.get(i + 2))?,
                Some(TokenTree::Group(g)) => {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    for (j, t) in inner.iter().enumerate() {
                        if matches!(t, TokenTree::Ident(id) if id == "deserialize") {
                            name = lit(inner.get(j + 2))?;
                        }
                    }
                }
                _ => return None,
            }
        }
    }
    Some(
        name.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect(),
    )
}

/// A lower bound of the YAML of a schema schemars computed: its `type` lines and the
/// `description` lines of its properties and items (the type's own description gives way to
/// a field's doc comment), its properties (a name line and the schema two levels deeper),
/// `items` and `additionalProperties` (one level deeper); nothing else, so nothing
/// `crd()`'s transforms may take away (they rewrite `anyOf`/`oneOf` and add `nullable`).
fn schema_size(v: &serde_json::Value) -> Size {
    let mut out = Size::default();
    let Some(map) = v.as_object() else {
        return out;
    };
    for (k, v) in map {
        if k == "description" {
            continue;
        }
        out.add(&member_size(k, v));
    }
    out
}

/// [`schema_size`] of a schema below the top, whose description is its own.
fn inner_schema_size(v: &serde_json::Value) -> Size {
    let mut out = Size::default();
    let Some(map) = v.as_object() else {
        return out;
    };
    for (k, v) in map {
        out.add(&member_size(k, v));
    }
    out
}

/// One member `k: v` of a schema, for [`schema_size`].
fn member_size(k: &str, v: &serde_json::Value) -> Size {
    let mut out = Size::default();
    match (k, v) {
        ("type" | "description", serde_json::Value::String(text)) => {
            out.add(&Size::text((k.len() + 3 + text.len()) as u128, 1));
        }
        ("properties", serde_json::Value::Object(props)) if !props.is_empty() => {
            out.add(&Size::text(PROPERTIES_LINE, 1));
            for (name, sub) in props {
                out.add(&Size::text(name.len() as u128 + 4, 1));
                out.add_at(&inner_schema_size(sub), 2);
            }
        }
        ("items" | "additionalProperties", serde_json::Value::Object(_)) => {
            out.add(&Size::text(k.len() as u128 + 2, 1));
            out.add_at(&inner_schema_size(v), 1);
        }
        _ => {}
    }
    out
}

/// Properties by [`property_key`].
type Props = BTreeMap<String, Size>;

/// Adds property `key`; of two with one key, the smaller is kept (the schema has one).
fn insert_smaller(props: &mut Props, key: String, s: Size) {
    match props.entry(key) {
        std::collections::btree_map::Entry::Vacant(v) => {
            v.insert(s);
        }
        std::collections::btree_map::Entry::Occupied(mut o) => {
            if s.bytes < o.get().bytes {
                o.insert(s);
            }
        }
    }
}

/// The `properties:` of an object: a name line per property, its schema two levels deeper;
/// with the `properties:` and `type: object` lines when `object`.
fn props_size(props: &Props, object: bool) -> Size {
    let mut direct = Size::default();
    for s in props.values() {
        direct.add(&Size::text(PROPERTY_LINE, 1));
        direct.add_at(s, 2);
    }
    if object {
        if direct.lines > 0 {
            direct.add(&Size::text(PROPERTIES_LINE, 1));
        }
        direct.add(&Size::text(TYPE_LINE, 1));
    }
    direct
}

/// Sizes types of `krate` into `ex`.
struct Sizer<'e, 'c, 'a> {
    krate: &'c Crate<'a>,
    ex: &'e mut Expansion,
}

impl Sizer<'_, '_, '_> {
    fn ty(&mut self, m: ModId, ty: &syn::Type, params: &Params) -> Size {
        match ty {
            syn::Type::Paren(p) => self.ty(m, &p.elem, params),
            syn::Type::Group(g) => self.ty(m, &g.elem, params),
            syn::Type::Reference(r) => self.ty(m, &r.elem, params),
            syn::Type::Slice(s) => self.ty(m, &s.elem, params),
            syn::Type::Array(a) => self.ty(m, &a.elem, params),
            syn::Type::Tuple(t) => {
                let mut s = Size::default();
                for e in &t.elems {
                    s.add(&self.ty(m, e, params));
                }
                s
            }
            syn::Type::Path(p) if p.qself.is_none() => self.path(m, &p.path, params),
            _ => Size::default(),
        }
    }

    fn path(&mut self, m: ModId, path: &syn::Path, params: &Params) -> Size {
        if let Some(id) = path.get_ident()
            && let Some(s) = params.get(&id.to_string())
        {
            return s.clone();
        }
        let Some(resolved) = self.krate.resolve_type(m, path) else {
            return Size::default();
        };
        let args = Deriver::type_args(path);
        match resolved {
            Resolved::Local(tm, name) => match self.krate.item(tm, &name) {
                Some(LocalItem::Alias(alias)) => {
                    if self.ex.depth >= MAX_DEPTH {
                        return Size::default();
                    }
                    let mut inner = Params::new();
                    for (p, a) in alias.generics.type_params().zip(&args) {
                        inner.insert(p.ident.to_string(), self.ty(m, a, params));
                    }
                    self.ex.depth += 1;
                    let s = self.ty(tm, &alias.ty, &inner);
                    self.ex.depth -= 1;
                    s
                }
                Some(LocalItem::Struct(_) | LocalItem::Enum(_)) => {
                    let sizes: Vec<Size> = args.iter().map(|a| self.ty(m, a, params)).collect();
                    self.user(tm, &name, sizes)
                }
                None => Size::default(),
            },
            Resolved::External(p) => {
                if SCALARS.contains(&p.as_str()) {
                    return Size::text(TYPE_LINE, 1);
                }
                if let Some(f) = known::leaf_type(&p) {
                    return self.leaf(&p, f);
                }
                let mut arg = |i: usize| {
                    args.get(i)
                        .map(|a| self.ty(m, a, params))
                        .unwrap_or_default()
                };
                match known::generic(&p) {
                    Some(Generic::Container(_, _)) if p == "std::marker::PhantomData" => {
                        Size::default()
                    }
                    // Maps: the values' schema (`additionalProperties`).
                    Some(Generic::Container(2, _)) if p.ends_with("Map") => arg(1),
                    // `Result`, `Either`: a choice of two.
                    Some(Generic::Container(2, _)) => arg(0).larger(arg(1)),
                    Some(
                        Generic::Forward
                        | Generic::Container(1, _)
                        | Generic::Capped(_)
                        | Generic::ArrayElement(_),
                    ) => arg(0),
                    _ => Size::default(),
                }
            }
            Resolved::Module(_) => Size::default(),
        }
    }

    /// A known type's schema (a k8s-openapi type: `PodSpec` is hundreds of KiB), computed by
    /// schemars once per run and counted by [`schema_size`].
    fn leaf(&mut self, path: &str, f: known::LeafFn) -> Size {
        if let Some(s) = self.ex.leaves.get(path) {
            return s.clone();
        }
        let generator = self
            .ex
            .generator
            .get_or_insert_with(|| known::crd_settings().into_generator());
        let s = schema_size(f(generator).schema.as_value());
        self.ex.leaves.insert(path.to_string(), s.clone());
        s
    }

    /// The size of user type `name` of module `tm` with type arguments of sizes `args`.
    fn user(&mut self, tm: ModId, name: &str, args: Vec<Size>) -> Size {
        let key = (tm, name.to_string(), args);
        match self.ex.memo.get(&key) {
            Some(Some(n)) => return self.held(*n),
            // Recursive: the deriver refuses it.
            Some(None) => return Size::default(),
            None => {}
        }
        if self.ex.depth >= MAX_DEPTH {
            return Size::default();
        }
        self.ex.memo.insert(key.clone(), None);
        self.ex.depth += 1;
        let krate = self.krate;
        let ((size, props), line) = match krate.item(tm, name) {
            Some(LocalItem::Struct(s)) => (
                self.item(tm, &s.attrs, &s.generics, &key.2, |z, params| {
                    if flags(&s.attrs).transparent {
                        // `#[serde(transparent)]`: the schema of its one deserialized field.
                        let one = s.fields.iter().find(|f| !flags(&f.attrs).skip);
                        return (
                            one.map(|f| z.field(tm, f, params)).unwrap_or_default(),
                            None,
                        );
                    }
                    z.fields(tm, &s.fields, params, true)
                }),
                s.ident.span().start().line,
            ),
            Some(LocalItem::Enum(e)) => (
                self.item(tm, &e.attrs, &e.generics, &key.2, |z, params| {
                    (z.variants(tm, e, params), None)
                }),
                e.ident.span().start().line,
            ),
            _ => ((Size::default(), None), 0),
        };
        self.ex.depth -= 1;
        let n = self.ex.nodes.len();
        self.ex.nodes.push(Node {
            module: tm,
            name: name.to_string(),
            line,
            size,
            props,
        });
        self.ex.memo.insert(key, Some(n));
        self.held(n)
    }

    /// Node `n` held once.
    fn held(&self, n: usize) -> Size {
        let size = &self.ex.nodes[n].size;
        Size {
            bytes: size.bytes,
            lines: size.lines,
            holds: vec![(n, 1)],
        }
    }

    /// The properties of the struct whose schema `s` holds (alone, once, maybe in a
    /// container).
    fn props_of(&self, s: &Size) -> Option<Props> {
        match s.holds[..] {
            [(n, 1)] => self.ex.nodes[n].props.clone(),
            _ => None,
        }
    }

    /// An enum. Externally tagged, each variant with data is a property named after it
    /// (kube-core's rewriter hoists them out of the `oneOf`); untagged or internally tagged,
    /// the properties of the variants (their fields, or the fields of a newtype variant's
    /// struct) are hoisted and merged by name. Else (adjacently tagged: every variant's
    /// content is one property, which the rewriter refuses unless all are equal) the largest
    /// variant.
    fn variants(&mut self, tm: ModId, e: &syn::ItemEnum, params: &Params) -> Size {
        let ef = flags(&e.attrs);
        let mut by_name = Props::new();
        let mut largest = Size::default();
        for v in &e.variants {
            let vf = flags(&v.attrs);
            if vf.skip || vf.transform || vf.with {
                continue;
            }
            if !ef.untagged && !ef.tag {
                // `{"Name": <the variant's data>}`.
                let data = match &v.fields {
                    syn::Fields::Unit => continue,
                    fields => self.fields(tm, fields, params, true).0,
                };
                if let Some(key) = property_key(&v.ident, &v.attrs) {
                    insert_smaller(&mut by_name, key, data);
                }
                continue;
            }
            let data = match &v.fields {
                syn::Fields::Unit => Size::default(),
                syn::Fields::Named(_) => {
                    let (size, props) = self.fields(tm, &v.fields, params, false);
                    match props {
                        Some(props) if !ef.content => {
                            for (k, s) in props {
                                insert_smaller(&mut by_name, k, s);
                            }
                        }
                        _ => {}
                    }
                    size
                }
                syn::Fields::Unnamed(u) => {
                    let mut s = Size::default();
                    for f in &u.unnamed {
                        let one = self.field(tm, f, params);
                        if u.unnamed.len() == 1
                            && !ef.content
                            && let Some(props) = self.props_of(&one)
                        {
                            for (k, s) in props {
                                insert_smaller(&mut by_name, k, s);
                            }
                        }
                        s.add(&one.without_type());
                    }
                    s
                }
            };
            largest = largest.larger(data);
        }
        props_size(&by_name, false).larger(largest)
    }

    /// A struct or enum: nothing when its schema is not derived or is replaced, else `body`
    /// (with its properties, for a struct of named fields).
    fn item(
        &mut self,
        tm: ModId,
        attrs_: &[syn::Attribute],
        generics: &syn::Generics,
        args: &[Size],
        body: impl FnOnce(&mut Self, &Params) -> (Size, Option<Props>),
    ) -> (Size, Option<Props>) {
        let derives = attrs::derives(attrs_);
        if !derives
            .iter()
            .any(|d| d == "JsonSchema" || d == "KubeSchema")
        {
            return Default::default();
        }
        let params: Params = generics
            .type_params()
            .map(|p| p.ident.to_string())
            .zip(args.iter().cloned())
            .collect();
        let f = flags(attrs_);
        if f.transform {
            return Default::default();
        }
        match attrs::container_attrs(attrs_) {
            Ok(c) => match c.with {
                Some(With::Type(t)) => return (self.ty(tm, &t, &params), None),
                Some(With::Function(_)) => return Default::default(),
                None => {}
            },
            Err(_) => return Default::default(),
        }
        if let Some(from) = &f.from {
            return (self.ty(tm, from, &params), None);
        }
        body(self, &params)
    }

    /// The fields of a struct or struct variant: its `properties:` and `type: object` lines
    /// when `object` (a variant's may be hoisted into the enum's), and each field's name
    /// line and schema two levels deeper, with those of flattened structs; or the largest
    /// other flattened field (an enum), which may share its properties' names with them.
    /// With the properties by name, for named fields without such a flattened field.
    fn fields(
        &mut self,
        tm: ModId,
        fields: &syn::Fields,
        params: &Params,
        object: bool,
    ) -> (Size, Option<Props>) {
        match fields {
            syn::Fields::Unit => Default::default(),
            syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                (self.field(tm, &u.unnamed[0], params), None)
            }
            syn::Fields::Unnamed(u) => {
                let mut s = Size::default();
                for f in &u.unnamed {
                    s.add(&self.field(tm, f, params));
                }
                (s, None)
            }
            syn::Fields::Named(n) => {
                // Two fields of one name make one property (the later one's): by name, the
                // smaller counts.
                let mut by_name = Props::new();
                let mut flat = Size::default();
                let mut flattened = false;
                for f in &n.named {
                    let fl = flags(&f.attrs);
                    if fl.skip {
                        continue;
                    }
                    let s = self.field(tm, f, params);
                    if fl.flatten {
                        // A struct's properties join these; anything else is kept apart.
                        match self.props_of(&s) {
                            Some(props) => {
                                for (k, p) in props {
                                    insert_smaller(&mut by_name, k, p);
                                }
                            }
                            None => {
                                flattened = true;
                                flat = flat.larger(s);
                            }
                        }
                        continue;
                    }
                    if let Some(ident) = &f.ident
                        && let Some(key) = property_key(ident, &f.attrs)
                    {
                        insert_smaller(&mut by_name, key, s);
                    }
                }
                let direct = props_size(&by_name, object);
                (direct.larger(flat), (!flattened).then_some(by_name))
            }
        }
    }

    fn field(&mut self, tm: ModId, f: &syn::Field, params: &Params) -> Size {
        let fl = flags(&f.attrs);
        if fl.skip || fl.transform {
            return Size::default();
        }
        match attrs::field_attrs(&f.attrs) {
            Ok(a) => match a.with {
                Some(With::Type(t)) => self.ty(tm, &t, params),
                Some(With::Function(_)) => Size::default(),
                None => self.ty(tm, &f.ty, params),
            },
            Err(_) => Size::default(),
        }
    }
}

impl Deriver<'_, '_> {
    /// The largest schema, in bytes of YAML as [`Deriver::expansion_refusal`] counts them
    /// (a lower bound), that is built and measured: twice [`MAX_CRD_BYTES`]. A larger one
    /// is certainly refused in the end, after building it; the margin leaves what the count
    /// may get wrong to the exact check of the written YAML.
    pub const MAX_EXPANDED_YAML: u128 = 2 * MAX_CRD_BYTES as u128;

    /// Whether the inlined schema of the spec type `spec` and the status type `status` (both
    /// written in module `m`) is certainly too large for a CRD: `Some` with the size and the
    /// type whose copies weigh most when the lower bound of its YAML in the CRD exceeds
    /// [`Deriver::MAX_EXPANDED_YAML`]. Never builds a schema: linear in the number of
    /// distinct types (and generic instances) whatever the schema's size, the sizes kept for
    /// the deriver's next kinds. See the module docs for what is counted.
    pub fn expansion_refusal(
        &mut self,
        m: ModId,
        spec: &syn::Ident,
        status: Option<&syn::Path>,
    ) -> Option<TooLarge> {
        let (bytes, total) = self.expanded_yaml(m, spec, status);
        (bytes > Self::MAX_EXPANDED_YAML).then(|| self.heaviest(&total, bytes))
    }

    /// The lower bound of the bytes of YAML of the schema of `spec` and `status` in a CRD,
    /// and the types it holds.
    fn expanded_yaml(
        &mut self,
        m: ModId,
        spec: &syn::Ident,
        status: Option<&syn::Path>,
    ) -> (u128, Size) {
        let mut z = Sizer {
            krate: self.krate,
            ex: &mut self.expansion,
        };
        let spec_ty: syn::Type = syn::parse_quote!(#spec);
        let mut total = z.ty(m, &spec_ty, &Params::new());
        if let Some(status) = status {
            total.add(&z.path(m, status, &Params::new()));
        }
        (total.bytes_at(SPEC_DEPTH), total)
    }

    /// The type whose copies in `total` (of `bytes`) weigh most: copies times its own lines
    /// (those not of the types it holds).
    fn heaviest(&self, total: &Size, bytes: u128) -> TooLarge {
        let ex = &self.expansion;
        let mut copies = vec![0u128; ex.nodes.len()];
        for (n, k) in &total.holds {
            copies[*n] = copies[*n].saturating_add(*k);
        }
        // A node comes after every node it holds: from the last one back, every holder is
        // counted before what it holds.
        for n in (0..ex.nodes.len()).rev() {
            if copies[n] == 0 {
                continue;
            }
            for (h, k) in &ex.nodes[n].size.holds {
                copies[*h] = copies[*h].saturating_add(copies[n].saturating_mul(*k));
            }
        }
        let own = |n: usize| {
            let node = &ex.nodes[n];
            node.size.holds.iter().fold(node.size.lines, |l, (h, k)| {
                l.saturating_sub(ex.nodes[*h].size.lines.saturating_mul(*k))
            })
        };
        let best = (0..ex.nodes.len())
            .filter(|n| copies[*n] > 0)
            .max_by_key(|n| (copies[*n].saturating_mul(own(*n).max(1)), copies[*n]));
        match best {
            Some(n) => {
                let node = &ex.nodes[n];
                TooLarge {
                    bytes,
                    type_name: node.name.clone(),
                    at: format!(
                        "{}:{}",
                        self.krate.modules[node.module].file.path.display(),
                        node.line
                    ),
                    copies: copies[n],
                }
            }
            None => TooLarge {
                bytes,
                type_name: String::new(),
                at: String::new(),
                copies: 1,
            },
        }
    }
}

/// `bytes` in the largest binary unit that keeps the number at least 1 (`3 MiB`, `21 GiB`),
/// rounded down.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: &[&str] = &[
        "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB",
    ];
    let mut n = bytes;
    let mut u = 0;
    while n >= 1024 && u + 1 < UNITS.len() {
        n /= 1024;
        u += 1;
    }
    format!("{n} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::manifests::crd::{crds_from_sources, custom_resources, resolve};
    use crate::manifests::source::SourceSet;

    const DERIVE: &str = "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]";

    /// A crate whose spec holds `S0`, where `level(i, "S{i+1}")` defines `S{i}` and `S{depth}`
    /// is a struct of two scalars.
    fn chain(depth: usize, level: impl Fn(usize, &str) -> String) -> SourceSet {
        let mut text = format!(
            "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\nuse std::collections::BTreeMap;\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n\
             pub struct ThingSpec {{ pub deep: S0 }}\n\
             {DERIVE} pub struct P<T> {{ pub a: T, pub b: T }}\n\
             {DERIVE} pub struct S{depth} {{ pub name_of_leaf: String, pub count: Option<i32> }}\n"
        );
        for i in 0..depth {
            text.push_str(&level(i, &format!("S{}", i + 1)));
            text.push('\n');
        }
        SourceSet {
            files: vec![SourceSet::parse_text(Path::new("src/lib.rs"), text).unwrap()],
        }
    }

    /// Shapes that copy the next level more than once, each in another way.
    /// Writes level `i` of a chain whose next type is named by the `&str`.
    type Level = Box<dyn Fn(usize, &str) -> String>;

    fn shapes() -> Vec<(&'static str, Level)> {
        vec![
            (
                "fields",
                Box::new(|i, n| format!("{DERIVE} pub struct S{i} {{ pub a: {n}, pub b: {n} }}")),
            ),
            (
                "untagged",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} #[serde(untagged)] pub enum S{i} {{ One {{ a: {n}, b: {n} }}, Two {{ c: {n} }} }}"
                    )
                }),
            ),
            (
                "externally tagged",
                Box::new(|i, n| {
                    format!("{DERIVE} pub enum S{i} {{ One {{ a: {n}, b: {n} }}, Two({n}) }}")
                }),
            ),
            (
                "untagged newtypes",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} #[serde(untagged)] pub enum S{i} {{ One(A{i}), Two(B{i}) }}\n\
                             {DERIVE} pub struct A{i} {{ pub a: {n} }}\n{DERIVE} pub struct B{i} {{ pub b: {n} }}"
                    )
                }),
            ),
            (
                "flatten",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} pub struct S{i} {{ #[serde(flatten)] pub x: W{i}, pub b: {n} }}\n\
                             {DERIVE} pub struct W{i} {{ pub a{i}: {n} }}"
                    )
                }),
            ),
            (
                "generic",
                Box::new(|i, n| format!("{DERIVE} pub struct S{i} {{ pub p: P<{n}> }}")),
            ),
            (
                "containers",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} pub struct S{i} {{ pub a: Option<Box<{n}>>, pub b: Vec<{n}>, pub c: BTreeMap<String, {n}> }}"
                    )
                }),
            ),
            (
                "renamed into one another",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} #[serde(rename_all = \"camelCase\")] pub struct S{i} {{ pub a_b: {n}, #[serde(rename = \"aB\")] pub x: {n}, #[schemars(rename = \"c\")] pub y: {n}, pub c: {n} }}"
                    )
                }),
            ),
            (
                "transparent and aliased",
                Box::new(|i, n| {
                    format!(
                        "{DERIVE} #[serde(transparent)] pub struct S{i} {{ pub t: T{i} }}\n\
                             type T{i} = U{i};\n{DERIVE} pub struct U{i} {{ pub a: {n}, pub b: {n} }}"
                    )
                }),
            ),
        ]
    }

    fn bound(set: &SourceSet) -> u128 {
        let krate = resolve::Crate::build(set);
        let mut d = Deriver::new(&krate);
        let (m, ident, _) = custom_resources(&krate).next().unwrap();
        d.expanded_yaml(m, ident, None).0
    }

    /// The count is a lower bound of the YAML written, whatever the shape (so a CRD that fits
    /// is never refused), and not a loose one (so no shape escapes the refusal).
    #[test]
    fn the_count_is_at_most_the_yaml_and_more_than_a_quarter_of_it() {
        for (name, level) in shapes() {
            let set = chain(5, level);
            let crds = crds_from_sources(&set).unwrap_or_else(|d| panic!("{name}: {d:?}"));
            let yaml = crate::manifests::yaml::to_yaml(&crds[0].crd).unwrap().len() as u128;
            let bound = bound(&set);
            assert!(bound <= yaml, "{name}: counted {bound} of {yaml} bytes");
            assert!(bound * 4 > yaml, "{name}: counted {bound} of {yaml} bytes");
        }
    }

    /// Known types count what their schemas keep through `crd()`'s transforms: at most the
    /// YAML written; for objects, at least a quarter of it (a scalar's schema is mostly its
    /// own description, which a field's doc comment would replace, and is not counted).
    #[test]
    fn k8s_openapi_types_count_at_most_their_yaml() {
        let objects = [
            "core::v1::PodTemplateSpec",
            "core::v1::Container",
            "core::v1::ResourceRequirements",
            "core::v1::Affinity",
            "core::v1::Toleration",
            "core::v1::Volume",
            "core::v1::ServicePort",
            "apimachinery::pkg::apis::meta::v1::ObjectMeta",
            "apimachinery::pkg::apis::meta::v1::LabelSelector",
            "apimachinery::pkg::apis::meta::v1::Condition",
        ];
        let scalars = [
            "apimachinery::pkg::apis::meta::v1::Time",
            "apimachinery::pkg::api::resource::Quantity",
            "apimachinery::pkg::util::intstr::IntOrString",
        ];
        let fields = objects.iter().chain(&scalars);
        for (i, f) in fields.enumerate() {
            let path = if f.starts_with("core") {
                format!("k8s_openapi::api::{f}")
            } else {
                format!("k8s_openapi::{f}")
            };
            let text = format!(
                "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\
                 #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
                 #[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n\
                 pub struct ThingSpec {{ /// A doc comment, in the place of the type's description.\n pub a{i}: {path}, pub list: Vec<{path}>, pub o: Option<{path}> }}\n"
            );
            let set = SourceSet {
                files: vec![SourceSet::parse_text(Path::new("src/lib.rs"), text).unwrap()],
            };
            let crds = crds_from_sources(&set).unwrap_or_else(|d| panic!("{f}: {d:?}"));
            let yaml = crate::manifests::yaml::to_yaml(&crds[0].crd).unwrap().len() as u128;
            let bound = bound(&set);
            assert!(bound <= yaml, "{f}: counted {bound} of {yaml} bytes");
            if objects.contains(f) {
                assert!(bound * 4 > yaml, "{f}: counted {bound} of {yaml} bytes");
            }
        }
    }

    /// Thirty levels of every shape are refused before a schema is built, naming the type
    /// copied most and how often.
    #[test]
    fn thirty_levels_of_every_shape_are_refused_unbuilt() {
        for (name, level) in shapes() {
            let set = chain(30, level);
            let diags = crds_from_sources(&set).unwrap_err();
            assert_eq!(diags.len(), 1, "{name}: {diags:?}");
            let d = &diags[0];
            assert_eq!((d.line, d.column), (7, 12), "{name}: {d}");
            assert!(
                d.message
                    .starts_with("the CRD of Thing.t.example.com would be at least ")
                    && d.message.contains(" is inlined "),
                "{name}: {}",
                d.message
            );
        }
        let diags = crds_from_sources(&chain(30, |i, n| {
            format!("{DERIVE} pub struct S{i} {{ pub a: {n}, pub b: {n} }}")
        }))
        .unwrap_err();
        assert_eq!(
            diags[0].message,
            "the CRD of Thing.t.example.com would be at least 1 TiB of YAML: crd() inlines a type's schema at every use, and `S30` (src/lib.rs:9) is inlined 1073741824 times; etcd stores at most 1536 KiB in one request"
        );
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_bytes(1023), "1023 bytes");
        assert_eq!(human_bytes(3 << 20), "3 MiB");
        assert_eq!(human_bytes(u128::MAX), "281474976710655 YiB");
    }
}
