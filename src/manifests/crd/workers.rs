//! The CRDs of a run as YAML files, derived by a pool of threads: the (group, kind)s are
//! shared among the threads by a hash of their names, each thread parses the sources itself
//! (syn's syntax trees cannot cross threads) and serializes each CRD as soon as it is merged.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::{KindOutcome, Settings, derive_share, finish_outcomes, kube_str};
use crate::manifests::cfg::Cfg;
use crate::manifests::diag::Diagnostic;
use crate::manifests::source::SourceSet;

/// Serializes a CRD (file contents); an error message otherwise.
pub type ToYaml = fn(&CustomResourceDefinition) -> Result<String, String>;

/// Stack of a worker thread: as much as the main thread's 8 MiB and then some, for syn's and
/// the deriver's recursion (only the pages used are committed).
const WORKER_STACK: usize = 16 << 20;

/// The kinds of one thread, each CRD serialized: `(file name, YAML)`.
type ShareResult = Vec<KindOutcome<(String, String)>>;

/// The CRDs of `sources` serialized to YAML, one outcome per kind (sorted by kind name): on
/// success `(file name, YAML)`, the same bytes as serializing [`derive_kinds`]'s CRDs with
/// `to_yaml`.
///
/// With `threads > 1`, the (group, kind)s are shared among that many threads (the calling
/// thread included); see [`CrdWorkers`]. Outcomes and diagnostics are those of the
/// single-threaded run, in the same order.
///
/// `cfg` must be the configuration `sources` were parsed under: the workers parse the texts
/// again and apply it.
pub fn crd_yaml_files(
    sources: &SourceSet,
    cfg: &Cfg,
    threads: usize,
    to_yaml: ToYaml,
    settings: &Settings,
) -> ShareResult {
    if threads <= 1 {
        return CrdWorkers {
            handles: Vec::new(),
            threads: 1,
            to_yaml,
            settings,
        }
        .finish(sources);
    }
    let texts: Vec<(std::path::PathBuf, String)> = sources
        .files
        .iter()
        .map(|f| (f.path.clone(), f.text.clone()))
        .collect();
    std::thread::scope(|scope| {
        CrdWorkers::spawn(scope, &texts, cfg, threads, to_yaml, settings).finish(sources)
    })
}

/// Threads deriving the CRDs of all shares but the first (share 0 is the calling thread's,
/// in [`CrdWorkers::finish`]). syn's syntax trees cannot cross threads, so each worker parses
/// the source texts itself: spawned before the calling thread parses, the workers parse at
/// the same time, and the run costs one parse plus a share of the derivation. Worth it from a
/// few dozen kinds.
pub struct CrdWorkers<'scope, 'env> {
    /// A worker, or the index of a share whose thread could not be started.
    handles: Vec<Result<std::thread::ScopedJoinHandle<'scope, ShareResult>, usize>>,
    threads: usize,
    to_yaml: ToYaml,
    settings: &'env Settings,
}

impl<'scope, 'env> CrdWorkers<'scope, 'env> {
    /// Starts `threads - 1` workers on `texts` (`(path, text)`, as [`SourceSet::read`]
    /// returns them), parsed under `cfg`. A worker whose parse fails stops: the calling
    /// thread reports syntax errors.
    pub fn spawn(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        texts: &'env [(std::path::PathBuf, String)],
        cfg: &'env Cfg,
        threads: usize,
        to_yaml: ToYaml,
        settings: &'env Settings,
    ) -> Self {
        let threads = threads.max(1);
        let handles = (1..threads)
            .map(|index| {
                std::thread::Builder::new()
                    .name(format!("crd-share-{index}"))
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, move || {
                        let Ok(set) = SourceSet::parse_all_with(texts.to_vec(), cfg) else {
                            return Vec::new();
                        };
                        yaml_share(&set, Share { index, of: threads }, to_yaml, settings)
                    })
                    // A thread the OS refuses: its share runs on the calling thread.
                    .map_err(|_| index)
            })
            .collect();
        Self {
            handles,
            threads,
            to_yaml,
            settings,
        }
    }

    /// Derives share 0 from `sources` (the same texts, parsed by the calling thread), joins
    /// the workers and returns every kind's outcome, sorted by kind name.
    pub fn finish(self, sources: &SourceSet) -> ShareResult {
        let share = Share {
            index: 0,
            of: self.threads,
        };
        let mut kinds = yaml_share(sources, share, self.to_yaml, self.settings);
        for w in self.handles {
            let w = match w {
                Ok(handle) => handle,
                Err(index) => {
                    let share = Share {
                        index,
                        of: self.threads,
                    };
                    kinds.extend(yaml_share(sources, share, self.to_yaml, self.settings));
                    continue;
                }
            };
            match w.join() {
                Ok(k) => kinds.extend(k),
                Err(_) => kinds.push(KindOutcome {
                    group: String::new(),
                    kind: "(a worker thread's kinds)".into(),
                    versions: Vec::new(),
                    file_name: None,
                    storage: None,
                    result: Err(vec![Diagnostic::new(
                        std::path::Path::new("."),
                        1,
                        1,
                        "internal error: a CRD worker thread panicked",
                    )]),
                }),
            }
        }
        finish_outcomes(sources, &mut kinds);
        kinds
    }

    /// Waits for the workers and drops their results (the calling thread found syntax
    /// errors).
    pub fn abandon(self) {
        for w in self.handles.into_iter().flatten() {
            let _ = w.join();
        }
    }
}

/// [`derive_share`], each CRD serialized with `to_yaml` as soon as it is merged.
fn yaml_share(
    sources: &SourceSet,
    share: Share,
    to_yaml: ToYaml,
    settings: &Settings,
) -> ShareResult {
    derive_share(sources, share, settings, |c| match to_yaml(&c.crd) {
        Ok(yaml) => Ok((c.file_name, yaml)),
        Err(e) => Err(vec![Diagnostic::new(
            std::path::Path::new(&c.file_name),
            1,
            1,
            format!("cannot serialize the CRD to YAML: {e}"),
        )]),
    })
}

/// Which (group, kind)s one thread derives: those whose hash falls on `index` (mod `of`).
/// Every version of a kind lands on the same thread, so versions still merge.
#[derive(Debug, Clone, Copy)]
pub(super) struct Share {
    pub(super) index: usize,
    pub(super) of: usize,
}

impl Share {
    pub(super) const ALL: Share = Share { index: 0, of: 1 };

    /// Whether the custom resource with these `#[kube]` attributes is this share's, by the
    /// string values of its `group` and `kind` (read from the tokens; the full attribute parse
    /// happens once, on the owning thread). One without them belongs to share 0, which
    /// reports the error.
    pub(super) fn owns(self, attrs_: &[syn::Attribute]) -> bool {
        if self.of == 1 {
            return true;
        }
        use std::hash::{DefaultHasher, Hash, Hasher};
        let (group, kind) = (kube_str(attrs_, "group"), kube_str(attrs_, "kind"));
        if kind.is_none() {
            return self.index == 0;
        }
        let mut h = DefaultHasher::new();
        (group, kind).hash(&mut h);
        (h.finish() % self.of as u64) as usize == self.index
    }
}
