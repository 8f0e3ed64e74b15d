//! Which project paths a plan may read or write: relative, inside the project, never in a
//! version-control directory ([`VCS_DIRS`]), never through a symbolic link that leads out of
//! the project or into such a directory; and the project root opened as a capability.

use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::error::ScaffoldError;

/// Version-control directories: no plan writes into one, and no journal naming a path in one
/// is applied (a file there, such as a git hook, is something the version-control tool runs).
pub const VCS_DIRS: &[&str] = &[
    ".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", "CVS", ".pijul",
];

/// Whether a component of the relative path `rel` is one of [`VCS_DIRS`] (compared without
/// regard to ASCII case, as case-insensitive file systems compare names).
pub fn is_vcs_path(rel: &Path) -> bool {
    rel.components().any(|c| match c {
        Component::Normal(name) => VCS_DIRS
            .iter()
            .any(|v| name.to_str().is_some_and(|n| n.eq_ignore_ascii_case(v))),
        _ => false,
    })
}

/// Rejects absolute paths, `..`, symlinks leading outside the root, and files standing
/// where a directory is needed.
pub(super) fn check_path(root_path: &Path, rel: &Path) -> Result<(), ScaffoldError> {
    PathCheck::new(root_path).check(rel)
}

/// [`check_path`] for the many paths of one plan: the root is canonicalized once, and a
/// directory found to be a real directory inside the project is not examined again (a
/// `manifests` run checks some 2,000 files below the same `config/crd/bases`, which cost a
/// dozen system calls each). A plan-time check: the writes themselves go through the rooted
/// handle, which refuses a link swapped in later.
pub(super) struct PathCheck<'r> {
    root_path: &'r Path,
    root: Option<PathBuf>,
    dirs: std::collections::HashSet<PathBuf>,
}

impl<'r> PathCheck<'r> {
    pub(super) fn new(root_path: &'r Path) -> Self {
        Self {
            root_path,
            root: None,
            dirs: Default::default(),
        }
    }

    pub(super) fn check(&mut self, rel: &Path) -> Result<(), ScaffoldError> {
        let outside = || ScaffoldError::OutsideProject {
            path: rel.to_path_buf(),
        };
        if rel.as_os_str().is_empty() {
            return Err(outside());
        }
        for c in rel.components() {
            if !matches!(c, Component::Normal(_)) {
                return Err(outside());
            }
        }
        if is_vcs_path(rel) {
            return Err(ScaffoldError::VcsDirectory {
                path: rel.to_path_buf(),
            });
        }
        let root_path = self.root_path;
        let root = self
            .root
            .get_or_insert_with(|| {
                root_path
                    .canonicalize()
                    .unwrap_or_else(|_| root_path.to_path_buf())
            })
            .clone();
        let mut cur = root_path.to_path_buf();
        let mut below = PathBuf::new();
        let comps: Vec<_> = rel.components().collect();
        for (i, c) in comps.iter().enumerate() {
            cur.push(c);
            below.push(c);
            let is_last = i + 1 == comps.len();
            if !is_last && self.dirs.contains(&below) {
                continue; // checked for an earlier path of this plan
            }
            let Ok(meta) = std::fs::symlink_metadata(&cur) else {
                break; // does not exist yet: nothing further down exists either
            };
            if meta.file_type().is_symlink() {
                // A dangling link is judged by where its text points.
                let resolved = cur
                    .canonicalize()
                    .ok()
                    .or_else(|| dangling_link_target(&cur));
                let inside = resolved.as_ref().is_some_and(|t| t.starts_with(&root));
                if !inside {
                    return Err(ScaffoldError::SymlinkEscape {
                        path: rel.to_path_buf(),
                        link: cur.clone(),
                    });
                }
                // Inside the project, but into `.git` (or another VCS directory): the
                // names of `rel` say nothing about that, where the link leads does.
                if let Some(target) = &resolved
                    && let Ok(in_project) = target.strip_prefix(&root)
                    && is_vcs_path(in_project)
                {
                    return Err(ScaffoldError::SymlinkIntoVcs {
                        path: rel.to_path_buf(),
                        link: below.clone(),
                        target: in_project.to_path_buf(),
                    });
                }
            }
            if !is_last {
                if !cur.is_dir() {
                    return Err(ScaffoldError::NotADirectory {
                        path: rel.to_path_buf(),
                        parent: cur.clone(),
                    });
                }
                self.dirs.insert(below.clone());
            }
        }
        Ok(())
    }
}

/// Where the dangling symbolic link `link` points, judged from the link's text: relative
/// targets are taken from the link's (canonical) directory and `..` is applied lexically.
/// `None` when that cannot be worked out (then it counts as outside the project).
fn dangling_link_target(link: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    let base = link.parent().and_then(|p| p.canonicalize().ok())?;
    let mut out = PathBuf::new();
    for c in base.join(target).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The project root as a capability: every path below is resolved beneath it, never through
/// a link or `..` that leads out.
pub(super) fn open_root(root: &Path) -> Result<Dir, ScaffoldError> {
    Dir::open_ambient_dir(root, ambient_authority()).map_err(|source| ScaffoldError::Io {
        action: "opening",
        path: root.to_path_buf(),
        source,
    })
}
