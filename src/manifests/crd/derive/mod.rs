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
mod mutators;
mod root;
mod schema_fn;
mod transforms;
mod types;
mod x_kube;

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
    /// Type parameters of the generic user types being derived (innermost last).
    generics: Vec<HashMap<String, Eval>>,
    /// Schemas of parameterless known types (k8s-openapi, primitives), computed once per run:
    /// they depend only on the generator settings.
    leaves: HashMap<String, Eval>,
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
            generics: Vec::new(),
            leaves: HashMap::new(),
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
