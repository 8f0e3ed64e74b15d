//! The differential generator: random kube-rs type files from a grammar of the supported
//! space, compiled in batches with kube-derive and compared with rsbuilder's static CRDs.
//! Every kind ends as one of: equal; refused by rsbuilder because `crd()` panics, cannot be
//! merged or yields a CRD the API server rejects (right); refused though `crd()` works (a
//! coverage gap, counted); or a silent mismatch (a bug: a different CRD, or a CRD where there
//! must be an error).
//!
//! - `the_fixed_seed_compares_200_kinds_without_a_silent_mismatch` is the slice CI runs
//!   (`RSBUILDER_DIFFTEST_SEED`, `RSBUILDER_DIFFTEST_KINDS` override seed 1 and 200 kinds).
//! - `campaign` (ignored; `scripts/difftest-campaign.sh`) runs a seed range.
//! - A failing kind is shrunk and written to `<RSBUILDER_E2E_TARGET_DIR>/difftest/shrunk/`.
//!
//! Grammar in `difftest/grammar.rs`, model and rendering in `difftest/model.rs`, API-server
//! rules checked on `crd()`'s output in `difftest/oracle.rs`. See docs/conformance.md.

use crate::support;

mod grammar;
mod model;
mod oracle;
mod run;
mod shrink;

use std::path::PathBuf;

use grammar::Features;
use model::{Case, render};
use run::{Outcome, Tally};
use serde_json::json;

/// The k8s-openapi types the grammar may use: every type rsbuilder lists (from
/// `src/manifests/crd/k8s_types.in`), as paths without `k8s_openapi::`.
fn k8s_types() -> Vec<String> {
    let text = std::fs::read_to_string(support::repo_root().join("src/manifests/crd/k8s_types.in"))
        .unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("api") && l.ends_with(','))
        .map(|l| l.trim_end_matches(',').to_string())
        .collect()
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

fn features() -> Features {
    Features::from_env().unwrap_or_else(|e| panic!("{e}"))
}

/// Generates kinds `range` of `seed`.
fn cases(seed: u64, range: std::ops::Range<u64>, f: &Features, k8s: &[String]) -> Vec<Case> {
    range.map(|i| grammar::generate(seed, i, f, k8s)).collect()
}

/// Shrinks a mismatching case (same outcome label) and writes it under `difftest/shrunk/`;
/// returns the file.
fn shrink_and_write(case: &Case, outcome: &Outcome) -> PathBuf {
    let label = outcome.label();
    let small = shrink::shrink(case.clone(), 60, 160, |cands| {
        // One file per candidate: the candidates are variants of one case, one name.
        let named: Vec<Case> = cands
            .iter()
            .enumerate()
            .map(|(i, c)| Case {
                name: format!("{}_c{i}", c.name),
                ..c.clone()
            })
            .collect();
        match run::compare_cases("shrink", &named) {
            Ok(results) => results.iter().map(|(_, o)| o.label() == label).collect(),
            Err(e) => {
                eprintln!("shrink batch failed: {e}");
                vec![false; cands.len()]
            }
        }
    });
    // The outcome of the shrunk case itself, for its header.
    let detail = match run::compare_cases("shrink", std::slice::from_ref(&small)) {
        Ok(r) => match &r[0].1 {
            Outcome::Mismatch { kind, details } => format!(
                "rsbuilder gives {}\n{}",
                kind.describe(),
                details.lines().take(12).collect::<Vec<_>>().join("\n")
            ),
            other => format!("{other:?}"),
        },
        Err(e) => e,
    };
    let dir = support::target_dir().join("difftest/shrunk");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.rs", case.name));
    let header: String = detail.lines().map(|l| format!("// {l}\n")).collect();
    // The file keeps its spelling: a byte order mark first, the header in its line endings.
    let text = render(&small);
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text.as_str()),
    };
    let mut header = format!(
        "// Shrunk from seed {}, kind {} of tests/manifests/difftest.rs ({:?}); kube-derive vs rsbuilder:\n{header}",
        case.seed, case.index, small.spelling
    );
    if small.spelling.crlf {
        header = header.replace('\n', "\r\n");
    }
    std::fs::write(&path, format!("{bom}{header}{text}")).unwrap();
    path
}

/// Compares `cases` in batches of `batch`, tallying outcomes; mismatches are shrunk.
fn compare_all(
    name: &str,
    cases: Vec<Case>,
    batch: usize,
    shrink_limit: usize,
) -> (Tally, Vec<PathBuf>) {
    let mut tally = Tally::default();
    let mut shrunk = Vec::new();
    for chunk in cases.chunks(batch.max(1)) {
        let started = std::time::Instant::now();
        let results = run::compare_cases(name, chunk).unwrap_or_else(|e| panic!("{e}"));
        for (case, outcome) in &results {
            tally.add(case, outcome);
        }
        eprintln!(
            "difftest: {} kinds in {:.0?} ({} so far, {} equal, {} mismatches)",
            chunk.len(),
            started.elapsed(),
            tally.kinds,
            tally.equal,
            tally.mismatches.len()
        );
        // The figures so far, so that an interrupted campaign still leaves its count.
        let partial = support::target_dir().join(format!("difftest/{name}-partial.md"));
        let _ = std::fs::write(&partial, tally.report());
    }
    for (case, outcome) in tally.mismatches.iter().take(shrink_limit) {
        shrunk.push(shrink_and_write(case, outcome));
    }
    (tally, shrunk)
}

#[test]
fn the_same_seed_gives_the_same_files_byte_for_byte() {
    let k8s = k8s_types();
    let f = Features::default();
    let a: Vec<String> = cases(7, 0..60, &f, &k8s).iter().map(render).collect();
    let b: Vec<String> = cases(7, 0..60, &f, &k8s).iter().map(render).collect();
    assert_eq!(a, b);
    // A kind does not depend on how many kinds are generated with it.
    assert_eq!(render(&grammar::generate(7, 42, &f, &k8s)), a[42]);
    let other: Vec<String> = cases(8, 0..60, &f, &k8s).iter().map(render).collect();
    assert!(a.iter().zip(&other).all(|(x, y)| x != y));
    // Every file is Rust.
    for text in &a {
        syn::parse_file(text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    }
}

#[test]
fn the_grammar_reaches_every_family_it_promises() {
    let k8s = k8s_types();
    let all: String = cases(3, 0..400, &Features::default(), &k8s)
        .iter()
        .map(render)
        .collect();
    for needle in [
        "Option<",
        "Vec<",
        "BTreeMap<",
        "HashMap<",
        "BTreeSet<",
        "HashSet<",
        "Box<",
        "Arc<",
        "Rc<",
        "VecDeque<",
        "k8s_openapi::",
        "serde_json::Value",
        "#[serde(untagged)]",
        "#[serde(tag = \"type\")]",
        "#[serde(tag = \"t\", content = \"c\")]",
        "#[serde(rename_all",
        "#[serde(rename =",
        "#[serde(default)]",
        "#[serde(default = \"",
        "#[serde(flatten)]",
        "#[serde(skip",
        "#[schemars(range",
        "#[schemars(length",
        "#[schemars(extend",
        "#[validate(",
        "#[garde(",
        "#[x_kube(validation",
        "#[x_kube(merge_strategy",
        "status = \"",
        "printcolumn",
        "shortname",
        "selectable",
        "namespaced",
        "///",
        "#[doc = ",
        "impl Default for",
        "..Default::default()",
        "const C_",
        ".to_string()",
        ".parse::<",
        ".parse().expect(",
        "::try_from(",
        ".expect(\"non-zero\")",
        "pub mod v",
        "storage = false",
    ] {
        assert!(
            all.contains(needle),
            "400 kinds of seed 3 never use {needle}"
        );
    }
    // The lexical layer: some files with a byte order mark, CRLF, decomposed identifiers and
    // raw strings (over two lines too), and some without.
    let files: Vec<String> = cases(3, 0..400, &Features::default(), &k8s)
        .iter()
        .map(render)
        .collect();
    let some = |what: &str, f: &dyn Fn(&String) -> bool| {
        let n = files.iter().filter(|t| f(t)).count();
        assert!(n > 20 && n < 380, "{n} of 400 files {what}");
    };
    some("open with a BOM", &|t| t.starts_with('\u{feff}'));
    some("use CRLF", &|t| t.contains("\r\n"));
    some("have a raw string", &|t| t.contains("r#\""));
    let combining = |c: char| ('\u{300}'..='\u{36f}').contains(&c);
    some("have a decomposed field name", &|t| {
        t.lines()
            .any(|l| l.trim_start().starts_with("pub ") && l.contains(combining))
    });
    assert!(
        files
            .iter()
            .any(|t| t.contains("r#\"") && t.contains(" */")),
        "no raw strings and block docs together"
    );
    assert!(
        files.iter().any(|t| t.split("r#\"").skip(1).any(|r| r
            .split("\"#")
            .next()
            .unwrap()
            .contains('\n'))),
        "no raw string over two lines"
    );
}

#[test]
fn the_shrinker_keeps_the_failure_and_drops_the_rest() {
    let k8s = k8s_types();
    // The "failure": a field of type u16 somewhere in the file.
    let fails = |c: &Case| render(c).contains(": u16,");
    let big = (0..)
        .map(|i| grammar::generate(11, i, &Features::default(), &k8s))
        .find(|c| fails(c) && render(c).lines().count() > 40)
        .unwrap();
    let small = shrink::shrink(big.clone(), 200, 10_000, |cands| {
        cands.iter().map(fails).collect()
    });
    let text = render(&small);
    assert!(fails(&small), "{text}");
    assert!(
        text.lines().count() < render(&big).lines().count() / 2,
        "not shrunk:\n{text}"
    );
    // Only the spec (and what holds the u16) is left.
    assert!(text.matches("pub struct").count() <= 3, "{text}");
}

#[test]
fn the_oracle_flags_what_the_api_server_rejects_and_passes_what_it_accepts() {
    let crd = |schema: serde_json::Value| {
        json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": schema}}}}]}})
    };
    let ok = crd(json!({"type": "object", "properties": {
        "a": {"type": "integer", "minimum": 1.0, "default": 3},
        "b": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "c": {"type": "object", "additionalProperties": {"type": "string"}},
        "d": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
        "e": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "f": {"type": "string", "nullable": true, "default": null},
    }}));
    assert_eq!(oracle::rejects(&ok), None);
    for (schema, rule) in [
        (json!({"$ref": "#/definitions/X"}), "$ref"),
        (
            json!({"type": "object", "properties": {"a": {}}}),
            "type: must not be empty",
        ),
        (
            json!({"type": "array", "items": [{"type": "string"}]}),
            "items must be a schema object",
        ),
        (
            json!({"type": "object", "patternProperties": {"^x$": {"type": "string"}}}),
            "patternProperties",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            "mutual exclusive",
        ),
        (
            json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
            "uniqueItems",
        ),
        (
            json!({"type": "integer", "minimum": 5.0, "default": 0}),
            "below the minimum",
        ),
        (
            json!({"type": "string", "pattern": "^a$", "default": ""}),
            "pattern",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}}),
            "that the schema does not specify",
        ),
        (
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string", "nullable": true}}}}),
            "must be a required field or have a default",
        ),
        (
            json!({"type": "string", "x-kubernetes-map-type": "atomic"}),
            "only allowed on objects",
        ),
        (
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
            "true or undefined",
        ),
    ] {
        let got = oracle::rejects(&crd(schema.clone())).unwrap_or_default();
        assert!(
            got.contains(rule),
            "{schema}: expected a rule with {rule:?}, got {got:?}"
        );
    }
}

/// The slice CI runs: a fixed seed, at least 200 kinds, every one equal to `crd()` or refused.
#[test]
fn the_fixed_seed_compares_200_kinds_without_a_silent_mismatch() {
    let seed = env_number("RSBUILDER_DIFFTEST_SEED", 1);
    let kinds = env_number("RSBUILDER_DIFFTEST_KINDS", 200);
    let started = std::time::Instant::now();
    let (tally, shrunk) = compare_all(
        "ci",
        cases(seed, 0..kinds, &features(), &k8s_types()),
        kinds as usize,
        3,
    );
    let report = tally.report();
    eprintln!(
        "difftest seed {seed}, {kinds} kinds, {:.0?}:\n{report}",
        started.elapsed()
    );
    assert_eq!(tally.kinds as u64, kinds);
    assert!(
        tally.mismatches.is_empty() && tally.not_compiled.is_empty(),
        "{report}\nshrunk cases: {shrunk:?}"
    );
    // The grammar is weighted towards valid input: most kinds must be compared, not refused.
    assert!(
        tally.equal * 2 > tally.kinds,
        "only {} of {} kinds equal:\n{report}",
        tally.equal,
        tally.kinds
    );
}

/// A long campaign: `RSBUILDER_DIFFTEST_SEEDS=<first>-<last>` (inclusive),
/// `RSBUILDER_DIFFTEST_KINDS=<kinds per seed>` (default 500), `RSBUILDER_DIFFTEST_BATCH`
/// (kinds per build, default 500), `RSBUILDER_DIFFTEST_SHRINK` (mismatches to shrink, default
/// 10). Writes the figures to
/// `<RSBUILDER_E2E_TARGET_DIR>/difftest/campaign-<first>-<last>.md` and fails when a silent
/// mismatch was found (shrunk cases in `difftest/shrunk/`).
#[test]
#[ignore = "a long campaign: scripts/difftest-campaign.sh"]
fn campaign() {
    let seeds = std::env::var("RSBUILDER_DIFFTEST_SEEDS").unwrap_or_else(|_| "1-1".into());
    let (first, last) = seeds
        .split_once('-')
        .map(|(a, b)| (a.parse::<u64>(), b.parse::<u64>()))
        .and_then(|(a, b)| Some((a.ok()?, b.ok()?)))
        .unwrap_or_else(|| panic!("RSBUILDER_DIFFTEST_SEEDS={seeds}: expected <first>-<last>"));
    let kinds = env_number("RSBUILDER_DIFFTEST_KINDS", 500);
    let batch = env_number("RSBUILDER_DIFFTEST_BATCH", 500) as usize;
    let f = features();
    let k8s = k8s_types();
    let started = std::time::Instant::now();
    let all: Vec<Case> = (first..=last)
        .flat_map(|s| cases(s, 0..kinds, &f, &k8s))
        .collect();
    let shrink = env_number("RSBUILDER_DIFFTEST_SHRINK", 10) as usize;
    let (tally, shrunk) = compare_all("campaign", all, batch, shrink);
    let report = format!(
        "seeds {first}-{last}, {kinds} kinds each, features {f:?}, {:.0?}\n{}\nshrunk: {shrunk:?}\n",
        started.elapsed(),
        tally.report()
    );
    let out = support::target_dir().join(format!("difftest/campaign-{first}-{last}.md"));
    std::fs::write(&out, &report).unwrap();
    eprintln!("{report}\nwritten to {}", out.display());
    assert!(tally.mismatches.is_empty(), "{report}");
}

/// Reproduces kinds and shrinks the failing ones: `RSBUILDER_DIFFTEST_CASES=<seed>:<index>,...`
/// (writes each generated file to `difftest/repro/` and each shrunk failure to
/// `difftest/shrunk/`).
#[test]
#[ignore = "reproduces given kinds: RSBUILDER_DIFFTEST_CASES=<seed>:<index>,..."]
fn reproduce() {
    let spec = std::env::var("RSBUILDER_DIFFTEST_CASES").unwrap_or_default();
    let (f, k8s) = (features(), k8s_types());
    let cases: Vec<Case> = spec
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (seed, index) = s
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .unwrap_or_else(|| panic!("{s}: expected <seed>:<index>"));
            grammar::generate(seed, index, &f, &k8s)
        })
        .collect();
    let dir = support::target_dir().join("difftest/repro");
    std::fs::create_dir_all(&dir).unwrap();
    // Hand-written files too: RSBUILDER_DIFFTEST_FILES=<path>,... (compared, not shrunk).
    let files: Vec<(String, String)> = std::env::var("RSBUILDER_DIFFTEST_FILES")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|p| {
            let stem = std::path::Path::new(p)
                .file_stem()
                .unwrap()
                .to_string_lossy();
            (format!("file_{stem}"), std::fs::read_to_string(p).unwrap())
        })
        .collect();
    if !files.is_empty() {
        let batch = run::batch_crate("repro-files");
        let (out, failed, paths) =
            run::kube_derive(&batch, &files).unwrap_or_else(|e| panic!("{e}"));
        for (name, _) in &files {
            match (failed.get(name), out.get(name)) {
                (Some(e), _) => eprintln!("{name}: does not compile:\n{e}"),
                (None, Some(expected)) => {
                    eprintln!("{name}: {:?}", run::classify(expected, &paths[name]))
                }
                (None, None) => eprintln!("{name}: no output"),
            }
        }
    }
    for (case, outcome) in run::compare_cases("repro", &cases).unwrap_or_else(|e| panic!("{e}")) {
        std::fs::write(dir.join(format!("{}.rs", case.name)), render(&case)).unwrap();
        eprintln!("{}: {}", case.name, outcome.label());
        if let Outcome::Mismatch { .. } = outcome {
            eprintln!("  shrunk: {}", shrink_and_write(&case, &outcome).display());
        }
    }
}
