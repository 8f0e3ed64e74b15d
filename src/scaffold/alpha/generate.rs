//! `rsbuilder alpha generate`: the project scaffolded again from its PROJECT in a scratch
//! directory, the user's code carried over, and the result written to `--output-dir` or, in
//! place, merged three ways as `alpha update` merges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::super::engine;
use super::super::{File, IfExists, Plan};
use super::*;
use crate::model::Project;
use crate::model::layout;
use crate::model::project::{self, ProjectResource};

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
pub(super) fn users_code(path: &Path, project: &Project) -> bool {
    let per_kind = project.resources.iter().any(|r: &ProjectResource| {
        let group = layout::group_of(project.multigroup, &r.group);
        let mut files = Vec::new();
        if r.api.is_some() {
            files.push(layout::types_file(group, &r.version, &r.kind));
        }
        if crate::scaffold::apiserver::is_served(r) {
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
    let named = crate::scaffold::api::named::recorded(project)
        .iter()
        .any(|c| {
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
        || path == Path::new(crate::scaffold::lockfile::FILE)
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
    use crate::scaffold::{api, init, webhook};
    let (license, year, owner) = crate::scaffold::relicense::recognize(header);
    let opts = init::InitOptions {
        domain: project.domain.clone(),
        repo: project.repo.clone(),
        project_name: project.project_name.clone(),
        owner,
        license,
        namespaced: project.namespaced,
        multigroup: project.multigroup,
        year,
        runtime: crate::scaffold::runtime::Source::of(project),
    };
    init::plan(scratch, &opts)
        .context("re-scaffolding from PROJECT: `init`")?
        .apply()?;
    let gvk = |r: &ProjectResource| format!("{}/{} {}", r.group, r.version, r.kind);
    for r in &project.resources {
        if crate::scaffold::apiserver::is_served(r) {
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
        .filter(|r| crate::scaffold::apiserver::is_served(r))
    {
        let opts = crate::scaffold::apiserver::ApiServerOptions::from_project_resource(r);
        crate::scaffold::apiserver::run(scratch, &opts).with_context(|| {
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
    let header = crate::scaffold::api::rust_header(&old_plan)?;
    let old_owned = recorded(&old_plan)?;
    let old_version = crate::scaffold::runtime::recorded_version(&old_plan)?;

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
                    crate::scaffold::runtime::base(
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
            plan.remove(crate::scaffold::runtime::VERSION_RECORD);
        }
    } else {
        crate::scaffold::runtime::record_version(&mut plan);
    }
    // The record of the pins is the base of the Cargo.lock: it goes with the user's lock
    // (in place it stays); a lock that is this version's (the project had none) gets this
    // version's record.
    let pinned = old_plan.read(crate::scaffold::lockfile::PINNED)?;
    let lock = Path::new(crate::scaffold::lockfile::FILE);
    if !old.contains_key(lock) && new.contains_key(lock) {
        plan.add(File::new(
            crate::scaffold::lockfile::PINNED,
            crate::scaffold::lockfile::project_lock(),
            IfExists::Overwrite,
        ));
    } else if let Some(pins) = pinned.filter(|_| !in_place) {
        plan.add(File::new(
            crate::scaffold::lockfile::PINNED,
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
