//! The crate's workspace as cargo sees it (`cargo metadata`), and its library built as the
//! user's `cargo build` builds it, with the paths rustc needs to compile the probe against it.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use super::{BuildError, CrateInfo, canonical, trim_errors};
use crate::manifests::cfg::FeatureFlags;

/// What `cargo metadata` says about the crate's workspace, as far as the probe needs it.
#[derive(Debug, Clone)]
pub(super) struct Workspace {
    /// The crate's `Cargo.toml`, canonical.
    pub(super) manifest: PathBuf,
    /// The workspace's target directory, as cargo chose it (`CARGO_TARGET_DIR`,
    /// `build.target-dir`, else `<workspace root>/target`).
    pub(super) target: PathBuf,
    /// The package ids `cargo build` selects: the crate's, then the default members of the
    /// workspace root, so that features unify as in a `cargo build` run in the root.
    pub(super) select: Vec<String>,
    /// The crate's package id.
    pub(super) id: String,
    /// The manifests of the workspace: the root's and every member's (they choose features).
    pub(super) manifests: Vec<PathBuf>,
    /// The build runs `--locked` (asked for, and the workspace has a `Cargo.lock`):
    /// `manifests --check` changes no file of the user's, so a lock that no longer fits
    /// Cargo.toml is cargo's error there.
    pub(super) locked: bool,
}

/// `cargo`, as cargo itself names it to subcommands and build scripts (`CARGO`), else from
/// `PATH`.
fn cargo_command() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// `cargo metadata --no-deps` of the package or workspace at `manifest`.
pub(super) fn metadata(manifest: &Path) -> Result<Value, String> {
    let out = cargo_command()
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo metadata --manifest-path {}` failed:\n{}",
            manifest.display(),
            trim_errors(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`cargo metadata` printed no JSON object: {e}"))
}

impl Workspace {
    /// Reads the crate's workspace with `cargo metadata`. With `--all-features` or
    /// `--no-default-features` only the crate is selected (those flags would otherwise apply
    /// to every member). Errors: cargo's, trimmed.
    pub(super) fn read(
        info: &CrateInfo,
        flags: &FeatureFlags,
        locked: bool,
    ) -> Result<Self, String> {
        let manifest = canonical(&info.dir.join("Cargo.toml"));
        let meta = metadata(&manifest)?;
        let path_of = |v: &Value| v.as_str().map(PathBuf::from);
        let packages = meta["packages"].as_array().cloned().unwrap_or_default();
        let id = packages
            .iter()
            .find(|p| path_of(&p["manifest_path"]).is_some_and(|m| canonical(&m) == manifest))
            .and_then(|p| p["id"].as_str())
            .map(String::from)
            .ok_or_else(|| {
                format!(
                    "`cargo metadata` does not list the package of {}",
                    manifest.display()
                )
            })?;
        let root = path_of(&meta["workspace_root"]).unwrap_or_else(|| info.dir.clone());
        let target = path_of(&meta["target_directory"]).unwrap_or_else(|| root.join("target"));
        let root_manifest = canonical(&root.join("Cargo.toml"));
        let mut manifests: Vec<PathBuf> = packages
            .iter()
            .filter_map(|p| path_of(&p["manifest_path"]))
            .collect();
        manifests.push(root_manifest.clone());
        manifests.sort();
        manifests.dedup();
        let mut select = vec![id.clone()];
        if !flags.all_features && !flags.no_default_features {
            // The default members of the root, as `cargo build` there selects them (the
            // crate's own view of them is only itself).
            let root_meta = if root_manifest == manifest {
                meta
            } else {
                metadata(&root_manifest)?
            };
            for m in root_meta["workspace_default_members"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !select.iter().any(|s| s == m) {
                    select.push(m.to_string());
                }
            }
        }
        Ok(Self {
            locked: locked && root.join("Cargo.lock").is_file(),
            manifest,
            target,
            select,
            id,
            manifests,
        })
    }

    /// Cargo's feature arguments for the crate: the `--features` values split at commas and
    /// spaces as cargo splits them; when other members are selected too, a plain name is
    /// spelled `<package>/<name>` so that it turns on the crate's feature only (`dep/feature`
    /// is passed as written).
    pub(super) fn feature_args(&self, package: &str, flags: &FeatureFlags) -> Vec<String> {
        let names: Vec<String> = flags
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(|f| {
                if self.select.len() > 1 && !f.contains('/') {
                    format!("{package}/{f}")
                } else {
                    f.to_string()
                }
            })
            .collect();
        let mut args = Vec::new();
        if !names.is_empty() {
            args.push("--features".to_string());
            args.push(names.join(","));
        }
        if flags.all_features {
            args.push("--all-features".into());
        }
        if flags.no_default_features {
            args.push("--no-default-features".into());
        }
        args
    }

    /// The probe's own directory: `<target>/rsbuilder-probe/<package>-<hash of the crate's
    /// manifest path>`, so that crates sharing a target directory keep apart.
    pub(super) fn probe_dir(&self, package: &str) -> PathBuf {
        let id: String = Sha256::digest(self.manifest.display().to_string().as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        self.target
            .join("rsbuilder-probe")
            .join(format!("{package}-{id}"))
    }
}

/// The crate's library built by cargo: what rustc needs to compile the probe against it.
#[derive(Debug, Clone)]
pub(super) struct Built {
    /// The crate's rlib.
    pub(super) rlib: PathBuf,
    /// `kube_core` and `serde_json` rlibs of the build (the newest version of each).
    pub(super) externs: Vec<(String, PathBuf)>,
    /// The `deps` directory every dependency was compiled into.
    pub(super) deps: PathBuf,
    /// The native search paths build scripts printed (`native=/…`).
    pub(super) native: Vec<String>,
}

/// The crates the probe's `main` names besides the user's.
const PROBE_EXTERNS: [&str; 2] = ["kube_core", "serde_json"];

/// Builds the crate's library with cargo in its workspace (its `Cargo.lock`, profile and
/// target directory, so that what `cargo build` compiled is reused) and finds the rlibs in
/// cargo's JSON messages. Errors: cargo's rendered errors, trimmed.
pub(super) fn build_lib(
    info: &CrateInfo,
    ws: &Workspace,
    flags: &FeatureFlags,
) -> Result<Built, BuildError> {
    let mut cmd = cargo_command();
    cmd.args([
        "build",
        "--lib",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
    ])
    .arg(&ws.manifest)
    .current_dir(&info.dir);
    if ws.locked {
        cmd.arg("--locked");
    }
    for id in &ws.select {
        cmd.args(["-p", id]);
    }
    cmd.args(ws.feature_args(&info.package, flags));
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(BuildError::from(trim_errors(&String::from_utf8_lossy(
            &out.stderr,
        ))));
    }
    let mut rlib = None;
    let mut found: BTreeMap<String, (semver::Version, PathBuf)> = BTreeMap::new();
    let mut deps = None;
    let mut native = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match msg["reason"].as_str() {
            Some("compiler-artifact") => {
                let files: Vec<PathBuf> = msg["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(PathBuf::from)
                    .collect();
                let Some(file) = rlib_in_deps(&files) else {
                    continue;
                };
                if deps.is_none() && file.parent().is_some_and(|p| p.ends_with("deps")) {
                    deps = file.parent().map(Path::to_path_buf);
                }
                let package_id = msg["package_id"].as_str().unwrap_or_default();
                let name = msg["target"]["name"].as_str().unwrap_or_default();
                if package_id == ws.id {
                    rlib = Some(file);
                } else if PROBE_EXTERNS.contains(&name) {
                    let version = package_version(package_id);
                    if found.get(name).is_none_or(|(v, _)| *v < version) {
                        found.insert(name.to_string(), (version, file));
                    }
                }
            }
            Some("build-script-executed") => native.extend(
                msg["linked_paths"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(String::from),
            ),
            _ => {}
        }
    }
    let rlib = rlib.ok_or_else(|| {
        BuildError::from(format!(
            "cargo built no library of {} (is it a `[lib]` of crate-type rlib?)",
            info.package
        ))
    })?;
    let missing: Vec<&str> = PROBE_EXTERNS
        .iter()
        .copied()
        .filter(|n| !found.contains_key(*n))
        .collect();
    if !missing.is_empty() {
        return Err(BuildError::from(format!(
            "the build of {} has no {} (the probe calls kube-core's CustomResourceExt and prints with serde_json)",
            info.package,
            missing.join(" and ")
        )));
    }
    let deps = deps.unwrap_or_else(|| {
        rlib.parent()
            .map_or_else(|| PathBuf::from("deps"), |p| p.join("deps"))
    });
    Ok(Built {
        rlib,
        externs: found.into_iter().map(|(n, (_, p))| (n, p)).collect(),
        deps,
        native,
    })
}

/// The rlib of an artifact's files, in the `deps` directory where there is one there: the
/// copy cargo puts beside it (`target/debug/libfoo.rlib`) is shared by every package of that
/// crate name built in the target directory, the one in `deps` carries the package's hash.
fn rlib_in_deps(files: &[PathBuf]) -> Option<PathBuf> {
    let in_deps = |f: &&PathBuf| f.parent().is_some_and(|p| p.ends_with("deps"));
    files
        .iter()
        .filter(in_deps)
        .find_map(|f| match f.extension().and_then(|x| x.to_str()) {
            Some("rlib") => Some(f.clone()),
            Some("rmeta") => Some(f.with_extension("rlib")).filter(|r| r.is_file()),
            _ => None,
        })
        .or_else(|| {
            files
                .iter()
                .find(|f| f.extension().is_some_and(|x| x == "rlib"))
                .cloned()
        })
}

/// The version in a cargo package id (`registry+https://…#serde_json@1.0.140`,
/// `path+file:///…#0.1.0`, or the older `serde_json 1.0.140 (registry+…)`); 0.0.0 when there
/// is none.
pub(super) fn package_version(id: &str) -> semver::Version {
    let candidates = id
        .rsplit(['#', '@', ' '])
        .map(|s| s.trim_matches(['(', ')']));
    candidates
        .filter_map(|s| semver::Version::parse(s).ok())
        .next()
        .unwrap_or(semver::Version::new(0, 0, 0))
}
