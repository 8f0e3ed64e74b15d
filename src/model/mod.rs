//! The data rsbuilder reasons about: resource names (GVK, plural, module names), their
//! validation, built-in Kubernetes types, and the PROJECT file.

pub mod builtin;
pub mod gvk;
pub mod layout;
pub mod project;
pub mod reserved;
pub mod root;
pub mod validate;
pub mod versions;

pub use gvk::{NameError, Resource};
pub use project::Project;
pub use root::find_root;
