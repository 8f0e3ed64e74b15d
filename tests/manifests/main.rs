//! The `rsbuilder manifests` tests: the command line, the refusals, the cargo probe, the
//! conformance cases against kube-derive, the differential generator, and real-world crates
//! and CRDs. One test binary, one module per former test file:
//! `cargo test --test manifests conformance::` runs the `conformance` module.

#[path = "../common/mod.rs"]
mod common;
mod support;

mod cli;
mod conformance;
mod corpus;
mod corpus_crates;
mod difftest;
mod probe;
mod refusals;
