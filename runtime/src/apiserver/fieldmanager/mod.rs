// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Field ownership for server-side apply, as structured-merge-diff tracks it (docs/apiserver.md).
//!
//! - [`fields`]: the fields an object sets, read against its schema (list and map types);
//! - [`fieldset`]: sets of field paths and their `FieldsV1` encoding in `metadata.managedFields`.

pub mod fields;
pub mod fieldset;
