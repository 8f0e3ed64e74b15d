//! The second half of an apply: the staged files renamed into place (rolled forward) or, when
//! a rename fails, the old files put back (rolled back); then the transaction removed.

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use super::check::{check_back, check_forward, differs};
use super::mode::set_mode;
use super::sync::{DirSync, sync_touched};
use super::{
    Handles, Journal, Outcome, STATE_DIR, TXN_DIR, TXN_NAME, exists, io_err, missing, new_name,
    old_name, parent_of, stage_new, unfinished,
};
use crate::engine::error::ScaffoldError;
use crate::engine::fault::step;
use crate::engine::record;

/// Whether [`forward`] runs right after its own [`prepare`](super::stage::prepare) (every staged file is there) or
/// finishes an interrupted apply (some may have been renamed already).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fresh {
    Yes,
    Recovering,
}

/// Handles on the directories that receive files, each opened (beneath the root) once per
/// apply, so a rename is one `renameat` between two handles instead of two path resolutions.
struct Parents<'d> {
    root: &'d Dir,
    open: std::collections::HashMap<PathBuf, Dir>,
}

impl<'d> Parents<'d> {
    fn new(root: &'d Dir) -> Self {
        Self {
            root,
            open: Default::default(),
        }
    }

    /// The directory holding `rel` and `rel`'s last component.
    fn of<'p>(&mut self, rel: &'p Path) -> std::io::Result<(&Dir, &'p std::ffi::OsStr)> {
        let name = rel
            .file_name()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let parent = parent_of(rel);
        if parent.as_os_str().is_empty() {
            return Ok((self.root, name));
        }
        if !self.open.contains_key(&parent) {
            let d = self.root.open_dir(&parent)?;
            self.open.insert(parent.clone(), d);
        }
        Ok((&self.open[&parent], name))
    }
}

/// Creates the directories and renames every staged file still present into place, then
/// removes the transaction. On a rename that fails, undoes the apply and returns that error,
/// the project as before; where the undo cannot be made safe or complete, returns
/// [`ScaffoldError::Unfinished`] saying what the next command will do. A recovery
/// ([`Fresh::Recovering`]) also checks that every file holds what the journal says before it
/// calls the apply done.
pub(super) fn forward(
    root: &Path,
    dir: &Dir,
    h: &Handles,
    journal: Journal,
    fresh: Fresh,
    sync: &DirSync,
) -> Result<(), ScaffoldError> {
    let mut result = Ok(());
    for d in &journal.dirs {
        if missing(dir, d) {
            step();
            if let Err(e) = dir.create_dir(d) {
                result = Err(io_err(root, "creating directory", d)(e));
                break;
            }
        }
    }
    if result.is_ok() {
        result = rename_all(root, dir, &h.txn, &journal, fresh);
    }
    if let Err(err) = result {
        // From here on, an interrupted run is finished backwards. Without the marker an undo
        // interrupted half way would be taken for an apply to finish, so none is started.
        step();
        let marked = h.txn.create("back").and_then(|f| f.sync_all());
        if marked.is_err() {
            return Err(unfinished(root, &journal.command, Outcome::Forward, err));
        }
        let _ = sync.sync(&h.txn, Path::new(""));
        if back(dir, h, &journal, sync).is_err() {
            return Err(unfinished(root, &journal.command, Outcome::Back, err));
        }
        if fresh == Fresh::Recovering
            && let Err(d) = check_back(dir, &journal)
        {
            return Err(differs(root, &journal.command, Outcome::Back, d));
        }
        if finish(root, dir, h, sync).is_err() {
            return Err(unfinished(root, &journal.command, Outcome::Back, err));
        }
        return Err(match fresh {
            Fresh::Yes => err,
            Fresh::Recovering => unfinished(root, &journal.command, Outcome::Undone, err),
        });
    }
    sync_touched(dir, &journal, sync);
    if fresh == Fresh::Recovering
        && let Err(d) = check_forward(dir, &journal)
    {
        return Err(differs(root, &journal.command, Outcome::Forward, d));
    }
    finish(root, dir, h, sync).map_err(|e| {
        unfinished(
            root,
            &journal.command,
            Outcome::Forward,
            io_err(root, "removing", Path::new(TXN_DIR))(e),
        )
    })
}

/// The renames (and removals) of [`forward`], from the transaction directory `txn`.
fn rename_all(
    root: &Path,
    dir: &Dir,
    txn: &Dir,
    journal: &Journal,
    fresh: Fresh,
) -> Result<(), ScaffoldError> {
    let mut parents = Parents::new(dir);
    for (i, e) in journal.files.iter().enumerate() {
        if e.removes {
            if missing(dir, &e.path) {
                continue; // removed before the interruption
            }
            step();
            dir.remove_file(&e.path)
                .map_err(io_err(root, "removing", &e.path))?;
            continue;
        }
        let new = new_name(i);
        if fresh == Fresh::Recovering {
            if !exists(txn, &new).map_err(io_err(root, "reading", &stage_new(i)))? {
                continue; // renamed before the interruption
            }
            set_mode(dir, txn, &new, &e.path, e.replaces)
                .map_err(io_err(root, "writing", &e.path))?;
        }
        step();
        parents
            .of(&e.path)
            .and_then(|(parent, name)| txn.rename(&new, parent, name))
            .map_err(io_err(root, "writing", &e.path))?;
    }
    Ok(())
}

/// Puts every replaced or removed file back, removes every created file and directory.
/// Every entry is tried; the first error is returned (the transaction is then kept, with its
/// `back` marker, so the next command finishes the undo). An entry whose state cannot be
/// looked at is an error, never taken as done.
pub(super) fn back(
    dir: &Dir,
    h: &Handles,
    journal: &Journal,
    sync: &DirSync,
) -> std::io::Result<()> {
    let txn = &h.txn;
    let mut first_err = None;
    for (i, e) in journal.files.iter().enumerate().rev() {
        let undo = || -> std::io::Result<()> {
            let old = old_name(i);
            if e.removes {
                if exists(dir, &e.path)? || !exists(txn, &old)? {
                    return Ok(()); // never removed, or already put back
                }
                step();
                return txn.rename(&old, dir, &e.path);
            }
            if exists(txn, new_name(i))? {
                return Ok(()); // never renamed into place
            }
            if e.replaces {
                if !exists(txn, &old)? {
                    return Ok(()); // already put back
                }
                step();
                txn.rename(&old, dir, &e.path)
            } else {
                step();
                match dir.remove_file(&e.path) {
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                }
            }
        };
        if let Err(err) = undo() {
            first_err.get_or_insert(err);
        }
    }
    for d in journal.dirs.iter().rev() {
        let r = exists(dir, d).and_then(|there| match there {
            true => {
                step();
                dir.remove_dir(d)
            }
            false => Ok(()),
        });
        if let Err(err) = r {
            first_err.get_or_insert(err);
        }
    }
    sync_touched(dir, journal, sync);
    match first_err {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// Removes the transaction directory: first the staged and old files, then the journal (from
/// then on nothing is left to do), then the `back` marker and the directories. So while the
/// journal exists, `back` tells the direction; once it is gone, a directory holding nothing
/// but `back` is a finished apply. The run record goes last. Stops at the first removal that
/// fails and returns its error, the journal then still in place.
pub(super) fn finish(root: &Path, dir: &Dir, h: &Handles, sync: &DirSync) -> std::io::Result<()> {
    let mut names = Vec::new();
    for entry in h.txn.entries()? {
        let name = entry?.file_name();
        if name != "journal" && name != "back" {
            names.push(name);
        }
    }
    names.sort();
    for n in names {
        step();
        h.txn.remove_file(n)?;
    }
    for name in ["journal", "back"] {
        if exists(&h.txn, name)? {
            step();
            h.txn.remove_file(name)?;
        }
    }
    if exists(&h.state, TXN_NAME)? {
        step();
        h.state.remove_dir(TXN_NAME)?;
    }
    remove_empty_state_dir(dir, &h.state, sync);
    forget_run(root, dir, &h.state);
    Ok(())
}

/// Removes this directory's run record once its transaction directory (in `state`) is gone.
pub(super) fn forget_run(root: &Path, dir: &Dir, state: &Dir) {
    if matches!(exists(state, TXN_NAME), Ok(false))
        && let Ok(run) = record::name(root, dir)
    {
        record::remove(&run);
    }
}

/// Removes `.rsbuilder` (opened as `state`) when it is empty: a `.rsbuilder` the user keeps
/// other things in stays. By name, so at best effort: it stays when the name no longer holds
/// an empty directory.
pub(super) fn remove_empty_state_dir(dir: &Dir, state: &Dir, sync: &DirSync) {
    if state
        .entries()
        .is_ok_and(|mut entries| entries.next().is_none())
    {
        step();
        let _ = dir.remove_dir(STATE_DIR);
    }
    let _ = sync.sync(dir, Path::new(""));
}

/// Removes a transaction directory that holds no journal (staged files of an apply that never
/// committed), then `.rsbuilder` if empty, then the run record.
pub(super) fn drop_staged(root: &Path, dir: &Dir, h: &Handles, sync: &DirSync) {
    let _ = h.state.remove_dir_all(TXN_NAME);
    remove_empty_state_dir(dir, &h.state, sync);
    forget_run(root, dir, &h.state);
}
