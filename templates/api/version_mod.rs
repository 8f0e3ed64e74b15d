//! API version `{{ n.version }}`: one `<kind>_types` module per kind, re-exported here.
//!
//! `rsbuilder create api` adds the modules of new kinds above the marker below.

// +kubebuilder:scaffold:api-kinds
