//! An aggregated (extension) Kubernetes API server for kinds defined as Rust types, following
//! k8s.io/apiserver's behaviour (docs/apiserver.md).
//!
//! - [`storage`]: the storage trait and its embedded, persistent default on redb.

pub mod storage;
