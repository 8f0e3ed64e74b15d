//! rsbuilder: Kubebuilder + controller-gen for operator authors who write Rust on kube-rs.
//!
//! - [`model`]: group/version/kind names, their validation, the PROJECT file.
//! - [`engine`]: the plan-then-apply write engine, the only code that touches project files.
//! - [`scaffold`]: the `init` / `create` / `edit` / `alpha` scaffolds, as plans for the engine.
//! - [`manifests`]: static CRD, RBAC and webhook manifests from Rust sources.
//! - [`cli`]: the command-line interface.

pub mod cli;
pub mod engine;
pub mod manifests;
pub mod model;
pub mod scaffold;
pub mod syntax;
