//! The API types this project defines (its custom resources), one module per version.
//!
//! `rsbuilder create api` adds a `pub mod <version>;` line above the marker below.

// +kubebuilder:scaffold:api-versions
