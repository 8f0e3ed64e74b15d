//! `rsbuilder manifests`: flags, and the call into [`crate::manifests`].

use std::path::{Path, PathBuf};

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
    /// Compiling builds the crate: it runs the crate's build scripts and the toolchain and
    /// cargo configuration the checkout names. On code you do not trust (CI on pull requests),
    /// use `static`, which runs nothing.
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

/// Runs `manifests` relative to `cwd`: the flags as [`crate::manifests::run::Settings`], the
/// run ([`crate::manifests::run::run`], where the defaults, the checks and the exit statuses
/// are described), its report printed (messages on stderr, the `--check` diff and the written
/// files on stdout). Returns the exit code: 0 success, 1 failure or drift, 2 a usage error.
/// Errors: the run stopped (the lock held by another command, an invalid PROJECT, a file the
/// engine cannot read or write), after the messages found until then are printed.
pub fn run(cwd: &Path, args: ManifestsArgs) -> anyhow::Result<i32> {
    use crate::manifests::run::{Error, Report, Settings, Status};

    let settings = Settings {
        cwd: cwd.to_path_buf(),
        features: args.features.flags(),
        dir: args.dir,
        paths: args.paths,
        output_dir: args.output_dir,
        evaluate: args.evaluate,
        verify: args.verify,
        check: args.check,
        strict: args.strict,
        storage_versions: args.storage_versions,
    };
    // In the order they arose: messages, the diff or the written files, messages.
    let print = |report: &Report| {
        let (before, after) = report
            .messages
            .split_at(report.output_after.min(report.messages.len()));
        before.iter().for_each(|m| eprintln!("{m}"));
        print!(
            "{}{}",
            report.diff,
            crate::scaffold::report(&report.written)
        );
        after.iter().for_each(|m| eprintln!("{m}"));
    };
    match crate::manifests::run::run(&settings) {
        Ok(report) => {
            print(&report);
            Ok(match report.status {
                Status::Success => super::EXIT_OK,
                Status::Failure => super::EXIT_FAILURE,
                Status::Usage => super::EXIT_USAGE,
            })
        }
        Err(stopped) => {
            print(&stopped.report);
            Err(match stopped.error {
                Error::Scaffold(e) => e.into(),
                Error::Project(e) => e,
                Error::Io(e) => e.into(),
            })
        }
    }
}
