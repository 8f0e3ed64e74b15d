//! What `#[derive(JsonSchema)]` (schemars_derive 1.2.3) and kube-derive's `KubeSchema` emit
//! for the user's own structs and enums, computed at rsbuilder's run time on the generator
//! `crd()` uses. Field types that are not the user's (std, serde_json, k8s-openapi) are asked
//! from schemars through [`super::known`].
//!
//! Only the `Deserialize` contract is modelled: it is the one `SchemaSettings::openapi3()`
//! selects, so fields with `skip_deserializing` are left out and `skip_serializing` ones kept.

use std::collections::{BTreeMap, HashMap};

use schemars::SchemaGenerator;
use serde_derive_internals::ast as serde_ast;

use super::known::{self, Eval};
use super::resolve::{Crate, ModId};
use crate::manifests::diag::Diagnostic;

mod container;
mod enums;
mod expansion;
mod mutators;
mod root;
mod schema_fn;
mod sites;
mod structural;
pub(crate) mod transforms;
mod types;
mod x_kube;

pub use container::HAND_WRITTEN;
pub use expansion::{TooLarge, human_bytes};
pub use sites::{Member, TypeKey};
pub use transforms::run_transforms;
pub use x_kube::rule_expr;

/// Type parameter substitutions while expanding a generic type alias.
type Subst = HashMap<String, (ModId, syn::Type)>;

/// Computes schemas of the user's types; collects every diagnostic on the way.
pub struct Deriver<'c, 'a> {
    /// The sources.
    pub krate: &'c Crate<'a>,
    /// The generator, with `crd()`'s settings.
    pub generator: SchemaGenerator,
    /// Problems found.
    pub diags: Vec<Diagnostic>,
    /// Schemas of user types derived so far; a failure keeps its diagnostics, which every later
    /// use records again, so each kind's diagnostics are complete whichever kind came first.
    cache: HashMap<(ModId, String), Result<Eval, Vec<Diagnostic>>>,
    in_progress: Vec<(ModId, String)>,
    /// How many type aliases are being expanded, one inside the other, over the whole
    /// derivation (see [`Deriver::MAX_ALIAS_NESTING`]).
    alias_depth: usize,
    /// Type parameters of the generic user types being derived (innermost last).
    generics: Vec<HashMap<String, Eval>>,
    /// Schemas of parameterless known types (k8s-openapi, primitives), computed once per run:
    /// they depend only on the generator settings.
    leaves: HashMap<String, Eval>,
    /// The source places of each user type's fields and variants (see [`sites`]).
    sites: HashMap<TypeKey, Vec<Member>>,
    /// The records open while deriving.
    rec: Vec<sites::Frame>,
    /// The root object's parts recorded since [`Deriver::take_root_sites`] was last called.
    root_sites: Vec<Member>,
    /// The next user type resolved is the type of a `#[serde(flatten)]` field.
    flatten_next: bool,
    /// The enum being derived is the type of a flattened field: its properties merge into the
    /// enclosing object, which has a `type` of its own (see [`Deriver::enum_schema`]).
    flattened_enum: bool,
    /// Enums on which `crd()`'s transforms panic when the enum's schema is taken alone, each
    /// with the panic message and the diagnostic that names the enum. Whether `crd()` panics
    /// depends on where the enum is used (inside an `Option` or a flattened field it may
    /// not), so these are reported only when the whole kind's transforms panic with the same
    /// message ([`Deriver::transform_panic`]).
    transform_hints: Vec<(String, Diagnostic)>,
    /// The inlined sizes of the user types sized so far (see [`expansion`]).
    expansion: expansion::Expansion,
}

/// A failure already recorded in [`Deriver::diags`].
#[derive(Debug, Clone, Copy)]
pub struct Failed;

type R<T> = Result<T, Failed>;

impl<'c, 'a> Deriver<'c, 'a> {
    /// A deriver over `krate` with kube-derive's generator settings.
    pub fn new(krate: &'c Crate<'a>) -> Self {
        Self {
            krate,
            generator: known::crd_settings().into_generator(),
            diags: Vec::new(),
            cache: HashMap::new(),
            in_progress: Vec::new(),
            alias_depth: 0,
            generics: Vec::new(),
            leaves: HashMap::new(),
            sites: HashMap::new(),
            rec: Vec::new(),
            root_sites: Vec::new(),
            flatten_next: false,
            flattened_enum: false,
            transform_hints: Vec::new(),
            expansion: expansion::Expansion::default(),
        }
    }

    /// Records a diagnostic at `span` in module `m`'s file.
    pub fn error(
        &mut self,
        m: ModId,
        span: proc_macro2::Span,
        msg: impl Into<String>,
        help: Option<String>,
    ) -> Failed {
        let mut d = Diagnostic::at(&self.krate.modules[m].file.path, span, msg);
        d.help = help;
        self.diags.push(d);
        Failed
    }

    /// Records a [`Cause::NeedsCompile`](crate::manifests::diag::Cause::NeedsCompile)
    /// diagnostic: the input is valid Rust that `crd()` handles, but its schema depends on
    /// code rsbuilder does not evaluate statically. Use [`Deriver::error`] for input that
    /// `crd()` itself rejects.
    pub fn undecidable(
        &mut self,
        m: ModId,
        span: proc_macro2::Span,
        msg: impl Into<String>,
        help: Option<String>,
    ) -> Failed {
        let mut d = Diagnostic::at(&self.krate.modules[m].file.path, span, msg).needs_compile();
        d.help = help;
        self.diags.push(d);
        Failed
    }

    /// Records that `crd()`'s transforms panic on the enum `ident`'s schema taken alone, with
    /// `panic` as their message: a diagnostic kept for [`Deriver::transform_panic`].
    pub(super) fn transform_hint(
        &mut self,
        m: ModId,
        span: proc_macro2::Span,
        panic: String,
        msg: impl Into<String>,
        help: Option<String>,
    ) {
        let mut d = Diagnostic::at(&self.krate.modules[m].file.path, span, msg);
        d.help = help;
        self.transform_hints.push((panic, d));
    }

    /// Records the error for a kind on whose whole schema `crd()`'s transforms panic with
    /// `panic`: the diagnostic of the enum that panicked alone with the same message, if one
    /// did ([`Deriver::transform_hint`]), else one at the kind's struct (`m`, `span`).
    pub fn transform_panic(&mut self, m: ModId, span: proc_macro2::Span, panic: &str) -> Failed {
        if let Some((_, d)) = self.transform_hints.iter().find(|(p, _)| p == panic) {
            let d = d.clone();
            if !self.diags.contains(&d) {
                self.diags.push(d);
            }
            return Failed;
        }
        self.error(
            m,
            span,
            format!("kube-derive's crd() panics on this type: {panic}"),
            Some("enum variants must not give the same property different schemas; see docs/attributes.md".into()),
        )
    }

    pub(super) fn syn_error(&mut self, m: ModId, e: syn::Error) -> Failed {
        for one in e {
            let msg = one.to_string();
            self.error(m, one.span(), msg, None);
        }
        Failed
    }
}

/// Field names in declaration order as serde names them (for the defaults module).
pub fn serde_field_names(fields: &[serde_ast::Field]) -> BTreeMap<String, String> {
    fields
        .iter()
        .filter_map(|f| match &f.member {
            syn::Member::Named(i) => {
                Some((i.to_string(), f.attrs.name().serialize_name().to_string()))
            }
            _ => None,
        })
        .collect()
}
