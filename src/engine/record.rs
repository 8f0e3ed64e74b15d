//! The run record: what lets the next command tell an apply this machine's rsbuilder
//! interrupted from a `.rsbuilder/txn` that came with a checkout.
//!
//! Before an apply creates `.rsbuilder/txn`, it writes a record outside the project, in the
//! user's state directory (`$XDG_STATE_HOME/rsbuilder/runs/`, else
//! `~/.local/state/rsbuilder/runs/`, made readable by the user only). The record is named
//! after the identity of the locked directory (its device and inode number) and holds a fresh
//! random nonce; the journal carries the same nonce. The record is made durable before the
//! journal is committed and removed once the apply has finished (or its staged files were
//! discarded).
//!
//! A later command honours `.rsbuilder/txn` only when a record for the same directory exists
//! and its nonce is the journal's. A repository cannot carry the record (it lives outside the
//! project), cannot guess the nonce (128 random bits), and a journal copied from elsewhere
//! names another directory's record. A journal committed by mistake and checked out again in
//! the same directory finds no record either: the record went when its apply finished.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};

use super::ScaffoldError;
use super::fault::step;

/// The state directory's environment variable, as the XDG Base Directory specification
/// names it.
const XDG_STATE_HOME: &str = "XDG_STATE_HOME";

/// One record's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Record {
    /// 32 hex digits from the operating system's random source.
    pub nonce: String,
    /// The project directory, for a person reading the state directory.
    pub root: PathBuf,
}

/// Where records live: `$XDG_STATE_HOME/rsbuilder/runs`, else
/// `$HOME/.local/state/rsbuilder/runs` (relative values ignored, as the specification says).
/// `None` when neither variable gives an absolute path.
pub(super) fn runs_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute(XDG_STATE_HOME)
        .or_else(|| absolute("HOME").map(|h| h.join(".local/state")))
        .map(|state| state.join("rsbuilder/runs"))
}

/// The record's file name for the directory opened as `dir`: its device and inode number
/// (the identity the project lock is taken on), or on systems without them a hash of `root`'s
/// canonical path.
pub(super) fn name(root: &Path, dir: &Dir) -> std::io::Result<String> {
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt as _;
        let _ = root;
        let meta = dir.dir_metadata()?;
        Ok(format!("{:x}-{:x}", meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        let canonical = root.canonicalize()?;
        Ok(super::owned::sha256_hex(&canonical.to_string_lossy()))
    }
}

/// A fresh nonce: 16 bytes of the operating system's random source, in hex.
pub(super) fn nonce() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn state_error(path: &Path, source: std::io::Error) -> ScaffoldError {
    ScaffoldError::Record {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes the record `name` durably (a temporary name, fsync, rename, fsync of the directory),
/// creating the state directory (mode 0700) when missing.
///
/// Errors: [`ScaffoldError::Record`] when there is no state directory or it cannot be written.
pub(super) fn write(name: &str, record: &Record) -> Result<(), ScaffoldError> {
    let Some(dir) = runs_dir() else {
        return Err(state_error(
            Path::new("$XDG_STATE_HOME"),
            std::io::Error::other("neither XDG_STATE_HOME nor HOME is an absolute path"),
        ));
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir).map_err(|e| state_error(&dir, e))?;
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp.{}", std::process::id()));
    let text = serde_json::to_vec(record).map_err(|e| state_error(&path, e.into()))?;
    step();
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        // The name must be durable before the journal that relies on it is committed.
        match std::fs::File::open(&dir).and_then(|d| d.sync_all()) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
                ) =>
            {
                Ok(())
            }
            other => other,
        }
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        state_error(&path, e)
    })
}

/// The record `name`, `None` when there is none (or no state directory) or it does not parse.
pub(super) fn read(name: &str) -> Option<Record> {
    let path = runs_dir()?.join(name);
    // A record is a few dozen bytes; anything else is not one of ours.
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read(&path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Removes the record `name` if it is there. Errors are ignored: a record left behind names
/// no journal, and the next command in that directory removes it.
pub(super) fn remove(name: &str) {
    let Some(dir) = runs_dir() else { return };
    let path = dir.join(name);
    if path.exists() {
        step();
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_random_hex() {
        let (a, b) = (nonce().unwrap(), nonce().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[cfg(unix)]
    #[test]
    fn the_name_is_the_directory_identity() {
        use std::os::unix::fs::MetadataExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        let meta = std::fs::metadata(tmp.path()).unwrap();
        assert_eq!(
            name(tmp.path(), &dir).unwrap(),
            format!("{:x}-{:x}", meta.dev(), meta.ino())
        );
    }
}
