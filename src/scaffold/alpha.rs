//! `rsbuilder alpha update` and `rsbuilder alpha generate`: bring a project to this
//! rsbuilder's version.
//!
//! - [`plan_update`] (Kubebuilder has no equivalent; the model is `git merge-file`): every
//!   tool-owned file is brought to the text this version writes. A file still as rsbuilder
//!   recorded it (its SHA-256 in `.rsbuilder/tool-owned.sha256`, see [`engine::owned`]) is
//!   replaced; a file the user changed gets a three-way merge (diffy) of the recorded base,
//!   the file on disk and the new text; a merge that conflicts is written with conflict
//!   markers. User-owned files are never read for writing, but for `Cargo.lock`, whose pins
//!   move with the runtime per package where the user left them ([`plan_lock`]).
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

use anyhow::{Context as _, Result, bail};

use super::engine::{self, owned};
use super::{File, IfExists, Plan, ScaffoldError};
use crate::model::Project;
use crate::model::layout;
use crate::model::project::{self, ProjectResource};

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
/// Errors (nothing written): no PROJECT, or one that does not parse (a Kubebuilder Go
/// project is explained); unreadable files; a path that leads out of the project.
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
                    Ok(merged) if merged == ours && base == *theirs => continue,
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

/// What `alpha generate` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateOptions {
    /// `--output-dir`: where the new project goes (absolute, not the project itself); `None`
    /// for in place.
    pub output_dir: Option<PathBuf>,
    /// `--force`: write into an output directory that is not empty; in place, write the files
    /// that cannot merge with conflict blocks.
    pub force: bool,
}

/// The planned `alpha generate`: the writes and what they change, against the old project.
#[derive(Debug)]
pub struct Generated {
    /// The writes, into the output directory or the project; nothing is written until it is
    /// applied.
    pub plan: Plan,
    /// Files the old project does not have.
    pub added: Vec<PathBuf>,
    /// Files whose text differs from the old project's: replaced by this version's text
    /// (in place, only files the user had left as rsbuilder wrote them).
    pub changed: Vec<PathBuf>,
    /// In place: files the user changed where this version changes them too, merged three
    /// ways without conflict ([`three_way`]).
    pub merged: Vec<PathBuf>,
    /// In place: files the user changed that cannot merge cleanly, with why (the TOML keys of
    /// a Cargo.toml, or that the lines overlap). Without `--force` nothing may be written;
    /// with it, they are in the plan with conflict blocks.
    pub conflicts: Vec<(PathBuf, String)>,
    /// In place: files the user changed that stay as they are (this version brings nothing
    /// new to them).
    pub kept_edits: Vec<PathBuf>,
    /// Files of the old project the new one does not have (tool-owned files this version
    /// dropped).
    pub removed: Vec<PathBuf>,
    /// Files of the old project carried over as they are (`--output-dir`), or left as they
    /// are (in place), the files in place where the user's edits are kept counted in.
    pub kept: usize,
    /// What could not be carried over, and why.
    pub notes: Vec<String>,
}

/// Directories never carried over nor listed as the project's files: git's, cargo's, and
/// rsbuilder's own state (the records are written anew).
const NOT_CARRIED: &[&str] = &[".git", "target", engine::STATE_DIR];

/// The files of an rsbuilder project the user writes code in, which `alpha generate` takes
/// from the old project when it has them rather than from the templates: for every resource
/// its types, controller, webhook and conversion files, the samples, and what `manifests`
/// writes from the code (CRDs, the manager's role, the webhook configurations), and
/// `Cargo.lock` (the versions the user builds with; `alpha update` moves the pins).
fn users_code(path: &Path, project: &Project) -> bool {
    let per_kind = project.resources.iter().any(|r: &ProjectResource| {
        let group = layout::group_of(project.multigroup, &r.group);
        let mut files = Vec::new();
        if r.api.is_some() {
            files.push(layout::types_file(group, &r.version, &r.kind));
        }
        if super::apiserver::is_served(r) {
            files.push(layout::apiserver::types(&r.version, &r.kind.to_lowercase()).path);
        }
        if r.controller {
            files.push(layout::controller_file(group, &r.kind));
        }
        if r.webhooks.is_some() {
            files.push(layout::webhook_file(group, &r.version, &r.kind));
            files.push(layout::conversion_file(group, &r.version, &r.kind));
        }
        files.iter().any(|f| f == path)
    });
    let named = super::api::named::recorded(project).iter().any(|c| {
        layout::named_controller_file(layout::group_of(project.multigroup, &c.group), &c.name)
            == path
    });
    let config = Path::new(layout::CONFIG_DIR);
    per_kind
        || named
        || (path.starts_with(config.join("samples"))
            && path != Path::new(layout::SAMPLES_KUSTOMIZATION))
        || path.starts_with(config.join(layout::generated::CRD_BASES))
        || path == config.join(layout::generated::RBAC_ROLE)
        || path == Path::new(layout::WEBHOOK_MANIFESTS)
        || path == Path::new(super::lockfile::FILE)
}

/// Scaffolds the project `project` describes into the empty directory `scratch` with this
/// version's commands: `init` with its domain, repo, project name, namespaced setting and the
/// license, owner and year `header` (the old `src/lib.rs` header) names; `create api` for
/// each resource in PROJECT order (its type with `namespaced` and `plural` as recorded, and
/// its controller); the named controllers PROJECT's plugins record (`create api
/// --controller-name`); then `create webhook` for each resource with webhooks.
/// External kinds (`create api --external-api-crd` / `--external-api-path`) are re-created
/// with their recorded source; a CRD file is read from `root`, the old project.
fn scaffold(scratch: &Path, project: &Project, header: &str, root: &Path) -> Result<()> {
    use super::{api, init, webhook};
    let (license, year, owner) = super::relicense::recognize(header);
    let opts = init::InitOptions {
        domain: project.domain.clone(),
        repo: project.repo.clone(),
        project_name: project.project_name.clone(),
        owner,
        license,
        namespaced: project.namespaced,
        multigroup: project.multigroup,
        year,
        runtime: super::runtime::Source::of(project),
    };
    init::plan(scratch, &opts)
        .context("re-scaffolding from PROJECT: `init`")?
        .apply()?;
    let gvk = |r: &ProjectResource| format!("{}/{} {}", r.group, r.version, r.kind);
    for r in &project.resources {
        if super::apiserver::is_served(r) {
            continue;
        }
        if api::external::is_external(r) {
            let opts = api::external::options(project, r, root)?;
            api::external::run(scratch, &opts).with_context(|| {
                format!(
                    "re-scaffolding from PROJECT: `create api` for the external kind {}",
                    gvk(r)
                )
            })?;
            continue;
        }
        if r.api.is_none() && !r.controller {
            continue;
        }
        let mut opts = api::ApiOptions::from_project_resource(r);
        opts.image = api::deploy_image::recorded(project, &r.group, &r.version, &r.kind);
        api::run(scratch, &opts)
            .with_context(|| format!("re-scaffolding from PROJECT: `create api` for {}", gvk(r)))?;
    }
    for c in api::named::recorded(project) {
        api::run(scratch, &api::named::options(&c)).with_context(|| {
            format!(
                "re-scaffolding from PROJECT: `create api --controller-name {}` for {}/{} {}",
                c.name, c.group, c.version, c.kind
            )
        })?;
    }
    for r in &project.resources {
        let Some(opts) = webhook::WebhookOptions::from_project_resource(r) else {
            continue;
        };
        webhook::check_flags(&opts).map_err(|usage| {
            anyhow::anyhow!(
                "re-scaffolding from PROJECT: `create webhook` for {}: {usage}",
                gvk(r)
            )
        })?;
        webhook::run(scratch, &opts).with_context(|| {
            format!(
                "re-scaffolding from PROJECT: `create webhook` for {}",
                gvk(r)
            )
        })?;
    }
    // Served kinds last: `create apiserver` joins the `replacements:` list that `create
    // webhook` starts in config/default (PROJECT does not record the order they ran in).
    for r in project
        .resources
        .iter()
        .filter(|r| super::apiserver::is_served(r))
    {
        let opts = super::apiserver::ApiServerOptions::from_project_resource(r);
        super::apiserver::run(scratch, &opts).with_context(|| {
            format!(
                "re-scaffolding from PROJECT: `create apiserver` for {}",
                gvk(r)
            )
        })?;
    }
    Ok(())
}

/// Reads every file of `plan`'s root (but [`NOT_CARRIED`]) as text. Files that are not UTF-8
/// text and symbolic links are left out, each with a note.
fn read_all(plan: &Plan, notes: &mut Vec<String>) -> Result<BTreeMap<PathBuf, String>> {
    let (files, links) = plan.list_files("", NOT_CARRIED)?;
    for link in links {
        notes.push(format!(
            "{} is a symbolic link: not carried over; make it again in the new project",
            link.display()
        ));
    }
    let mut out = BTreeMap::new();
    for path in files {
        match plan.read(&path) {
            Ok(Some(text)) => {
                out.insert(path, text);
            }
            Ok(None) => {}
            Err(ScaffoldError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::InvalidData =>
            {
                notes.push(format!(
                    "{} is not UTF-8 text: not carried over; copy it yourself",
                    path.display()
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// Plans `alpha generate` for the project at `dir` (see the module documentation).
///
/// The new project is this version's scaffold of PROJECT, where the user's code
/// ([`users_code`]: types, controllers, webhooks, samples, generated manifests) is the old
/// project's, PROJECT is the old one (its unknown fields kept, `cliVersion` this version's),
/// and, with `--output-dir`, every other file of the old project that the scaffold does not
/// write is copied (all but `.git/`, `target/`, `.rsbuilder/`, and tool-owned files this
/// version dropped). In place, a file the scaffold writes that the user changed is merged
/// three ways ([`three_way`]; its base is the tool-owned record under `.rsbuilder/base/`, or,
/// for another file, this version's text when PROJECT's `cliVersion` is this version, else
/// the record of the last `alpha generate` under [`SCAFFOLD_DIR`]); [`Generated::conflicts`]
/// lists the files that cannot merge. The dropped tool-owned files are removed, and every
/// other file stays as it is. Either way, [`SCAFFOLD_DIR`] records this version's text.
///
/// Errors (nothing written): no PROJECT, or one that does not parse (a Kubebuilder Go
/// project is explained); an output directory that is not empty, without `--force`; a
/// resource or webhook of PROJECT that this version's `create api` / `create webhook`
/// refuses.
pub fn plan_generate(dir: &Path, opts: &GenerateOptions) -> Result<Generated> {
    let old_plan = Plan::new(dir, false);
    let mut project = load_project(&old_plan, "alpha generate")?;
    let out_dir = opts.output_dir.clone().unwrap_or_else(|| dir.to_path_buf());
    let in_place = opts.output_dir.is_none();
    if !in_place {
        let (files, links) = Plan::new(&out_dir, false).list_files("", &[])?;
        if (!files.is_empty() || !links.is_empty()) && !opts.force {
            bail!(
                "the output directory {} is not empty; choose an empty or new directory, or \
                 pass --force to write into it (its files the new project also has are \
                 overwritten, the others stay)",
                out_dir.display()
            );
        }
    }
    let mut notes = Vec::new();
    let mut old = read_all(&old_plan, &mut notes)?;
    // An output directory inside the project is not part of it.
    if let Ok(inside) = out_dir.strip_prefix(dir)
        && !in_place
    {
        old.retain(|p, _| !p.starts_with(inside));
        notes.retain(|n| !Path::new(n).starts_with(inside));
    }
    let header = super::api::rust_header(&old_plan)?;
    let old_owned = recorded(&old_plan)?;
    let old_version = super::runtime::recorded_version(&old_plan)?;

    let scratch_root = tempfile::Builder::new()
        .prefix("rsbuilder-generate-")
        .tempdir()
        .context("creating a scratch directory for the new scaffold")?;
    let scratch = scratch_root.path().join(&project.project_name);
    // The project's rustfmt settings shape the Rust files the commands format, as they did
    // when the old project was scaffolded.
    let mut settings = Plan::new(&scratch, false);
    for name in ["rustfmt.toml", ".rustfmt.toml"] {
        if let Some(text) = old.get(Path::new(name)) {
            settings.add(File::verbatim(name, text.clone()));
        }
    }
    settings.apply()?;
    scaffold(&scratch, &project, &header, dir)?;
    let scratch_plan = Plan::new(&scratch, false);
    let mut scratch_notes = Vec::new();
    let mut new = read_all(&scratch_plan, &mut scratch_notes)?;
    let new_owned: BTreeSet<PathBuf> = recorded(&scratch_plan)?.into_keys().collect();
    let old_cli_version = project.cli_version.take();
    project.cli_version = Some(env!("CARGO_PKG_VERSION").into());
    new.insert(PathBuf::from(project::FILE_NAME), project.render());
    for (path, text) in new.iter_mut() {
        if users_code(path, &project)
            && let Some(theirs) = old.get(path)
        {
            text.clone_from(theirs);
        }
    }
    // As for `alpha update`: only in the area this version's tool-owned files live in.
    let dropped: BTreeSet<PathBuf> = old_owned
        .keys()
        .filter(|p| in_tool_owned_area(p) && !new_owned.contains(*p) && !new.contains_key(*p))
        .cloned()
        .collect();

    let mut plan = Plan::new(&out_dir, opts.force);
    let (mut added, mut changed, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut merged, mut conflicts, mut kept_edits) = (Vec::new(), Vec::new(), Vec::new());
    let mut kept = 0;
    let this_version = old_cli_version.as_deref() == Some(env!("CARGO_PKG_VERSION"));
    for (path, text) in &new {
        let tool_owned = new_owned.contains(path);
        // In place, a scaffolded file the user changed is merged with this version's text.
        let merged_text = match old.get(path) {
            None => {
                added.push(path.clone());
                None
            }
            Some(o) if o == text => {
                if in_place {
                    continue;
                }
                None
            }
            Some(o) if in_place && path != Path::new(project::FILE_NAME) => {
                let base = if tool_owned {
                    super::runtime::base(
                        &old_plan,
                        path,
                        old_owned.get(path).map(String::as_str),
                        old_version.as_deref(),
                    )?
                } else if this_version {
                    Some(text.clone())
                } else {
                    old_plan.read(Path::new(SCAFFOLD_DIR).join(path))?
                };
                match three_way(path, base.as_deref(), o, text) {
                    ThreeWay::Theirs => {
                        changed.push(path.clone());
                        None
                    }
                    ThreeWay::Ours => {
                        kept += 1;
                        kept_edits.push(path.clone());
                        continue;
                    }
                    ThreeWay::Merged(m) => {
                        merged.push(path.clone());
                        Some(m)
                    }
                    ThreeWay::Conflict { marked, why } => {
                        conflicts.push((path.clone(), why));
                        Some(marked)
                    }
                }
            }
            Some(_) => {
                changed.push(path.clone());
                None
            }
        };
        match (merged_text, tool_owned) {
            (None, true) => plan.add(File::tool_owned(path, text.clone(), IfExists::Overwrite)),
            (None, false) => plan.add(File::verbatim(path, text.clone())),
            (Some(m), true) => plan.add(File::tool_owned_with_base(path, m, text.clone())),
            (Some(m), false) => plan.add(File::verbatim(path, m)),
        }
    }
    // The record of what this version's scaffold wrote into each file that is neither the
    // user's code nor tool-owned (which has its own record): the base of the next merge.
    let scaffold_dir = Path::new(SCAFFOLD_DIR);
    let (recorded_scaffold, _) = old_plan.list_files(SCAFFOLD_DIR, &[])?;
    let mut records = BTreeSet::new();
    for (path, text) in &new {
        if new_owned.contains(path)
            || users_code(path, &project)
            || path == Path::new(project::FILE_NAME)
        {
            continue;
        }
        records.insert(scaffold_dir.join(path));
        plan.add(File::verbatim(scaffold_dir.join(path), text.clone()));
    }
    if in_place {
        for stale in recorded_scaffold.iter().filter(|p| !records.contains(*p)) {
            plan.remove(stale);
        }
    }
    for (path, text) in &old {
        if new.contains_key(path) {
            continue;
        }
        if dropped.contains(path) {
            removed.push(path.clone());
            if in_place {
                plan.remove(path);
            }
            continue;
        }
        kept += 1;
        if !in_place {
            plan.add(File::verbatim(path, text.clone()));
        }
    }
    if in_place {
        for path in &dropped {
            plan.untrack_tool_owned(path);
        }
    }
    // The tool-owned files are this version's text now: their merge base.
    if new_owned.is_empty() {
        if in_place && old_version.is_some() {
            plan.remove(super::runtime::VERSION_RECORD);
        }
    } else {
        super::runtime::record_version(&mut plan);
    }
    // The record of the pins is the base of the Cargo.lock: it goes with the user's lock
    // (in place it stays); a lock that is this version's (the project had none) gets this
    // version's record.
    let pinned = old_plan.read(super::lockfile::PINNED)?;
    let lock = Path::new(super::lockfile::FILE);
    if !old.contains_key(lock) && new.contains_key(lock) {
        plan.add(File::new(
            super::lockfile::PINNED,
            super::lockfile::project_lock(),
            IfExists::Overwrite,
        ));
    } else if let Some(pins) = pinned.filter(|_| !in_place) {
        plan.add(File::new(
            super::lockfile::PINNED,
            pins,
            IfExists::Overwrite,
        ));
    }
    Ok(Generated {
        plan,
        added,
        changed,
        merged,
        conflicts,
        kept_edits,
        removed,
        kept,
        notes,
    })
}

/// Formats what `alpha generate` changed: one line per path (`add`, `change`, `merge`,
/// `conflict`, `remove`, and `keep` for a file whose edits stay as they are), sorted by path.
pub fn generate_report(g: &Generated) -> String {
    let mut lines: Vec<(&Path, &str)> = g
        .added
        .iter()
        .map(|p| (p.as_path(), "add"))
        .chain(g.changed.iter().map(|p| (p.as_path(), "change")))
        .chain(g.merged.iter().map(|p| (p.as_path(), "merge")))
        .chain(g.conflicts.iter().map(|(p, _)| (p.as_path(), "conflict")))
        .chain(g.kept_edits.iter().map(|p| (p.as_path(), "keep")))
        .chain(g.removed.iter().map(|p| (p.as_path(), "remove")))
        .collect();
    lines.sort();
    lines
        .into_iter()
        .map(|(p, what)| format!("{what:<7} {}\n", p.display()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
