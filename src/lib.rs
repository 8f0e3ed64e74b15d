//! rsbuilder: Kubebuilder + controller-gen for operator authors who write Rust on kube-rs.
//!
//! - [`model`]: group/version/kind names, their validation, the PROJECT file.
//! - [`scaffold`]: the plan-then-apply engine and the `init` / `create` scaffolds.
//! - [`manifests`]: static CRD, RBAC and webhook manifests from Rust sources.
//! - [`cli`]: the command-line interface.

pub mod cli;
pub mod manifests;
pub mod model;
pub mod scaffold;
