//! Conformance suite: rsbuilder's static CRDs against kube-derive's `crd()`.
//!
//! The fixture crate `tests/conformance/fixtures` compiles every case file with kube-derive
//! and prints `crd()` of each custom resource as JSON (built once per run, in
//! `RSBUILDER_E2E_TARGET_DIR`, default `target/e2e`). Each case file is then given alone to
//! `rsbuilder::manifests::crds_from_sources`, and the two are compared as JSON values.
//!
//! - `tests/conformance/fixtures/src/cases/*.rs`: valid cases; must be equal, field by field.
//! - `tests/conformance/invalid/*.rs`: cases rsbuilder must refuse with a diagnostic. Their
//!   header says what (`// expect-error: <substring>`, optionally `// expect-line: N, M`)
//!   and what kube-derive does with them (`// crd: panics | rejected | merge-error |
//!   unsupported | does-not-compile`; `rejected` cases name a `// crd-contains:` string
//!   showing why the API server would refuse the CRD).
//!
//! `RSBUILDER_CONFORMANCE_CASE=<name>` restricts the comparisons to cases whose name
//! contains `<name>`. See docs/conformance.md.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};
use support::{
    Static, compare, expected_file_name, fixture_cfg, header_values, rsbuilder_crds,
    rsbuilder_crds_with, rust_files,
};

fn fixture_output() -> &'static Map<String, Value> {
    static OUT: OnceLock<Result<Map<String, Value>, String>> = OnceLock::new();
    match OUT.get_or_init(|| support::run_fixture_crate(&support::fixture_crate())) {
        Ok(map) => map,
        Err(e) => panic!("{e}"),
    }
}

fn cases_dir() -> PathBuf {
    support::fixture_crate().join("src/cases")
}

fn invalid_dir() -> PathBuf {
    support::repo_root().join("tests/conformance/invalid")
}

fn selected(name: &str) -> bool {
    std::env::var("RSBUILDER_CONFORMANCE_CASE").map_or(true, |f| name.contains(&f))
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

#[test]
fn fixture_crate_yields_crds_for_every_valid_case() {
    let out = fixture_output();
    let mut problems = Vec::new();
    for file in rust_files(&cases_dir()) {
        let name = stem(&file);
        match out.get(&name) {
            Some(Value::Array(crds)) if !crds.is_empty() => {}
            Some(other) => problems.push(format!("{name}: {other}")),
            None => problems.push(format!("{name}: missing from the fixture output")),
        }
    }
    assert!(
        problems.is_empty(),
        "valid cases without CRDs:\n{}",
        problems.join("\n")
    );
}

#[test]
fn valid_cases_equal_kube_derive_crd() {
    let out = fixture_output();
    let mut passed = Vec::new();
    let mut failed: Vec<(String, String, String)> = Vec::new(); // name, short reason, details
    for file in rust_files(&cases_dir()) {
        let name = stem(&file);
        if !selected(&name) {
            continue;
        }
        let expected = out.get(&name).cloned().unwrap_or(Value::Null);
        // The fixture crate is built with its default features; rsbuilder reads the same
        // Cargo.toml.
        match rsbuilder_crds_with(std::slice::from_ref(&file), &fixture_cfg(&[])) {
            Static::Panic(msg) => {
                failed.push((name, "rsbuilder panicked".into(), msg));
            }
            Static::Errors(diags) => {
                let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
                let first = text.first().cloned().unwrap_or_default();
                failed.push((
                    name,
                    format!(
                        "rsbuilder refused: {}",
                        first.lines().next().unwrap_or_default()
                    ),
                    text.join("\n"),
                ));
            }
            Static::Crds(crds, file_names) => {
                let actual = Value::Array(crds.clone());
                let mut details = String::new();
                if let Some(report) = compare(&expected, &actual) {
                    details.push_str(&report);
                }
                for (crd, file_name) in crds.iter().zip(&file_names) {
                    let want = expected_file_name(crd);
                    if &want != file_name {
                        details.push_str(&format!("file name: expected {want}, got {file_name}\n"));
                    }
                }
                if details.is_empty() {
                    passed.push(name);
                } else {
                    let reason = details
                        .lines()
                        .nth(1)
                        .unwrap_or(details.lines().next().unwrap_or_default())
                        .trim()
                        .to_string();
                    failed.push((name, reason, details));
                }
            }
        }
    }
    eprintln!(
        "conformance: {} case(s) equal: {}",
        passed.len(),
        passed.join(", ")
    );
    if !failed.is_empty() {
        let mut msg = format!(
            "{} of {} case(s) differ from kube-derive's crd():\n",
            failed.len(),
            failed.len() + passed.len()
        );
        for (name, reason, _) in &failed {
            msg.push_str(&format!("  {name}: {reason}\n"));
        }
        for (name, _, details) in &failed {
            msg.push_str(&format!("\n===== {name} =====\n{details}\n"));
        }
        panic!("{msg}");
    }
}

/// Cases with `// cargo-flags: <flags>` headers are compared once more for each flag set:
/// the fixture crate is built with those cargo flags (compiling only those cases), and
/// rsbuilder reads its Cargo.toml with the same flags.
#[test]
fn feature_cases_equal_kube_derive_crd_under_every_cargo_flag_set() {
    // (cargo flags, the cases that name them: (name, file))
    type Run = (Vec<String>, Vec<(String, PathBuf)>);
    let mut runs: Vec<Run> = Vec::new();
    for file in rust_files(&cases_dir()) {
        let name = stem(&file);
        if !selected(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for flags in header_values(&text, "cargo-flags") {
            let flags: Vec<String> = flags.split_whitespace().map(str::to_string).collect();
            match runs.iter_mut().find(|(f, _)| *f == flags) {
                Some((_, cases)) => cases.push((name.clone(), file.clone())),
                None => runs.push((flags, vec![(name.clone(), file.clone())])),
            }
        }
    }
    let mut failed = Vec::new();
    let mut compared = 0;
    for (flags, cases) in &runs {
        let names: Vec<String> = cases.iter().map(|(n, _)| n.clone()).collect();
        let out = support::run_fixture_crate_with(&support::fixture_crate(), flags, Some(&names))
            .unwrap_or_else(|e| panic!("{e}"));
        let cfg = fixture_cfg(flags);
        for (name, file) in cases {
            let expected = out.get(name).cloned().unwrap_or(Value::Null);
            compared += 1;
            match rsbuilder_crds_with(std::slice::from_ref(file), &cfg) {
                Static::Crds(crds, _) => {
                    if let Some(report) = compare(&expected, &Value::Array(crds)) {
                        failed.push(format!("{name} with {flags:?}:\n{report}"));
                    }
                }
                Static::Errors(diags) => failed.push(format!(
                    "{name} with {flags:?}: rsbuilder refused: {}",
                    diags
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("\n")
                )),
                Static::Panic(msg) => failed.push(format!("{name} with {flags:?}: panic: {msg}")),
            }
        }
    }
    eprintln!(
        "feature cases: {compared} comparison(s) under {} flag set(s)",
        runs.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// What kube-derive does with each invalid case is what its header says: the suite documents
/// real `crd()` behaviour, not assumptions.
#[test]
fn invalid_cases_behave_as_documented_under_kube_derive() {
    let out = fixture_output();
    let mut problems = Vec::new();
    for file in rust_files(&invalid_dir()) {
        let name = format!("invalid/{}", stem(&file));
        let text = std::fs::read_to_string(&file).unwrap();
        let crd = header_values(&text, "crd");
        let got = out.get(&name);
        let ok = match crd.first().map(String::as_str) {
            Some("does-not-compile") => got.is_none(),
            Some("panics") => got.is_some_and(|v| v.get("panic").is_some()),
            Some("merge-error") => got.is_some_and(|v| v.get("error").is_some()),
            Some("unsupported") => got.is_some_and(|v| v.is_array()),
            Some("rejected") => {
                let needles = header_values(&text, "crd-contains");
                !needles.is_empty()
                    && got.is_some_and(|v| {
                        let json = v.to_string();
                        v.is_array() && needles.iter().all(|n| json.contains(n.as_str()))
                    })
            }
            other => {
                problems.push(format!(
                    "{name}: header `// crd:` missing or unknown: {other:?}"
                ));
                continue;
            }
        };
        if !ok {
            problems.push(format!(
                "{name}: header says `crd: {}` but the fixture gave {}",
                crd[0],
                got.map_or("nothing".to_string(), |v| v
                    .to_string()
                    .chars()
                    .take(300)
                    .collect())
            ));
        }
        if header_values(&text, "expect-error").is_empty() {
            problems.push(format!("{name}: no `// expect-error:` header"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn invalid_cases_give_located_diagnostics() {
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for file in rust_files(&invalid_dir()) {
        let name = format!("invalid/{}", stem(&file));
        if !selected(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let wanted: Vec<String> = header_values(&text, "expect-error")
            .iter()
            .map(|s| s.to_lowercase())
            .collect();
        let lines: Vec<usize> = header_values(&text, "expect-line")
            .iter()
            .flat_map(|v| {
                v.split(',')
                    .map(|n| n.trim().parse::<usize>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        match rsbuilder_crds(std::slice::from_ref(&file)) {
            Static::Panic(msg) => failed.push(format!("{name}: rsbuilder panicked: {msg}")),
            Static::Crds(crds, _) => failed.push(format!(
                "{name}: rsbuilder gave {} CRD(s) instead of an error containing {wanted:?}",
                crds.len()
            )),
            Static::Errors(diags) => {
                let matching = diags.iter().find(|d| {
                    let all = format!("{} {}", d.message, d.help.clone().unwrap_or_default())
                        .to_lowercase();
                    wanted.iter().all(|w| all.contains(w.as_str()))
                });
                let shown: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
                match matching {
                    None => failed.push(format!(
                        "{name}: no diagnostic contains {wanted:?}; got:\n    {}",
                        shown.join("\n    ")
                    )),
                    Some(d) if d.file != file => failed.push(format!(
                        "{name}: diagnostic names file {} instead of {}",
                        d.file.display(),
                        file.display()
                    )),
                    Some(d) if !lines.is_empty() && !lines.contains(&d.line) => {
                        failed.push(format!(
                            "{name}: diagnostic at line {} instead of one of {lines:?}: {d}",
                            d.line
                        ))
                    }
                    Some(d) if d.line == 0 || d.column == 0 => {
                        failed.push(format!("{name}: diagnostic without a position: {d}"))
                    }
                    Some(_) => passed.push(name),
                }
            }
        }
    }
    eprintln!("invalid cases refused as expected: {}", passed.join(", "));
    assert!(
        failed.is_empty(),
        "{} invalid case(s) not refused as expected:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// Case B of the project's cases (tests/fixtures/cases): the fixture copy of the Database
/// example's types is the case's file, and kube-derive's output for it is the reference YAML
/// recorded there.
#[test]
fn database_example_fixture_matches_the_case_reference() {
    let case = support::repo_root().join("tests/fixtures/cases/database");
    let ours = std::fs::read_to_string(cases_dir().join("database_example.rs")).unwrap();
    let theirs = std::fs::read_to_string(case.join("database_types.rs")).unwrap();
    assert_eq!(
        ours, theirs,
        "database_example.rs differs from tests/fixtures/cases/database/database_types.rs"
    );
    let yaml = std::fs::read_to_string(case.join("expected_crd.yaml")).unwrap();
    let reference: Value = serde_saphyr::from_str(&yaml).unwrap();
    let got = &fixture_output()["database_example"];
    assert_eq!(got, &Value::Array(vec![reference]));
}

/// The one test that reads outside the repository: tests/fixtures/cases is a copy of
/// `../shared/cases` (the cases the project must handle, kept beside the checkout), and must
/// stay equal to it, file for file. Skips with a message when `../shared/cases` is absent (a
/// clone on its own).
#[test]
fn shared_cases_copy_is_current() {
    let shared = support::repo_root().join("../shared/cases");
    if !shared.is_dir() {
        crate::common::missing(&format!("{} not found", shared.display()));
        return;
    }
    let files = |root: &Path| -> Vec<(String, Vec<u8>)> {
        let mut all: Vec<_> = walkdir::WalkDir::new(root)
            .into_iter()
            .map(Result::unwrap)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(root).unwrap();
                (
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        all.sort();
        all
    };
    let copy = files(&support::repo_root().join("tests/fixtures/cases"));
    let theirs = files(&shared);
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&copy), names(&theirs), "the files differ");
    for ((name, ours), (_, theirs)) in copy.iter().zip(&theirs) {
        assert!(
            ours == theirs,
            "tests/fixtures/cases/{name} differs from {}; copy it again",
            shared.join(name).display()
        );
    }
}
