//! The features cargo enables for the crate being read: the `[features]` table of its
//! Cargo.toml, optional dependencies as implicit features, and cargo's `--features`,
//! `--all-features` and `--no-default-features`, resolved the way cargo's feature resolver
//! resolves one package's own features.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The feature flags of one run, spelled as cargo spells them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureFlags {
    /// `--features` values: each may hold several names separated by commas or spaces;
    /// `dep/feature` enables an optional dependency, `<package>/feature` is the package's own.
    pub features: Vec<String>,
    /// `--all-features`: every feature of the `[features]` table and every implicit one.
    pub all_features: bool,
    /// `--no-default-features`: leave out the `default` feature.
    pub no_default_features: bool,
}

impl FeatureFlags {
    /// Whether any flag was given.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty() && !self.all_features && !self.no_default_features
    }

    /// The `--features` names, split on commas and spaces as cargo splits them.
    pub fn names(&self) -> Vec<String> {
        self.features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// Where the enabled features came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeatureSource {
    /// The `[package]` manifest found from the project directory.
    Manifest(PathBuf),
    /// No package manifest (a directory of loose `.rs` files given with `--paths`, or a
    /// virtual workspace manifest): no feature is enabled but those named with `--features`.
    NoManifest,
}

/// A problem with the manifest or with the flags; the CLI reports it as the flag's or the
/// file's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// Cargo.toml cannot be read or is not valid TOML.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A flag names something the package does not have.
    #[error("{0}")]
    Flag(String),
}

/// The nearest `Cargo.toml` at or above `dir`, as cargo looks for it from its working
/// directory.
pub fn find_manifest(dir: &Path) -> Option<PathBuf> {
    let start = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let absolute = std::path::absolute(start).ok()?;
    absolute
        .ancestors()
        .map(|a| a.join("Cargo.toml"))
        .find(|p| p.is_file())
}

/// The features of a package manifest: the `[features]` table and the optional dependencies.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    /// The package name (`<package>/feature` in `--features`); `None` for a virtual manifest.
    pub package: Option<String>,
    /// `[features]`: name → what it enables.
    pub table: BTreeMap<String, Vec<String>>,
    /// Names of optional dependencies (normal, build and target-specific ones).
    pub optional: BTreeSet<String>,
}

impl Manifest {
    /// Parses a Cargo.toml text; `path` is for messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, FeatureError> {
        let bad = |message: String| FeatureError::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let doc: toml::Table = toml::from_str(text).map_err(|e| {
            bad(format!(
                "not valid TOML: {}",
                crate::engine::cargo_dep::toml_error(text, &e)
            ))
        })?;
        let package = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .map(str::to_string);
        let mut table = BTreeMap::new();
        if let Some(features) = doc.get("features") {
            let features = features
                .as_table()
                .ok_or_else(|| bad("[features] is not a table".into()))?;
            for (name, value) in features {
                let list = value
                    .as_array()
                    .ok_or_else(|| bad(format!("feature `{name}` is not an array of strings")))?;
                let mut entries = Vec::new();
                for v in list {
                    let s = v.as_str().ok_or_else(|| {
                        bad(format!(
                            "feature `{name}` holds a value that is not a string"
                        ))
                    })?;
                    entries.push(s.to_string());
                }
                table.insert(name.clone(), entries);
            }
        }
        let mut optional = BTreeSet::new();
        let mut scan = |deps: Option<&toml::Value>| {
            for (name, dep) in deps.and_then(|d| d.as_table()).into_iter().flatten() {
                if dep.get("optional").and_then(|o| o.as_bool()) == Some(true) {
                    optional.insert(name.clone());
                }
            }
        };
        for key in ["dependencies", "build-dependencies", "build_dependencies"] {
            scan(doc.get(key));
        }
        for (_, target) in doc
            .get("target")
            .and_then(|t| t.as_table())
            .into_iter()
            .flatten()
        {
            for key in ["dependencies", "build-dependencies", "build_dependencies"] {
                scan(target.get(key));
            }
        }
        Ok(Self {
            package,
            table,
            optional,
        })
    }

    /// Optional dependencies that are features of their own: those no feature names with
    /// `dep:` (cargo's rule since `dep:` exists).
    fn implicit(&self) -> BTreeSet<String> {
        let named_with_dep: BTreeSet<&str> = self
            .table
            .values()
            .flatten()
            .filter_map(|e| e.strip_prefix("dep:"))
            .collect();
        self.optional
            .iter()
            .filter(|d| !named_with_dep.contains(d.as_str()))
            .cloned()
            .collect()
    }

    /// The features enabled by `flags`, closed over what each feature enables. Errors: a
    /// `--features` name the package does not have, `dep:` on the command line, a feature of
    /// the table that enables a name that is neither a feature nor an optional dependency.
    pub fn enabled(&self, flags: &FeatureFlags) -> Result<BTreeSet<String>, FeatureError> {
        let implicit = self.implicit();
        let exists = |f: &str| self.table.contains_key(f) || implicit.contains(f);
        let mut todo: Vec<String> = Vec::new();
        if flags.all_features {
            todo.extend(self.table.keys().cloned());
            todo.extend(implicit.iter().cloned());
        } else if !flags.no_default_features && self.table.contains_key("default") {
            todo.push("default".into());
        }
        let package = self.package.as_deref().unwrap_or("this package");
        for name in flags.names() {
            if name.starts_with("dep:") {
                return Err(FeatureError::Flag(format!(
                    "--features {name}: `dep:` names an optional dependency inside [features]; on the command line, name a feature"
                )));
            }
            let own = self
                .package
                .as_deref()
                .and_then(|p| name.strip_prefix(&format!("{p}/")))
                .map(str::to_string);
            match own {
                Some(f) => todo.push(f),
                None if name.contains('/') => todo.push(name),
                None if exists(&name) => todo.push(name),
                None => {
                    let mut known: Vec<&str> = self
                        .table
                        .keys()
                        .map(String::as_str)
                        .chain(implicit.iter().map(String::as_str))
                        .collect();
                    known.sort();
                    return Err(FeatureError::Flag(format!(
                        "--features {name}: package `{package}` has no feature `{name}` (its features: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    )));
                }
            }
        }
        let mut enabled = BTreeSet::new();
        while let Some(entry) = todo.pop() {
            // `dep/feature` and `dep?/feature`: a feature of a dependency; the plain form
            // also turns the dependency on, and with it its implicit feature.
            if let Some((dep, _)) = entry.split_once('/') {
                if !dep.ends_with('?') && implicit.contains(dep) {
                    todo.push(dep.to_string());
                }
                continue;
            }
            if entry.starts_with("dep:") || !enabled.insert(entry.clone()) {
                continue;
            }
            match self.table.get(&entry) {
                Some(children) => {
                    for c in children {
                        let plain = !c.contains('/') && !c.starts_with("dep:");
                        if plain && !exists(c) {
                            return Err(FeatureError::Manifest {
                                path: PathBuf::from("Cargo.toml"),
                                message: format!(
                                    "feature `{entry}` includes `{c}`, which is neither a feature nor an optional dependency"
                                ),
                            });
                        }
                        todo.push(c.clone());
                    }
                }
                None if implicit.contains(&entry) => {}
                None => {
                    return Err(FeatureError::Flag(format!(
                        "package `{package}` has no feature `{entry}`"
                    )));
                }
            }
        }
        Ok(enabled)
    }
}

/// The features enabled for the package whose manifest is `manifest` (or for loose files
/// without one), with `flags`. Errors: unreadable or invalid manifest, unknown feature names,
/// `--all-features` without a manifest.
pub fn resolve(
    manifest: Option<&Path>,
    flags: &FeatureFlags,
) -> Result<(BTreeSet<String>, FeatureSource), FeatureError> {
    let text =
        match manifest {
            Some(path) => Some(crate::engine::regular::read_path(path).map_err(|e| {
                FeatureError::Manifest {
                    path: path.to_path_buf(),
                    message: format!("cannot read: {e}"),
                }
            })?),
            None => None,
        };
    resolve_text(manifest.zip(text.as_deref()), flags)
}

/// [`resolve`] for a manifest already read: `(path, text)` of the `Cargo.toml`, or `None` for
/// loose files without one. Errors as [`resolve`]'s, but for reading.
pub fn resolve_text(
    manifest: Option<(&Path, &str)>,
    flags: &FeatureFlags,
) -> Result<(BTreeSet<String>, FeatureSource), FeatureError> {
    let parsed = match manifest {
        Some((path, text)) => {
            let m = Manifest::parse(path, text)?;
            m.package.is_some().then_some((path, m))
        }
        None => None,
    };
    match parsed {
        Some((path, m)) => {
            let enabled = m.enabled(flags).map_err(|e| match e {
                FeatureError::Manifest { message, .. } => FeatureError::Manifest {
                    path: path.to_path_buf(),
                    message,
                },
                other => other,
            })?;
            Ok((enabled, FeatureSource::Manifest(path.to_path_buf())))
        }
        None if flags.all_features => Err(FeatureError::Flag(
            "--all-features: no package Cargo.toml was found, so there is no feature list to enable; name the features with --features".into(),
        )),
        None => Ok((flags.names().into_iter().collect(), FeatureSource::NoManifest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[package]
name = "op"

[features]
default = ["metrics"]
metrics = ["dep:prometheus", "telemetry"]
telemetry = []
full = ["metrics", "schemars/chrono04", "tls"]
tls = ["rustls?/ring"]

[dependencies]
prometheus = { version = "0.14", optional = true }
rustls = { version = "0.23", optional = true }
chrono = { version = "0.4", optional = true }
schemars = "1"

[target.'cfg(unix)'.build-dependencies]
cc = { version = "1", optional = true }
"#;

    fn enabled(flags: FeatureFlags) -> Result<Vec<String>, FeatureError> {
        let m = Manifest::parse(Path::new("Cargo.toml"), MANIFEST).unwrap();
        m.enabled(&flags).map(|s| s.into_iter().collect())
    }

    fn features(list: &[&str]) -> FeatureFlags {
        FeatureFlags {
            features: list.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn default_features_are_closed_over_the_table() {
        assert_eq!(
            enabled(FeatureFlags::default()).unwrap(),
            ["default", "metrics", "telemetry"]
        );
    }

    #[test]
    fn optional_dependencies_are_features_unless_named_with_dep() {
        // prometheus is named `dep:prometheus`, so it is no feature; the others are.
        let m = Manifest::parse(Path::new("Cargo.toml"), MANIFEST).unwrap();
        assert_eq!(
            m.implicit().into_iter().collect::<Vec<_>>(),
            ["cc", "chrono", "rustls"]
        );
        assert_eq!(
            enabled(FeatureFlags {
                no_default_features: true,
                features: vec!["chrono".into()],
                ..Default::default()
            })
            .unwrap(),
            ["chrono"]
        );
        let err = enabled(features(&["prometheus"])).unwrap_err();
        assert!(
            err.to_string()
                .contains("package `op` has no feature `prometheus`"),
            "{err}"
        );
    }

    #[test]
    fn flags_are_split_and_spelled_as_cargo_spells_them() {
        let got = enabled(FeatureFlags {
            features: vec!["tls, op/chrono".into(), "rustls/ring".into()],
            no_default_features: true,
            ..Default::default()
        })
        .unwrap();
        // `rustls/ring` turns the optional dependency on, and with it its feature.
        assert_eq!(got, ["chrono", "rustls", "tls"]);
        // `tls` alone enables `rustls?/ring`, which does not turn rustls on.
        assert_eq!(
            enabled(FeatureFlags {
                features: vec!["tls".into()],
                no_default_features: true,
                ..Default::default()
            })
            .unwrap(),
            ["tls"]
        );
        let all = enabled(FeatureFlags {
            all_features: true,
            no_default_features: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            all,
            [
                "cc",
                "chrono",
                "default",
                "full",
                "metrics",
                "rustls",
                "telemetry",
                "tls"
            ]
        );
        let err = enabled(features(&["dep:chrono"])).unwrap_err();
        assert!(err.to_string().contains("`dep:`"), "{err}");
        let err = enabled(features(&["metrcs"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--features metrcs: package `op` has no feature `metrcs` (its features: cc, chrono, default, full, metrics, rustls, telemetry, tls)"
        );
    }

    #[test]
    fn a_feature_enabling_an_unknown_name_is_a_manifest_error() {
        let m = Manifest::parse(
            Path::new("Cargo.toml"),
            "[package]\nname = \"x\"\n[features]\ndefault = [\"nope\"]\n",
        )
        .unwrap();
        let err = m.enabled(&FeatureFlags::default()).unwrap_err();
        assert!(err.to_string().contains("includes `nope`"), "{err}");
        let err = Manifest::parse(Path::new("x/Cargo.toml"), "[features\n").unwrap_err();
        assert!(
            err.to_string().starts_with("x/Cargo.toml: not valid TOML"),
            "{err}"
        );
    }

    #[test]
    fn without_a_package_manifest_only_named_features_are_enabled() {
        let dir = tempfile::tempdir().unwrap();
        let virt = dir.path().join("Cargo.toml");
        std::fs::write(&virt, "[workspace]\nmembers = [\"a\"]\n").unwrap();
        let (set, source) = resolve(Some(&virt), &features(&["x,y"])).unwrap();
        assert_eq!(set.into_iter().collect::<Vec<_>>(), ["x", "y"]);
        assert_eq!(source, FeatureSource::NoManifest);
        let err = resolve(
            None,
            &FeatureFlags {
                all_features: true,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("--all-features"), "{err}");
    }

    #[test]
    fn the_manifest_is_found_in_the_directory_or_above() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/api")).unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        let found = find_manifest(&dir.path().join("src/api")).unwrap();
        assert_eq!(
            found.canonicalize().unwrap(),
            dir.path().join("Cargo.toml").canonicalize().unwrap()
        );
    }
}
