//! `rsbuilder alpha update` and `rsbuilder alpha generate`: bring a project to this
//! rsbuilder's version.
//!
//! - [`plan_update`] (Kubebuilder has no equivalent; the model is `git merge-file`): every
//!   tool-owned file is brought to the text this version writes. A file still as rsbuilder
//!   recorded it (its SHA-256 in `.rsbuilder/tool-owned.sha256`, see [`engine::owned`]) is
//!   replaced; a file the user changed gets a three-way merge (diffy) of the recorded base,
//!   the file on disk and the new text; a merge that conflicts is written with conflict
//!   markers. User-owned files are never read for writing, but for `Cargo.lock`, whose pins
//!   move with the runtime per package where the user left them ([`plan_lock`]), and, in a
//!   project that depends on the runtime by version, the `rsbuilder-runtime` version
//!   requirements of Cargo.toml, which move to this version (`requirement.rs`).
//! - [`plan_generate`] (Kubebuilder's `alpha generate`): the project is scaffolded again from
//!   its PROJECT in a scratch directory (`init`, then `create api` for each resource, then
//!   `create webhook` for each recorded webhook), the user's code is carried over, and the
//!   result goes into `--output-dir` or, in place, into the project, where a scaffolded file
//!   the user changed is merged three ways as `alpha update` merges (Cargo.toml key by key,
//!   [`super::cargo_merge`]) and nothing is written when one cannot merge.
//!
//! Both write through one [`Plan`], so the lock, the journal and the fault points apply as to
//! every other command. docs/alpha.md describes both for users.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::engine::owned;
use super::{File, IfExists, Plan, ScaffoldError};
use crate::model::Project;
use crate::model::layout;
use crate::model::project;

mod generate;
mod requirement;
pub use generate::{GenerateOptions, Generated, generate_report, plan_generate};
pub use requirement::Moved;

/// The tool-owned files this version writes into the project planned by `plan`, as (path in
/// a project, text), sorted by path: the runtime crate under [`super::runtime::DIR`] of a
/// project that holds a copy of it, with the server part when its Cargo.toml turns it on
/// ([`super::runtime::uses_server`]); none for a project that depends on the runtime by
/// version. A command that writes other tool-owned files adds them here, so `alpha update`
/// refreshes them too.
///
/// Errors: a Cargo.toml that cannot be read.
pub fn tool_owned_files(plan: &Plan, project: &Project) -> Result<BTreeMap<PathBuf, String>> {
    use super::runtime;
    if runtime::Source::of(project) == runtime::Source::Crate {
        return Ok(BTreeMap::new());
    }
    let cargo = plan.read(layout::CARGO_TOML)?.unwrap_or_default();
    Ok(runtime::project_files(runtime::uses_server(&cargo)))
}

/// Whether `path` is in the part of the project this version's tool-owned files live in
/// ([`super::runtime::DIR`]): a recorded tool-owned file there that this version no longer
/// has was dropped by it. A recorded file elsewhere (written by another version's command
/// this one does not know) is left alone.
fn in_tool_owned_area(path: &Path) -> bool {
    path.starts_with(super::runtime::DIR)
}

/// What `alpha update` does (or, with `--dry-run`, would do) to one tool-owned file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The file was as rsbuilder wrote it: replaced by the new text.
    Replaced,
    /// The file is new in this version, or was missing: written.
    Created,
    /// The user changed the file and the new text merged without conflict.
    Merged,
    /// The user changed the file where the new text changes it too: written with conflict
    /// markers (`<<<<<<< ours`, `||||||| original`, `=======`, `>>>>>>> theirs`).
    Conflict,
    /// The file still holds the conflict markers of an earlier update: left alone.
    StillConflicted,
    /// This version no longer has the file, and it was as rsbuilder wrote it: removed.
    Removed,
    /// This version no longer has the file, but the user changed it: kept as it is, and no
    /// longer recorded as tool-owned (it is the user's now); counted as a conflict.
    KeptDropped,
    /// The file holds the new text already; only its record under `.rsbuilder/` is written.
    Recorded,
    /// The user changed the file and this version's text is the one rsbuilder wrote before:
    /// there is nothing to merge, so the file stays as the user left it (not a write).
    Kept,
}

impl Outcome {
    /// The word printed before the path.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Replaced => "replace",
            Outcome::Created => "create",
            Outcome::Merged => "merge",
            Outcome::Conflict => "conflict",
            Outcome::StillConflicted => "conflict",
            Outcome::Removed => "remove",
            Outcome::KeptDropped => "kept",
            Outcome::Recorded => "record",
            Outcome::Kept => "keep",
        }
    }

    /// Whether the outcome leaves work for the user (exit code 1).
    pub fn is_conflict(self) -> bool {
        matches!(
            self,
            Outcome::Conflict | Outcome::StillConflicted | Outcome::KeptDropped
        )
    }
}

/// The planned `alpha update`: the writes, and what happens to each tool-owned file that
/// changes (files already up to date are not listed).
#[derive(Debug)]
pub struct Update {
    /// The writes; nothing is written until it is applied.
    pub plan: Plan,
    /// (path, outcome), sorted by path.
    pub files: Vec<(PathBuf, Outcome)>,
    /// How many tool-owned files this version has.
    pub tool_owned: usize,
    /// What happens to `Cargo.lock` ([`plan_lock`]); `None` when this version pins what
    /// rsbuilder recorded it wrote before.
    pub lock: Option<LockUpdate>,
    /// How many copies of merge bases that an earlier rsbuilder kept under
    /// `.rsbuilder/base/` are removed: rsbuilder carries them now. A copy stays while its file
    /// still holds conflict markers, whose base it is.
    pub copies_removed: usize,
    /// In a project that depends on the runtime by version: the `rsbuilder-runtime`
    /// requirements of Cargo.toml that move to this version; empty otherwise.
    pub requirements: Vec<Moved>,
}

/// What `alpha update` does to `Cargo.lock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockUpdate {
    /// The project had no `Cargo.lock`: it gets this version's.
    Created,
    /// The per-package choice between the user's lock and this version's pins.
    Updated(super::lockfile::Update),
}

impl Update {
    /// The files left with conflicts (exit code 1).
    pub fn conflicts(&self) -> Vec<&Path> {
        self.files
            .iter()
            .filter(|(_, o)| o.is_conflict())
            .map(|(p, _)| p.as_path())
            .collect()
    }
}

pub use super::textmerge::{has_conflict_markers, merge};

/// The recorded tool-owned files of the project planned by `plan`: path to SHA-256 hex.
fn recorded(plan: &Plan) -> Result<BTreeMap<PathBuf, String>, ScaffoldError> {
    Ok(plan
        .read(owned::MANIFEST)?
        .map(|text| {
            owned::parse_manifest(&text)
                .into_iter()
                .map(|(path, hash)| (PathBuf::from(path), hash))
                .collect()
        })
        .unwrap_or_default())
}

/// Loads PROJECT through `plan` and checks that it is an rsbuilder project, with the advice
/// to run `init` when there is none.
fn load_project(plan: &Plan, command: &str) -> Result<Project> {
    let dir = plan.root();
    if !plan.exists(project::FILE_NAME)? {
        bail!(
            "no PROJECT file in {}; `rsbuilder {command}` works on a project made with \
             `rsbuilder init` (run it from the project directory)",
            dir.display()
        );
    }
    Project::load_in(plan)
}

/// Plans `alpha update` in the project at `dir` (see the module documentation): for every
/// tool-owned file of this version ([`tool_owned_files`]) and every recorded one this
/// version dropped. Records afterwards: the hash and base of every file written (replaced,
/// created, merged, or with conflict markers) are those of the new text, as git takes the
/// new upstream as the base once a merge is done; so after a conflict is resolved by hand,
/// the next update merges the user's resolution against this version's text.
///
/// In a project that depends on the runtime by version there is no tool-owned file; its
/// Cargo.toml's `rsbuilder-runtime` requirements move to this version instead
/// ([`Update::requirements`]).
///
/// Errors (nothing written): no PROJECT, or one that does not parse (a Kubebuilder Go
/// project is explained); unreadable files; a path that leads out of the project; in a
/// project on the runtime by version, a Cargo.toml that is not valid TOML.
pub fn plan_update(dir: &Path) -> Result<Update> {
    use super::runtime;
    let mut plan = Plan::new(dir, false);
    let project = load_project(&plan, "alpha update")?;
    let version = runtime::recorded_version(&plan)?;
    if let Some(v) = &version
        && runtime::tree(v).is_none()
    {
        bail!(
            "this project's tool-owned files are rsbuilder {v}'s, and this rsbuilder ({}) \
             carries no copy of rsbuilder {v}'s runtime, the base it merges your edits against \
             (it carries {}); nothing was written. Update with an rsbuilder that carries \
             {v}: {v} itself or a later release",
            runtime::VERSION,
            runtime::versions().join(", ")
        );
    }
    let lock = plan_lock(&mut plan)?;
    let mut requirements = Vec::new();
    if runtime::Source::of(&project) == runtime::Source::Crate
        && let Some(cargo) = plan.read(layout::CARGO_TOML)?
        && let Some((text, moved)) = requirement::move_to(&cargo, runtime::VERSION)?
    {
        plan.add(File::verbatim(layout::CARGO_TOML, text));
        requirements = moved;
    }
    let recorded = recorded(&plan)?;
    let new = tool_owned_files(&plan, &project)?;
    let mut paths: BTreeSet<PathBuf> = new.keys().cloned().collect();
    paths.extend(recorded.keys().filter(|p| in_tool_owned_area(p)).cloned());
    let base_of = |plan: &Plan, path: &Path| {
        runtime::base(
            plan,
            path,
            recorded.get(path).map(String::as_str),
            version.as_deref(),
        )
    };
    let mut files = Vec::new();
    for path in paths {
        let disk = plan.read(&path)?;
        let record = recorded.get(&path);
        let untouched = |text: &str| record.is_some_and(|h| *h == owned::sha256_hex(text));
        let outcome = match (new.get(&path), disk) {
            (Some(theirs), None) => {
                plan.add(File::tool_owned(&path, theirs.clone(), IfExists::Overwrite));
                Outcome::Created
            }
            (Some(theirs), Some(ours)) if ours == *theirs => {
                let copy = plan.exists(Path::new(owned::BASE_DIR).join(&path))?;
                if untouched(theirs) && !copy {
                    continue;
                }
                plan.add(File::tool_owned(&path, theirs.clone(), IfExists::Overwrite));
                Outcome::Recorded
            }
            (Some(_), Some(ours)) if has_conflict_markers(&ours) => Outcome::StillConflicted,
            (Some(theirs), Some(ours)) if untouched(&ours) => {
                plan.add(File::tool_owned(&path, theirs.clone(), IfExists::Overwrite));
                Outcome::Replaced
            }
            (Some(theirs), Some(ours)) => {
                // Changed by the user. Without a base (a record lost, or a file this version
                // adds where the user already has one) every difference is a conflict.
                let base = base_of(&plan, &path)?.unwrap_or_default();
                match merge(&base, &ours, theirs) {
                    Ok(merged) if merged == ours && base == *theirs => Outcome::Kept,
                    Ok(merged) => {
                        plan.add(File::tool_owned_with_base(&path, merged, theirs.clone()));
                        Outcome::Merged
                    }
                    Err(marked) => {
                        plan.add(File::tool_owned_with_base(&path, marked, theirs.clone()));
                        Outcome::Conflict
                    }
                }
            }
            (None, None) => {
                plan.untrack_tool_owned(&path);
                Outcome::Removed
            }
            (None, Some(ours)) if untouched(&ours) => {
                plan.remove(&path);
                plan.untrack_tool_owned(&path);
                Outcome::Removed
            }
            (None, Some(_)) => {
                plan.untrack_tool_owned(&path);
                Outcome::KeptDropped
            }
        };
        files.push((path, outcome));
    }
    // The copies of merge bases an earlier rsbuilder kept: this one carries them. The copy of
    // a file still in conflict stays, as the base of its next merge.
    let (copies, _) = plan.list_files(owned::BASE_DIR, &[])?;
    let mut copies_removed = 0;
    for copy in copies {
        let file = copy.strip_prefix(owned::BASE_DIR).unwrap_or(&copy);
        let in_conflict = files
            .iter()
            .any(|(p, o)| p == file && *o == Outcome::StillConflicted);
        if !in_conflict {
            plan.remove(&copy);
            copies_removed += 1;
        }
    }
    let stale_version = version.as_deref() != Some(runtime::VERSION);
    if !new.is_empty() && (stale_version || !files.is_empty()) {
        runtime::record_version(&mut plan);
    }
    if new.is_empty() && version.is_some() {
        plan.remove(runtime::VERSION_RECORD);
    }
    Ok(Update {
        plan,
        files,
        tool_owned: new.len(),
        lock,
        copies_removed,
        requirements,
    })
}

/// Plans the update of `Cargo.lock` with the runtime, when this version pins other versions
/// ([`super::lockfile::project_lock`]) than rsbuilder recorded it wrote before
/// ([`super::lockfile::PINNED`]): per package, the new pin where the user's entry is still
/// the old one, the user's entry where they chose another version ([`super::lockfile::update`];
/// without a record, every version in the lock is the user's). A project without a lock gets
/// this version's. The record becomes this version's pins.
///
/// Errors (nothing written): a lock or record that cannot be read or parsed, naming the file
/// and the line.
fn plan_lock(plan: &mut Plan) -> Result<Option<LockUpdate>> {
    use super::lockfile::{self, FILE, PINNED};
    let theirs = lockfile::project_lock();
    let base = plan.read(PINNED)?;
    if base.as_deref() == Some(theirs.as_str()) {
        return Ok(None);
    }
    let outcome = match plan.read(FILE)? {
        Some(ours) => {
            let update =
                lockfile::update(base.as_deref(), &ours, &theirs).map_err(anyhow::Error::msg)?;
            if update.text != ours {
                plan.add(File::verbatim(FILE, update.text.clone()));
            }
            LockUpdate::Updated(update)
        }
        None => {
            plan.add(File::verbatim(FILE, theirs.clone()));
            LockUpdate::Created
        }
    };
    plan.add(File::new(PINNED, theirs, IfExists::Overwrite));
    Ok(Some(outcome))
}

/// Where `alpha generate` records the text this version's scaffold wrote into each file that is
/// neither the user's code ([`users_code`]) nor tool-owned: `.rsbuilder/scaffold/<path>`, the
/// base of the next `alpha generate`'s three-way merge in place.
pub const SCAFFOLD_DIR: &str = ".rsbuilder/scaffold";

/// The outcome of [`three_way`] for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreeWay {
    /// The user's file is as the base: this version's text replaces it.
    Theirs,
    /// This version's text is the base's (or the user's already): the user's file stays.
    Ours,
    /// Both changed it, and the changes merged cleanly into this text.
    Merged(String),
    /// Both changed it in the same place: `marked` holds conflict blocks (as [`merge`] writes
    /// them), `why` says which keys (Cargo.toml) or that lines overlap.
    Conflict {
        /// The text with `<<<<<<< ours` / `||||||| original` / `=======` / `>>>>>>> theirs`
        /// blocks.
        marked: String,
        /// Why it cannot merge, for the user.
        why: String,
    },
}

/// The three-way merge `alpha generate` applies in place to the file `path`: `ours` (the
/// project's) and `theirs` (this version's scaffold) against `base` (what rsbuilder wrote
/// before; `None` without a record, when every difference conflicts). A file named
/// `Cargo.toml` is merged key by key ([`super::cargo_merge`]), other files line by line as
/// `alpha update` merges them ([`merge`], `git merge-file`'s rules). A Cargo.toml that cannot
/// merge by keys gets its conflict blocks from the line merge.
pub fn three_way(path: &Path, base: Option<&str>, ours: &str, theirs: &str) -> ThreeWay {
    if base == Some(theirs) || ours == theirs {
        return ThreeWay::Ours;
    }
    if base == Some(ours) {
        return ThreeWay::Theirs;
    }
    let lines = match base {
        Some(base) => merge(base, ours, theirs),
        None => Err(two_way_blocks(ours, theirs)),
    };
    if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        return match super::cargo_merge::merge(base, ours, theirs) {
            Ok(text) if text == ours => ThreeWay::Ours,
            Ok(text) => ThreeWay::Merged(text),
            Err(keys) => ThreeWay::Conflict {
                marked: lines.unwrap_or_else(|marked| marked),
                why: if keys.len() == 1 && keys[0].contains(' ') {
                    keys[0].clone()
                } else {
                    format!(
                        "you and this version changed {} differently",
                        keys.iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            },
        };
    }
    match lines {
        Ok(text) if text == ours => ThreeWay::Ours,
        Ok(text) => ThreeWay::Merged(text),
        Err(marked) => ThreeWay::Conflict {
            marked,
            why: if base.is_none() {
                "no record of what rsbuilder wrote into it before, so your changes and this \
                 version's cannot be told apart"
                    .to_owned()
            } else {
                "your lines and this version's overlap".to_owned()
            },
        },
    }
}

/// `ours` and `theirs` with conflict blocks where they differ, for a file without a base: the
/// lines both have stay as they are, and each run of lines where they differ becomes a block
/// with an empty `original` part (what `git merge-file` makes of an empty base, trimmed to the
/// differing lines as its default "zealous" level does). A last line without a newline gets
/// one.
fn two_way_blocks(ours: &str, theirs: &str) -> String {
    let ended = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_owned()
        } else {
            format!("{s}\n")
        }
    };
    let (ours, theirs) = (ended(ours), ended(theirs));
    let mut opts = diffy::DiffOptions::new();
    // Context enough to cover both files: one hunk, every line in it.
    opts.set_context_len(ours.lines().count() + theirs.lines().count() + 1);
    let patch = opts.create_patch(&ours, &theirs);
    let mut out = String::new();
    let (mut mine, mut new) = (String::new(), String::new());
    let flush = |out: &mut String, mine: &mut String, new: &mut String| {
        if !mine.is_empty() || !new.is_empty() {
            out.push_str("<<<<<<< ours\n");
            out.push_str(mine);
            out.push_str("||||||| original\n=======\n");
            out.push_str(new);
            out.push_str(">>>>>>> theirs\n");
            mine.clear();
            new.clear();
        }
    };
    for hunk in patch.hunks() {
        for line in hunk.lines() {
            match line {
                diffy::Line::Context(l) => {
                    flush(&mut out, &mut mine, &mut new);
                    out.push_str(l);
                }
                diffy::Line::Delete(l) => mine.push_str(l),
                diffy::Line::Insert(l) => new.push_str(l),
            }
        }
    }
    flush(&mut out, &mut mine, &mut new);
    out
}

#[cfg(test)]
mod tests {
    use super::generate::users_code;
    use super::*;
    use crate::model::project::ProjectResource;

    #[test]
    fn a_merge_takes_both_sides_when_they_do_not_overlap() {
        let base = "a\nb\nc\nd\ne\n";
        let ours = "a\nB\nc\nd\ne\n";
        let theirs = "a\nb\nc\nd\nE\n";
        assert_eq!(merge(base, ours, theirs).unwrap(), "a\nB\nc\nd\nE\n");
    }

    #[test]
    fn an_overlapping_merge_is_written_with_diff3_markers() {
        let marked = merge("a\nb\nc\n", "a\nours\nc\n", "a\ntheirs\nc\n").unwrap_err();
        assert_eq!(
            marked,
            "a\n<<<<<<< ours\nours\n||||||| original\nb\n=======\ntheirs\n>>>>>>> theirs\nc\n"
        );
        assert!(has_conflict_markers(&marked));
        assert!(!has_conflict_markers("a\n<<<<<<< ours\nb\n"));
        assert!(!has_conflict_markers("let s = \"<<<<<<< ours\";\n"));
    }

    #[test]
    fn without_a_base_only_the_differing_lines_are_in_blocks() {
        let marked = two_way_blocks("a\nb\nc\nmine", "a\nB\nc\n");
        assert_eq!(
            marked,
            "a\n<<<<<<< ours\nb\n||||||| original\n=======\nB\n>>>>>>> theirs\nc\n\
             <<<<<<< ours\nmine\n||||||| original\n=======\n>>>>>>> theirs\n"
        );
        assert!(has_conflict_markers(&marked));
        assert_eq!(
            three_way(Path::new("Makefile"), None, "a\nb\n", "a\nc\n"),
            ThreeWay::Conflict {
                marked: "a\n<<<<<<< ours\nb\n||||||| original\n=======\nc\n>>>>>>> theirs\n".into(),
                why: "no record of what rsbuilder wrote into it before, so your changes and \
                      this version's cannot be told apart"
                    .into(),
            }
        );
    }

    #[test]
    fn the_users_code_is_the_kinds_files_samples_and_generated_manifests() {
        let mut project = Project::new("example.com", "example.com/x", "x", false);
        project.resources.push(ProjectResource {
            api: Some(Default::default()),
            controller: true,
            group: "ai".into(),
            kind: "AIJob".into(),
            version: "v1".into(),
            ..Default::default()
        });
        for yes in [
            "src/api/v1/aijob_types.rs",
            "src/controller/aijob_controller.rs",
            "config/samples/ai_v1_aijob.yaml",
            "config/crd/bases/ai.example.com_aijobs.yaml",
            "config/rbac/role.yaml",
        ] {
            assert!(users_code(Path::new(yes), &project), "{yes}");
        }
        for no in [
            "src/main.rs",
            "src/api/v1/mod.rs",
            "config/samples/kustomization.yaml",
            "src/webhook/v1/aijob_webhook.rs",
            "Cargo.toml",
        ] {
            assert!(!users_code(Path::new(no), &project), "{no}");
        }
    }
}
