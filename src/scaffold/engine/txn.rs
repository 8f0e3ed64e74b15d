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
//! .rsbuilder/txn/<i>.new   the new contents, written and fsynced before the journal
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

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};

use super::ScaffoldError;
use super::fault::step;

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
}

/// One file to write: its path relative to the root and its new contents; or, with
/// `removes`, an existing file to remove.
pub(super) struct Change<'a> {
    pub path: &'a Path,
    pub contents: &'a [u8],
    pub replaces: bool,
    pub removes: bool,
}

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
                crate::scaffold::count(*files, "file")
            ),
            Recovery::RolledBack { command, files } => write!(
                f,
                "`{command}` was interrupted while undoing a failed write; finished undoing it (rolled back): none of its changes remain ({} restored)",
                crate::scaffold::count(*files, "file")
            ),
            Recovery::Discarded => f.write_str(
                "an earlier rsbuilder command was interrupted before it changed any file; removed what it had staged (rolled back): the project is as it was before it",
            ),
        }
    }
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

fn stage_old(i: usize) -> PathBuf {
    PathBuf::from(format!("{TXN_DIR}/{i}.old"))
}

fn missing(dir: &Dir, rel: &Path) -> bool {
    matches!(dir.symlink_metadata(rel), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// fsync of a directory (so the names created, renamed or removed in it are durable); `""`
/// is the root. Errors are ignored: some file systems cannot sync a directory, and the data
/// itself was synced before.
fn sync_dir(dir: &Dir, rel: &Path) {
    let opened = if rel.as_os_str().is_empty() {
        dir.try_clone()
    } else {
        dir.open_dir(rel)
    };
    if let Ok(d) = opened {
        let _ = d.into_std_file().sync_all();
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
    let journal = match prepare(root, dir, changes) {
        Ok(j) => j,
        Err(e) => {
            discard(dir);
            return Err(e);
        }
    };
    forward(root, dir, journal)
}

/// Stages every file, then writes the journal: the commit point.
fn prepare(root: &Path, dir: &Dir, changes: &[Change<'_>]) -> Result<Journal, ScaffoldError> {
    let state = Path::new(STATE_DIR);
    if missing(dir, state) {
        step();
        dir.create_dir(state)
            .map_err(io_err(root, "creating directory", state))?;
    }
    step();
    dir.create_dir(TXN_DIR)
        .map_err(io_err(root, "creating directory", Path::new(TXN_DIR)))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files = Vec::with_capacity(changes.len());
    let mut staged: Vec<(cap_std::fs::File, &Path)> = Vec::with_capacity(changes.len());
    for (i, c) in changes.iter().enumerate() {
        if c.removes {
            // Only the old file is kept, for a rollback.
            let old = stage_old(i);
            step();
            if dir.hard_link(c.path, dir, &old).is_err() {
                dir.copy(c.path, dir, &old)
                    .map_err(io_err(root, "reading", c.path))?;
                let copy = dir.open(&old).map_err(io_err(root, "reading", c.path))?;
                staged.push((copy, c.path));
            }
            files.push(Entry {
                path: c.path.to_path_buf(),
                replaces: true,
                removes: true,
            });
            continue;
        }
        let mut need: Vec<PathBuf> = c
            .path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .take_while(|a| missing(dir, a))
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
        let new = stage_new(i);
        step();
        let mut file = dir.create(&new).map_err(io_err(root, "writing", c.path))?;
        file.write_all(c.contents)
            .map_err(io_err(root, "writing", c.path))?;
        if c.replaces
            && let Ok(meta) = dir.metadata(c.path)
        {
            let _ = file.set_permissions(meta.permissions());
        }
        staged.push((file, c.path));
        if c.replaces {
            // A hard link keeps the old file for a rollback at no cost in space; a copy where
            // the file system has no hard links.
            let old = stage_old(i);
            step();
            if dir.hard_link(c.path, dir, &old).is_err() {
                dir.copy(c.path, dir, &old)
                    .map_err(io_err(root, "reading", c.path))?;
                let copy = dir.open(&old).map_err(io_err(root, "reading", c.path))?;
                staged.push((copy, c.path));
            }
        }
        files.push(Entry {
            path: c.path.to_path_buf(),
            replaces: c.replaces,
            removes: false,
        });
    }
    sync_all(root, staged)?;
    sync_dir(dir, Path::new(TXN_DIR));
    let journal = Journal {
        command: command_line(),
        dirs,
        files,
    };
    write_journal(root, dir, &journal)?;
    Ok(journal)
}

/// fsync of every staged file, before the journal that makes them the project's next state.
/// On several threads: the file system then commits them together (ext4 and XFS batch
/// concurrent fsyncs into one journal commit), where one after the other costs a disk flush
/// each. The error names the project file whose staged copy failed.
fn sync_all(root: &Path, staged: Vec<(cap_std::fs::File, &Path)>) -> Result<(), ScaffoldError> {
    const THREADS: usize = 16;
    if staged.len() <= 1 {
        for (f, rel) in &staged {
            f.sync_all().map_err(io_err(root, "writing", rel))?;
        }
        return Ok(());
    }
    let per = staged.len().div_ceil(THREADS);
    let failed = std::thread::scope(|scope| {
        let workers: Vec<_> = staged
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .find_map(|(f, rel)| f.sync_all().err().map(|e| (*rel, e)))
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|w| w.join().ok().flatten())
            .next()
    });
    match failed {
        Some((rel, e)) => Err(io_err(root, "writing", rel)(e)),
        None => Ok(()),
    }
}

/// The journal, made durable: written to a temporary name, fsynced, renamed, and the
/// directories up to the root fsynced (so `.rsbuilder/txn` itself is found after a crash).
fn write_journal(root: &Path, dir: &Dir, journal: &Journal) -> Result<(), ScaffoldError> {
    let text = serde_json::to_vec_pretty(journal).map_err(|e| ScaffoldError::Io {
        action: "writing",
        path: root.join(JOURNAL),
        source: std::io::Error::other(e),
    })?;
    let jpath = Path::new(JOURNAL);
    step();
    let mut file = dir
        .create(JOURNAL_TMP)
        .map_err(io_err(root, "writing", jpath))?;
    file.write_all(&text)
        .and_then(|()| file.sync_all())
        .map_err(io_err(root, "writing", jpath))?;
    drop(file);
    step();
    dir.rename(JOURNAL_TMP, dir, JOURNAL)
        .map_err(io_err(root, "writing", jpath))?;
    sync_dir(dir, Path::new(TXN_DIR));
    sync_dir(dir, Path::new(STATE_DIR));
    sync_dir(dir, Path::new(""));
    Ok(())
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        "rsbuilder".into()
    } else {
        format!("rsbuilder {}", args.join(" "))
    }
}

/// Creates the directories and renames every staged file still present into place, then
/// removes the transaction. On an error, rolls back and returns the error.
fn forward(root: &Path, dir: &Dir, journal: Journal) -> Result<(), ScaffoldError> {
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
        for (i, e) in journal.files.iter().enumerate() {
            if e.removes {
                if missing(dir, &e.path) {
                    continue; // removed before the interruption
                }
                step();
                if let Err(err) = dir.remove_file(&e.path) {
                    result = Err(io_err(root, "removing", &e.path)(err));
                    break;
                }
                continue;
            }
            let new = stage_new(i);
            if missing(dir, &new) {
                continue; // renamed before the interruption
            }
            step();
            if let Err(err) = dir.rename(&new, dir, &e.path) {
                result = Err(io_err(root, "writing", &e.path)(err));
                break;
            }
        }
    }
    if let Err(err) = result {
        // From here on, an interrupted run is finished backwards. If even the empty marker
        // cannot be created, undo anyway: the old files are in the transaction directory.
        step();
        if let Ok(f) = dir.create(BACK) {
            let _ = f.sync_all();
        }
        sync_dir(dir, Path::new(TXN_DIR));
        let _ = back(dir, &journal);
        return Err(err);
    }
    sync_touched(dir, &journal);
    finish(dir);
    Ok(())
}

/// Puts every replaced file back, removes every created file and directory, and removes the
/// transaction. Returns the first error (the transaction is then kept, so the next command
/// tries again).
fn back(dir: &Dir, journal: &Journal) -> std::io::Result<()> {
    let mut first_err = None;
    for (i, e) in journal.files.iter().enumerate().rev() {
        if e.removes {
            let old = stage_old(i);
            if !missing(dir, &e.path) || missing(dir, &old) {
                continue; // never removed, or already put back
            }
            step();
            if let Err(err) = dir.rename(&old, dir, &e.path) {
                first_err.get_or_insert(err);
            }
            continue;
        }
        if !missing(dir, &stage_new(i)) {
            continue; // never renamed into place
        }
        let r = if e.replaces {
            let old = stage_old(i);
            if missing(dir, &old) {
                continue; // already put back
            }
            step();
            dir.rename(&old, dir, &e.path)
        } else {
            step();
            match dir.remove_file(&e.path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            }
        };
        if let Err(err) = r {
            first_err.get_or_insert(err);
        }
    }
    for d in journal.dirs.iter().rev() {
        if !missing(dir, d) {
            step();
            if let Err(err) = dir.remove_dir(d) {
                first_err.get_or_insert(err);
            }
        }
    }
    sync_touched(dir, journal);
    match first_err {
        Some(err) => Err(err),
        None => {
            finish(dir);
            Ok(())
        }
    }
}

/// fsync of every directory whose entries the apply changed.
fn sync_touched(dir: &Dir, journal: &Journal) {
    let mut parents: Vec<PathBuf> = journal
        .files
        .iter()
        .map(|e| parent_of(&e.path))
        .chain(journal.dirs.iter().map(|d| parent_of(d)))
        .collect();
    parents.sort();
    parents.dedup();
    for p in parents {
        sync_dir(dir, &p);
    }
}

/// Removes the transaction directory: first the staged and old files, then the journal (from
/// then on nothing is left to do), then the `back` marker and the directories. So while the
/// journal exists, `back` tells the direction; once it is gone, a directory holding nothing
/// but `back` is a finished apply.
fn finish(dir: &Dir) {
    if let Ok(entries) = dir.read_dir(TXN_DIR) {
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .filter(|n| n != "journal" && n != "back")
            .collect();
        names.sort();
        for n in names {
            step();
            let _ = dir.remove_file(Path::new(TXN_DIR).join(n));
        }
    }
    if !missing(dir, Path::new(JOURNAL)) {
        step();
        let _ = dir.remove_file(JOURNAL);
    }
    if !missing(dir, Path::new(BACK)) {
        step();
        let _ = dir.remove_file(BACK);
    }
    remove_state_dirs(dir);
}

fn remove_state_dirs(dir: &Dir) {
    if !missing(dir, Path::new(TXN_DIR)) {
        step();
        let _ = dir.remove_dir(TXN_DIR);
    }
    // Only when empty: a `.rsbuilder` the user keeps other things in stays.
    if dir
        .read_dir(STATE_DIR)
        .is_ok_and(|mut entries| entries.next().is_none())
    {
        step();
        let _ = dir.remove_dir(STATE_DIR);
    }
    sync_dir(dir, Path::new(""));
}

/// After a failed prepare: the staged files go; nothing in the project had changed.
fn discard(dir: &Dir) {
    // A fault point of its own: in a project whose `.rsbuilder/` also holds the tool-owned
    // records, this removal is the discard's only step, and a kill here must leave a project
    // the next command discards again.
    step();
    let _ = dir.remove_dir_all(TXN_DIR);
    remove_state_dirs(dir);
}

/// Finishes an apply that a killed command left in the project opened as `dir` (at `root`):
/// rolls it forward from a complete journal, finishes a rollback, or discards the staged files
/// of an apply killed before its journal was complete. `Ok(None)`: there was nothing to do.
///
/// Errors: a journal that cannot be read (the error says to look at `.rsbuilder/txn`), or a
/// file that cannot be put in place or back (the transaction is kept for the next try).
pub(super) fn recover(root: &Path, dir: &Dir) -> Result<Option<Recovery>, ScaffoldError> {
    if missing(dir, Path::new(TXN_DIR)) {
        if dir
            .read_dir(STATE_DIR)
            .is_ok_and(|mut entries| entries.next().is_none())
        {
            remove_state_dirs(dir);
        }
        return Ok(None);
    }
    let text = match dir.read(JOURNAL) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Staged files: killed before the commit point. Nothing or only `back`: killed
            // after a finished apply had removed its journal.
            let staged = dir.read_dir(TXN_DIR).is_ok_and(|entries| {
                entries
                    .filter_map(Result::ok)
                    .any(|e| e.file_name() != "back")
            });
            discard(dir);
            return Ok(staged.then_some(Recovery::Discarded));
        }
        Err(source) => {
            return Err(ScaffoldError::Io {
                action: "reading",
                path: root.join(JOURNAL),
                source,
            });
        }
    };
    let journal: Journal = serde_json::from_slice(&text).map_err(|e| ScaffoldError::Journal {
        path: root.join(JOURNAL),
        reason: e.to_string(),
    })?;
    let files = journal.files.len();
    let command = journal.command.clone();
    if missing(dir, Path::new(BACK)) {
        forward(root, dir, journal)?;
        Ok(Some(Recovery::RolledForward { command, files }))
    } else {
        back(dir, &journal).map_err(|source| ScaffoldError::Io {
            action: "restoring",
            path: root.join(TXN_DIR),
            source,
        })?;
        Ok(Some(Recovery::RolledBack { command, files }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project with `old.txt` ("old"), and the changes: `old.txt` replaced, `new/a.txt`
    /// created in a new directory.
    fn project() -> (tempfile::TempDir, Dir) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("old.txt"), "old").unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        (tmp, dir)
    }

    fn changes() -> Vec<Change<'static>> {
        vec![
            Change {
                path: Path::new("new/a.txt"),
                contents: b"a",
                replaces: false,
                removes: false,
            },
            Change {
                path: Path::new("old.txt"),
                contents: b"new",
                replaces: true,
                removes: false,
            },
        ]
    }

    fn names(root: &Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                e.path().strip_prefix(root).unwrap().display().to_string()
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_committed_journal_is_rolled_forward() {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes()).unwrap();
        // Killed after the commit, before any rename.
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "old"
        );
        let done = recover(tmp.path(), &dir).unwrap().unwrap();
        assert!(
            matches!(&done, Recovery::RolledForward { files: 2, .. }),
            "{done:?}"
        );
        assert!(done.to_string().contains("(rolled forward)"), "{done}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("new/a.txt")).unwrap(),
            "a"
        );
        assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);
        assert_eq!(recover(tmp.path(), &dir).unwrap(), None);
    }

    #[test]
    fn staged_files_without_a_journal_are_discarded() {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes()).unwrap();
        // Killed before the journal's rename: as if it had never been written.
        dir.remove_file(JOURNAL).unwrap();
        assert_eq!(
            recover(tmp.path(), &dir).unwrap(),
            Some(Recovery::Discarded)
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "old"
        );
        assert_eq!(names(tmp.path()), ["old.txt"]);
    }

    #[test]
    fn an_interrupted_undo_is_finished() {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes()).unwrap();
        // Both files were renamed into place, a later rename failed, the undo had begun.
        dir.create_dir("new").unwrap();
        dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
        dir.rename(stage_new(1), &dir, "old.txt").unwrap();
        dir.create(BACK).unwrap();
        let done = recover(tmp.path(), &dir).unwrap().unwrap();
        assert!(
            matches!(&done, Recovery::RolledBack { files: 2, .. }),
            "{done:?}"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "old"
        );
        assert_eq!(names(tmp.path()), ["old.txt"]);
    }

    #[test]
    fn a_journal_that_does_not_parse_is_an_error_naming_it() {
        let (tmp, dir) = project();
        dir.create_dir_all(TXN_DIR).unwrap();
        dir.write(JOURNAL, "{ not json").unwrap();
        let err = recover(tmp.path(), &dir).unwrap_err();
        assert!(matches!(err, ScaffoldError::Journal { .. }), "{err}");
        assert!(err.to_string().contains(".rsbuilder/txn/journal"), "{err}");
        // Left for the user to look at.
        assert!(tmp.path().join(JOURNAL).is_file());
    }

    #[test]
    fn an_empty_state_directory_is_removed_silently() {
        let (tmp, dir) = project();
        dir.create_dir_all(TXN_DIR).unwrap();
        dir.create(BACK).unwrap();
        assert_eq!(recover(tmp.path(), &dir).unwrap(), None);
        assert_eq!(names(tmp.path()), ["old.txt"]);
    }

    #[test]
    fn apply_writes_everything_and_leaves_no_state() {
        let (tmp, dir) = project();
        apply(tmp.path(), &dir, &changes()).unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "new"
        );
        assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);
    }

    /// A removal next to a write: rolled forward it is gone, rolled back it is there again
    /// with its bytes.
    #[test]
    fn a_removal_is_rolled_forward_or_back_with_the_rest() {
        let with_removal = |dir: &Dir| {
            dir.write("gone.txt", "bye").unwrap();
            let mut c = changes();
            c.push(Change {
                path: Path::new("gone.txt"),
                contents: b"",
                replaces: true,
                removes: true,
            });
            c
        };
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &with_removal(&dir)).unwrap();
        assert!(tmp.path().join("gone.txt").is_file());
        recover(tmp.path(), &dir).unwrap().unwrap();
        assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);

        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &with_removal(&dir)).unwrap();
        // The removal and the first write happened, then a rename failed.
        dir.remove_file("gone.txt").unwrap();
        dir.create_dir("new").unwrap();
        dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
        dir.create(BACK).unwrap();
        let done = recover(tmp.path(), &dir).unwrap().unwrap();
        assert!(
            matches!(&done, Recovery::RolledBack { files: 3, .. }),
            "{done:?}"
        );
        assert_eq!(names(tmp.path()), ["gone.txt", "old.txt"]);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("gone.txt")).unwrap(),
            "bye"
        );
    }
}
