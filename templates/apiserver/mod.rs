//! The kinds this project serves from its own aggregated API server (`src/bin/apiserver.rs`),
//! one module per version.
//!
//! `rsbuilder create apiserver` adds a `pub mod <version>;` line above the marker below.

// +kubebuilder:scaffold:apiserver-versions
