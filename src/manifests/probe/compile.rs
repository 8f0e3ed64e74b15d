//! The probe program: its `main`, which prints `crd()` of the kinds asked for, compiled with
//! rustc against the crate's library, and run.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::cargo::{Built, Workspace, build_lib};
use super::{BuildError, CrateInfo, error_lines, trim_errors};
use crate::manifests::cfg::FeatureFlags;

/// The probe's `main`: `crd()` of each root type, printed as one JSON object keyed by the
/// type's path in the library, `{"panic": …}` or `{"error": …}` in place of a CRD.
fn probe_main(roots: &[Vec<String>]) -> String {
    let mut main = String::from(
        "// Written by `rsbuilder manifests`: prints crd() of the kinds it compiles. Safe to delete.\n\
fn main() {\n    std::panic::set_hook(Box::new(|_| {}));\n    let mut out = serde_json::Map::new();\n",
    );
    for r in roots {
        let path = r.join("::");
        main.push_str(&format!(
            "    out.insert({path:?}.to_string(), probe(|| serde_json::to_value(<rsbuilder_probe_target::{path} as kube_core::CustomResourceExt>::crd())));\n"
        ));
    }
    main.push_str(
        "    print!(\"{}\", serde_json::Value::Object(out));\n}\n\n\
fn probe(f: impl FnOnce() -> Result<serde_json::Value, serde_json::Error> + std::panic::UnwindSafe) -> serde_json::Value {\n\
    match std::panic::catch_unwind(f) {\n\
        Ok(Ok(v)) => v,\n\
        Ok(Err(e)) => serde_json::json!({ \"error\": e.to_string() }),\n\
        Err(p) => {\n\
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();\n\
            serde_json::json!({ \"panic\": msg })\n\
        }\n\
    }\n}\n",
    );
    main
}

/// The compiler for the probe's `main`: `RSBUILDER_PROBE_RUSTC` (a test hook: the suite puts
/// a slow compiler there to run another command while the probe compiles), else `RUSTC`
/// (as cargo reads it), else `rustc` from `PATH`, run in the crate's directory so that a
/// rustup toolchain file chooses the same compiler as for cargo.
fn rustc_command(info: &CrateInfo) -> Command {
    let program = std::env::var_os("RSBUILDER_PROBE_RUSTC")
        .or_else(|| std::env::var_os("RUSTC"))
        .unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(program);
    cmd.current_dir(&info.dir);
    cmd
}

/// Compiles the probe's `main` for `roots` with rustc against the built library, runs it and
/// returns its output: root type path (`api::v1::Foo`) to `crd()` as JSON, or `{"panic": …}`.
/// Errors: rustc's, trimmed, with the roots the errors quote.
fn compile_and_run(
    info: &CrateInfo,
    dir: &Path,
    built: &Built,
    roots: &[Vec<String>],
) -> Result<BTreeMap<String, Value>, BuildError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let main = dir.join("main.rs");
    write_if_changed(&main, &probe_main(roots))?;
    let bin = dir.join(format!("probe{}", std::env::consts::EXE_SUFFIX));
    let mut cmd = rustc_command(info);
    cmd.args([
        "--edition=2021",
        "--crate-type=bin",
        "--crate-name=rsbuilder_probe",
        "-Copt-level=0",
        "-Cdebuginfo=0",
        "-Awarnings",
    ])
    .arg("-o")
    .arg(&bin)
    .arg(&main);
    let mut dependency = std::ffi::OsString::from("dependency=");
    dependency.push(&built.deps);
    cmd.arg("-L").arg(dependency);
    for n in &built.native {
        cmd.arg("-L").arg(n);
    }
    let mut extern_arg = |name: &str, path: &Path| {
        let mut a = std::ffi::OsString::from(format!("{name}="));
        a.push(path);
        cmd.arg("--extern").arg(a);
    };
    extern_arg("rsbuilder_probe_target", &built.rlib);
    for (name, path) in &built.externs {
        extern_arg(name, path);
    }
    let out = cmd.output().map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Error messages, one per block starting at an `error` line.
        let mut blocks: Vec<Vec<&str>> = Vec::new();
        for l in error_lines(&stderr) {
            if l.starts_with("error") || blocks.is_empty() {
                blocks.push(Vec::new());
            }
            blocks.last_mut().expect("one block").push(l);
        }
        let blamed = roots
            .iter()
            .filter_map(|r| {
                let quoted = format!("<rsbuilder_probe_target::{} as ", r.join("::"));
                let mine: Vec<String> = blocks
                    .iter()
                    .filter(|b| b.iter().any(|l| l.contains(&quoted)))
                    .map(|b| b.join("\n"))
                    .collect();
                (!mine.is_empty()).then(|| (r.clone(), trim_errors(&mine.join("\n"))))
            })
            .collect();
        return Err(BuildError {
            text: trim_errors(&stderr),
            blamed,
        });
    }
    let ran = Command::new(&bin)
        .current_dir(&info.dir)
        .output()
        .map_err(|e| format!("cannot run the probe {}: {e}", bin.display()))?;
    if !ran.status.success() {
        return Err(BuildError::from(format!(
            "the probe {} failed ({}):\n{}",
            bin.display(),
            ran.status,
            trim_errors(&String::from_utf8_lossy(&ran.stderr))
        )));
    }
    serde_json::from_slice(&ran.stdout)
        .map_err(|e| BuildError::from(format!("the probe printed no JSON object: {e}")))
}

/// Builds the crate's library and the probe for `roots` in `dir`, and runs it. When rustc
/// blames some kinds only (a module the features leave out), those kinds get the error and the
/// others a second compile without them.
pub(super) fn build_probe(
    info: &CrateInfo,
    ws: &Workspace,
    dir: &Path,
    roots: &[Vec<String>],
    features: &FeatureFlags,
) -> Result<BTreeMap<String, Value>, BuildError> {
    let built = build_lib(info, ws, features)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Which crate this directory belongs to, for whoever looks into the target directory.
    write_if_changed(
        &dir.join("manifest-path"),
        &ws.manifest.display().to_string(),
    )?;
    let first = compile_and_run(info, dir, &built, roots);
    match first {
        Err(e) if !e.blamed.is_empty() && e.blamed.len() < roots.len() => {
            let rest: Vec<Vec<String>> = roots
                .iter()
                .filter(|r| !e.blamed.iter().any(|(b, _)| b == *r))
                .cloned()
                .collect();
            compile_and_run(info, dir, &built, &rest).map(|mut out| {
                for (r, errors) in e.blamed {
                    out.insert(r.join("::"), serde_json::json!({ "compile_error": errors }));
                }
                out
            })
        }
        other => other,
    }
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
