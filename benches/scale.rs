//! How `rsbuilder manifests` scales with one large source file, on a generated crate whose
//! types are all in `src/lib.rs`, at 25k, 50k, 100k and 200k lines. Run with
//! `cargo bench --bench scale`; figures in docs/benchmarks.md.
//!
//! `cargo bench --bench scale -- write <lines> <dir>` only writes the crate, to profile the
//! binary on it (docs/benchmarks.md).
//!
//! Per size, `RSBUILDER_SCALE_RUNS` times (default 5):
//! - the work: `generate()` in this process (read, parse, derive, serialize; nothing
//!   written), median wall time;
//! - the command: the release binary writing every CRD into an empty directory, median wall
//!   time, and the largest peak resident set of its runs as the kernel reports it
//!   (`getrusage(RUSAGE_CHILDREN)`). Each size is measured in a fresh process, so an earlier,
//!   larger size cannot raise the figure.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Writes a crate whose `src/lib.rs` has at least `lines` lines; returns (kinds, bytes).
fn write_one_file_crate(root: &Path, lines: usize) -> (usize, usize) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"scale\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let mut text = common::uses(None);
    text.push('\n');
    text.push_str(common::SHARED_TYPES);
    let mut kinds = 0;
    let mut counted = text.lines().count();
    while counted < lines {
        // In steps of 100 kinds, counting only the lines just written.
        let from = text.len();
        for _ in 0..100 {
            common::kind(
                &mut text,
                &format!("Thing{kinds:05}"),
                kinds,
                &format!("_{kinds}"),
            );
            kinds += 1;
        }
        counted += text[from..].matches('\n').count();
    }
    std::fs::write(root.join("src/lib.rs"), &text).unwrap();
    (kinds, text.len())
}

/// Peak resident set of the children waited for so far, in bytes.
fn children_max_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "getrusage");
    // Linux reports ru_maxrss in KiB.
    usage.ru_maxrss as u64 * 1024
}

fn main() {
    // `cargo bench` passes `--bench`; a size as the first other argument measures only it
    // (the parent runs each size in a fresh child so the RSS figures stay separate).
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs: usize = std::env::var("RSBUILDER_SCALE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    // `write <lines> <dir>`: only write the crate (to profile the binary on it).
    if let [cmd, lines, dir] = &args[..]
        && cmd == "write"
    {
        let lines: usize = lines.parse().expect("write <lines> <dir>");
        let (kinds, bytes) = write_one_file_crate(Path::new(dir), lines);
        println!("{dir}: {kinds} kinds, {bytes} bytes");
        return;
    }
    if let Some(lines) = args.first().and_then(|a| a.parse::<usize>().ok()) {
        measure(lines, runs);
        return;
    }
    println!(
        "| lines | kinds | source | generate() ({runs} runs, median) | command, writing every CRD (median) | command's peak RSS |"
    );
    println!("|---|---|---|---|---|---|");
    for lines in [25_000, 50_000, 100_000, 200_000] {
        let status = Command::new(std::env::current_exe().unwrap())
            .arg(lines.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "measuring {lines} lines failed");
    }
}

fn measure(lines: usize, runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (kinds, bytes) = write_one_file_crate(dir.path(), lines);
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..runs {
        let out = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let run = Command::new(env!("CARGO_BIN_EXE_rsbuilder"))
            .args(["manifests", "--evaluate", "static", "--dir"])
            .arg(dir.path())
            .arg("--output-dir")
            .arg(out.path())
            .output()
            .unwrap();
        times.push(started.elapsed());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let written = std::fs::read_dir(out.path().join("crd/bases"))
            .unwrap()
            .count();
        assert_eq!(written, kinds, "every kind written");
    }
    times.sort();
    let rss = children_max_rss();
    let opts = rsbuilder::manifests::generate::Options {
        paths: vec![dir.path().join("src")],
        output_dir: dir.path().join("config"),
        evaluate: rsbuilder::manifests::probe::Evaluate::Static,
        ..Default::default()
    };
    let mut work: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let out = rsbuilder::manifests::generate::generate(&opts).unwrap();
            let took = started.elapsed();
            assert_eq!(out.files.len(), kinds, "every kind derived");
            took
        })
        .collect();
    work.sort();
    println!(
        "| {lines} | {kinds} | {:.1} MB | {:.0} ms | {:.0} ms | {:.0} MiB |",
        bytes as f64 / 1e6,
        work[work.len() / 2].as_secs_f64() * 1e3,
        times[times.len() / 2].as_secs_f64() * 1e3,
        rss as f64 / (1024.0 * 1024.0)
    );
}
