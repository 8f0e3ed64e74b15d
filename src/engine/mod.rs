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
//!
//! The submodules, each one part of that:
//!
//! - `plan`: [`Plan`], [`FileOp`], and the [`Resolved`] outcome of each file ([`Action`]);
//! - `resolve`: [`Plan::resolve`] (every final file computed in memory) and [`Plan::apply`];
//! - `read`: reads of the project for a plan ([`read()`], [`list`], [`Plan::read_tree`]);
//! - `paths`: which paths a plan may touch ([`is_vcs_path`], links leading out refused);
//! - `error`: [`ScaffoldError`];
//! - `file`: the [`File`] value and its policies ([`IfExists`], [`Format`], [`Owner`]);
//! - [`marker`]: the scaffold markers, found by syntax, and fragment insertion;
//! - [`cargo_dep`]: a dependency made present in a Cargo.toml;
//! - [`rustfmt`]: formatting of the Rust files a plan writes;
//! - [`owned`]: the records of tool-owned files under `.rsbuilder/`;
//! - [`regular`]: reads that refuse anything but a regular file;
//! - [`lock`]: the project lock, and [`lock_project`], which takes it and finishes an
//!   interrupted write first;
//! - [`txn`]: the staged, journaled write and its recovery;
//! - `record`: the run record outside the project that marks a transaction as this machine's;
//! - `fault`: the fault points the kill tests stop a command at.
//!
//! The tests of whole plans (resolved, applied, refused, read) are in `tests.rs`.

pub mod cargo_dep;
mod error;
mod fault;
mod file;
pub mod lock;
pub mod marker;
pub mod owned;
mod paths;
mod plan;
mod read;
mod record;
pub mod regular;
mod resolve;
pub mod rustfmt;
#[cfg(test)]
mod tests;
pub mod txn;

use std::path::Path;

pub use error::ScaffoldError;
pub use file::{File, FileSpec, Format, IfExists, Owner};
pub use lock::{ProjectLock, lock_project, lock_project_read_only, recover_project};
pub use paths::{VCS_DIRS, is_vcs_path};
pub use plan::{Action, FileOp, Plan, Resolved};
pub use read::{Entry, list, read};
pub use txn::{Mode, Recovery, STATE_DIR};

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

/// [`report`], with the files under each of `dirs` (relative directories, such as the
/// vendored runtime crate) summed up per action in one line, `create  <dir>/ (97 files)`,
/// where there is more than one: a command that writes a whole crate lists what the user
/// reads, not each of its files.
pub fn report_grouped(resolved: &[Resolved], dirs: &[&str]) -> String {
    let under = |r: &Resolved| dirs.iter().copied().find(|d| r.path.starts_with(d));
    let mut counts: Vec<(Action, &str, usize)> = Vec::new();
    for r in resolved.iter().filter(|r| r.action != Action::Unchanged) {
        if let Some(dir) = under(r) {
            match counts
                .iter_mut()
                .find(|(a, d, _)| *a == r.action && *d == dir)
            {
                Some(c) => c.2 += 1,
                None => counts.push((r.action, dir, 1)),
            }
        }
    }
    let mut out = String::new();
    let mut said: Vec<(Action, &str)> = Vec::new();
    for r in resolved
        .iter()
        .filter(|r| r.action != Action::Unchanged && !r.path.starts_with(STATE_DIR))
    {
        let grouped = under(r).and_then(|dir| {
            counts
                .iter()
                .find(|(a, d, n)| *a == r.action && *d == dir && *n > 1)
        });
        match grouped {
            Some((action, dir, n)) => {
                if !said.contains(&(*action, *dir)) {
                    said.push((*action, *dir));
                    out.push_str(&format!("{:<7} {dir}/ ({n} files)\n", action.to_string()));
                }
            }
            None => out.push_str(&format!(
                "{:<7} {}\n",
                r.action.to_string(),
                r.path.display()
            )),
        }
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
