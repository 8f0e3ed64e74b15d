//! `rsbuilder manifests` as a library call: read the sources, derive every manifest, and return
//! the files to write (relative paths and exact bytes). The CLI decides whether to write them
//! or to diff them (`--check`).

use std::path::PathBuf;

use super::crd::crd_yaml_files;
use super::diag::Diagnostics;
use super::source::SourceSet;

/// What to generate from where.
#[derive(Debug, Clone)]
pub struct Options {
    /// Source files or directories (every `.rs` under them is parsed).
    pub paths: Vec<PathBuf>,
    /// Directory receiving `crd/bases`, `rbac` and `webhook` (usually `config`). Relative to the
    /// project root, or absolute.
    pub output_dir: PathBuf,
    /// The PROJECT's `namespaced` setting: RBAC becomes Roles instead of ClusterRoles.
    pub namespaced: bool,
}

/// The generated files, sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// `(path under the project root (or absolute when the output dir is), exact contents)`.
    pub files: Vec<(PathBuf, String)>,
}

/// Derives every manifest: CRDs to `<output_dir>/crd/bases/<group>_<plural>.yaml`, RBAC to
/// `<output_dir>/rbac/role.yaml`, webhook configurations to `<output_dir>/webhook/manifests.yaml`.
///
/// Errors: every diagnostic of the run (syntax errors, unresolvable types, shapes for which
/// kube-derive's `crd()` panics or emits an invalid schema), nothing generated.
pub fn generate(opts: &Options) -> Result<Output, Diagnostics> {
    let sources = SourceSet::load(&opts.paths).map_err(Diagnostics)?;
    generate_from(opts, &sources, threads_for(&sources))
}

/// Custom resources from which deriving CRDs on several threads pays for the second parse.
pub const PARALLEL_MIN_KINDS: usize = 32;

/// The threads [`generate`] uses: one for small crates, else the available parallelism (at
/// most 8). Kinds are counted roughly, by the text `CustomResource` in the sources.
fn threads_for(sources: &SourceSet) -> usize {
    let kinds: usize = sources
        .files
        .iter()
        .map(|f| f.text.matches("CustomResource").count())
        .sum();
    if kinds < PARALLEL_MIN_KINDS {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// [`generate`] on sources already loaded, deriving CRDs on `threads` threads (see
/// [`crd_yaml_files`]); the output does not depend on `threads`.
pub fn generate_from(
    opts: &Options,
    sources: &SourceSet,
    threads: usize,
) -> Result<Output, Diagnostics> {
    let crds = crd_yaml_files(sources, threads, |crd| {
        to_yaml(crd).map_err(|e| e.to_string())
    })
    .map_err(Diagnostics)?;
    let mut files = Vec::new();
    for (file_name, yaml) in crds {
        files.push((
            opts.output_dir.join("crd").join("bases").join(file_name),
            yaml,
        ));
    }
    // RBAC and webhook configurations from `// +kubebuilder:` markers (written only when
    // there are such markers).
    let markers = super::markers::collect(sources).map_err(Diagnostics)?;
    if let Some(role) = super::rbac::generate(&markers, opts.namespaced).map_err(Diagnostics)? {
        files.push((opts.output_dir.join("rbac").join("role.yaml"), role));
    }
    if let Some(hooks) = super::webhook::generate(&markers).map_err(Diagnostics)? {
        files.push((
            opts.output_dir.join("webhook").join("manifests.yaml"),
            hooks,
        ));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Output { files })
}

/// Serializes a manifest object to YAML with serde-saphyr (see docs/yaml.md for the choice).
pub fn to_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(value)
}
