//! The static CRD engine: from parsed Rust sources to the `CustomResourceDefinition` that
//! kube-derive's `CustomResourceExt::crd()` returns at runtime (kube 5, schemars 1.2.3,
//! k8s-openapi 0.29 with `v1_37`).
//!
//! The pipeline, one module per idea:
//! - [`resolve`]: the module tree of the sources and rustc-like path resolution
//!   (`use` items, `crate::`/`self::`/`super::`, re-exports, type aliases).
//! - `attrs`: the `#[kube]`, `#[x_kube]`, `#[serde]` and `#[schemars]` attributes, parsed the
//!   way kube-derive, serde and schemars_derive parse them.
//! - `known`: std, serde_json and k8s-openapi types, whose schemas are asked from schemars
//!   itself.
//! - `schema`: what `#[derive(JsonSchema)]` (and kube-derive's `KubeSchema`) would emit for the
//!   user's own types.
//! - `defaults`: static evaluation of `#[serde(default)]` values.
//! - `assemble`: the transforms `crd()` runs and the typed CRD object, multi-version merging.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::diag::Diagnostic;
use super::source::SourceSet;

pub mod assemble;
pub mod attrs;
pub mod defaults;
pub mod derive;
pub mod eval;
pub mod known;
pub mod kube_attrs;
pub mod resolve;

/// One CRD derived from the sources.
#[derive(Debug, Clone)]
pub struct GeneratedCrd {
    /// The CRD object, as kube-derive's `crd()` builds it (all versions of the kind merged).
    pub crd: CustomResourceDefinition,
    /// `<group>_<plural>.yaml`, the file name controller-gen and Kubebuilder use under
    /// `config/crd/bases/`.
    pub file_name: String,
}

/// Finds every `#[derive(CustomResource)]` in `sources` and builds its CRD.
///
/// Returns the CRDs sorted by file name, several versions of one (group, kind) merged into one
/// CRD with `kube::core::crd::merge_crds` semantics. On failure returns every diagnostic found
/// (file:line:column, reason, fix), never panics.
pub fn crds_from_sources(sources: &SourceSet) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
    let (mut crds, diags) = derive_share(sources, Share::ALL);
    if !diags.is_empty() {
        return Err(sorted(diags));
    }
    crds.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    if crds.windows(2).any(|w| w[0].file_name == w[1].file_name) {
        return Err(sorted(crd_name_clashes(sources)));
    }
    Ok(crds)
}

/// Diagnostics for kinds whose CRDs would have the same name, `<plural>.<group>` (and file,
/// `<group>_<plural>.yaml`): two kinds of a group with the same plural (`--plural bars` on
/// `Foo` next to a kind `Bar`), or kinds that differ only in case. The API server keeps one
/// CRD per name, and one file would silently replace the other; kube-derive builds both
/// without complaint. One diagnostic at every kind after the first, naming the first. Called
/// only once the file names are known to clash (the scan re-reads the `#[kube]` attributes).
fn crd_name_clashes(sources: &SourceSet) -> Vec<Diagnostic> {
    let krate = resolve::Crate::build(sources);
    let mut deriver = derive::Deriver::new(&krate);
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
            }
            std::collections::hash_map::Entry::Occupied(_) => {}
        }
    }
    if deriver.diags.is_empty() {
        // Not expected: clashing file names come from clashing (group, plural)s.
        deriver.diags.push(Diagnostic::new(
            std::path::Path::new("."),
            1,
            1,
            "two CRDs have the same file name under crd/bases",
        ));
    }
    deriver.diags
}

/// Serializes a CRD (file contents); an error message otherwise.
pub type ToYaml = fn(&CustomResourceDefinition) -> Result<String, String>;

/// Stack of a worker thread: as much as the main thread's 8 MiB and then some, for syn's and
/// the deriver's recursion (only the pages used are committed).
const WORKER_STACK: usize = 16 << 20;

/// `(file name, YAML)` pairs and the diagnostics of one thread.
type ShareResult = (Vec<(String, String)>, Vec<Diagnostic>);

/// The CRDs of `sources` serialized to YAML: `(file name, YAML)` sorted by file name, the
/// same bytes as serializing [`crds_from_sources`]'s CRDs in order with `to_yaml`.
///
/// With `threads > 1`, the (group, kind)s are shared among that many threads (the calling
/// thread included); see [`CrdWorkers`]. Diagnostics are those of the single-threaded run,
/// in the same order.
pub fn crd_yaml_files(
    sources: &SourceSet,
    threads: usize,
    to_yaml: ToYaml,
) -> Result<Vec<(String, String)>, Vec<Diagnostic>> {
    if threads <= 1 {
        return CrdWorkers {
            handles: Vec::new(),
            threads: 1,
            to_yaml,
        }
        .finish(sources);
    }
    let texts: Vec<(std::path::PathBuf, String)> = sources
        .files
        .iter()
        .map(|f| (f.path.clone(), f.text.clone()))
        .collect();
    std::thread::scope(|scope| CrdWorkers::spawn(scope, &texts, threads, to_yaml).finish(sources))
}

/// Threads deriving the CRDs of all shares but the first (share 0 is the calling thread's,
/// in [`CrdWorkers::finish`]). syn's syntax trees cannot cross threads, so each worker parses
/// the source texts itself: spawned before the calling thread parses, the workers parse at
/// the same time, and the run costs one parse plus a share of the derivation. Worth it from a
/// few dozen kinds.
pub struct CrdWorkers<'scope> {
    /// A worker, or the index of a share whose thread could not be started.
    handles: Vec<Result<std::thread::ScopedJoinHandle<'scope, ShareResult>, usize>>,
    threads: usize,
    to_yaml: ToYaml,
}

impl<'scope> CrdWorkers<'scope> {
    /// Starts `threads - 1` workers on `texts` (`(path, text)`, as [`SourceSet::read`]
    /// returns them). A worker whose parse fails stops: the calling thread reports syntax
    /// errors.
    pub fn spawn<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        texts: &'env [(std::path::PathBuf, String)],
        threads: usize,
        to_yaml: ToYaml,
    ) -> Self {
        let threads = threads.max(1);
        let handles = (1..threads)
            .map(|index| {
                std::thread::Builder::new()
                    .name(format!("crd-share-{index}"))
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, move || {
                        let Ok(set) = SourceSet::parse_all(texts.to_vec()) else {
                            return (Vec::new(), Vec::new());
                        };
                        yaml_share(&set, Share { index, of: threads }, to_yaml)
                    })
                    // A thread the OS refuses: its share runs on the calling thread.
                    .map_err(|_| index)
            })
            .collect();
        Self {
            handles,
            threads,
            to_yaml,
        }
    }

    /// Derives share 0 from `sources` (the same texts, parsed by the calling thread), joins
    /// the workers and returns every CRD sorted by file name, or every diagnostic.
    pub fn finish(self, sources: &SourceSet) -> Result<Vec<(String, String)>, Vec<Diagnostic>> {
        let share = Share {
            index: 0,
            of: self.threads,
        };
        let (mut files, mut diags) = yaml_share(sources, share, self.to_yaml);
        for w in self.handles {
            let w = match w {
                Ok(handle) => handle,
                Err(index) => {
                    let share = Share {
                        index,
                        of: self.threads,
                    };
                    let (f, d) = yaml_share(sources, share, self.to_yaml);
                    files.extend(f);
                    diags.extend(d);
                    continue;
                }
            };
            match w.join() {
                Ok((f, d)) => {
                    files.extend(f);
                    diags.extend(d);
                }
                Err(_) => diags.push(Diagnostic::new(
                    std::path::Path::new("."),
                    1,
                    1,
                    "internal error: a CRD worker thread panicked",
                )),
            }
        }
        if !diags.is_empty() {
            return Err(sorted(diags));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        if files.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(sorted(crd_name_clashes(sources)));
        }
        Ok(files)
    }

    /// Waits for the workers and drops their results (the calling thread found syntax
    /// errors).
    pub fn abandon(self) {
        for w in self.handles.into_iter().flatten() {
            let _ = w.join();
        }
    }
}

/// [`derive_share`], each CRD serialized with `to_yaml`.
fn yaml_share(sources: &SourceSet, share: Share, to_yaml: ToYaml) -> ShareResult {
    let (crds, mut diags) = derive_share(sources, share);
    let mut files = Vec::with_capacity(crds.len());
    for c in crds {
        match to_yaml(&c.crd) {
            Ok(yaml) => files.push((c.file_name, yaml)),
            Err(e) => diags.push(Diagnostic::new(
                std::path::Path::new(&c.file_name),
                1,
                1,
                format!("cannot serialize the CRD to YAML: {e}"),
            )),
        }
    }
    (files, diags)
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

/// Derives the CRDs of `share`'s kinds: unsorted CRDs and unsorted diagnostics.
fn derive_share(sources: &SourceSet, share: Share) -> (Vec<GeneratedCrd>, Vec<Diagnostic>) {
    let krate = resolve::Crate::build(sources);
    let mut deriver = derive::Deriver::new(&krate);
    let mut found: Vec<Found> = Vec::new();
    for (m, ident, attrs_) in custom_resources(&krate) {
        if !share.owns(attrs_) {
            continue;
        }
        if let Some(f) = assemble::one_version(&mut deriver, m, ident, attrs_) {
            found.push(f);
        }
    }
    let crds = assemble::merge_versions(&mut deriver, found);
    (crds, std::mem::take(&mut deriver.diags))
}

/// Every struct or enum of the crate with `#[derive(CustomResource)]`, in module and source
/// order: `(module, its ident, its attributes)`.
fn custom_resources<'k>(
    krate: &'k resolve::Crate<'_>,
) -> impl Iterator<Item = (usize, &'k syn::Ident, &'k [syn::Attribute])> {
    krate.modules.iter().enumerate().flat_map(|(m, module)| {
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
                attrs::derives(attrs_)
                    .iter()
                    .any(|d| d == "CustomResource")
                    .then_some((m, ident, attrs_))
            })
    })
}

/// Diagnostics in file, line, column, message order, without repeats (a shared type's error
/// is found once per kind, or once per thread, that uses it).
fn sorted(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
    });
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
                "{CR}pub struct ThingSpec {{ #[serde(default = \"computed\")] pub n: i32 }}\nfn computed() -> i32 {{ let x = 2; x * 2 }}\n"
            ),
        )]);
        assert!(
            err.contains("x.rs:6:") && err.contains("function `computed`"),
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

        let err = errors(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ pub n: chrono::DateTime<chrono::Utc> }}\n"),
        )]);
        assert!(
            err.contains("has no schema rsbuilder can compute statically"),
            "{err}"
        );
    }

    #[test]
    fn schema_modes_and_scale_without_status() {
        let crds = run(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"disabled\", scale = r#\"{\"specReplicasPath\":\".spec.r\",\"statusReplicasPath\":\".status.r\"}\"#)]\npub struct ThingSpec { pub r: i32 }\n",
        )])
        .unwrap();
        let v = serde_json::to_value(&crds[0].crd).unwrap();
        assert_eq!(v["spec"]["versions"][0]["schema"], json!({}));
        assert!(v["spec"]["versions"][0].get("subresources").is_none());
        let err = errors(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"manual\")]\npub struct ThingSpec { pub r: i32 }\n",
        )]);
        assert!(
            err.contains("schema = \"manual\"") && err.contains("hand-written"),
            "{err}"
        );
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
                crd_yaml_files(&set, threads, yaml).unwrap(),
                single,
                "{threads} threads"
            );
        }
    }

    #[test]
    fn threads_report_the_same_diagnostics() {
        let bad = format!(
            "{CR}pub struct ThingSpec {{ pub n: chrono::DateTime<chrono::Utc> }}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\")]\npub struct OtherSpec {{ pub a: String }}\n"
        );
        let set = load(&many_kinds(&bad));
        let single = crds_from_sources(&set).unwrap_err();
        assert_eq!(single.len(), 2, "{single:?}");
        assert_eq!(crd_yaml_files(&set, 3, yaml).unwrap_err(), single);
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
