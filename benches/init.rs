//! `rsbuilder init` wall time (target: under 50 ms): planning and writing the whole tree
//! through the library, and the full command as a process.
//!
//! Run with `cargo bench --bench init`.

use std::process::Command;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rsbuilder::scaffold::init::{InitOptions, plan};

fn options() -> InitOptions {
    InitOptions {
        domain: "ai.example.com".into(),
        repo: "example.com/ai-operator".into(),
        project_name: "ai-operator".into(),
        owner: "The rsbuilder authors".into(),
        apache2: true,
        namespaced: false,
        year: 2026,
    }
}

fn fresh_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).expect("project dir");
    (tmp, dir)
}

fn bench_init(c: &mut Criterion) {
    let opts = options();
    c.bench_function("init: plan and write the tree (library)", |b| {
        b.iter_batched(
            fresh_dir,
            |(tmp, dir)| {
                let done = plan(&dir, &opts).expect("plan").apply().expect("apply");
                assert!(done.len() > 20);
                tmp
            },
            BatchSize::PerIteration,
        )
    });
    c.bench_function("init: rsbuilder init (process)", |b| {
        b.iter_batched(
            fresh_dir,
            |(tmp, dir)| {
                let status = Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
                    .args([
                        "init",
                        "--domain",
                        "ai.example.com",
                        "--repo",
                        "example.com/ai-operator",
                    ])
                    .current_dir(&dir)
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("run rsbuilder");
                assert!(status.success());
                tmp
            },
            BatchSize::PerIteration,
        )
    });
}

criterion_group!(benches, bench_init);
criterion_main!(benches);
