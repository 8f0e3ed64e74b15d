//! `rsbuilder manifests` as a library call: read the sources, derive every manifest, and return
//! the files to write (relative paths and exact bytes). The CLI decides whether to write them
//! or to diff them (`--check`).
//!
//! Every kind stands alone: a kind that cannot be derived is reported and the others are
//! still generated, as are RBAC and webhook configurations (they do not depend on CRDs).
//! Kinds that only need running code are compiled ([`super::probe`]) when
//! [`Options::evaluate`] allows it.

use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::cfg::Cfg;
use super::cfg::FeatureFlags;
use super::crd::{CrdWorkers, KindOutcome, Settings, crd_yaml_files};
use super::diag::{Cause, Diagnostic, Diagnostics};
use super::probe::{self, Evaluate};
use super::source::SourceSet;
use super::versions::Verdict;
pub use super::yaml::to_yaml;
use crate::model::layout::generated as layout;

/// What to generate from where.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Source files or directories (every `.rs` under them is parsed).
    pub paths: Vec<PathBuf>,
    /// Directory receiving `crd/bases`, `rbac` and `webhook` (usually `config`). Relative to the
    /// project root, or absolute.
    pub output_dir: PathBuf,
    /// The PROJECT's `namespaced` setting: RBAC becomes Roles instead of ClusterRoles.
    pub namespaced: bool,
    /// Static only, static with a compiled fallback per kind, or every kind compiled.
    pub evaluate: Evaluate,
    /// Compile every kind and compare its `crd()` with the static CRD (`--verify`).
    pub verify: bool,
    /// The crate whose library a probe is built against (where its Cargo.toml is); `None`:
    /// no crate, nothing can be compiled.
    pub crate_dir: Option<PathBuf>,
    /// The cargo feature flags of the run, as cargo spells them; the probe passes them to
    /// `cargo build` (the static reading takes them through [`Options::cfg`]).
    pub features: FeatureFlags,
    /// Called around the probe's build (the CLI releases the project lock there); `None`:
    /// nothing.
    pub compile_gate: Option<std::sync::Arc<dyn probe::CompileGate>>,
    /// Storage versions and the extra files searched for `merge_crds` calls.
    pub settings: Settings,
    /// What `cfg` predicates mean (the crate's features): see [`crate::manifests::cfg`].
    pub cfg: std::sync::Arc<Cfg>,
    /// The CRD kinds PROJECT records: each one the sources do not define gets a warning.
    pub expected_kinds: Vec<ExpectedKind>,
    /// `--strict`: the dangerous-manifest warnings ([`super::dangerous`]) are errors, and
    /// nothing is written.
    pub strict: bool,
    /// What [`super::versions::check`] found for the crate; `None`: not checked. With
    /// [`Verdict::Other`], `--evaluate static` refuses every kind at the mismatch's file and
    /// line, `auto` and `--verify` take every kind from the compiler and say why. With
    /// [`Verdict::Same`], the check is made again after a probe build that may have updated
    /// the crate's `Cargo.lock`.
    pub versions: Option<Verdict>,
    /// The probe builds `--locked` (`--check`: no file of the user's changes).
    pub locked: bool,
}

/// A CRD kind PROJECT records, which the sources are expected to define with
/// `#[derive(CustomResource)]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedKind {
    /// The API group (`ai.example.com`).
    pub group: String,
    /// The kind (`AIJob`).
    pub kind: String,
    /// Where `create api` put its type (`src/api/v1/aijob_types.rs`).
    pub types_file: PathBuf,
    /// The file and 1-based line that record it (PROJECT's `kind:` line).
    pub recorded_at: (PathBuf, usize),
    /// Where PROJECT records a defaulting webhook for the kind (`defaulting: true`), if it has
    /// one: fields with a schema default then get a warning.
    pub defaulting_webhook_at: Option<(PathBuf, usize)>,
    /// The file `create webhook` put the kind's `Defaulter` in
    /// (`src/webhook/v1/aijob_webhook.rs`), when it has a defaulting webhook: a field's
    /// warning is given only when that `default` mentions the field.
    pub defaulter_file: Option<PathBuf>,
}

/// The generated files, sorted by path, and what the run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// `(path under the project root (or absolute when the output dir is), exact contents)`.
    pub files: Vec<(PathBuf, String)>,
    /// Suspicious input that does not stop generation (an unknown RBAC verb), in source order.
    pub warnings: Vec<Diagnostic>,
    /// Kinds (and outputs) that got no file: `Kind.group` (or `rbac/role.yaml`, …) and, when
    /// known, the file it would have had (its old copy is neither stale nor missing from the
    /// kustomization: it is kept as it is).
    pub failed: Vec<(String, Option<PathBuf>)>,
    /// Every diagnostic that stopped a kind or an output, once, with the names of what it
    /// stopped (a problem in a shared type stops every kind that uses it).
    pub refusals: Vec<(Diagnostic, Vec<String>)>,
    /// What the reader should know: which kinds came from the compiler and why, which source
    /// chose a storage version.
    pub notes: Vec<String>,
    /// How many kinds came from the probe cache instead of a compile.
    pub cache_hits: usize,
    /// A `// +kubebuilder:` marker is wrong (unknown, missing an argument, breaking an RBAC or
    /// webhook rule): `manifests` then writes nothing at all, as docs/markers.md says.
    pub marker_errors: bool,
}

impl Output {
    /// Whether any kind or output failed (the exit code is then 1).
    pub fn has_failures(&self) -> bool {
        !self.failed.is_empty()
    }
}

/// Derives every manifest: CRDs to `<output_dir>/crd/bases/<group>_<plural>.yaml`, RBAC to
/// `<output_dir>/rbac/role.yaml`, webhook configurations to `<output_dir>/webhook/manifests.yaml`.
/// A kind that fails is in [`Output::failed`] and [`Output::refusals`], and every other file
/// is still in [`Output::files`].
///
/// Errors: what stops the whole run, nothing generated: unreadable paths and Rust syntax
/// errors (the module tree, and so every kind, depends on every file).
pub fn generate(opts: &Options) -> Result<Output, Diagnostics> {
    let texts = SourceSet::read(&opts.paths).map_err(Diagnostics)?;
    let threads = threads_for(&texts);
    if threads == 1 {
        let sources = SourceSet::parse_all_with(texts, &opts.cfg).map_err(Diagnostics)?;
        return Ok(generate_from(opts, &sources, 1));
    }
    std::thread::scope(|scope| {
        // Workers parse their copy of the texts while this thread parses its own.
        let workers = CrdWorkers::spawn(scope, &texts, &opts.cfg, threads, yaml_of, &opts.settings);
        let sources = match SourceSet::parse_all_with(texts.clone(), &opts.cfg) {
            Ok(s) => s,
            Err(diags) => {
                workers.abandon();
                return Err(Diagnostics(diags));
            }
        };
        let kinds = workers.finish(&sources);
        Ok(assemble_output(opts, &sources, kinds))
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

/// [`generate`] on sources already loaded (under `opts.cfg`), deriving CRDs on `threads`
/// threads (see [`crd_yaml_files`]); the output does not depend on `threads`.
pub fn generate_from(opts: &Options, sources: &SourceSet, threads: usize) -> Output {
    let kinds = crd_yaml_files(sources, &opts.cfg, threads, yaml_of, &opts.settings);
    assemble_output(opts, sources, kinds)
}

/// Whether a failed kind can come from the compiler: every diagnostic is one that only
/// running code decides.
fn needs_compile(k: &KindOutcome<(String, String)>) -> bool {
    matches!(&k.result, Err(d) if !d.is_empty() && d.iter().all(|d| d.cause == Cause::NeedsCompile))
}

/// Why a kind's CRD comes from the compiler, for its note: never empty.
///
/// `result` is the static derivation of the kind. Its first [`Cause::NeedsCompile`]
/// diagnostic gives the reason (`because src/lib.rs:5: …`; a hand-written `JsonSchema` impl
/// reads `hand-written schema: compiled, because …`); otherwise the reason is the
/// `--evaluate compile` flag, with the static failure when there was one.
pub fn compiled_because<T>(result: &Result<T, Vec<Diagnostic>>, evaluate: Evaluate) -> String {
    let at = |d: &Diagnostic| format!("{}:{}", d.file.display(), d.line);
    let diags = match result {
        Ok(_) => &[][..],
        Err(d) => &d[..],
    };
    if let Some(d) = diags.iter().find(|d| d.cause == Cause::NeedsCompile) {
        return match d.message.strip_prefix(super::crd::derive::HAND_WRITTEN) {
            Some(rest) => format!("hand-written schema: compiled, because {}: {rest}", at(d)),
            None => format!("because {}: {}", at(d), d.message),
        };
    }
    match (evaluate, diags.first()) {
        (Evaluate::Compile, None) => "because of --evaluate compile".to_string(),
        (Evaluate::Compile, Some(d)) => format!(
            "because of --evaluate compile (statically: {}: {})",
            at(d),
            d.message
        ),
        (_, Some(d)) => format!("because {}: {}", at(d), d.message),
        (_, None) => "because rsbuilder was asked to compile it".to_string(),
    }
}

/// The kinds the probe compiles, and the compiled CRDs put in place (or compared with
/// `--verify`); notes on what came from where.
fn compile_kinds(
    opts: &Options,
    sources: &SourceSet,
    kinds: &mut [KindOutcome<(String, String)>],
    out: &mut Output,
) -> Vec<(Diagnostic, Vec<String>)> {
    // Static CRDs are another kube's where the crate's versions differ: every kind then comes
    // from the compiler, or is refused.
    let other = match &opts.versions {
        Some(Verdict::Other(m)) => Some(m),
        _ => None,
    };
    if let (Some(m), Evaluate::Static, false) = (other, opts.evaluate, opts.verify) {
        refuse_for_versions(m, kinds);
        return Vec::new();
    }
    // A Cargo.toml or Cargo.lock that cannot be read is not handed to cargo either: it would
    // fail on it, quoting the file in its error (a link to /proc/self/environ printed the
    // environment).
    if let Some(m) = other.filter(|m| m.unreadable) {
        refuse_unreadable(m, kinds);
        return Vec::new();
    }
    let wanted: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| match opts.evaluate {
            _ if opts.verify || other.is_some() => true,
            Evaluate::Static => false,
            Evaluate::Auto => needs_compile(k),
            Evaluate::Compile => true,
        })
        .map(|(i, _)| i)
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    // `auto` falling back to the compiler runs what the crate names (its build scripts, the
    // toolchain and cargo configuration it picks): say so, with the reason, before it runs.
    if matches!(opts.evaluate, Evaluate::Auto) && !opts.verify && other.is_none() {
        for &i in &wanted {
            let k = &kinds[i];
            let (at, reason) = match &k.result {
                Err(d) if !d.is_empty() => (
                    format!(" ({}:{})", d[0].file.display(), d[0].line),
                    d[0].message.clone(),
                ),
                _ => (String::new(), "static evaluation cannot decide it".into()),
            };
            out.notes.push(format!(
                "compiling the crate to evaluate {}{at}: {reason}; this runs its build scripts and the toolchain and cargo configuration it names (`--evaluate static` runs nothing)",
                k.name()
            ));
        }
    }
    let mut extra = Vec::new();
    let requests: Vec<probe::Request> = wanted
        .iter()
        .map(|&i| probe::Request {
            verify: opts.verify && kinds[i].result.is_ok(),
            ..probe::Request::of(&kinds[i])
        })
        .collect();
    // The output directory is rewritten by this very run: not part of the cache key.
    let output_dir: Vec<PathBuf> = match &opts.crate_dir {
        Some(d) => vec![d.join(&opts.output_dir)],
        None => Vec::new(),
    };
    let run = probe::run(
        opts.crate_dir.as_deref(),
        &requests,
        &opts.features,
        &output_dir,
        opts.compile_gate.as_deref(),
        opts.locked,
    );
    out.cache_hits += run.cache_hits;
    // A build without `--locked` may have moved the crate's Cargo.lock (as `cargo build` does
    // when it no longer fits Cargo.toml): static CRDs are exact only if the versions still
    // match; from here on the run is one on other versions.
    let moved = match (&opts.versions, &opts.crate_dir) {
        (Some(Verdict::Same), Some(dir)) if !opts.locked && !run.cached => {
            match super::versions::check(dir) {
                Verdict::Other(m) => Some(m),
                _ => None,
            }
        }
        _ => None,
    };
    let other = other.or(moved.as_ref());
    if let Some(m) = other {
        out.notes.push(format!(
            "{}:{}: {}; rsbuilder's static evaluation reproduces {}, so every kind comes from the compiler",
            m.file.display(),
            m.line,
            m.reason,
            reproduced_list()
        ));
    }
    for (&i, compiled) in wanted.iter().zip(run.kinds) {
        let k = &mut kinds[i];
        let name = k.name();
        let why = match other {
            Some(m) => format!(
                "because {}:{}: the crate's versions differ",
                m.file.display(),
                m.line
            ),
            None => compiled_because(&k.result, opts.evaluate),
        };
        let cached = if run.cached { " (cached)" } else { "" };
        let compiled = compiled.and_then(|crd| {
            let file_name = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
            let yaml = yaml_of(&crd).map_err(|e| {
                vec![Diagnostic::new(
                    std::path::Path::new(&file_name),
                    1,
                    1,
                    format!("cannot serialize the CRD to YAML: {e}"),
                )]
            })?;
            Ok((crd, file_name, yaml))
        });
        let use_compiled = match opts.evaluate {
            _ if other.is_some() => true,
            Evaluate::Static => false,
            Evaluate::Auto => needs_compile(k),
            Evaluate::Compile => true,
        };
        match (&k.result, compiled) {
            // --verify where the versions differ: nothing to compare the compiled CRD with.
            (_, Ok((_, file_name, yaml))) if opts.verify && other.is_some() => {
                out.notes.push(format!(
                    "{name}: not verified, CRD from the compiler{cached}, {why}"
                ));
                k.result = Ok((file_name, yaml));
            }
            // --verify: the static CRD against crd().
            (Ok((file, yaml)), Ok((crd, _, _))) if opts.verify => {
                let theirs = serde_json::to_value(&crd).unwrap_or_default();
                let ours: serde_json::Value = match serde_saphyr::from_str(yaml) {
                    Ok(v) => v,
                    Err(e) => serde_json::Value::String(format!("{file} does not parse: {e}")),
                };
                match super::compare::compare(&theirs, &ours, "crd()", "rsbuilder") {
                    None => out
                        .notes
                        .push(format!("{name}: verified, equal to crd(){cached}")),
                    Some(report) => {
                        let at = k.versions.first();
                        k.result = Err(vec![Diagnostic::new(
                            at.map_or(std::path::Path::new("."), |s| s.file.as_path()),
                            at.map_or(1, |s| s.line),
                            1,
                            format!(
                                "rsbuilder bug: the static CRD of {name} differs from what crd() returns, so it is not written (please report it with these types)\n{report}crd() is:\n{}\nrsbuilder derived:\n{}",
                                serde_json::to_string_pretty(&theirs).unwrap_or_default(),
                                serde_json::to_string_pretty(&ours).unwrap_or_default()
                            ),
                        )]);
                    }
                }
            }
            (Ok(_), Err(diags)) if opts.verify && other.is_none() => {
                // The static CRD is written; the compiler could not confirm it.
                for d in diags {
                    extra.push((d, vec![format!("{name} (--verify)")]));
                }
                out.failed.push((format!("{name} (--verify)"), None));
            }
            (_, Ok((_, file_name, yaml))) if use_compiled => {
                out.notes
                    .push(format!("{name}: CRD from the compiler{cached}, {why}"));
                k.result = Ok((file_name, yaml));
            }
            (_, Err(diags)) if use_compiled => {
                let mut all = match &k.result {
                    Err(d) => d.clone(),
                    Ok(_) => Vec::new(),
                };
                all.extend(diags);
                k.result = Err(super::crd::sorted(all));
            }
            _ => {}
        }
    }
    if let Some(m) = moved {
        for (i, k) in kinds.iter_mut().enumerate() {
            if k.result.is_ok() && !wanted.contains(&i) {
                k.result = Err(vec![Diagnostic::new(
                    &m.file,
                    m.line,
                    1,
                    format!(
                        "the probe's cargo build updated the crate's Cargo.lock, and now {}",
                        m.reason
                    ),
                )
                .with_help("run `rsbuilder manifests` again: static evaluation does not apply to these versions, so every kind will come from the compiler")]);
            }
        }
    }
    super::crd::fail_name_clashes(sources, kinds);
    extra
}

/// Every kind refused at the crate's version mismatch `m` (`--evaluate static`), beside what
/// else stopped it.
fn refuse_for_versions(m: &super::versions::Mismatch, kinds: &mut [KindOutcome<(String, String)>]) {
    let d = Diagnostic::new(
        &m.file,
        m.line,
        1,
        format!(
            "static evaluation does not apply to this crate: {}; rsbuilder's static evaluation reproduces {}",
            m.reason,
            reproduced_list()
        ),
    )
    .with_help("use --evaluate auto (the default) to take this crate's CRDs from the compiler, or build the crate with the versions rsbuilder reproduces")
    .needs_compile();
    refuse_every_kind(&d, kinds);
}

/// Every kind refused at `m`, a Cargo.toml or Cargo.lock that cannot be read: neither static
/// evaluation (the versions are not known) nor the compiler (cargo cannot read it either).
fn refuse_unreadable(m: &super::versions::Mismatch, kinds: &mut [KindOutcome<(String, String)>]) {
    let d = Diagnostic::new(
        &m.file,
        m.line,
        1,
        format!(
            "{}; rsbuilder neither evaluates nor compiles the crate until it can be read",
            m.reason
        ),
    )
    .with_help(
        "make it the crate's own regular file (`cargo generate-lockfile` writes a Cargo.lock)",
    );
    refuse_every_kind(&d, kinds);
}

/// Adds `d` to every kind's diagnostics (a kind that was derived loses its CRD), sorted.
fn refuse_every_kind(d: &Diagnostic, kinds: &mut [KindOutcome<(String, String)>]) {
    for k in kinds.iter_mut() {
        let mut all = match std::mem::replace(&mut k.result, Err(Vec::new())) {
            Err(d) => d,
            Ok(_) => Vec::new(),
        };
        all.push(d.clone());
        k.result = Err(super::crd::sorted(all));
    }
}

/// "kube-derive 5.0.0, kube-core 5.0.0, schemars 1.2.3 and k8s-openapi 0.29.0 (`v1_37`)".
fn reproduced_list() -> String {
    let r = super::versions::reproduced();
    let mut parts: Vec<String> = super::versions::CRATES
        .iter()
        .filter_map(|name| r.crates.get(name).map(|v| format!("{name} {v}")))
        .collect();
    if let (Some(last), Some(f)) = (parts.last_mut(), &r.k8s_feature) {
        last.push_str(&format!(" (`{f}`)"));
    }
    match parts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A warning for each kind of `expected` that no `#[derive(CustomResource)]` of the sources
/// defines (a derive commented out, a type renamed): it would otherwise get no CRD without a
/// word. A kind a macro call of `macros` may make (its `kind = "…"` or a string argument) is
/// named with that
/// call instead of the advice to restore the derive.
fn missing_kinds<T>(
    expected: &[ExpectedKind],
    kinds: &[KindOutcome<T>],
    macros: &[super::macro_kinds::MacroKind],
) -> Vec<Diagnostic> {
    expected
        .iter()
        .filter(|e| !kinds.iter().any(|k| k.group == e.group && k.kind == e.kind))
        .map(|e| {
            if let Some(m) = macros.iter().find(|m| m.may_make(&e.kind)) {
                return Diagnostic::new(
                    &e.recorded_at.0,
                    e.recorded_at.1,
                    1,
                    format!(
                        "PROJECT records the kind {} ({}), which `{}!` makes at {}:{}: it gets no CRD, as `manifests` does not expand macros",
                        e.kind,
                        e.group,
                        m.name,
                        m.at.0.display(),
                        m.at.1
                    ),
                )
                .with_help(format!(
                    "write the type out in {} (the struct with its `#[derive(CustomResource)]` and `#[kube(...)]`) instead of making it with `{}!`",
                    e.types_file.display(),
                    m.name
                ));
            }
            Diagnostic::new(
                &e.recorded_at.0,
                e.recorded_at.1,
                1,
                format!(
                    "PROJECT records the kind {} ({}), but no `#[derive(CustomResource)]` in the sources defines it: it gets no CRD",
                    e.kind, e.group
                ),
            )
            .with_help(format!(
                "`create api` put its type in {}: restore the derive there, or remove the kind from PROJECT if it is gone",
                e.types_file.display()
            ))
        })
        .collect()
}

/// A warning for each field of the kind `group`/`kind` whose CRD (`yaml`) gives a default, when
/// PROJECT records a defaulting webhook for the kind and its `Defaulter::default` names the
/// field (or cannot be read): the webhook never sees such a field missing
/// ([`super::lint::schema_defaults`]). Each is reported at the field's declaration in
/// `sources` ([`super::lint::field_location`]), else at PROJECT's `defaulting: true`.
fn defaults_under_a_webhook(
    expected: &[ExpectedKind],
    sources: &SourceSet,
    (group, kind): (&str, &str),
    yaml: &str,
) -> Vec<Diagnostic> {
    let Some((e, (file, line))) = expected
        .iter()
        .filter(|e| e.group == group && e.kind == kind)
        .find_map(|e| e.defaulting_webhook_at.as_ref().map(|at| (e, at)))
    else {
        return Vec::new();
    };
    let mentioned = e
        .defaulter_file
        .as_deref()
        .and_then(|f| super::lint::defaulter_words(sources, f));
    super::lint::schema_defaults(yaml)
        .into_iter()
        // The webhook defaults the object a client writes; `status` is written through its
        // own subresource, and a top-level default (`spec: {}`) only says the field exists.
        .filter(|path| path.contains('.') && !path.starts_with("status."))
        // A `default` that never names the field has no default of its own for it to lose.
        .filter(|path| mentioned.as_ref().is_none_or(|words| super::lint::names_field(words, path)))
        .map(|path| {
            let (at, at_line, column) = super::lint::field_location(sources, kind, &path)
                .unwrap_or_else(|| (file.clone(), *line, 1));
            Diagnostic::new(
                &at,
                at_line,
                column,
                format!(
                    "{kind}'s `{path}` has a default in the CRD (from `#[serde(default)]` or `#[schemars(default)]` in {}), and the kind has a defaulting webhook ({}:{line}): the API server fills the default before it calls the webhook, so `Defaulter::default` never sees `{path}` missing",
                    e.types_file.display(),
                    file.display()
                ),
            )
            .with_help("set the default in one place: keep the serde default (the CRD's `default:`) and skip that field in the webhook, or remove it and default the field in the webhook")
        })
        .collect()
}

pub use crate::manifests::crd::MAX_CRD_BYTES;

/// Turns each kind whose CRD is larger than [`MAX_CRD_BYTES`] into a failure at its first
/// version's type: the API server would refuse to store it (etcd: "request is too large").
/// Large doc comments (`#[doc = include_str!(...)]`) are the usual cause.
fn refuse_oversized(kinds: &mut [KindOutcome<(String, String)>]) {
    for k in kinds {
        let Ok((_, yaml)) = &k.result else { continue };
        if yaml.len() <= MAX_CRD_BYTES {
            continue;
        }
        let at = k.versions.first();
        let message = format!(
            "the CRD of {} is {} KiB of YAML; etcd stores at most {} KiB in one request, so the API server would refuse it",
            k.name(),
            yaml.len() >> 10,
            MAX_CRD_BYTES >> 10
        );
        k.result = Err(vec![
            Diagnostic::new(
                at.map_or(std::path::Path::new("."), |s| s.file.as_path()),
                at.map_or(1, |s| s.line),
                1,
                message,
            )
            .with_help("shorten the doc comments of the types (they become descriptions), or keep long text out of them (`#[doc = include_str!(...)]`)"),
        ]);
    }
}

/// The output files: the CRDs (`(file name, YAML)`) under `crd/bases`, RBAC and webhook
/// configurations from the sources' markers.
fn assemble_output(
    opts: &Options,
    sources: &SourceSet,
    mut kinds: Vec<KindOutcome<(String, String)>>,
) -> Output {
    let mut out = Output::default();
    let made_by_macros = super::macro_kinds::find(sources);
    out.warnings
        .extend(made_by_macros.iter().map(super::macro_kinds::warning));
    out.warnings
        .extend(super::macro_kinds::renamed_derives(sources));
    out.warnings
        .extend(missing_kinds(&opts.expected_kinds, &kinds, &made_by_macros));
    kinds.retain(|k| {
        let served = opts
            .settings
            .served
            .contains(&(k.group.clone(), k.kind.clone()));
        if served {
            out.notes.push(format!(
                "{}: served by the aggregated API server (PROJECT `apiServer`), no CRD",
                k.name()
            ));
        }
        !served
    });
    let verify_failures = compile_kinds(opts, sources, &mut kinds, &mut out);
    refuse_oversized(&mut kinds);
    let bases = opts.output_dir.join(layout::CRD_BASES);
    for k in &kinds {
        if let Some(s) = &k.storage {
            out.notes.push(format!(
                "{}: storage version {} (from {})",
                k.name(),
                s.version,
                s.source
            ));
        }
    }
    out.refusals = super::crd::refusals(&kinds);
    out.refusals.extend(verify_failures);
    for k in kinds {
        let name = k.name();
        match k.result {
            Ok((file_name, yaml)) => {
                out.warnings.extend(defaults_under_a_webhook(
                    &opts.expected_kinds,
                    sources,
                    (&k.group, &k.kind),
                    &yaml,
                ));
                out.files.push((bases.join(file_name), yaml))
            }
            Err(_) => out.failed.push((name, k.file_name.map(|f| bases.join(f)))),
        }
    }
    // RBAC and webhook configurations from `// +kubebuilder:` markers (written only when
    // there are such markers). They do not depend on the CRDs.
    let marker_failure =
        |diags: Vec<Diagnostic>, what: &str, file: Option<PathBuf>, out: &mut Output| {
            for d in diags {
                out.refusals.push((d, vec![what.to_string()]));
            }
            out.failed.push((what.to_string(), file));
            out.marker_errors = true;
        };
    match super::markers::collect(sources) {
        Err(diags) => marker_failure(diags, "RBAC and webhook configurations", None, &mut out),
        Ok(markers) => {
            let role = opts.output_dir.join(layout::RBAC_ROLE);
            match super::rbac::generate(&markers, opts.namespaced) {
                Ok(Some(text)) => out.files.push((role, text)),
                Ok(None) => {}
                Err(diags) => marker_failure(diags, layout::RBAC_ROLE, Some(role), &mut out),
            }
            let hooks = opts.output_dir.join(layout::WEBHOOK_MANIFESTS);
            match super::webhook::generate(&markers) {
                Ok(Some(text)) => out.files.push((hooks, text)),
                Ok(None) => {}
                Err(diags) => {
                    marker_failure(diags, layout::WEBHOOK_MANIFESTS, Some(hooks), &mut out)
                }
            }
            out.warnings.extend(super::rbac::verb_warnings(&markers));
            out.warnings
                .extend(super::dangerous::unknown_checks(&markers));
            let dangerous = super::dangerous::warnings(&markers);
            if opts.strict && !dangerous.is_empty() {
                marker_failure(
                    dangerous,
                    "RBAC and webhook configurations (--strict)",
                    None,
                    &mut out,
                );
            } else {
                out.warnings.extend(dangerous);
            }
        }
    }
    out.files.sort_by(|a, b| a.0.cmp(&b.0));
    out
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
            ..Default::default()
        }
    }

    #[test]
    fn many_kinds_give_the_same_files_as_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), PARALLEL_MIN_KINDS + 8);
        let opts = options(dir.path());
        let sources = SourceSet::load(&opts.paths).unwrap();
        let one = generate_from(&opts, &sources, 1);
        assert_eq!(
            one.files.len(),
            PARALLEL_MIN_KINDS + 8 + 1,
            "CRDs and role.yaml"
        );
        assert_eq!(generate(&opts).unwrap(), one);
    }

    #[test]
    fn a_failing_kind_leaves_the_other_kinds_and_rbac_generated_on_every_thread() {
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), PARALLEL_MIN_KINDS + 8);
        std::fs::write(
            dir.path().join("src/k7.rs"),
            "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"g.example.com\", version = \"v1\", kind = \"K7\")]\n\
             pub struct K7Spec { #[schemars(schema_with = \"custom\")] pub n: i32 }\n\
             fn custom(g: &mut schemars::SchemaGenerator) -> schemars::Schema { if N > 0 { g.subschema_for::<i64>() } else { g.subschema_for::<i32>() } }\n\
             const N: i32 = 1;\n",
        )
        .unwrap();
        let opts = Options {
            evaluate: Evaluate::Static,
            ..options(dir.path())
        };
        let out = generate(&opts).unwrap();
        let sources = SourceSet::load(&opts.paths).unwrap();
        assert_eq!(generate_from(&opts, &sources, 1), out);
        assert_eq!(
            out.files.len(),
            PARALLEL_MIN_KINDS + 7 + 1,
            "{:?}",
            out.failed
        );
        assert!(out.files.iter().any(|(p, _)| p.ends_with("rbac/role.yaml")));
        assert_eq!(
            out.failed,
            [(
                "K7.g.example.com".to_string(),
                Some(PathBuf::from("config/crd/bases/g.example.com_k7s.yaml"))
            )]
        );
        assert_eq!(out.refusals.len(), 1, "{:?}", out.refusals);
        assert_eq!(out.refusals[0].0.cause, Cause::NeedsCompile);
        assert_eq!(out.refusals[0].1, ["K7.g.example.com"]);
        assert!(
            out.notes.is_empty(),
            "static: nothing compiled: {:?}",
            out.notes
        );
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

/// The reason each compiled kind's note gives.
#[cfg(test)]
mod compiled_because_tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_compiled_kind_has_a_reason() {
        let hand = Diagnostic::new(
            Path::new("src/lib.rs"),
            5,
            12,
            format!(
                "{}`Dur` implements `JsonSchema` by hand (src/lib.rs:9), and rsbuilder does not run that code",
                crate::manifests::crd::derive::HAND_WRITTEN
            ),
        )
        .needs_compile();
        assert_eq!(
            compiled_because::<()>(&Err(vec![hand]), Evaluate::Auto),
            "hand-written schema: compiled, because src/lib.rs:5: `Dur` implements `JsonSchema` by hand (src/lib.rs:9), and rsbuilder does not run that code"
        );
        let computed =
            Diagnostic::new(Path::new("src/a.rs"), 3, 1, "a computed default").needs_compile();
        assert_eq!(
            compiled_because::<()>(&Err(vec![computed]), Evaluate::Auto),
            "because src/a.rs:3: a computed default"
        );
        assert_eq!(
            compiled_because::<()>(&Ok(()), Evaluate::Compile),
            "because of --evaluate compile"
        );
        // Before: an invalid static result under --evaluate compile gave an empty reason.
        let invalid = Diagnostic::new(Path::new("src/a.rs"), 7, 1, "not valid");
        assert_eq!(
            compiled_because::<()>(&Err(vec![invalid]), Evaluate::Compile),
            "because of --evaluate compile (statically: src/a.rs:7: not valid)"
        );
    }
}
