//! Where a command's project is: the root found upwards from the directory it runs in.

use std::path::{Path, PathBuf};

/// The markers of a project that `create`, `edit` and `alpha` work on: a `PROJECT` file.
pub const PROJECT: &[&str] = &[super::project::FILE_NAME];

/// The markers of a directory `manifests` reads: a `PROJECT` file or a `Cargo.toml` (a crate
/// without PROJECT has manifests too).
pub const PROJECT_OR_CRATE: &[&str] = &[super::project::FILE_NAME, "Cargo.toml"];

/// The project root for a command run in `start`: the nearest of `start` and its ancestors
/// that holds a regular file named by one of `markers` (see [`PROJECT`] and
/// [`PROJECT_OR_CRATE`]), as cargo finds `Cargo.toml` by walking up from the current
/// directory. `None` when no such directory exists. Relative paths stay relative (the last
/// ancestor of `src` is the empty path, the current directory). Never fails: a directory that
/// cannot be read counts as one without the markers.
pub fn find_root(start: &Path, markers: &[&str]) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| markers.iter().any(|m| dir.join(m).is_file()))
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_directory_with_any_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = tmp.path();
        let inner = outer.join("a/b");
        std::fs::create_dir_all(inner.join("c")).unwrap();
        std::fs::write(outer.join("PROJECT"), "").unwrap();
        std::fs::write(inner.join("Cargo.toml"), "").unwrap();
        assert_eq!(
            find_root(&inner.join("c"), PROJECT),
            Some(outer.to_path_buf())
        );
        assert_eq!(
            find_root(&inner.join("c"), PROJECT_OR_CRATE),
            Some(inner.clone())
        );
        assert_eq!(find_root(&inner, &["nothing-here"]), None);
    }
}
