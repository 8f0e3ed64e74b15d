//! `manifests`: CRDs, RBAC roles and webhook configurations derived statically from Rust
//! sources (syn, never rustc).

pub mod cfg;
pub mod compare;
pub mod crd;
pub mod dangerous;
pub mod diag;
mod gate;
pub mod generate;
pub mod lint;
pub mod macro_kinds;
pub mod markers;
pub mod modtree;
pub mod parse;
pub mod probe;
pub mod rbac;
pub mod run;
pub mod source;
pub mod stale;
pub mod versions;
pub mod webhook;
pub mod yaml;

pub use crd::{GeneratedCrd, crds_from_sources};
pub use diag::{Diagnostic, Diagnostics};
pub use run::{Report, Settings, run};
pub use source::{SourceFile, SourceSet};
