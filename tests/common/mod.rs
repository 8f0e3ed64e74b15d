//! What the integration tests share: the rule for a missing outside tool ([`outside_tools`]),
//! and running rsbuilder in a project and reading its tree back.

pub mod e2e;
mod outside_tools;
#[allow(unused_imports)]
pub use outside_tools::{e2e_opted_out, missing};

/// `SOURCE_DATE_EPOCH` of the scaffold tests: 2026-06-01, the year the generated headers and
/// licenses name.
#[allow(dead_code)]
pub const EPOCH_2026: &str = "1780272000";

/// The rsbuilder binary of this build, run in `dir` with [`EPOCH_2026`] (so generated years
/// are stable) and without the fault-injection variable of tests/write_safety.rs.
#[allow(dead_code)]
pub fn rsbuilder(dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("rsbuilder").expect("binary built");
    cmd.current_dir(dir)
        .env("SOURCE_DATE_EPOCH", EPOCH_2026)
        .env_remove("RSBUILDER_FAULT_AT");
    cmd
}

/// Every file under `dir` (a `target/` directory left out), by `/`-separated relative path,
/// with its bytes: the whole generated tree, to compare or snapshot.
#[allow(dead_code)]
pub fn tree(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != "target")
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap();
            (
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The text of `dir/rel`; panics naming the file when it cannot be read.
#[allow(dead_code)]
pub fn read(dir: &std::path::Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
