//! The first half of an apply: every file staged under `.rsbuilder/txn`, then the journal
//! written and made durable (the commit point); or, when that fails, everything staged
//! removed again ([`discard`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use super::roll::{drop_staged, forget_run, remove_empty_state_dir};
use super::sync::{DirSync, cannot_sync, sync_all, sync_file_system};
use super::{
    Change, Entry, Handles, JOURNAL, JOURNAL_TMP, Journal, Outcome, STATE_DIR, TXN_DIR, TXN_NAME,
    command_line, exists, io_err, missing, new_name, old_name, open_real_dir, sha256_hex,
    unfinished,
};
use crate::engine::error::ScaffoldError;
use crate::engine::fault::step;
use crate::engine::record;

/// Which ancestors of the files a plan writes are missing, each directory asked once (a
/// `manifests` run writes some 2,000 files into the same one or two directories).
struct Existing<'d> {
    dir: &'d Dir,
    known: std::collections::HashMap<PathBuf, bool>,
}

impl Existing<'_> {
    fn missing(&mut self, rel: &Path) -> bool {
        if let Some(&m) = self.known.get(rel) {
            return m;
        }
        let m = missing(self.dir, rel);
        self.known.insert(rel.to_path_buf(), m);
        m
    }
}

/// Stages every file, then writes the journal: the commit point. `handles` receives the
/// transaction directory's handles as soon as they are open, for [`discard`] on an error.
pub(super) fn prepare(
    root: &Path,
    dir: &Dir,
    changes: &[Change<'_>],
    sync: &DirSync,
    handles: &mut Option<Handles>,
) -> Result<Journal, ScaffoldError> {
    // The run record outside the project, before anything is staged: from here on the next
    // command in this directory knows the transaction is this machine's.
    let run = record::name(root, dir).map_err(io_err(root, "opening", Path::new("")))?;
    let nonce = record::nonce().map_err(io_err(root, "writing", Path::new(TXN_DIR)))?;
    record::write(
        &run,
        &record::Record {
            nonce: nonce.clone(),
            root: root.to_path_buf(),
        },
    )?;
    let state_path = Path::new(STATE_DIR);
    let open_state = || open_real_dir(dir, STATE_DIR).map_err(io_err(root, "opening", state_path));
    let state = match open_state()? {
        Some(state) => state,
        None => {
            step();
            dir.create_dir(state_path)
                .map_err(io_err(root, "creating directory", state_path))?;
            open_state()?.ok_or_else(|| {
                io_err(root, "opening", state_path)(std::io::ErrorKind::NotFound.into())
            })?
        }
    };
    let txn_path = Path::new(TXN_DIR);
    step();
    state
        .create_dir(TXN_NAME)
        .map_err(io_err(root, "creating directory", txn_path))?;
    // Every staged file is created relative to this one handle, so each name is one path
    // component below a directory resolved (beneath the root) once.
    let txn = open_real_dir(&state, TXN_NAME)
        .and_then(|t| t.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(io_err(root, "opening", txn_path))?;
    let h = handles.insert(Handles { state, txn });
    let txn = &h.txn;
    let mut existing = Existing {
        dir,
        known: Default::default(),
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files = Vec::with_capacity(changes.len());
    // Staged files by name in `txn`, each closed once written: the descriptors held stay
    // bounded whatever the number of files (a run may write tens of thousands of CRDs).
    let mut staged: Vec<(String, &Path)> = Vec::with_capacity(changes.len());
    for (i, c) in changes.iter().enumerate() {
        if c.removes {
            // Only the old file is kept, for a rollback.
            let old = old_name(i);
            step();
            if dir.hard_link(c.path, txn, &old).is_err() {
                dir.copy(c.path, txn, &old)
                    .map_err(io_err(root, "reading", c.path))?;
                staged.push((old, c.path));
            }
            files.push(Entry {
                path: c.path.to_path_buf(),
                replaces: true,
                removes: true,
                sha256: None,
            });
            continue;
        }
        let mut need: Vec<PathBuf> = c
            .path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .take_while(|a| existing.missing(a))
            .map(Path::to_path_buf)
            .collect();
        need.reverse();
        for d in need {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        // The new contents, with the old file's permissions (a new file: 0666 minus the umask,
        // like any file a program creates).
        let new = new_name(i);
        step();
        let mut file = txn.create(&new).map_err(io_err(root, "writing", c.path))?;
        file.write_all(c.contents)
            .map_err(io_err(root, "writing", c.path))?;
        if c.replaces
            && let Ok(meta) = dir.metadata(c.path)
        {
            let _ = file.set_permissions(meta.permissions());
        }
        drop(file);
        staged.push((new, c.path));
        if c.replaces {
            // A hard link keeps the old file for a rollback at no cost in space; a copy where
            // the file system has no hard links.
            let old = old_name(i);
            step();
            if dir.hard_link(c.path, txn, &old).is_err() {
                dir.copy(c.path, txn, &old)
                    .map_err(io_err(root, "reading", c.path))?;
                staged.push((old, c.path));
            }
        }
        files.push(Entry {
            path: c.path.to_path_buf(),
            replaces: c.replaces,
            removes: false,
            sha256: Some(sha256_hex(c.contents)),
        });
    }
    let journal = Journal {
        command: command_line(),
        nonce,
        dirs,
        files,
    };
    write_journal(root, dir, h, &journal, staged, sync)?;
    Ok(journal)
}

/// The journal, made durable after everything it names: written to a temporary name, then
/// the staged files, the journal's text and the names under `.rsbuilder/txn` are made durable
/// (one `syncfs`, or an fsync each where that is unavailable), then the temporary name is
/// renamed to `journal` (the commit point) and `.rsbuilder/txn` is fsynced, so that the name
/// `journal` is found after a crash.
fn write_journal(
    root: &Path,
    dir: &Dir,
    h: &Handles,
    journal: &Journal,
    staged: Vec<(String, &Path)>,
    sync: &DirSync,
) -> Result<(), ScaffoldError> {
    let text = serde_json::to_vec_pretty(journal).map_err(|e| ScaffoldError::Io {
        action: "writing",
        path: root.join(JOURNAL),
        source: std::io::Error::other(e),
    })?;
    let jpath = Path::new(JOURNAL);
    let tmp_name = Path::new(JOURNAL_TMP)
        .file_name()
        .expect("a file name")
        .to_owned();
    let txn = &h.txn;
    step();
    let mut file = txn
        .create(&tmp_name)
        .map_err(io_err(root, "writing", jpath))?;
    file.write_all(&text)
        .map_err(io_err(root, "writing", jpath))?;
    match sync_file_system(&file) {
        Ok(()) => {}
        Err(e) if cannot_sync(&e) || e.kind() == std::io::ErrorKind::PermissionDenied => {
            // No syncfs here (not Linux, or refused by a sandbox's filter): every staged file
            // and the journal one by one, then the directories that received their names.
            file.sync_all().map_err(io_err(root, "writing", jpath))?;
            drop(file);
            sync_all(root, txn, &staged)?;
            for d in [txn, &h.state, dir] {
                sync.sync(d, Path::new(""))
                    .map_err(io_err(root, "writing", Path::new(TXN_DIR)))?;
            }
        }
        Err(e) => return Err(io_err(root, "writing", Path::new(TXN_DIR))(e)),
    }
    step();
    txn.rename(&tmp_name, txn, "journal")
        .map_err(io_err(root, "writing", jpath))?;
    sync.sync(txn, Path::new(""))
        .map_err(io_err(root, "writing", jpath))?;
    Ok(())
}

/// After a failed prepare, which changed no project file: the journal goes first, then the
/// staged files, and `err` is returned. When a committed journal cannot be removed, the
/// next command will roll it forward, and the error says so.
pub(super) fn discard(
    root: &Path,
    dir: &Dir,
    h: Option<&Handles>,
    sync: &DirSync,
    err: ScaffoldError,
) -> ScaffoldError {
    // A fault point of its own: in a project whose `.rsbuilder/` also holds the tool-owned
    // records, this removal is the discard's only step, and a kill here must leave a project
    // the next command discards again.
    step();
    let Some(h) = h else {
        // Nothing was staged: at most an empty `.rsbuilder/txn` was made.
        if let Ok(Some(state)) = open_real_dir(dir, STATE_DIR) {
            let _ = state.remove_dir(TXN_NAME);
            remove_empty_state_dir(dir, &state, sync);
            forget_run(root, dir, &state);
        }
        return err;
    };
    let journal_gone = match exists(&h.txn, "journal") {
        Ok(true) => h.txn.remove_file("journal").is_ok(),
        Ok(false) => true,
        Err(_) => false,
    };
    if !journal_gone {
        return unfinished(root, &command_line(), Outcome::Forward, err);
    }
    drop_staged(root, dir, h, sync);
    err
}
