//! Compiling a batch of generated cases with kube-derive and comparing each with rsbuilder.
//!
//! A batch is a copy of the conformance fixture crate (`tests/conformance/fixtures`: its
//! Cargo.toml and Cargo.lock, build.rs and main.rs, renamed) under
//! `<RSBUILDER_E2E_TARGET_DIR>/difftest/<name>/`, whose `src/cases/` holds the generated files:
//! one crate, one module per case, one build. It shares the target directory with the
//! conformance suite, so its dependencies are built once for both.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use rsbuilder::manifests::diag::Cause;
use serde_json::{Map, Value};

use super::model::{Case, render};
use super::oracle;
use crate::support::{self, Static};

/// What one generated kind gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// rsbuilder's CRD equals `crd()`'s, field by field.
    Equal,
    /// `crd()` panics, cannot be merged, or gives a CRD the API server rejects, and rsbuilder
    /// refuses it with a diagnostic: as it should.
    Refused {
        why_invalid: String,
        #[allow(dead_code)] // shown by Debug in shrunk case headers
        diagnostic: String,
    },
    /// `crd()` gives a valid CRD and rsbuilder refuses: a coverage gap (`NeedsCompile`) or a
    /// wrong refusal (`Invalid`).
    Gap { cause: Cause, diagnostic: String },
    /// The worst bug: rsbuilder gives a CRD that differs from `crd()`, or a CRD where `crd()`
    /// fails or the API server would refuse it, or it panics.
    Mismatch { kind: MismatchKind, details: String },
    /// The generated file did not compile (a bug of the generator, not of rsbuilder).
    NotCompiled(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MismatchKind {
    /// Both gave CRDs; they differ.
    Different,
    /// `crd()` panicked; rsbuilder gave a CRD.
    CrdPanics,
    /// The versions cannot be merged; rsbuilder gave a CRD.
    MergeFails,
    /// rsbuilder gave the CRD `crd()` gives, but the API server rejects it.
    ApiServerRejects,
    /// rsbuilder panicked.
    Panic,
}

impl MismatchKind {
    pub fn describe(self) -> &'static str {
        match self {
            MismatchKind::Different => "a CRD different from crd()",
            MismatchKind::CrdPanics => "a CRD where crd() panics",
            MismatchKind::MergeFails => "a CRD where merge_crds fails",
            MismatchKind::ApiServerRejects => "a CRD the API server rejects",
            MismatchKind::Panic => "a panic",
        }
    }
}

impl Outcome {
    /// A short label: the same label means the same kind of failure (used by the shrinker).
    pub fn label(&self) -> String {
        match self {
            Outcome::Equal => "equal".into(),
            Outcome::Refused { .. } => "refused".into(),
            Outcome::Gap { cause, .. } => format!("gap:{cause:?}"),
            Outcome::Mismatch { kind, .. } => format!("mismatch:{kind:?}"),
            Outcome::NotCompiled(_) => "not-compiled".into(),
        }
    }
}

/// A message with its specifics (names in backticks or quotes, numbers) taken out, so that
/// one kind of refusal is counted once.
pub fn reason(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in first.chars() {
        match quote {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '`' || c == '"' => {
                out.push(c);
                quote = Some(c);
            }
            None if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            None => out.push(c),
        }
    }
    let out = out.trim().to_string();
    if out.chars().count() > 110 {
        out.chars().take(107).collect::<String>() + "..."
    } else {
        out
    }
}

/// The batch crate directory `<target>/difftest/<name>`, created from the fixture crate.
pub fn batch_crate(name: &str) -> PathBuf {
    let dir = support::target_dir().join("difftest").join(name);
    let fixtures = support::fixture_crate();
    let rename = |s: String| {
        s.replace(
            "name = \"conformance-fixtures\"",
            &format!("name = \"difftest-{name}\""),
        )
    };
    let read = |p: &str| std::fs::read_to_string(fixtures.join(p)).unwrap();
    write_if_changed(&dir.join("Cargo.toml"), &rename(read("Cargo.toml")));
    write_if_changed(&dir.join("Cargo.lock"), &rename(read("Cargo.lock")));
    write_if_changed(&dir.join("build.rs"), &read("build.rs"));
    write_if_changed(&dir.join("src/main.rs"), &read("src/main.rs"));
    dir
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Replaces the crate's cases with `cases` (name, text); returns their paths by name.
pub fn write_cases(dir: &Path, cases: &[(String, String)]) -> BTreeMap<String, PathBuf> {
    let cases_dir = dir.join("src/cases");
    if cases_dir.exists() {
        std::fs::remove_dir_all(&cases_dir).unwrap();
    }
    std::fs::create_dir_all(&cases_dir).unwrap();
    let mut paths = BTreeMap::new();
    for (name, text) in cases {
        let p = cases_dir.join(format!("{name}.rs"));
        std::fs::write(&p, text).unwrap();
        paths.insert(name.clone(), p);
    }
    paths
}

/// `cargo args` on the batch crate `dir` ([`support::cargo`]).
fn batch_cargo(dir: &Path, args: &[&str]) -> Command {
    let mut c = support::cargo();
    c.args(args)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"));
    c
}

/// What building a batch gave: the binary, and the cases whose files did not compile.
struct Built {
    exe: PathBuf,
    failed: BTreeMap<String, String>,
}

/// Builds the crate; a case whose file has errors is removed and the crate built again.
fn build(dir: &Path) -> Result<Built, String> {
    let mut failed = BTreeMap::new();
    for _ in 0..4 {
        let out = batch_cargo(dir, &["build", "--locked", "--message-format=json"])
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        let mut exe = None;
        let mut errors: BTreeMap<String, String> = BTreeMap::new();
        let mut other = String::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            match msg["reason"].as_str() {
                Some("compiler-artifact") => {
                    if let Some(e) = msg["executable"].as_str() {
                        exe = Some(PathBuf::from(e));
                    }
                }
                Some("compiler-message") if msg["message"]["level"] == "error" => {
                    let rendered = msg["message"]["rendered"].as_str().unwrap_or_default();
                    let case = msg["message"]["spans"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s["file_name"].as_str())
                        .find_map(|f| {
                            let p = Path::new(f);
                            if !p.parent()?.ends_with("src/cases") {
                                return None;
                            }
                            Some(p.file_stem()?.to_string_lossy().into_owned())
                        });
                    match case {
                        Some(c) => {
                            errors.entry(c).or_insert_with(|| rendered.to_string());
                        }
                        None => other.push_str(rendered),
                    }
                }
                _ => {}
            }
        }
        if out.status.success() {
            return Ok(Built {
                exe: exe.ok_or("cargo built no executable")?,
                failed,
            });
        }
        if errors.is_empty() {
            return Err(format!(
                "building {} failed ({}):\n{other}\n{}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        for (case, err) in errors {
            let _ = std::fs::remove_file(dir.join("src/cases").join(format!("{case}.rs")));
            failed.insert(case, err);
        }
    }
    Err(format!(
        "{}: cases still fail to compile after 4 builds",
        dir.display()
    ))
}

/// kube-derive's output of a batch (case name → JSON), the cases that did not compile (name →
/// error) and the case files by name.
pub type BatchOutput = (
    Map<String, Value>,
    BTreeMap<String, String>,
    BTreeMap<String, PathBuf>,
);

/// Writes, builds and runs a batch of case texts (name, text).
pub fn kube_derive(dir: &Path, cases: &[(String, String)]) -> Result<BatchOutput, String> {
    let paths = write_cases(dir, cases);
    let built = build(dir)?;
    let out = Command::new(&built.exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", built.exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            built.exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let map = match serde_json::from_slice(&out.stdout) {
        Ok(Value::Object(m)) => m,
        _ => return Err("the batch's output is not a JSON object".into()),
    };
    Ok((map, built.failed, paths))
}

/// Compares one case: kube-derive's result for it (`[crd, ...]`, `{"panic"}` or `{"error"}`)
/// with rsbuilder's for its file.
pub fn classify(expected: &Value, file: &Path) -> Outcome {
    let got = support::rsbuilder_crds(&[file.to_path_buf()]);
    let invalid = if let Some(p) = expected.get("panic") {
        Some((
            MismatchKind::CrdPanics,
            format!("crd() panics: {}", p.as_str().unwrap_or_default()),
        ))
    } else if let Some(e) = expected.get("error") {
        Some((
            MismatchKind::MergeFails,
            format!(
                "versions cannot be merged: {}",
                e.as_str().unwrap_or_default()
            ),
        ))
    } else {
        expected
            .as_array()
            .into_iter()
            .flatten()
            .find_map(oracle::rejects)
            .map(|r| {
                (
                    MismatchKind::ApiServerRejects,
                    format!("the API server rejects crd(): {r}"),
                )
            })
    };
    match got {
        Static::Panic(msg) => Outcome::Mismatch {
            kind: MismatchKind::Panic,
            details: format!("rsbuilder panicked: {msg}"),
        },
        Static::Errors(diags) => {
            let first = diags.first();
            let text = first.map(|d| d.to_string()).unwrap_or_default();
            match invalid {
                Some((_, why)) => Outcome::Refused {
                    why_invalid: why,
                    diagnostic: text,
                },
                None => Outcome::Gap {
                    cause: first.map(|d| d.cause).unwrap_or_default(),
                    diagnostic: text,
                },
            }
        }
        Static::Crds(crds, file_names) => {
            let actual = Value::Array(crds.clone());
            let mut details = String::new();
            let different = match invalid {
                Some((MismatchKind::ApiServerRejects, _)) | None => {
                    if let Some(report) = support::compare(expected, &actual) {
                        details.push_str(&report);
                        true
                    } else {
                        false
                    }
                }
                Some(_) => false,
            };
            for (crd, name) in crds.iter().zip(&file_names) {
                let want = support::expected_file_name(crd);
                if &want != name {
                    writeln!(details, "file name: crd() gives {want}, rsbuilder {name}").unwrap();
                }
            }
            match invalid {
                _ if different || !details.is_empty() => Outcome::Mismatch {
                    kind: MismatchKind::Different,
                    details,
                },
                Some((kind, why)) => Outcome::Mismatch {
                    kind,
                    details: format!(
                        "{why}\nrsbuilder gave {} CRD(s) without a diagnostic",
                        crds.len()
                    ),
                },
                None => Outcome::Equal,
            }
        }
    }
}

/// Compiles `cases` in the batch crate `batch` and compares each with rsbuilder.
pub fn compare_cases(batch: &str, cases: &[Case]) -> Result<Vec<(Case, Outcome)>, String> {
    let dir = batch_crate(batch);
    let texts: Vec<(String, String)> = cases.iter().map(|c| (c.name.clone(), render(c))).collect();
    let started = std::time::Instant::now();
    let (out, failed, paths) = kube_derive(&dir, &texts)?;
    let built = started.elapsed();
    let results: Vec<(Case, Outcome)> = cases
        .iter()
        .map(|c| {
            let outcome = match failed.get(&c.name) {
                Some(err) => Outcome::NotCompiled(err.clone()),
                None => match out.get(&c.name) {
                    Some(expected) => classify(expected, &paths[&c.name]),
                    None => Outcome::NotCompiled("missing from the batch's output".into()),
                },
            };
            (c.clone(), outcome)
        })
        .collect();
    eprintln!(
        "difftest: batch {batch}: kube-derive build and run {built:.1?}, rsbuilder {:.1?}",
        started.elapsed() - built
    );
    Ok(results)
}

/// `text` cut to at most `n` characters.
fn clip(text: &str, n: usize) -> String {
    if text.chars().count() > n {
        text.chars().take(n - 3).collect::<String>() + "..."
    } else {
        text.to_string()
    }
}

/// What makes a kind invalid, without the JSON path or the panic's details.
fn invalid_reason(why: &str) -> String {
    if let Some(rule) = why.strip_prefix("the API server rejects crd(): ") {
        let rule = rule.split_once(": ").map_or(rule, |(_, r)| r);
        return format!("API server: {}", reason(rule));
    }
    let short: String = why.chars().take(70).collect();
    reason(&short)
}

/// The figures of a run: kinds compared and what they gave.
#[derive(Debug, Default)]
pub struct Tally {
    pub kinds: usize,
    pub equal: usize,
    /// Refused as it should be, by what makes the input invalid: count and one example.
    pub refused: BTreeMap<String, (usize, String)>,
    /// Refused though `crd()` works, by cause and diagnostic: count and one example.
    pub gaps: BTreeMap<(String, String), (usize, String)>,
    /// Every other silent mismatch.
    pub mismatches: Vec<(Case, Outcome)>,
    pub not_compiled: Vec<(String, String)>,
}

impl Tally {
    /// Counts one kind.
    pub fn add(&mut self, case: &Case, outcome: &Outcome) {
        self.kinds += 1;
        match outcome {
            Outcome::Equal => self.equal += 1,
            Outcome::Refused { why_invalid, .. } => {
                let e = self
                    .refused
                    .entry(invalid_reason(why_invalid))
                    .or_insert_with(|| {
                        (
                            0,
                            format!(
                                "{}: {}",
                                case.name,
                                clip(why_invalid.lines().next().unwrap_or_default(), 240)
                            ),
                        )
                    });
                e.0 += 1;
            }
            Outcome::Gap { cause, diagnostic } => {
                // Drop the file:line:column prefix.
                let msg = diagnostic
                    .splitn(4, ':')
                    .nth(3)
                    .unwrap_or(diagnostic)
                    .trim();
                let e = self
                    .gaps
                    .entry((format!("{cause:?}"), reason(msg)))
                    .or_insert_with(|| {
                        (
                            0,
                            format!(
                                "{}: {}",
                                case.name,
                                clip(msg.lines().next().unwrap_or_default(), 240)
                            ),
                        )
                    });
                e.0 += 1;
            }
            Outcome::Mismatch { .. } => self.mismatches.push((case.clone(), outcome.clone())),
            Outcome::NotCompiled(e) => self.not_compiled.push((case.name.clone(), e.clone())),
        }
    }
    pub fn refused_total(&self) -> usize {
        self.refused.values().map(|(n, _)| n).sum()
    }

    pub fn gaps_total(&self) -> usize {
        self.gaps.values().map(|(n, _)| n).sum()
    }

    /// The figures as Markdown (the shape docs/conformance.md records).
    pub fn report(&self) -> String {
        let mut s = String::new();
        writeln!(
            s,
            "kinds compared: {}; equal: {}; refused (invalid input): {}; coverage gaps (crd() works, rsbuilder refuses): {}; silent mismatches: {}; not compiled: {}",
            self.kinds,
            self.equal,
            self.refused_total(),
            self.gaps_total(),
            self.mismatches.len(),
            self.not_compiled.len()
        )
        .unwrap();
        if !self.refused.is_empty() {
            writeln!(s, "\nrefused, by why the input is invalid:").unwrap();
            let mut v: Vec<_> = self.refused.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (r, (n, example)) in v {
                writeln!(s, "  {n:>6}  {r}\n          e.g. {example}").unwrap();
            }
        }
        if !self.gaps.is_empty() {
            writeln!(s, "\ncoverage gaps, by cause and diagnostic:").unwrap();
            let mut v: Vec<_> = self.gaps.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for ((c, r), (n, example)) in v {
                writeln!(s, "  {n:>6}  [{c}] {r}\n          e.g. {example}").unwrap();
            }
        }
        for (case, outcome) in &self.mismatches {
            if let Outcome::Mismatch { kind, details } = outcome {
                writeln!(
                    s,
                    "\nsilent mismatch in {} (seed {}, kind {}): rsbuilder gives {}\n{}",
                    case.name,
                    case.seed,
                    case.index,
                    kind.describe(),
                    details.lines().take(40).collect::<Vec<_>>().join("\n")
                )
                .unwrap();
            }
        }
        for (name, err) in &self.not_compiled {
            writeln!(
                s,
                "\nnot compiled (a generator bug): {name}\n{}",
                err.lines().take(15).collect::<Vec<_>>().join("\n")
            )
            .unwrap();
        }
        s
    }
}
