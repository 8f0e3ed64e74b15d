//! The probe's cache: the key of a run (a SHA-256 of the crate's files, its path
//! dependencies, the workspace's manifests and lock file, the features and the kinds asked
//! for), and the outputs of earlier runs stored under it.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use super::cargo::Workspace;
use super::{CrateInfo, canonical};
use crate::manifests::cfg::FeatureFlags;

/// The crate's `Cargo.lock`, or its workspace's (the nearest one above): `(path, text)`.
pub(super) fn find_lock(dir: &Path) -> Option<(PathBuf, String)> {
    let dir = canonical(dir);
    dir.ancestors().find_map(|d| {
        let p = d.join("Cargo.lock");
        std::fs::read_to_string(&p).ok().map(|t| (p, t))
    })
}

/// The SHA-256 state of everything the probe's output depends on but the `Cargo.lock`, which
/// the build itself may update (see [`key_with_lock`]).
pub(super) fn cache_key(
    info: &CrateInfo,
    ws: &Workspace,
    roots: &[Vec<String>],
    features: &FeatureFlags,
    skip: &[PathBuf],
) -> Sha256 {
    let mut h = Sha256::new();
    let mut field = |name: &str, bytes: &[u8]| {
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field("rsbuilder", env!("CARGO_PKG_VERSION").as_bytes());
    field("features", format!("{features:?}").as_bytes());
    field(
        "K8S_OPENAPI_ENABLED_VERSION",
        std::env::var("K8S_OPENAPI_ENABLED_VERSION")
            .unwrap_or_default()
            .as_bytes(),
    );
    for m in &ws.manifests {
        field(
            &m.display().to_string(),
            &std::fs::read(m).unwrap_or_default(),
        );
    }
    for r in roots {
        field("kind", r.join("::").as_bytes());
    }
    let mut dirs = vec![canonical(&info.dir)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(d) = dirs.pop() {
        if !seen.insert(d.clone()) {
            continue;
        }
        for (path, bytes) in crate_files(&d, skip) {
            field(&path.display().to_string(), &bytes);
        }
        dirs.extend(path_dependencies(&d));
    }
    h
}

/// The cache key: the digest of [`cache_key`]'s inputs and the `Cargo.lock` (`(path, text)`,
/// as [`find_lock`] finds it), in hex.
pub(super) fn key_with_lock(inputs: &Sha256, lock: Option<&(PathBuf, String)>) -> String {
    let mut h = inputs.clone();
    let text = lock.map(|(_, t)| t.as_str()).unwrap_or_default();
    h.update(b"lock");
    h.update((text.len() as u64).to_le_bytes());
    h.update(text.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The files of the crate in `dir` that a build may read: everything but `target/`, hidden
/// entries, `Cargo.lock` (in the key apart, see [`key_with_lock`]) and the directories in
/// `skip` (canonical paths), sorted, with their bytes.
fn crate_files(dir: &Path, skip: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0 || {
                let n = e.file_name().to_string_lossy();
                !n.starts_with('.')
                    && n != "target"
                    && n != "Cargo.lock"
                    && !skip.iter().any(|s| *s == canonical(e.path()))
            }
        });
    for e in walker.flatten() {
        if e.file_type().is_file()
            && let Ok(bytes) = std::fs::read(e.path())
        {
            out.push((
                e.path().strip_prefix(dir).unwrap_or(e.path()).to_path_buf(),
                bytes,
            ));
        }
    }
    out
}

/// The directories of the `path = "…"` dependencies in `dir/Cargo.toml`.
fn path_dependencies(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = crate::engine::regular::read_path(&dir.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in ["dependencies", "build-dependencies"] {
        if let Some(deps) = doc.get(table).and_then(|d| d.as_table()) {
            for v in deps.values() {
                if let Some(p) = v.get("path").and_then(|p| p.as_str()) {
                    out.push(canonical(&dir.join(p)));
                }
            }
        }
    }
    out
}

pub(super) fn read_cache(file: &Path) -> Option<BTreeMap<String, Value>> {
    let text = crate::engine::regular::read_path(file).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the cache entry through a temporary file and a rename, so a concurrent reader never
/// sees half of it. Failing to cache is not an error (the next run compiles again).
pub(super) fn write_cache(file: &Path, output: &BTreeMap<String, Value>) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_string(output) else {
        return;
    };
    let tmp = dir.join(format!(".{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
