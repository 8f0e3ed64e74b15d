//! What a command asks of the engine: a [`Plan`], the ordered [`FileOp`]s it is built from,
//! and the [`Resolved`] outcome for each file ([`Action`]). The plan's reads of the project
//! ([`Plan::read`] and the others) are in `read.rs`; [`Plan::resolve`] and [`Plan::apply`]
//! are in `resolve.rs`.

use std::fmt;
use std::path::{Path, PathBuf};

use super::file::File;

/// One planned change to the project tree: a whole file, or an edit of one. Paths are
/// relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Write a whole file, as the [`File`] value says.
    Create(File),
    /// Insert `fragment` before the line holding the scaffold marker `marker` (the part after
    /// `+kubebuilder:scaffold:`; found by syntax, exactly once, see [`super::marker`]),
    /// indented like that line, unless the fragment is already in the file.
    Insert {
        /// Relative path.
        path: PathBuf,
        /// Marker name (`imports`, `controllers`, `crdkustomizeresource`).
        marker: String,
        /// Text to insert; a trailing newline is added when missing.
        fragment: String,
    },
    /// Add the one-line `line` (a `pub mod x;` declaration) to the run of `pub mod` lines
    /// directly above the scaffold marker `marker`, keeping that run in the byte-wise order
    /// rustfmt gives it (so module lists stay `cargo fmt`-clean, where [`FileOp::Insert`]
    /// would append), unless the line is already in the file.
    InsertSorted {
        /// Relative path.
        path: PathBuf,
        /// Marker name (`modules`, `api-versions`, `controller-modules`).
        marker: String,
        /// The line to add.
        line: String,
    },
    /// Remove the file at `path` if it exists (`alpha update` for a tool-owned file this
    /// version no longer has, `alpha generate` in place). A directory it leaves empty stays.
    Remove {
        /// Relative path.
        path: PathBuf,
    },
    /// Make the dependency `name` present in the `[table]` of the Cargo.toml at `path`, edited
    /// with `toml_edit` so the user's formatting and comments stay: appended when absent, kept
    /// (with missing `features` added) when its version is compatible, an error naming the file
    /// and line when it is not. The rules are in [`super::cargo_dep`].
    EnsureDependency {
        /// Relative path of the Cargo.toml.
        path: PathBuf,
        /// `dependencies`, `dev-dependencies` or `build-dependencies`.
        table: String,
        /// The package name (the key).
        name: String,
        /// A TOML value: `"0.26"` or `{ version = "0.26", default-features = false }`.
        spec: String,
        /// Features the project needs enabled.
        features: Vec<String>,
    },
    /// Drop the records of the tool-owned file `path` (its line in
    /// `.rsbuilder/tool-owned.sha256` and its merge base under `.rsbuilder/base/`): the file
    /// is no longer rsbuilder's, because this version no longer has it. The file itself stays.
    Untrack {
        /// Relative path.
        path: PathBuf,
    },
}

impl FileOp {
    /// The path the operation writes or edits.
    pub fn path(&self) -> &Path {
        match self {
            FileOp::Create(File { path, .. })
            | FileOp::Insert { path, .. }
            | FileOp::InsertSorted { path, .. }
            | FileOp::Remove { path }
            | FileOp::EnsureDependency { path, .. }
            | FileOp::Untrack { path } => path,
        }
    }
}

/// What happened (or would happen) to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// New file.
    Created,
    /// Existing file with new contents.
    Updated,
    /// Existing file left alone (policy Skip, or contents identical).
    Unchanged,
    /// Existing file removed ([`FileOp::Remove`]).
    Removed,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Created => "create",
            Action::Updated => "update",
            Action::Unchanged => "unchanged",
            Action::Removed => "remove",
        })
    }
}

/// The resolved outcome for one path: the action and the final contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Relative path.
    pub path: PathBuf,
    /// Created / updated / unchanged.
    pub action: Action,
    /// Final contents (equal to the current contents when unchanged; empty when removed).
    pub contents: String,
}

/// An ordered list of file operations against a project root: whole files ([`File`]
/// values) and edits, applied in order. Everything about a file (its format, its owner, its
/// policy) is in its operation; the plan holds nothing beside.
#[derive(Debug, Clone)]
pub struct Plan {
    pub(super) root: PathBuf,
    pub(super) force: bool,
    pub(super) ops: Vec<FileOp>,
}

impl Plan {
    /// An empty plan for the project at `root`. With `force`, files whose policy is
    /// [`IfExists::Error`](super::IfExists::Error) are overwritten instead of failing the plan.
    pub fn new(root: impl Into<PathBuf>, force: bool) -> Self {
        Self {
            root: root.into(),
            force,
            ops: Vec::new(),
        }
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Adds the whole file `file` ([`FileOp::Create`]).
    pub fn add(&mut self, file: File) {
        self.ops.push(FileOp::Create(file));
    }

    /// Adds the line `line` to the sorted `pub mod` run above the marker `marker` in `path`
    /// (see [`FileOp::InsertSorted`]).
    pub fn insert_sorted(
        &mut self,
        path: impl Into<PathBuf>,
        marker: &str,
        line: impl Into<String>,
    ) {
        self.ops.push(FileOp::InsertSorted {
            path: path.into(),
            marker: marker.into(),
            line: line.into(),
        });
    }

    /// Adds the removal of the file `path` ([`FileOp::Remove`]); nothing happens when it does
    /// not exist.
    pub fn remove(&mut self, path: impl Into<PathBuf>) {
        self.ops.push(FileOp::Remove { path: path.into() });
    }

    /// Drops the records of the tool-owned file `path` (its line in
    /// `.rsbuilder/tool-owned.sha256` and its merge base under `.rsbuilder/base/`): the file
    /// is no longer rsbuilder's, because this version no longer has it.
    pub fn untrack_tool_owned(&mut self, path: impl Into<PathBuf>) {
        self.ops.push(FileOp::Untrack { path: path.into() });
    }

    /// Adds a [`FileOp::EnsureDependency`]: `name = spec` (plus `features`) made present in
    /// the `[table]` of the Cargo.toml at `path`. Its errors come at [`Plan::resolve`].
    pub fn ensure_dependency(
        &mut self,
        path: impl Into<PathBuf>,
        table: &str,
        name: &str,
        spec: &str,
        features: &[&str],
    ) {
        self.ops.push(FileOp::EnsureDependency {
            path: path.into(),
            table: table.to_string(),
            name: name.to_string(),
            spec: spec.to_string(),
            features: features.iter().map(|f| f.to_string()).collect(),
        });
    }

    /// Adds a fragment insertion before the scaffold marker `marker` in `path`.
    pub fn insert(&mut self, path: impl Into<PathBuf>, marker: &str, fragment: impl Into<String>) {
        self.ops.push(FileOp::Insert {
            path: path.into(),
            marker: marker.into(),
            fragment: fragment.into(),
        });
    }

    /// The operations in order.
    pub fn ops(&self) -> &[FileOp] {
        &self.ops
    }
}
