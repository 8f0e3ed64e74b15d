//! The crate versions that shape a crate's `crd()`, and whether rsbuilder's static evaluation
//! reproduces them.
//!
//! `crd()` is written by kube-derive's macro, rewritten by kube-core's structural-schema
//! visitor, built from schemars' schemas, and inlines k8s-openapi's types as of one Kubernetes
//! version (a `v1_*` feature of k8s-openapi, or `K8S_OPENAPI_ENABLED_VERSION`, as
//! k8s-openapi's build script reads them). Another release of any of them can give another
//! CRD for the same types (kube 2 and 3 write `shortNames: []`; k8s-openapi's descriptions
//! change with the Kubernetes version). Static evaluation reproduces exactly the versions
//! rsbuilder itself is built with, so [`check`] compares a crate's resolved versions (its
//! `Cargo.lock`) with those ([`reproduced`]); where they differ, `manifests` compiles the kind
//! or refuses it ([`super::generate::Options::versions`]), and never reports the difference as
//! a bug of rsbuilder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use semver::Version;

/// The crates whose versions decide what `crd()` returns, in the order messages name them.
pub const CRATES: [&str; 4] = ["kube-derive", "kube-core", "schemars", "k8s-openapi"];

/// The versions of [`CRATES`] and the Kubernetes version k8s-openapi is built for (`v1_37`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versions {
    /// Version per crate name of [`CRATES`]; a crate the lock does not reach is absent.
    pub crates: BTreeMap<&'static str, Version>,
    /// k8s-openapi's Kubernetes version feature (`v1_37`), when one is chosen.
    pub k8s_feature: Option<String>,
}

/// Why static evaluation does not apply to a crate: the place that shows it and what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The file that shows it (the crate's `Cargo.lock` or `Cargo.toml`), as the user named
    /// the crate's directory.
    pub file: PathBuf,
    /// 1-based line in `file`.
    pub line: usize,
    /// What differs, in words: "this crate uses kube-derive 2.0.1 (rsbuilder reproduces 5.0.0)".
    pub reason: String,
    /// The crate's Cargo.toml or Cargo.lock cannot be read or parsed (a FIFO, a link out of
    /// the project, broken TOML): cargo would fail on it as well, and its error quotes the
    /// file, so the crate is not compiled either.
    pub unreadable: bool,
}

/// What [`check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No `Cargo.toml` in the directory: there is no crate to compare (the sources are read
    /// as they are, `--paths` of loose files).
    NoCrate,
    /// The crate resolves exactly the versions rsbuilder reproduces.
    Same,
    /// The crate resolves other versions, or they cannot be told.
    Other(Mismatch),
}

/// The versions rsbuilder's static evaluation reproduces: those of its own `Cargo.lock`
/// (rsbuilder links kube-core, schemars and k8s-openapi and parses what kube-derive parses),
/// with the Kubernetes version feature it builds k8s-openapi with.
pub fn reproduced() -> &'static Versions {
    static REPRODUCED: std::sync::OnceLock<Versions> = std::sync::OnceLock::new();
    REPRODUCED.get_or_init(|| {
        let lock = Lock::parse(crate::model::versions::repository_lock())
            .expect("rsbuilder's own Cargo.lock parses (a unit test holds to it)");
        let mut crates = BTreeMap::new();
        for name in CRATES {
            let found: Vec<&Entry> = lock.entries.iter().filter(|e| e.name == name).collect();
            if let [one] = found.as_slice() {
                crates.insert(name, one.version.clone());
            }
        }
        Versions {
            crates,
            k8s_feature: Some(crate::model::versions::K8S_FEATURE.to_string()),
        }
    })
}

/// Compares the crate at `crate_dir` (the directory of its `Cargo.toml`) with [`reproduced`]:
/// the versions its `Cargo.lock` (the nearest one at or above the crate, as cargo keeps one per
/// workspace) resolves for kube-derive and kube-core (those the crate's package reaches) and
/// for schemars and k8s-openapi (those kube-core depends on), and the Kubernetes version
/// feature of k8s-openapi (the crate's `Cargo.toml`, then its workspace root's, then the
/// `K8S_OPENAPI_ENABLED_VERSION` variable, as k8s-openapi's build script reads them).
///
/// A crate without a lock, a lock that does not parse or a Kubernetes version that no file
/// chooses is [`Verdict::Other`]: static evaluation cannot know what `crd()` is built with.
pub fn check(crate_dir: &Path) -> Verdict {
    check_with(crate_dir, reproduced(), env_version().as_deref())
}

/// `K8S_OPENAPI_ENABLED_VERSION` as k8s-openapi reads it (`1.37`), as a feature name (`v1_37`).
fn env_version() -> Option<String> {
    feature_of_env(&std::env::var("K8S_OPENAPI_ENABLED_VERSION").ok()?)
}

/// A value of `K8S_OPENAPI_ENABLED_VERSION` (`1.37`) as the feature it stands for (`v1_37`);
/// `None` where k8s-openapi's build script would not read a version either.
fn feature_of_env(value: &str) -> Option<String> {
    let minor: u32 = value.strip_prefix("1.")?.parse().ok()?;
    Some(format!("v1_{minor}"))
}

/// [`check`] against `ours`, with the environment's Kubernetes version `env_feature`.
fn check_with(crate_dir: &Path, ours: &Versions, env_feature: Option<&str>) -> Verdict {
    let manifest = match crate::engine::read(crate_dir, Path::new("Cargo.toml")) {
        Ok(Some(text)) => text,
        Ok(None) => return Verdict::NoCrate,
        Err(e) => {
            return Verdict::Other(Mismatch {
                file: crate_dir.join("Cargo.toml"),
                line: 1,
                reason: format!("its Cargo.toml cannot be read: {}", e.read_reason()),
                unreadable: true,
            });
        }
    };
    let found = match find_lock(crate_dir) {
        Ok(found) => found,
        Err((file, why)) => {
            return Verdict::Other(Mismatch {
                file,
                line: 1,
                reason: format!("its Cargo.lock cannot be read: {why}"),
                unreadable: true,
            });
        }
    };
    let Some((lock_dir, lock_text)) = found else {
        return Verdict::Other(Mismatch {
            file: crate_dir.join("Cargo.toml"),
            line: 1,
            reason: "the crate has no Cargo.lock (here or in a directory above), so the versions of kube-derive, kube-core, schemars and k8s-openapi it builds with are not known; run `cargo generate-lockfile` (or `cargo build`) and keep Cargo.lock in version control".to_string(),
            unreadable: false,
        });
    };
    let lock_file = lock_dir.join("Cargo.lock");
    let lock = match Lock::parse(&lock_text) {
        Ok(lock) => lock,
        Err((line, message)) => {
            return Verdict::Other(Mismatch {
                file: lock_file,
                line,
                reason: format!("its Cargo.lock cannot be read: {message}"),
                unreadable: true,
            });
        }
    };
    let package = package_name(&manifest);
    let theirs = lock.versions_for(package.as_deref());
    let mut differences = Vec::new();
    let mut first_line = None;
    for name in CRATES {
        let ours_v = ours.crates.get(name);
        let found = theirs.get(name).cloned().unwrap_or_default();
        if found.is_empty() {
            if name == "kube-derive" || name == "kube-core" {
                differences.push(format!(
                    "its Cargo.lock has no {name}{}",
                    package
                        .as_deref()
                        .map(|p| format!(" that {p} depends on"))
                        .unwrap_or_default()
                ));
            }
            continue;
        }
        let other: Vec<&(Version, usize)> =
            found.iter().filter(|(v, _)| Some(v) != ours_v).collect();
        if other.is_empty() {
            continue;
        }
        first_line.get_or_insert(other[0].1);
        let list: Vec<String> = other.iter().map(|(v, _)| v.to_string()).collect();
        differences.push(match ours_v {
            Some(o) => format!(
                "this crate uses {name} {} (rsbuilder reproduces {o})",
                list.join(" and ")
            ),
            None => format!("this crate uses {name} {}", list.join(" and ")),
        });
    }
    if !differences.is_empty() {
        return Verdict::Other(Mismatch {
            file: lock_file,
            line: first_line.unwrap_or(1),
            reason: differences.join("; "),
            unreadable: false,
        });
    }
    // Same k8s-openapi release: its Kubernetes version feature decides the inlined types.
    let Some(wanted) = ours.k8s_feature.as_deref() else {
        return Verdict::Same;
    };
    let root = workspace_root(crate_dir, &lock_dir);
    let chosen = k8s_feature_in(&manifest)
        .map(|(f, line)| (f, crate_dir.join("Cargo.toml"), line))
        .or_else(|| {
            let root = root.as_ref()?;
            let text = crate::engine::read(root, Path::new("Cargo.toml"))
                .ok()
                .flatten()?;
            k8s_feature_in(&text).map(|(f, line)| (f, root.join("Cargo.toml"), line))
        });
    let chosen = match (chosen, env_feature) {
        (Some((feature, file, line)), _) => (normalize_feature(&feature), file, line, "selects"),
        (None, Some(env)) => (
            env.to_string(),
            crate_dir.join("Cargo.toml"),
            1,
            "is built (K8S_OPENAPI_ENABLED_VERSION) for",
        ),
        (None, None) => {
            return Verdict::Other(Mismatch {
                file: crate_dir.join("Cargo.toml"),
                line: 1,
                reason: format!(
                    "no Kubernetes version of k8s-openapi is chosen here (no `v1_*` feature in this Cargo.toml or the workspace's, no K8S_OPENAPI_ENABLED_VERSION), so which version's types crd() inlines is not known (rsbuilder reproduces `{wanted}`)"
                ),
                unreadable: false,
            });
        }
    };
    let (feature, file, line, verb) = chosen;
    if feature == wanted {
        return Verdict::Same;
    }
    Verdict::Other(Mismatch {
        file,
        line,
        reason: format!(
            "k8s-openapi {verb} Kubernetes `{feature}`, and rsbuilder reproduces its types as of `{wanted}` (descriptions and fields of embedded Kubernetes types differ between versions)"
        ),
        unreadable: false,
    })
}

/// `latest` and `earliest` as k8s-openapi 0.29 defines them (the only release whose features
/// are compared: another release is a difference by itself).
fn normalize_feature(feature: &str) -> String {
    match feature {
        "latest" => "v1_37".to_string(),
        "earliest" => "v1_33".to_string(),
        f => f.to_string(),
    }
}

/// The nearest directory at or above `dir` holding a `Cargo.lock`, and its text. Errors: the
/// nearest `Cargo.lock` cannot be read (a FIFO, a device, a directory, not UTF-8): its path
/// and why, rather than going on as if there were none.
fn find_lock(dir: &Path) -> Result<Option<(PathBuf, String)>, (PathBuf, String)> {
    for d in dir.ancestors() {
        match crate::engine::read(d, Path::new("Cargo.lock")) {
            Ok(Some(text)) => return Ok(Some((d.to_path_buf(), text))),
            Ok(None) => {}
            Err(e) => return Err((d.join("Cargo.lock"), e.read_reason())),
        }
    }
    Ok(None)
}

/// The workspace root of the crate at `crate_dir`: the nearest directory from the crate up to
/// the lock's that has a `Cargo.toml` with `[workspace]` (cargo keeps the lock there).
fn workspace_root(crate_dir: &Path, lock_dir: &Path) -> Option<PathBuf> {
    for d in crate_dir.ancestors() {
        let text = crate::engine::read(d, Path::new("Cargo.toml"))
            .ok()
            .flatten();
        let is_workspace = text
            .and_then(|t| t.parse::<toml::Table>().ok())
            .is_some_and(|t| t.contains_key("workspace"));
        if is_workspace {
            return Some(d.to_path_buf());
        }
        if d == lock_dir {
            break;
        }
    }
    None
}

/// The `[package] name` of a Cargo.toml.
fn package_name(manifest: &str) -> Option<String> {
    let table: toml::Table = manifest.parse().ok()?;
    table
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// The Kubernetes version feature (`v1_33`, `latest`, `earliest`) a Cargo.toml enables on
/// k8s-openapi in any dependency table (dependencies, dev-dependencies, build-dependencies,
/// target-specific ones and `[workspace.dependencies]`), with the 1-based line of the feature.
fn k8s_feature_in(manifest: &str) -> Option<(String, usize)> {
    let table: toml::Table = manifest.parse().ok()?;
    let mut tables: Vec<&toml::Table> = Vec::new();
    let deps = ["dependencies", "dev-dependencies", "build-dependencies"];
    for key in deps {
        tables.extend(table.get(key).and_then(|v| v.as_table()));
    }
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for target in targets.values().filter_map(|t| t.as_table()) {
            for key in deps {
                tables.extend(target.get(key).and_then(|v| v.as_table()));
            }
        }
    }
    if let Some(ws) = table.get("workspace").and_then(|w| w.as_table()) {
        tables.extend(ws.get("dependencies").and_then(|v| v.as_table()));
    }
    let features: BTreeSet<String> = tables
        .iter()
        .flat_map(|t| t.iter())
        .filter(|(key, value)| {
            *key == "k8s-openapi"
                || value.get("package").and_then(|p| p.as_str()) == Some("k8s-openapi")
        })
        .filter_map(|(_, value)| value.get("features")?.as_array().cloned())
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .filter(|f| f.starts_with("v1_") || f == "latest" || f == "earliest")
        .collect();
    let feature = features.into_iter().next()?;
    let quoted = format!("\"{feature}\"");
    let line = manifest
        .lines()
        .position(|l| l.contains(&quoted))
        .map_or(1, |i| i + 1);
    Some((feature, line))
}

/// A `Cargo.lock`'s `[[package]]` entries, as cargo writes them (versions 3 and 4).
#[derive(Debug)]
struct Lock {
    entries: Vec<Entry>,
}

/// One `[[package]]` entry: name, version, 1-based line of its `name`, and its dependencies
/// as cargo writes them (`name`, `name version` or `name version (source)`).
#[derive(Debug)]
struct Entry {
    name: String,
    version: Version,
    line: usize,
    dependencies: Vec<String>,
}

#[derive(serde::Deserialize)]
struct RawLock {
    #[serde(default)]
    package: Vec<RawEntry>,
}

#[derive(serde::Deserialize)]
struct RawEntry {
    name: toml::Spanned<String>,
    version: String,
    #[serde(default)]
    dependencies: Vec<String>,
}

impl Lock {
    /// Parses the lock. Errors: the 1-based line and what is wrong (not TOML, a version that
    /// is not semver).
    fn parse(text: &str) -> Result<Lock, (usize, String)> {
        let line_of = |offset: usize| {
            text.get(..offset)
                .map_or(1, |b| b.matches('\n').count() + 1)
        };
        let raw: RawLock = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(s.start));
            (line, e.message().trim_end().to_string())
        })?;
        let mut entries = Vec::with_capacity(raw.package.len());
        for p in raw.package {
            let line = line_of(p.name.span().start);
            let name = p.name.into_inner();
            let version = Version::parse(&p.version)
                .map_err(|e| (line, format!("{name}'s version \"{}\": {e}", p.version)))?;
            entries.push(Entry {
                name,
                version,
                line,
                dependencies: p.dependencies,
            });
        }
        Ok(Lock { entries })
    }

    /// The entries a dependency string of cargo's lock (`name`, `name version`,
    /// `name version (source)`) names.
    fn resolve<'a>(&'a self, dependency: &str) -> impl Iterator<Item = usize> + 'a {
        let mut words = dependency.split_whitespace();
        let name = words.next().unwrap_or_default().to_string();
        let version = words.next().and_then(|v| Version::parse(v).ok());
        self.entries
            .iter()
            .enumerate()
            .filter(move |(_, e)| {
                e.name == name && version.as_ref().is_none_or(|v| *v == e.version)
            })
            .map(|(i, _)| i)
    }

    /// The versions (with their entries' lines) of [`CRATES`] that shape `package`'s
    /// `crd()`: kube-derive and kube-core as reached from the package's entry (every entry when
    /// the package is not in the lock), schemars and k8s-openapi as kube-core's dependencies.
    fn versions_for(&self, package: Option<&str>) -> BTreeMap<&'static str, Vec<(Version, usize)>> {
        let starts: Vec<usize> = package
            .map(|p| self.resolve(p).collect())
            .unwrap_or_default();
        let reached: BTreeSet<usize> = if starts.is_empty() {
            (0..self.entries.len()).collect()
        } else {
            let mut seen: BTreeSet<usize> = starts.iter().copied().collect();
            let mut todo = starts;
            while let Some(i) = todo.pop() {
                for d in &self.entries[i].dependencies {
                    for j in self.resolve(d) {
                        if seen.insert(j) {
                            todo.push(j);
                        }
                    }
                }
            }
            seen
        };
        let mut out: BTreeMap<&'static str, Vec<(Version, usize)>> = BTreeMap::new();
        let mut add = |name: &'static str, i: usize| {
            let e = &self.entries[i];
            let list = out.entry(name).or_default();
            if !list.iter().any(|(v, _)| *v == e.version) {
                list.push((e.version.clone(), e.line));
            }
        };
        for &i in &reached {
            match self.entries[i].name.as_str() {
                "kube-derive" => add("kube-derive", i),
                "kube-core" => add("kube-core", i),
                _ => {}
            }
        }
        let cores: Vec<usize> = reached
            .iter()
            .copied()
            .filter(|&i| self.entries[i].name == "kube-core")
            .collect();
        for core in cores {
            for d in &self.entries[core].dependencies {
                for j in self.resolve(d) {
                    match self.entries[j].name.as_str() {
                        "schemars" => add("schemars", j),
                        "k8s-openapi" => add("k8s-openapi", j),
                        _ => {}
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
