// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The machinery every rsbuilder operator shares, written and tested once in rsbuilder's
//! repository and copied into a generated project as tool-owned files (docs/runtime.md):
//!
//! - [`manager`]: the manager's flags, the [`manager::Manager`] handle controllers and
//!   webhooks receive, and the [`manager::Runner`] (API server connection, leader election,
//!   signals, shutdown order).
//! - [`metrics`]: reconcile metrics, `/metrics` over HTTPS behind TokenReview and
//!   SubjectAccessReview, and the health probes.
//! - [`controller`]: the [`controller::Reconciler`] trait a project implements per kind, and
//!   [`controller::run`]: finalizer, 409/404/backoff policy, cleanup once, events, Ready.
//! - [`routes`]: the path table the manager's HTTP servers answer with, on plain hyper.
//! - [`tls`]: HTTPS serving over rustls, with a certificate read from a directory (and
//!   re-read when it changes) or a self-signed one.
//! - `testing` (feature `testing`): an in-process Kubernetes API for a project's controller
//!   and webhook tests, or envtest's binaries, or a real cluster (docs/testing.md).
//! - [`webhook`]: the admission (defaulting, validating) and conversion webhook server, and
//!   the traits a kind's webhooks implement.
//! - `apiserver` (feature `apiserver`): an aggregated Kubernetes API server for kinds defined
//!   as Rust types (docs/apiserver.md).

#[cfg(feature = "apiserver")]
pub mod apiserver;
pub mod controller;
pub mod manager;
pub mod metrics;
pub mod routes;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tls;
pub mod webhook;

pub use manager::{Args, Manager, Options, Runner};

/// The HTTP framework the aggregated API server serves with, re-exported so a project's own
/// routes (an extra endpoint beside the aggregated API, `ApiServer::serve`'s router) use the
/// same version without a dependency of their own.
#[cfg(feature = "apiserver")]
pub use axum;
/// Re-exported for the metric types a project registers with
/// [`metrics::Metrics::register`] (`prometheus_client::metrics::counter::Counter`, ...), in the
/// version the runtime encodes.
pub use prometheus_client;
/// Re-exported for `tokio_util::sync::CancellationToken`, the shutdown signal the runtime's
/// servers take.
pub use tokio_util;
