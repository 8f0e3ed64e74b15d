//! `rsbuilder manifests`: flags, and the call into [`crate::manifests`].

use std::path::{Path, PathBuf};

/// `rsbuilder manifests` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  rsbuilder manifests\n  rsbuilder manifests --check\n  rsbuilder manifests --paths src --output-dir config"
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
}

/// Runs `manifests` relative to `cwd`.
pub fn run(_cwd: &Path, _args: ManifestsArgs) -> anyhow::Result<i32> {
    super::not_implemented("manifests")
}
