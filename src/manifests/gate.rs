//! The project lock of a `manifests` run around the probe's build: released while cargo
//! compiles, taken again before anything is written, with a check that the sources did not
//! change meanwhile.

use std::path::{Path, PathBuf};

use crate::engine::ProjectLock;
use crate::engine::ScaffoldError;

/// How the lock is taken: [`crate::engine::lock_project`], or its read-only form.
pub(super) type Take = fn(&Path) -> Result<ProjectLock, ScaffoldError>;

/// The project lock of a `manifests` run, released while the probe compiles (which can take
/// minutes) so that other commands can use the project meanwhile, and taken again before
/// anything is written. If the sources the CRDs come from changed in between, the run stops:
/// its CRDs would not match the sources it leaves behind.
#[derive(Debug)]
pub(super) struct LockGate {
    /// The locked directory (`None`: no lock, an output directory without an existing
    /// ancestor).
    root: Option<PathBuf>,
    /// How the lock is taken (read-only for `--check`).
    take: Take,
    /// The lock while it is held.
    held: std::sync::Mutex<Option<ProjectLock>>,
    /// The files and directories the CRDs come from: `--paths`, `build.rs`, `Cargo.toml`.
    inputs: Vec<PathBuf>,
    /// Their digest when the lock was released.
    before: std::sync::Mutex<Option<String>>,
    /// What went wrong when the lock was taken again.
    problem: std::sync::Mutex<Option<GateProblem>>,
}

/// Why a run stops after the probe compiled.
#[derive(Debug)]
pub(super) enum GateProblem {
    /// The lock could not be taken again (another command holds it): exit 75.
    Lock(ScaffoldError),
    /// The sources changed while the lock was released: exit 1.
    Changed(String),
}

impl LockGate {
    /// The gate of a run that holds `held` (taken with `take` on `root`) and derives its CRDs
    /// from `inputs`.
    pub(super) fn new(
        root: Option<PathBuf>,
        take: Take,
        held: Option<ProjectLock>,
        inputs: Vec<PathBuf>,
    ) -> Self {
        Self {
            root,
            take,
            held: std::sync::Mutex::new(held),
            inputs,
            before: std::sync::Mutex::new(None),
            problem: std::sync::Mutex::new(None),
        }
    }

    /// What went wrong when the lock was taken again after the probe compiled, if anything
    /// (taken out: a second call answers `None`).
    pub(super) fn take_problem(&self) -> Option<GateProblem> {
        self.problem.lock().ok().and_then(|mut p| p.take())
    }

    /// A SHA-256 of every source file under the inputs (as `manifests` reads them) and of the
    /// other input files, or of the reason they cannot be read.
    fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) =
            self.inputs.iter().cloned().partition(|p| p.is_dir());
        match super::source::SourceSet::read(&dirs) {
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

impl super::probe::CompileGate for LockGate {
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
