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

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};

use super::ScaffoldError;
use super::fault::step;
use super::record;

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
    /// The nonce of this apply's run record ([`record`]); a journal whose nonce is not the
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
                super::count(*files, "file")
            ),
            Recovery::RolledBack { command, files } => write!(
                f,
                "`{command}` was interrupted while undoing a failed write; finished undoing it (rolled back): none of its changes remain ({} restored)",
                super::count(*files, "file")
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

/// What becomes of a committed write that a command could not finish or undo completely
/// ([`ScaffoldError::Unfinished`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The journal is kept, with no `back` marker: the next command that writes rolls it
    /// forward.
    Forward,
    /// The journal is kept with its `back` marker: the next command that writes finishes
    /// undoing it.
    Back,
    /// Finishing it from its journal failed, and this run undid it: none of its changes
    /// remain and nothing is pending.
    Undone,
    /// The journal is kept, but the tree is not what finishing it should have made (the
    /// reason says which file): rsbuilder leaves it for a person to look at.
    Check(String),
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

/// Directory fsyncs of one apply. Some file systems cannot sync a directory (`fsync` fails
/// with `EINVAL` or `ENOTSUP`: FUSE and network file systems among them); after the first such
/// answer no further directory of this apply is tried, since they all live on that file system.
struct DirSync {
    unsupported: std::cell::Cell<bool>,
}

impl DirSync {
    fn new() -> Self {
        Self {
            unsupported: std::cell::Cell::new(false),
        }
    }

    /// fsync of the directory `rel` (`""` is the root), so the names created, renamed or
    /// removed in it are durable. The directory is opened for reading: a handle made by
    /// [`Dir::open_dir`] is an `O_PATH` descriptor, which `fsync` refuses with `EBADF` (how
    /// every directory fsync failed before). `Ok` when the file system cannot sync
    /// directories; other errors are returned.
    fn sync(&self, dir: &Dir, rel: &Path) -> std::io::Result<()> {
        if self.unsupported.get() {
            return Ok(());
        }
        let target = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let opened = dir.open_with(target, cap_std::fs::OpenOptions::new().read(true))?;
        match opened.sync_all() {
            Err(e) if cannot_sync(&e) => {
                self.unsupported.set(true);
                Ok(())
            }
            other => other,
        }
    }
}

/// The file system does not sync this kind of file (`EINVAL`, `ENOTSUP`, `ENOSYS`): not a
/// failure of the data, which is synced through the files themselves.
fn cannot_sync(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
    )
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
fn prepare(
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

/// `syncfs(2)` of the file system holding `file`: every file's data and every directory's
/// entries on it are written to the disk before it returns. One call instead of an fsync per
/// staged file: those cost a journal commit each on ext4, about 0.8 ms on the development VM.
/// `Unsupported` where it is not Linux, or a kernel older than 5.8: before 5.8 `syncfs`
/// returned success even when writing a file failed, which would let a journal commit over
/// a staged file that is not on the disk; the per-file fsyncs report that error.
fn sync_file_system(file: &cap_std::fs::File) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let release = rustix::system::uname();
        if !syncfs_reports_errors(&release.release().to_string_lossy()) {
            return Err(std::io::ErrorKind::Unsupported.into());
        }
        rustix::fs::syncfs(file).map_err(std::io::Error::from)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Whether a Linux kernel of release `release` (`uname -r`, e.g. `6.1.0-13-amd64`) reports
/// writeback errors from `syncfs`: 5.8 and later ("vfs: track per-sb writeback errors").
/// A release that does not start with `<major>.<minor>` is taken as older.
#[cfg(any(target_os = "linux", test))]
fn syncfs_reports_errors(release: &str) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    match (major, minor) {
        (Some(major), Some(minor)) => (major, minor) >= (5, 8),
        _ => false,
    }
}

/// fsync of every staged file (named in `txn`), where `syncfs` is unavailable. Each file is
/// opened again by name, synced and closed, so at most one descriptor per thread is open:
/// the fsync writes the file's data whichever descriptor asks, and a write error not yet
/// seen is reported to a descriptor opened after it (Linux 4.13 and later). On several
/// threads: the file system then commits them together (ext4 and XFS batch concurrent
/// fsyncs into one journal commit), where one after the other costs a disk flush each. The
/// error names the project file whose staged copy failed.
fn sync_all(root: &Path, txn: &Dir, staged: &[(String, &Path)]) -> Result<(), ScaffoldError> {
    const THREADS: usize = 16;
    let sync_one = |name: &str| -> std::io::Result<()> {
        txn.open_with(name, cap_std::fs::OpenOptions::new().read(true))?
            .sync_all()
    };
    if staged.len() <= 1 {
        for (name, rel) in staged {
            sync_one(name).map_err(io_err(root, "writing", rel))?;
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
                        .find_map(|(name, rel)| sync_one(name).err().map(|e| (*rel, e)))
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

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        "rsbuilder".into()
    } else {
        format!("rsbuilder {}", args.join(" "))
    }
}

/// Whether [`forward`] runs right after its own [`prepare`] (every staged file is there) or
/// finishes an interrupted apply (some may have been renamed already).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fresh {
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
fn forward(
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
fn back(dir: &Dir, h: &Handles, journal: &Journal, sync: &DirSync) -> std::io::Result<()> {
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

/// fsync of every directory whose entries the apply changed, each once. Errors are ignored:
/// the files are in place by now and their data was made durable before the commit; a
/// directory whose entries are lost in a power cut before this sync keeps the journal's
/// directory with them only if the journal's removal is ordered after it, which the
/// journaling file systems (ext4, XFS, btrfs) do for metadata of one transaction.
fn sync_touched(dir: &Dir, journal: &Journal, sync: &DirSync) {
    let mut parents: Vec<PathBuf> = journal
        .files
        .iter()
        .map(|e| parent_of(&e.path))
        .chain(journal.dirs.iter().map(|d| parent_of(d)))
        .collect();
    parents.sort();
    parents.dedup();
    for p in parents {
        let _ = sync.sync(dir, &p);
    }
}

/// Why a tree is not (or cannot be shown to be) what finishing a journal makes.
enum Differs {
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
fn check_forward(dir: &Dir, journal: &Journal) -> Result<(), Differs> {
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
fn check_back(dir: &Dir, journal: &Journal) -> Result<(), Differs> {
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
fn differs(root: &Path, command: &str, retry: Outcome, differs: Differs) -> ScaffoldError {
    let checking = io_err(root, "checking", Path::new(TXN_DIR));
    match differs {
        Differs::Unreadable(e) => unfinished(root, command, retry, checking(e)),
        Differs::Not(reason) => {
            let source = checking(std::io::Error::other(reason.clone()));
            unfinished(root, command, Outcome::Check(reason), source)
        }
    }
}

/// Removes the transaction directory: first the staged and old files, then the journal (from
/// then on nothing is left to do), then the `back` marker and the directories. So while the
/// journal exists, `back` tells the direction; once it is gone, a directory holding nothing
/// but `back` is a finished apply. The run record goes last. Stops at the first removal that
/// fails and returns its error, the journal then still in place.
fn finish(root: &Path, dir: &Dir, h: &Handles, sync: &DirSync) -> std::io::Result<()> {
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
fn forget_run(root: &Path, dir: &Dir, state: &Dir) {
    if matches!(exists(state, TXN_NAME), Ok(false))
        && let Ok(run) = record::name(root, dir)
    {
        record::remove(&run);
    }
}

/// Removes `.rsbuilder` (opened as `state`) when it is empty: a `.rsbuilder` the user keeps
/// other things in stays. By name, so at best effort: it stays when the name no longer holds
/// an empty directory.
fn remove_empty_state_dir(dir: &Dir, state: &Dir, sync: &DirSync) {
    if state
        .entries()
        .is_ok_and(|mut entries| entries.next().is_none())
    {
        step();
        let _ = dir.remove_dir(STATE_DIR);
    }
    let _ = sync.sync(dir, Path::new(""));
}

/// After a failed prepare, which changed no project file: the journal goes first, then the
/// staged files, and `err` is returned. When a committed journal cannot be removed, the
/// next command will roll it forward, and the error says so.
fn discard(
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

/// Removes a transaction directory that holds no journal (staged files of an apply that never
/// committed), then `.rsbuilder` if empty, then the run record.
fn drop_staged(root: &Path, dir: &Dir, h: &Handles, sync: &DirSync) {
    let _ = h.state.remove_dir_all(TXN_NAME);
    remove_empty_state_dir(dir, &h.state, sync);
    forget_run(root, dir, &h.state);
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
/// `.rsbuilder/txn`), and every staged file must have the bytes the journal's hash says. The
/// files put in place get the modes rsbuilder's own rule gives them (a replaced file's mode,
/// or 0666 minus the umask), never the staged file's. In [`Mode::ReadOnly`] nothing is done.
///
/// Errors: [`ScaffoldError::UntrustedTxn`] for a `.rsbuilder/txn` that fails those checks
/// (nothing in it is applied or removed); [`ScaffoldError::Interrupted`] in
/// [`Mode::ReadOnly`] when there is an apply to finish; a journal that cannot be read (the
/// error says to look at `.rsbuilder/txn`); a file that cannot be put in place or back (the
/// transaction is kept for the next try).
pub(super) fn recover(
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

/// Whether `rel` is a path a plan can write: relative, plain components only, not in a
/// version-control directory ([`super::is_vcs_path`]) and not in `.rsbuilder/txn`.
fn plannable(rel: &Path) -> bool {
    !rel.as_os_str().is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        && !super::is_vcs_path(rel)
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

/// Lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The mode a new file gets from any program: 0666 minus the process's umask.
#[cfg(unix)]
fn new_file_mode() -> u32 {
    0o666 & !umask()
}

/// The process's umask: from `/proc/self/status` on Linux (4.7 and later), else set and put
/// back, which is safe here because recovery runs before the command starts other threads.
#[cfg(unix)]
fn umask() -> u32 {
    #[cfg(target_os = "linux")]
    if let Some(mask) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
    {
        return mask;
    }
    // SAFETY: umask(2) cannot fail; the old value is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// Gives the staged file `new` (in `txn`) the mode rsbuilder's rule gives the file it becomes
/// at `target`: the replaced file's permission bits, or [`new_file_mode`] for a new file.
/// Whatever mode the staged file carries is not used.
fn set_mode(dir: &Dir, txn: &Dir, new: &str, target: &Path, replaces: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt as _;
        let current = match dir.symlink_metadata(target) {
            Ok(meta) if replaces && meta.is_file() => {
                use cap_std::fs::MetadataExt as _;
                Some(meta.mode() & 0o777)
            }
            _ => None,
        };
        let mode = current.unwrap_or_else(new_file_mode);
        txn.set_permissions(new, cap_std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, txn, new, target, replaces);
        Ok(())
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
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        // Killed after the commit, before any rename.
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "old"
        );
        let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
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
        assert_eq!(recover(tmp.path(), &dir, Mode::Repair).unwrap(), None);
    }

    /// The journal's text, rewritten by `edit` (as a checkout or a person could).
    fn tamper(dir: &Dir, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut j: serde_json::Value = serde_json::from_slice(&dir.read(JOURNAL).unwrap()).unwrap();
        edit(&mut j);
        dir.write(JOURNAL, serde_json::to_vec(&j).unwrap()).unwrap();
    }

    /// A transaction this machine did not record, or whose journal or staged files were
    /// changed after the record, is reported and left exactly as it is.
    #[test]
    fn only_a_recorded_untampered_journal_is_applied() {
        type Attack = fn(&Path, &Dir);
        let attacks: [(&str, Attack); 5] = [
            ("no record", |root, dir| {
                record::remove(&record::name(root, dir).unwrap());
            }),
            ("another nonce", |_, dir| {
                tamper(dir, |j| {
                    j["nonce"] = "00000000000000000000000000000000".into()
                });
            }),
            ("a path in .git", |_, dir| {
                tamper(dir, |j| {
                    j["files"][0]["path"] = ".git/hooks/pre-commit".into()
                });
            }),
            ("a path in .rsbuilder/txn", |_, dir| {
                tamper(dir, |j| j["dirs"] = serde_json::json!([".rsbuilder/txn/x"]));
            }),
            ("other staged bytes", |_, dir| {
                dir.write(stage_new(1), "evil").unwrap();
            }),
        ];
        for (what, attack) in attacks {
            let (tmp, dir) = project();
            prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
            attack(tmp.path(), &dir);
            let before = names(tmp.path());
            let err = recover(tmp.path(), &dir, Mode::Repair).unwrap_err();
            assert!(
                matches!(err, ScaffoldError::UntrustedTxn { .. }),
                "{what}: {err}"
            );
            assert!(
                err.to_string().contains("Nothing in it was applied"),
                "{err}"
            );
            assert_eq!(names(tmp.path()), before, "{what}");
            assert_eq!(
                std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
                "old",
                "{what}"
            );
            // Read-only, the same answer.
            let err = recover(tmp.path(), &dir, Mode::ReadOnly).unwrap_err();
            assert!(
                matches!(err, ScaffoldError::UntrustedTxn { .. }),
                "{what}: {err}"
            );
            record::remove(&record::name(tmp.path(), &dir).unwrap());
        }
    }

    /// A genuine interrupted apply is reported, not finished, by a read-only command, which
    /// changes nothing; the next command that writes finishes it.
    #[test]
    fn a_read_only_recovery_reports_and_changes_nothing() {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        let before = names(tmp.path());
        let err = recover(tmp.path(), &dir, Mode::ReadOnly).unwrap_err();
        assert!(
            matches!(
                &err,
                ScaffoldError::Interrupted {
                    command: Some(_),
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("rsbuilder alpha recover"), "{err}");
        assert_eq!(names(tmp.path()), before);
        assert!(matches!(
            recover(tmp.path(), &dir, Mode::Repair).unwrap(),
            Some(Recovery::RolledForward { .. })
        ));
        assert_eq!(recover(tmp.path(), &dir, Mode::ReadOnly).unwrap(), None);
    }

    /// Files put in place by a recovery get rsbuilder's modes, not the staged files'.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_recovery_sets_the_modes_itself() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let (tmp, dir) = project();
        std::fs::set_permissions(
            tmp.path().join("old.txt"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        for i in 0..2 {
            std::fs::set_permissions(
                tmp.path().join(stage_new(i)),
                std::fs::Permissions::from_mode(0o4755),
            )
            .unwrap();
        }
        recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
        assert_eq!(mode(&tmp.path().join("new/a.txt")), new_file_mode());
        assert_eq!(new_file_mode() & 0o111, 0);
        assert_eq!(mode(&tmp.path().join("old.txt")), 0o640);
    }

    #[test]
    fn staged_files_without_a_journal_are_discarded() {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        // Killed before the journal's rename: as if it had never been written.
        dir.remove_file(JOURNAL).unwrap();
        assert_eq!(
            recover(tmp.path(), &dir, Mode::Repair).unwrap(),
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
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        // Both files were renamed into place, a later rename failed, the undo had begun.
        dir.create_dir("new").unwrap();
        dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
        dir.rename(stage_new(1), &dir, "old.txt").unwrap();
        dir.create(BACK).unwrap();
        let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
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
        // Recorded (this machine's run), then the journal's text was damaged.
        let run = record::name(tmp.path(), &dir).unwrap();
        let rec = record::Record {
            nonce: record::nonce().unwrap(),
            root: tmp.path().to_path_buf(),
        };
        record::write(&run, &rec).unwrap();
        dir.create_dir_all(TXN_DIR).unwrap();
        dir.write(JOURNAL, "{ not json").unwrap();
        let err = recover(tmp.path(), &dir, Mode::Repair).unwrap_err();
        record::remove(&run);
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
        assert_eq!(recover(tmp.path(), &dir, Mode::Repair).unwrap(), None);
        assert_eq!(names(tmp.path()), ["old.txt"]);
    }

    /// Directories are synced through a descriptor that `fsync` accepts: the `O_PATH`
    /// handles of `Dir::open_dir` made every directory fsync fail with `EBADF`, unnoticed.
    #[test]
    fn directories_are_really_fsynced() {
        let (_tmp, dir) = project();
        dir.create_dir_all("a/b").unwrap();
        let sync = DirSync::new();
        for d in ["", "a", "a/b"] {
            sync.sync(&dir, Path::new(d)).unwrap();
        }
        assert!(
            !sync.unsupported.get(),
            "a local file system syncs directories"
        );
        // A path that is not a directory of the project is an error, not a silent skip.
        assert!(sync.sync(&dir, Path::new("missing")).is_err());
    }

    #[test]
    fn syncfs_is_used_only_where_it_reports_write_errors() {
        for (release, yes) in [
            ("5.8.0", true),
            ("6.18.44-fc-v1098", true),
            ("10.0", true),
            ("5.7.19-generic", false),
            ("4.19.0-27-amd64", false),
            ("5", false),
            ("", false),
            ("linux", false),
        ] {
            assert_eq!(syncfs_reports_errors(release), yes, "{release}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_file_system_is_synced_in_one_call() {
        let (_tmp, dir) = project();
        let file = dir.create("x").unwrap();
        sync_file_system(&file).unwrap();
    }

    /// Staging keeps no descriptor per file: 2,000 files are written under a limit of 256
    /// open descriptors. The limit is set in a child process (this test binary run again
    /// for this one test), so the other tests keep theirs.
    #[cfg(target_os = "linux")]
    #[test]
    fn staging_many_files_stays_within_a_low_descriptor_limit() {
        const CHILD: &str = "RSBUILDER_TEST_LOW_NOFILE_CHILD";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "engine::txn::tests::staging_many_files_stays_within_a_low_descriptor_limit",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{text}");
            assert!(text.contains("2000 files applied"), "{text}");
            return;
        }
        let limit = rustix::process::Rlimit {
            current: Some(256),
            maximum: rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum,
        };
        rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
        let (tmp, dir) = project();
        let paths: Vec<PathBuf> = (0..2000)
            .map(|i| PathBuf::from(format!("new/f{i}.txt")))
            .collect();
        let changes: Vec<Change<'_>> = paths
            .iter()
            .map(|p| Change {
                path: p,
                contents: b"x",
                replaces: false,
                removes: false,
            })
            .collect();
        apply(tmp.path(), &dir, &changes).unwrap();
        assert_eq!(
            std::fs::read_dir(tmp.path().join("new")).unwrap().count(),
            2000
        );
        println!("2000 files applied");
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
        prepare(
            tmp.path(),
            &dir,
            &with_removal(&dir),
            &DirSync::new(),
            &mut None,
        )
        .unwrap();
        assert!(tmp.path().join("gone.txt").is_file());
        recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
        assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);

        let (tmp, dir) = project();
        prepare(
            tmp.path(),
            &dir,
            &with_removal(&dir),
            &DirSync::new(),
            &mut None,
        )
        .unwrap();
        // The removal and the first write happened, then a rename failed.
        dir.remove_file("gone.txt").unwrap();
        dir.create_dir("new").unwrap();
        dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
        dir.create(BACK).unwrap();
        let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
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
