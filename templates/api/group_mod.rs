//! The group `{{ group }}`: {{ holds }}.
//!
//! `rsbuilder {{ command }}` adds modules above the marker below.

// +kubebuilder:scaffold:{{ marker }}
