//! Embeds the runtime crate (`runtime/`: its Cargo.toml and every file under `runtime/src/`)
//! into rsbuilder, so `init` writes it into a new project as tool-owned files
//! (`src/scaffold/runtime.rs`, docs/runtime.md). Writes `$OUT_DIR/runtime_files.rs`: a slice of
//! (path relative to `runtime/`, path in a project, `include_str!` of the file), sorted by path.
//!
//! Also writes `$OUT_DIR/runtime_releases.rs`: a slice of (version, `include_bytes!` of
//! `runtime-releases/<version>.tar.gz`), one per archive in that directory, sorted by name:
//! the runtime of each earlier released version, compressed, which `alpha update` merges
//! against (src/scaffold/runtime.rs; runtime-releases/README.md says how an archive is made).

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let runtime = root.join("runtime");
    println!("cargo:rerun-if-changed=runtime/Cargo.toml");
    println!("cargo:rerun-if-changed=runtime/src");
    let mut files = vec![PathBuf::from("Cargo.toml")];
    collect(&runtime, Path::new("src"), &mut files);
    // Sorted as strings, as the test that compares the list with the directory sorts them
    // (`registry.rs` before `registry/tests.rs`).
    files.sort_by_key(|p| p.to_string_lossy().replace('\\', "/"));
    // (path relative to runtime/, path inside a project, contents)
    let mut out = String::from("&[\n");
    for rel in &files {
        let rel = rel
            .to_str()
            .expect("runtime paths are UTF-8")
            .replace('\\', "/");
        let abs = runtime.join(&rel);
        out.push_str(&format!(
            "    ({rel:?}, \"rsbuilder-runtime/{rel}\", include_str!({:?})),\n",
            abs.to_str().expect("the repository path is UTF-8")
        ));
    }
    out.push_str("]\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(dest.join("runtime_files.rs"), out).expect("write runtime_files.rs");

    let releases = root.join("runtime-releases");
    println!("cargo:rerun-if-changed=runtime-releases");
    let mut archives: Vec<(String, PathBuf)> = std::fs::read_dir(&releases)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let version = name.strip_suffix(".tar.gz")?.to_owned();
                    Some((version, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    archives.sort();
    let mut out = String::from("&[\n");
    for (version, path) in &archives {
        out.push_str(&format!(
            "    ({version:?}, include_bytes!({:?})),\n",
            path.to_str().expect("the repository path is UTF-8")
        ));
    }
    out.push_str("]\n");
    std::fs::write(dest.join("runtime_releases.rs"), out).expect("write runtime_releases.rs");
}

/// Every file under `base/rel`, as paths relative to `base`.
fn collect(base: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(base.join(rel))
        .unwrap_or_else(|e| panic!("reading {}: {e}", base.join(rel).display()));
    for entry in entries {
        let entry = entry.expect("a readable directory entry");
        let path = rel.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            collect(base, &path, out);
        } else {
            out.push(path);
        }
    }
}
