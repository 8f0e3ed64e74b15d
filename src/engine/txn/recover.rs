//! What the next command does about an apply a killed command left: [`recover`] rolls it
//! forward, finishes its rollback or discards its staged files, but only for a transaction
//! this machine's rsbuilder recorded and whose journal and staged files pass [`verify`].

use std::path::Path;

use cap_std::fs::Dir;

use super::check::{check_back, differs};
use super::roll::{Fresh, back, drop_staged, finish, forget_run, forward, remove_empty_state_dir};
use super::sync::DirSync;
use super::{
    BACK, Handles, JOURNAL, Journal, Outcome, STATE_DIR, TXN_DIR, TXN_NAME, exists, io_err,
    new_name, open_real_dir, sha256_hex, stage_new, unfinished,
};
use crate::engine::error::ScaffoldError;
use crate::engine::paths::{PathCheck, is_vcs_path};
use crate::engine::record;

/// What the next command found and did about an interrupted apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// The journal was complete: the remaining files were put in place.
    RolledForward {
        /// The interrupted command line.
        command: String,
        /// Files of that apply, all now in their new state.
        files: usize,
    },
    /// The interrupted apply was undoing itself: that was finished.
    RolledBack {
        /// The interrupted command line.
        command: String,
        /// Files of that apply, all now in their old state.
        files: usize,
    },
    /// The command was killed before its journal was complete: no project file had changed,
    /// and its staged files were removed.
    Discarded,
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovery::RolledForward { command, files } => write!(
                f,
                "`{command}` was interrupted while writing; finished it from its journal (rolled forward): the project has all of its changes ({})",
                crate::engine::count(*files, "file")
            ),
            Recovery::RolledBack { command, files } => write!(
                f,
                "`{command}` was interrupted while undoing a failed write; finished undoing it (rolled back): none of its changes remain ({} restored)",
                crate::engine::count(*files, "file")
            ),
            Recovery::Discarded => f.write_str(
                "an earlier rsbuilder command was interrupted before it changed any file; removed what it had staged (rolled back): the project is as it was before it",
            ),
        }
    }
}

/// What [`recover`] may do about an interrupted apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Finish it (a command that writes).
    Repair,
    /// Report it and change nothing (`manifests --check`, `alpha update --dry-run`).
    ReadOnly,
}

/// The largest journal read: some 2,000 entries of `manifests` take about 400 KiB.
const JOURNAL_LIMIT: u64 = 64 << 20;

/// Finishes an apply that a killed command left in the project opened as `dir` (at `root`):
/// rolls it forward from a complete journal, finishes a rollback, or discards the staged files
/// of an apply killed before its journal was complete. `Ok(None)`: there was nothing to do.
///
/// Only an apply this machine's rsbuilder recorded is touched: its run record ([`record`])
/// must exist for this directory with the journal's nonce, every path the journal names must
/// be one a plan can write (inside the project, never in a version-control directory or in
/// `.rsbuilder/txn`), and every staged file must have the bytes the journal's hash says.
/// Before it writes, every path is checked in the tree as a plan checks it: no symbolic link
/// on the way may lead out of the project or into a version-control directory. The
/// files put in place get the modes rsbuilder's own rule gives them (a replaced file's mode,
/// or 0666 minus the umask), never the staged file's. In [`Mode::ReadOnly`] nothing is done.
///
/// Errors: [`ScaffoldError::UntrustedTxn`] for a `.rsbuilder/txn` that fails those checks
/// (nothing in it is applied or removed); [`ScaffoldError::Interrupted`] in
/// [`Mode::ReadOnly`] when there is an apply to finish; a journal that cannot be read (the
/// error says to look at `.rsbuilder/txn`); [`ScaffoldError::Unfinished`] with
/// [`Outcome::Blocked`] for such a link, caused by the plan's link error naming it (nothing
/// is written, the transaction is kept for the next try once the link is replaced); a file
/// that cannot be put in place or back (the transaction is kept for the next try).
pub(in crate::engine) fn recover(
    root: &Path,
    dir: &Dir,
    mode: Mode,
) -> Result<Option<Recovery>, ScaffoldError> {
    let sync = DirSync::new();
    let repair = mode == Mode::Repair;
    // Both directories opened once, never through a link (see `Handles`).
    let Some(state) =
        open_real_dir(dir, STATE_DIR).map_err(io_err(root, "opening", Path::new(STATE_DIR)))?
    else {
        if repair && let Ok(run) = record::name(root, dir) {
            // A record whose apply finished, killed before the record's removal.
            record::remove(&run);
        }
        return Ok(None);
    };
    let Some(txn) =
        open_real_dir(&state, TXN_NAME).map_err(io_err(root, "opening", Path::new(TXN_DIR)))?
    else {
        if repair {
            remove_empty_state_dir(dir, &state, &sync);
            forget_run(root, dir, &state);
        }
        return Ok(None);
    };
    let h = Handles { state, txn };
    let untrusted = |reason: String| ScaffoldError::UntrustedTxn {
        path: root.join(TXN_DIR),
        reason,
    };
    let run = record::name(root, dir).map_err(io_err(root, "opening", Path::new("")))?;
    let record = record::read(&run);
    let journal_meta = match h.txn.symlink_metadata("journal") {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(ScaffoldError::Io {
                action: "reading",
                path: root.join(JOURNAL),
                source,
            });
        }
    };
    let Some(journal_meta) = journal_meta else {
        // Staged files: killed before the commit point. Nothing or only `back`: killed
        // after a finished apply had removed its journal.
        let staged = h.txn.entries().is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name() != "back")
        });
        if staged && record.is_none() {
            return Err(untrusted(
                "staged files without a journal, and this machine has no record of an rsbuilder command interrupted in this directory".into(),
            ));
        }
        if !repair {
            return match staged {
                true => Err(ScaffoldError::Interrupted {
                    root: root.to_path_buf(),
                    command: None,
                }),
                false => Ok(None),
            };
        }
        drop_staged(root, dir, &h, &sync);
        return Ok(staged.then_some(Recovery::Discarded));
    };
    if !journal_meta.is_file() || journal_meta.len() > JOURNAL_LIMIT {
        return Err(untrusted(format!(
            "{JOURNAL} is not a regular file of at most {JOURNAL_LIMIT} bytes"
        )));
    }
    let text = h.txn.read("journal").map_err(|source| ScaffoldError::Io {
        action: "reading",
        path: root.join(JOURNAL),
        source,
    })?;
    let journal: Journal = match serde_json::from_slice(&text) {
        Ok(journal) => journal,
        Err(_) if record.is_none() => {
            return Err(untrusted(
                "this machine has no record of an rsbuilder command interrupted in this directory"
                    .into(),
            ));
        }
        Err(e) => {
            return Err(ScaffoldError::Journal {
                path: root.join(JOURNAL),
                reason: e.to_string(),
            });
        }
    };
    match &record {
        None => {
            return Err(untrusted(format!(
                "its journal names `{}`, and this machine has no record of an rsbuilder command interrupted in this directory",
                journal.command
            )));
        }
        Some(r) if journal.nonce.is_empty() || r.nonce != journal.nonce => {
            return Err(untrusted(
                "its journal is not the one this machine's record of the interrupted command names"
                    .into(),
            ));
        }
        Some(_) => {}
    }
    verify(&h.txn, &journal).map_err(untrusted)?;
    let files = journal.files.len();
    let command = journal.command.clone();
    if !repair {
        return Err(ScaffoldError::Interrupted {
            root: root.to_path_buf(),
            command: Some(command),
        });
    }
    let backwards = exists(&h.txn, "back").map_err(io_err(root, "reading", Path::new(BACK)))?;
    no_link_refused(root, &journal)
        .map_err(|e| unfinished(root, &command, Outcome::Blocked { back: backwards }, e))?;
    if !backwards {
        // `forward` checks the tree before it calls the apply done.
        forward(root, dir, &h, journal, Fresh::Recovering, &sync)?;
        return Ok(Some(Recovery::RolledForward { command, files }));
    }
    let restoring = |source| ScaffoldError::Io {
        action: "restoring",
        path: root.join(TXN_DIR),
        source,
    };
    back(dir, &h, &journal, &sync)
        .map_err(|e| unfinished(root, &command, Outcome::Back, restoring(e)))?;
    check_back(dir, &journal).map_err(|d| differs(root, &command, Outcome::Back, d))?;
    finish(root, dir, &h, &sync)
        .map_err(|e| unfinished(root, &command, Outcome::Back, restoring(e)))?;
    Ok(Some(Recovery::RolledBack { command, files }))
}

/// The symbolic-link checks a plan makes ([`PathCheck`]), made again before a recovery
/// writes anything: every directory and file `journal` names (at `root`) is looked at
/// component by component, and a link on the way that leads out of the project or into a
/// version-control directory is refused, as a plan refuses it. A recorded journal names only
/// paths its plan checked, but the tree may have changed since (a directory moved into `.git`
/// and replaced by a link to it), and the rooted handle follows a link that stays inside the
/// root, `.git` included.
///
/// Errors: [`ScaffoldError::SymlinkIntoVcs`] (the link and where it leads, relative to the
/// root) or [`ScaffoldError::SymlinkEscape`] (the link), for the first such path. A file
/// standing where a directory is needed is not refused here: the rename fails on it and the
/// recovery undoes the apply, as before.
fn no_link_refused(root: &Path, journal: &Journal) -> Result<(), ScaffoldError> {
    let mut check = PathCheck::new(root);
    let paths = journal
        .dirs
        .iter()
        .chain(journal.files.iter().map(|e| &e.path));
    for rel in paths {
        // Any other refusal (a file where a directory is needed) is left to the renames.
        let refused = check.check(rel).err().filter(|e| {
            matches!(
                e,
                ScaffoldError::SymlinkIntoVcs { .. } | ScaffoldError::SymlinkEscape { .. }
            )
        });
        if let Some(e) = refused {
            return Err(e);
        }
    }
    Ok(())
}

/// Whether `rel` is a path a plan can write: relative, plain components only, not in a
/// version-control directory ([`is_vcs_path`]) and not in `.rsbuilder/txn`.
fn plannable(rel: &Path) -> bool {
    !rel.as_os_str().is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        && !is_vcs_path(rel)
        && !rel.starts_with(TXN_DIR)
}

/// The checks of a recorded journal before anything of it is applied: every path plannable,
/// every staged file still present (in `txn`, the transaction directory) a regular file with
/// the bytes its hash says. `Err` says which check failed.
fn verify(txn: &Dir, journal: &Journal) -> Result<(), String> {
    for d in &journal.dirs {
        if !plannable(d) {
            return Err(format!(
                "its journal names the directory {}, which no rsbuilder command writes",
                d.display()
            ));
        }
    }
    for (i, e) in journal.files.iter().enumerate() {
        if !plannable(&e.path) {
            return Err(format!(
                "its journal names {}, which no rsbuilder command writes",
                e.path.display()
            ));
        }
        if e.removes {
            continue;
        }
        let new = stage_new(i);
        let name = new_name(i);
        let meta = match txn.symlink_metadata(&name) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // renamed already
            Err(e) => return Err(format!("{} cannot be read: {e}", new.display())),
        };
        let bytes = match meta.is_file() {
            true => txn
                .read(&name)
                .map_err(|e| format!("{}: {e}", new.display()))?,
            false => return Err(format!("{} is not a regular file", new.display())),
        };
        if e.sha256.as_deref() != Some(sha256_hex(&bytes).as_str()) {
            return Err(format!(
                "{} does not hold the bytes its journal records for {}",
                new.display(),
                e.path.display()
            ));
        }
    }
    Ok(())
}
