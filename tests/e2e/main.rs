//! The end-to-end tests: each builds a generated project (minutes of compiling) and runs it, or
//! checks rendered manifests with outside tools. They run under `CI=true` or with
//! `RSBUILDER_E2E=1` (`common::e2e::opted_in`), one at a time: the projects share one target
//! directory and package names. `cargo test --test e2e webhook::` runs one module.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod apiserver;
mod external;
mod init;
mod manifest_validation;
mod multigroup;
mod webhook;
