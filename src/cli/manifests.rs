//! `rsbuilder manifests`: flags, and the call into [`crate::manifests`].

use std::path::{Path, PathBuf};

use crate::model::layout::generated as layout;

/// `rsbuilder manifests` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  rsbuilder manifests\n  rsbuilder manifests --check\n  rsbuilder manifests --paths src --output-dir config\n  rsbuilder manifests --verify            # compile every kind and compare crd() with the static CRD\n  rsbuilder manifests --evaluate static   # never compile\n  rsbuilder manifests --storage-version Foo.example.com=v1"
)]
pub struct ManifestsArgs {
    /// Project directory (default: the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Source files or directories to read (default: `src` of the project).
    #[arg(long, num_args = 1..)]
    pub paths: Vec<PathBuf>,
    /// Directory that receives `crd/bases`, `rbac` and `webhook` (default: `config`).
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    /// Write nothing; exit 1 with a unified diff when a file would change.
    #[arg(long)]
    pub check: bool,
    /// How kinds are evaluated: `auto` derives them statically and compiles a probe against
    /// the crate for each kind whose only obstacle is code rsbuilder cannot run (a
    /// `schema_with` function, `schema = "manual"`, a computed default); `static` never
    /// compiles and refuses those kinds; `compile` takes every kind from the compiler.
    #[arg(long, value_enum, default_value_t = crate::manifests::probe::Evaluate::Auto)]
    pub evaluate: crate::manifests::probe::Evaluate,
    /// Also compile every kind and compare its `crd()` with the static CRD; a difference is an
    /// rsbuilder bug, reported with both values (exit 1, that CRD not written).
    #[arg(long)]
    pub verify: bool,
    /// The storage version of a kind whose versions the crate merges at run time, as
    /// `Kind.group=version` (repeatable); overrides `storage-versions` under
    /// `[package.metadata.rsbuilder]` in Cargo.toml. A `merge_crds(…, "vN")` call in the crate
    /// is followed without it.
    #[arg(long = "storage-version", value_name = "KIND.GROUP=VERSION")]
    pub storage_versions: Vec<String>,
    /// Treat the dangerous-manifest warnings (RBAC that escalates, reads Secrets, execs into
    /// Pods, wildcards; webhooks that fail open, match everything or leave the cluster; see
    /// docs/markers.md) as errors: exit 1 and write nothing. A `// +rsbuilder:allow=<check>`
    /// line above a marker acknowledges its check.
    #[arg(long)]
    pub strict: bool,
    /// Cargo's feature flags, for `cfg(feature = "...")` and `cfg_attr`.
    #[command(flatten)]
    pub features: FeatureArgs,
}

/// The features `cfg(feature = "...")` sees, chosen as with `cargo build`: the default
/// features of the crate's Cargo.toml (the nearest at or above `--dir`), changed by these
/// flags, spelled as cargo spells them.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Feature Selection")]
pub struct FeatureArgs {
    /// Space or comma separated list of features to activate (`dep/feature` turns an optional
    /// dependency on)
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Activate all available features
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the `default` feature
    #[arg(long)]
    pub no_default_features: bool,
}

impl FeatureArgs {
    /// The library's form of the flags.
    pub fn flags(&self) -> crate::manifests::cfg::FeatureFlags {
        crate::manifests::cfg::FeatureFlags {
            features: self.features.clone(),
            all_features: self.all_features,
            no_default_features: self.no_default_features,
        }
    }
}

/// Runs `manifests` relative to `cwd`: derives the manifests of the project in `--dir` (default
/// `cwd`) from `--paths` (default `<dir>/src`) into `--output-dir` (default `<dir>/config`; a
/// relative output dir is taken relative to the project dir).
///
/// Every kind that can be derived is written (or checked) even when others fail; RBAC and
/// webhook configurations too. Returns exit code 0 when every file was written (or, with
/// `--check`, is up to date), 1 when any kind or output failed (its diagnostics printed to
/// stderr with what they stopped; the rest written), when a syntax error stops the run
/// (nothing written), when `--verify` finds a difference, when the
/// default `<dir>/src` does not exist, or when `--check` finds a file that would change (a
/// unified diff per file on stdout), a stale CRD file (see [`stale_crd_files`]) or a CRD
/// kustomization that disagrees with the generated CRDs (see [`crd_kustomization_problems`];
/// without `--check` both are warnings), 2 when `--dir` or a `--paths` entry does not exist (a usage
/// error, like a flag value clap rejects).
pub fn run(cwd: &Path, args: ManifestsArgs) -> anyhow::Result<i32> {
    use crate::manifests::generate::{Options, generate};
    use crate::scaffold::{Action, IfExists, Plan};

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
    let found = cwd.ancestors().find(|d| {
        d.join(crate::model::project::FILE_NAME).is_file() || d.join("Cargo.toml").is_file()
    });
    let dir = match (args.dir.as_deref(), found) {
        (Some(d), _) => anchor(d),
        (None, Some(root)) if root != cwd => root.to_path_buf(),
        (None, _) => anchor(Path::new(".")),
    };
    if args.dir.is_some() && !dir.is_dir() {
        eprintln!(
            "error: --dir {}: no such directory\n  help: --dir names the project root (where PROJECT or Cargo.toml is)",
            dir.display()
        );
        return Ok(super::EXIT_USAGE);
    }
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::model::layout::CONFIG_DIR));
    // A relative --output-dir that climbs out of the project (`../x`) is taken as the absolute
    // path it names, so it is allowed and locked exactly as that absolute path would be.
    let output_dir = if output_dir.is_relative()
        && crate::manifests::crd::resolve::normalize(&output_dir)
            .starts_with(std::path::Component::ParentDir)
    {
        let joined = std::path::absolute(dir.join(&output_dir))?;
        crate::manifests::crd::resolve::normalize(&joined)
    } else {
        output_dir
    };
    let (plan_root, gen_output_dir) = if output_dir.is_absolute() {
        (output_dir.clone(), PathBuf::new())
    } else {
        (dir.clone(), output_dir.clone())
    };
    // Held from the first read of the project to the last write, `--check` included (it must
    // not compare against a half-written tree), except while the probe compiles (see
    // `LockGate`).
    // The lock is on the directory written: the project, or an absolute --output-dir (its
    // nearest existing ancestor while it does not exist yet: the engine creates it).
    // `--check` only reads: an interrupted apply is reported, not finished.
    let lock = match args.check {
        true => crate::scaffold::engine::lock_project_read_only,
        false => crate::scaffold::engine::lock_project,
    };
    let lock_root = if output_dir.is_absolute() {
        plan_root
            .ancestors()
            .find(|a| a.is_dir())
            .map(Path::to_path_buf)
    } else {
        Some(dir.clone())
    };
    let held = lock_root.as_deref().map(lock).transpose()?;
    let project = if dir.join(crate::model::project::FILE_NAME).is_file() {
        Some(crate::model::Project::load(&dir)?)
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
            eprintln!("error: --paths {}: no such file or directory", p.display());
        }
        return Ok(super::EXIT_USAGE);
    }
    if args.paths.is_empty() && !paths[0].is_dir() {
        let shown = if dir == Path::new(".") {
            cwd.to_path_buf()
        } else {
            dir.clone()
        };
        // Run from inside a project (`src/`, `config/`): name the root above.
        let root_above = shown.ancestors().skip(1).find(|a| {
            a.join(crate::model::project::FILE_NAME).is_file() || a.join("Cargo.toml").is_file()
        });
        match root_above {
            Some(root) => eprintln!(
                "error: no src/ directory under {}\n  help: the project root is {}: run rsbuilder there, or pass --dir {}",
                shown.display(),
                root.display(),
                root.display()
            ),
            None => eprintln!(
                "error: no src/ directory under {}\n  help: run rsbuilder in the project root (where PROJECT or Cargo.toml is), choose the root with --dir, or name the source files or directories with --paths",
                shown.display()
            ),
        }
        return Ok(super::EXIT_FAILURE);
    }
    let build_script = crate::scaffold::engine::read(&dir, Path::new("build.rs"))
        .ok()
        .flatten();
    let cfg = match crate::manifests::cfg::Cfg::for_dir(&dir, &args.features.flags()) {
        Ok(cfg) => std::sync::Arc::new(with_target_cfg(cfg, &dir, build_script.as_deref())),
        Err(e @ crate::manifests::cfg::features::FeatureError::Flag(_)) => {
            eprintln!("error: {e}");
            return Ok(super::EXIT_USAGE);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(super::EXIT_FAILURE);
        }
    };
    let mut settings = crate::manifests::crd::Settings::default();
    match crate::manifests::crd::storage::from_metadata(&dir.join("Cargo.toml")) {
        Ok(found) => settings.storage.extend(found),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(super::EXIT_FAILURE);
        }
    }
    for value in &args.storage_versions {
        match crate::manifests::crd::storage::from_flag(value) {
            Ok((kind, choice)) => {
                settings.storage.insert(kind, choice);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(super::EXIT_USAGE);
            }
        }
    }
    let mut expected_kinds = Vec::new();
    if let Some(p) = &project {
        let project_text =
            crate::scaffold::engine::read(&dir, Path::new(crate::model::project::FILE_NAME))
                .ok()
                .flatten()
                .unwrap_or_default();
        for r in &p.resources {
            let domain = r.domain.as_deref().unwrap_or(p.domain.as_str());
            let group = match domain {
                "" => r.group.clone(),
                d => format!("{}.{d}", r.group),
            };
            if crate::scaffold::apiserver::is_served(r) {
                settings.served.insert((group, r.kind.clone()));
            } else if r.api.is_some() && !r.external && args.paths.is_empty() {
                // The whole `src/` is read: a CRD kind PROJECT records must be found there.
                let group_dir = crate::model::layout::group_of(p.multigroup, &r.group);
                let line = project_text
                    .lines()
                    .position(|l| l.trim_start_matches(['-', ' ']) == format!("kind: {}", r.kind))
                    .map_or(1, |i| i + 1);
                let defaulting_webhook_at =
                    r.webhooks.as_ref().filter(|w| w.defaulting).map(|_| {
                        let at = project_text
                            .lines()
                            .enumerate()
                            .skip(line)
                            .find(|(_, l)| l.trim() == "defaulting: true")
                            .map_or(line, |(i, _)| i + 1);
                        (PathBuf::from(crate::model::project::FILE_NAME), at)
                    });
                expected_kinds.push(crate::manifests::generate::ExpectedKind {
                    group,
                    kind: r.kind.clone(),
                    types_file: crate::model::layout::types_file(group_dir, &r.version, &r.kind),
                    recorded_at: (PathBuf::from(crate::model::project::FILE_NAME), line),
                    defaulting_webhook_at,
                });
            }
        }
    }
    if let Some(text) = build_script {
        settings.extra_sources.push((dir.join("build.rs"), text));
    }
    let crate_dir = dir.join("Cargo.toml").is_file().then(|| dir.clone());
    // Static CRDs are exact only for the crate versions rsbuilder reproduces.
    let versions = match crate::manifests::versions::check(&dir) {
        crate::manifests::versions::Verdict::Other(mut m) => {
            if let Ok(rel) = m.file.strip_prefix(".") {
                m.file = rel.to_path_buf();
            }
            crate::manifests::versions::Verdict::Other(m)
        }
        verdict => verdict,
    };
    let mut inputs = paths.clone();
    inputs.extend(
        settings
            .extra_sources
            .iter()
            .map(|(p, _)| p.clone())
            .chain([dir.join("Cargo.toml")]),
    );
    let gate = std::sync::Arc::new(LockGate {
        root: lock_root,
        take: lock,
        held: std::sync::Mutex::new(held),
        inputs,
        before: std::sync::Mutex::new(None),
        problem: std::sync::Mutex::new(None),
    });
    let generated = generate(&Options {
        paths,
        output_dir: gen_output_dir.clone(),
        namespaced,
        evaluate: args.evaluate,
        verify: args.verify,
        crate_dir,
        features: args.features.flags(),
        compile_gate: Some(gate.clone()),
        settings,
        cfg: cfg.clone(),
        expected_kinds,
        strict: args.strict,
        versions: Some(versions),
        locked: args.check,
    });
    if let Some(e) = cfg.target_error() {
        eprintln!(
            "warning: {e}; `cfg` predicates on the target, the profile and RUSTFLAGS are left undecided"
        );
    }
    if let Some(note) = no_manifest_note(&cfg, &dir) {
        eprintln!("warning: {note}");
    }
    match gate.problem.lock().map(|mut p| p.take()) {
        Ok(Some(GateProblem::Lock(e))) => return Err(e.into()),
        Ok(Some(GateProblem::Changed(message))) => {
            eprintln!("error: {message}");
            return Ok(super::EXIT_FAILURE);
        }
        _ => {}
    }
    let output = match generated {
        Ok(o) => o,
        Err(diags) => {
            eprintln!("error: {diags}");
            return Ok(super::EXIT_FAILURE);
        }
    };
    for warning in &output.warnings {
        eprintln!("warning: {warning}");
    }
    for note in &output.notes {
        eprintln!("note: {note}");
    }
    for (diag, stopped) in &output.refusals {
        eprintln!(
            "error: {diag}
  not generated because of this: {}",
            stopped.join(", ")
        );
    }
    let mut plan = Plan::new(&plan_root, false);
    for (path, contents) in &output.files {
        plan.create(path, contents.as_str(), IfExists::Overwrite);
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
            eprintln!("error: {problem}");
        }
        let resolved = plan.resolve()?;
        let mut drift = false;
        for r in resolved.iter().filter(|r| r.action != Action::Unchanged) {
            drift = true;
            let shown = plan_root.join(&r.path);
            let old = plan.read(&r.path)?.unwrap_or_default();
            let diff = similar::TextDiff::from_lines(&old, &r.contents);
            let label = shown.display().to_string();
            print!(
                "{}",
                diff.unified_diff().context_radius(3).header(&label, &label)
            );
        }
        for path in &stale {
            eprintln!(
                "error: {} is stale: no kind in the sources generates it\n  help: delete it if its kind was removed or renamed (rsbuilder never deletes files)",
                path.display()
            );
        }
        if drift {
            eprintln!("error: manifests are out of date; run `rsbuilder manifests` to update them");
        }
        if let Some(summary) = &failed_summary {
            eprintln!("error: {summary}; the other files were checked");
        }
        if drift || !stale.is_empty() || !unlisted.is_empty() || output.has_failures() {
            return Ok(super::EXIT_FAILURE);
        }
        return Ok(super::EXIT_OK);
    }
    if output.marker_errors {
        // A wrong marker usually means a grant or a webhook the user meant differs from what
        // would be written: nothing is written until it is fixed.
        eprintln!(
            "error: {}; nothing was written (a marker error stops every file)",
            failed_summary.as_deref().unwrap_or("a marker error")
        );
        return Ok(super::EXIT_FAILURE);
    }
    let done = plan.apply()?;
    print!("{}", crate::scaffold::report(&done));
    if let Some(summary) = &failed_summary {
        eprintln!("error: {summary}; every other file was written");
    }
    for path in &stale {
        eprintln!(
            "warning: {} was not generated from the sources (a removed or renamed kind?); rsbuilder does not delete it: remove it if its kind is gone",
            path.display()
        );
    }
    for problem in &unlisted {
        eprintln!("warning: {problem}");
    }
    Ok(if output.has_failures() {
        super::EXIT_FAILURE
    } else {
        super::EXIT_OK
    })
}

/// The project lock of a `manifests` run, released while the probe compiles (which can take
/// minutes) so that other commands can use the project meanwhile, and taken again before
/// anything is written. If the sources the CRDs come from changed in between, the run stops:
/// its CRDs would not match the sources it leaves behind.
#[derive(Debug)]
struct LockGate {
    /// The locked directory (`None`: no lock, an output directory without an existing
    /// ancestor).
    root: Option<PathBuf>,
    /// How the lock is taken (read-only for `--check`).
    take: fn(&Path) -> Result<crate::scaffold::engine::ProjectLock, crate::scaffold::ScaffoldError>,
    held: std::sync::Mutex<Option<crate::scaffold::engine::ProjectLock>>,
    /// The files and directories the CRDs come from: `--paths`, `build.rs`, `Cargo.toml`.
    inputs: Vec<PathBuf>,
    /// Their digest when the lock was released.
    before: std::sync::Mutex<Option<String>>,
    /// What went wrong when the lock was taken again.
    problem: std::sync::Mutex<Option<GateProblem>>,
}

/// Why a run stops after the probe compiled.
#[derive(Debug)]
enum GateProblem {
    /// The lock could not be taken again (another command holds it): exit 75.
    Lock(crate::scaffold::ScaffoldError),
    /// The sources changed while the lock was released: exit 1.
    Changed(String),
}

impl LockGate {
    /// A SHA-256 of every source file under the inputs (as `manifests` reads them) and of the
    /// other input files, or of the reason they cannot be read.
    fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) =
            self.inputs.iter().cloned().partition(|p| p.is_dir());
        match crate::manifests::source::SourceSet::read(&dirs) {
            Ok(texts) => {
                for (path, text) in texts {
                    h.update(path.display().to_string().as_bytes());
                    h.update((text.len() as u64).to_le_bytes());
                    h.update(text.as_bytes());
                }
            }
            Err(e) => h.update(format!("{e:?}").as_bytes()),
        }
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_default();
            h.update(f.display().to_string().as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl crate::manifests::probe::CompileGate for LockGate {
    fn before(&self) {
        if let Ok(mut b) = self.before.lock() {
            *b = Some(self.digest());
        }
        if let Ok(mut held) = self.held.lock() {
            held.take();
        }
    }

    fn after(&self) {
        let Some(root) = &self.root else { return };
        let problem = match (self.take)(root) {
            Err(e) => Some(GateProblem::Lock(e)),
            Ok(lock) => {
                if let Ok(mut held) = self.held.lock() {
                    *held = Some(lock);
                }
                let before = self.before.lock().ok().and_then(|b| b.clone());
                (before.as_deref() != Some(self.digest().as_str())).then(|| {
                    GateProblem::Changed(
                        "the sources changed while the probe compiled (the project lock is released meanwhile), so the CRDs read before may not match them; nothing was written\n  help: run `rsbuilder manifests` again".to_string(),
                    )
                })
            }
        };
        if let (Some(p), Ok(mut slot)) = (problem, self.problem.lock()) {
            *slot = Some(p);
        }
    }
}

/// Disagreements between `<output_dir>/crd/kustomization.yaml` (which `create api` writes and
/// `kubectl apply -k config/default` reads) and the CRDs this run generates: a `bases/*.yaml`
/// entry that no kind generates (a kind removed or renamed: kustomize then fails on the
/// missing file, or applies a CRD that is gone from the sources), and a generated CRD the
/// file does not list (never applied). Each is one message with the fix. `manifests` warns,
/// `--check` fails; the file is never edited (its lines are the user's). A missing or
/// unparsable file has no problems (`kubectl kustomize` reports the latter).
fn crd_kustomization_problems(
    plan_root: &Path,
    output_dir: &Path,
    generated: &[(PathBuf, String)],
) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Kustomization {
        #[serde(default)]
        resources: Option<Vec<String>>,
    }
    let rel = output_dir.join(layout::CRD_KUSTOMIZATION);
    let path = plan_root.join(&rel);
    let Ok(Some(text)) = crate::scaffold::engine::read(plan_root, &rel) else {
        return Vec::new();
    };
    let Ok(kustomization) = serde_saphyr::from_str::<Kustomization>(&text) else {
        return Vec::new();
    };
    // Entries as kustomize resolves them: `./bases/x.yaml`, `bases//x.yaml` and
    // `bases/../bases/x.yaml` all name `bases/x.yaml`.
    let normal = |entry: &str| -> String {
        let mut parts: Vec<&str> = Vec::new();
        for part in entry.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        parts.join("/")
    };
    let mut listed: Vec<String> = kustomization
        .resources
        .unwrap_or_default()
        .iter()
        .map(|r| normal(r))
        .filter(|r| r.starts_with(layout::CRD_ENTRY_PREFIX) && r.ends_with(".yaml"))
        .collect();
    let mut seen = std::collections::HashSet::new();
    listed.retain(|e| seen.insert(e.clone()));
    let bases = output_dir.join(layout::CRD_BASES);
    let made: Vec<String> = generated
        .iter()
        .filter(|(p, _)| p.parent() == Some(bases.as_path()))
        .filter_map(|(p, _)| p.file_name())
        .map(|n| format!("{}{}", layout::CRD_ENTRY_PREFIX, n.to_string_lossy()))
        .collect();
    let mut problems = Vec::new();
    for entry in listed.iter().filter(|e| !made.contains(e)) {
        problems.push(format!(
            "{} lists {entry}, which no kind in the sources generates\n  help: remove that line if its kind was removed or renamed (rsbuilder never edits it)",
            path.display()
        ));
    }
    for file in made.iter().filter(|f| !listed.contains(f)) {
        problems.push(format!(
            "{} does not list {file}, so `kubectl apply -k config/default` leaves that CRD out\n  help: add `- {file}` under `resources:`",
            path.display()
        ));
    }
    problems
}

/// `<output_dir>/crd/bases/*.yaml` files on disk that this run did not generate, sorted: CRDs of
/// kinds removed or renamed in the sources. Like controller-gen, rsbuilder never deletes them
/// (a CRD the cluster still serves may be wanted); `manifests` warns and `--check` fails.
/// Paths are `plan_root` joined with the path under it, as `--check` diffs name files. A
/// missing or unreadable directory has no stale files.
fn stale_crd_files(
    plan_root: &Path,
    output_dir: &Path,
    generated: &[(PathBuf, String)],
) -> Vec<PathBuf> {
    let bases = output_dir.join(layout::CRD_BASES);
    let Ok(Some(entries)) = crate::scaffold::engine::list(plan_root, &bases) else {
        return Vec::new();
    };
    let generated: std::collections::HashSet<PathBuf> =
        generated.iter().map(|(p, _)| plan_root.join(p)).collect();
    let mut stale: Vec<PathBuf> = entries
        .into_iter()
        .filter(|e| !e.is_dir)
        .map(|e| plan_root.join(&bases).join(e.name))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                && !generated.contains(p)
        })
        .collect();
    stale.sort();
    stale
}

/// `cfg` asking rustc, when a predicate first needs it, what it sets for a dev build of the
/// crate in `dir` (see [`crate::manifests::cfg::target`]).
fn with_target_cfg(
    cfg: crate::manifests::cfg::Cfg,
    dir: &Path,
    build_script: Option<&str>,
) -> crate::manifests::cfg::Cfg {
    let manifest = match cfg.source() {
        crate::manifests::cfg::FeatureSource::Manifest(path) => {
            crate::scaffold::engine::regular::read_path(path).ok()
        }
        crate::manifests::cfg::FeatureSource::NoManifest => None,
    };
    cfg.with_target_query(crate::manifests::cfg::TargetQuery {
        dir: dir.to_path_buf(),
        manifest,
        build_script: build_script.map(str::to_string),
    })
}

/// When the sources test features but no package Cargo.toml was found: say which features
/// `cfg(feature = "...")` saw (none, or those of `--features`).
fn no_manifest_note(cfg: &crate::manifests::cfg::Cfg, dir: &Path) -> Option<String> {
    if *cfg.source() != crate::manifests::cfg::FeatureSource::NoManifest
        || !cfg.features_were_read()
    {
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
