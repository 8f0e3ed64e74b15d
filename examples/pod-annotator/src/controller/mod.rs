//! Controllers, one module per watched kind, each with `reconcile`, `error_policy` and `run`.
//!
//! `rsbuilder create api` adds the modules of new controllers above the marker below; the
//! manager starts each `run` from `src/main.rs`.

pub mod pod_controller;
// +kubebuilder:scaffold:controller-modules
