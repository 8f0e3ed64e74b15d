//! Reads of the project, each path checked as for a write ([`super::paths`]) and read through
//! a handle rooted at the project: one file ([`read`], [`Plan::read`]), whether a path exists,
//! a directory's entries ([`list`]), a tree's files ([`Plan::read_tree`], [`Plan::list_files`]).

use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::error::ScaffoldError;
use super::paths::check_path;
use super::plan::Plan;
use super::regular;

impl Plan {
    /// Reads the project file `rel` (relative to the root) the way the engine reads it: the
    /// path checked as for a write (no `..`, no absolute path, no link leading out), then read
    /// through a handle rooted at the project, so a link swapped in after the check cannot
    /// redirect the read. `Ok(None)` when the file (or the root) does not exist.
    ///
    /// Errors: [`ScaffoldError::OutsideProject`], [`ScaffoldError::SymlinkEscape`],
    /// [`ScaffoldError::SymlinkIntoVcs`], [`ScaffoldError::NotADirectory`];
    /// [`ScaffoldError::Io`] for any other failure,
    /// including a file that is not UTF-8.
    pub fn read(&self, rel: impl AsRef<Path>) -> Result<Option<String>, ScaffoldError> {
        read(&self.root, rel.as_ref())
    }

    /// Whether the project has something (a file, a directory, a link, even a dangling one) at
    /// `rel`, checked as [`Plan::read`] checks a path, through the rooted handle and without
    /// following a final link. Errors as [`Plan::read`]'s path checks.
    pub fn exists(&self, rel: impl AsRef<Path>) -> Result<bool, ScaffoldError> {
        let rel = rel.as_ref();
        check_path(&self.root, rel)?;
        let Ok(dir) = Dir::open_ambient_dir(&self.root, ambient_authority()) else {
            return Ok(false);
        };
        Ok(dir.symlink_metadata(rel).is_ok())
    }

    /// Every file under the project directory `rel` whose name ends in `.ext`, read through
    /// the rooted handle: `(path, text)` with the path joined onto the project root (as a walk
    /// of `root/rel` names them), sorted by path. Hidden entries and `target/` are skipped, as
    /// `manifests` skips them; links are followed only while they stay inside the project.
    /// A missing directory holds no file.
    ///
    /// Errors: [`Plan::read`]'s, for the directory and for each file.
    pub fn read_tree(
        &self,
        rel: impl AsRef<Path>,
        ext: &str,
    ) -> Result<Vec<(PathBuf, String)>, ScaffoldError> {
        let rel = rel.as_ref();
        check_path(&self.root, rel)?;
        let Ok(root) = Dir::open_ambient_dir(&self.root, ambient_authority()) else {
            return Ok(Vec::new());
        };
        let io = |path: &Path, action: &'static str| {
            let path = self.root.join(path);
            move |source| ScaffoldError::Io {
                action,
                path,
                source,
            }
        };
        let mut out = Vec::new();
        let mut pending = vec![rel.to_path_buf()];
        while let Some(dir_rel) = pending.pop() {
            let entries = match root.read_dir(&dir_rel) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir_rel == rel => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(io(&dir_rel, "listing")(e)),
            };
            for entry in entries {
                let entry = entry.map_err(io(&dir_rel, "listing"))?;
                let name = entry.file_name();
                let skipped = name.to_string_lossy().starts_with('.') || name == "target";
                if skipped {
                    continue;
                }
                let path = dir_rel.join(&name);
                // Follows a link, but only to a target inside the project.
                let meta = root.metadata(&path).map_err(io(&path, "reading"))?;
                if meta.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == ext) {
                    // A FIFO or device with the extension is refused by name, not skipped.
                    let text = regular::read_in(&root, &path).map_err(io(&path, "reading"))?;
                    out.push((self.root.join(&path), text));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Every regular file under the project directory `rel`, hidden ones included, as paths
    /// relative to the project root, sorted; and, apart, every symbolic link found (not
    /// followed). Directories named in `skip` (`.git`, `target`) are not entered, at any depth.
    /// Listed through the rooted handle; a missing directory holds nothing.
    ///
    /// Errors: [`Plan::read`]'s path checks for `rel`; [`ScaffoldError::Io`] for a directory
    /// that cannot be listed.
    pub fn list_files(
        &self,
        rel: impl AsRef<Path>,
        skip: &[&str],
    ) -> Result<(Vec<PathBuf>, Vec<PathBuf>), ScaffoldError> {
        let rel = rel.as_ref();
        if !rel.as_os_str().is_empty() {
            check_path(&self.root, rel)?;
        }
        let Ok(root) = Dir::open_ambient_dir(&self.root, ambient_authority()) else {
            return Ok(Default::default());
        };
        let io = |path: &Path| {
            let path = self.root.join(path);
            move |source| ScaffoldError::Io {
                action: "listing",
                path,
                source,
            }
        };
        let (mut files, mut links) = (Vec::new(), Vec::new());
        let mut pending = vec![rel.to_path_buf()];
        while let Some(dir_rel) = pending.pop() {
            let listed = if dir_rel.as_os_str().is_empty() {
                root.entries()
            } else {
                root.read_dir(&dir_rel)
            };
            let entries = match listed {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir_rel == rel => {
                    return Ok(Default::default());
                }
                Err(e) => return Err(io(&dir_rel)(e)),
            };
            for entry in entries {
                let entry = entry.map_err(io(&dir_rel))?;
                let name = entry.file_name();
                let path = dir_rel.join(&name);
                let kind = entry.file_type().map_err(io(&path))?;
                if kind.is_symlink() {
                    links.push(path);
                } else if kind.is_dir() {
                    if !skip.iter().any(|s| name == *s) {
                        pending.push(path);
                    }
                } else if kind.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        links.sort();
        Ok((files, links))
    }
}

/// Reads the project file `rel` of the project at `root` as [`Plan::read`] does: the path
/// checked as for a write, then read through a handle rooted at the project. `Ok(None)` when
/// the file (or the root) does not exist. Errors as [`Plan::read`]'s.
pub fn read(root: &Path, rel: &Path) -> Result<Option<String>, ScaffoldError> {
    check_path(root, rel)?;
    let Ok(dir) = Dir::open_ambient_dir(root, ambient_authority()) else {
        return Ok(None);
    };
    match regular::read_in(&dir, rel) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ScaffoldError::Io {
            action: "reading",
            path: root.join(rel),
            source,
        }),
    }
}

/// One entry of a project directory as [`list`] returns it: its name, and whether it is a
/// directory (a link counts as what it is, never as its target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's file name, without the directory.
    pub name: std::ffi::OsString,
    /// `true` for a directory; `false` for a file, a link or anything else.
    pub is_dir: bool,
}

/// The entries of the project directory `rel` of the project at `root`, sorted by name, listed
/// through a handle rooted at the project after the path is checked as [`read`] checks it, so
/// a link swapped in for `rel` cannot make the listing show a directory outside the project.
/// `Ok(None)` when the directory (or the root) does not exist.
///
/// Errors: [`read`]'s path errors; [`ScaffoldError::Io`] when `rel` exists but cannot be
/// listed (it is a file, or unreadable).
pub fn list(root: &Path, rel: &Path) -> Result<Option<Vec<Entry>>, ScaffoldError> {
    check_path(root, rel)?;
    let Ok(dir) = Dir::open_ambient_dir(root, ambient_authority()) else {
        return Ok(None);
    };
    let io = |source| ScaffoldError::Io {
        action: "listing",
        path: root.join(rel),
        source,
    };
    let entries = match dir.read_dir(rel) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io)?;
        let is_dir = entry.file_type().map_err(io)?.is_dir();
        out.push(Entry {
            name: entry.file_name(),
            is_dir,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Some(out))
}
