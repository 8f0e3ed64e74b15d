// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Field ownership for server-side apply, as structured-merge-diff tracks it (docs/apiserver.md).
//!
//! - [`conflicts`]: the fields an apply would take from another manager, printed as kube does;
//! - [`fields`]: the fields an object sets, read against its schema (list and map types);
//! - [`fieldset`]: sets of field paths and their `FieldsV1` encoding in `metadata.managedFields`.

pub mod conflicts;
pub mod fields;
pub mod fieldset;
