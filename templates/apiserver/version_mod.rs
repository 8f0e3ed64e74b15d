//! Version `{{ n.version }}` of the kinds the aggregated API server serves: one `<kind>_types`
//! module per kind, re-exported here.
//!
//! `rsbuilder create apiserver` adds the modules of new kinds above the marker below.

// +kubebuilder:scaffold:apiserver-kinds
