//! The module tree of the sources and rustc-like resolution of the type paths operators write.
