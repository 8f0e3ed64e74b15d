{% if multigroup -%}
//! The API types this project defines (its custom resources), one module per API group.
//!
//! `rsbuilder create api` adds a `pub mod <group>;` line above the marker below.
{%- else -%}
//! The API types this project defines (its custom resources), one module per version.
//!
//! `rsbuilder create api` adds a `pub mod <version>;` line above the marker below.
{%- endif %}

// +kubebuilder:scaffold:api-versions
