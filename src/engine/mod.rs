//! The scaffolding engine: every command describes the files it wants as a [`Plan`] of
//! [`FileOp`]s; the engine checks every precondition, computes every final file content in
//! memory, and only then writes: every new file is staged and a journal committed before the
//! first rename ([`txn`]), so a failed or killed command leaves the project as it was or, once
//! the next command has rolled the journal forward, as the command would have left it. Every
//! read and write goes through a [`cap_std::fs::Dir`] rooted at the project. Commands hold the
//! project lock ([`lock_project`]) from before their first read to after their last write.
//!
//! Modelled on Kubebuilder's `pkg/machinery`: a file is a value with a path, contents and an
//! "if the file exists" policy; edits to existing files are fragments inserted before a marker
//! comment (`// +kubebuilder:scaffold:<name>` in Rust, `# +kubebuilder:scaffold:<name>` in
//! YAML, TOML and Makefiles), skipped when already present so re-running is safe.

pub mod cargo_dep;
mod fault;
mod file;
pub mod lock;
pub mod marker;
pub mod owned;
mod record;
pub mod regular;
pub mod rustfmt;
pub mod txn;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use thiserror::Error;

pub use lock::ProjectLock;
pub use txn::{Mode, Recovery, STATE_DIR};

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

pub use file::{File, FileSpec, Format, IfExists, Owner};

/// One planned change to the project tree: a whole file, or an edit of one. Paths are
/// relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Write a whole file, as the [`File`] value says.
    Create(File),
    /// Insert `fragment` before the line holding the scaffold marker `marker` (the part after
    /// `+kubebuilder:scaffold:`; found by syntax, exactly once, see [`marker`]),
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
    /// and line when it is not. The rules are in [`cargo_dep`].
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

/// Why a plan cannot be applied. Nothing has been written when one of these is returned.
#[derive(Debug, Error)]
pub enum ScaffoldError {
    /// A path is absolute or climbs out of the project with `..`.
    #[error("refusing to write {path}: the path must stay inside the project directory")]
    OutsideProject {
        /// Offending path.
        path: PathBuf,
    },
    /// A path lies in a version-control directory ([`VCS_DIRS`]).
    #[error(
        "refusing to write {path}: it is inside a version-control directory, which rsbuilder never writes"
    )]
    VcsDirectory {
        /// Offending path.
        path: PathBuf,
    },
    /// A path (or one of its parents) is a symbolic link that leads outside the project.
    #[error(
        "refusing to write {path}: {link} is a symbolic link that leads outside the project; replace it with a real directory or file inside the project"
    )]
    SymlinkEscape {
        /// Offending path.
        path: PathBuf,
        /// The link found on the way.
        link: PathBuf,
    },
    /// A path (or one of its parents) is a symbolic link that leads into a version-control
    /// directory of the project ([`VCS_DIRS`]), such as `config/rbac -> ../.git`.
    #[error(
        "refusing to write {path}: {link} is a symbolic link to {target}, inside a version-control directory, which rsbuilder never writes; replace the link with a real directory"
    )]
    SymlinkIntoVcs {
        /// Offending path.
        path: PathBuf,
        /// The link found on the way.
        link: PathBuf,
        /// Where the link leads, relative to the project root.
        target: PathBuf,
    },
    /// The file to replace or remove is read-only (no write permission bit): someone protected
    /// it, and a rename would replace it anyway.
    #[error(
        "{path} is read-only, and rsbuilder does not replace a file you made read-only; make it writable (chmod u+w) if it should change, then re-run"
    )]
    ReadOnly {
        /// Offending path.
        path: PathBuf,
    },
    /// A parent of the path exists but is not a directory.
    #[error(
        "cannot write {path}: {parent} exists and is not a directory; move or rename that file, then re-run"
    )]
    NotADirectory {
        /// Offending path.
        path: PathBuf,
        /// The file in the way.
        parent: PathBuf,
    },
    /// The file exists and its policy is [`IfExists::Error`] without `--force`.
    #[error("{path} already exists; re-run with --force to overwrite it")]
    Exists {
        /// Offending path.
        path: PathBuf,
    },
    /// A file to insert into does not exist.
    #[error(
        "{path} does not exist, so the +kubebuilder:scaffold:{marker} fragment cannot be inserted into it; restore the file (with its `+kubebuilder:scaffold:{marker}` marker line), then re-run"
    )]
    MissingFile {
        /// Offending path.
        path: PathBuf,
        /// Marker name.
        marker: String,
    },
    /// The marker comment is missing from the file (usually deleted by hand), stands only where
    /// it does not count (in a string, a block comment), or appears twice: see
    /// [`marker`].
    #[error(transparent)]
    Marker(#[from] marker::MarkerError),
    /// Another rsbuilder command held the project lock for the whole wait (see [`lock`]).
    #[error(
        "another rsbuilder command is still running in {root} (it holds the project lock); gave up after waiting {waited_secs} s. Re-run once it has finished, or set RSBUILDER_LOCK_TIMEOUT (seconds) to wait longer"
    )]
    Locked {
        /// The project directory.
        root: PathBuf,
        /// How long this command waited.
        waited_secs: f64,
    },
    /// The journal an interrupted command left cannot be read (see [`txn`]).
    #[error(
        "{path} is not a journal rsbuilder can read ({reason}); an earlier command was interrupted while writing. Check the files it names, then remove the .rsbuilder/txn directory"
    )]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// Why it cannot be read.
        reason: String,
    },
    /// `.rsbuilder/txn` holds a transaction this machine's rsbuilder did not record (it came
    /// with a checkout, or its journal or staged files were changed): nothing in it is applied
    /// or removed. See [`txn::recover`].
    #[error(
        "{path} holds an interrupted write that rsbuilder will not finish: {reason}. It may have come with the repository (`.rsbuilder/txn` should never be committed). Nothing in it was applied. Look at the files it names, then remove the {path} directory and re-run"
    )]
    UntrustedTxn {
        /// The transaction directory.
        path: PathBuf,
        /// Which check failed.
        reason: String,
    },
    /// A read-only command (`manifests --check`, `alpha update --dry-run`) found an apply an
    /// interrupted command left behind; it does not finish it.
    #[error(
        "{} was interrupted while writing in {root}, and this command only reads, so it did not finish it; run `rsbuilder alpha recover` there (or any rsbuilder command that writes), then re-run",
        command.as_ref().map_or_else(|| "an rsbuilder command".to_string(), |c| format!("`{c}`"))
    )]
    Interrupted {
        /// The project directory.
        root: PathBuf,
        /// The interrupted command line, when its journal was committed.
        command: Option<String>,
    },
    /// A committed write (its journal in `.rsbuilder/txn`) that this command could not finish
    /// or undo completely; the message says what is left and what the next command that
    /// writes will do about it (see [`txn::Outcome`]).
    #[error("{}", unfinished_message(txn, command, outcome))]
    Unfinished {
        /// The transaction directory holding the journal.
        txn: PathBuf,
        /// The command line whose write it is.
        command: String,
        /// What is left, and what the next command does.
        outcome: txn::Outcome,
        /// What failed.
        source: Box<ScaffoldError>,
    },
    /// The run record outside the project cannot be written (see [`record`]).
    #[error(
        "cannot record this write under {path}, which rsbuilder needs to finish it if it is interrupted; set XDG_STATE_HOME (or HOME) to a directory you can write"
    )]
    Record {
        /// The record (or the missing state directory).
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A [`FileOp::EnsureDependency`] cannot be applied: the Cargo.toml does not parse, or
    /// lists the dependency with an incompatible version (see [`cargo_dep`]).
    #[error("{message}")]
    Dependency {
        /// `path:line: reason`.
        message: String,
    },
    /// Reading or writing failed; the operating system's error is the cause (printed on the
    /// `caused by:` line of the error chain).
    #[error("{action} {path} failed")]
    Io {
        /// What was being done (`reading`, `writing`).
        action: &'static str,
        /// Path involved.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}

/// The message of [`ScaffoldError::Unfinished`].
fn unfinished_message(txn: &Path, command: &str, outcome: &txn::Outcome) -> String {
    let next =
        "the next rsbuilder command that writes in this project (or `rsbuilder alpha recover`)";
    let txn = txn.display();
    match outcome {
        txn::Outcome::Forward => format!(
            "the write of `{command}` stopped after its journal was committed: the journal is kept in {txn}, and {next} will finish it (roll forward: it puts the rest of the new files in place)"
        ),
        txn::Outcome::Back => format!(
            "the write of `{command}` failed and could not be undone completely here: the journal is kept in {txn}, and {next} will finish undoing it (roll back: it puts back the files as they were before)"
        ),
        txn::Outcome::Undone => format!(
            "`{command}` was interrupted while writing, and finishing it from its journal failed, so it was rolled back: none of its changes remain, and nothing is left in {txn}"
        ),
        txn::Outcome::Check(reason) => format!(
            "`{command}` was interrupted while writing, and after finishing it from its journal {reason}, so rsbuilder does not call it done: the journal is kept in {txn}. Look at the files it names, then remove {txn} and re-run"
        ),
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
    root: PathBuf,
    force: bool,
    ops: Vec<FileOp>,
}

/// What a plan's operations say, taken together, about how each path is written: read once
/// before [`Plan::resolve`] walks the operations, so a later operation on a path (an
/// untrack after a tool-owned write) counts for all of them.
#[derive(Default)]
struct Treatment {
    /// Tool-owned files, with the merge base to record when it is not the text written.
    tool_owned: BTreeMap<PathBuf, Option<String>>,
    /// Files written byte for byte.
    verbatim: std::collections::BTreeSet<PathBuf>,
    /// Rust files whose text is already rustfmt's output.
    preformatted: std::collections::BTreeSet<PathBuf>,
    /// Tool-owned files whose records are dropped.
    untracked: std::collections::BTreeSet<PathBuf>,
}

impl Treatment {
    fn of(ops: &[FileOp]) -> Self {
        let mut out = Self::default();
        for op in ops {
            match op {
                FileOp::Create(file) => {
                    if let Owner::Tool { base } = &file.owner {
                        out.untracked.remove(&file.path);
                        out.tool_owned.insert(file.path.clone(), base.clone());
                        continue;
                    }
                    match file.format {
                        Format::Verbatim => out.verbatim.insert(file.path.clone()),
                        Format::Preformatted => out.preformatted.insert(file.path.clone()),
                        Format::Rustfmt => false,
                    };
                }
                FileOp::Untrack { path } => {
                    out.tool_owned.remove(path);
                    out.untracked.insert(path.clone());
                }
                _ => {}
            }
        }
        out
    }
}

/// Prints what a plan did, one line per file, in Kubebuilder's style (`create  config/...`).
/// Unchanged files are not listed, nor rsbuilder's own records under `.rsbuilder/`.
pub fn report(resolved: &[Resolved]) -> String {
    let mut out = String::new();
    for r in resolved
        .iter()
        .filter(|r| r.action != Action::Unchanged && !r.path.starts_with(STATE_DIR))
    {
        out.push_str(&format!(
            "{:<7} {}\n",
            r.action.to_string(),
            r.path.display()
        ));
    }
    out
}

/// `n` and `noun` for a message, the noun in the singular for one: `1 file`, `3 files`
/// (nouns whose plural is `+s`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The full marker comment for a marker name in a file, chosen by the file's extension:
/// `// +kubebuilder:scaffold:<name>` for Rust, `# +kubebuilder:scaffold:<name>` otherwise.
pub fn marker_comment(path: &Path, marker: &str) -> String {
    marker::comment(path, marker)
}

impl Plan {
    /// An empty plan for the project at `root`. With `force`, files whose policy is
    /// [`IfExists::Error`] are overwritten instead of failing the plan.
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

    /// Checks every precondition and computes every final file, reading the tree but writing
    /// nothing. Results are sorted by path.
    pub fn resolve(&self) -> Result<Vec<Resolved>, ScaffoldError> {
        // path -> (original contents if the file existed, current planned contents)
        let mut files: BTreeMap<PathBuf, (Option<String>, Option<String>)> = BTreeMap::new();
        // Rust files written from a template or that received a fragment: formatted with
        // rustfmt at the end, as Kubebuilder formats the Go files it writes, so the project
        // stays `cargo fmt` clean however long the crate and kind names are.
        let mut format_rust: std::collections::BTreeSet<PathBuf> = Default::default();
        // A root that does not exist yet (`manifests --output-dir /new/dir`) holds no file.
        let dir = Dir::open_ambient_dir(&self.root, ambient_authority()).ok();
        let edition = rust_edition(dir.as_ref());
        let mut checker = PathCheck::new(&self.root);
        // Whether text rendered already formatted for the default configuration is what
        // rustfmt would make of it here.
        let default_format = edition == "2024" && rustfmt::config_file(&self.root).is_none();
        let treatment = Treatment::of(&self.ops);
        for op in &self.ops {
            let is_rust = |p: &Path| p.extension().is_some_and(|e| e == "rs");
            if let FileOp::Insert { path, .. } | FileOp::InsertSorted { path, .. } = op
                && is_rust(path)
            {
                format_rust.insert(path.clone());
            }
            if let FileOp::Untrack { .. } = op {
                continue; // read from `treatment` below
            }
            let rel = op.path();
            checker.check(rel)?;
            if !files.contains_key(rel) {
                let read = dir.as_ref().map(|d| regular::read_in(d, rel));
                let original = match read {
                    Some(Ok(text)) => Some(text),
                    None => None,
                    Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Some(Err(source)) => {
                        return Err(ScaffoldError::Io {
                            action: "reading",
                            path: self.root.join(rel),
                            source,
                        });
                    }
                };
                files.insert(rel.to_path_buf(), (original.clone(), original));
            }
            let entry = files.get_mut(rel).expect("inserted above");
            match op {
                FileOp::Create(File {
                    contents,
                    if_exists,
                    ..
                }) => {
                    let exists_on_disk = entry.0.is_some();
                    let mut write = |entry: &mut (Option<String>, Option<String>)| {
                        entry.1 = Some(contents.clone());
                        let as_is = treatment.tool_owned.contains_key(rel)
                            || treatment.verbatim.contains(rel)
                            || (default_format && treatment.preformatted.contains(rel));
                        if is_rust(rel) && !as_is {
                            format_rust.insert(rel.to_path_buf());
                        }
                    };
                    match (exists_on_disk, if_exists) {
                        (false, _) | (true, IfExists::Overwrite) => write(entry),
                        (true, IfExists::Skip) => {}
                        (true, IfExists::SkipUnlessForced) => {
                            if self.force {
                                write(entry);
                            }
                        }
                        (true, IfExists::Error) => {
                            if self.force {
                                write(entry);
                            } else {
                                // An identical re-run is not a conflict: compare what would
                                // be written, formatted as it would be.
                                let would_write = if is_rust(rel) {
                                    rustfmt::format_stdin(contents, &edition, &self.root)
                                        .unwrap_or_else(|| contents.clone())
                                } else {
                                    contents.clone()
                                };
                                if entry.0.as_deref() != Some(would_write.as_str()) {
                                    return Err(ScaffoldError::Exists {
                                        path: self.root.join(rel),
                                    });
                                }
                            }
                        }
                    }
                }
                FileOp::Insert {
                    marker, fragment, ..
                } => {
                    let Some(current) = entry.1.as_mut() else {
                        return Err(ScaffoldError::MissingFile {
                            path: self.root.join(rel),
                            marker: marker.clone(),
                        });
                    };
                    *current = marker::insert(&self.root.join(rel), current, marker, fragment)?;
                }
                FileOp::InsertSorted { marker, line, .. } => {
                    let Some(current) = entry.1.as_mut() else {
                        return Err(ScaffoldError::MissingFile {
                            path: self.root.join(rel),
                            marker: marker.clone(),
                        });
                    };
                    *current = insert_sorted(&self.root.join(rel), current, marker, line)?;
                }
                FileOp::Remove { .. } => {
                    entry.1 = None;
                    format_rust.remove(rel);
                }
                FileOp::Untrack { .. } => {}
                FileOp::EnsureDependency {
                    table,
                    name,
                    spec,
                    features,
                    ..
                } => {
                    let path = self.root.join(rel);
                    let Some(current) = entry.1.as_mut() else {
                        return Err(ScaffoldError::Dependency {
                            message: format!(
                                "{}: does not exist, so the dependency `{name}` cannot be added to it; restore the project's Cargo.toml, then re-run",
                                path.display()
                            ),
                        });
                    };
                    *current =
                        cargo_dep::ensure(current, table, name, spec, features).map_err(|e| {
                            ScaffoldError::Dependency {
                                message: cargo_dep::describe(&path, &e),
                            }
                        })?;
                }
            }
        }
        // One rustfmt process for every Rust file of the plan (see [`rustfmt`]).
        let to_format: Vec<(&Path, &str)> = files
            .iter()
            .filter(|(path, _)| format_rust.contains(*path))
            .map(|(path, (_, planned))| (path.as_path(), planned.as_deref().unwrap_or_default()))
            .collect();
        let mut formatted: BTreeMap<PathBuf, String> = to_format
            .iter()
            .zip(rustfmt::format_all(&to_format, &edition, &self.root))
            .filter_map(|((path, _), text)| Some((path.to_path_buf(), text?)))
            .collect();
        // `None`: the file is removed (or was never there).
        let mut finals: BTreeMap<PathBuf, (Option<String>, Option<String>)> = files
            .into_iter()
            .map(|(path, (original, planned))| {
                let contents = formatted.remove(&path).or(planned);
                (path, (original, contents))
            })
            .collect();
        // What rsbuilder wrote of each tool-owned file (or the base it was given): its text
        // and hash under .rsbuilder/.
        let written: Vec<(PathBuf, String)> = treatment
            .tool_owned
            .iter()
            .filter_map(|(p, base)| {
                let text = match base {
                    Some(base) => base.clone(),
                    None => finals.get(p)?.1.clone()?,
                };
                Some((p.clone(), text))
            })
            .collect();
        if !written.is_empty() || !treatment.untracked.is_empty() {
            let read = |rel: &Path| -> Result<Option<String>, ScaffoldError> {
                match dir.as_ref().map(|d| regular::read_in(d, rel)) {
                    None => Ok(None),
                    Some(Ok(text)) => Ok(Some(text)),
                    Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Some(Err(source)) => Err(ScaffoldError::Io {
                        action: "reading",
                        path: self.root.join(rel),
                        source,
                    }),
                }
            };
            let manifest = Path::new(owned::MANIFEST);
            let old_manifest = read(manifest)?;
            let untracked: Vec<PathBuf> = treatment.untracked.iter().cloned().collect();
            let records = owned::records(old_manifest.as_deref(), &written, &untracked);
            for (rel, text) in records {
                checker.check(&rel)?;
                let original = read(&rel)?;
                finals.insert(rel, (original, text));
            }
        }
        Ok(finals
            .into_iter()
            .filter_map(|(path, (original, contents))| {
                let (action, contents) = match (&original, contents) {
                    (None, None) => return None,
                    (Some(_), None) => (Action::Removed, String::new()),
                    (None, Some(c)) => (Action::Created, c),
                    (Some(o), Some(c)) if *o == c => (Action::Unchanged, c),
                    (Some(_), Some(c)) => (Action::Updated, c),
                };
                Some(Resolved {
                    path,
                    action,
                    contents,
                })
            })
            .collect())
    }

    /// Resolves the plan, then writes every created or updated file and removes every removed
    /// one, all or nothing, through
    /// the journal of [`txn`]: each new file is staged under `.rsbuilder/txn`, made durable
    /// (one `syncfs` of the file system, or an fsync per file where that is unavailable)
    /// and the journal is committed, then the staged files are renamed into place. A write that
    /// fails before the commit discards the staged files; a rename that fails after it puts
    /// every file back (created files and directories removed, replaced files restored from a
    /// hard link). An apply a killed command left behind in this root is finished first.
    /// Returns what happened to each file, sorted by path.
    ///
    /// Callers hold the [`ProjectLock`] (see [`lock_project`]), taken before the plan read
    /// the project.
    pub fn apply(&self) -> Result<Vec<Resolved>, ScaffoldError> {
        let resolved = self.resolve()?;
        // A root that does not exist yet (`manifests --output-dir /new/dir`) is created by the
        // apply itself, from its nearest existing ancestor, so a failed apply removes it again.
        let base = self
            .root
            .ancestors()
            .find(|a| a.as_os_str().is_empty() || a.is_dir())
            .unwrap_or(&self.root);
        let prefix = self.root.strip_prefix(base).unwrap_or(Path::new(""));
        let paths: Vec<PathBuf> = resolved.iter().map(|r| prefix.join(&r.path)).collect();
        let changes: Vec<txn::Change<'_>> = resolved
            .iter()
            .zip(&paths)
            .filter(|(r, _)| r.action != Action::Unchanged)
            .map(|(r, path)| txn::Change {
                path,
                contents: r.contents.as_bytes(),
                replaces: r.action == Action::Updated,
                removes: r.action == Action::Removed,
            })
            .collect();
        if changes.is_empty() {
            return Ok(resolved);
        }
        // A rename replaces a read-only file as easily as any other: refuse it first.
        if let Ok(root) = Dir::open_ambient_dir(&self.root, ambient_authority()) {
            for r in resolved
                .iter()
                .filter(|r| matches!(r.action, Action::Updated | Action::Removed))
            {
                if root
                    .symlink_metadata(&r.path)
                    .is_ok_and(|m| m.is_file() && m.permissions().readonly())
                {
                    return Err(ScaffoldError::ReadOnly {
                        path: self.root.join(&r.path),
                    });
                }
            }
        }
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let dir = open_root(base)?;
        if let Some(done) = txn::recover(base, &dir, Mode::Repair)? {
            eprintln!("note: {done}");
        }
        txn::apply(base, &dir, &changes)?;
        Ok(resolved)
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

/// `text` (the contents of `path`) with `line` added to the run of `pub mod` lines directly
/// above the marker `marker`, that run kept sorted byte-wise as rustfmt sorts it; `text`
/// unchanged when a line of the file already is `line`. Errors: the marker missing or
/// duplicated ([`marker::locate`]).
fn insert_sorted(
    path: &Path,
    text: &str,
    marker: &str,
    line: &str,
) -> Result<String, ScaffoldError> {
    let at = marker::locate(path, text, marker)?;
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|l| l.trim() == line) {
        return Ok(text.to_owned());
    }
    let start = lines[..at]
        .iter()
        .rposition(|l| !l.starts_with("pub mod "))
        .map_or(0, |i| i + 1);
    let mut block: Vec<&str> = lines.drain(start..at).collect();
    block.push(line);
    block.sort_unstable();
    lines.splice(start..start, block);
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Rejects absolute paths, `..`, symlinks leading outside the root, and files standing
/// where a directory is needed.
fn check_path(root_path: &Path, rel: &Path) -> Result<(), ScaffoldError> {
    PathCheck::new(root_path).check(rel)
}

/// [`check_path`] for the many paths of one plan: the root is canonicalized once, and a
/// directory found to be a real directory inside the project is not examined again (a
/// `manifests` run checks some 2,000 files below the same `config/crd/bases`, which cost a
/// dozen system calls each). A plan-time check: the writes themselves go through the rooted
/// handle, which refuses a link swapped in later.
struct PathCheck<'r> {
    root_path: &'r Path,
    root: Option<PathBuf>,
    dirs: std::collections::HashSet<PathBuf>,
}

impl<'r> PathCheck<'r> {
    fn new(root_path: &'r Path) -> Self {
        Self {
            root_path,
            root: None,
            dirs: Default::default(),
        }
    }

    fn check(&mut self, rel: &Path) -> Result<(), ScaffoldError> {
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

/// The Rust edition of the project opened as `dir` (`edition = "..."` in its `Cargo.toml`),
/// 2024 when it cannot be read.
fn rust_edition(dir: Option<&Dir>) -> String {
    dir.and_then(|d| regular::read_in(d, Path::new("Cargo.toml")).ok())
        .and_then(|toml| {
            toml.lines().find_map(|line| {
                let rest = line.trim().strip_prefix("edition")?.trim_start();
                let value = rest.strip_prefix('=')?.trim().trim_matches('"');
                (!value.is_empty()).then(|| value.to_string())
            })
        })
        .unwrap_or_else(|| "2024".into())
}

/// The project root as a capability: every path below is resolved beneath it, never through
/// a link or `..` that leads out.
fn open_root(root: &Path) -> Result<Dir, ScaffoldError> {
    Dir::open_ambient_dir(root, ambient_authority()).map_err(|source| ScaffoldError::Io {
        action: "opening",
        path: root.to_path_buf(),
        source,
    })
}

/// Takes the project lock on `root` (waiting as [`lock::acquire`] does), then finishes an
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
    let _lock = lock::acquire(root)?;
    let dir = open_root(root)?;
    rustfmt::remove_leftovers(root);
    txn::recover(root, &dir, Mode::Repair)
}

fn lock_project_as(root: &Path, mode: Mode) -> Result<ProjectLock, ScaffoldError> {
    let lock = lock::acquire(root)?;
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
    fn ensure_dependency_edits_cargo_toml_or_refuses_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let cargo = "[package]\nname = \"p\"\n\n[dependencies]\nkube = \"5\" # keep\n";
        std::fs::write(dir.path().join("Cargo.toml"), cargo).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.ensure_dependency("Cargo.toml", "dependencies", "kube", "\"5\"", &["runtime"]);
        plan.ensure_dependency("Cargo.toml", "dev-dependencies", "tempfile", "\"3\"", &[]);
        plan.apply().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap(),
            "[package]\nname = \"p\"\n\n[dependencies]\nkube = { version = \"5\", features = [\"runtime\"] } # keep\n\n[dev-dependencies]\ntempfile = \"3\"\n"
        );
        let before = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("new.txt", "x", IfExists::Error));
        plan.ensure_dependency("Cargo.toml", "dependencies", "kube", "\"4\"", &[]);
        let err = plan.apply().unwrap_err().to_string();
        assert!(
            err.ends_with("Cargo.toml:5: `kube` in [dependencies] asks for \"5\", and rsbuilder needs a version compatible with \"4\"; change that line to a compatible version, then re-run"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap(),
            before
        );
        assert!(!dir.path().join("new.txt").exists());
    }

    #[test]
    fn plan_is_all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.rs"), "fn main() {}\n").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("a/b.txt", "hello", IfExists::Error));
        plan.insert("main.rs", "controllers", "x();");
        let err = plan.apply().unwrap_err();
        assert!(matches!(err, ScaffoldError::Marker(_)), "{err}");
        assert!(!dir.path().join("a").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("main.rs")).unwrap(),
            "fn main() {}\n"
        );
    }

    #[test]
    fn existing_files_follow_policy() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "user").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("f", "new", IfExists::Error));
        assert!(matches!(plan.apply(), Err(ScaffoldError::Exists { .. })));
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("f", "new", IfExists::Skip));
        plan.apply().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f")).unwrap(),
            "user"
        );
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new("f", "new", IfExists::Error));
        let done = plan.apply().unwrap();
        assert_eq!(done[0].action, Action::Updated);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f")).unwrap(),
            "new"
        );
    }

    #[test]
    fn rejects_paths_outside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["../x", "/etc/passwd", "a/../../x"] {
            let mut plan = Plan::new(dir.path(), true);
            plan.add(File::new(bad, "x", IfExists::Overwrite));
            assert!(
                matches!(plan.apply(), Err(ScaffoldError::OutsideProject { .. })),
                "{bad}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn rejects_symlinks_leading_out() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("config")).unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new("config/x.yaml", "x", IfExists::Overwrite));
        assert!(matches!(
            plan.apply(),
            Err(ScaffoldError::SymlinkEscape { .. })
        ));
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    }

    /// A link inside the project that leads into `.git` (or another VCS directory), live or
    /// dangling, is refused by name: the path's own names hold no VCS directory.
    #[cfg(unix)]
    #[test]
    fn rejects_symlinks_leading_into_a_vcs_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.path().join(".hg")).unwrap();
        std::fs::create_dir_all(dir.path().join("config/crd")).unwrap();
        std::os::unix::fs::symlink("../../.git/hooks", dir.path().join("config/crd/bases"))
            .unwrap();
        std::os::unix::fs::symlink("../.hg", dir.path().join("config/rbac")).unwrap();
        std::os::unix::fs::symlink(".git/newdir", dir.path().join("dangling")).unwrap();
        for (rel, link, target) in [
            ("config/crd/bases/a.yaml", "config/crd/bases", ".git/hooks"),
            ("config/rbac/role.yaml", "config/rbac", ".hg"),
            ("dangling/x.yaml", "dangling", ".git/newdir"),
        ] {
            let mut plan = Plan::new(dir.path(), true);
            plan.add(File::new(rel, "x", IfExists::Overwrite));
            let err = plan.apply().unwrap_err();
            assert!(
                matches!(&err, ScaffoldError::SymlinkIntoVcs { path, link: l, target: t }
                    if path == Path::new(rel) && l == Path::new(link) && t == Path::new(target)),
                "{rel}: {err}"
            );
        }
        assert!(
            std::fs::read_dir(dir.path().join(".git/hooks"))
                .unwrap()
                .next()
                .is_none()
        );
        assert!(
            std::fs::read_dir(dir.path().join(".hg"))
                .unwrap()
                .next()
                .is_none()
        );
        assert!(!dir.path().join(".git/newdir").exists());
    }

    #[cfg(unix)]
    #[test]
    fn rejects_dangling_symlinks_leading_out() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("new.rs"), dir.path().join("x.rs")).unwrap();
        std::os::unix::fs::symlink("../../elsewhere/y.rs", dir.path().join("y.rs")).unwrap();
        for rel in ["x.rs", "y.rs"] {
            let mut plan = Plan::new(dir.path(), true);
            plan.add(File::new(rel, "x", IfExists::Overwrite));
            assert!(
                matches!(plan.apply(), Err(ScaffoldError::SymlinkEscape { .. })),
                "{rel}"
            );
        }
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        // A dangling link that stays inside is replaced by the file.
        std::os::unix::fs::symlink("sub/../z-target.rs", dir.path().join("z.rs")).unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new("z.rs", "z", IfExists::Overwrite));
        plan.apply().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("z.rs")).unwrap(),
            "z"
        );
    }

    #[test]
    fn updates_leave_no_backup_behind() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "old").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("f", "new", IfExists::Overwrite));
        assert_eq!(plan.apply().unwrap()[0].action, Action::Updated);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f")).unwrap(),
            "new"
        );
    }

    /// New files get the mode any program's new files get (0666 minus the umask), not the
    /// temporary file's 0600; a replaced file keeps its mode.
    #[cfg(target_os = "linux")]
    #[test]
    fn new_files_follow_the_umask_and_updates_keep_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let Some(umask) = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        else {
            return; // kernels before 4.7 do not show the umask
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("script.sh"), "old").unwrap();
        std::fs::set_permissions(
            dir.path().join("script.sh"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("new.txt", "new", IfExists::Error));
        plan.add(File::new("script.sh", "new", IfExists::Overwrite));
        plan.apply().unwrap();
        let mode = |f: &str| {
            std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("new.txt"), 0o666 & !umask);
        assert_eq!(mode("script.sh"), 0o750);
    }

    #[cfg(unix)]
    #[test]
    fn reads_stay_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "//! x\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let plan = Plan::new(dir.path(), false);
        assert_eq!(plan.read("src/lib.rs").unwrap().as_deref(), Some("//! x\n"));
        assert_eq!(plan.read("src/none.rs").unwrap(), None);
        assert!(matches!(
            plan.read("out/secret"),
            Err(ScaffoldError::SymlinkEscape { .. })
        ));
        assert!(matches!(
            plan.read("../x"),
            Err(ScaffoldError::OutsideProject { .. })
        ));
    }

    #[test]
    fn sorted_insertions_keep_the_module_run_sorted_and_happen_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lib.txt"),
            "//! x\npub mod manager;\n# +kubebuilder:scaffold:modules\n",
        )
        .unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.insert_sorted("lib.txt", "modules", "pub mod webhook;");
        plan.insert_sorted("lib.txt", "modules", "pub mod api;");
        plan.insert_sorted("lib.txt", "modules", "pub mod api;");
        plan.insert_sorted("lib.txt", "modules", "pub mod manager;");
        let done = plan.apply().unwrap();
        assert_eq!(done[0].action, Action::Updated);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lib.txt")).unwrap(),
            "//! x\npub mod api;\npub mod manager;\npub mod webhook;\n# +kubebuilder:scaffold:modules\n"
        );
        // A missing file and a missing marker are errors, and nothing is written.
        let mut plan = Plan::new(dir.path(), false);
        plan.insert_sorted("none.txt", "modules", "pub mod api;");
        assert!(matches!(
            plan.apply(),
            Err(ScaffoldError::MissingFile { .. })
        ));
        let mut plan = Plan::new(dir.path(), false);
        plan.insert_sorted("lib.txt", "controllers", "pub mod api;");
        assert!(matches!(plan.apply(), Err(ScaffoldError::Marker(_))));
    }

    #[test]
    fn skip_unless_forced_keeps_a_file_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "user").unwrap();
        for (force, want) in [(false, "user"), (true, "new")] {
            let mut plan = Plan::new(dir.path(), force);
            plan.add(File::new("f", "new", IfExists::SkipUnlessForced));
            plan.apply().unwrap();
            assert_eq!(std::fs::read_to_string(dir.path().join("f")).unwrap(), want);
        }
        let mut plan = Plan::new(dir.path(), false);
        plan.add(File::new("g", "fresh", IfExists::SkipUnlessForced));
        assert_eq!(plan.apply().unwrap()[0].action, Action::Created);
    }

    #[cfg(unix)]
    #[test]
    fn trees_are_read_inside_the_project_only() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "s").unwrap();
        for d in ["src/api/v1", "src/.hidden", "src/target"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for (f, text) in [
            ("src/lib.rs", "lib"),
            ("src/api/v1/a_types.rs", "a"),
            ("src/api/notes.md", "md"),
            ("src/.hidden/h.rs", "h"),
            ("src/target/t.rs", "t"),
        ] {
            std::fs::write(dir.path().join(f), text).unwrap();
        }
        let plan = Plan::new(dir.path(), false);
        let got = plan.read_tree("src", "rs").unwrap();
        assert_eq!(
            got,
            [
                (dir.path().join("src/api/v1/a_types.rs"), "a".to_string()),
                (dir.path().join("src/lib.rs"), "lib".to_string()),
            ]
        );
        assert_eq!(plan.read_tree("tests", "rs").unwrap(), []);
        assert!(plan.exists("src/lib.rs").unwrap());
        assert!(!plan.exists("src/none.rs").unwrap());
        std::os::unix::fs::symlink(outside.path(), dir.path().join("src/out")).unwrap();
        assert!(plan.read_tree("src", "rs").is_err());
        assert!(matches!(
            plan.exists("src/out/secret.rs"),
            Err(ScaffoldError::SymlinkEscape { .. })
        ));
    }

    #[test]
    fn removals_and_verbatim_writes_are_applied_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/gone.rs"), "fn gone() {}\n").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.remove("src/gone.rs");
        plan.remove("src/never-there.rs");
        // Not valid for rustfmt's taste, kept byte for byte.
        plan.add(File::verbatim("src/kept.rs", "fn   kept( ) {}\n"));
        let done = plan.apply().unwrap();
        let actions: Vec<(&Path, Action)> =
            done.iter().map(|r| (r.path.as_path(), r.action)).collect();
        assert_eq!(
            actions,
            [
                (Path::new("src/gone.rs"), Action::Removed),
                (Path::new("src/kept.rs"), Action::Created)
            ]
        );
        assert!(!dir.path().join("src/gone.rs").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("src/kept.rs")).unwrap(),
            "fn   kept( ) {}\n"
        );
        assert_eq!(report(&done), "remove  src/gone.rs\ncreate  src/kept.rs\n");
    }

    /// A read-only file is refused by name, not replaced by the rename; nothing is written.
    #[cfg(unix)]
    #[test]
    fn a_read_only_file_is_refused_not_replaced() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "user").unwrap();
        std::fs::set_permissions(dir.path().join("f"), std::fs::Permissions::from_mode(0o444))
            .unwrap();
        for remove in [false, true] {
            let mut plan = Plan::new(dir.path(), true);
            plan.add(File::new("new.txt", "x", IfExists::Error));
            match remove {
                true => plan.remove("f"),
                false => plan.add(File::new("f", "new", IfExists::Overwrite)),
            }
            let err = plan.apply().unwrap_err();
            assert!(matches!(err, ScaffoldError::ReadOnly { .. }), "{err}");
            assert!(err.to_string().contains("is read-only"), "{err}");
            assert_eq!(
                std::fs::read_to_string(dir.path().join("f")).unwrap(),
                "user"
            );
            assert!(!dir.path().join("new.txt").exists());
        }
    }

    #[test]
    fn file_in_place_of_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config"), "").unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new("config/x.yaml", "x", IfExists::Overwrite));
        assert!(matches!(
            plan.apply(),
            Err(ScaffoldError::NotADirectory { .. })
        ));
    }
}
