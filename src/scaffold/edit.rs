//! `rsbuilder edit --namespaced=<bool>`: switches an existing project between cluster-wide and
//! namespaced, so that it ends up as `rsbuilder init` (with or without `--namespaced`) would
//! have written it.
//!
//! The files to change are found by rendering the `init` templates twice, once per setting,
//! with the project's own values (PROJECT's domain, repo and name; the license header read
//! back from `src/lib.rs`): every file that comes out differently is switched block by block.
//! Each differing block (a diff hunk, anchored by as many unchanged lines around it as it takes
//! to find it exactly once) is replaced only when the project still holds what `init` wrote
//! for the old setting; a block already in the new form is left alone (a project half
//! switched, as the first releases of `edit` left it, is completed). A block the user changed
//! is a conflict: the whole edit is refused and nothing is written, unless `force`, which
//! replaces the changed block with what `init` writes for the new setting (found between the
//! unchanged lines around it). When even those lines changed, the edit is refused with
//! `force` too: a file is never overwritten whole, since `main.rs` also holds the controllers
//! and webhooks `create` registered, and `manager.yaml` the user's image and settings.
//!
//! Kubebuilder's `edit` only rewrites PROJECT; rsbuilder goes further because its templates
//! (manager `--namespace` default, `POD_NAMESPACE`, Role vs ClusterRole) depend on the
//! setting.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::init::{self, InitOptions};
use super::{File, IfExists, Plan, ScaffoldError};
use crate::model::Project;
use crate::model::layout;
use crate::model::project::FILE_NAME as PROJECT_FILE;

/// Files `init` keeps when the user already has them (a README of their own): a block that
/// does not match there is reported and left alone instead of stopping the edit.
const ADVISORY: [&str; 1] = ["README.md"];

/// Unchanged lines tried around a changed block to find it exactly once.
const MAX_CONTEXT: usize = 3;

/// With `force`, how many lines more than `init` wrote a changed part may have and still be
/// replaced as a part; a longer one (or one whose neighbours changed) is refused.
const MAX_GAP: usize = 20;

/// One block the project does not hold in the form `init` wrote: where, and the change to
/// make by hand, as a small unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// File, relative to the project root.
    pub path: PathBuf,
    /// Lines prefixed with `' '` (context), `'-'` (to remove) and `'+'` (to add).
    pub change: String,
}

/// Why `edit --namespaced` refused. Nothing is written when one of these is returned.
#[derive(Debug, Error)]
pub enum EditError {
    /// Reading PROJECT failed.
    #[error(transparent)]
    Project(#[from] anyhow::Error),
    /// PROJECT's values do not render (a hand-edited project name or domain).
    #[error("PROJECT holds values `init` would reject, so its files cannot be compared: {0}")]
    Name(#[from] crate::model::gvk::NameError),
    /// Reading a file failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// A template of `init` did not render.
    #[error(transparent)]
    Template(#[from] super::RenderError),
    /// Blocks the user changed; they must be switched by hand (or overwritten with `--force`).
    #[error("{}", conflict_message(.namespaced, .forced, .conflicts))]
    Conflicts {
        /// The setting asked for.
        namespaced: bool,
        /// `--force` was given: these are the parts not even it could place.
        forced: bool,
        /// Every changed block, in file order.
        conflicts: Vec<Conflict>,
    },
}

fn setting(namespaced: bool) -> &'static str {
    if namespaced {
        "namespaced"
    } else {
        "cluster-wide"
    }
}

fn conflict_message(namespaced: &bool, forced: &bool, conflicts: &[Conflict]) -> String {
    let namespaced = *namespaced;
    let files: BTreeSet<String> = conflicts
        .iter()
        .map(|c| c.path.display().to_string())
        .collect();
    let one = files.len() == 1;
    let mut out = format!(
        "cannot switch the project to {}: {} no longer hold{} what `rsbuilder init` wrote there, \
         so rsbuilder does not change {}. Nothing was changed.\n",
        setting(namespaced),
        files.into_iter().collect::<Vec<_>>().join(", "),
        if one { "s" } else { "" },
        if one { "it" } else { "them" },
    );
    for c in conflicts {
        out.push_str(&format!(
            "  {}: make this change by hand ('-' lines go, '+' lines come):\n",
            c.path.display()
        ));
        for line in c.change.lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if *forced {
        out.push_str(&format!(
            "  --force could not place these parts: the lines around them changed too, and \
             rsbuilder never overwrites a whole file (it holds your controllers, webhooks and \
             settings). Make the changes by hand, then re-run `rsbuilder edit \
             --namespaced={namespaced}`"
        ));
    } else {
        out.push_str(&format!(
            "  then re-run `rsbuilder edit --namespaced={namespaced}`; or re-run it with --force \
             to replace these parts with what `init` writes (your changes to them are lost)"
        ));
    }
    out
}

/// The planned switch: the plan (PROJECT and every file to change), and what to tell the user.
#[derive(Debug)]
pub struct NamespacedEdit {
    /// Writes PROJECT and the switched files; apply it to make the change.
    pub plan: Plan,
    /// PROJECT already had the setting and every file was already in its form: nothing to do.
    pub unchanged: bool,
    /// PROJECT already had the setting (files may still have needed switching).
    pub project_had_it: bool,
    /// Files where `force` replaced the parts the user changed (found between the unchanged
    /// lines around them) with what `init` writes.
    pub forced_parts: Vec<PathBuf>,
    /// Files left alone, with the reason (missing; a README of the user's own).
    pub notes: Vec<String>,
    /// Kinds a namespaced Role cannot grant (only when switching to namespaced).
    pub warnings: Vec<String>,
}

/// Plans `edit --namespaced=<namespaced>` for the project in `dir`, reading but writing nothing.
///
/// Input: the project directory (PROJECT must exist), the setting wanted, and `force`.
/// Output: the plan and messages ([`NamespacedEdit`]). Errors: no or bad PROJECT; a file
/// that cannot be read; blocks the user changed ([`EditError::Conflicts`], every one of them
/// with the change to make), unless `force`.
pub fn plan_namespaced(
    dir: &Path,
    namespaced: bool,
    force: bool,
) -> Result<NamespacedEdit, EditError> {
    let mut plan = Plan::new(dir, false);
    let mut project = Project::load_in(&plan)?;
    let project_had_it = project.namespaced == namespaced;
    // The Rust files' header as the project has it (whatever license and owner wrote it), so
    // the files rendered for comparison start as the project's do.
    let header = crate::scaffold::api::rust_header(&plan)?;
    let license = if header.is_empty() {
        init::License::None
    } else {
        init::License::Header(header)
    };
    let opts = |ns: bool| InitOptions {
        domain: project.domain.clone(),
        repo: project.repo.clone(),
        project_name: project.project_name.clone(),
        owner: String::new(),
        license: license.clone(),
        namespaced: ns,
        multigroup: project.multigroup,
        year: init::current_year(),
        runtime: crate::scaffold::runtime::Source::of(&project),
    };
    let (old_opts, new_opts) = (opts(!namespaced), opts(namespaced));
    new_opts.validate()?;
    let old_files = init::files(&old_opts)?;
    let new_files = init::files(&new_opts)?;

    let mut conflicts = Vec::new();
    let mut forced_parts = Vec::new();
    let mut notes = Vec::new();
    let mut changed_any = false;
    for ((path, old_raw), (_, new_raw)) in old_files.iter().zip(&new_files) {
        if *path == PROJECT_FILE || old_raw == new_raw {
            continue;
        }
        let Some(current) = plan.read(path)? else {
            notes.push(format!("{path} does not exist; left alone"));
            continue;
        };
        // A file with CRLF line endings is compared and switched as LF, and written back
        // with CRLF throughout.
        let crlf = current.contains("\r\n");
        let original = current;
        let current = if crlf {
            original.replace("\r\n", "\n")
        } else {
            original.clone()
        };
        let old = as_written(dir, path, old_raw)?;
        let new = as_written(dir, path, new_raw)?;
        // A README of the user's own is reported, never forced.
        let force_here = force && !ADVISORY.contains(path);
        match switch_with(&current, &old, &new, force_here) {
            Ok((switched, forced)) => {
                if forced > 0 {
                    forced_parts.push(PathBuf::from(path));
                }
                let switched = if crlf {
                    switched.replace('\n', "\r\n")
                } else {
                    switched
                };
                if switched != original {
                    changed_any = true;
                    plan.add(File::at(layout::owned(*path), switched));
                }
            }
            Err(changes) if ADVISORY.contains(path) => {
                let mut note = format!(
                    "{path} differs from what `init` wrote; left alone. If it documents the \
                     manager's flags, make this change by hand:"
                );
                for change in changes {
                    for line in change.lines() {
                        note.push_str("\n    ");
                        note.push_str(line);
                    }
                }
                notes.push(note);
            }
            Err(changes) => conflicts.extend(changes.into_iter().map(|change| Conflict {
                path: PathBuf::from(path),
                change,
            })),
        }
    }
    if !conflicts.is_empty() {
        return Err(EditError::Conflicts {
            namespaced,
            forced: force,
            conflicts,
        });
    }
    let unchanged = project_had_it && !changed_any;
    if !project_had_it {
        project.namespaced = namespaced;
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    }
    let warnings = if namespaced && !unchanged {
        cluster_scoped_grants(&plan, &project)
    } else {
        Vec::new()
    };
    Ok(NamespacedEdit {
        plan,
        unchanged,
        project_had_it,
        forced_parts,
        notes,
        warnings,
    })
}

/// `text` as `init` wrote it to `path` in `dir`: Rust files go through rustfmt as the engine
/// formats them (resolving a one-file plan writes nothing).
fn as_written(dir: &Path, path: &str, text: &str) -> Result<String, ScaffoldError> {
    if !path.ends_with(".rs") {
        return Ok(text.to_owned());
    }
    let mut plan = Plan::new(dir, false);
    plan.add(File::new(path, text, IfExists::Overwrite));
    Ok(plan
        .resolve()?
        .into_iter()
        .next()
        .map_or_else(|| text.to_owned(), |r| r.contents))
}

/// One changed block between the two renderings: line ranges in the old and new text.
struct Hunk {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
}

fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out: Vec<Hunk> = Vec::new();
    let mut open: Option<Hunk> = None;
    for op in diff.ops() {
        if let similar::DiffOp::Equal { .. } = op {
            out.extend(open.take());
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        match open.as_mut() {
            Some(h) => {
                h.old.end = o.end;
                h.new.end = n.end;
            }
            None => open = Some(Hunk { old: o, new: n }),
        }
    }
    out.extend(open);
    out
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn same(a: &str, b: &str) -> bool {
    a.trim_end_matches(['\n', '\r']) == b.trim_end_matches(['\n', '\r'])
}

/// Where `block` occurs in `hay` (start indexes, at most two).
fn find(hay: &[String], block: &[&str]) -> Vec<usize> {
    if block.is_empty() || block.len() > hay.len() {
        return Vec::new();
    }
    (0..=hay.len() - block.len())
        .filter(|&i| block.iter().zip(&hay[i..]).all(|(b, h)| same(b, h)))
        .take(2)
        .collect()
}

/// The text `current` switched from `old` to `new` block by block, or the changes (small
/// unified diffs) of the blocks that hold neither the old nor the new form.
#[cfg(test)]
fn switch(current: &str, old: &str, new: &str) -> Result<String, Vec<String>> {
    switch_with(current, old, new, false).map(|(text, _)| text)
}

/// [`switch`]; with `force`, a block in neither form is replaced by the new one when the
/// unchanged lines around it can still be found ([`force_part`]). Also returns how many
/// blocks were forced.
fn switch_with(
    current: &str,
    old: &str,
    new: &str,
    force: bool,
) -> Result<(String, usize), Vec<String>> {
    let old_lines = lines(old);
    let new_lines = lines(new);
    let mut cur: Vec<String> = lines(current).into_iter().map(str::to_owned).collect();
    let mut failed = Vec::new();
    let mut forced = 0;
    for h in hunks(old, new) {
        // An empty side (an insertion or a deletion) is found by its neighbours only.
        let first = usize::from(h.old.is_empty() || h.new.is_empty());
        let mut done = false;
        let mut is_new = false;
        for n in first..=MAX_CONTEXT {
            let before = &old_lines[h.old.start.saturating_sub(n)..h.old.start];
            let after = &old_lines[h.old.end..(h.old.end + n).min(old_lines.len())];
            let old_block = join(before, &old_lines[h.old.clone()], after);
            let new_block = join(before, &new_lines[h.new.clone()], after);
            let found_old = find(&cur, &old_block);
            if found_old.len() == 1 {
                let at = found_old[0];
                let replacement: Vec<String> = new_block.iter().map(|l| (*l).to_owned()).collect();
                cur.splice(at..at + old_block.len(), replacement);
                done = true;
                break;
            }
            let found_new = find(&cur, &new_block);
            if found_new.len() == 1 {
                is_new = true;
                break;
            }
            if found_old.is_empty() && found_new.is_empty() {
                break;
            }
        }
        if !done && !is_new {
            if force && force_part(&mut cur, &old_lines, &new_lines, &h) {
                forced += 1;
            } else {
                failed.push(unified(&old_lines, &new_lines, &h));
            }
        }
    }
    if failed.is_empty() {
        let mut text = cur.concat();
        if current.ends_with('\n') && !text.ends_with('\n') {
            text.push('\n');
        }
        Ok((text, forced))
    } else {
        Err(failed)
    }
}

/// Replaces whatever lies between the unchanged lines around hunk `h` (up to
/// [`MAX_CONTEXT`] on each side, each found exactly once, in order, at most [`MAX_GAP`] lines
/// more apart than in `init`'s text) with the hunk's new lines. `false`, changing nothing,
/// when they cannot be found so.
fn force_part(cur: &mut Vec<String>, old_lines: &[&str], new_lines: &[&str], h: &Hunk) -> bool {
    let before = &old_lines[h.old.start.saturating_sub(MAX_CONTEXT)..h.old.start];
    let after = &old_lines[h.old.end..(h.old.end + MAX_CONTEXT).min(old_lines.len())];
    if before.is_empty() && after.is_empty() {
        return false;
    }
    let start = if before.is_empty() {
        0
    } else {
        match find(cur, before)[..] {
            [at] => at + before.len(),
            _ => return false,
        }
    };
    let end = if after.is_empty() {
        cur.len()
    } else {
        match find(&cur[start..], after)[..] {
            [at] => start + at,
            _ => return false,
        }
    };
    if end - start > h.old.len() + MAX_GAP {
        return false;
    }
    cur.splice(
        start..end,
        new_lines[h.new.clone()].iter().map(|l| (*l).to_owned()),
    );
    true
}

fn join<'a>(before: &[&'a str], mid: &[&'a str], after: &[&'a str]) -> Vec<&'a str> {
    before.iter().chain(mid).chain(after).copied().collect()
}

/// A hunk as a unified diff with one line of context either side.
fn unified(old_lines: &[&str], new_lines: &[&str], h: &Hunk) -> String {
    let mut out = String::new();
    let mut push = |prefix: char, line: &str| {
        out.push(prefix);
        out.push_str(line.trim_end_matches(['\n', '\r']));
        out.push('\n');
    };
    if let Some(line) = h.old.start.checked_sub(1).map(|i| old_lines[i]) {
        push(' ', line);
    }
    for line in &old_lines[h.old.clone()] {
        push('-', line);
    }
    for line in &new_lines[h.new.clone()] {
        push('+', line);
    }
    if let Some(line) = old_lines.get(h.old.end) {
        push(' ', line);
    }
    out
}

/// Kinds a namespaced Role cannot grant: the project's own cluster-scoped APIs and
/// cluster-scoped built-in kinds it has controllers for (from PROJECT), and cluster-scoped
/// built-in resources or non-resource URLs named by `+kubebuilder:rbac` markers without a
/// `namespace` under `src/` (read through `plan`, statically, as `manifests` reads them). One
/// line each.
pub fn cluster_scoped_grants(plan: &Plan, project: &Project) -> Vec<String> {
    let dir = plan.root();
    use crate::model::builtin;
    let mut out = Vec::new();
    // (group, plural) of built-in kinds already named from PROJECT, and per marker line.
    let mut seen = BTreeSet::new();
    for r in &project.resources {
        let qualified = match r.domain.as_deref() {
            Some(d) if !d.is_empty() => format!("{}.{d}", r.group),
            _ => r.group.clone(),
        };
        if let Some(api) = &r.api {
            if !api.namespaced {
                out.push(format!(
                    "{} ({qualified}/{}): a cluster-scoped API of this project (PROJECT)",
                    r.kind, r.version
                ));
            }
            continue;
        }
        let group = if r.group == "core" { "" } else { &r.group };
        let found = builtin::find(group, &r.version, &r.kind)
            .or_else(|| builtin::find(&qualified, &r.version, &r.kind));
        if let Some(b) = found
            && !b.namespaced
            && seen.insert((b.group.to_owned(), b.plural.to_owned()))
        {
            out.push(format!(
                "{} ({}/{}): a cluster-scoped built-in kind with a controller (PROJECT)",
                r.kind,
                if b.group.is_empty() { "core" } else { b.group },
                b.version
            ));
        }
    }
    let Ok(texts) = plan.read_tree(layout::SRC_DIR, "rs") else {
        return out;
    };
    let all = builtin::all();
    for (path, text) in texts {
        let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
        let (markers, _) = crate::manifests::markers::collect_text(&rel, &text);
        for r in crate::manifests::rbac::rbac_rules(&markers) {
            if r.namespace.is_some() {
                continue;
            }
            let at = format!("+kubebuilder:rbac at {}:{}", rel.display(), r.marker.line);
            if !r.urls.is_empty() {
                out.push(format!(
                    "non-resource URLs ({at}): only a ClusterRole can grant them"
                ));
            }
            let groups = &r.groups;
            for res in r.resources {
                let plural = res.split('/').next().unwrap_or(res);
                for b in all.iter().filter(|b| {
                    !b.namespaced && b.plural == plural && groups.iter().any(|g| g == b.group)
                }) {
                    let group = if b.group.is_empty() { "core" } else { b.group };
                    if seen.insert((b.group.to_owned(), b.plural.to_owned())) {
                        out.push(format!(
                            "{} ({group}): a cluster-scoped built-in resource ({at})",
                            b.plural
                        ));
                    }
                }
            }
        }
    }
    out
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:\n{}", self.path.display(), self.change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_a_block_found_once_and_keeps_the_rest() {
        let old = "a\nb\nkind: X\nc\n";
        let new = "a\nb\nkind: Y\nc\n";
        let current = "user\na\nb\nkind: X\nc\nmore\n";
        assert_eq!(
            switch(current, old, new).unwrap(),
            "user\na\nb\nkind: Y\nc\nmore\n"
        );
        // Already switched: unchanged.
        assert_eq!(
            switch("a\nkind: Y\nc\n", old, new).unwrap(),
            "a\nkind: Y\nc\n"
        );
    }

    #[test]
    fn an_insertion_is_anchored_by_its_neighbours() {
        let old = "env:\n- a\nports:\n";
        let new = "env:\n- a\n- b\nports:\n";
        assert_eq!(
            switch("x\nenv:\n- a\nports:\n", old, new).unwrap(),
            "x\nenv:\n- a\n- b\nports:\n"
        );
        let err = switch("env:\n- a\n- mine\nports:\n", old, new).unwrap_err();
        assert_eq!(err, vec![" - a\n+- b\n ports:\n".to_owned()]);
    }

    #[test]
    fn a_deletion_already_made_is_recognised_by_its_neighbours() {
        let old = "env:\n- a\n- b\nports:\n";
        let new = "env:\n- a\nports:\n";
        assert_eq!(switch(new, old, new).unwrap(), new);
        assert_eq!(switch(old, old, new).unwrap(), new);
    }

    #[test]
    fn force_replaces_a_changed_part_between_its_neighbours() {
        let old = "a\nb\nc\nkind: X\nd\ne\nf\n";
        let new = "a\nb\nc\nkind: Y\nd\ne\nf\n";
        let mine = "top\na\nb\nc\nkind: Mine\nextra\nd\ne\nf\nend\n";
        assert!(switch(mine, old, new).is_err());
        assert_eq!(
            switch_with(mine, old, new, true).unwrap(),
            ("top\na\nb\nc\nkind: Y\nd\ne\nf\nend\n".to_owned(), 1)
        );
        // A neighbour changed too: the part cannot be found.
        assert!(switch_with("a\nB\nc\nkind: Mine\nd\ne\nf\n", old, new, true).is_err());
    }

    #[test]
    fn a_repeated_block_takes_more_context() {
        let old = "kind: Role\nname: other\n---\nkind: Role\nname: manager\n";
        let new = "kind: Role\nname: other\n---\nkind: ClusterRole\nname: manager\n";
        assert_eq!(switch(old, old, new).unwrap(), new);
    }
}
