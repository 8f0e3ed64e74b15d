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

/// The `create api` flags of the AIJob example's kind.
#[allow(dead_code)]
pub const AIJOB_FLAGS: [&str; 6] = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];

/// The rsbuilder binary of this build, run in `dir` with [`EPOCH_2026`] (so generated years
/// are stable) and without the fault-injection variable of tests/cli/write_safety.rs.
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

/// How [`snapshot_changes`] shows a file that the command changed.
#[allow(dead_code)]
pub enum Update {
    /// The lines it added (`+`) and removed (`-`), without context or line numbers, so the
    /// snapshot pins what the command wrote and not the text around it that `init` owns.
    ChangedLines,
    /// A unified diff with two lines of context.
    UnifiedDiff,
}

/// Snapshots what `command` changed between the trees `before` and `after` (see [`tree`]): a
/// new file whole, an updated file as [`Update`] says. Each snapshot is named
/// `<variant>__<path with / and . as _>` and given to `snapshot`, which calls
/// `insta::assert_snapshot!` in the test's own module (insta names the snapshot file after the
/// module it is called from). `only` limits the snapshots to these paths (all changes when
/// empty). Out: every changed path, for the caller to assert. Fails the test when `command`
/// removed a file.
#[allow(dead_code)]
pub fn snapshot_changes(
    command: &str,
    variant: &str,
    before: &std::collections::BTreeMap<String, Vec<u8>>,
    after: &std::collections::BTreeMap<String, Vec<u8>>,
    only: &[&str],
    update: Update,
    snapshot: impl Fn(String, String),
) -> Vec<String> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap();
    let mut changed = Vec::new();
    for (path, new) in after {
        let old = before.get(path);
        if old == Some(new) {
            continue;
        }
        changed.push(path.clone());
        if !only.is_empty() && !only.contains(&path.as_str()) {
            continue;
        }
        let name = format!("{variant}__{}", path.replace(['/', '.'], "_"));
        let shown = match (old, &update) {
            (None, _) => text(new),
            (Some(old), Update::ChangedLines) => {
                similar::TextDiff::from_lines(&text(old), &text(new))
                    .iter_all_changes()
                    .filter_map(|c| match c.tag() {
                        similar::ChangeTag::Insert => Some(format!("+{c}")),
                        similar::ChangeTag::Delete => Some(format!("-{c}")),
                        similar::ChangeTag::Equal => None,
                    })
                    .collect()
            }
            (Some(old), Update::UnifiedDiff) => {
                similar::TextDiff::from_lines(&text(old), &text(new))
                    .unified_diff()
                    .context_radius(2)
                    .header(path, path)
                    .to_string()
            }
        };
        snapshot(name, shown);
    }
    assert!(
        before.keys().all(|k| after.contains_key(k)),
        "{command} removed a file"
    );
    changed
}
