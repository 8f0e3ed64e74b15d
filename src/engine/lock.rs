//! The project lock: one rsbuilder command at a time writes a project.
//!
//! The lock is an exclusive advisory lock (`flock(2)` on Unix, through fs4) on the project
//! directory itself, so it creates no file and leaves nothing behind: the tree after a command
//! is exactly what the command wrote. A second command waits for the lock, says so once on
//! stderr, and gives up after [`timeout`] with [`ScaffoldError::Locked`] (exit code 75, see
//! docs/exit-codes.md). The operating system releases the lock when the holder exits, however
//! it exits, so a killed command never leaves a stale lock.
//!
//! Where a directory cannot be opened as a file (Windows), the lock is taken on the file
//! `.rsbuilder/lock` instead, which then stays in the project.
//!
//! Commands take the lock through [`lock_project`] (or [`lock_project_read_only`], or
//! [`recover_project`] for `alpha recover`), which also deal with a write a killed command
//! left behind ([`super::txn`]) before the command reads the project.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ScaffoldError;
use super::paths::open_root;
use super::rustfmt;
use super::txn::{self, Mode, Recovery};

/// Seconds a command waits for the lock unless `RSBUILDER_LOCK_TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;

/// Held while a command reads and writes a project; dropping it releases the lock.
#[derive(Debug)]
pub struct ProjectLock {
    _file: std::fs::File,
    root: PathBuf,
}

impl ProjectLock {
    /// The locked project directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// The longest wait `RSBUILDER_LOCK_TIMEOUT` may ask for, in seconds (a year).
pub const MAX_TIMEOUT_SECS: u64 = 365 * 24 * 3600;

/// How long to wait for the lock: `RSBUILDER_LOCK_TIMEOUT` in seconds (a decimal number, `0`
/// means try once), else [`DEFAULT_TIMEOUT_SECS`]. Errors: [`ScaffoldError::LockTimeout`]
/// for a value that is not a number from 0 to [`MAX_TIMEOUT_SECS`] (`NaN`, `-1`, `1e20`):
/// a setting is not ignored.
pub fn timeout() -> Result<Duration, ScaffoldError> {
    let Ok(value) = std::env::var("RSBUILDER_LOCK_TIMEOUT") else {
        return Ok(Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS));
    };
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=MAX_TIMEOUT_SECS as f64).contains(s))
        .map(Duration::from_secs_f64)
        .ok_or(ScaffoldError::LockTimeout {
            value,
            max: MAX_TIMEOUT_SECS,
        })
}

/// Takes the exclusive lock on the project at `root` (an existing directory), waiting up to
/// [`timeout`]. While it waits, one line on stderr says so.
///
/// Errors: [`ScaffoldError::Locked`] when another process still holds the lock at the end of
/// the wait; [`ScaffoldError::Io`] when the directory cannot be opened or locked.
pub fn acquire(root: &Path) -> Result<ProjectLock, ScaffoldError> {
    let file = lock_file(root)?;
    let limit = timeout()?;
    let start = Instant::now();
    let mut said = false;
    loop {
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {
                return Ok(ProjectLock {
                    _file: file,
                    root: root.to_path_buf(),
                });
            }
            Err(fs4::TryLockError::WouldBlock) => {}
            Err(fs4::TryLockError::Error(source)) => {
                return Err(ScaffoldError::Io {
                    action: "locking",
                    path: root.to_path_buf(),
                    source,
                });
            }
        }
        let waited = start.elapsed();
        if waited >= limit {
            return Err(ScaffoldError::Locked {
                root: root.to_path_buf(),
                waited_secs: limit.as_secs_f64(),
            });
        }
        if !said {
            eprintln!(
                "waiting for another rsbuilder command to finish in {} (up to {} s; RSBUILDER_LOCK_TIMEOUT sets the limit)",
                root.display(),
                limit.as_secs_f64()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(20).min(limit - waited));
    }
}

#[cfg(unix)]
fn lock_file(root: &Path) -> Result<std::fs::File, ScaffoldError> {
    std::fs::File::open(root).map_err(|source| ScaffoldError::Io {
        action: "locking",
        path: root.to_path_buf(),
        source,
    })
}

#[cfg(not(unix))]
fn lock_file(root: &Path) -> Result<std::fs::File, ScaffoldError> {
    let dir = root.join(".rsbuilder");
    let path = dir.join("lock");
    std::fs::create_dir_all(&dir)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
        })
        .map_err(|source| ScaffoldError::Io {
            action: "locking",
            path,
            source,
        })
}

/// Takes the project lock on `root` (waiting as [`acquire`] does), then finishes an
/// apply that a killed command left behind (see [`txn`]), printing on stderr what it did.
/// Every command that reads a project to change it calls this first and keeps the lock until
/// it has written.
///
/// Errors: [`ScaffoldError::Locked`] after the wait; an unreadable journal; a file an
/// interrupted apply cannot put in place or back.
pub fn lock_project(root: &Path) -> Result<ProjectLock, ScaffoldError> {
    lock_project_as(root, Mode::Repair)
}

/// [`lock_project`] for a command that only reads the project (`manifests --check`, `alpha
/// update --dry-run`): an apply an interrupted command left behind is reported, never
/// finished, and nothing is written.
///
/// Errors: [`lock_project`]'s, and [`ScaffoldError::Interrupted`] when there is an apply to
/// finish.
pub fn lock_project_read_only(root: &Path) -> Result<ProjectLock, ScaffoldError> {
    lock_project_as(root, Mode::ReadOnly)
}

/// Takes the project lock on `root`, finishes an apply an interrupted command left behind, and
/// releases the lock: `rsbuilder alpha recover`. Returns what was done, `None` when there was
/// nothing to finish. Errors as [`lock_project`]'s.
pub fn recover_project(root: &Path) -> Result<Option<Recovery>, ScaffoldError> {
    let _lock = acquire(root)?;
    let dir = open_root(root)?;
    rustfmt::remove_leftovers(root);
    txn::recover(root, &dir, Mode::Repair)
}

fn lock_project_as(root: &Path, mode: Mode) -> Result<ProjectLock, ScaffoldError> {
    let lock = acquire(root)?;
    let dir = open_root(root)?;
    if mode == Mode::Repair {
        // A killed command's formatting directory (see [`rustfmt`]).
        rustfmt::remove_leftovers(root);
    }
    if let Some(done) = txn::recover(root, &dir, mode)? {
        eprintln!("note: {done}");
    }
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_then_fails_with_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path()).unwrap();
        // A second open file description on the same directory (a second process, for flock)
        // cannot take it while the first is held.
        let file = lock_file(dir.path()).unwrap();
        assert!(matches!(
            fs4::FileExt::try_lock(&file),
            Err(fs4::TryLockError::WouldBlock)
        ));
        drop(held);
        assert!(fs4::FileExt::try_lock(&file).is_ok());
        // Nothing was created in the project.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
