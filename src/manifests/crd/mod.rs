//! The static CRD engine: from parsed Rust sources to the `CustomResourceDefinition` that
//! kube-derive's `CustomResourceExt::crd()` returns at runtime (kube 5, schemars 1.2.3,
//! k8s-openapi 0.29 with `v1_37`).
//!
//! The pipeline, one module per idea:
//! - [`resolve`]: the module tree of the sources and rustc-like path resolution
//!   (`use` items, `crate::`/`self::`/`super::`, re-exports, type aliases).
//! - `kube_attrs`: `#[kube(...)]` on a `#[derive(CustomResource)]` type, as kube-derive
//!   parses it.
//! - `attrs`: the `#[schemars]`, `#[validate]` and `#[garde]` attributes, parsed the way
//!   schemars_derive parses them.
//! - `statics`: regexes held in lazily built statics, as validation attributes name them.
//! - `known`: std, serde_json and k8s-openapi types, whose schemas are asked from schemars
//!   itself.
//! - `derive`: what `#[derive(JsonSchema)]` (and kube-derive's `KubeSchema`) would emit for the
//!   user's own types.
//! - `eval`: static evaluation of the Rust expressions that defaults and attribute values are
//!   written with.
//! - `defaults`: `#[serde(default)]` values, evaluated and serialized.
//! - `assemble`: the transforms `crd()` runs and the typed CRD object, multi-version merging.
//! - `apiserver_rules`: the API server's validation of the derived CRD, for the rules a Rust
//!   type can break.
//! - [`storage`]: which version of a kind is stored when the crate merges versions at run
//!   time (`merge_crds(…, "v1")`, `[package.metadata.rsbuilder]`, a flag).
//!
//! Every kind (all versions of one group and kind) is derived on its own: a kind that cannot
//! be derived gets its diagnostics and stops no other kind ([`KindOutcome`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::cfg::Cfg;
use super::diag::Diagnostic;
use super::source::SourceSet;

pub mod apiserver_rules;
pub mod assemble;
pub mod attrs;
pub mod defaults;
pub mod derive;
pub mod eval;
pub mod known;
pub mod kube_attrs;
pub mod resolve;
pub mod statics;
pub mod storage;

/// One CRD derived from the sources.
#[derive(Debug, Clone)]
pub struct GeneratedCrd {
    /// The CRD object, as kube-derive's `crd()` builds it (all versions of the kind merged).
    pub crd: CustomResourceDefinition,
    /// `<group>_<plural>.yaml`, the file name controller-gen and Kubebuilder use under
    /// `config/crd/bases/`.
    pub file_name: String,
}

/// One `#[derive(CustomResource)]` of a kind: where it is written and how code outside the
/// crate names the root type kube-derive generates for it (what a compiled probe calls
/// `crd()` on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSite {
    /// `#[kube(version)]` (empty when the attribute could not be read).
    pub version: String,
    /// The file of the spec type.
    pub file: PathBuf,
    /// 1-based line of the spec type's name.
    pub line: usize,
    /// The crate root file whose module tree declares it (`src/lib.rs`, `src/main.rs`, or a
    /// lone file given with `--paths`).
    pub crate_root: PathBuf,
    /// Module path from that root and the root type's name (`["api", "v1", "Foo"]`): the
    /// `root` of `#[kube]`, else its `kind`.
    pub rust_path: Vec<String>,
    /// Why that path cannot be named from outside the crate (a module or the spec type that
    /// is not `pub`), if so.
    pub private: Option<String>,
}

/// The outcome of one kind: every version of one (group, kind), merged into one CRD, or the
/// diagnostics that stop it.
#[derive(Debug, Clone)]
pub struct KindOutcome<T = GeneratedCrd> {
    /// `#[kube(group)]` (empty when unreadable).
    pub group: String,
    /// `#[kube(kind)]` (the spec type's name when unreadable).
    pub kind: String,
    /// Its versions, in source order.
    pub versions: Vec<VersionSite>,
    /// `<group>_<plural>.yaml`, also for a failed kind whose `#[kube]` attributes could be
    /// read (its old file is then kept, not reported stale).
    pub file_name: Option<String>,
    /// The storage version when a `merge_crds` call, the metadata or a flag chose it (`None`:
    /// the `#[kube(storage)]` attributes did, or there is one version).
    pub storage: Option<storage::StorageChoice>,
    /// The CRD, or every diagnostic of this kind, sorted (a diagnostic in a type that several
    /// kinds use is in each of them).
    pub result: Result<T, Vec<Diagnostic>>,
}

impl<T> KindOutcome<T> {
    /// `Kind.group`, as the API server's resource names read (`Foo.example.com`).
    pub fn name(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// The same outcome with the CRD mapped (serialized, say).
    pub fn map<U>(self, f: impl FnOnce(T) -> Result<U, Vec<Diagnostic>>) -> KindOutcome<U> {
        KindOutcome {
            group: self.group,
            kind: self.kind,
            versions: self.versions,
            file_name: self.file_name,
            storage: self.storage,
            result: self.result.and_then(f),
        }
    }
}

/// A derived CRD that knows its file name under `crd/bases`.
pub trait CrdFile {
    /// `<group>_<plural>.yaml`.
    fn file_name(&self) -> &str;
}

impl CrdFile for GeneratedCrd {
    fn file_name(&self) -> &str {
        &self.file_name
    }
}

impl CrdFile for (String, String) {
    fn file_name(&self) -> &str {
        &self.0
    }
}

/// What a run decides beyond the sources' attributes.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Storage versions chosen outside the `#[kube(storage)]` attributes, by `Kind.group`
    /// (from `[package.metadata.rsbuilder]` or a flag; see [`storage`]). `merge_crds` calls
    /// in the sources are found by the engine itself.
    pub storage: BTreeMap<String, storage::StorageChoice>,
    /// Sources searched for `merge_crds(…, "vN")` calls besides the ones derived from
    /// (`build.rs`): `(path, text)`.
    pub extra_sources: Vec<(PathBuf, String)>,
    /// Kinds served by the project's aggregated API server (PROJECT's `apiServer` entries of
    /// `rsbuilder create apiserver`), by `(group, kind)`: their `#[derive(CustomResource)]`
    /// only describes the kind to the server, so they get no CRD file.
    pub served: std::collections::BTreeSet<(String, String)>,
}

/// Finds every `#[derive(CustomResource)]` in `sources` and builds each kind's CRD, every
/// kind on its own: one outcome per (group, kind), sorted by kind name, versions merged with
/// `kube::core::crd::merge_crds` semantics (the storage version from the attributes, a
/// `merge_crds` call of the crate, or `settings`). A kind with any diagnostic has no CRD;
/// kinds that would make the same CRD name all fail. Never panics.
pub fn derive_kinds(sources: &SourceSet, settings: &Settings) -> Vec<KindOutcome> {
    let mut kinds = derive_share(sources, Share::ALL, settings, Ok);
    finish_outcomes(sources, &mut kinds);
    kinds
}

/// Finds every `#[derive(CustomResource)]` in `sources` and builds its CRD, all or nothing.
///
/// Returns the CRDs sorted by file name, several versions of one (group, kind) merged into one
/// CRD with `kube::core::crd::merge_crds` semantics. When any kind fails, returns every
/// diagnostic of the run (file:line:column, reason, fix), sorted and each once; never panics.
/// [`derive_kinds`] gives the outcome of each kind.
pub fn crds_from_sources(sources: &SourceSet) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
    all_or_nothing(derive_kinds(sources, &Settings::default()))
}

/// The CRDs of `outcomes` sorted by file name, or every diagnostic (sorted, each once) when
/// any kind failed.
pub fn all_or_nothing<T: CrdFile>(
    outcomes: Vec<KindOutcome<T>>,
) -> Result<Vec<T>, Vec<Diagnostic>> {
    let mut crds = Vec::new();
    let mut diags = Vec::new();
    for k in outcomes {
        match k.result {
            Ok(c) => crds.push(c),
            Err(d) => diags.extend(d),
        }
    }
    if !diags.is_empty() {
        return Err(sorted(diags));
    }
    crds.sort_by(|a, b| a.file_name().cmp(b.file_name()));
    Ok(crds)
}

/// The diagnostics of the failed kinds, each once, with the names of the kinds it fails
/// (sorted): a problem in a type several kinds use is reported once, naming them all.
pub fn refusals<T>(outcomes: &[KindOutcome<T>]) -> Vec<(Diagnostic, Vec<String>)> {
    let mut by_diag: Vec<(Diagnostic, Vec<String>)> = Vec::new();
    let mut all: Vec<(&Diagnostic, String)> = Vec::new();
    for k in outcomes {
        if let Err(diags) = &k.result {
            for d in diags {
                all.push((d, k.name()));
            }
        }
    }
    all.sort_by(|a, b| diag_order(a.0, b.0).then_with(|| a.1.cmp(&b.1)));
    for (d, kind) in all {
        match by_diag.last_mut() {
            Some((last, kinds)) if last == d => {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            _ => by_diag.push((d.clone(), vec![kind])),
        }
    }
    by_diag
}

/// Fails every kind whose CRD has the same name (and file) as another kind's: the API server
/// keeps one CRD per name, and one file would silently replace the other. Called on the
/// final outcomes (after any compiled kinds joined them); the scan re-reads the `#[kube]`
/// attributes only when file names clash.
pub fn fail_name_clashes<T: CrdFile>(sources: &SourceSet, outcomes: &mut [KindOutcome<T>]) {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for k in outcomes.iter() {
        if let Ok(c) = &k.result {
            *count.entry(c.file_name().to_string()).or_default() += 1;
        }
    }
    if count.values().all(|n| *n < 2) {
        return;
    }
    let clashes = crd_name_clashes(sources);
    for k in outcomes.iter_mut() {
        let Ok(c) = &k.result else { continue };
        let file = c.file_name().to_string();
        if count.get(&file).copied().unwrap_or(0) < 2 {
            continue;
        }
        let mut diags: Vec<Diagnostic> = clashes
            .iter()
            .filter(|(f, _)| *f == file)
            .map(|(_, d)| d.clone())
            .collect();
        if diags.is_empty() {
            // Not expected: clashing file names come from clashing (group, plural)s.
            diags.push(Diagnostic::new(
                std::path::Path::new("."),
                1,
                1,
                format!("two CRDs have the same file name {file} under crd/bases"),
            ));
        }
        k.result = Err(sorted(diags));
    }
}

/// Diagnostics for kinds whose CRDs would have the same name, `<plural>.<group>` (and file,
/// `<group>_<plural>.yaml`): two kinds of a group with the same plural (`--plural bars` on
/// `Foo` next to a kind `Bar`), or kinds that differ only in case. kube-derive builds both
/// without complaint. One diagnostic at every kind after the first, naming the first, with the
/// file name the kinds share.
fn crd_name_clashes(sources: &SourceSet) -> Vec<(String, Diagnostic)> {
    let krate = resolve::Crate::build(sources);
    let mut deriver = derive::Deriver::new(&krate);
    let mut out = Vec::new();
    // (group, plural) → the first kind seen, and where.
    let mut first: std::collections::HashMap<(String, String), (String, String)> =
        std::collections::HashMap::new();
    for (m, ident, attrs_) in custom_resources(&krate) {
        let Ok(k) = kube_attrs::parse(ident, attrs_) else {
            continue;
        };
        let (_, plural) = k.names();
        let here = format!(
            "{}:{}",
            krate.modules[m].file.path.display(),
            ident.span().start().line
        );
        match first.entry((k.group.clone(), plural.clone())) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((k.kind.clone(), here));
            }
            std::collections::hash_map::Entry::Occupied(o) if o.get().0 != k.kind => {
                let (other, at) = o.get().clone();
                deriver.error(
                    m,
                    ident.span(),
                    format!(
                        "kind `{}` and kind `{other}` ({at}) both make the CRD `{plural}.{}` (file {}_{plural}.yaml): the API server keeps one CRD per name",
                        k.kind, k.group, k.group
                    ),
                    Some("give one of them another plural, #[kube(plural = \"...\")], or another kind name".into()),
                );
                let d = deriver.diags.pop().expect("just recorded");
                out.push((format!("{}_{plural}.yaml", k.group), d));
            }
            std::collections::hash_map::Entry::Occupied(_) => {}
        }
    }
    out
}

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

/// Sorts the outcomes by kind name and fails kinds whose CRD names clash.
fn finish_outcomes<T: CrdFile>(sources: &SourceSet, kinds: &mut [KindOutcome<T>]) {
    kinds.sort_by(|a, b| (&a.group, &a.kind).cmp(&(&b.group, &b.kind)));
    fail_name_clashes(sources, kinds);
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
struct Share {
    index: usize,
    of: usize,
}

impl Share {
    const ALL: Share = Share { index: 0, of: 1 };

    /// Whether the custom resource with these `#[kube]` attributes is this share's, by the
    /// string values of its `group` and `kind` (read from the tokens; the full attribute parse
    /// happens once, on the owning thread). One without them belongs to share 0, which
    /// reports the error.
    fn owns(self, attrs_: &[syn::Attribute]) -> bool {
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

/// The value of `key = "..."` in a `#[kube(...)]` attribute, read from its tokens.
fn kube_str(attrs_: &[syn::Attribute], key: &str) -> Option<String> {
    for a in attrs_.iter().filter(|a| a.path().is_ident("kube")) {
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let tokens: Vec<proc_macro2::TokenTree> = list.tokens.clone().into_iter().collect();
        for w in tokens.windows(3) {
            if let [
                proc_macro2::TokenTree::Ident(k),
                proc_macro2::TokenTree::Punct(eq),
                proc_macro2::TokenTree::Literal(lit),
            ] = w
                && k == key
                && eq.as_char() == '='
                && let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string())
            {
                return Some(s.value());
            }
        }
    }
    None
}

/// One `#[derive(CustomResource)]` on its way to its kind: where it is, its one-version CRD
/// when it could be built, and its diagnostics.
struct Version {
    site: VersionSite,
    file_name: Option<String>,
    found: Option<Found>,
    diags: Vec<Diagnostic>,
}

/// A custom resource of a share, before or after its derivation.
enum Pending<'k> {
    /// To derive when its kind's turn comes: `(module, ident, attributes, what they say)`.
    Derive(
        resolve::ModId,
        &'k syn::Ident,
        &'k [syn::Attribute],
        Box<kube_attrs::KubeAttrs>,
    ),
    /// Derived already (its kind was known only from the outcome), or failed without a
    /// derivation (behind an undecided `cfg`).
    Done(Box<Version>),
}

/// The `(group, kind)` a custom resource whose `#[kube]` attributes do not parse (or whose
/// derivation fails) is filed under: the attribute strings read from the tokens, the kind
/// falling back to the spec type's name.
fn fallback_key(ident: &syn::Ident, attrs_: &[syn::Attribute]) -> (String, String) {
    (
        kube_str(attrs_, "group").unwrap_or_default(),
        kube_str(attrs_, "kind").unwrap_or_else(|| ident.to_string()),
    )
}

/// Derives one custom resource: its `(group, kind)` and its [`Version`]. `parsed` is what
/// [`kube_attrs::parse`] made of `attrs_`, read once by the caller (darling's parse clones
/// every attribute of the item; a large crate has thousands of custom resources).
fn derive_version(
    krate: &resolve::Crate<'_>,
    deriver: &mut derive::Deriver<'_, '_>,
    m: resolve::ModId,
    ident: &syn::Ident,
    attrs_: &[syn::Attribute],
    parsed: syn::Result<kube_attrs::KubeAttrs>,
) -> ((String, String), Version) {
    let file_name = parsed.as_ref().ok().map(|k| {
        let (_, plural) = k.names();
        format!("{}_{plural}.yaml", k.group)
    });
    let start = deriver.diags.len();
    let found = assemble::one_version(deriver, m, ident, parsed);
    let diags = deriver.diags.split_off(start);
    let (group, kind, version, root) = match &found {
        Some(f) => (
            f.attrs.group.clone(),
            f.attrs.kind.clone(),
            f.attrs.version.clone(),
            f.attrs.root.clone().unwrap_or_else(|| f.attrs.kind.clone()),
        ),
        None => {
            let (group, kind) = fallback_key(ident, attrs_);
            let root = kube_str(attrs_, "root").unwrap_or_else(|| kind.clone());
            (
                group,
                kind,
                kube_str(attrs_, "version").unwrap_or_default(),
                root,
            )
        }
    };
    let site = version_site(krate, m, ident, version, root);
    (
        (group, kind),
        Version {
            site,
            file_name,
            found,
            diags,
        },
    )
}

/// Derives the kinds of `share`: one outcome per (group, kind), unsorted, each CRD passed
/// through `finish` (serialized, say) as soon as its versions are merged. Each custom
/// resource is derived with its own diagnostics (the deriver replays a shared type's
/// diagnostics for every kind that uses it), so one kind's error fails no other.
///
/// The custom resources are grouped by kind before any is derived, and each kind is derived,
/// merged and finished before the next: the CRD objects of all kinds are never alive together
/// (they are most of a large crate's memory; docs/benchmarks.md).
fn derive_share<T>(
    sources: &SourceSet,
    share: Share,
    settings: &Settings,
    mut finish: impl FnMut(GeneratedCrd) -> Result<T, Vec<Diagnostic>>,
) -> Vec<KindOutcome<T>> {
    let krate = resolve::Crate::build(sources);
    let mut deriver = derive::Deriver::new(&krate);
    // Source order within each kind, as the versions are pushed in it.
    let mut kinds: BTreeMap<(String, String), Vec<Pending<'_>>> = BTreeMap::new();
    for (m, ident, attrs_) in custom_resources(&krate) {
        if !share.owns(attrs_) {
            continue;
        }
        let key = fallback_key(ident, attrs_);
        match kube_attrs::parse(ident, attrs_) {
            // The kind whatever the derivation's outcome: derived in its kind's turn.
            Ok(k) if (&k.group, &k.kind) == (&key.0, &key.1) => {
                kinds
                    .entry(key)
                    .or_default()
                    .push(Pending::Derive(m, ident, attrs_, Box::new(k)));
            }
            // Unreadable attributes (no derivation happens), or a kind the attributes spell
            // in a way the token scan reads differently: filed by the outcome.
            parsed => {
                let (key, v) = derive_version(&krate, &mut deriver, m, ident, attrs_, parsed);
                kinds
                    .entry(key)
                    .or_default()
                    .push(Pending::Done(Box::new(v)));
            }
        }
    }
    // A custom resource behind a `cfg` rsbuilder cannot decide fails as its own kind.
    for (m, ident, attrs_, why) in krate.undecided_custom_resources() {
        if !share.owns(attrs_) || is_external(&krate.modules[m]) {
            continue;
        }
        let (group, kind) = fallback_key(ident, attrs_);
        let root = kube_str(attrs_, "root").unwrap_or_else(|| kind.clone());
        let version = kube_str(attrs_, "version").unwrap_or_default();
        let site = version_site(&krate, m, ident, version, root);
        let file_name = kube_attrs::parse(ident, attrs_).ok().map(|k| {
            let (_, plural) = k.names();
            format!("{}_{plural}.yaml", k.group)
        });
        kinds
            .entry((group, kind))
            .or_default()
            .push(Pending::Done(Box::new(Version {
                site,
                file_name,
                found: None,
                diags: vec![why.diagnostic(&format!("the custom resource `{ident}`"))],
            })));
    }
    let merge_calls = storage::merge_calls(&krate, &settings.extra_sources);
    let mut out = Vec::with_capacity(kinds.len());
    for ((group, kind), pending) in kinds {
        let versions: Vec<Version> = pending
            .into_iter()
            .map(|p| match p {
                Pending::Derive(m, ident, attrs_, k) => {
                    derive_version(&krate, &mut deriver, m, ident, attrs_, Ok(*k)).1
                }
                Pending::Done(v) => *v,
            })
            .collect();
        let sites: Vec<VersionSite> = versions.iter().map(|v| v.site.clone()).collect();
        let file_name = versions.iter().find_map(|v| v.file_name.clone());
        let mut diags: Vec<Diagnostic> = Vec::new();
        let mut founds = Vec::new();
        for v in versions {
            diags.extend(v.diags);
            match v.found {
                Some(f) => founds.push(f),
                None if diags.is_empty() => diags.push(Diagnostic::new(
                    &v.site.file,
                    v.site.line,
                    1,
                    format!(
                        "internal error: the version {} of {kind} failed without a diagnostic",
                        v.site.version
                    ),
                )),
                None => {}
            }
        }
        let name = format!("{kind}.{group}");
        let mut storage = None;
        let result = match storage::decide(&name, &sites, &merge_calls, settings) {
            Err(d) => Err(vec![d]),
            Ok(choice) => {
                storage = choice;
                if diags.is_empty() {
                    let start = deriver.diags.len();
                    let merged =
                        assemble::merge_kind(&mut deriver, &group, &kind, founds, storage.as_ref());
                    let merge_diags = deriver.diags.split_off(start);
                    match merged {
                        Some(crd) if merge_diags.is_empty() => Ok(crd),
                        _ => Err(sorted(merge_diags)),
                    }
                } else {
                    Err(sorted(diags))
                }
            }
        };
        let result = match result {
            Err(d) if d.is_empty() => Err(vec![Diagnostic::new(
                sites
                    .first()
                    .map_or(std::path::Path::new("."), |s| s.file.as_path()),
                sites.first().map_or(1, |s| s.line),
                1,
                format!("internal error: {kind}.{group} failed without a diagnostic"),
            )]),
            other => other,
        };
        out.push(KindOutcome {
            group,
            kind,
            versions: sites,
            file_name,
            storage,
            result: result.and_then(&mut finish),
        });
    }
    out
}

/// Where the custom resource `ident` of module `m` is, and how outside code names its root
/// type `root`.
fn version_site(
    krate: &resolve::Crate<'_>,
    m: resolve::ModId,
    ident: &syn::Ident,
    version: String,
    root: String,
) -> VersionSite {
    let module = &krate.modules[m];
    let mut rust_path = module.path.clone();
    rust_path.push(root);
    let mut private = None;
    let spec_public = match krate.item(m, &ident.to_string()) {
        Some(resolve::LocalItem::Struct(s)) => matches!(s.vis, syn::Visibility::Public(_)),
        Some(resolve::LocalItem::Enum(e)) => matches!(e.vis, syn::Visibility::Public(_)),
        _ => false,
    };
    if !spec_public {
        private = Some(format!(
            "`{ident}` is not `pub`, so the type kube-derive generates beside it is private"
        ));
    }
    let mut cur = Some(m);
    while let Some(id) = cur {
        let md = &krate.modules[id];
        if !md.public && private.is_none() {
            private = Some(format!("module `{}` is not `pub`", md.path.join("::")));
        }
        cur = md.parent;
    }
    // A private module whose kinds a `pub use` re-exports: outside code names them that way.
    if spec_public
        && private.is_some()
        && let Some(path) = krate.public_path(m, rust_path.last().map_or("", String::as_str))
    {
        rust_path = path;
        private = None;
    }
    VersionSite {
        version,
        file: module.file.path.clone(),
        line: ident.span().start().line.max(1),
        crate_root: krate.modules[module.root].file.path.clone(),
        rust_path,
        private,
    }
}

/// Whether `module` is in the tool-owned module of other projects' types
/// (`crate::api::external`, [`crate::model::layout::external`]): `create api
/// --external-api-crd` generates `#[derive(CustomResource)]` types there from a CRD another
/// project installs, so no CRD is written for them.
fn is_external(module: &resolve::Module<'_>) -> bool {
    module
        .path
        .starts_with(&crate::model::layout::external::MODULE.map(String::from))
}

/// Every struct or enum of the crate with `#[derive(CustomResource)]`, in module and source
/// order (but those of [`is_external`] modules): `(module, its ident, its attributes)`.
fn custom_resources<'k>(
    krate: &'k resolve::Crate<'_>,
) -> impl Iterator<Item = (usize, &'k syn::Ident, &'k [syn::Attribute])> {
    krate.modules.iter().enumerate().flat_map(|(m, module)| {
        let decided = module.undecided.is_none() && !is_external(module);
        module
            .type_order
            .iter()
            .filter_map(|n| module.types.get(n))
            .filter_map(move |item| {
                let (ident, attrs_) = match item {
                    resolve::LocalItem::Struct(s) => (&s.ident, &s.attrs[..]),
                    resolve::LocalItem::Enum(e) => (&e.ident, &e.attrs[..]),
                    resolve::LocalItem::Alias(_) => return None,
                };
                (decided && attrs::derives(attrs_).iter().any(|d| d == "CustomResource"))
                    .then_some((m, ident, attrs_))
            })
    })
}

fn diag_order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
    (&a.file, a.line, a.column, &a.message, &a.help)
        .cmp(&(&b.file, b.line, b.column, &b.message, &b.help))
}

/// Diagnostics in file, line, column, message order, without repeats (a shared type's error
/// is found once per kind, or once per thread, that uses it).
pub fn sorted(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags.sort_by(diag_order);
    diags.dedup();
    diags
}

use assemble::Found;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::path::Path;

    const HEADER: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

    fn run(files: &[(&str, &str)]) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
        let set = SourceSet {
            files: files
                .iter()
                .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
                .collect(),
        };
        crds_from_sources(&set)
    }

    fn errors(files: &[(&str, &str)]) -> String {
        run(files)
            .unwrap_err()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn spec_schema(c: &GeneratedCrd) -> Value {
        let v = serde_json::to_value(&c.crd).unwrap();
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
    }

    const CR: &str = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

    #[test]
    fn resolves_types_across_modules_aliases_and_globs() {
        let crds = run(&[
            ("src/lib.rs", "pub mod api;\npub mod shared;\n"),
            ("src/shared.rs", "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Port { pub number: u16 }\npub type Ports = Vec<Port>;\n"),
            ("src/api/mod.rs", "pub mod v1;\n"),
            (
                "src/api/v1.rs",
                &format!("use crate::shared::*;\nuse k8s_openapi::apimachinery::pkg::util::intstr::IntOrString as IOS;\n{CR}pub struct ThingSpec {{ pub ports: Ports, pub target: super::super::shared::Port, pub port: Option<IOS> }}\n"),
            ),
        ])
        .unwrap();
        assert_eq!(crds.len(), 1);
        assert_eq!(crds[0].file_name, "t.example.com_things.yaml");
        let spec = spec_schema(&crds[0]);
        assert_eq!(
            spec["properties"]["ports"]["items"]["properties"]["number"]["format"],
            "uint16"
        );
        assert_eq!(spec["properties"]["target"]["required"], json!(["number"]));
        let port = &spec["properties"]["port"];
        assert_eq!(port["nullable"], true);
        assert_eq!(port["x-kubernetes-int-or-string"], true);
        assert!(port.get("type").is_none() && port.get("anyOf").is_none());
    }

    #[test]
    fn defaults_are_evaluated_or_named() {
        let crds = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{\n  #[serde(default = \"three\")] pub n: i32,\n  #[serde(default)] pub mode: Mode,\n  #[serde(default)] pub names: Vec<String>,\n}}\nfn three() -> i32 {{ 3 }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, Default)]\npub enum Mode {{ #[default] Fast, Slow }}\n"),
        )])
        .unwrap();
        let spec = spec_schema(&crds[0]);
        assert_eq!(spec["properties"]["n"]["default"], 3);
        assert_eq!(spec["properties"]["mode"]["default"], "Fast");
        assert_eq!(spec["properties"]["names"]["default"], json!([]));
        assert!(spec.get("required").is_none());
        let err = errors(&[(
            "x.rs",
            &format!(
                "{CR}pub struct ThingSpec {{ #[serde(default = \"computed\")] pub n: i32 }}\nfn computed() -> i32 {{ std::process::id() as i32 }}\n"
            ),
        )]);
        assert!(
            err.contains("x.rs:6:") && err.contains("`std::process::id()` (x.rs:7)"),
            "{err}"
        );
    }

    #[test]
    fn unsupported_shapes_are_errors_with_positions() {
        let err = errors(&[(
            "x.rs",
            &format!(
                "{CR}pub struct ThingSpec {{ pub v: Value }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(untagged)]\npub enum Value {{ Int(i64), Text(String) }}\n"
            ),
        )]);
        assert!(
            err.contains("x.rs:9:10: the untagged enum `Value` has no object variant"),
            "{err}"
        );
        assert!(err.contains("without `type`"), "{err}");

        let err = errors(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec<T> { pub t: T }\n",
        )]);
        assert!(
            err.contains("x.rs:6:12: `ThingSpec` is a generic spec type"),
            "{err}"
        );
        // Generic helper types with concrete arguments are fine, as with kube-derive.
        let ok = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ pub w: Wrap<String> }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Wrap<T> {{ pub t: T }}\n"),
        )])
        .unwrap();
        assert_eq!(
            spec_schema(&ok[0])["properties"]["w"]["properties"]["t"]["type"],
            "string"
        );

        let err = errors(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ #[schemars(ranged(min = 1))] pub n: i32 }}\n"),
        )]);
        assert!(err.contains("unknown schemars attribute `ranged`"), "{err}");

        let diags = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ pub n: time::OffsetDateTime }}\n"),
        )])
        .unwrap_err();
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0]
                .message
                .contains("has no schema rsbuilder can compute statically"),
            "{diags:?}"
        );
        assert!(
            diags[0]
                .help
                .as_deref()
                .unwrap_or_default()
                .contains("#[schemars(with = "),
            "{diags:?}"
        );
        assert_eq!(diags[0].cause, crate::manifests::diag::Cause::NeedsCompile);
    }

    #[test]
    fn third_party_types_resolve_through_use_and_ask_schemars() {
        let crds = run(&[(
            "x.rs",
            &format!(
                "use chrono::prelude::*;\nuse indexmap::IndexMap as Ordered;\nuse uuid::Uuid;\n{CR}pub struct ThingSpec {{\n  pub at: DateTime<Utc>,\n  pub day: chrono::naive::NaiveDate,\n  pub id: Option<Uuid>,\n  pub labels: Ordered<String, i32>,\n  pub few: arrayvec::ArrayVec<String, 3>,\n  pub small: smallvec::SmallVec<[u8; 8]>,\n  #[serde(default)] pub zero: Uuid,\n}}\n"
            ),
        )])
        .unwrap();
        let props = &spec_schema(&crds[0])["properties"];
        assert_eq!(
            props["at"],
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(props["day"], json!({"type": "string", "format": "date"}));
        assert_eq!(
            props["id"],
            json!({"type": "string", "format": "uuid", "nullable": true})
        );
        assert_eq!(
            props["labels"],
            json!({"type": "object", "additionalProperties": {"type": "integer", "format": "int32"}})
        );
        assert_eq!(props["few"]["maxItems"], 3);
        assert_eq!(props["few"]["items"], json!({"type": "string"}));
        assert_eq!(props["small"]["items"]["format"], "uint8");
        assert_eq!(
            props["zero"]["default"],
            "00000000-0000-0000-0000-000000000000"
        );
        let err = errors(&[(
            "x.rs",
            &format!(
                "const N: usize = 3;\n{CR}pub struct ThingSpec {{ pub few: arrayvec::ArrayVec<String, N> }}\n"
            ),
        )]);
        assert!(
            err.contains("the capacity of `arrayvec::ArrayVec<String,N>`"),
            "{err}"
        );
    }

    #[test]
    fn api_server_rules_point_at_the_field_through_flatten_variants_and_maps() {
        let err = errors(&[(
            "x.rs",
            &format!(
                "{CR}pub struct ThingSpec {{
    #[serde(flatten)]
    pub base: Base,
    pub mode: Mode,
    pub map: std::collections::BTreeMap<String, Vec<Item>>,
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Base {{
    pub raw: serde_json::Value,
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Mode {{
    Fast {{
        blob: serde_json::Value,
    }},
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Item {{
    pub unit: (),
}}
"
            ),
        )]);
        let at: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("x.rs:"))
            .map(|l| l.split(": ").next().unwrap())
            .collect();
        assert_eq!(at, ["x.rs:14:9", "x.rs:19:9", "x.rs:24:9"], "{err}");
        assert!(err.contains("at .spec.raw"), "{err}");
        assert!(err.contains("at .spec.mode.Fast.blob"), "{err}");
        assert!(err.contains("at .spec.map.*[*].unit"), "{err}");
    }

    #[test]
    fn schema_modes_and_scale_without_status() {
        let crds = run(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", scale = r#\"{\"specReplicasPath\":\".spec.r\",\"statusReplicasPath\":\".status.r\"}\"#)]\npub struct ThingSpec { pub r: i32 }\n",
        )])
        .unwrap();
        let v = serde_json::to_value(&crds[0].crd).unwrap();
        assert!(v["spec"]["versions"][0].get("subresources").is_none());
        // Without a schema, crd()'s CRD is one the API server refuses.
        let err = errors(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"disabled\")]\npub struct ThingSpec { pub r: i32 }\n",
        )]);
        assert!(
            err.starts_with("x.rs:6:12: version v1 of `ThingSpec`: there is no openAPIV3Schema"),
            "{err}"
        );
        let err = errors(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"manual\")]\npub struct ThingSpec { pub r: i32 }\n",
        )]);
        assert!(
            err.contains("schema = \"manual\"") && err.contains("hand-written"),
            "{err}"
        );
    }

    #[test]
    fn the_external_module_of_other_projects_types_gets_no_crd() {
        let thing = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub r: i32 }\n";
        let certificate = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"cert-manager.io\", version = \"v1\", kind = \"Certificate\", plural = \"certificates\")]\n#[kube(namespaced)]\n#[kube(schema = \"disabled\")]\npub struct CertificateSpec { pub secret_name: String }\n";
        let crds = run(&[
            ("src/lib.rs", "pub mod api;\n"),
            ("src/api/mod.rs", "pub mod external;\npub mod v1;\n"),
            ("src/api/v1.rs", thing),
            ("src/api/external/mod.rs", "pub mod cert_manager_io;\n"),
            ("src/api/external/cert_manager_io/mod.rs", "pub mod v1;\n"),
            ("src/api/external/cert_manager_io/v1.rs", certificate),
        ])
        .unwrap();
        let names: Vec<String> = crds
            .iter()
            .map(|c| c.crd.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["things.t.example.com"]);
        // The same type anywhere else is the crate's own kind, and its missing schema an error.
        let err = errors(&[
            ("src/lib.rs", "pub mod api;\n"),
            ("src/api/mod.rs", "pub mod v1;\n"),
            ("src/api/v1.rs", certificate),
        ]);
        assert!(err.contains("there is no openAPIV3Schema"), "{err}");
    }

    fn yaml(crd: &CustomResourceDefinition) -> Result<String, String> {
        serde_json::to_string_pretty(crd).map_err(|e| e.to_string())
    }

    /// 40 kinds over 4 groups, the kinds of group 0 in two versions (one per module).
    fn many_kinds(extra: &str) -> Vec<(String, String)> {
        let mut files = Vec::new();
        for i in 0..40 {
            let (g, multi) = (i % 4, i % 4 == 0);
            let kind = |ver: &str, storage: bool| {
                format!(
                    "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"g{g}.example.com\", version = \"{ver}\", kind = \"K{i}\", storage = {storage})]\npub struct K{i}Spec {{ pub n{i}: Option<u32> }}\n"
                )
            };
            let mut text = format!("pub mod v1 {{ use super::*;\n{} }}\n", kind("v1", true));
            if multi {
                text.push_str(&format!(
                    "pub mod v2 {{ use super::*;\n{} }}\n",
                    kind("v2", false)
                ));
            }
            files.push((format!("src/k{i}.rs"), text));
        }
        files.push(("src/zz.rs".into(), extra.to_string()));
        files
    }

    fn load(files: &[(String, String)]) -> SourceSet {
        SourceSet {
            files: files
                .iter()
                .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
                .collect(),
        }
    }

    #[test]
    fn threads_share_kinds_without_changing_the_output() {
        let set = load(&many_kinds(""));
        let single: Vec<(String, String)> = crds_from_sources(&set)
            .unwrap()
            .iter()
            .map(|c| (c.file_name.clone(), yaml(&c.crd).unwrap()))
            .collect();
        assert_eq!(single.len(), 40);
        let two_versions = single
            .iter()
            .find(|(f, _)| f == "g0.example.com_k0s.yaml")
            .unwrap();
        assert!(two_versions.1.contains("\"v2\""), "{}", two_versions.1);
        for threads in [1, 2, 3, 7] {
            assert_eq!(
                all_or_nothing(crd_yaml_files(
                    &set,
                    &Cfg::default(),
                    threads,
                    yaml,
                    &Settings::default()
                ))
                .unwrap(),
                single,
                "{threads} threads"
            );
        }
    }

    #[test]
    fn threads_report_the_same_diagnostics() {
        let bad = format!(
            "{CR}pub struct ThingSpec {{ pub n: time::OffsetDateTime }}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\")]\npub struct OtherSpec {{ pub a: String }}\n"
        );
        let set = load(&many_kinds(&bad));
        let single = crds_from_sources(&set).unwrap_err();
        assert_eq!(single.len(), 2, "{single:?}");
        let one = crd_yaml_files(&set, &Cfg::default(), 1, yaml, &Settings::default());
        let three = crd_yaml_files(&set, &Cfg::default(), 3, yaml, &Settings::default());
        assert_eq!(all_or_nothing(three.clone()).unwrap_err(), single);
        type Files = Result<(String, String), Vec<Diagnostic>>;
        let outcome = |kinds: &[KindOutcome<(String, String)>]| -> Vec<(String, Files)> {
            kinds.iter().map(|k| (k.name(), k.result.clone())).collect()
        };
        assert_eq!(outcome(&one), outcome(&three));
        // The 40 good kinds are derived; the two bad ones are not.
        assert_eq!(three.iter().filter(|k| k.result.is_ok()).count(), 40);
        let failed: Vec<String> = three
            .iter()
            .filter(|k| k.result.is_err())
            .map(|k| k.name())
            .collect();
        assert_eq!(failed, ["OtherSpec.t.example.com", "Thing.t.example.com"]);
    }

    #[test]
    fn a_failing_kind_leaves_the_others_derived_and_a_shared_error_is_reported_once() {
        let shared = "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct When { pub at: widgets::Gadget }\n";
        let kind = |k: &str, field: &str| {
            format!(
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"{k}\")]\npub struct {k}Spec {{ {field} }}\n"
            )
        };
        let set = load(&[
            (
                "src/a.rs".into(),
                format!("{shared}{}", kind("Alpha", "pub when: When")),
            ),
            (
                "src/b.rs".into(),
                format!("use crate::a::When;\n{}", kind("Beta", "pub n: i32")),
            ),
            (
                "src/c.rs".into(),
                kind("Gamma", "pub w: Vec<super::a::When>"),
            ),
            (
                "src/lib.rs".into(),
                "pub mod a; pub mod b; pub mod c;\n".into(),
            ),
        ]);
        // Every order of derivation gives each failing kind the shared type's diagnostic.
        let kinds = derive_kinds(&set, &Settings::default());
        let names: Vec<(String, bool)> =
            kinds.iter().map(|k| (k.name(), k.result.is_ok())).collect();
        assert_eq!(
            names,
            [
                ("Alpha.t.example.com".to_string(), false),
                ("Beta.t.example.com".to_string(), true),
                ("Gamma.t.example.com".to_string(), false),
            ]
        );
        let refused = refusals(&kinds);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].0.message.contains("widgets::Gadget"),
            "{}",
            refused[0].0
        );
        assert_eq!(refused[0].1, ["Alpha.t.example.com", "Gamma.t.example.com"]);
        assert_eq!(
            kinds[1].file_name.as_deref(),
            Some("t.example.com_betas.yaml")
        );
        assert_eq!(
            kinds[0].file_name.as_deref(),
            Some("t.example.com_alphas.yaml")
        );
        assert_eq!(kinds[0].versions[0].rust_path, ["a", "Alpha"]);
        assert_eq!(kinds[0].versions[0].private, None);
    }

    #[test]
    fn a_kind_in_a_private_module_is_named_by_its_pub_use_re_export() {
        let kind = |k: &str| {
            format!(
                "use serde::{{Deserialize, Serialize}};\nuse schemars::JsonSchema;\nuse kube::CustomResource;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"{k}\")]\npub struct {k}Spec {{ pub a: String }}\n"
            )
        };
        let set = load(&[
            ("src/gateway.rs".into(), kind("Gateway")),
            ("src/route.rs".into(), kind("Route")),
            ("src/hidden.rs".into(), kind("Hidden")),
            (
                "src/lib.rs".into(),
                "mod gateway;\nmod route;\nmod hidden;\npub use self::gateway::*;\npub use route::Route as HttpRoute;\n".into(),
            ),
        ]);
        let kinds = derive_kinds(&set, &Settings::default());
        let site = |name: &str| {
            let k = kinds.iter().find(|k| k.kind == name).unwrap();
            (
                k.versions[0].rust_path.clone(),
                k.versions[0].private.clone(),
            )
        };
        // A glob re-export of the module, a renamed re-export of the root type.
        assert_eq!(site("Gateway"), (vec!["Gateway".to_string()], None));
        assert_eq!(site("Route"), (vec!["HttpRoute".to_string()], None));
        assert_eq!(
            site("Hidden"),
            (
                vec!["hidden".to_string(), "Hidden".to_string()],
                Some("module `hidden` is not `pub`".to_string())
            )
        );
    }

    #[test]
    fn kinds_making_the_same_crd_name_are_errors() {
        let two = |second: &str| {
            errors(&[
                (
                    "a.rs",
                    "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Foo\", plural = \"bars\")]\npub struct FooSpec { pub a: String }\n",
                ),
                (
                    "b.rs",
                    &format!(
                        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube({second})]\npub struct OtherSpec {{ pub a: String }}\n"
                    ),
                ),
            ])
        };
        assert_eq!(
            two(r#"group = "t.example.com", version = "v1", kind = "Bar""#),
            "b.rs:6:12: kind `Bar` and kind `Foo` (a.rs:6) both make the CRD `bars.t.example.com` (file t.example.com_bars.yaml): the API server keeps one CRD per name\n  help: give one of them another plural, #[kube(plural = \"...\")], or another kind name"
        );
        // Kinds differing only in case have the same default plural.
        let err = two(r#"group = "t.example.com", version = "v2", kind = "BARS", plural = "bars""#);
        assert!(err.contains("kind `BARS` and kind `Foo` (a.rs:6)"), "{err}");
        // Another group, or the same kind in another version, is fine.
        assert!(run(&[
            ("a.rs", &format!("{CR}pub struct ThingSpec {{ pub a: String }}\n")),
            (
                "b.rs",
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"u.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub a: String }\n",
            ),
        ])
        .is_ok());
    }

    #[test]
    fn names_the_api_server_rejects_are_errors() {
        let with = |attrs: &str| {
            errors(&[(
                "x.rs",
                &format!(
                    "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube({attrs})]\npub struct ThingSpec {{ pub a: String }}\n"
                ),
            )])
        };
        let err = with(r#"group = "t.example.com", version = "v1", kind = "Kind 5""#);
        assert!(
            err.contains("x.rs:6:12: #[kube(kind = \"Kind 5\")]"),
            "{err}"
        );
        assert!(err.contains("must be a DNS-1035 label"), "{err}");
        let err = with(r#"group = "t.example.com", version = "v1", kind = "kind-5""#);
        assert!(err.contains("not a Rust identifier"), "{err}");
        let err = with(r#"group = "t.example.com", version = "v1", kind = """#);
        assert!(
            err.contains("the kind lower-cased must not be empty"),
            "{err}"
        );
        let err = with(r#"group = "Bad_Group!", version = "v1", kind = "Thing""#);
        assert!(err.contains("#[kube(group = \"Bad_Group!\")]"), "{err}");
        let err = with(r#"group = "local", version = "v1", kind = "Thing""#);
        assert!(err.contains("must contain at least one dot"), "{err}");
        let err = with(r#"group = "t.example.com", version = "V 1", kind = "Thing""#);
        assert!(err.contains("#[kube(version = \"V 1\")]"), "{err}");
        let err =
            with(r#"group = "t.example.com", version = "v1", kind = "Thing", plural = "../../x""#);
        assert!(err.contains("#[kube(plural = \"../../x\")]"), "{err}");
        let err =
            with(r#"group = "t.example.com", version = "v1", kind = "Thing", shortname = "T""#);
        assert!(err.contains("#[kube(shortname = \"T\")]"), "{err}");
        // The list kind the API server derives must fit a label too.
        let err = with(&format!(
            "group = \"t.example.com\", version = \"v1\", kind = \"{}\"",
            "K".repeat(60)
        ));
        assert!(
            err.contains("the list kind") && err.contains("no more than 63 characters"),
            "{err}"
        );
        // With `root`, the kind needs no identifier shape, only the API server's.
        let ok = run(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"thing-x\", root = \"ThingX\")]\npub struct ThingSpec { pub a: String }\n",
        )])
        .unwrap();
        assert_eq!(ok[0].crd.spec.names.kind, "thing-x");
    }

    #[test]
    fn versions_of_a_kind_must_share_names_and_duplicates_name_both_places() {
        let v = |ver: &str, extra: &str| {
            format!(
                "pub mod {ver} {{ use super::*;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{ver}\", kind = \"Thing\"{extra})]\npub struct ThingSpec {{ pub a: String }} }}\n"
            )
        };
        let err = errors(&[(
            "x.rs",
            &format!(
                "{}{}",
                v("v1alpha1", ", storage = false, shortname = \"th\""),
                v("v1", "")
            ),
        )]);
        assert!(
            err.contains("version v1alpha1 of Thing.t.example.com has plural"),
            "{err}"
        );
        assert!(err.contains("shortnames [\"th\"]"), "{err}");
        let err = errors(&[
            ("a.rs", &v("v1", "")),
            ("b.rs", &v("v1", ", storage = false")),
        ]);
        assert!(
            err.contains("version v1 is declared twice (also by `ThingSpec` at a.rs:7:12)"),
            "{err}"
        );
    }

    #[test]
    fn deep_generic_fields_stay_within_the_limits() {
        let depth = crate::manifests::parse::MAX_ANGLE_DEPTH - 2;
        let ty = format!(
            "{}i32{}",
            "Option<Vec<".repeat(depth / 2),
            ">>".repeat(depth / 2)
        );
        let crds = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ pub f: {ty} }}\n"),
        )])
        .unwrap();
        let mut s = spec_schema(&crds[0])["properties"]["f"].clone();
        for _ in 0..depth / 2 {
            s = s["items"].clone();
        }
        assert_eq!(s["format"], "int32", "{s}");
    }

    #[test]
    fn versions_merge_with_exactly_one_storage_version() {
        let v = |ver: &str, storage: &str| {
            format!(
                "pub mod {ver} {{ use super::*;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{ver}\", kind = \"Thing\"{storage})]\npub struct ThingSpec {{ pub a: String }} }}\n"
            )
        };
        let crds = run(&[(
            "x.rs",
            &format!("{}{}", v("v1alpha1", ", storage = false"), v("v1", "")),
        )])
        .unwrap();
        assert_eq!(crds.len(), 1);
        let names: Vec<_> = crds[0]
            .crd
            .spec
            .versions
            .iter()
            .map(|x| (x.name.clone(), x.storage))
            .collect();
        assert_eq!(
            names,
            [("v1".to_string(), true), ("v1alpha1".to_string(), false)]
        );
        let err = errors(&[("x.rs", &format!("{}{}", v("v1alpha1", ""), v("v1", "")))]);
        assert!(
            err.contains("2 versions of Thing.t.example.com are marked as storage versions"),
            "{err}"
        );
        assert!(err.contains("storage = false"), "{err}");
    }
}

/// Code rsbuilder used to refuse wrongly, and the messages that name the fix.
#[cfg(test)]
mod refusal_tests {
    use super::*;
    use crate::manifests::diag::Cause;
    use std::path::Path;

    const HEADER: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";
    const CR: &str = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

    fn run(files: &[(&str, &str)]) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
        let set = SourceSet {
            files: files
                .iter()
                .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
                .collect(),
        };
        crds_from_sources(&set)
    }

    /// linkerd's `K8sDuration`: a newtype with `impl JsonSchema` written by hand is code to
    /// compile, not a type missing a derive.
    #[test]
    fn a_hand_written_json_schema_impl_needs_the_compiler() {
        let src = format!(
            "{CR}pub struct ThingSpec {{\n    pub timeout: K8sDuration,\n}}\n\n\
             #[derive(Serialize, Deserialize, Clone, Debug)]\npub struct K8sDuration(String);\n\n\
             impl schemars::JsonSchema for K8sDuration {{\n\
             \x20   fn schema_name() -> std::borrow::Cow<'static, str> {{ \"K8sDuration\".into() }}\n\
             \x20   fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{\"type\": \"string\"}}) }}\n\
             }}\n"
        );
        let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
        assert_eq!(diags.len(), 1, "{diags:?}");
        let d = &diags[0];
        assert_eq!(d.cause, Cause::NeedsCompile);
        assert_eq!((d.line, d.column), (11, 12), "{d}");
        assert_eq!(
            d.message,
            "hand-written schema: `K8sDuration` implements `JsonSchema` by hand (src/lib.rs:13), and rsbuilder does not run that code"
        );
        assert!(
            d.help.as_deref().unwrap().contains("--evaluate auto"),
            "{d}"
        );
        // Without the impl, the fix is the derive.
        let without = src.split("impl schemars").next().unwrap().to_string();
        let diags = run(&[("src/lib.rs", &without)]).unwrap_err();
        assert_eq!(diags[0].cause, Cause::Invalid);
        assert!(diags[0].message.contains("does not derive `JsonSchema`"));
    }

    fn described(src: &str) -> serde_json::Value {
        let crds = run(&[("src/lib.rs", src)]).unwrap_or_else(|d| panic!("{d:?}"));
        let v = serde_json::to_value(&crds[0].crd).unwrap();
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            .clone()
    }

    /// schemars builds the doc as `concat!` of the lines and takes any expression for
    /// `description`: those rsbuilder evaluates are read, the rest refused with the reason.
    #[test]
    fn doc_and_description_expressions_are_evaluated_where_they_can_be() {
        let src = format!(
            "const PORT_DOC: &str = \"The port.\";\n{CR}pub struct ThingSpec {{\n\
             \x20   #[doc = concat!(\"Listen \", \"address\")]\n    pub addr: String,\n\
             \x20   /// Two lines:\n    #[doc = concat!(\" kind \", stringify!(Thing), \" v\", 1)]\n    pub two: String,\n\
             \x20   #[schemars(description = PORT_DOC)]\n    pub port: i32,\n\
             \x20   #[schemars(description = concat!(\"a\", \"b\"))]\n    pub ab: i32,\n\
             }}\n"
        );
        let props = described(&src);
        assert_eq!(props["addr"]["description"], "Listen address");
        // A literal line loses one leading space; a macro line keeps what it expands to.
        assert_eq!(props["two"]["description"], "Two lines:\n kind Thing v1");
        assert_eq!(props["port"]["description"], "The port.");
        assert_eq!(props["ab"]["description"], "ab");
        // Refused with the reason: a function call, punctuation in stringify!.
        for (attr, reason) in [
            (
                "#[doc = concat!(\"a\", env!(\"HOME\"))]",
                "this macro is not evaluated",
            ),
            (
                "#[doc = stringify!(a + b)]",
                "identifiers and literals only",
            ),
            (
                "#[schemars(description = &format!(\"{:?}\", text()))]",
                "only `{}`, `{{` and `}}` are evaluated",
            ),
        ] {
            let src = format!(
                "fn text() -> &'static str {{ \"x\" }}\n{CR}pub struct ThingSpec {{\n    {attr}\n    pub a: i32,\n}}\n"
            );
            let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
            assert_eq!(diags.len(), 1, "{diags:?}");
            assert_eq!(diags[0].cause, Cause::NeedsCompile, "{attr}");
            assert_eq!(diags[0].line, 8, "{}", diags[0]);
            assert!(diags[0].message.contains(reason), "{attr}: {}", diags[0]);
        }
    }

    #[test]
    fn the_schemars_0_8_regex_form_names_the_new_one() {
        for (attr, fix) in [
            (
                "#[schemars(regex = \"NAME_RE\")]",
                "write `#[schemars(regex(pattern = NAME_RE))]`",
            ),
            (
                "#[validate(regex = \"NAME_RE\")]",
                "write `#[validate(regex(path = NAME_RE))]`",
            ),
        ] {
            let src = format!("{CR}pub struct ThingSpec {{\n    {attr}\n    pub a: String,\n}}\n");
            let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
            assert_eq!(diags[0].line, 7, "{}", diags[0]);
            assert!(
                diags[0].message.contains("is the schemars 0.8 form")
                    && diags[0].message.contains(fix),
                "{}",
                diags[0]
            );
        }
    }

    #[test]
    fn several_json_objects_in_one_printcolumn_are_named() {
        let src = concat!(
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n",
            "#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\",\n",
            "    printcolumn = r#\"{\"name\":\"A\",\"type\":\"string\",\"jsonPath\":\".spec.a\"}, {\"name\":\"B\",\"type\":\"string\",\"jsonPath\":\".spec.b\"}\"#)]\n",
            "pub struct ThingSpec { pub a: String, pub b: String }\n"
        );
        let diags = run(&[("src/lib.rs", src)]).unwrap_err();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].line, 6, "{}", diags[0]);
        assert!(
            diags[0]
                .message
                .contains("this `printcolumn` holds 2 JSON objects")
                && diags[0]
                    .message
                    .contains("one `printcolumn = r#\"{…}\"#` per column"),
            "{}",
            diags[0]
        );
    }
}
