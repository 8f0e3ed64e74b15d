// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Field ownership for server-side apply, as structured-merge-diff tracks it (docs/apiserver.md).
//!
//! - [`apply`]: the merge of an applied configuration, the comparison of two objects, pruning;
//! - [`conflicts`]: the fields an apply would take from another manager, printed as kube does;
//! - [`fields`]: the fields an object sets, read against its schema (list and map types);
//! - [`fieldset`]: sets of field paths and their `FieldsV1` encoding in `metadata.managedFields`;
//! - [`managed`]: the `managedFields` entries, kept on every write and by apply;
//! - [`manager`]: field manager names (the `fieldManager` checks, the `User-Agent` default).

pub mod apply;
pub mod conflicts;
pub mod fields;
pub mod fieldset;
pub mod managed;
pub mod manager;
