//! The runtime crate every generated project builds on (`rsbuilder-runtime`: manager, metrics,
//! TLS serving, the controller runner, and, for a project that uses them, the API server and
//! the test cluster), embedded at compile time from this repository's `runtime/` directory
//! (by `build.rs`).
//!
//! A project holds the runtime in one of two ways ([`Source`], recorded in PROJECT):
//!
//! - vendored (the default): `init` writes it under [`DIR`] as tool-owned files. Each starts
//!   with [`TOOL_OWNED_LINE`] (after its comment leader). The engine records the SHA-256 of
//!   what it wrote under `.rsbuilder/` (see [`super::engine`]) and [`VERSION_RECORD`] names
//!   the rsbuilder version whose runtime that is. The merge base of `alpha update` is that
//!   version's text, which rsbuilder carries ([`tree`]), not a copy in the project.
//! - by version: the project depends on `rsbuilder-runtime = "<version>"` from a registry
//!   and holds no copy.
//!
//! The API server and the test cluster (the runtime's `apiserver` module and the modules and
//! features that need it) are in a vendored copy only when the project's Cargo.toml turns
//! one of those features on ([`uses_server`]): `create api` and `create webhook` (the test
//! cluster of their tests) and `create apiserver` write them ([`plan_server_part`]).
//! docs/runtime.md says why.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::{IfExists, Plan};
use crate::engine::{File, owned};

/// Directory of the runtime crate inside a generated project.
pub const DIR: &str = "rsbuilder-runtime";

/// The package name of the runtime crate.
pub const PACKAGE: &str = "rsbuilder-runtime";

/// The text that opens every tool-owned file, after `// ` (Rust) or `# ` (TOML).
pub const TOOL_OWNED_LINE: &str =
    "Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.";

/// The runtime's files: (path relative to the runtime crate, path inside a project under
/// [`DIR`], contents), sorted by path.
pub const FILES: &[(&str, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/runtime_files.rs"));

/// The runtime of earlier released versions, as (version, gzip-compressed tar of that
/// version's `runtime/` directory), from `runtime-releases/<version>.tar.gz` (by `build.rs`).
const RELEASES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/runtime_releases.rs"));

/// This rsbuilder's version: the version of the runtime it writes, and the version a project
/// that depends on the runtime by version names.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The record of the rsbuilder version whose runtime text a project's tool-owned files were
/// written from: one line, the version. The merge base of `alpha update` is that version's
/// text ([`tree`]).
pub const VERSION_RECORD: &str = ".rsbuilder/runtime-version";

/// The feature of the runtime that compiles its API server module. It and every feature that
/// turns it on (the test cluster's `testing`, `etcd`) make the server part of the runtime.
const SERVER_FEATURE: &str = "apiserver";

/// How a project holds the runtime, as `init --runtime` chose and PROJECT records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// A copy under [`DIR`], tool-owned, refreshed by `alpha update`.
    #[default]
    Vendored,
    /// A dependency on `rsbuilder-runtime = "<version>"`, no copy in the project.
    Crate,
}

/// The key of PROJECT's `plugins:` map under which a project that depends on the runtime by
/// version records it (`{source: crate}`); a project without it holds a vendored copy.
pub const PROJECT_PLUGIN: &str = "runtime.rsbuilder.io/v1";

impl Source {
    /// The name `--runtime` takes and PROJECT records.
    pub fn name(self) -> &'static str {
        match self {
            Source::Vendored => "vendored",
            Source::Crate => "crate",
        }
    }

    /// Parses `--runtime`. Errors: any other word, naming the two.
    pub fn parse(value: &str) -> Result<Source, String> {
        match value {
            "vendored" => Ok(Source::Vendored),
            "crate" => Ok(Source::Crate),
            other => Err(format!("expected `vendored` or `crate`, not {other:?}")),
        }
    }

    /// The source PROJECT records: [`Source::Crate`] when its `plugins:` map has
    /// [`PROJECT_PLUGIN`] with `source: crate`, else [`Source::Vendored`].
    pub fn of(project: &crate::model::Project) -> Source {
        let recorded = project
            .plugins
            .get(PROJECT_PLUGIN)
            .and_then(|v| v.get("source"))
            .and_then(|v| v.as_str());
        if recorded == Some("crate") {
            Source::Crate
        } else {
            Source::Vendored
        }
    }

    /// Records `self` in `project`: [`Source::Crate`] as a `plugins:` entry; the default
    /// writes nothing.
    pub fn record(self, project: &mut crate::model::Project) {
        if self == Source::Crate {
            project.plugins.insert(
                PROJECT_PLUGIN.to_owned(),
                serde_json::json!({ "source": "crate" }),
            );
        }
    }

    /// The `[dependencies]` value of the runtime in a project's Cargo.toml, without features:
    /// the path of the copy, or the version.
    pub fn dependency(self) -> String {
        match self {
            Source::Vendored => format!("{{ path = \"{DIR}\" }}"),
            Source::Crate => format!("\"{VERSION}\""),
        }
    }

    /// The dependency value with `features`, as an inline table.
    pub fn dependency_with(self, features: &[&str]) -> String {
        let list = features
            .iter()
            .map(|f| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(", ");
        match self {
            Source::Vendored => format!("{{ path = \"{DIR}\", features = [{list}] }}"),
            Source::Crate => format!("{{ version = \"{VERSION}\", features = [{list}] }}"),
        }
    }
}

/// A runtime's text: path relative to the runtime crate (`Cargo.toml`, `src/...`) to
/// contents.
pub type Tree = BTreeMap<String, String>;

/// The runtime text of rsbuilder `version`: this version's from [`FILES`], an earlier
/// release's from its embedded archive (only `Cargo.toml` and the files under `src/`, the
/// part a project holds). `None` when rsbuilder carries no text of that version.
pub fn tree(version: &str) -> Option<Tree> {
    if version == VERSION {
        return Some(
            FILES
                .iter()
                .map(|(rel, _, text)| ((*rel).to_owned(), (*text).to_owned()))
                .collect(),
        );
    }
    let (_, archive) = RELEASES.iter().find(|(v, _)| *v == version)?;
    unpack(archive).ok()
}

/// The versions rsbuilder carries the runtime text of, this one last.
pub fn versions() -> Vec<&'static str> {
    RELEASES
        .iter()
        .map(|(v, _)| *v)
        .filter(|v| *v != VERSION)
        .chain([VERSION])
        .collect()
}

/// The files of a gzip-compressed tar of a `runtime/` directory (paths relative to it, an
/// optional leading `./` or `runtime/` taken off) that a project holds: `Cargo.toml` and the
/// files under `src/`. Errors: an archive that does not decompress or parse, a file that is
/// not UTF-8.
pub fn unpack(archive: &[u8]) -> std::io::Result<Tree> {
    let mut out = Tree::new();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    for entry in tar.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path()?.to_string_lossy().replace('\\', "/");
        let rel = path.trim_start_matches("./");
        let rel = rel.strip_prefix("runtime/").unwrap_or(rel);
        if rel != "Cargo.toml" && !rel.starts_with("src/") {
            continue;
        }
        let mut text = String::new();
        entry.read_to_string(&mut text)?;
        out.insert(rel.to_owned(), text);
    }
    Ok(out)
}

/// The features of the runtime's Cargo.toml `manifest` that make its server part:
/// [`SERVER_FEATURE`] and every feature that turns it on, directly or through another.
fn server_features(manifest: &toml::Table) -> BTreeSet<String> {
    let features = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .cloned()
        .unwrap_or_default();
    let mut out = BTreeSet::from([SERVER_FEATURE.to_owned()]);
    loop {
        let before = out.len();
        for (name, list) in &features {
            let on = list.as_array().into_iter().flatten().any(|v| {
                v.as_str()
                    .is_some_and(|s| out.contains(s.split('/').next().unwrap_or(s)))
            });
            if on {
                out.insert(name.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The modules of `lib.rs` compiled only under one of `features`: the `pub mod` item right
/// after a `#[cfg(feature = "...")]` line.
fn gated_modules(lib: &str, features: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut gated = false;
    for line in lib.lines().map(str::trim) {
        if let Some(rest) = line
            .strip_prefix("#[cfg(feature = \"")
            .and_then(|r| r.strip_suffix("\")]"))
        {
            gated = features.contains(rest);
            continue;
        }
        if gated
            && let Some(m) = line
                .strip_prefix("pub mod ")
                .and_then(|m| m.strip_suffix(';'))
        {
            out.push(m.to_owned());
        }
        gated = false;
    }
    out
}

/// The runtime's Cargo.toml `text` without its server part: each server feature keeps only
/// the features it turns on (so `#[cfg(feature = ...)]` stays a known name), and the optional
/// dependencies that only those features enabled are gone. Comments stay.
fn without_server(text: &str) -> String {
    let Ok(parsed) = text.parse::<toml::Table>() else {
        return text.to_owned();
    };
    let server = server_features(&parsed);
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        return text.to_owned();
    };
    let mut dropped: BTreeSet<String> = BTreeSet::new();
    let mut kept: BTreeSet<String> = BTreeSet::new();
    if let Some(features) = doc.get_mut("features").and_then(|f| f.as_table_mut()) {
        for (name, item) in features.iter_mut() {
            let Some(list) = item.as_array_mut() else {
                continue;
            };
            let is_server = server.contains(name.get());
            for v in list.iter() {
                if let Some(dep) = v.as_str().and_then(|s| s.strip_prefix("dep:")) {
                    if is_server {
                        dropped.insert(dep.to_owned());
                    } else {
                        kept.insert(dep.to_owned());
                    }
                }
            }
            if is_server {
                list.retain(|v| !v.as_str().is_some_and(|s| s.starts_with("dep:")));
            }
        }
    }
    if let Some(deps) = doc.get_mut("dependencies").and_then(|d| d.as_table_mut()) {
        for dep in dropped.difference(&kept) {
            deps.remove(dep);
        }
    }
    doc.to_string()
}

/// The files a project holds of the runtime text `tree`, as (path in the project, text),
/// with its server part or without it (no server modules, [`without_server`] Cargo.toml).
pub fn project_files_of(tree: &Tree, server: bool) -> BTreeMap<PathBuf, String> {
    let in_project = |rel: &str| PathBuf::from(format!("{DIR}/{rel}"));
    if server {
        return tree
            .iter()
            .map(|(rel, text)| (in_project(rel), text.clone()))
            .collect();
    }
    let manifest = tree.get("Cargo.toml").map(String::as_str).unwrap_or("");
    let features = manifest
        .parse::<toml::Table>()
        .map(|t| server_features(&t))
        .unwrap_or_default();
    let lib = tree.get("src/lib.rs").map(String::as_str).unwrap_or("");
    let modules = gated_modules(lib, &features);
    let in_server_module = |rel: &str| {
        modules
            .iter()
            .any(|m| rel == format!("src/{m}.rs") || rel.starts_with(&format!("src/{m}/")))
    };
    tree.iter()
        .filter(|(rel, _)| !in_server_module(rel))
        .map(|(rel, text)| {
            let text = if rel == "Cargo.toml" {
                without_server(text)
            } else {
                text.clone()
            };
            (in_project(rel), text)
        })
        .collect()
}

/// This version's runtime files for a project, with or without the server part
/// ([`project_files_of`]).
pub fn project_files(server: bool) -> BTreeMap<PathBuf, String> {
    project_files_of(&tree(VERSION).expect("this version's text"), server)
}

/// Whether the project Cargo.toml `text` turns on a server feature of the runtime
/// (`apiserver`, `testing`, `etcd`) in any of its dependency tables. A text that does not
/// parse counts as not.
pub fn uses_server(text: &str) -> bool {
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    let manifest: toml::Table = FILES
        .iter()
        .find(|(rel, _, _)| *rel == "Cargo.toml")
        .and_then(|(_, _, t)| t.parse().ok())
        .unwrap_or_default();
    let server = server_features(&manifest);
    let on = |deps: Option<&toml::Value>| {
        deps.and_then(|d| d.get(PACKAGE))
            .and_then(|d| d.get("features"))
            .and_then(|f| f.as_array())
            .is_some_and(|f| {
                f.iter()
                    .any(|v| v.as_str().is_some_and(|s| server.contains(s)))
            })
    };
    let tables = ["dependencies", "dev-dependencies", "build-dependencies"];
    tables.iter().any(|t| on(table.get(*t)))
        || table
            .get("target")
            .and_then(|t| t.as_table())
            .is_some_and(|targets| {
                targets
                    .values()
                    .any(|t| tables.iter().any(|name| on(t.get(*name))))
            })
}

/// The rsbuilder version PROJECT's runtime copy was written by, from [`VERSION_RECORD`];
/// `None` without the record (a project made before rsbuilder kept it).
pub fn recorded_version(plan: &Plan) -> Result<Option<String>> {
    Ok(plan
        .read(VERSION_RECORD)?
        .map(|t| t.trim().to_owned())
        .filter(|v| !v.is_empty()))
}

/// Adds to `plan` the write of [`VERSION_RECORD`]: this version.
pub fn record_version(plan: &mut Plan) {
    plan.add(File::new(
        VERSION_RECORD,
        format!("{VERSION}\n"),
        IfExists::Overwrite,
    ));
}

/// The merge base of the tool-owned file `path`: what rsbuilder wrote into it, whose SHA-256
/// is `hash` in `.rsbuilder/tool-owned.sha256`. Looked up, first match: the file under
/// `.rsbuilder/base/` that rsbuilder versions before the embedded texts kept in the project;
/// the text of `version` (the recorded version) with or without the server part; the text of
/// any other version rsbuilder carries. Only a text whose SHA-256 is `hash` is taken (the
/// kept file excepted, which is the record itself). `None` when none matches.
pub fn base(
    plan: &Plan,
    path: &Path,
    hash: Option<&str>,
    version: Option<&str>,
) -> Result<Option<String>> {
    if let Some(kept) = plan.read(Path::new(owned::BASE_DIR).join(path))? {
        return Ok(Some(kept));
    }
    let Some(hash) = hash else {
        return Ok(None);
    };
    let mut versions: Vec<&str> = version.into_iter().collect();
    let others = self::versions();
    versions.extend(others.iter().rev().filter(|v| Some(**v) != version));
    for v in versions {
        let Some(tree) = tree(v) else { continue };
        for server in [true, false] {
            if let Some(text) = project_files_of(&tree, server).remove(path)
                && owned::sha256_hex(&text) == hash
            {
                return Ok(Some(text));
            }
        }
    }
    Ok(None)
}

/// Adds to `plan` the server part of a vendored runtime (the API server and the test cluster)
/// when the project lacks it: the server modules, as tool-owned files of the version the copy
/// was written by (so the copy stays one version's; this version's when the project has no
/// [`VERSION_RECORD`], made before rsbuilder wrote one), and the runtime's Cargo.toml with the
/// server features, merged three ways with the user's edits of it. A module file already there
/// is left alone. Nothing for a project that depends on the runtime by version, or whose copy
/// has the part already.
///
/// Errors: the copy's version (PROJECT's [`VERSION_RECORD`]) is one rsbuilder carries no text
/// of, or the user's edits of the runtime's Cargo.toml overlap the features' lines; each says
/// what to run.
pub fn plan_server_part(plan: &mut Plan) -> Result<()> {
    let project = crate::model::Project::load_in(plan)?;
    if Source::of(&project) == Source::Crate {
        return Ok(());
    }
    let version = recorded_version(plan)?.unwrap_or_else(|| VERSION.to_owned());
    let Some(tree) = tree(&version) else {
        bail!(
            "this project's {DIR}/ is rsbuilder {version}'s, and this rsbuilder ({VERSION}) \
             carries no copy of that version's runtime; run `rsbuilder alpha update` first"
        );
    };
    let full = project_files_of(&tree, true);
    let slim = project_files_of(&tree, false);
    let manifest = PathBuf::from(format!("{DIR}/Cargo.toml"));
    for (path, text) in &full {
        if slim.contains_key(path) && *path != manifest {
            continue;
        }
        if *path == manifest {
            let Some(ours) = plan.read(path)? else {
                plan.add(File::tool_owned(path, text.clone(), IfExists::Overwrite));
                continue;
            };
            let base = &slim[path];
            if ours == *text {
                continue;
            }
            if ours == *base {
                plan.add(File::tool_owned(path, text.clone(), IfExists::Overwrite));
                continue;
            }
            match super::textmerge::merge(base, &ours, text) {
                Ok(merged) => plan.add(File::tool_owned_with_base(path, merged, text.clone())),
                Err(_) => bail!(
                    "{}: your edits overlap the lines that turn on the runtime's API server; \
                     restore the file (or run `rsbuilder alpha update`), then re-run",
                    path.display()
                ),
            }
            continue;
        }
        if !plan.exists(path)? {
            plan.add(File::tool_owned(path, text.clone(), IfExists::Overwrite));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded list is the directory: every file of `runtime/Cargo.toml` and
    /// `runtime/src/`, with the same bytes.
    #[test]
    fn the_embedded_runtime_is_the_runtime_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let mut on_disk = vec!["Cargo.toml".to_owned()];
        for entry in walkdir::WalkDir::new(root.join("src")) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&root).unwrap();
                on_disk.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
        on_disk.sort();
        let embedded: Vec<&str> = FILES.iter().map(|(p, _, _)| *p).collect();
        assert_eq!(embedded, on_disk);
        assert!(embedded.contains(&"src/lib.rs"), "{embedded:?}");
        for (rel, in_project, text) in FILES {
            assert_eq!(*in_project, format!("{DIR}/{rel}"));
            assert_eq!(
                *text,
                std::fs::read_to_string(root.join(rel)).unwrap(),
                "{rel}"
            );
        }
    }

    #[test]
    fn every_runtime_file_says_it_is_tool_owned_on_its_first_line() {
        for (rel, _, text) in FILES {
            let first = text.lines().next().unwrap_or_default();
            let leader = if rel.ends_with(".rs") { "// " } else { "# " };
            assert_eq!(first, format!("{leader}{TOOL_OWNED_LINE}"), "{rel}");
        }
    }

    /// The runtime's version is rsbuilder's: a project that depends on it by version names
    /// the version of the rsbuilder that made it.
    #[test]
    fn the_runtime_crate_has_rsbuilders_version() {
        let manifest: toml::Table = tree(VERSION).unwrap()["Cargo.toml"].parse().unwrap();
        assert_eq!(manifest["package"]["version"].as_str(), Some(VERSION));
        assert_eq!(manifest["package"]["name"].as_str(), Some(PACKAGE));
    }

    #[test]
    fn without_the_server_part_the_api_server_and_test_cluster_are_gone() {
        let full = project_files(true);
        let slim = project_files(false);
        let api = PathBuf::from(format!("{DIR}/src/apiserver/mod.rs"));
        let testing = PathBuf::from(format!("{DIR}/src/testing/mod.rs"));
        assert!(full.contains_key(&api) && full.contains_key(&testing));
        assert!(!slim.contains_key(&api) && !slim.contains_key(&testing));
        assert!(
            slim.keys()
                .all(|p| !p.starts_with(format!("{DIR}/src/apiserver"))
                    && !p.starts_with(format!("{DIR}/src/testing")))
        );
        // Every other file is the same text.
        for (path, text) in &slim {
            if !path.ends_with("Cargo.toml") {
                assert_eq!(Some(text), full.get(path), "{}", path.display());
            }
        }
        let manifest = &slim[&PathBuf::from(format!("{DIR}/Cargo.toml"))];
        let parsed: toml::Table = manifest.parse().unwrap();
        let deps = parsed["dependencies"].as_table().unwrap();
        for gone in ["axum", "redb", "cel", "etcd-client", "serde-saphyr"] {
            assert!(!deps.contains_key(gone), "{gone} in\n{manifest}");
        }
        for kept in ["kube", "hyper", "tokio-rustls"] {
            assert!(deps.contains_key(kept), "{kept} missing in\n{manifest}");
        }
        let features = parsed["features"].as_table().unwrap();
        assert_eq!(features["apiserver"].as_array().unwrap().len(), 0);
        assert_eq!(
            features["testing"].as_array().unwrap(),
            &vec![toml::Value::from("apiserver")]
        );
        // The comments stay.
        assert!(
            manifest.starts_with(&format!("# {TOOL_OWNED_LINE}\n")),
            "{manifest}"
        );
    }

    #[test]
    fn a_project_uses_the_server_part_when_its_cargo_toml_turns_it_on() {
        let with = |table: &str, features: &str| {
            format!(
                "[package]\nname = \"x\"\n\n[{table}]\nrsbuilder-runtime = {{ path = \"rsbuilder-runtime\"{features} }}\n"
            )
        };
        assert!(!uses_server(&with("dependencies", "")));
        assert!(!uses_server(&with("dependencies", ", features = [\"x\"]")));
        assert!(uses_server(&with(
            "dependencies",
            ", features = [\"apiserver\"]"
        )));
        assert!(uses_server(&with(
            "dev-dependencies",
            ", features = [\"testing\"]"
        )));
        assert!(uses_server(&with(
            "dependencies",
            ", features = [\"etcd\"]"
        )));
        assert!(uses_server(&with(
            "target.'cfg(unix)'.dev-dependencies",
            ", features = [\"testing\"]"
        )));
        assert!(!uses_server("not toml ["));
    }

    /// An archive as `git archive` makes it of a `runtime/` directory: the files a project
    /// holds come out, the crate's own tests and benches do not.
    #[test]
    fn an_archived_release_unpacks_to_the_files_a_project_holds() {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, text) in [
            ("runtime/Cargo.toml", "[package]\n"),
            ("runtime/src/lib.rs", "pub mod a;\n"),
            ("runtime/src/a.rs", "// a\n"),
            ("runtime/tests/t.rs", "// a test\n"),
        ] {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, path, text.as_bytes()).unwrap();
        }
        let raw = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &raw).unwrap();
        let tree = unpack(&gz.finish().unwrap()).unwrap();
        assert_eq!(
            tree.into_iter().collect::<Vec<_>>(),
            [
                ("Cargo.toml".to_owned(), "[package]\n".to_owned()),
                ("src/a.rs".to_owned(), "// a\n".to_owned()),
                ("src/lib.rs".to_owned(), "pub mod a;\n".to_owned()),
            ]
        );
        assert!(unpack(b"not gzip").is_err());
    }

    #[test]
    fn every_embedded_release_unpacks() {
        for (version, _) in RELEASES {
            let tree = tree(version).unwrap();
            assert!(tree.contains_key("src/lib.rs"), "{version}");
        }
        assert_eq!(versions().last(), Some(&VERSION));
        assert!(tree("0.0.0-never").is_none());
    }
}
