//! Admission and conversion webhooks, one module per API version. The server that answers
//! the API server's reviews is the runtime's (`rsbuilder_runtime::webhook`, tool-owned);
//! `src/main.rs` registers each kind's webhooks with it.
//!
//! `rsbuilder create webhook` adds the modules of new versions above the marker below.

// +kubebuilder:scaffold:webhook-modules
