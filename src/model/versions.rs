//! The crate versions rsbuilder is built with: those a scaffolded project depends on, and
//! those whose `crd()` static evaluation reproduces ([`crate::manifests::versions`]).

/// kube version requirement written into generated Cargo.toml files.
pub const KUBE: &str = "5";
/// k8s-openapi version requirement written into generated Cargo.toml files.
pub const K8S_OPENAPI: &str = "0.29";
/// The Kubernetes version feature of k8s-openapi that generated projects select; rsbuilder
/// itself links k8s-openapi with the same feature so inlined types match.
pub const K8S_FEATURE: &str = "v1_37";
/// schemars version requirement.
pub const SCHEMARS: &str = "1";

/// The repository's own lock file, as rsbuilder was built with it: the versions a new
/// project's `Cargo.lock` pins ([`crate::scaffold::lockfile`]) and those static evaluation
/// reproduces.
pub const fn repository_lock() -> &'static str {
    include_str!("../../Cargo.lock")
}
