//! [`Plan::resolve`], which checks every precondition and computes every final file in memory,
//! and [`Plan::apply`], which then writes them all or nothing through [`super::txn`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::error::ScaffoldError;
use super::file::{File, Format, IfExists, Owner};
use super::paths::{PathCheck, open_root};
use super::plan::{Action, FileOp, Plan, Resolved};
use super::txn::{self, Mode};
use super::{cargo_dep, marker, owned, regular, rustfmt};

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

impl Plan {
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
        let mut compiled_checked: std::collections::BTreeSet<PathBuf> = Default::default();
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
            // Once per file: the way from the crate roots is the same for every insert in it.
            if let FileOp::Insert { marker, .. } | FileOp::InsertSorted { marker, .. } = op
                && is_rust(rel)
                && compiled_checked.insert(rel.to_path_buf())
            {
                let read = |p: &Path| match files.get(p) {
                    Some((_, planned)) => planned.clone(),
                    None => dir.as_ref().and_then(|d| regular::read_in(d, p).ok()),
                };
                if let Some(why) = marker::not_compiled(rel, &read) {
                    return Err(ScaffoldError::NotCompiled {
                        path: self.root.join(rel),
                        why,
                        marker: marker.clone(),
                    });
                }
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
    /// Callers hold the [`ProjectLock`](super::ProjectLock) (see [`super::lock_project`]), taken before the plan read
    /// the project.
    pub fn apply(&self) -> Result<Vec<Resolved>, ScaffoldError> {
        let resolved = self.resolve()?;
        let paths: Vec<&Path> = resolved.iter().map(|r| r.path.as_path()).collect();
        let changes: Vec<txn::Change<'_>> = resolved
            .iter()
            .zip(paths)
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
        // A root that does not exist yet (`manifests --output-dir /new/dir`) is created here,
        // so the journal and the staged files live inside it (never in a shared ancestor such
        // as /tmp); a failed apply removes it again.
        let created = NewRoot::create(&self.root)?;
        let base = if self.root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.root
        };
        let applied = (|| {
            let dir = open_root(base)?;
            if let Some(done) = txn::recover(base, &dir, Mode::Repair)? {
                eprintln!("note: {done}");
            }
            txn::apply(base, &dir, &changes)
        })();
        match applied {
            Ok(()) => created.keep(),
            Err(e) => {
                created.remove();
                return Err(e);
            }
        }
        Ok(resolved)
    }
}

/// The directories [`Plan::apply`] created for a root that did not exist, outermost first.
struct NewRoot(Vec<PathBuf>);

impl NewRoot {
    /// Creates `root` and its missing ancestors one directory at a time. A directory that
    /// appears between the check and the creation (another user's, in a shared directory such
    /// as /tmp) is not taken over: that is an error, and what was created is removed.
    fn create(root: &Path) -> Result<Self, ScaffoldError> {
        let mut missing: Vec<PathBuf> = root
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.is_dir())
            .map(Path::to_path_buf)
            .collect();
        missing.reverse();
        let mut created = Self(Vec::new());
        for dir in missing {
            if let Err(source) = std::fs::create_dir(&dir) {
                created.remove();
                return Err(ScaffoldError::Io {
                    action: "creating",
                    path: dir,
                    source,
                });
            }
            created.0.push(dir);
        }
        Ok(created)
    }

    /// The apply succeeded: the directories stay.
    fn keep(self) {}

    /// Removes the created directories, innermost first, as far as they are empty.
    fn remove(&self) {
        for dir in self.0.iter().rev() {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

/// `text` (the contents of `path`) with `line` added to the run of `pub mod` lines directly
/// above the marker `marker`, that run kept sorted byte-wise as rustfmt sorts it; `text`
/// unchanged when a line of the file's compiled code already is `line`
/// ([`marker::has_live_line`]). Errors: the marker missing or duplicated ([`marker::locate`]).
fn insert_sorted(
    path: &Path,
    text: &str,
    marker: &str,
    line: &str,
) -> Result<String, ScaffoldError> {
    let at = marker::locate(path, text, marker)?;
    let mut lines: Vec<&str> = text.lines().collect();
    if marker::has_live_line(path, text, line) {
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
