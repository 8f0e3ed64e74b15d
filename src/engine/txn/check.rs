//! Whether the tree is what finishing a journal makes, rolled forward ([`check_forward`]) or
//! back ([`check_back`]): a recovery checks it before it calls an interrupted apply done.

use std::path::Path;

use cap_std::fs::Dir;

use super::{Journal, Outcome, TXN_DIR, io_err, sha256_hex, unfinished};
use crate::engine::error::ScaffoldError;

/// Why a tree is not (or cannot be shown to be) what finishing a journal makes.
pub(super) enum Differs {
    /// A file could not be looked at: the next command looks again.
    Unreadable(std::io::Error),
    /// A file is not what the journal says; names it.
    Not(String),
}

/// The kind of `rel` under `dir`, not following a link; `None` when there is nothing.
fn kind(dir: &Dir, rel: &Path) -> Result<Option<cap_std::fs::FileType>, Differs> {
    match dir.symlink_metadata(rel) {
        Ok(meta) => Ok(Some(meta.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Differs::Unreadable(e)),
    }
}

/// Whether the regular file `rel` holds the bytes whose SHA-256 is `sha256`.
fn holds(dir: &Dir, rel: &Path, sha256: Option<&str>) -> Result<bool, Differs> {
    let bytes = dir.read(rel).map_err(Differs::Unreadable)?;
    Ok(sha256 == Some(sha256_hex(&bytes).as_str()))
}

/// Whether the tree is what rolling `journal` forward makes: every written file holds the
/// bytes the journal's hash records, every removed file is gone, every directory is there.
pub(super) fn check_forward(dir: &Dir, journal: &Journal) -> Result<(), Differs> {
    for d in &journal.dirs {
        if !kind(dir, d)?.is_some_and(|k| k.is_dir()) {
            return Err(Differs::Not(format!(
                "the directory {} is missing",
                d.display()
            )));
        }
    }
    for e in &journal.files {
        let k = kind(dir, &e.path)?;
        let ok = match e.removes {
            true => k.is_none(),
            false => k.is_some_and(|k| k.is_file()) && holds(dir, &e.path, e.sha256.as_deref())?,
        };
        if !ok {
            return Err(Differs::Not(format!(
                "{} does not hold what its journal records",
                e.path.display()
            )));
        }
    }
    Ok(())
}

/// Whether the tree is what rolling `journal` back makes: every created file and directory
/// is gone, every replaced or removed file is there, a replaced one without the new bytes.
pub(super) fn check_back(dir: &Dir, journal: &Journal) -> Result<(), Differs> {
    for e in &journal.files {
        let k = kind(dir, &e.path)?;
        let ok = match (e.replaces, e.removes) {
            (_, true) => k.is_some(),
            (true, false) => {
                k.is_some_and(|k| !k.is_file())
                    || k.is_some() && !holds(dir, &e.path, e.sha256.as_deref())?
            }
            (false, false) => k.is_none(),
        };
        if !ok {
            return Err(Differs::Not(format!(
                "{} is not as it was before that command",
                e.path.display()
            )));
        }
    }
    for d in &journal.dirs {
        if kind(dir, d)?.is_some() {
            return Err(Differs::Not(format!(
                "the directory {} is still there",
                d.display()
            )));
        }
    }
    Ok(())
}

/// The error for a tree [`check_forward`] or [`check_back`] found `differs`: the next
/// command tries again (`retry`) when a file could not be looked at, else a person looks.
pub(super) fn differs(
    root: &Path,
    command: &str,
    retry: Outcome,
    differs: Differs,
) -> ScaffoldError {
    let checking = io_err(root, "checking", Path::new(TXN_DIR));
    match differs {
        Differs::Unreadable(e) => unfinished(root, command, retry, checking(e)),
        Differs::Not(reason) => {
            let source = checking(std::io::Error::other(reason.clone()));
            unfinished(root, command, Outcome::Check(reason), source)
        }
    }
}
