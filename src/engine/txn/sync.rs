//! Durability: directory fsyncs ([`DirSync`]), one `syncfs` of the file system where it
//! reports write errors, else an fsync per staged file.

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use super::{Journal, io_err, parent_of};
use crate::engine::error::ScaffoldError;

/// Directory fsyncs of one apply. Some file systems cannot sync a directory (`fsync` fails
/// with `EINVAL` or `ENOTSUP`: FUSE and network file systems among them); after the first such
/// answer no further directory of this apply is tried, since they all live on that file system.
pub(super) struct DirSync {
    pub(super) unsupported: std::cell::Cell<bool>,
}

impl DirSync {
    pub(super) fn new() -> Self {
        Self {
            unsupported: std::cell::Cell::new(false),
        }
    }

    /// fsync of the directory `rel` (`""` is the root), so the names created, renamed or
    /// removed in it are durable. The directory is opened for reading: a handle made by
    /// [`Dir::open_dir`] is an `O_PATH` descriptor, which `fsync` refuses with `EBADF` (how
    /// every directory fsync failed before). `Ok` when the file system cannot sync
    /// directories; other errors are returned.
    pub(super) fn sync(&self, dir: &Dir, rel: &Path) -> std::io::Result<()> {
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
pub(super) fn cannot_sync(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
    )
}

/// `syncfs(2)` of the file system holding `file`: every file's data and every directory's
/// entries on it are written to the disk before it returns. One call instead of an fsync per
/// staged file: those cost a journal commit each on ext4, about 0.8 ms on the development VM.
/// `Unsupported` where it is not Linux, or a kernel older than 5.8: before 5.8 `syncfs`
/// returned success even when writing a file failed, which would let a journal commit over
/// a staged file that is not on the disk; the per-file fsyncs report that error.
pub(super) fn sync_file_system(file: &cap_std::fs::File) -> std::io::Result<()> {
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
pub(super) fn syncfs_reports_errors(release: &str) -> bool {
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
pub(super) fn sync_all(
    root: &Path,
    txn: &Dir,
    staged: &[(String, &Path)],
) -> Result<(), ScaffoldError> {
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

/// fsync of every directory whose entries the apply changed, each once. Errors are ignored:
/// the files are in place by now and their data was made durable before the commit; a
/// directory whose entries are lost in a power cut before this sync keeps the journal's
/// directory with them only if the journal's removal is ordered after it, which the
/// journaling file systems (ext4, XFS, btrfs) do for metadata of one transaction.
pub(super) fn sync_touched(dir: &Dir, journal: &Journal, sync: &DirSync) {
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
