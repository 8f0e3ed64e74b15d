//! One `manifests` run, as the command line asks for it: a [`Settings`] value in, a [`Report`]
//! out. The run finds the project, takes its lock, derives the manifests
//! ([`super::generate::generate`]), and writes them through the engine's plan or, with
//! `check`, compares them with the files on disk. The caller only prints the report, as
//! cargo's commands parse flags and call one function of cargo's library.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::gate::{GateProblem, LockGate};
use super::probe::Evaluate;
use super::stale::{crd_kustomization_problems, stale_crd_files};
use crate::engine::{Action, File, IfExists, Plan, Resolved, ScaffoldError};
use crate::model::project::FILE_NAME as PROJECT_FILE;

/// What a `manifests` run is asked to do: the command-line flags, as plain values.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The directory the command runs in: relative paths below are taken from here, and
    /// without `dir` the project root is found upwards from here.
    pub cwd: PathBuf,
    /// The project root (`--dir`); `None`: the nearest directory at or above `cwd` that holds
    /// PROJECT or Cargo.toml, else `cwd`.
    pub dir: Option<PathBuf>,
    /// Source files or directories to read (`--paths`); empty: `src` of the project.
    pub paths: Vec<PathBuf>,
    /// The directory that receives `crd/bases`, `rbac` and `webhook` (`--output-dir`);
    /// `None`: `config`. A relative one is taken relative to the project root.
    pub output_dir: Option<PathBuf>,
    /// How kinds are evaluated (`--evaluate`).
    pub evaluate: Evaluate,
    /// Also compile every kind and compare its `crd()` with the static CRD (`--verify`).
    pub verify: bool,
    /// Write nothing; report what would change (`--check`).
    pub check: bool,
    /// The dangerous-manifest warnings are errors (`--strict`).
    pub strict: bool,
    /// Cargo's feature flags (`--features`, `--all-features`, `--no-default-features`).
    pub features: super::cfg::FeatureFlags,
    /// Storage versions as `Kind.group=version` (`--storage-version`), over those of
    /// Cargo.toml's `[package.metadata.rsbuilder]`.
    pub storage_versions: Vec<String>,
}

/// How bad a [`Message`] is; printed before it (`error: `, `warning: `, `note: `).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something failed: the run exits non-zero.
    Error,
    /// Worth fixing, does not change the exit status.
    Warning,
    /// Information.
    Note,
}

/// One message of a run, for standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// How bad it is.
    pub level: Level,
    /// The text, without the level (it may hold `\n  help: ...` lines).
    pub text: String,
}

impl std::fmt::Display for Message {
    /// `error: <text>` (or `warning:`, `note:`), the line cargo and rustc print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        };
        write!(f, "{level}: {}", self.text)
    }
}

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every file written, or with `check` up to date.
    Success,
    /// A kind or output failed, a syntax error, a `verify` difference, drift found by
    /// `check`, or a setting that cannot be honoured (see [`run`]).
    Failure,
    /// A usage error: `dir` or a `paths` entry that does not exist, a bad feature or
    /// storage-version flag.
    Usage,
}

/// What a run found and did, for the command line to print.
#[derive(Debug, Clone)]
pub struct Report {
    /// Diagnostics, warnings and notes for standard error, in the order they arose.
    pub messages: Vec<Message>,
    /// With `check`: a unified diff per file that would change, for standard output (empty
    /// otherwise, or when nothing would change).
    pub diff: String,
    /// The files the run wrote, unchanged ones included (see [`crate::engine::report`]).
    pub written: Vec<Resolved>,
    /// How many of [`Report::messages`] arose before the diff was made or the files were
    /// written: a terminal shows those first, then the standard output, then the rest.
    pub output_after: usize,
    /// How the run ended.
    pub status: Status,
}

impl Report {
    fn new() -> Self {
        Self {
            messages: Vec::new(),
            diff: String::new(),
            written: Vec::new(),
            output_after: usize::MAX,
            status: Status::Success,
        }
    }

    fn say(&mut self, level: Level, text: impl Into<String>) {
        self.messages.push(Message {
            level,
            text: text.into(),
        });
    }

    /// The messages of one level, in order.
    pub fn of(&self, level: Level) -> impl Iterator<Item = &str> {
        self.messages
            .iter()
            .filter(move |m| m.level == level)
            .map(|m| m.text.as_str())
    }
}

/// Why a run stopped before it could finish its report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine could not lock, read or write the project (`Locked`: another command held
    /// the lock for the whole wait).
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// PROJECT could not be read or is not valid (see [`crate::model::Project::load`]).
    #[error(transparent)]
    Project(anyhow::Error),
    /// The absolute form of an `--output-dir` that climbs out of the project could not be
    /// made (the current directory is gone).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A run that stopped with an error, and the report up to that point (messages already found,
/// such as warnings printed before a write failed).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Stopped {
    /// What the run had found when it stopped.
    pub report: Box<Report>,
    /// Why it stopped.
    #[source]
    pub error: Error,
}

/// Runs `manifests` with `settings`: derives the manifests of the project in `dir` (default:
/// the root found from `cwd`) from `paths` (default `<dir>/src`) into `output_dir` (default
/// `<dir>/config`; a relative output dir is taken relative to the project dir).
///
/// Every kind that can be derived is written (or checked) even when others fail; RBAC and
/// webhook configurations too. The report's status is [`Status::Success`] when every file was
/// written (or, with `check`, is up to date); [`Status::Failure`] when any kind or output
/// failed (its diagnostics in the messages with what they stopped; the rest written), when a
/// syntax error stops the run (nothing written), when `verify` finds a difference, when a
/// marker is wrong (nothing written), when the default `<dir>/src` does not exist, when the
/// sources changed while the probe compiled, or when `check` finds a file that would change
/// (a unified diff per file in [`Report::diff`]), a stale CRD file (see
/// [`super::stale::stale_crd_files`]) or a CRD kustomization that disagrees with the
/// generated CRDs (see [`super::stale::crd_kustomization_problems`]; without `check` both are
/// warnings); [`Status::Usage`] when `dir` or a `paths` entry does not exist or a feature or
/// storage-version flag is malformed (like a flag value clap rejects).
///
/// Errors ([`Stopped`]): the project lock is held by another command (the lock is held from
/// the first read to the last write, except while the probe compiles), PROJECT is invalid, or
/// the engine cannot read or write a file.
pub fn run(settings: &Settings) -> Result<Report, Stopped> {
    let mut report = Report::new();
    match run_into(settings, &mut report) {
        Ok(status) => {
            report.status = status;
            Ok(report)
        }
        Err(error) => {
            report.status = Status::Failure;
            Err(Stopped {
                report: Box::new(report),
                error,
            })
        }
    }
}

/// The body of [`run`]: messages into `report`, the status returned.
fn run_into(args: &Settings, report: &mut Report) -> Result<Status, Error> {
    use super::generate::{Options, generate};

    let cwd = args.cwd.as_path();
    let process_cwd = std::env::current_dir().ok();
    let anchor = |p: &Path| -> PathBuf {
        if p.is_absolute() || process_cwd.as_deref() == Some(cwd) {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    // Without --dir: the nearest directory upwards that holds PROJECT or Cargo.toml (as cargo
    // finds Cargo.toml), else here.
    let found = crate::model::find_root(cwd, crate::model::root::PROJECT_OR_CRATE);
    let dir = match (args.dir.as_deref(), found) {
        (Some(d), _) => anchor(d),
        (None, Some(root)) if root != cwd => root,
        (None, _) => anchor(Path::new(".")),
    };
    if args.dir.is_some() && !dir.is_dir() {
        report.say(
            Level::Error,
            format!(
                "--dir {}: no such directory\n  help: --dir names the project root (where PROJECT or Cargo.toml is)",
                dir.display()
            ),
        );
        return Ok(Status::Usage);
    }
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::model::layout::CONFIG_DIR));
    // A relative --output-dir that climbs out of the project (`../x`) is taken as the absolute
    // path it names, so it is allowed and locked exactly as that absolute path would be.
    let output_dir = if output_dir.is_relative()
        && super::modtree::normalize(&output_dir).starts_with(std::path::Component::ParentDir)
    {
        let joined = std::path::absolute(dir.join(&output_dir))?;
        super::modtree::normalize(&joined)
    } else {
        output_dir
    };
    // Never into a version-control directory: by its name in the path given, or, for an
    // absolute path, in the real path of its nearest existing directory (through links).
    let real = output_dir.is_absolute().then(|| {
        let existing = output_dir.ancestors().find(|a| a.exists());
        existing.and_then(|e| {
            let rest = output_dir.strip_prefix(e).ok()?;
            Some(e.canonicalize().ok()?.join(rest))
        })
    });
    if crate::engine::is_vcs_path(&output_dir)
        || real
            .flatten()
            .is_some_and(|r| crate::engine::is_vcs_path(&r))
    {
        report.say(
            Level::Error,
            format!(
                "invalid value {} for --output-dir: it is inside a version-control directory ({}); rsbuilder never writes there\n  help: name a directory outside .git and the like",
                output_dir.display(),
                crate::engine::VCS_DIRS.join(", ")
            ),
        );
        return Ok(Status::Usage);
    }
    let (plan_root, gen_output_dir) = if output_dir.is_absolute() {
        (output_dir.clone(), PathBuf::new())
    } else {
        (dir.clone(), output_dir.clone())
    };
    // Held from the first read of the project to the last write, `check` included (it must
    // not compare against a half-written tree), except while the probe compiles (see
    // `LockGate`).
    // The lock is on the directory written: the project, or an absolute --output-dir (its
    // nearest existing ancestor while it does not exist yet: the engine creates it).
    // `check` only reads: an interrupted apply is reported, not finished.
    let lock = match args.check {
        true => crate::engine::lock_project_read_only,
        false => crate::engine::lock_project,
    };
    let lock_root = if output_dir.is_absolute() {
        plan_root
            .ancestors()
            .find(|a| a.is_dir())
            .map(Path::to_path_buf)
    } else {
        Some(dir.clone())
    };
    // An --output-dir outside the project locks that directory, not the project; the
    // project's own interrupted apply (or a journal it does not trust) is still reported as
    // every read-only command reports it, so nothing is derived from a half-written tree.
    if output_dir.is_absolute() {
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if dir.is_dir() && !lock_root.as_deref().is_some_and(|l| same(l, &dir)) {
            drop(crate::engine::lock_project_read_only(&dir)?);
        }
    }
    // While the output directory does not exist, its nearest existing ancestor (a shared
    // directory such as /tmp, maybe) is only locked, never recovered in: the apply creates the
    // output directory and keeps its journal there.
    let lock = match lock_root.as_deref() == Some(plan_root.as_path()) || !output_dir.is_absolute()
    {
        true => lock,
        false => crate::engine::lock::acquire,
    };
    let held = lock_root.as_deref().map(lock).transpose()?;
    // Anything at PROJECT (a FIFO, a device link, a directory, a dangling link) makes the root
    // a project: Project::load then refuses what is not a regular file, by name, instead of
    // the run going on as if there were no PROJECT (a namespaced project's Role would become
    // a ClusterRole).
    let plan = crate::engine::Plan::new(&dir, false);
    let project = if plan
        .exists(PROJECT_FILE)
        .map_err(|e| Error::Project(e.into()))?
    {
        Some(crate::model::Project::load_in(&plan).map_err(Error::Project)?)
    } else {
        None
    };
    let namespaced = project.as_ref().is_some_and(|p| p.namespaced);
    let paths: Vec<PathBuf> = if args.paths.is_empty() {
        vec![if dir == Path::new(".") {
            PathBuf::from("src")
        } else {
            dir.join("src")
        }]
    } else {
        args.paths.iter().map(|p| anchor(p)).collect()
    };
    let missing: Vec<&PathBuf> = if args.paths.is_empty() {
        Vec::new()
    } else {
        paths.iter().filter(|p| !p.exists()).collect()
    };
    if !missing.is_empty() {
        for p in missing {
            report.say(
                Level::Error,
                format!("--paths {}: no such file or directory", p.display()),
            );
        }
        return Ok(Status::Usage);
    }
    if args.paths.is_empty() && !paths[0].is_dir() {
        let shown = if dir == Path::new(".") {
            cwd.to_path_buf()
        } else {
            dir.clone()
        };
        // Run from inside a project (`src/`, `config/`): name the root above.
        let root_above = shown
            .parent()
            .and_then(|p| crate::model::find_root(p, crate::model::root::PROJECT_OR_CRATE));
        let text = match root_above {
            Some(root) => format!(
                "no src/ directory under {}\n  help: the project root is {}: run rsbuilder there, or pass --dir {}",
                shown.display(),
                root.display(),
                root.display()
            ),
            None => format!(
                "no src/ directory under {}\n  help: run rsbuilder in the project root (where PROJECT or Cargo.toml is), choose the root with --dir, or name the source files or directories with --paths",
                shown.display()
            ),
        };
        report.say(Level::Error, text);
        return Ok(Status::Failure);
    }
    let build_script = crate::engine::read(&dir, Path::new("build.rs"))
        .ok()
        .flatten();
    let cfg = match super::cfg::Cfg::for_dir(&dir, &args.features) {
        Ok(cfg) => Arc::new(with_target_cfg(cfg, &dir, build_script.as_deref())),
        Err(e @ super::cfg::features::FeatureError::Flag(_)) => {
            report.say(Level::Error, e.to_string());
            return Ok(Status::Usage);
        }
        Err(e) => {
            report.say(Level::Error, e.to_string());
            return Ok(Status::Failure);
        }
    };
    let mut crd_settings = super::crd::Settings::default();
    match super::crd::storage::from_metadata(&dir.join("Cargo.toml")) {
        Ok(found) => crd_settings.storage.extend(found),
        Err(e) => {
            report.say(Level::Error, e.to_string());
            return Ok(Status::Failure);
        }
    }
    for value in &args.storage_versions {
        match super::crd::storage::from_flag(value) {
            Ok((kind, choice)) => {
                crd_settings.storage.insert(kind, choice);
            }
            Err(e) => {
                report.say(Level::Error, e.to_string());
                return Ok(Status::Usage);
            }
        }
    }
    let expected_kinds = match &project {
        Some(p) => expected_kinds(p, &dir, args.paths.is_empty(), &mut crd_settings),
        None => Vec::new(),
    };
    if let Some(text) = build_script {
        crd_settings
            .extra_sources
            .push((dir.join("build.rs"), text));
    }
    let crate_dir = dir.join("Cargo.toml").is_file().then(|| dir.clone());
    // Static CRDs are exact only for the crate versions rsbuilder reproduces.
    let versions = match super::versions::check(&dir) {
        super::versions::Verdict::Other(mut m) => {
            if let Ok(rel) = m.file.strip_prefix(".") {
                m.file = rel.to_path_buf();
            }
            super::versions::Verdict::Other(m)
        }
        verdict => verdict,
    };
    let mut inputs = paths.clone();
    inputs.extend(
        crd_settings
            .extra_sources
            .iter()
            .map(|(p, _)| p.clone())
            .chain([dir.join("Cargo.toml")]),
    );
    let gate = Arc::new(LockGate::new(lock_root, lock, held, inputs));
    let generated = generate(&Options {
        paths,
        output_dir: gen_output_dir.clone(),
        namespaced,
        evaluate: args.evaluate,
        verify: args.verify,
        crate_dir,
        features: args.features.clone(),
        compile_gate: Some(gate.clone()),
        settings: crd_settings,
        cfg: cfg.clone(),
        expected_kinds,
        strict: args.strict,
        versions: Some(versions),
        locked: args.check,
    });
    if let Some(e) = cfg.target_error() {
        report.say(
            Level::Warning,
            format!(
                "{e}; `cfg` predicates on the target, the profile and RUSTFLAGS are left undecided"
            ),
        );
    }
    if let Some(note) = no_manifest_note(&cfg, &dir) {
        report.say(Level::Warning, note);
    }
    match gate.take_problem() {
        Some(GateProblem::Lock(e)) => return Err(e.into()),
        Some(GateProblem::Changed(message)) => {
            report.say(Level::Error, message);
            return Ok(Status::Failure);
        }
        None => {}
    }
    let output = match generated {
        Ok(o) => o,
        Err(diags) => {
            report.say(Level::Error, diags.to_string());
            return Ok(Status::Failure);
        }
    };
    for warning in &output.warnings {
        report.say(Level::Warning, warning.to_string());
    }
    for note in &output.notes {
        report.say(Level::Note, note.to_string());
    }
    for (diag, stopped) in &output.refusals {
        report.say(
            Level::Error,
            format!(
                "{diag}\n  not generated because of this: {}",
                stopped.join(", ")
            ),
        );
    }
    let mut plan = Plan::new(&plan_root, false);
    for (path, contents) in &output.files {
        plan.add(File::new(path, contents.as_str(), IfExists::Overwrite));
    }
    // Files of kinds that failed this run stay as they are: neither stale nor unlisted.
    let kept: Vec<(PathBuf, String)> = output
        .failed
        .iter()
        .filter_map(|(_, f)| f.clone().map(|f| (f, String::new())))
        .collect();
    let known: Vec<(PathBuf, String)> = output.files.iter().cloned().chain(kept).collect();
    let stale = stale_crd_files(&plan_root, &gen_output_dir, &known);
    let unlisted = crd_kustomization_problems(&plan_root, &gen_output_dir, &known);
    let failed_summary = (!output.failed.is_empty()).then(|| {
        let names: Vec<&str> = output.failed.iter().map(|(n, _)| n.as_str()).collect();
        let errors = match output.refusals.len() {
            1 => "1 error".to_string(),
            n => format!("{n} errors"),
        };
        format!("{errors}; not generated: {}", names.join(", "))
    });
    if args.check {
        for problem in &unlisted {
            report.say(Level::Error, problem.clone());
        }
        report.output_after = report.messages.len();
        let drift = check_diff(&plan, &plan_root, &mut report.diff)?;
        for path in &stale {
            report.say(
                Level::Error,
                format!(
                    "{} is stale: no kind in the sources generates it\n  help: delete it if its kind was removed or renamed (rsbuilder never deletes files)",
                    path.display()
                ),
            );
        }
        if drift {
            report.say(
                Level::Error,
                "manifests are out of date; run `rsbuilder manifests` to update them",
            );
        }
        if let Some(summary) = &failed_summary {
            report.say(
                Level::Error,
                format!("{summary}; the other files were checked"),
            );
        }
        if drift || !stale.is_empty() || !unlisted.is_empty() || output.has_failures() {
            return Ok(Status::Failure);
        }
        return Ok(Status::Success);
    }
    if output.marker_errors {
        // A wrong marker usually means a grant or a webhook the user meant differs from what
        // would be written: nothing is written until it is fixed.
        report.say(
            Level::Error,
            format!(
                "{}; nothing was written (a marker error stops every file)",
                failed_summary.as_deref().unwrap_or("a marker error")
            ),
        );
        return Ok(Status::Failure);
    }
    report.output_after = report.messages.len();
    report.written = plan.apply()?;
    if let Some(summary) = &failed_summary {
        report.say(
            Level::Error,
            format!("{summary}; every other file was written"),
        );
    }
    for path in &stale {
        report.say(
            Level::Warning,
            format!(
                "{} was not generated from the sources (a removed or renamed kind?); rsbuilder does not delete it: remove it if its kind is gone",
                path.display()
            ),
        );
    }
    for problem in &unlisted {
        report.say(Level::Warning, problem.clone());
    }
    Ok(if output.has_failures() {
        Status::Failure
    } else {
        Status::Success
    })
}

/// `--check`: appends to `diff` a unified diff (three lines of context, both headers the
/// file's path under `plan_root`) for each file `plan` would create or change. Returns
/// whether there was one. Errors: the engine cannot read a file.
fn check_diff(plan: &Plan, plan_root: &Path, diff: &mut String) -> Result<bool, ScaffoldError> {
    let resolved = plan.resolve()?;
    let mut drift = false;
    for r in resolved.iter().filter(|r| r.action != Action::Unchanged) {
        drift = true;
        let old = plan.read(&r.path)?.unwrap_or_default();
        let label = plan_root.join(&r.path).display().to_string();
        let text = similar::TextDiff::from_lines(&old, &r.contents);
        diff.push_str(
            &text
                .unified_diff()
                .context_radius(3)
                .header(&label, &label)
                .to_string(),
        );
    }
    Ok(drift)
}

/// The CRD kinds `project` records, which the sources under `dir` must define when the whole
/// `src/` is read (`whole_src`), with the PROJECT lines that record them; kinds the API
/// server serves go into `crd_settings.served` instead (they get no CRD).
fn expected_kinds(
    project: &crate::model::Project,
    dir: &Path,
    whole_src: bool,
    crd_settings: &mut super::crd::Settings,
) -> Vec<super::generate::ExpectedKind> {
    let mut expected = Vec::new();
    let project_text = crate::engine::read(dir, Path::new(PROJECT_FILE))
        .ok()
        .flatten()
        .unwrap_or_default();
    for r in &project.resources {
        let domain = r.domain.as_deref().unwrap_or(project.domain.as_str());
        let group = match domain {
            "" => r.group.clone(),
            d => format!("{}.{d}", r.group),
        };
        if crate::model::project::is_served(r) {
            crd_settings.served.insert((group, r.kind.clone()));
        } else if r.api.is_some() && !r.external && whole_src {
            // The whole `src/` is read: a CRD kind PROJECT records must be found there.
            let group_dir = crate::model::layout::group_of(project.multigroup, &r.group);
            let line = project_text
                .lines()
                .position(|l| l.trim_start_matches(['-', ' ']) == format!("kind: {}", r.kind))
                .map_or(1, |i| i + 1);
            let defaulting_webhook_at = r.webhooks.as_ref().filter(|w| w.defaulting).map(|_| {
                let at = project_text
                    .lines()
                    .enumerate()
                    .skip(line)
                    .find(|(_, l)| l.trim() == "defaulting: true")
                    .map_or(line, |(i, _)| i + 1);
                (PathBuf::from(PROJECT_FILE), at)
            });
            let defaulter_file = defaulting_webhook_at
                .is_some()
                .then(|| crate::model::layout::webhook_file(group_dir, &r.version, &r.kind));
            expected.push(super::generate::ExpectedKind {
                group,
                kind: r.kind.clone(),
                types_file: crate::model::layout::types_file(group_dir, &r.version, &r.kind),
                recorded_at: (PathBuf::from(PROJECT_FILE), line),
                defaulting_webhook_at,
                defaulter_file,
            });
        }
    }
    expected
}

/// `cfg` asking rustc, when a predicate first needs it, what it sets for a dev build of the
/// crate in `dir` (see [`super::cfg::target`]).
fn with_target_cfg(
    cfg: super::cfg::Cfg,
    dir: &Path,
    build_script: Option<&str>,
) -> super::cfg::Cfg {
    let manifest = match cfg.source() {
        super::cfg::FeatureSource::Manifest(path) => crate::engine::regular::read_path(path).ok(),
        super::cfg::FeatureSource::NoManifest => None,
    };
    cfg.with_target_query(super::cfg::TargetQuery {
        dir: dir.to_path_buf(),
        manifest,
        build_script: build_script.map(str::to_string),
    })
}

/// When the sources test features but no package Cargo.toml was found: say which features
/// `cfg(feature = "...")` saw (none, or those of `--features`).
fn no_manifest_note(cfg: &super::cfg::Cfg, dir: &Path) -> Option<String> {
    if *cfg.source() != super::cfg::FeatureSource::NoManifest || !cfg.features_were_read() {
        return None;
    }
    let enabled = if cfg.features().is_empty() {
        "no feature is enabled".to_string()
    } else {
        let list: Vec<&str> = cfg.features().iter().map(String::as_str).collect();
        format!(
            "only the features given with --features are enabled ({})",
            list.join(", ")
        )
    };
    Some(format!(
        "no package Cargo.toml at or above {}, so `cfg(feature = \"...\")` has no default features: {enabled}\n  help: run in the crate (or pass --dir) so its [features] apply, or name the features with --features",
        std::path::absolute(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .display()
    ))
}
