//! [`ScaffoldError`], why a plan cannot be applied or a write not finished, and [`Outcome`],
//! what becomes of a committed write that a command could not finish or undo completely.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::marker;

/// Why a plan cannot be applied. Nothing has been written when one of these is returned.
#[derive(Debug, Error)]
pub enum ScaffoldError {
    /// A path is absolute or climbs out of the project with `..`.
    #[error("refusing to write {path}: the path must stay inside the project directory")]
    OutsideProject {
        /// Offending path.
        path: PathBuf,
    },
    /// A path lies in a version-control directory ([`super::VCS_DIRS`]).
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
    /// directory of the project ([`super::VCS_DIRS`]), such as `config/rbac -> ../.git`.
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
    /// The file exists and its policy is [`IfExists::Error`](super::IfExists::Error) without `--force`.
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
    /// The Rust file a fragment goes into is not compiled: the module that would include it is
    /// under a cfg that is never true, or names another file (see [`marker::not_compiled`]).
    #[error(
        "{path} is not compiled by cargo ({why}), so the +kubebuilder:scaffold:{marker} fragment would not take effect there; declare the module where cargo compiles it, then re-run"
    )]
    NotCompiled {
        /// The file the fragment was for.
        path: PathBuf,
        /// Which declaration leaves it out.
        why: String,
        /// Marker name.
        marker: String,
    },
    /// The marker comment is missing from the file (usually deleted by hand), stands only where
    /// it does not count (in a string, a block comment), or appears twice: see
    /// [`marker`].
    #[error(transparent)]
    Marker(#[from] marker::MarkerError),
    /// Another rsbuilder command held the project lock for the whole wait (see [`super::lock`]).
    #[error(
        "another rsbuilder command is still running in {root} (it holds the project lock); gave up after waiting {waited_secs} s. Re-run once it has finished, or set RSBUILDER_LOCK_TIMEOUT (seconds) to wait longer"
    )]
    Locked {
        /// The project directory.
        root: PathBuf,
        /// How long this command waited.
        waited_secs: f64,
    },
    /// `RSBUILDER_LOCK_TIMEOUT` is set to something that is not a number of seconds.
    #[error(
        "RSBUILDER_LOCK_TIMEOUT is `{value}`: it must be a number of seconds from 0 (try the lock once) to {max} (a year); unset it for the default of 30"
    )]
    LockTimeout {
        /// The variable's value.
        value: String,
        /// The largest value taken.
        max: u64,
    },
    /// The journal an interrupted command left cannot be read (see [`super::txn`]).
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
    /// or removed. See [`super::txn::recover`].
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
    /// writes will do about it (see [`Outcome`]).
    #[error("{}", unfinished_message(txn, command, outcome))]
    Unfinished {
        /// The transaction directory holding the journal.
        txn: PathBuf,
        /// The command line whose write it is.
        command: String,
        /// What is left, and what the next command does.
        outcome: Outcome,
        /// What failed.
        source: Box<ScaffoldError>,
    },
    /// The run record outside the project cannot be written (see [`super::record`]).
    #[error(
        "cannot record this write under {path}, which rsbuilder needs to finish it if it is interrupted; set XDG_STATE_HOME (or HOME) to a directory you can write"
    )]
    Record {
        /// The record (or the missing state directory).
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A [`FileOp::EnsureDependency`](super::FileOp::EnsureDependency) cannot be applied: the Cargo.toml does not parse, or
    /// lists the dependency with an incompatible version (see [`super::cargo_dep`]).
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

impl ScaffoldError {
    /// Why a file could not be read, in words that fit a read (the error's own text begins
    /// "refusing to write" for a path check): the link that leads out of the project or into
    /// a version-control directory, else the operating system's reason (a FIFO, a device).
    pub fn read_reason(&self) -> String {
        match self {
            Self::SymlinkEscape { link, .. } => {
                format!(
                    "{} is a symbolic link that leads outside the project",
                    link.display()
                )
            }
            Self::SymlinkIntoVcs { link, target, .. } => format!(
                "{} is a symbolic link to {}, inside a version-control directory",
                link.display(),
                target.display()
            ),
            _ => {
                std::error::Error::source(self).map_or_else(|| self.to_string(), |s| s.to_string())
            }
        }
    }
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
    /// Nothing was done: a path of the journal leads through a symbolic link that a plan
    /// refuses (out of the project, or into a version-control directory; the source names
    /// it). The journal is kept; once the link is replaced by the real directory, the next
    /// command that writes finishes it, undoing it when `back` is set.
    Blocked {
        /// The journal has its `back` marker: finishing it means undoing it.
        back: bool,
    },
}

/// The message of [`ScaffoldError::Unfinished`].
fn unfinished_message(txn: &Path, command: &str, outcome: &Outcome) -> String {
    let next =
        "the next rsbuilder command that writes in this project (or `rsbuilder alpha recover`)";
    let txn = txn.display();
    match outcome {
        Outcome::Forward => format!(
            "the write of `{command}` stopped after its journal was committed: the journal is kept in {txn}, and {next} will finish it (roll forward: it puts the rest of the new files in place)"
        ),
        Outcome::Back => format!(
            "the write of `{command}` failed and could not be undone completely here: the journal is kept in {txn}, and {next} will finish undoing it (roll back: it puts back the files as they were before)"
        ),
        Outcome::Undone => format!(
            "`{command}` was interrupted while writing, and finishing it from its journal failed, so it was rolled back: none of its changes remain, and nothing is left in {txn}"
        ),
        Outcome::Blocked { back } => {
            let finish = match back {
                false => "finish it (roll forward: it puts the rest of the new files in place)",
                true => "finish undoing it (roll back: it puts back the files as they were before)",
            };
            format!(
                "`{command}` was interrupted while writing, and rsbuilder does not finish it through the symbolic link named below: nothing was written, and the journal is kept in {txn}. Replace the link with the real directory it stands for; then {next} will {finish}"
            )
        }
        Outcome::Check(reason) => format!(
            "`{command}` was interrupted while writing, and after finishing it from its journal {reason}, so rsbuilder does not call it done: the journal is kept in {txn}. Look at the files it names, then remove {txn} and re-run"
        ),
    }
}
