//! `rsbuilder init` wall time (target: under 30 ms): rendering the tree, planning and writing
//! it through the library, the full command as a process, and the rustfmt step on its own (one
//! rustfmt process for all Rust files, as the engine runs it, against one process per file). Writing is measured twice: in
//! the default temporary directory (on disk, where the engine's syncfs and directory fsyncs
//! count) and, when `/dev/shm` exists, on tmpfs (the tool's own cost). The process is also run
//! with a `rustfmt.toml` above the project, which makes the engine run rustfmt on init's Rust
//! files as it did before their templates were formatted.
//!
//! Run with `cargo bench --bench init`.

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rsbuilder::scaffold::init::{InitOptions, files, plan};
use rsbuilder::scaffold::rustfmt;

fn options() -> InitOptions {
    InitOptions {
        domain: "ai.example.com".into(),
        repo: "example.com/ai-operator".into(),
        project_name: "ai-operator".into(),
        owner: "Example Corp.".into(),
        license: rsbuilder::scaffold::init::License::Apache2,
        namespaced: false,
        multigroup: false,
        year: 2026,
        runtime: Default::default(),
    }
}

fn fresh_dir_in(base: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir_in(base).expect("temp dir");
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).expect("project dir");
    (tmp, dir)
}

fn bench_init(c: &mut Criterion) {
    let opts = options();
    c.bench_function("init: render the tree", |b| {
        b.iter(|| {
            let files = files(&opts).unwrap();
            assert!(files.len() > 20);
            files
        })
    });
    let rendered = files(&opts).unwrap();
    let rust: Vec<(&Path, &str)> = rendered
        .iter()
        .filter(|(path, _)| path.ends_with(".rs"))
        .map(|(path, text)| (Path::new(*path), text.as_str()))
        .collect();
    let root = std::env::temp_dir();
    c.bench_function("init: rustfmt the Rust files, one process", |b| {
        b.iter(|| {
            let out = rustfmt::format_all(&rust, "2024", &root);
            assert!(out.iter().all(Option::is_some), "rustfmt is needed");
            out
        })
    });
    c.bench_function("init: rustfmt the Rust files, one process per file", |b| {
        b.iter(|| {
            rust.iter()
                .map(|(_, text)| rustfmt::format_stdin(text, "2024", &root))
                .collect::<Vec<_>>()
        })
    });
    let mut bases = vec![("temp dir", std::env::temp_dir())];
    if Path::new("/dev/shm").is_dir() {
        bases.push(("tmpfs", PathBuf::from("/dev/shm")));
    }
    for (label, base) in bases {
        c.bench_function(&format!("init: plan and write the tree, {label}"), |b| {
            b.iter_batched(
                || fresh_dir_in(&base),
                |(tmp, dir)| {
                    let done = plan(&dir, &opts).expect("plan").apply().expect("apply");
                    assert!(done.len() > 20);
                    tmp
                },
                BatchSize::PerIteration,
            )
        });
        // With a rustfmt.toml above the project, the engine runs rustfmt on init's Rust files
        // (their templates are formatted for the default configuration only): the cost of the
        // rustfmt step that a plain init now skips.
        for (what, setup) in [
            ("", (|_: &Path| ()) as fn(&Path)),
            (", rustfmt.toml present (rustfmt runs)", |tmp: &Path| {
                std::fs::write(tmp.join("rustfmt.toml"), "").expect("rustfmt.toml")
            }),
        ] {
            bench_process(
                c,
                &format!("init: rsbuilder init process, {label}{what}"),
                &base,
                setup,
            );
        }
    }
}

/// The whole `rsbuilder init` process in a fresh directory below `base`, `setup` run on the
/// directory above the project first.
fn bench_process(c: &mut Criterion, name: &str, base: &Path, setup: fn(&Path)) {
    c.bench_function(name, |b| {
        b.iter_batched(
            || {
                let (tmp, dir) = fresh_dir_in(base);
                setup(tmp.path());
                (tmp, dir)
            },
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
