{{ p.rust_header }}//! {{ p.project_name }}: a Kubernetes operator written in Rust on kube-rs, scaffolded by rsbuilder.
//!
//! The manager, its metrics, TLS serving and the controller machinery are the runtime's
//! (`rsbuilder_runtime`, tool-owned sources under `rsbuilder-runtime/`).
//! `rsbuilder create api` adds the `api` (custom resource types) and `controller` modules;
//! `rsbuilder create webhook` adds `webhook`.

// +kubebuilder:scaffold:modules
