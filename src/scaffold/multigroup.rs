//! `rsbuilder edit --multigroup=<bool>`: switches a project between Kubebuilder's single-group
//! layout (`src/api/<version>/`, `src/controller/`, `src/webhook/<version>/`) and its multigroup
//! layout (`src/api/<group>/<version>/`, `src/controller/<group>/`,
//! `src/webhook/<group>/<version>/`), moving the Rust sources the scaffold put there.
//!
//! Kubebuilder's `edit --multigroup` only sets the PROJECT field and leaves the moves to the
//! user; rsbuilder moves what it can move mechanically, all or nothing, through one [`Plan`]
//! (so the engine's lock, journal and rooted writes apply):
//!
//! - the version directories of the group's APIs and webhooks, and its controller files
//!   (the kind's own and the named ones), each file byte for byte;
//! - the `pub mod` lines of the module files above them, which must be where the scaffold put
//!   them (one line `pub mod <version>;` / `pub mod <kind>_controller;`), and the group's own
//!   module file (written from its template; switching back, it must hold only what the
//!   scaffold wrote);
//! - the module paths the scaffold wrote into `src/main.rs` (controller starts, webhook
//!   registrations) and into the moved files (`use crate::api::v1::Kind;`), and the type paths
//!   PROJECT records;
//! - the kustomize files the layout names: the kinds' roles (`config/rbac/<kind>_admin_role.yaml`
//!   ↔ `<group>_<kind>_admin_role.yaml`, with the role's `name:` and its kustomization entry)
//!   and conversion patches (with their entry). Samples and CRDs are named by group in both.
//!
//! The controllers keep their `NAME` (the field manager of what they applied). Anything else
//! that names a moved module (`crate::api::v1::...` in a file of the user's, a moved controller
//! that reaches its old siblings through `use super::`) is not rewritten: the switch is refused,
//! naming each file and line, and nothing is written. A project whose APIs or webhooks span
//! more than one group is refused either way: in the single-group layout their files share
//! directories, and one `src/api/<version>/` cannot hold two groups. Controllers of built-in
//! and external kinds have no API: each moves to (or from) its own group's directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::{File, IfExists, Plan};
use crate::model::Project;
use crate::model::layout;

/// The planned switch and what to tell the user.
#[derive(Debug)]
pub struct MultigroupEdit {
    /// Moves the files, rewrites the module lines and paths, and PROJECT; apply it.
    pub plan: Plan,
    /// PROJECT already had the setting: nothing to do.
    pub unchanged: bool,
    /// Each file moved, from and to (relative to the project root).
    pub moved: Vec<(PathBuf, PathBuf)>,
}

/// One text replacement in the Rust sources: a module path of the old layout and its new form.
#[derive(Debug, Clone)]
struct Rename {
    old: String,
    new: String,
}

/// A kustomize file renamed by the switch: from, to, and the lines in it that change with the
/// name (`name: <kind>-admin-role` → `name: <group>-<kind>-admin-role`).
type ConfigMove = (PathBuf, PathBuf, Vec<(String, String)>);

/// Plans `edit --multigroup=<on>` in the project at `dir`, writing nothing.
///
/// Errors (nothing written): no PROJECT; `on == false` with APIs or webhooks in more than one
/// group, or with controllers of two groups that would get one file; a single-group project
/// whose APIs span several groups (their files share directories); a group that cannot be a
/// Rust module; and every place the switch cannot
/// make mechanically, all in one message naming file and line: a module line missing from the
/// file the scaffold wrote it in, a file in the way at a destination, a group module holding
/// more than the scaffold wrote, and a reference to a moved module that is not where the
/// scaffold put it.
pub fn plan(dir: &Path, on: bool) -> Result<MultigroupEdit> {
    let mut plan = Plan::new(dir, false);
    let mut project = super::load_project_or_explain(&plan, dir)?;
    if project.multigroup == on {
        return Ok(MultigroupEdit {
            plan,
            unchanged: true,
            moved: Vec::new(),
        });
    }
    let mine = |r: &&crate::model::project::ProjectResource| !crate::model::project::is_served(r);
    // The groups whose APIs or webhooks have files in `src/api/<version>/` and
    // `src/webhook/<version>/`: one at most, as those directories hold one group.
    let api_groups: BTreeSet<String> = project
        .resources
        .iter()
        .filter(mine)
        .filter(|r| r.api.is_some() || r.webhooks.is_some())
        .map(|r| r.group.clone())
        .collect();
    if api_groups.len() > 1 {
        let list = api_groups.into_iter().collect::<Vec<_>>().join(", ");
        if on {
            bail!(
                "cannot switch the project to the multigroup layout: its kinds are in the groups {list}, and the single-group layout put their files side by side (src/api/<version>/, src/controller/), so rsbuilder cannot tell them apart to move them. Nothing was changed. Move each group's files to src/api/<group>/<version>/, src/controller/<group>/ and src/webhook/<group>/<version>/ by hand, fix the module lines and paths, then set `multigroup: true` in PROJECT"
            );
        }
        bail!(
            "cannot switch the project to the single-group layout: its APIs are in the groups {list}, and src/api/<version>/ holds one group only (as in Kubebuilder). Nothing was changed; keep the multigroup layout, or remove the kinds of all groups but one first"
        );
    }
    // Every group with a controller: a controller of a built-in or external kind has no API,
    // only its file below src/controller/, so its group may differ from the APIs' group.
    let controllers = controller_modules(&project);
    if !on {
        let mut seen: std::collections::BTreeMap<&str, &str> = Default::default();
        for (group, module) in &controllers {
            if let Some(other) = seen.insert(module, group)
                && other != group
            {
                bail!(
                    "cannot switch the project to the single-group layout: the controllers {module} of the groups {other} and {group} would both be {}. Nothing was changed; keep the multigroup layout, or remove one of them first",
                    layout::controller_module_file(None, module).display()
                );
            }
        }
    }
    let groups: BTreeSet<String> = api_groups
        .iter()
        .cloned()
        .chain(controllers.iter().map(|(g, _)| g.clone()))
        .collect();
    if on {
        for g in &groups {
            layout::check_group_module(g)?;
        }
    }
    let mut moved = Vec::new();
    if !groups.is_empty() {
        moved = relayout(
            &mut plan,
            &mut project,
            api_groups.iter().next().map(String::as_str),
            &groups,
            (!on, on),
        )?;
    }
    project.multigroup = on;
    plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    Ok(MultigroupEdit {
        plan,
        unchanged: false,
        moved,
    })
}

/// The controller modules of PROJECT's resources and named controllers, each with its group:
/// the kinds' own (`<kind>_controller`) and the named ones (`<name>_controller`).
fn controller_modules(project: &Project) -> Vec<(String, String)> {
    let mut modules: Vec<(String, String)> = project
        .resources
        .iter()
        .filter(|r| !crate::model::project::is_served(r))
        .filter(|r| r.controller)
        .map(|r| (r.group.clone(), layout::controller_module(&r.kind)))
        .collect();
    modules.extend(
        super::api::named::recorded(project)
            .iter()
            .map(|c| (c.group.clone(), layout::named_controller_module(&c.name))),
    );
    modules
}

/// Plans the moves of the project's files between the layouts (`multi`: whether the layout
/// before and after is multigroup) and the rewrites that go with them; returns the moves.
/// `api_group` is the one group of the APIs and webhooks (if any); `groups` every group with
/// files to move, the controllers' included. Errors: see [`plan`].
fn relayout(
    plan: &mut Plan,
    project: &mut Project,
    api_group: Option<&str>,
    groups: &BTreeSet<String>,
    multi: (bool, bool),
) -> Result<Vec<(PathBuf, PathBuf)>> {
    let (from_multi, to_multi) = multi;
    // The layout functions' group argument of the APIs' group before and after.
    let (from, to) = match api_group {
        Some(g) => (
            layout::group_of(from_multi, g),
            layout::group_of(to_multi, g),
        ),
        None => (None, None),
    };
    let krate = super::api::crate_name(project);
    let header = super::api::rust_header(plan)?;
    let mut problems: Vec<String> = Vec::new();
    let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut renames: Vec<Rename> = Vec::new();
    // Module files and the `pub mod` lines to take out of them; the group's module files
    // and the lines to put in them.
    let mut drop_lines: Vec<(PathBuf, String)> = Vec::new();
    let mut add_lines: Vec<(PathBuf, &'static str, String)> = Vec::new();

    let served = |r: &&crate::model::project::ProjectResource| !crate::model::project::is_served(r);
    let api_versions: BTreeSet<String> = project
        .resources
        .iter()
        .filter(served)
        .filter(|r| r.api.is_some())
        .map(|r| r.version.clone())
        .collect();
    let webhook_versions: BTreeSet<String> = project
        .resources
        .iter()
        .filter(served)
        .filter(|r| r.webhooks.is_some())
        .map(|r| r.version.clone())
        .collect();
    let controller_modules = controller_modules(project);
    let mut controller_moves: BTreeSet<PathBuf> = BTreeSet::new();

    // Version directories, moved whole (a file of the user's in one moves with it).
    for (versions, dir_of, module_of, marker, list_file) in [
        (
            &api_versions,
            layout::api_version_dir as fn(Option<&str>, &str) -> PathBuf,
            layout::api_version_module as fn(Option<&str>, &str) -> String,
            "api-versions",
            layout::api_versions_file as fn(Option<&str>) -> PathBuf,
        ),
        (
            &webhook_versions,
            layout::webhook_version_dir,
            layout::webhook_version_module,
            "webhook-modules",
            layout::webhook_versions_file,
        ),
    ] {
        for v in versions {
            let (old_dir, new_dir) = (dir_of(from, v), dir_of(to, v));
            let (files, links) = plan.list_files(&old_dir, &[])?;
            if let Some(link) = links.first() {
                problems.push(format!(
                    "{}: a symbolic link; move it by hand",
                    link.display()
                ));
            }
            for f in files {
                let rest = f.strip_prefix(&old_dir).unwrap_or(&f);
                moves.push((f.clone(), new_dir.join(rest)));
            }
            drop_lines.push((list_file(from), format!("pub mod {v};")));
            add_lines.push((list_file(to), marker, format!("pub mod {v};")));
            renames.push(Rename {
                old: module_of(from, v),
                new: module_of(to, v),
            });
        }
    }
    for (g, m) in &controller_modules {
        let (from, to) = (
            layout::group_of(from_multi, g),
            layout::group_of(to_multi, g),
        );
        controller_moves.insert(layout::controller_module_file(from, m));
        moves.push((
            layout::controller_module_file(from, m),
            layout::controller_module_file(to, m),
        ));
        drop_lines.push((layout::controllers_file(from), format!("pub mod {m};")));
        add_lines.push((
            layout::controllers_file(to),
            "controller-modules",
            format!("pub mod {m};"),
        ));
        renames.push(Rename {
            old: layout::controller_module_path(from, m),
            new: layout::controller_module_path(to, m),
        });
    }

    // The kustomize files named by the layout: the kinds' roles and conversion patches, each
    // renamed with the name inside and its kustomization entry.
    let mut config: Vec<ConfigMove> = Vec::new();
    let mut entries: Vec<(&'static str, String, String)> = Vec::new();
    let mut seen_kinds = BTreeSet::new();
    for r in project.resources.iter().filter(served) {
        let Some(resource) = resource_of(project, r) else {
            continue;
        };
        let (old, new) = (
            layout::KindLayout::of(&resource, from_multi),
            layout::KindLayout::of(&resource, to_multi),
        );
        if r.api.is_some() && seen_kinds.insert(r.kind.clone()) {
            for role in super::api::role_names() {
                config.push((
                    old.role(role).path,
                    new.role(role).path,
                    vec![(
                        format!("name: {}", old.role_name(role)),
                        format!("name: {}", new.role_name(role)),
                    )],
                ));
                entries.push((
                    layout::RBAC_KUSTOMIZATION,
                    old.role_entry(role),
                    new.role_entry(role),
                ));
            }
        }
        if r.webhooks.as_ref().is_some_and(|w| w.conversion) {
            config.push((
                old.conversion_patch().path,
                new.conversion_patch().path,
                Vec::new(),
            ));
            entries.push((
                layout::CRD_KUSTOMIZATION,
                old.conversion_patch_entry(),
                new.conversion_patch_entry(),
            ));
        }
    }
    let mut config_texts: Vec<(PathBuf, String)> = Vec::new();
    for (old, new, lines) in &config {
        let Some(mut text) = plan.read(old)? else {
            // Removed by the user: nothing to move.
            continue;
        };
        if plan.exists(new)? {
            problems.push(format!(
                "{}: is in the way of {} (renamed there by the switch); move or remove it",
                new.display(),
                old.display()
            ));
            continue;
        }
        for (from_line, to_line) in lines {
            match replace_line(&text, from_line, to_line) {
                Some(t) => text = t,
                None => problems.push(format!(
                    "{}: lacks the line `{from_line}` `create api` wrote; put it back, or rename the file to {} by hand",
                    old.display(),
                    new.display()
                )),
            }
        }
        config_texts.push((new.clone(), text));
        moves.push((old.clone(), new.clone()));
    }
    let mut kustomizations: Vec<(PathBuf, String)> = Vec::new();
    for (file, old, new) in &entries {
        let text = match kustomizations.iter().find(|(f, _)| f == Path::new(file)) {
            Some((_, t)) => t.clone(),
            None => plan.read(file)?.unwrap_or_default(),
        };
        // An entry the user removed stays removed.
        let Some(text) = replace_line(&text, old, new) else {
            continue;
        };
        match kustomizations
            .iter_mut()
            .find(|(f, _)| f == Path::new(file))
        {
            Some(entry) => entry.1 = text,
            None => kustomizations.push((PathBuf::from(file), text)),
        }
    }

    // The scaffolded references that must be there: the controller starts in main.rs.
    let main = plan.read(layout::MAIN_RS)?.unwrap_or_default();
    for (g, m) in &controller_modules {
        let old = format!(
            "{krate}::{}::",
            layout::controller_module_path(layout::group_of(from_multi, g), m)
        );
        if !main.contains(&old) {
            problems.push(format!(
                "{}: no `{old}...` start of the controller {m}, where `create api` wrote it; fix or remove the start by hand",
                layout::MAIN_RS
            ));
        }
    }

    // Moved files, rewritten; refused where a destination is taken or a file reaches its old
    // siblings through `super::`.
    let mut rewritten: Vec<(PathBuf, String)> = Vec::new();
    for (old, new) in &moves {
        if plan.exists(new)? {
            problems.push(format!(
                "{}: is in the way of {} (moved there by the switch); move or remove it",
                new.display(),
                old.display()
            ));
            continue;
        }
        if let Some((_, text)) = config_texts.iter().find(|(n, _)| n == new) {
            rewritten.push((new.clone(), text.clone()));
            continue;
        }
        let Some(text) = plan.read(old)? else {
            problems.push(format!(
                "{}: missing (PROJECT records it); restore it or remove its entry",
                old.display()
            ));
            continue;
        };
        let is_rust = old.extension().is_some_and(|e| e == "rs");
        if is_rust && controller_moves.contains(old) {
            for (i, line) in text.lines().enumerate() {
                if line.starts_with("use super::") || line.starts_with("pub use super::") {
                    problems.push(format!(
                        "{}:{}: reaches a module beside it through `super::`, which is another module after the move; write the path from `crate::`",
                        old.display(),
                        i + 1
                    ));
                }
            }
        }
        rewritten.push((
            new.clone(),
            if is_rust {
                rename_paths(&text, &renames, &krate)
            } else {
                text
            },
        ));
    }

    // The module lines, each where the scaffold put it.
    let mut dropped: Vec<(PathBuf, String)> = Vec::new();
    for (file, line) in &drop_lines {
        let text = match dropped.iter().position(|(f, _)| f == file) {
            Some(i) => dropped[i].1.clone(),
            None => plan.read(file)?.unwrap_or_default(),
        };
        let at: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == line)
            .map(|(i, _)| i)
            .collect();
        if at.len() != 1 {
            problems.push(format!(
                "{}: {} the line `{line}`, where the scaffold wrote it; put it back (once) or move the module by hand",
                file.display(),
                if at.is_empty() { "lacks" } else { "has more than once" }
            ));
            continue;
        }
        let kept: String = text
            .split_inclusive('\n')
            .enumerate()
            .filter(|(i, _)| *i != at[0])
            .map(|(_, l)| l)
            .collect();
        match dropped.iter_mut().find(|(f, _)| f == file) {
            Some(entry) => entry.1 = kept,
            None => dropped.push((file.clone(), kept)),
        }
    }

    // The groups' module files: written from their templates (multigroup), or removed when
    // they hold only what the scaffold wrote (single-group).
    for group in groups {
        let group_mods = [
            (
                layout::API_DIR,
                super::api::GroupModRs::api(group),
                "api-versions",
            ),
            (
                layout::CONTROLLER_DIR,
                super::api::GroupModRs::controller(group),
                "controller-modules",
            ),
            (
                layout::WEBHOOK_DIR,
                super::api::GroupModRs::webhook(group),
                "webhook-modules",
            ),
        ];
        for (dir, template, marker) in &group_mods {
            let spec = layout::group_mod(dir, group);
            let used = add_lines.iter().any(|(f, _, _)| *f == spec.path)
                || drop_lines.iter().any(|(f, _)| *f == spec.path);
            if !used {
                continue;
            }
            let parent = PathBuf::from(format!("{dir}/mod.rs"));
            let fresh = format!("{header}{}", super::render(template)?);
            if to_multi {
                plan.add(File::at(spec, fresh));
                add_lines.push((parent, marker, layout::group_line(group)));
            } else {
                // Taken apart line by line: what remains without its module lines must be the
                // template, so nothing of the user's is lost with the file.
                let Some((_, rest)) = dropped.iter().find(|(f, _)| *f == spec.path) else {
                    continue;
                };
                if normalize(rest) != normalize(&fresh) {
                    problems.push(format!(
                    "{}: holds more than the `pub mod` lines `create api` wrote (a module of your own?); move it by hand, then re-run",
                    spec.path.display()
                ));
                }
                drop_lines.push((parent, layout::group_line(group)));
            }
        }
        // The parent's `pub mod <group>;` line (single-group switch), once taken out above.
        if !to_multi {
            for (dir, _, _) in &group_mods {
                let parent = PathBuf::from(format!("{dir}/mod.rs"));
                let line = layout::group_line(group);
                if !drop_lines.iter().any(|(f, l)| *f == parent && *l == line) {
                    continue;
                }
                let text = match dropped.iter().position(|(f, _)| *f == parent) {
                    Some(i) => dropped[i].1.clone(),
                    None => plan.read(&parent)?.unwrap_or_default(),
                };
                let kept: String = text
                    .split_inclusive('\n')
                    .filter(|l| l.trim() != line)
                    .collect();
                match dropped.iter_mut().find(|(f, _)| *f == parent) {
                    Some(entry) => entry.1 = kept,
                    None => dropped.push((parent, kept)),
                }
            }
        }
    }

    // `src/api/mod.rs` lists groups rather than versions now: its doc comment says so when it
    // is still the one `create api` wrote.
    if let Some((_, text)) = dropped
        .iter_mut()
        .find(|(f, _)| f == Path::new(layout::API_MOD))
    {
        let old = format!("{header}{}", super::api::api_mod_text(from_multi)?);
        if normalize(text) == normalize(&old) {
            *text = format!("{header}{}", super::api::api_mod_text(to_multi)?);
        }
    }

    // main.rs, rewritten; then every Rust source checked for references left behind.
    let main_new = rename_paths(&main, &renames, &krate);
    let mut sources = plan.read_tree(layout::SRC_DIR, "rs")?;
    sources.extend(plan.read_tree(layout::TESTS_DIR, "rs")?);
    for (path, text) in &sources {
        let rel = path.strip_prefix(plan.root()).unwrap_or(path).to_path_buf();
        let text = if rel == Path::new(layout::MAIN_RS) {
            main_new.clone()
        } else if let Some(t) = moves
            .iter()
            .find(|(o, _)| *o == rel)
            .and_then(|(_, new)| rewritten.iter().find(|(n, _)| n == new))
            .map(|(_, t)| t)
        {
            t.clone()
        } else {
            text.clone()
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(old) = renames.iter().find(|r| mentions(line, &r.old, &krate)) {
                problems.push(format!(
                    "{}:{}: names the module `{}`, which the switch moves to `{}`; rsbuilder rewrites only the paths it wrote, so change this one by hand (or remove it), then re-run",
                    rel.display(),
                    i + 1,
                    old.old,
                    old.new
                ));
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "cannot switch the project to the {} layout: these files are not as the scaffold wrote them, so rsbuilder does not move them. Nothing was changed.\n  {}",
            if to_multi {
                "multigroup"
            } else {
                "single-group"
            },
            problems.join("\n  ")
        );
    }

    // The plan: moves (new file written byte for byte, old one removed), module lines,
    // main.rs, PROJECT's type paths.
    for (new, text) in rewritten {
        plan.add(File::verbatim(new, text));
    }
    for (old, _) in &moves {
        plan.remove(old.clone());
    }
    for (file, text) in dropped {
        if !to_multi && groups.iter().any(|g| is_group_mod(&file, g)) {
            plan.remove(file);
        } else {
            plan.add(File::verbatim(file, text));
        }
    }
    for (file, text) in kustomizations {
        plan.add(File::verbatim(file, text));
    }
    if main_new != main {
        plan.add(File::new(layout::MAIN_RS, main_new, IfExists::Overwrite));
    }
    for (file, marker, line) in add_lines {
        plan.insert_sorted(file, marker, line);
    }
    for r in &mut project.resources {
        if let Some(p) = &r.path
            && p.starts_with("crate::")
        {
            r.path = Some(rename_paths(p, &renames, &krate));
        }
    }
    Ok(moves)
}

/// The resource PROJECT entry `r` names, for its file names; `None` for an entry whose names
/// do not validate (PROJECT's reader refuses those) or a built-in type (no API, no roles).
fn resource_of(
    project: &Project,
    r: &crate::model::project::ProjectResource,
) -> Option<crate::model::Resource> {
    if r.core {
        return None;
    }
    crate::model::Resource::custom(
        &r.group,
        r.domain.as_deref().unwrap_or(&project.domain),
        &r.version,
        &r.kind,
        r.plural.as_deref(),
        r.api.as_ref().is_some_and(|a| a.namespaced),
    )
    .ok()
}

/// `text` with its one line that reads `from` (leading blanks aside) reading `to`, indented as
/// it was; `None` when no line, or more than one, reads `from`.
fn replace_line(text: &str, from: &str, to: &str) -> Option<String> {
    let matching = text.lines().filter(|l| l.trim() == from).count();
    if matching != 1 {
        return None;
    }
    Some(
        text.split_inclusive('\n')
            .map(|l| {
                if l.trim() == from {
                    let indent = &l[..l.len() - l.trim_start().len()];
                    let end = if l.ends_with('\n') { "\n" } else { "" };
                    format!("{indent}{to}{end}")
                } else {
                    l.to_owned()
                }
            })
            .collect(),
    )
}

/// Whether `file` is one of `group`'s module files (`src/api/<group>/mod.rs`, ...).
fn is_group_mod(file: &Path, group: &str) -> bool {
    [layout::API_DIR, layout::CONTROLLER_DIR, layout::WEBHOOK_DIR]
        .iter()
        .any(|d| layout::group_mod(d, group).path == file)
}

/// Text compared without trailing blank space on lines and at the end.
fn normalize(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

/// `text` with every path `crate::<old>` or `<krate>::<old>` (the whole module name, followed
/// by `::` or the path's end) written `crate::<new>` / `<krate>::<new>`.
fn rename_paths(text: &str, renames: &[Rename], krate: &str) -> String {
    let mut out = text.to_owned();
    for r in renames {
        for root in ["crate", krate] {
            out = replace_path(
                &out,
                &format!("{root}::{}", r.old),
                &format!("{root}::{}", r.new),
            );
        }
    }
    out
}

/// `text` with `from` replaced by `to` where `from` is a whole path prefix: not preceded by
/// an identifier character or `::`, and not followed by one.
fn replace_path(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = find_path(rest, from) {
        out.push_str(&rest[..i]);
        out.push_str(to);
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The first place `from` stands in `text` as a whole path (see [`replace_path`]).
fn find_path(text: &str, from: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut start = 0;
    while let Some(i) = text[start..].find(from).map(|i| i + start) {
        let before = text[..i].chars().next_back();
        let after = text[i + from.len()..].chars().next();
        let whole_before = before.is_none_or(|c| !ident(c) && c != ':');
        let whole_after = after.is_none_or(|c| !ident(c));
        if whole_before && whole_after {
            return Some(i);
        }
        start = i + from.len();
    }
    None
}

/// Whether `line` names the module `old` from the crate root (`crate::<old>`,
/// `<krate>::<old>`).
fn mentions(line: &str, old: &str, krate: &str) -> bool {
    ["crate", krate]
        .iter()
        .any(|root| find_path(line, &format!("{root}::{old}")).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_renamed_only_as_whole_module_paths() {
        let renames = [Rename {
            old: "api::v1".into(),
            new: "api::ai::v1".into(),
        }];
        assert_eq!(
            rename_paths(
                "use crate::api::v1::AIJob;\nx::crate::api::v1::A; crate::api::v10::B; ai_op::api::v1::C",
                &renames,
                "ai_op"
            ),
            "use crate::api::ai::v1::AIJob;\nx::crate::api::v1::A; crate::api::v10::B; ai_op::api::ai::v1::C"
        );
        assert!(mentions("let x: crate::api::v1::A;", "api::v1", "k"));
        assert!(!mentions("crate::api::v1beta1::A", "api::v1", "k"));
    }
}
