//! Benchmarks of `rsbuilder manifests` as a library call (parse, derive every CRD, serialize
//! YAML; nothing written):
//!
//! - `manifests/seed_project`: the Database example's types (case B) and the AIJob example's types
//!   (case A), laid out as a scaffolded project (`src/api/v1/*_types.rs`). Target: < 10 ms.
//! - `manifests/synthetic_1000_kinds`: a generated crate with 1,000 kinds, one file each,
//!   sharing types through `crate::` paths. Target: < 1 s.
//!
//! The crdgen comparison (`cargo run --bin crdgen` after touching the types file) is
//! `benches/crdgen_compare.sh`. Figures: docs/benchmarks.md.

use std::fmt::Write as _;
mod common;

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use rsbuilder::manifests::generate::{Options, generate, generate_from};
use rsbuilder::manifests::{SourceSet, crds_from_sources};

/// The allocator the `rsbuilder` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The example project: case B's Database and case A's AIJob, as `create api` lays them out.
pub fn write_example_project(root: &Path) {
    let cases = repo().join("tests/conformance/fixtures/src/cases");
    let api = root.join("src/api/v1");
    std::fs::create_dir_all(&api).unwrap();
    std::fs::copy(
        cases.join("database_example.rs"),
        api.join("database_types.rs"),
    )
    .unwrap();
    std::fs::copy(cases.join("aijob_example.rs"), api.join("aijob_types.rs")).unwrap();
    std::fs::write(
        api.join("mod.rs"),
        "pub mod aijob_types;\npub mod database_types;\n",
    )
    .unwrap();
    std::fs::write(root.join("src/api/mod.rs"), "pub mod v1;\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub mod api;\n").unwrap();
}

/// A crate with `kinds` custom resources, one file each, every spec using std types, an
/// enum, a nested struct, k8s-openapi types and shared types from `crate::common`.
pub fn write_synthetic_crate(root: &Path, kinds: usize) {
    let api = root.join("src/api");
    std::fs::create_dir_all(&api).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub mod api;\npub mod common;\n").unwrap();
    std::fs::write(
        root.join("src/common.rs"),
        format!(
            "use schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\n{}",
            common::SHARED_TYPES
        ),
    )
    .unwrap();
    let mut module = String::new();
    for i in 0..kinds {
        let name = format!("kind{i:04}");
        writeln!(module, "pub mod {name};").unwrap();
        let kind = format!("Thing{i:04}");
        let mut text = common::uses(Some("crate::common"));
        common::kind(&mut text, &kind, i, "");
        std::fs::write(api.join(format!("{name}.rs")), text).unwrap();
    }
    std::fs::write(api.join("mod.rs"), module).unwrap();
}

fn options(root: &Path) -> Options {
    Options {
        paths: vec![root.join("src")],
        output_dir: root.join("config"),
        ..Default::default()
    }
}

fn bench_manifests(c: &mut Criterion) {
    let example = tempfile::tempdir().unwrap();
    write_example_project(example.path());
    let example_opts = options(example.path());
    let out = generate(&example_opts).unwrap_or_else(|e| panic!("example project: {e}"));
    assert_eq!(out.files.len(), 2, "the example project has two CRDs");

    let synthetic = tempfile::tempdir().unwrap();
    write_synthetic_crate(synthetic.path(), 1000);
    let synthetic_opts = options(synthetic.path());
    let out = generate(&synthetic_opts).unwrap_or_else(|e| panic!("synthetic crate: {e}"));
    assert_eq!(out.files.len(), 1000, "the synthetic crate has 1,000 CRDs");

    // A tenth of the kinds, to see how the cost scales with the crate size.
    let small = tempfile::tempdir().unwrap();
    write_synthetic_crate(small.path(), 100);
    let small_opts = options(small.path());

    let mut group = c.benchmark_group("manifests");
    group.bench_function("seed_project", |b| {
        b.iter(|| generate(&example_opts).unwrap())
    });
    group.sample_size(10);
    group.bench_function("synthetic_100_kinds", |b| {
        b.iter(|| generate(&small_opts).unwrap())
    });
    group.bench_function("synthetic_1000_kinds", |b| {
        b.iter(|| generate(&synthetic_opts).unwrap())
    });
    // The same on one thread (generate() shares the kinds among the available cores).
    group.bench_function("synthetic_1000_kinds/one_thread", |b| {
        b.iter(|| {
            let sources = SourceSet::load(&synthetic_opts.paths).unwrap();
            generate_from(&synthetic_opts, &sources, 1)
        })
    });
    // Where the time goes: parsing alone, and parsing plus CRD derivation (no YAML).
    group.bench_function("synthetic_1000_kinds/parse", |b| {
        b.iter(|| SourceSet::load(&synthetic_opts.paths).unwrap())
    });
    group.bench_function("synthetic_1000_kinds/parse_and_crds", |b| {
        b.iter(|| crds_from_sources(&SourceSet::load(&synthetic_opts.paths).unwrap()).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_manifests);
criterion_main!(benches);
