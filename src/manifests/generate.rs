//! `rsbuilder manifests` as a library call: read the sources, derive every manifest, and return
//! the files to write (relative paths and exact bytes). The CLI decides whether to write them
//! or to diff them (`--check`).

use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::crd::{CrdWorkers, crd_yaml_files};
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

/// The generated files, sorted by path, and the warnings of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// `(path under the project root (or absolute when the output dir is), exact contents)`.
    pub files: Vec<(PathBuf, String)>,
    /// Suspicious input that does not stop generation (an unknown RBAC verb), in source order.
    pub warnings: Vec<super::diag::Diagnostic>,
}

/// Derives every manifest: CRDs to `<output_dir>/crd/bases/<group>_<plural>.yaml`, RBAC to
/// `<output_dir>/rbac/role.yaml`, webhook configurations to `<output_dir>/webhook/manifests.yaml`.
///
/// Errors: every diagnostic of the run (syntax errors, unresolvable types, shapes for which
/// kube-derive's `crd()` panics or emits an invalid schema), nothing generated.
pub fn generate(opts: &Options) -> Result<Output, Diagnostics> {
    let texts = SourceSet::read(&opts.paths).map_err(Diagnostics)?;
    let threads = threads_for(&texts);
    if threads == 1 {
        let sources = SourceSet::parse_all(texts).map_err(Diagnostics)?;
        return generate_from(opts, &sources, 1);
    }
    std::thread::scope(|scope| {
        // Workers parse their copy of the texts while this thread parses its own.
        let workers = CrdWorkers::spawn(scope, &texts, threads, yaml_of);
        let sources = match SourceSet::parse_all(texts.clone()) {
            Ok(s) => s,
            Err(diags) => {
                workers.abandon();
                return Err(Diagnostics(diags));
            }
        };
        let crds = workers.finish(&sources).map_err(Diagnostics)?;
        assemble_output(opts, &sources, crds)
    })
}

/// Custom resources from which deriving CRDs on several threads pays for the extra parse.
pub const PARALLEL_MIN_KINDS: usize = 32;

/// The threads [`generate`] uses: one for small crates, else the available parallelism (at
/// most 8). Kinds are counted roughly, by the text `CustomResource` in the sources.
fn threads_for(texts: &[(PathBuf, String)]) -> usize {
    let kinds: usize = texts
        .iter()
        .map(|(_, text)| text.matches("CustomResource").count())
        .sum();
    if kinds < PARALLEL_MIN_KINDS {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

fn yaml_of(crd: &CustomResourceDefinition) -> Result<String, String> {
    to_yaml(crd).map_err(|e| e.to_string())
}

/// [`generate`] on sources already loaded, deriving CRDs on `threads` threads (see
/// [`crd_yaml_files`]); the output does not depend on `threads`.
pub fn generate_from(
    opts: &Options,
    sources: &SourceSet,
    threads: usize,
) -> Result<Output, Diagnostics> {
    let crds = crd_yaml_files(sources, threads, yaml_of).map_err(Diagnostics)?;
    assemble_output(opts, sources, crds)
}

/// The output files: the CRDs (`(file name, YAML)`) under `crd/bases`, RBAC and webhook
/// configurations from the sources' markers.
fn assemble_output(
    opts: &Options,
    sources: &SourceSet,
    crds: Vec<(String, String)>,
) -> Result<Output, Diagnostics> {
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
    let warnings = super::rbac::verb_warnings(&markers);
    Ok(Output { files, warnings })
}

/// Serializes a manifest object to YAML with serde-saphyr (see docs/yaml.md for the choice).
pub fn to_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate with `n` kinds, one file each, and an RBAC marker.
    fn write_crate(root: &std::path::Path, n: usize) {
        let src = root.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let mut lib = String::new();
        for i in 0..n {
            lib.push_str(&format!("pub mod k{i};\n"));
            std::fs::write(
                src.join(format!("k{i}.rs")),
                format!(
                    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\
                     // +kubebuilder:rbac:groups=g.example.com,resources=k{i}s,verbs=get\n\
                     #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
                     #[kube(group = \"g.example.com\", version = \"v1\", kind = \"K{i}\")]\n\
                     pub struct K{i}Spec {{ pub replicas: Option<i32> }}\n"
                ),
            )
            .unwrap();
        }
        std::fs::write(src.join("lib.rs"), lib).unwrap();
    }

    fn options(root: &std::path::Path) -> Options {
        Options {
            paths: vec![root.join("src")],
            output_dir: PathBuf::from("config"),
            namespaced: false,
        }
    }

    #[test]
    fn many_kinds_give_the_same_files_as_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), PARALLEL_MIN_KINDS + 8);
        let opts = options(dir.path());
        let sources = SourceSet::load(&opts.paths).unwrap();
        let one = generate_from(&opts, &sources, 1).unwrap();
        assert_eq!(
            one.files.len(),
            PARALLEL_MIN_KINDS + 8 + 1,
            "CRDs and role.yaml"
        );
        assert_eq!(generate(&opts).unwrap(), one);
    }

    #[test]
    fn a_syntax_error_stops_every_thread() {
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), PARALLEL_MIN_KINDS + 8);
        std::fs::write(dir.path().join("src/k7.rs"), "pub struct Broken {\n").unwrap();
        let err = generate(&options(dir.path())).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert!(err.0[0].file.ends_with("src/k7.rs"), "{err}");
        assert!(err.0[0].message.contains("syntax error"), "{err}");
    }
}
