//! The test cluster (feature `testing`): the in-process cluster, a controller loop on it, and
//! the envtest path with stand-in binaries. One test binary:
//! `cargo test -p rsbuilder-runtime --features testing --test testing cluster::` runs one module.

#[path = "../../../tests/common/outside_tools.rs"]
mod common;

mod cluster;
mod controller;
mod envtest;
