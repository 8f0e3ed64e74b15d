//! Types whose schema rsbuilder asks schemars for instead of emulating it: primitives, std
//! containers and wrappers, serde_json, kube-core's `Duration`, every k8s-openapi type
//! (feature `v1_37`) and the third-party types schemars' optional features cover (chrono,
//! jiff, url, uuid, semver, rust_decimal, bigdecimal, indexmap, either, bytes, smol_str,
//! arrayvec, smallvec; see [`third_party_generic`] and the leaf table). Their `JsonSchema`
//! impls are called on the same `SchemaGenerator` settings `crd()` uses.
//!
//! Generic containers (`Option<T>`, `Vec<T>`, `BTreeMap<K, V>`, tuples, arrays, …) compose
//! with the user's own types through [`Hole`]: a placeholder `JsonSchema` type whose schema is
//! whatever rsbuilder computed for the type argument. `Vec<Hole<0>>`'s real impl is called, so
//! the composition is schemars' own (e.g. `Option`'s null handling, map key patterns).

use std::cell::RefCell;

use schemars::{JsonSchema, Schema, SchemaGenerator};

/// A computed schema of a type, with what `#[derive(JsonSchema)]` asks of a field type.
#[derive(Debug, Clone)]
pub struct Eval {
    /// `T::json_schema` / `subschema_for::<T>()`.
    pub schema: Schema,
    /// `T::_schemars_private_non_optional_json_schema` (the inner schema of an `Option`);
    /// `None` when it is `schema` itself (every type but `Option`).
    non_optional: Option<Schema>,
    /// `T::_schemars_private_is_option()`.
    pub is_option: bool,
}

impl Eval {
    /// The schema `#[schemars(required)]` uses: the inner schema of an `Option`.
    pub fn non_optional(&self) -> &Schema {
        self.non_optional.as_ref().unwrap_or(&self.schema)
    }

    /// Takes the schema `#[schemars(required)]` uses.
    pub fn into_non_optional(self) -> Schema {
        self.non_optional.unwrap_or(self.schema)
    }

    /// A plain (non-`Option`) schema.
    pub fn plain(schema: Schema) -> Self {
        Self {
            non_optional: None,
            schema,
            is_option: false,
        }
    }
}

thread_local! {
    static HOLES: RefCell<Vec<Vec<Eval>>> = const { RefCell::new(Vec::new()) };
}

/// Placeholder for the `N`th type argument of a container; see the module docs.
pub struct Hole<const N: usize>;

fn hole<const N: usize, T>(pick: impl FnOnce(&Eval) -> T, missing: T) -> T {
    HOLES.with(|h| {
        h.borrow()
            .last()
            .and_then(|f| f.get(N))
            .map(pick)
            .unwrap_or(missing)
    })
}

impl<const N: usize> JsonSchema for Hole<N> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Hole{N}").into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        format!("rsbuilder::Hole<{N}>").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hole::<N, _>(|e| e.schema.clone(), Schema::default())
    }
    fn _schemars_private_non_optional_json_schema(_: &mut SchemaGenerator) -> Schema {
        hole::<N, _>(|e| e.non_optional().clone(), Schema::default())
    }
    fn _schemars_private_is_option() -> bool {
        hole::<N, _>(|e| e.is_option, false)
    }
}

/// Evaluates `T` with `args` standing in for its [`Hole`]s.
fn with_holes<T: JsonSchema + ?Sized>(g: &mut SchemaGenerator, args: Vec<Eval>) -> Eval {
    HOLES.with(|h| h.borrow_mut().push(args));
    let schema = g.subschema_for::<T>();
    let is_option = T::_schemars_private_is_option();
    // Only `Option` (and what forwards to it) has a non-optional schema of its own.
    let non_optional = is_option.then(|| T::_schemars_private_non_optional_json_schema(g));
    HOLES.with(|h| h.borrow_mut().pop());
    Eval {
        schema,
        non_optional,
        is_option,
    }
}

/// `schemars::_private::json_schema_for_flatten::<T>(generator, required)` for a computed
/// type: the schema a `#[serde(flatten)]` field merges into its struct.
pub fn flatten_with(g: &mut SchemaGenerator, arg: Eval, required: bool) -> Schema {
    HOLES.with(|h| h.borrow_mut().push(vec![arg]));
    let schema = schemars::_private::json_schema_for_flatten::<Hole<0>>(g, required);
    HOLES.with(|h| h.borrow_mut().pop());
    schema
}

/// `schemars::_private::json_schema_for_internally_tagged_enum_newtype_variant::<T>` for a
/// computed type (the newtype variant of an internally tagged enum).
pub fn internal_newtype(g: &mut SchemaGenerator, arg: Eval) -> Schema {
    HOLES.with(|h| h.borrow_mut().push(vec![arg]));
    let schema =
        schemars::_private::json_schema_for_internally_tagged_enum_newtype_variant::<Hole<0>>(g);
    HOLES.with(|h| h.borrow_mut().pop());
    schema
}

/// Calls schemars for a container applied to already computed type arguments.
pub type ContainerFn = fn(&mut SchemaGenerator, Vec<Eval>) -> Eval;
/// Calls schemars for a type without parameters.
pub type LeafFn = fn(&mut SchemaGenerator) -> Eval;

fn leaf<T: JsonSchema + ?Sized>(g: &mut SchemaGenerator) -> Eval {
    with_holes::<T>(g, Vec::new())
}

type H0 = Hole<0>;
type H1 = Hole<1>;
type H2 = Hole<2>;
type H3 = Hole<3>;
type H4 = Hole<4>;
type H5 = Hole<5>;
type H6 = Hole<6>;
type H7 = Hole<7>;

/// How a generic type outside the sources is handled.
#[derive(Clone, Copy)]
pub enum Generic {
    /// Pure forwarding wrapper (`Box`, `Arc`, `Rc`, `Cell`, `Mutex`, `Cow`, …): the schema of
    /// its argument, exactly as schemars' `forward_impl!` does.
    Forward,
    /// A container whose schemars impl is called with holes; the number of type arguments.
    Container(usize, ContainerFn),
    /// A type whose schemars impl does not look at its arguments (chrono's `DateTime<Tz>`,
    /// arrayvec's `ArrayString<CAP>`): the schema of one instance.
    Fixed(LeafFn),
    /// smallvec's `SmallVec<[T; N]>`: composed over the element type `T` of its array.
    ArrayElement(ContainerFn),
    /// arrayvec's `ArrayVec<T, CAP>`: composed over `T`, with the capacity `CAP`.
    Capped(CappedFn),
}

/// Calls schemars for a container of one computed type argument and a capacity.
pub type CappedFn = fn(&mut SchemaGenerator, Eval, u64) -> Eval;

macro_rules! std_generics {
    ($( [$($name:literal),+] => $kind:expr ),* $(,)?) => {
        /// The schemars impl of a generic std type, by normalised path (see
        /// [`normalize_external`]).
        pub fn std_generic(path: &str) -> Option<Generic> {
            match path {
                $( $( $name )|+ => Some($kind), )*
                _ => None,
            }
        }
    };
}

std_generics! {
    ["std::boxed::Box", "std::rc::Rc", "std::sync::Arc", "std::rc::Weak", "std::sync::Weak",
     "std::sync::Mutex", "std::sync::RwLock", "std::cell::Cell", "std::cell::RefCell",
     "std::borrow::Cow", "std::num::Wrapping", "std::cmp::Reverse"] => Generic::Forward,
    ["std::option::Option"] => Generic::Container(1, with_holes::<Option<H0>>),
    ["std::vec::Vec"] => Generic::Container(1, with_holes::<Vec<H0>>),
    ["std::collections::VecDeque", "std::collections::vec_deque::VecDeque"] =>
        Generic::Container(1, with_holes::<std::collections::VecDeque<H0>>),
    ["std::collections::LinkedList", "std::collections::linked_list::LinkedList"] =>
        Generic::Container(1, with_holes::<std::collections::LinkedList<H0>>),
    ["std::collections::BinaryHeap", "std::collections::binary_heap::BinaryHeap"] =>
        Generic::Container(1, with_holes::<std::collections::BinaryHeap<H0>>),
    ["std::collections::BTreeSet", "std::collections::btree_set::BTreeSet"] =>
        Generic::Container(1, with_holes::<std::collections::BTreeSet<H0>>),
    ["std::collections::HashSet", "std::collections::hash_set::HashSet"] =>
        Generic::Container(1, with_holes::<std::collections::HashSet<H0>>),
    ["std::collections::BTreeMap", "std::collections::btree_map::BTreeMap"] =>
        Generic::Container(2, with_holes::<std::collections::BTreeMap<H0, H1>>),
    ["std::collections::HashMap", "std::collections::hash_map::HashMap"] =>
        Generic::Container(2, with_holes::<std::collections::HashMap<H0, H1>>),
    ["std::result::Result"] => Generic::Container(2, with_holes::<Result<H0, H1>>),
    ["std::ops::Range"] => Generic::Container(1, with_holes::<std::ops::Range<H0>>),
    ["std::ops::RangeInclusive"] =>
        Generic::Container(1, with_holes::<std::ops::RangeInclusive<H0>>),
    ["std::ops::Bound"] => Generic::Container(1, with_holes::<std::ops::Bound<H0>>),
    ["std::marker::PhantomData"] => Generic::Container(1, |g, _| leaf::<()>(g)),
}

/// The schemars impl of a generic third-party type, by normalised path (see
/// [`normalize_external`]).
pub fn third_party_generic(path: &str) -> Option<Generic> {
    Some(match path {
        "chrono::DateTime" => Generic::Fixed(leaf::<chrono::DateTime<chrono::Utc>>),
        "indexmap::IndexMap" => Generic::Container(
            2,
            with_holes::<indexmap::IndexMap<H0, H1, std::hash::RandomState>>,
        ),
        "indexmap::IndexSet" => Generic::Container(
            1,
            with_holes::<indexmap::IndexSet<H0, std::hash::RandomState>>,
        ),
        "either::Either" => Generic::Container(2, with_holes::<either::Either<H0, H1>>),
        "smallvec::SmallVec" => Generic::ArrayElement(with_holes::<smallvec::SmallVec<[H0; 1]>>),
        "arrayvec::ArrayVec" => Generic::Capped(array_vec),
        "arrayvec::ArrayString" => Generic::Fixed(leaf::<arrayvec::ArrayString<1>>),
        _ => return None,
    })
}

/// `ArrayVec<T, CAP>`: schemars' impl for capacity 0, whose only use of `CAP` is `maxItems`
/// (a test compares it with the real impl at other capacities).
fn array_vec(g: &mut SchemaGenerator, item: Eval, cap: u64) -> Eval {
    let mut e = with_holes::<arrayvec::ArrayVec<H0, 0>>(g, vec![item]);
    e.schema.insert("maxItems".into(), cap.into());
    e
}

/// Generic types, std's or a third-party crate's.
pub fn generic(path: &str) -> Option<Generic> {
    std_generic(path).or_else(|| third_party_generic(path))
}

/// Public paths of third-party types other than the one [`leaf_type`] and
/// [`third_party_generic`] know them by (preludes, the modules that define them, aliases).
const THIRD_PARTY_ALIASES: &[(&str, &str)] = &[
    ("chrono::prelude::DateTime", "chrono::DateTime"),
    ("chrono::prelude::NaiveDate", "chrono::NaiveDate"),
    ("chrono::naive::NaiveDate", "chrono::NaiveDate"),
    ("chrono::prelude::NaiveDateTime", "chrono::NaiveDateTime"),
    ("chrono::naive::NaiveDateTime", "chrono::NaiveDateTime"),
    ("chrono::prelude::NaiveTime", "chrono::NaiveTime"),
    ("chrono::naive::NaiveTime", "chrono::NaiveTime"),
    ("chrono::prelude::Weekday", "chrono::Weekday"),
    ("chrono::Duration", "chrono::TimeDelta"),
    ("rust_decimal::prelude::Decimal", "rust_decimal::Decimal"),
    ("indexmap::map::IndexMap", "indexmap::IndexMap"),
    ("indexmap::set::IndexSet", "indexmap::IndexSet"),
];

/// The path rsbuilder knows a third-party type by, for one of its other public paths.
pub fn third_party_alias(path: &str) -> Option<&'static str> {
    THIRD_PARTY_ALIASES
        .iter()
        .find(|(from, _)| *from == path)
        .map(|(_, to)| *to)
}

/// `serde_json::Map<K, V>`: schemars implements `Map<String, Value>` only.
const SERDE_JSON_MAP: &str = "serde_json::Map";

/// The schemars impl of a tuple of `n` elements (1 to 8).
pub fn tuple(n: usize) -> Option<ContainerFn> {
    Some(match n {
        1 => with_holes::<(H0,)>,
        2 => with_holes::<(H0, H1)>,
        3 => with_holes::<(H0, H1, H2)>,
        4 => with_holes::<(H0, H1, H2, H3)>,
        5 => with_holes::<(H0, H1, H2, H3, H4)>,
        6 => with_holes::<(H0, H1, H2, H3, H4, H5)>,
        7 => with_holes::<(H0, H1, H2, H3, H4, H5, H6)>,
        8 => with_holes::<(H0, H1, H2, H3, H4, H5, H6, H7)>,
        _ => return None,
    })
}

/// The schemars impl of `[T]` (slices, `Box<[T]>`).
pub fn slice() -> ContainerFn {
    with_holes::<[H0]>
}

macro_rules! arrays {
    ($($n:literal)+) => {
        /// The schemars impl of `[T; n]` (0 to 32, as schemars implements).
        pub fn array(n: usize) -> Option<ContainerFn> {
            Some(match n {
                $( $n => with_holes::<[H0; $n]>, )+
                _ => return None,
            })
        }
    };
}
arrays!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);

macro_rules! leaves {
    ($( $name:literal => $ty:ty ),* $(,)?) => {
        fn std_leaf(path: &str) -> Option<LeafFn> {
            match path {
                $( $name => Some(leaf::<$ty> as LeafFn), )*
                _ => None,
            }
        }
    };
}

leaves! {
    "bool" => bool, "char" => char, "str" => str,
    "i8" => i8, "i16" => i16, "i32" => i32, "i64" => i64, "i128" => i128, "isize" => isize,
    "u8" => u8, "u16" => u16, "u32" => u32, "u64" => u64, "u128" => u128, "usize" => usize,
    "f32" => f32, "f64" => f64, "()" => (),
    "std::string::String" => String,
    "std::num::NonZeroI8" => std::num::NonZeroI8, "std::num::NonZeroI16" => std::num::NonZeroI16,
    "std::num::NonZeroI32" => std::num::NonZeroI32, "std::num::NonZeroI64" => std::num::NonZeroI64,
    "std::num::NonZeroI128" => std::num::NonZeroI128, "std::num::NonZeroIsize" => std::num::NonZeroIsize,
    "std::num::NonZeroU8" => std::num::NonZeroU8, "std::num::NonZeroU16" => std::num::NonZeroU16,
    "std::num::NonZeroU32" => std::num::NonZeroU32, "std::num::NonZeroU64" => std::num::NonZeroU64,
    "std::num::NonZeroU128" => std::num::NonZeroU128, "std::num::NonZeroUsize" => std::num::NonZeroUsize,
    "std::path::PathBuf" => std::path::PathBuf, "std::path::Path" => std::path::Path,
    "std::net::IpAddr" => std::net::IpAddr, "std::net::Ipv4Addr" => std::net::Ipv4Addr,
    "std::net::Ipv6Addr" => std::net::Ipv6Addr, "std::net::SocketAddr" => std::net::SocketAddr,
    "std::net::SocketAddrV4" => std::net::SocketAddrV4, "std::net::SocketAddrV6" => std::net::SocketAddrV6,
    "std::time::Duration" => std::time::Duration, "std::time::SystemTime" => std::time::SystemTime,
    "std::ffi::OsString" => std::ffi::OsString, "std::ffi::CString" => std::ffi::CString,
    "std::sync::atomic::AtomicBool" => std::sync::atomic::AtomicBool,
    "std::sync::atomic::AtomicI32" => std::sync::atomic::AtomicI32,
    "std::sync::atomic::AtomicI64" => std::sync::atomic::AtomicI64,
    "std::sync::atomic::AtomicU32" => std::sync::atomic::AtomicU32,
    "std::sync::atomic::AtomicU64" => std::sync::atomic::AtomicU64,
    "serde_json::Value" => serde_json::Value, "serde_json::value::Value" => serde_json::Value,
    "serde_json::Map" => serde_json::Map<String, serde_json::Value>,
    "serde_json::value::Map" => serde_json::Map<String, serde_json::Value>,
    "serde_json::Number" => serde_json::Number, "serde_json::value::Number" => serde_json::Number,
    "kube_core::Duration" => kube_core::Duration,
}

macro_rules! third_party_leaves {
    (
        $( $name:literal => $ty:ty, )*
        schema only: $( $sname:literal => $sty:ty, )*
    ) => {
        /// Every third-party leaf type, for tests.
        #[cfg(test)]
        const THIRD_PARTY_LEAVES: &[&str] = &[$( $name, )* $( $sname, )*];

        fn third_party_leaf(path: &str) -> Option<LeafFn> {
            match path {
                $( $name => Some(leaf::<$ty> as LeafFn), )*
                $( $sname => Some(leaf::<$sty> as LeafFn), )*
                _ => None,
            }
        }

        /// The serialized `Default::default()` of a third-party leaf type, computed by the real
        /// crate; `None` for a type without `Default` or `Serialize` here, and for the
        /// schema-only ones.
        fn third_party_default(path: &str) -> Option<serde_json::Value> {
            match path {
                $( $name => {
                    #[allow(unused_imports)]
                    use NoDefault as _;
                    DefaultOf::<$ty>(std::marker::PhantomData).get()
                } )*
                _ => None,
            }
        }
    };
}

third_party_leaves! {
    "chrono::NaiveDate" => chrono::NaiveDate,
    "chrono::NaiveDateTime" => chrono::NaiveDateTime,
    "chrono::NaiveTime" => chrono::NaiveTime,
    "chrono::Weekday" => chrono::Weekday,
    "chrono::TimeDelta" => chrono::TimeDelta,
    "jiff::Timestamp" => jiff::Timestamp,
    "jiff::Zoned" => jiff::Zoned,
    "jiff::Span" => jiff::Span,
    "jiff::SignedDuration" => jiff::SignedDuration,
    "jiff::civil::Date" => jiff::civil::Date,
    "jiff::civil::Time" => jiff::civil::Time,
    "jiff::civil::DateTime" => jiff::civil::DateTime,
    "url::Url" => url::Url,
    "uuid::Uuid" => uuid::Uuid,
    "semver::Version" => semver::Version,
    "bytes::Bytes" => bytes::Bytes,
    "bytes::BytesMut" => bytes::BytesMut,
    "smol_str::SmolStr" => smol_str::SmolStr,
    schema only:
    // How these serialize depends on the user's features of their crates (`serde-float`,
    // `serde-with-arbitrary-precision`, …), which rsbuilder does not see: no default.
    "rust_decimal::Decimal" => rust_decimal::Decimal,
    // schemars gives BigDecimal the impl it gives rust_decimal's Decimal (one macro for
    // both); linking bigdecimal would add num-bigint to rsbuilder's build for nothing else.
    // The conformance fixtures compile the real type.
    "bigdecimal::BigDecimal" => rust_decimal::Decimal,
}

/// The serialized `Default` of a type, when it has one (autoref specialization: the inherent
/// method wins when `T: Default + Serialize`).
struct DefaultOf<T>(std::marker::PhantomData<T>);
trait NoDefault {
    fn get(&self) -> Option<serde_json::Value> {
        None
    }
}
impl<T> NoDefault for DefaultOf<T> {}
impl<T: Default + serde::Serialize> DefaultOf<T> {
    fn get(&self) -> Option<serde_json::Value> {
        serde_json::to_value(T::default()).ok()
    }
}

macro_rules! k8s_types {
    ($($($seg:ident)::+),* $(,)?) => {
        /// Every listed path, for tests.
        #[cfg(test)]
        const K8S_TYPES: &[&str] = &[$( concat!("k8s_openapi", $("::", stringify!($seg)),+) ),*];

        /// The schemars impl of a k8s-openapi type, by normalised path (a `match` the compiler
        /// turns into a lookup: nothing to build at start-up).
        fn k8s_leaf(path: &str) -> Option<LeafFn> {
            match path {
                $( concat!("k8s_openapi", $("::", stringify!($seg)),+) =>
                    Some(leaf::<k8s_openapi::$($seg)::+> as LeafFn), )*
                _ => None,
            }
        }

        /// The serialized `Default::default()` of a k8s-openapi type; `None` for an unknown
        /// path and for a type without `Default`. Computed on demand.
        fn k8s_default(path: &str) -> Option<serde_json::Value> {
            match path {
                $( concat!("k8s_openapi", $("::", stringify!($seg)),+) => {
                    #[allow(unused_imports)]
                    use NoDefault as _;
                    DefaultOf::<k8s_openapi::$($seg)::+>(std::marker::PhantomData).get()
                } )*
                _ => None,
            }
        }
    };
}

include!("k8s_types.in");

/// The schemars impl of a type without type parameters, by normalised path.
pub fn leaf_type(path: &str) -> Option<LeafFn> {
    std_leaf(path)
        .or_else(|| k8s_leaf(path))
        .or_else(|| third_party_leaf(path))
}

/// The serialized `Default::default()` of a k8s-openapi or third-party leaf type, computed
/// with the real crate; `None` for an unknown path, a type without `Default`, and a type whose
/// serialization depends on features of the user's build.
pub fn external_default(path: &str) -> Option<serde_json::Value> {
    k8s_default(path).or_else(|| third_party_default(path))
}

/// Normalises an external path: `core::`/`alloc::` become `std::`, and well-known re-exports
/// map to the path of the type they re-export.
pub fn normalize_external(p: &str) -> String {
    let p = p.trim_start_matches("::");
    let p = if let Some(rest) = p.strip_prefix("core::") {
        format!("std::{rest}")
    } else if let Some(rest) = p.strip_prefix("alloc::") {
        format!("std::{rest}")
    } else {
        p.to_string()
    };
    const META: &str = "k8s_openapi::apimachinery::pkg::apis::meta::v1";
    for (from, to) in [
        ("kube::core::ObjectMeta", format!("{META}::ObjectMeta")),
        ("kube::api::ObjectMeta", format!("{META}::ObjectMeta")),
        ("kube_core::ObjectMeta", format!("{META}::ObjectMeta")),
        (
            "kube::core::metadata::ObjectMeta",
            format!("{META}::ObjectMeta"),
        ),
        ("kube::core::ListMeta", format!("{META}::ListMeta")),
        ("kube_core::ListMeta", format!("{META}::ListMeta")),
        ("kube::core::Duration", "kube_core::Duration".to_string()),
        (
            "kube::core::duration::Duration",
            "kube_core::Duration".to_string(),
        ),
        (
            "kube_core::duration::Duration",
            "kube_core::Duration".to_string(),
        ),
        ("kube::api::Duration", "kube_core::Duration".to_string()),
    ] {
        if p == from {
            return to;
        }
    }
    if let Some(to) = third_party_alias(&p) {
        return to.to_string();
    }
    if let Some(rest) = p.strip_prefix("kube::k8s_openapi::") {
        return format!("k8s_openapi::{rest}");
    }
    if let Some(rest) = p.strip_prefix("kube::api::k8s_openapi::") {
        return format!("k8s_openapi::{rest}");
    }
    p
}

/// Whether `path` names a type rsbuilder knows outside the sources (for glob imports such as
/// `use k8s_openapi::api::core::v1::*`).
pub fn is_known_external(path: &str) -> bool {
    let p = normalize_external(path);
    leaf_type(&p).is_some() || generic(&p).is_some() || p == SERDE_JSON_MAP
}

/// The settings kube-derive's `crd()` builds its generator with: OpenAPI 3, inlined
/// subschemas, no meta schema, then `AddNullable`, `StructuralSchemaRewriter`, `OptionalEnum`
/// and `OptionalIntOrString`.
pub fn crd_settings() -> schemars::generate::SchemaSettings {
    crd_settings_with(kube_core::schema::StructuralSchemaRewriter)
}

/// [`crd_settings`] with `rewriter` in the place of kube-core's `StructuralSchemaRewriter`
/// (for an equivalent that does the same work in less time).
pub fn crd_settings_with(
    rewriter: impl schemars::transform::Transform + Clone + Send + 'static,
) -> schemars::generate::SchemaSettings {
    schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(rewriter)
        .with_transform(kube_core::schema::OptionalEnum)
        .with_transform(kube_core::schema::OptionalIntOrString)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_compose_with_schemars_impls() {
        let mut g = crd_settings().into_generator();
        let inner = leaf_type("i32").unwrap()(&mut g);
        let opt = match std_generic("std::option::Option").unwrap() {
            Generic::Container(1, f) => f(&mut g, vec![inner.clone()]),
            _ => unreachable!(),
        };
        assert!(opt.is_option);
        assert_eq!(*opt.non_optional(), inner.schema);
        assert_eq!(
            opt.schema.clone().to_value(),
            serde_json::json!({"type": ["integer", "null"], "format": "int32"})
        );
        let string = leaf_type("std::string::String").unwrap()(&mut g);
        let map = match std_generic("std::collections::BTreeMap").unwrap() {
            Generic::Container(2, f) => f(&mut g, vec![string, opt]),
            _ => unreachable!(),
        };
        assert_eq!(
            map.schema.to_value(),
            serde_json::json!({"type": "object", "additionalProperties": {"type": ["integer", "null"], "format": "int32"}})
        );
    }

    #[test]
    fn k8s_types_are_listed() {
        assert!(leaf_type("k8s_openapi::api::core::v1::ResourceRequirements").is_some());
        assert!(leaf_type("k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition").is_some());
        assert!(leaf_type("k8s_openapi::apimachinery::pkg::util::intstr::IntOrString").is_some());
        assert!(is_known_external(
            "k8s_openapi::apimachinery::pkg::api::resource::Quantity"
        ));
        assert!(K8S_TYPES.len() > 760, "{}", K8S_TYPES.len());
        for path in K8S_TYPES {
            assert!(leaf_type(path).is_some(), "{path}");
        }
        assert_eq!(
            leaf_type("k8s_openapi::api::core::v1::NoSuchType").map(|_| ()),
            None
        );
    }

    #[test]
    fn k8s_defaults_are_computed_on_demand() {
        assert_eq!(
            external_default("k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta"),
            Some(serde_json::json!({}))
        );
        assert_eq!(
            external_default("k8s_openapi::apimachinery::pkg::api::resource::Quantity"),
            Some(serde_json::json!(""))
        );
        assert_eq!(
            external_default("k8s_openapi::api::core::v1::NoSuchType"),
            None
        );
    }

    fn value(e: Eval) -> serde_json::Value {
        e.schema.to_value()
    }

    #[test]
    fn third_party_types_are_schemars_own() {
        let mut g = crd_settings().into_generator();
        for path in THIRD_PARTY_LEAVES {
            assert!(leaf_type(path).is_some(), "{path}");
            assert!(is_known_external(path), "{path}");
        }
        assert_eq!(
            value(leaf_type("uuid::Uuid").unwrap()(&mut g)),
            serde_json::json!({"type": "string", "format": "uuid"})
        );
        let dt = match generic("chrono::DateTime").unwrap() {
            Generic::Fixed(f) => value(f(&mut g)),
            _ => unreachable!(),
        };
        assert_eq!(
            dt,
            g.subschema_for::<chrono::DateTime<chrono::FixedOffset>>()
                .to_value()
        );
        assert_eq!(
            dt,
            serde_json::json!({"type": "string", "format": "date-time"})
        );
        // Other public paths reach the same types.
        assert!(is_known_external("chrono::prelude::DateTime"));
        assert!(is_known_external("chrono::naive::NaiveDate"));
        assert!(is_known_external("indexmap::map::IndexMap"));
        assert!(!is_known_external("chrono::NoSuchType"));
    }

    #[test]
    fn third_party_containers_compose_with_computed_arguments() {
        let mut g = crd_settings().into_generator();
        let string = leaf_type("std::string::String").unwrap()(&mut g);
        let int = leaf_type("i32").unwrap()(&mut g);
        let container = |g: &mut SchemaGenerator, path: &str, args: Vec<Eval>| match generic(path) {
            Some(Generic::Container(_, f) | Generic::ArrayElement(f)) => value(f(g, args)),
            _ => panic!("{path}"),
        };
        assert_eq!(
            container(
                &mut g,
                "indexmap::IndexMap",
                vec![string.clone(), int.clone()]
            ),
            g.subschema_for::<indexmap::IndexMap<String, i32, std::hash::RandomState>>()
                .to_value()
        );
        assert_eq!(
            container(&mut g, "indexmap::IndexSet", vec![int.clone()]),
            g.subschema_for::<std::collections::BTreeSet<i32>>()
                .to_value()
        );
        assert_eq!(
            container(&mut g, "either::Either", vec![string.clone(), int.clone()]),
            g.subschema_for::<either::Either<String, i32>>().to_value()
        );
        assert_eq!(
            container(&mut g, "smallvec::SmallVec", vec![int.clone()]),
            g.subschema_for::<smallvec::SmallVec<[i32; 4]>>().to_value()
        );
        let Some(Generic::Capped(capped)) = generic("arrayvec::ArrayVec") else {
            panic!("ArrayVec");
        };
        assert_eq!(
            value(capped(&mut g, string.clone(), 5)),
            g.subschema_for::<arrayvec::ArrayVec<String, 5>>()
                .to_value()
        );
        assert_eq!(
            value(capped(&mut g, int, 300)),
            g.subschema_for::<arrayvec::ArrayVec<i32, 300>>().to_value()
        );
        let Some(Generic::Fixed(array_string)) = generic("arrayvec::ArrayString") else {
            panic!("ArrayString");
        };
        assert_eq!(
            value(array_string(&mut g)),
            g.subschema_for::<arrayvec::ArrayString<64>>().to_value()
        );
    }

    #[test]
    fn third_party_defaults_are_the_crates_own_serialization() {
        assert_eq!(
            external_default("uuid::Uuid"),
            Some(serde_json::json!("00000000-0000-0000-0000-000000000000"))
        );
        assert_eq!(
            external_default("chrono::NaiveDate"),
            Some(serde_json::json!("1970-01-01"))
        );
        assert_eq!(
            external_default("jiff::Timestamp"),
            Some(serde_json::json!("1970-01-01T00:00:00Z"))
        );
        assert_eq!(
            external_default("smol_str::SmolStr"),
            Some(serde_json::json!(""))
        );
        assert_eq!(
            external_default("bytes::Bytes"),
            Some(serde_json::json!([]))
        );
        // No Default: refused, not guessed.
        assert_eq!(external_default("url::Url"), None);
        assert_eq!(external_default("chrono::Weekday"), None);
        // Serialization chosen by the user's features of the crate.
        assert_eq!(external_default("rust_decimal::Decimal"), None);
        assert_eq!(external_default("bigdecimal::BigDecimal"), None);
    }
}
