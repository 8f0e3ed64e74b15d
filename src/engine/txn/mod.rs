//! Crash-safe apply: every file a plan changes is staged in `.rsbuilder/txn/` under the project
//! root, a journal naming them is made durable, and only then are the staged files renamed into
//! place. A command killed at any point leaves either no journal (nothing in the project has
//! changed yet; the staged files are discarded) or a journal from which the next command
//! finishes the apply (rolls forward) or finishes undoing it (rolls back). docs/safety.md
//! describes the same steps for users.
//!
//! Layout while an apply runs (`<i>` is the file's index in the journal):
//!
//! ```text
//! .rsbuilder/txn/<i>.new   the new contents, durable (syncfs or fsync) before the journal
//! .rsbuilder/txn/<i>.old   a hard link to the file being replaced or removed (its copy where
//!                          links fail)
//! .rsbuilder/txn/journal   JSON: the command, the directories to create, the files
//! .rsbuilder/txn/back      present once a rename failed and the apply is being undone
//! ```
//!
//! The journal is never rewritten: the direction is the presence of `back`, an empty file,
//! which can be created on a full disk where a rewritten journal might not fit.
//!
//! Every path goes through a [`cap_std::fs::Dir`] opened on the project root, which resolves
//! each path beneath it and refuses to follow a symbolic link or `..` out of it, at the moment of
//! the call: a link swapped in while the command runs cannot redirect a write.
//!
//! This module holds the journal's format, the names under `.rsbuilder/txn` and `apply`; the
//! steps are in its submodules:
//!
//! - `stage`: the staged files and the journal, written and made durable (the commit point),
//!   or removed again when that fails;
//! - `roll`: the staged files renamed into place (forward) or the old files put back (back),
//!   then the transaction removed;
//! - `recover`: what the next command does about a killed command's transaction ([`Mode`],
//!   [`Recovery`]);
//! - `check`: whether the tree is what finishing a journal makes;
//! - `sync`: directory fsyncs, `syncfs`, and per-file fsyncs where `syncfs` is unavailable;
//! - `mode`: the permission bits of a file put in place.

mod check;
mod mode;
mod recover;
mod roll;
mod stage;
mod sync;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};

pub use super::error::Outcome;
use super::error::ScaffoldError;
pub(super) use recover::recover;
pub use recover::{Mode, Recovery};
use roll::{Fresh, forward};
use stage::{discard, prepare};
use sync::DirSync;

/// The directory holding rsbuilder's own state while a command writes.
pub const STATE_DIR: &str = ".rsbuilder";
/// The transaction directory under [`STATE_DIR`].
pub const TXN_DIR: &str = ".rsbuilder/txn";
const JOURNAL: &str = ".rsbuilder/txn/journal";
const JOURNAL_TMP: &str = ".rsbuilder/txn/journal.tmp";
const BACK: &str = ".rsbuilder/txn/back";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    /// The command line that planned the apply, for the message of the next command.
    command: String,
    /// The nonce of this apply's run record ([`super::record`]); a journal whose nonce is not the
    /// record's (or that has none) is not this machine's and is never applied.
    #[serde(default)]
    nonce: String,
    /// Directories that did not exist when the apply was planned, parents first.
    dirs: Vec<PathBuf>,
    files: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    path: PathBuf,
    /// The file existed (and `<i>.old` holds it).
    replaces: bool,
    /// The file is removed, not written (no `<i>.new`); absent in journals of versions
    /// without removals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    removes: bool,
    /// SHA-256 (hex) of `<i>.new`; a staged file with other bytes is not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
}

/// One file to write: its path relative to the root and its new contents; or, with
/// `removes`, an existing file to remove.
pub(super) struct Change<'a> {
    pub path: &'a Path,
    pub contents: &'a [u8],
    pub replaces: bool,
    pub removes: bool,
}

fn io_err(
    root: &Path,
    action: &'static str,
    rel: &Path,
) -> impl FnOnce(std::io::Error) -> ScaffoldError {
    let path = root.join(rel);
    move |source| ScaffoldError::Io {
        action,
        path,
        source,
    }
}

fn stage_new(i: usize) -> PathBuf {
    PathBuf::from(format!("{TXN_DIR}/{i}.new"))
}

/// [`stage_new`]'s name inside `.rsbuilder/txn`.
fn new_name(i: usize) -> String {
    format!("{i}.new")
}

/// The name inside `.rsbuilder/txn` of the old file of entry `i`.
fn old_name(i: usize) -> String {
    format!("{i}.old")
}

fn missing(dir: &Dir, rel: &Path) -> bool {
    matches!(dir.symlink_metadata(rel), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// Whether `rel` exists under `dir` (a link counts and is not followed). An error other than
/// "not found" is returned, not read as an answer: an entry that cannot be looked at is
/// neither there nor gone.
fn exists(dir: &Dir, rel: impl AsRef<Path>) -> std::io::Result<bool> {
    match dir.symlink_metadata(rel.as_ref()) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// `.rsbuilder` and `.rsbuilder/txn`, each opened once as the real directory its name held
/// at that moment, never through a symbolic link ([`open_real_dir`]). Every step on the
/// journal, the staged files and the `back` marker goes through these handles: a
/// `.rsbuilder` renamed, or swapped for a link, while a command runs can neither make a
/// step land elsewhere nor make a later step fail where an earlier one worked.
struct Handles {
    state: Dir,
    txn: Dir,
}

/// The name of the transaction directory inside [`STATE_DIR`].
const TXN_NAME: &str = "txn";

/// Opens the directory `name` (one path component) in `parent`, refusing a symbolic link:
/// the entry must be a directory, and the directory opened must be that entry (the same
/// device and inode), so a link swapped in between the look and the open is refused too.
/// `Ok(None)` when there is no entry `name`.
fn open_real_dir(parent: &Dir, name: &str) -> std::io::Result<Option<Dir>> {
    let entry = match parent.symlink_metadata(name) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let not_real = || {
        std::io::Error::other(format!(
            "{name} is not a directory (a symbolic link, or another kind of file); rsbuilder keeps its journal only in a real directory of the project"
        ))
    };
    if !entry.is_dir() {
        return Err(not_real());
    }
    let opened = parent.open_dir(name)?;
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt as _;
        let got = opened.dir_metadata()?;
        if (got.dev(), got.ino()) != (entry.dev(), entry.ino()) {
            return Err(not_real());
        }
    }
    Ok(Some(opened))
}

/// The error for a committed write of `command` that ends as `outcome`, caused by `source`.
fn unfinished(
    root: &Path,
    command: &str,
    outcome: Outcome,
    source: ScaffoldError,
) -> ScaffoldError {
    ScaffoldError::Unfinished {
        txn: root.join(TXN_DIR),
        command: command.to_string(),
        outcome,
        source: Box::new(source),
    }
}

fn parent_of(rel: &Path) -> PathBuf {
    rel.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Writes `changes` into the project opened as `dir` (whose path is `root`, for messages),
/// all or nothing; see the module documentation. On an error, the project is as before and
/// the error names the file.
pub(super) fn apply(root: &Path, dir: &Dir, changes: &[Change<'_>]) -> Result<(), ScaffoldError> {
    if changes.is_empty() {
        return Ok(());
    }
    let sync = DirSync::new();
    let mut handles = None;
    let journal = match prepare(root, dir, changes, &sync, &mut handles) {
        Ok(j) => j,
        Err(e) => return Err(discard(root, dir, handles.as_ref(), &sync, e)),
    };
    let handles = handles.expect("prepare opened the transaction directory");
    forward(root, dir, &handles, journal, Fresh::Yes, &sync)
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        "rsbuilder".into()
    } else {
        format!("rsbuilder {}", args.join(" "))
    }
}

/// Lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
