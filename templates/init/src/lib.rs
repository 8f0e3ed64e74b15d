{{ p.rust_header }}//! {{ p.project_name }}: a Kubernetes operator written in Rust on kube-rs, scaffolded by rsbuilder.
//!
//! - [`manager`]: the manager's flags, the [`manager::Manager`] handle every controller
//!   receives, reconcile metrics, and the metrics and health endpoints.
//! - [`tls`]: HTTPS for the metrics endpoint (a certificate directory or a self-signed
//!   certificate).
//!
//! `rsbuilder create api` adds the `api` (custom resource types) and `controller` modules;
//! `rsbuilder create webhook` adds `webhook`.

pub mod manager;
pub mod tls;
// +kubebuilder:scaffold:modules
