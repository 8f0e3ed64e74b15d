//! The aggregated API server (feature `apiserver`) from outside: admission, authentication and
//! authorization, limits, and real clients (kubectl, the Python client). One test binary:
//! `cargo test -p rsbuilder-runtime --features apiserver --test apiserver kubectl::` runs one
//! module.

#[path = "../../../tests/common/outside_tools.rs"]
mod common;

mod admission;
mod auth;
mod kubectl;
mod limits;
