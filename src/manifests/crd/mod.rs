//! The static CRD engine: from parsed Rust sources to the `CustomResourceDefinition` that
//! kube-derive's `CustomResourceExt::crd()` returns at runtime (kube 5, schemars 1.2.3,
//! k8s-openapi 0.29 with `v1_37`).
//!
//! The pipeline, one module per idea:
//! - [`resolve`]: the items of each module and rustc-like path resolution (`use` items,
//!   `crate::`/`self::`/`super::`, re-exports, type aliases), over the module tree
//!   [`crate::manifests::modtree`] finds.
//! - [`attrs`]: the `#[x_kube]`, `#[serde]` and `#[schemars]` attributes, parsed the way
//!   serde and schemars_derive parse them; [`kube_attrs`]: `#[kube(...)]`, as kube-derive
//!   parses it.
//! - [`known`]: std, serde_json and k8s-openapi types, whose schemas are asked from schemars
//!   itself.
//! - [`derive`]: what `#[derive(JsonSchema)]` (and kube-derive's `KubeSchema`) would emit for
//!   the user's own types.
//! - [`eval`]: static evaluation of the expressions values are written with (scalars, and
//!   what a type is for evaluation); [`defaults`]: `#[serde(default)]` values, evaluated and
//!   serialized with serde's rules; [`statics`]: regexes held in lazily built statics.
//! - [`assemble`]: the transforms `crd()` runs and the typed CRD object, multi-version merging.
//! - [`storage`]: which version of a kind is stored when the crate merges versions at run
//!   time (`merge_crds(…, "v1")`, `[package.metadata.rsbuilder]`, a flag).
//! - [`apiserver_rules`]: the API server's validation of the CRD, for the rules a Rust type can
//!   break.
//! - [`workers`]: the CRDs as YAML files, derived by a pool of threads.
//! - [`quiet`]: panics that are answers (kube-core's rewriter, serde_derive), caught unprinted.
//!
//! This module assembles each kind: its versions found, derived and merged into one CRD.
//!
//! Every kind (all versions of one group and kind) is derived on its own: a kind that cannot
//! be derived gets its diagnostics and stops no other kind ([`KindOutcome`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::diag::Diagnostic;
use super::source::SourceSet;

/// The largest CRD written, in bytes of YAML (1.5 MiB): etcd's default request limit
/// (`--max-request-bytes`), which the API server's write of the CRD must pass.
pub const MAX_CRD_BYTES: usize = 3 << 19;

pub mod apiserver_rules;
pub mod assemble;
pub mod attrs;
pub mod defaults;
pub mod derive;
pub mod eval;
pub mod known;
pub mod kube_attrs;
pub mod quiet;
pub mod resolve;
pub mod statics;
pub mod storage;
pub mod workers;

use workers::Share;
pub use workers::{CrdWorkers, ToYaml, crd_yaml_files};

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
    /// Bytes `include_str!` has read in this run, shared by every thread deriving kinds (and
    /// by the clones of these settings), at most [`resolve::MAX_INCLUDED_BYTES`].
    pub included: std::sync::Arc<std::sync::atomic::AtomicU64>,
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

/// Sorts the outcomes by kind name and fails kinds whose CRD names clash.
fn finish_outcomes<T: CrdFile>(sources: &SourceSet, kinds: &mut [KindOutcome<T>]) {
    kinds.sort_by(|a, b| (&a.group, &a.kind).cmp(&(&b.group, &b.kind)));
    fail_name_clashes(sources, kinds);
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
    let mut krate = resolve::Crate::build(sources);
    krate.included = Some(&settings.included);
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
mod tests;

/// Code rsbuilder used to refuse wrongly, and the messages that name the fix.
#[cfg(test)]
mod refusal_tests;
