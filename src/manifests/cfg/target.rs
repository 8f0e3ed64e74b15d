//! The configuration names and pairs rustc sets when cargo builds the crate's library for the
//! host: what `rustc --print cfg` answers, asked with the flags cargo would pass (the dev
//! profile's `debug-assertions` and `panic`, then `CARGO_ENCODED_RUSTFLAGS` or `RUSTFLAGS`,
//! and `--target` from `CARGO_BUILD_TARGET`), as cargo itself asks rustc before a build.
//!
//! With this set known, a name or pair outside it is false, as rustc treats it: a
//! `cfg(not(tarpaulin_include))` item is compiled. A build script that prints
//! `cargo:rustc-cfg` can set names rsbuilder does not run; then a name outside the set stays
//! undecided.

use std::collections::BTreeSet;
use std::path::Path;

/// The target configuration rustc reports, and what it cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetCfg {
    /// Bare names: `unix`, `debug_assertions`, names given with `--cfg name`.
    pub names: BTreeSet<String>,
    /// `key = "value"` pairs: `target_os = "linux"`, `panic = "unwind"`, `--cfg 'k="v"'`.
    pub pairs: BTreeSet<(String, String)>,
    /// The build script may set more names with `cargo:rustc-cfg`: names outside the set
    /// stay undecided.
    pub build_script_sets_cfg: bool,
}

impl TargetCfg {
    /// Parses the output of `rustc --print cfg`: one `name` or `key="value"` a line.
    pub fn parse(text: &str) -> Self {
        let mut out = Self::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match line.split_once('=') {
                Some((k, v)) => {
                    let v = v.trim().trim_matches('"');
                    out.pairs.insert((k.trim().to_string(), v.to_string()));
                }
                None => {
                    out.names.insert(line.to_string());
                }
            }
        }
        out
    }

    /// Asks rustc (`$RUSTC`, else `rustc`, run in `dir` so that a `rust-toolchain.toml` there
    /// chooses it as it does for cargo) for the configuration of a dev build of the crate
    /// whose Cargo.toml text is `manifest` (for its `[profile.dev]`), with the flags of the
    /// environment. `build_script` is the text of the crate's build script, if any.
    ///
    /// Errors: rustc cannot be run or rejects the flags; the message says which, and the
    /// caller leaves target names undecided.
    pub fn query(
        dir: &Path,
        manifest: Option<&str>,
        build_script: Option<&str>,
    ) -> Result<Self, String> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let args = rustc_args(
            manifest,
            &env_rustflags(),
            std::env::var("CARGO_BUILD_TARGET").ok(),
        );
        let mut cmd = std::process::Command::new(&rustc);
        cmd.args(&args);
        if dir.is_dir() {
            cmd.current_dir(dir);
        }
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", rustc.to_string_lossy()))?;
        if !out.status.success() {
            return Err(format!(
                "`{} {}` failed: {}",
                rustc.to_string_lossy(),
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut cfg = Self::parse(&String::from_utf8_lossy(&out.stdout));
        cfg.build_script_sets_cfg = build_script.is_some_and(|t| t.contains("rustc-cfg"));
        Ok(cfg)
    }

    /// Whether the bare name is set: `Some(false)` when it is not and nothing else could set
    /// it, `None` when a build script might.
    pub fn name(&self, name: &str) -> Option<bool> {
        if self.names.contains(name) {
            Some(true)
        } else if self.build_script_sets_cfg {
            None
        } else {
            Some(false)
        }
    }

    /// Whether `key = "value"` is set, as [`TargetCfg::name`].
    pub fn pair(&self, key: &str, value: &str) -> Option<bool> {
        if self.pairs.contains(&(key.to_string(), value.to_string())) {
            Some(true)
        } else if self.build_script_sets_cfg && !self.pairs.iter().any(|(k, _)| k == key) {
            // A key rustc sets itself (`target_os`) has all its values listed; another one
            // may come from the build script.
            None
        } else {
            Some(false)
        }
    }
}

/// The rustflags cargo passes, from the environment: `CARGO_ENCODED_RUSTFLAGS` (split on
/// `\x1f`) when set, else `RUSTFLAGS` (split on whitespace), as cargo reads them.
pub fn env_rustflags() -> Vec<String> {
    if let Ok(encoded) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        return encoded
            .split('\x1f')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
    }
    std::env::var("RUSTFLAGS")
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The arguments of `rustc --print cfg` for a dev build: the profile's `debug-assertions`
/// (on unless `[profile.dev]` turns it off) and `panic`, the `--target`, then `rustflags`
/// (last, so they win as they do in cargo's command line).
pub fn rustc_args(
    manifest: Option<&str>,
    rustflags: &[String],
    target: Option<String>,
) -> Vec<String> {
    let dev = manifest
        .and_then(|t| toml::from_str::<toml::Table>(t).ok())
        .and_then(|doc| doc.get("profile")?.get("dev").cloned());
    let debug_assertions = dev
        .as_ref()
        .and_then(|d| d.get("debug-assertions")?.as_bool())
        .unwrap_or(true);
    let mut args: Vec<String> = vec!["--print".into(), "cfg".into()];
    args.push("-C".into());
    args.push(format!(
        "debug-assertions={}",
        if debug_assertions { "on" } else { "off" }
    ));
    if let Some(panic) = dev.as_ref().and_then(|d| d.get("panic")?.as_str()) {
        args.push("-C".into());
        args.push(format!("panic={panic}"));
    }
    if let Some(t) = target.filter(|t| !t.is_empty()) {
        args.push("--target".into());
        args.push(t);
    }
    args.extend(rustflags.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustc_output_is_read_as_names_and_pairs() {
        let t = TargetCfg::parse("debug_assertions\npanic=\"unwind\"\ntarget_os=\"linux\"\nunix\n");
        assert_eq!(t.name("unix"), Some(true));
        assert_eq!(t.name("tarpaulin_include"), Some(false));
        assert_eq!(t.pair("target_os", "linux"), Some(true));
        assert_eq!(t.pair("target_os", "windows"), Some(false));
        let with_script = TargetCfg {
            build_script_sets_cfg: true,
            ..t
        };
        assert_eq!(with_script.name("tarpaulin_include"), None);
        assert_eq!(with_script.pair("target_os", "windows"), Some(false));
        assert_eq!(with_script.pair("my_key", "x"), None);
    }

    #[test]
    fn the_dev_profile_and_the_flags_choose_the_arguments() {
        let plain = rustc_args(None, &[], None);
        assert_eq!(plain, ["--print", "cfg", "-C", "debug-assertions=on"]);
        let manifest =
            "[package]\nname = \"x\"\n[profile.dev]\ndebug-assertions = false\npanic = \"abort\"\n";
        let flags = vec!["--cfg".to_string(), "tokio_unstable".to_string()];
        assert_eq!(
            rustc_args(
                Some(manifest),
                &flags,
                Some("wasm32-unknown-unknown".into())
            ),
            [
                "--print",
                "cfg",
                "-C",
                "debug-assertions=off",
                "-C",
                "panic=abort",
                "--target",
                "wasm32-unknown-unknown",
                "--cfg",
                "tokio_unstable"
            ]
        );
    }

    /// The real rustc: the host's cfg, with `--cfg` from the flags.
    #[test]
    fn rustc_answers_for_the_host() {
        let flags = vec!["--cfg".to_string(), "my_flag".to_string()];
        let args = rustc_args(None, &flags, None);
        let out = std::process::Command::new("rustc").args(&args).output();
        let Ok(out) = out else {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "rustc is needed under CI=true"
            );
            eprintln!("skipped: rustc cannot be run");
            return;
        };
        let t = TargetCfg::parse(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(t.name("my_flag"), Some(true));
        assert_eq!(t.name("debug_assertions"), Some(true));
        assert_eq!(t.name("tarpaulin_include"), Some(false));
        assert_eq!(t.pair("target_os", std::env::consts::OS), Some(true));
    }
}
