//! Controllers, one module per watched kind, each implementing the runtime's `Reconciler`.
//!
//! `rsbuilder create api` adds the modules of new controllers above the marker below; the
//! manager starts each one from `src/main.rs`.

// +kubebuilder:scaffold:controller-modules
