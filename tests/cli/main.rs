//! The command-line tests: every rsbuilder command run in a temporary project (`init`,
//! `create api`, `create webhook`, `create apiserver`, `edit`, `alpha`, markers, write safety,
//! rustfmt, the Grafana dashboards, the tutorial, the line budget). One test binary, one module
//! per former test file: `cargo test --test cli alpha::` runs the `alpha` module.

#[path = "../common/mod.rs"]
mod common;

mod alpha;
mod cli;
mod create_api;
mod create_api_external;
mod create_apiserver;
mod create_webhook;
mod edit;
mod grafana;
mod init;
mod init_rustfmt;
mod line_budget;
mod markers_cli;
mod multigroup;
mod runtime_crate;
mod rustfmt_dir;
mod scenarios;
mod special_files;
mod tutorial;
mod write_safety;
