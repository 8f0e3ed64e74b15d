//! The record of what rsbuilder wrote into each tool-owned file, kept in the project so that
//! `alpha update` can tell an untouched file from one the user changed, and find its
//! three-way merge base:
//!
//! - [`MANIFEST`] (`.rsbuilder/tool-owned.sha256`): one line per tool-owned file,
//!   `<sha256 hex>  <path>`, sorted by path: the format of `sha256sum`, so
//!   `sha256sum -c .rsbuilder/tool-owned.sha256` run in the project lists the files changed
//!   since rsbuilder wrote them. The text itself is not in the project: rsbuilder carries the
//!   runtime of each version (`super::super::runtime::base`).
//! - [`BASE_DIR`]`/<path>` (`.rsbuilder/base/...`): the text itself, as rsbuilder versions
//!   before that kept it. Read when present; each file's copy is removed when rsbuilder
//!   records the file anew.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The hash list of tool-owned files, relative to the project root.
pub const MANIFEST: &str = ".rsbuilder/tool-owned.sha256";
/// The directory where earlier rsbuilder versions kept the text they wrote of each tool-owned
/// file; no longer written.
pub const BASE_DIR: &str = ".rsbuilder/base";

/// Lowercase hex SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files that record `written` (tool-owned path, contents written) and forget `dropped`
/// (tool-owned paths no longer rsbuilder's), as (project-relative path, contents, `None` to
/// remove the file): the manifest (the lines of `old_manifest` for other files kept, the lines
/// of `written` replaced, those of `dropped` removed; lines that do not parse are dropped),
/// and the removal of the kept base file ([`BASE_DIR`]) of each written or dropped entry.
pub fn records(
    old_manifest: Option<&str>,
    written: &[(PathBuf, String)],
    dropped: &[PathBuf],
) -> Vec<(PathBuf, Option<String>)> {
    let mut entries: std::collections::BTreeMap<String, String> =
        parse_manifest(old_manifest.unwrap_or_default())
            .into_iter()
            .collect();
    let mut out = Vec::new();
    for path in dropped {
        entries.remove(&slash_path(path));
        out.push((Path::new(BASE_DIR).join(path), None));
    }
    for (path, text) in written {
        let rel = slash_path(path);
        entries.insert(rel, sha256_hex(text));
        out.push((Path::new(BASE_DIR).join(path), None));
    }
    let manifest: String = entries
        .iter()
        .map(|(path, hash)| format!("{hash}  {path}\n"))
        .collect();
    out.push((PathBuf::from(MANIFEST), Some(manifest)));
    out
}

/// The entries of a manifest's text: (path with `/` separators, sha256 hex), in file order.
/// Lines that do not parse are left out, as [`records`] leaves them out.
pub fn parse_manifest(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (hash, path) = line.split_once("  ")?;
            let valid = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
            valid.then(|| (path.to_owned(), hash.to_owned()))
        })
        .collect()
}

/// `path` with `/` separators, as the manifest writes it on every platform.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_hold_a_sha256sum_line_per_file_and_no_copy_of_the_text() {
        let written = vec![
            (
                PathBuf::from("rsbuilder-runtime/src/lib.rs"),
                "abc".to_owned(),
            ),
            (PathBuf::from("rsbuilder-runtime/Cargo.toml"), "".to_owned()),
        ];
        let out = records(None, &written, &[]);
        assert_eq!(
            out[0],
            (
                PathBuf::from(".rsbuilder/base/rsbuilder-runtime/src/lib.rs"),
                None
            )
        );
        // sha256("abc") and sha256("") are the published test vectors.
        assert_eq!(
            out[2],
            (
                PathBuf::from(MANIFEST),
                Some(
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  rsbuilder-runtime/Cargo.toml\n\
                     ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  rsbuilder-runtime/src/lib.rs\n"
                        .to_owned()
                )
            )
        );
    }

    #[test]
    fn other_files_lines_are_kept_and_rewritten_ones_replaced() {
        let old = format!(
            "{}  a.rs\n{}  b.rs\nnot a line\n",
            "0".repeat(64),
            "1".repeat(64)
        );
        let out = records(
            Some(&old),
            &[(PathBuf::from("b.rs"), "abc".to_owned())],
            &[],
        );
        let manifest = out.last().unwrap().1.as_deref().unwrap();
        assert_eq!(
            manifest,
            format!(
                "{}  a.rs\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  b.rs\n",
                "0".repeat(64)
            )
        );
    }

    #[test]
    fn dropped_files_lose_their_line_and_their_base() {
        let old = format!("{}  a.rs\n{}  b.rs\n", "0".repeat(64), "1".repeat(64));
        let out = records(Some(&old), &[], &[PathBuf::from("a.rs")]);
        assert_eq!(
            out,
            [
                (PathBuf::from(".rsbuilder/base/a.rs"), None),
                (
                    PathBuf::from(MANIFEST),
                    Some(format!("{}  b.rs\n", "1".repeat(64)))
                ),
            ]
        );
        assert_eq!(
            parse_manifest(&old),
            [
                ("a.rs".to_owned(), "0".repeat(64)),
                ("b.rs".to_owned(), "1".repeat(64))
            ]
        );
    }
}
