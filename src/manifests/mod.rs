//! `manifests`: CRDs, RBAC roles and webhook configurations derived statically from Rust
//! sources (syn, never rustc).

pub mod diag;
pub mod source;

pub use diag::{Diagnostic, Diagnostics};
pub use source::{SourceFile, SourceSet};
