//! The runtime crate every generated project builds on (`rsbuilder-runtime`: manager, metrics,
//! TLS serving, the controller runner), embedded at compile time from this repository's
//! `runtime/` directory (by `build.rs`) and written by `init` under [`DIR`] as tool-owned
//! files: each starts with [`TOOL_OWNED_LINE`] (after its comment leader), and the engine
//! records what it wrote under `.rsbuilder/` (see [`super::engine`]) so `alpha update` has a
//! merge base. Why a path crate in the project rather than a crates.io dependency:
//! docs/runtime.md.

/// Directory of the runtime crate inside a generated project.
pub const DIR: &str = "rsbuilder-runtime";

/// The text that opens every tool-owned file, after `// ` (Rust) or `# ` (TOML).
pub const TOOL_OWNED_LINE: &str =
    "Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.";

/// The runtime's files: (path relative to the runtime crate, path inside a project under
/// [`DIR`], contents), sorted by path.
pub const FILES: &[(&str, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/runtime_files.rs"));

/// Every runtime file as (path inside a project, e.g. `rsbuilder-runtime/src/tls.rs`,
/// contents), sorted by path.
pub fn project_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    FILES.iter().map(|(_, path, text)| (*path, *text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The embedded list is the directory: every file of `runtime/Cargo.toml` and
    /// `runtime/src/`, with the same bytes.
    #[test]
    fn the_embedded_runtime_is_the_runtime_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let mut on_disk = vec!["Cargo.toml".to_owned()];
        for entry in walkdir::WalkDir::new(root.join("src")) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&root).unwrap();
                on_disk.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
        on_disk.sort();
        let embedded: Vec<&str> = FILES.iter().map(|(p, _, _)| *p).collect();
        assert_eq!(embedded, on_disk);
        assert!(embedded.contains(&"src/lib.rs"), "{embedded:?}");
        for (rel, in_project, text) in FILES {
            assert_eq!(*in_project, format!("{DIR}/{rel}"));
            assert_eq!(
                *text,
                std::fs::read_to_string(root.join(rel)).unwrap(),
                "{rel}"
            );
        }
    }

    #[test]
    fn every_runtime_file_says_it_is_tool_owned_on_its_first_line() {
        for (rel, _, text) in FILES {
            let first = text.lines().next().unwrap_or_default();
            let leader = if rel.ends_with(".rs") { "// " } else { "# " };
            assert_eq!(first, format!("{leader}{TOOL_OWNED_LINE}"), "{rel}");
        }
    }
}
