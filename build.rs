//! Embeds the runtime crate (`runtime/`: its Cargo.toml and every file under `runtime/src/`)
//! into rsbuilder, so `init` writes it into a new project as tool-owned files
//! (`src/scaffold/runtime.rs`, docs/runtime.md). Writes `$OUT_DIR/runtime_files.rs`: a slice of
//! (path relative to `runtime/`, path in a project, `include_str!` of the file), sorted by path.

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
