//! The engine's write guarantees through the built binary, under the conditions that broke
//! them before: commands running at the same time in one project (the project
//! lock), commands killed at every write step (the journal; `alpha update` included), and a
//! symbolic link swapped in while a command writes (the handle rooted at the project).
//! docs/safety.md describes each.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// 2026-06-01T00:00:00Z: fixes the copyright year in license headers.
const EPOCH_2026: &str = "1780272000";
const AIJOB: [&str; 8] = [
    "create",
    "api",
    "--group",
    "ai",
    "--version",
    "v1",
    "--kind",
    "AIJob",
];
const MODEL: [&str; 8] = [
    "create",
    "api",
    "--group",
    "ai",
    "--version",
    "v1",
    "--kind",
    "Model",
];

/// The state directory of this test binary's commands (their run records), so that killed
/// runs leave nothing in the user's own.
fn state_home() -> &'static Path {
    static STATE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    STATE.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn rsbuilder(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("rsbuilder"));
    cmd.current_dir(dir)
        .args(args)
        .env("XDG_STATE_HOME", state_home())
        .env("SOURCE_DATE_EPOCH", EPOCH_2026)
        .env_remove("RSBUILDER_FAULT_AT")
        .env_remove("RSBUILDER_LOCK_TIMEOUT");
    cmd
}

fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let out = rsbuilder(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "rsbuilder {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    rsbuilder(dir, args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every entry under `dir`: directories (`None`), files (their bytes) and symbolic links
/// (`->` and the target), so a stray temporary file, an empty directory left behind or a
/// changed byte all show.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(Result::unwrap)
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let t = e.file_type();
            let v = if t.is_dir() {
                None
            } else if t.is_symlink() {
                let target = std::fs::read_link(e.path()).unwrap();
                Some(format!("-> {}", target.display()).into_bytes())
            } else {
                Some(std::fs::read(e.path()).unwrap())
            };
            (rel, v)
        })
        .collect()
}

/// The paths that differ between two trees.
fn diff(
    a: &BTreeMap<String, Option<Vec<u8>>>,
    b: &BTreeMap<String, Option<Vec<u8>>>,
) -> Vec<String> {
    let mut out: Vec<String> = a
        .iter()
        .filter(|(p, v)| b.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .chain(b.keys().filter(|p| !a.contains_key(*p)).cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Copies the tree at `from` to the new directory `to` (files and directories).
fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A project after `init` (named `ai-operator`), under a fresh temporary directory.
fn initialized() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ],
    );
    (tmp, dir)
}

/// The tree `commands` leave when run one after the other on a copy of `base`.
fn tree_after(base: &Path, commands: &[&[&str]]) -> BTreeMap<String, Option<Vec<u8>>> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    copy_tree(base, &dir);
    for c in commands {
        run_ok(&dir, c);
    }
    tree(&dir)
}

/// Two `create api` for different kinds at once in one project, 100 times: both succeed and
/// the project is exactly what running them one after the other gives (in one order or the
/// other), so neither kind's edits to the shared files are lost. Then two `manifests` at once:
/// both succeed and write the same files as one run.
#[test]
fn concurrent_commands_in_one_project_lose_nothing() {
    let (_tmp, base) = initialized();
    let a_then_b = tree_after(&base, &[&AIJOB, &MODEL]);
    let b_then_a = tree_after(&base, &[&MODEL, &AIJOB]);
    assert_ne!(a_then_b, b_then_a, "the order shows in the shared files");
    let manifests_once = {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        run_ok(&dir, &AIJOB);
        run_ok(&dir, &MODEL);
        run_ok(&dir, &["manifests"]);
        tree(&dir)
    };
    for attempt in 0..100 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        let a = spawn(&dir, &AIJOB);
        let b = spawn(&dir, &MODEL);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for (name, out) in [("AIJob", &a), ("Model", &b)] {
            assert!(
                out.status.success(),
                "attempt {attempt}: create api {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let got = tree(&dir);
        assert!(
            got == a_then_b || got == b_then_a,
            "attempt {attempt}: a kind was lost; differs from AIJob-then-Model in {:?}",
            diff(&a_then_b, &got)
        );
        if attempt % 10 == 0 {
            let m1 = spawn(&dir, &["manifests"]);
            let m2 = spawn(&dir, &["manifests"]);
            let (m1, m2) = (
                m1.wait_with_output().unwrap(),
                m2.wait_with_output().unwrap(),
            );
            for out in [&m1, &m2] {
                assert!(
                    out.status.success(),
                    "attempt {attempt}: manifests: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            if got == a_then_b {
                assert_eq!(diff(&manifests_once, &tree(&dir)), Vec::<String>::new());
            }
        }
    }
}

/// A command that cannot get the lock says that it waits, then gives up with exit code 75
/// and the reason, having written nothing.
/// A lock timeout that is not a number of seconds from 0 to a year is a usage error naming
/// the variable, and nothing is written. Before, `1e20` panicked (exit 101) and `NaN` or `-1`
/// were ignored for the default.
#[test]
fn a_bad_lock_timeout_is_a_usage_error() {
    let (_tmp, dir) = initialized();
    let before = tree(&dir);
    for value in ["1e20", "NaN", "-1", "inf", "soon"] {
        let out = rsbuilder(&dir, &AIJOB)
            .env("RSBUILDER_LOCK_TIMEOUT", value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "RSBUILDER_LOCK_TIMEOUT is `{value}`: it must be a number of seconds from 0"
            )),
            "{stderr}"
        );
        assert_eq!(tree(&dir), before, "{value}");
    }
}

#[test]
fn a_command_waits_for_the_lock_then_fails_clearly() {
    let (_tmp, dir) = initialized();
    let before = tree(&dir);
    let held = std::fs::File::open(&dir).unwrap();
    fs4::FileExt::try_lock(&held).unwrap();
    let start = std::time::Instant::now();
    let out = rsbuilder(&dir, &AIJOB)
        .env("RSBUILDER_LOCK_TIMEOUT", "0.5")
        .output()
        .unwrap();
    let waited = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "waiting for another rsbuilder command to finish in {} (up to 0.5 s",
            dir.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: another rsbuilder command is still running in"),
        "{stderr}"
    );
    assert!(stderr.contains("RSBUILDER_LOCK_TIMEOUT"), "{stderr}");
    assert!(
        waited >= std::time::Duration::from_millis(500),
        "{waited:?}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(diff(&before, &tree(&dir)), Vec::<String>::new());
    // Released: the same command goes through.
    drop(held);
    run_ok(&dir, &AIJOB);
}

/// Whether `.rsbuilder/txn` in `dir` holds an interrupted apply (a journal or staged files; an
/// empty directory or a lone `back` is a finished one).
fn interrupted(dir: &Path) -> bool {
    std::fs::read_dir(dir.join(".rsbuilder/txn"))
        .is_ok_and(|entries| entries.map(Result::unwrap).any(|e| e.file_name() != "back"))
}

/// Runs `args` on a copy of `base` killed (SIGKILL, through the engine's fault-injection hook
/// `RSBUILDER_FAULT_AT`) right before its 1st, 2nd, … write step, until a run gets through.
/// After every kill, `manifests --check` must change nothing and, when the kill left an
/// interrupted apply, say so and exit non-zero; then `alpha recover` must leave the project
/// exactly as before the killed command or exactly as after it, and say which when it had
/// something to finish. Returns how many kills ended as before and as after.
#[cfg(unix)]
fn killed_at_every_step(base: &Path, args: &[&str]) -> (usize, usize) {
    use std::os::unix::process::ExitStatusExt as _;
    let before = tree(base);
    let after = tree_after(base, &[args]);
    assert_ne!(before, after);
    let (mut as_before, mut as_after) = (0, 0);
    for n in 1.. {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(base, &dir);
        forget_stale_record(&dir);
        let out = rsbuilder(&dir, args)
            .env("RSBUILDER_FAULT_AT", n.to_string())
            .output()
            .unwrap();
        if out.status.success() {
            assert!(n > 10, "{args:?} has only {} write steps", n - 1);
            assert_eq!(diff(&after, &tree(&dir)), Vec::<String>::new());
            break;
        }
        assert_eq!(
            out.status.signal(),
            Some(9),
            "{args:?} at step {n}: not killed (fault injection needs a debug build): {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let killed = tree(&dir);
        let pending = interrupted(&dir);
        let check = rsbuilder(&dir, &["manifests", "--check"]).output().unwrap();
        assert_eq!(
            diff(&killed, &tree(&dir)),
            Vec::<String>::new(),
            "{args:?} killed at step {n}: manifests --check wrote"
        );
        if pending {
            let said = String::from_utf8_lossy(&check.stderr);
            assert!(
                !check.status.success() && said.contains("was interrupted while writing"),
                "{args:?} killed at step {n}: manifests --check did not report it: {said}"
            );
        }
        let next = rsbuilder(&dir, &["alpha", "recover"]).output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&next.stdout),
            String::from_utf8_lossy(&next.stderr)
        );
        assert!(next.status.success(), "step {n}: {said}");
        let now = tree(&dir);
        if now == before {
            as_before += 1;
            assert!(!said.contains("rolled forward"), "step {n}: {said}");
        } else if now == after {
            as_after += 1;
            assert!(!said.contains("rolled back"), "step {n}: {said}");
        } else {
            panic!(
                "{args:?} killed at step {n}: the next command left a tree that is neither before \
                 (differs in {:?}) nor after (differs in {:?})\n{said}",
                diff(&before, &now),
                diff(&after, &now)
            );
        }
    }
    assert!(as_before > 0 && as_after > 0, "{as_before} {as_after}");
    (as_before, as_after)
}

#[cfg(unix)]
#[test]
fn init_killed_at_every_write_step_is_rolled_forward_or_back() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("ai-operator");
    std::fs::create_dir(&base).unwrap();
    killed_at_every_step(&base, &["init", "--domain", "ai.example.com"]);
}

#[cfg(unix)]
#[test]
fn create_api_killed_at_every_write_step_is_rolled_forward_or_back() {
    let (_tmp, base) = initialized();
    // The first kind (creates directories) and a second one (updates shared files).
    killed_at_every_step(&base, &AIJOB);
    run_ok(&base, &AIJOB);
    killed_at_every_step(&base, &MODEL);
}

#[cfg(unix)]
#[test]
fn create_webhook_killed_at_every_write_step_is_rolled_forward_or_back() {
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    let mut args = AIJOB.to_vec();
    args[1] = "webhook";
    args.extend(["--defaulting", "--programmatic-validation"]);
    killed_at_every_step(&base, &args);
}

#[cfg(unix)]
#[test]
fn edit_and_manifests_killed_at_every_write_step_are_rolled_forward_or_back() {
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    killed_at_every_step(&base, &["edit", "--namespaced=true"]);
    killed_at_every_step(&base, &["manifests"]);
}

/// `manifests --output-dir <tmp>/new/out`, where neither directory exists, keeps its journal
/// and staged files inside the output directory it creates, never in the shared ancestor
/// (`<tmp>`, standing for /tmp, where another user could plant or swap them): killed at every
/// write step, nothing appears in `<tmp>` but `new/`, the kill that leaves a journal leaves it
/// in `new/out/.rsbuilder/txn`, and the next run finishes it there. A `.rsbuilder/txn` another
/// user put in the ancestor is neither trusted nor an obstacle. A run that fails writes
/// nothing, the output directory included.
#[cfg(unix)]
#[test]
fn manifests_into_a_new_output_directory_keeps_its_journal_there() {
    let (tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    // Another user's journal in the shared ancestor.
    let planted = tmp.path().join(".rsbuilder/txn");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(planted.join("journal"), "{}").unwrap();
    let shared_before = tree(&tmp.path().join(".rsbuilder"));
    let out = tmp.path().join("new/out");
    let args = ["manifests", "--output-dir", out.to_str().unwrap()];
    let names = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let mut journal_seen = false;
    for n in 1.. {
        let _ = std::fs::remove_dir_all(tmp.path().join("new"));
        let run = rsbuilder(&base, &args)
            .env("RSBUILDER_FAULT_AT", n.to_string())
            .output()
            .unwrap();
        if run.status.success() {
            break;
        }
        assert!(n < 200, "manifests never finished");
        // The project (copied from `base`) is the only other entry.
        let left = names(tmp.path());
        assert!(
            left.iter()
                .all(|e| [".rsbuilder", "ai-operator", "new"].contains(&e.as_str())),
            "step {n}: {left:?}"
        );
        assert_eq!(
            tree(&tmp.path().join(".rsbuilder")),
            shared_before,
            "step {n}"
        );
        if out.join(".rsbuilder/txn/journal").exists() {
            journal_seen = true;
            let next = run_ok(&base, &args);
            let said = String::from_utf8_lossy(&next.stderr);
            assert!(said.contains("(rolled forward)"), "step {n}: {said}");
            assert!(!out.join(".rsbuilder").exists(), "step {n}");
        }
    }
    assert!(journal_seen, "no kill landed after the journal's commit");
    assert!(
        out.join("crd/bases/ai.ai.example.com_aijobs.yaml")
            .is_file()
    );
    assert!(!out.join(".rsbuilder").exists());
    assert_eq!(tree(&tmp.path().join(".rsbuilder")), shared_before);
    // A marker error: nothing written, no output directory.
    std::fs::remove_dir_all(tmp.path().join("new")).unwrap();
    let types = base.join("src/api/v1/aijob_types.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    std::fs::write(
        &types,
        format!("// +kubebuilder:rbac:groups=apps,resources=pods\n{text}"),
    )
    .unwrap();
    let failed = rsbuilder(&base, &args).output().unwrap();
    assert_eq!(
        failed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
    assert!(!tmp.path().join("new").exists());
}

/// `edit --multigroup=true` moves files (writes at the new paths, removals at the old ones):
/// killed at any of its steps, the project is found as before or as after the switch.
#[cfg(unix)]
#[test]
fn edit_multigroup_killed_at_every_write_step_is_rolled_forward_or_back() {
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    let mut webhook = AIJOB.to_vec();
    webhook[1] = "webhook";
    webhook.push("--defaulting");
    run_ok(&base, &webhook);
    killed_at_every_step(&base, &["edit", "--multigroup=true"]);
}

/// The project at `dir` as an older rsbuilder would have left it (see tests/cli/alpha.rs): two
/// runtime files had another line a quarter of the way in (on disk and in their records under
/// `.rsbuilder/`), the second of them also has a line of the user's three quarters in, and a
/// recorded runtime file this version does not have. `alpha update` then replaces the first,
/// merges the second and removes the third.
#[cfg(unix)]
fn as_if_older(dir: &Path) {
    use sha2::Digest as _;
    let manifest = dir.join(".rsbuilder/tool-owned.sha256");
    let mut entries: BTreeMap<String, String> = std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .map(|l| {
            let (h, p) = l.split_once("  ").unwrap();
            (p.to_owned(), h.to_owned())
        })
        .collect();
    let mut by_size: Vec<(usize, String)> = entries
        .keys()
        .map(|p| {
            let n = std::fs::read_to_string(dir.join(p))
                .unwrap()
                .lines()
                .count();
            (n, p.clone())
        })
        .collect();
    by_size.sort();
    let hex = |t: &str| -> String {
        sha2::Sha256::digest(t.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let mut record = |rel: &str, on_disk: &str, base: &str| {
        let base_file = dir.join(".rsbuilder/base").join(rel);
        std::fs::create_dir_all(base_file.parent().unwrap()).unwrap();
        std::fs::write(&base_file, base).unwrap();
        std::fs::write(dir.join(rel), on_disk).unwrap();
        entries.insert(rel.to_owned(), hex(base));
    };
    for (i, (n, rel)) in by_size.iter().rev().take(2).enumerate() {
        let mut lines: Vec<String> = std::fs::read_to_string(dir.join(rel))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines[n / 4] = "// a line of the older version".into();
        let old = lines.join("\n") + "\n";
        if i == 1 {
            lines[n * 3 / 4] = "// the user's line".into();
        }
        record(rel, &(lines.join("\n") + "\n"), &old);
    }
    let legacy = "// an older runtime's file\n";
    record("rsbuilder-runtime/src/legacy.rs", legacy, legacy);
    let text: String = entries.iter().map(|(p, h)| format!("{h}  {p}\n")).collect();
    std::fs::write(manifest, text).unwrap();
}

#[cfg(unix)]
#[test]
fn alpha_update_killed_at_every_write_step_is_rolled_forward_or_back() {
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    as_if_older(&base);
    let out = run_ok(&tree_dir_copy(&base).1, &["alpha", "update"]);
    let said = String::from_utf8_lossy(&out.stdout);
    for word in ["replace ", "merge ", "remove "] {
        assert!(said.contains(word), "{word:?} not in\n{said}");
    }
    killed_at_every_step(&base, &["alpha", "update"]);
}

/// A copy of the project at `base`, under a fresh temporary directory.
#[cfg(unix)]
fn tree_dir_copy(base: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    copy_tree(base, &dir);
    forget_stale_record(&dir);
    (tmp, dir)
}

/// Removes the run record a killed run of an earlier test left for a directory since deleted
/// whose inode `dir` now reuses (records are named by device and inode). Such a record is
/// harmless to the product, whose nonce check rejects it, but the next command removes it
/// with one more write step, which would shift the step a fault-injected kill lands on.
#[cfg(unix)]
fn forget_stale_record(dir: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(dir).unwrap();
    let record =
        state_home()
            .join("rsbuilder/runs")
            .join(format!("{:x}-{:x}", meta.dev(), meta.ino()));
    match std::fs::remove_file(&record) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{}: {e}", record.display()),
        _ => {}
    }
}

#[cfg(not(unix))]
fn forget_stale_record(_dir: &Path) {}

/// A thread swaps `src/api` between the real directory and a symbolic link to a directory
/// outside the project (holding a copy of `src/api`, so every path the command wants exists
/// there too) while `create api` for a second kind runs, 50 times: the command either succeeds or fails with
/// exit 1, and the outside directory is never written to.
#[cfg(unix)]
#[test]
fn a_symlink_swapped_in_while_create_api_runs_never_leads_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    let (mut succeeded, mut refused) = (0, 0);
    for attempt in 0..50 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        let outside = tmp.path().join("outside");
        copy_tree(&dir.join("src/api"), &outside);
        let outside_before = tree(&outside);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (api, real, outside, stop) = (
                dir.join("src/api"),
                dir.join("src/api.real"),
                outside.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let mut swaps = 0u32;
                while !stop.load(Ordering::SeqCst) {
                    std::fs::rename(&api, &real).unwrap();
                    std::os::unix::fs::symlink(&outside, &api).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    std::fs::remove_file(&api).unwrap();
                    std::fs::rename(&real, &api).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    swaps += 1;
                }
                swaps
            })
        };
        let out = rsbuilder(&dir, &MODEL).output().unwrap();
        stop.store(true, Ordering::SeqCst);
        let swaps = swapper.join().unwrap();
        assert!(swaps > 0);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => succeeded += 1,
            Some(1) => refused += 1,
            other => panic!("attempt {attempt}: exit {other:?}\n{stderr}"),
        }
        assert_eq!(
            diff(&outside_before, &tree(&outside)),
            Vec::<String>::new(),
            "attempt {attempt}: written outside the project\n{stderr}"
        );
    }
    // The race is real: some runs hit the link.
    assert!(refused > 0, "{succeeded} succeeded, none refused");
}

/// The recovery is itself killed at each of its steps: `create api` is killed once while
/// staging (so the next command discards) and once after its journal is committed (so the
/// next command rolls forward), then the recovering command is killed at its 1st, 2nd, …
/// step, and a last command must still find the project exactly as before or after.
#[cfg(unix)]
#[test]
fn a_recovery_killed_at_every_step_is_finished_by_the_next_command() {
    let (_tmp, base) = initialized();
    let before = tree(&base);
    let after = tree_after(&base, &[&AIJOB]);
    // Steps 1 and 2 create `.rsbuilder/txn`, the next ones stage the files; the journal is
    // committed about halfway and the renames follow (a quarter in, files are staged; two
    // thirds in, the journal is committed). Find the number of steps first.
    let steps = (1..)
        .find(|n| {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("ai-operator");
            copy_tree(&base, &dir);
            let out = rsbuilder(&dir, &AIJOB)
                .env("RSBUILDER_FAULT_AT", n.to_string())
                .output()
                .unwrap();
            out.status.success()
        })
        .unwrap()
        - 1;
    for (kill_at, expected, says) in [
        (
            steps / 4,
            &before,
            "removed what it had staged (rolled back)",
        ),
        (steps * 2 / 3, &after, "(rolled forward)"),
    ] {
        for m in 1.. {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("ai-operator");
            copy_tree(&base, &dir);
            let out = rsbuilder(&dir, &AIJOB)
                .env("RSBUILDER_FAULT_AT", kill_at.to_string())
                .output()
                .unwrap();
            assert!(!out.status.success());
            let recovering = rsbuilder(&dir, &["alpha", "recover"])
                .env("RSBUILDER_FAULT_AT", m.to_string())
                .output()
                .unwrap();
            let last = rsbuilder(&dir, &["alpha", "recover"]).output().unwrap();
            let now = tree(&dir);
            assert!(
                now == *expected,
                "create api killed at {kill_at}, recovery killed at {m}: differs in {:?}\n{}",
                diff(expected, &now),
                String::from_utf8_lossy(&last.stderr)
            );
            // The recovery got through without being killed: every step was tried.
            if recovering.status.code().is_some() {
                assert!(
                    m > 1,
                    "the recovery had no step to kill (create api killed at {kill_at} of \
                     {steps}):\n{}",
                    String::from_utf8_lossy(&recovering.stderr)
                );
                let said = String::from_utf8_lossy(&recovering.stdout);
                // A fresh copy each time: this run did the whole recovery.
                assert!(
                    said.contains(says),
                    "killed at {kill_at}: {says:?} not in\n{said}"
                );
                break;
            }
        }
    }
}

/// Two `init` at once in one empty directory, 20 times: exactly one succeeds, the other is
/// refused as a second init (exit 1), and the tree is exactly that of one init. And `edit`
/// next to `create api`: both succeed and the tree is one of the two orders.
#[test]
fn concurrent_init_and_edit_are_serialized() {
    let init: [&str; 3] = ["init", "--domain", "ai.example.com"];
    let one_init = {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        std::fs::create_dir(&dir).unwrap();
        run_ok(&dir, &init);
        tree(&dir)
    };
    for attempt in 0..20 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        std::fs::create_dir(&dir).unwrap();
        let a = spawn(&dir, &init);
        let b = spawn(&dir, &init);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let mut codes = [a.status.code(), b.status.code()];
        codes.sort();
        assert_eq!(
            codes,
            [Some(0), Some(1)],
            "attempt {attempt}:\n{}\n{}",
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr)
        );
        assert_eq!(diff(&one_init, &tree(&dir)), Vec::<String>::new());
    }
    let (_tmp, base) = initialized();
    let edit: [&str; 2] = ["edit", "--namespaced=true"];
    let orders = [
        tree_after(&base, &[&edit, &AIJOB]),
        tree_after(&base, &[&AIJOB, &edit]),
    ];
    for attempt in 0..20 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        let a = spawn(&dir, &edit);
        let b = spawn(&dir, &AIJOB);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for out in [&a, &b] {
            assert!(
                out.status.success(),
                "attempt {attempt}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let got = tree(&dir);
        assert!(
            orders.contains(&got),
            "attempt {attempt}: differs from edit-then-create in {:?}",
            diff(&orders[0], &got)
        );
    }
}

/// A `.rsbuilder/txn` carried by a repository (a journal naming `.git/hooks/pre-commit` and a
/// staged 0755 script, with the hash the journal records) is never applied: every command,
/// `manifests --check` and `alpha recover` included, reports it, exits non-zero and leaves
/// the tree exactly as it was, with no git hook installed; `manifests --output-dir` into a
/// directory outside the project writes nothing there either. (rsbuilder before the run record
/// installed the hook on the first command, `--check` included.)
#[cfg(unix)]
#[test]
fn a_journal_from_a_checkout_installs_nothing() {
    use sha2::Digest as _;
    use std::os::unix::fs::PermissionsExt as _;
    let (_tmp, dir) = initialized();
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dir.join(".rsbuilder/txn")).unwrap();
    let hook = b"#!/bin/sh\necho pwned > pwned\n";
    let staged = dir.join(".rsbuilder/txn/0.new");
    std::fs::write(&staged, hook).unwrap();
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sha: String = sha2::Sha256::digest(hook)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let journal = serde_json::json!({
        "command": "rsbuilder manifests",
        "nonce": "0123456789abcdef0123456789abcdef",
        "dirs": [],
        "files": [{"path": ".git/hooks/pre-commit", "replaces": false, "sha256": sha}],
    });
    std::fs::write(
        dir.join(".rsbuilder/txn/journal"),
        serde_json::to_vec_pretty(&journal).unwrap(),
    )
    .unwrap();
    let before = tree(&dir);
    // An --output-dir outside the project: the output is locked there, but the project's
    // journal is still reported and nothing is derived from the project.
    let outside = tempfile::tempdir().unwrap();
    let out_dir = outside.path().join("out");
    let out_arg = out_dir.to_str().unwrap();
    for args in [
        &["manifests", "--check"][..],
        &["manifests"],
        &["manifests", "--output-dir", out_arg],
        &AIJOB,
        &["alpha", "recover"],
    ] {
        let out = rsbuilder(&dir, args).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains("holds an interrupted write that rsbuilder will not finish")
                && said.contains("Nothing in it was applied"),
            "{args:?}: {said}"
        );
        assert!(!dir.join(".git/hooks/pre-commit").exists(), "{args:?}");
        assert_eq!(diff(&before, &tree(&dir)), Vec::<String>::new(), "{args:?}");
        assert!(!out_dir.exists(), "{args:?}: wrote {}", out_dir.display());
    }
}

/// `manifests --check` on a project a killed `create api` left with a committed journal:
/// exit 1, the interruption named, nothing written; `alpha recover` then rolls it forward.
#[cfg(unix)]
#[test]
fn manifests_check_reports_an_interrupted_apply_and_writes_nothing() {
    let (_tmp, base) = initialized();
    let after = tree_after(&base, &[&AIJOB]);
    // The last kill point before the run completes is after the commit.
    let mut n = 1;
    let dir = loop {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        let out = rsbuilder(&dir, &AIJOB)
            .env("RSBUILDER_FAULT_AT", n.to_string())
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "create api has no step after its journal"
        );
        if dir.join(".rsbuilder/txn/journal").exists() {
            break (tmp, dir);
        }
        n += 1;
    };
    let (_keep, dir) = dir;
    let killed = tree(&dir);
    let check = rsbuilder(&dir, &["manifests", "--check"]).output().unwrap();
    let said = String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(
        said.contains("`rsbuilder create api --group ai --version v1 --kind AIJob` was interrupted while writing")
            && said.contains("rsbuilder alpha recover"),
        "{said}"
    );
    assert_eq!(diff(&killed, &tree(&dir)), Vec::<String>::new());
    let out = run_ok(&dir, &["alpha", "recover"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(rolled forward)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(diff(&after, &tree(&dir)), Vec::<String>::new());
}

/// Swaps `.rsbuilder` in `dir` with a symbolic link to `outside` and back (each swap one
/// atomic `renameat2(RENAME_EXCHANGE)`, so the name always exists) until `stop` is set, then
/// leaves the real directory in place and removes the link. Returns how many swaps it made.
#[cfg(target_os = "linux")]
fn swap_state_dir(
    dir: PathBuf,
    outside: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let state = dir.join(".rsbuilder");
    let link = dir.join(".rsbuilder-link");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    std::thread::spawn(move || {
        let mut swaps = 0u32;
        let swap = || renameat_with(CWD, &state, CWD, &link, RenameFlags::EXCHANGE).unwrap();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            swap();
            std::thread::sleep(std::time::Duration::from_micros(150));
            swap();
            std::thread::sleep(std::time::Duration::from_micros(150));
            swaps += 1;
        }
        std::fs::remove_file(&link).unwrap();
        swaps
    })
}

/// What one run under the `.rsbuilder` race left, checked against its exit code: exit 0 is
/// the after-state with nothing in `.rsbuilder/txn`; exit 1 is the state the run started
/// from (`start`, refused before it changed anything), the before-state with nothing pending,
/// or a pending journal the message names together with what the next command does, which
/// `alpha recover` then does, saying truthfully what it did. Returns the outcome's name.
#[cfg(target_os = "linux")]
fn check_raced_run(
    what: &str,
    dir: &Path,
    out: &Output,
    start: &BTreeMap<String, Option<Vec<u8>>>,
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
) -> &'static str {
    let said = String::from_utf8_lossy(&out.stderr);
    let now = tree(dir);
    let pending = interrupted(dir);
    let recover = |expect: &BTreeMap<String, Option<Vec<u8>>>, says: Option<&str>| {
        let next = run_ok(dir, &["alpha", "recover"]);
        let note = String::from_utf8_lossy(&next.stdout);
        assert_eq!(
            diff(expect, &tree(dir)),
            Vec::<String>::new(),
            "{what}: the next command did not leave what the message said\n{said}\n{note}"
        );
        match says {
            Some(says) => assert!(note.contains(says), "{what}: {said}\nnext: {note}"),
            None => assert!(
                note.contains("nothing to finish"),
                "{what}: {said}\nnext: {note}"
            ),
        }
        assert!(!interrupted(dir), "{what}");
    };
    match out.status.code() {
        Some(0) => {
            assert!(!pending, "{what}: exit 0 left a pending journal\n{said}");
            assert_eq!(
                diff(after, &now),
                Vec::<String>::new(),
                "{what}: exit 0 without the after-state\n{said}"
            );
            recover(after, None);
            "succeeded"
        }
        Some(1) if now == *start => {
            // Refused before changing anything: what was pending still is.
            match pending {
                true => recover(after, Some("(rolled forward)")),
                false => recover(before, None),
            }
            "refused"
        }
        Some(1) if !pending => {
            assert_eq!(
                diff(before, &now),
                Vec::<String>::new(),
                "{what}: exit 1, nothing pending, yet not the before-state\n{said}"
            );
            recover(before, None);
            "undone"
        }
        Some(1) => {
            let forward = said.contains("will finish it (roll forward");
            let back = said.contains("will finish undoing it (roll back");
            assert!(
                said.contains(".rsbuilder/txn") && (forward ^ back),
                "{what}: exit 1 left a pending journal the message does not report\n{said}"
            );
            match forward {
                true => recover(after, Some("(rolled forward)")),
                false => recover(before, Some("(rolled back)")),
            }
            "pending"
        }
        other => panic!("{what}: exit {other:?}\n{said}"),
    }
}

/// A thread swaps `.rsbuilder` (the tool-owned records and the journal's directory) with a
/// symbolic link to a copy of it outside the project and back, while `create api` runs, and
/// then while `alpha recover` finishes a committed journal, many times. Every run's exit code
/// matches the state it leaves (see `check_raced_run`), every recovery note says what the tree
/// shows, and the outside copy is never written.
#[cfg(target_os = "linux")]
#[test]
fn a_symlink_race_on_the_state_directory_never_lies_about_the_outcome() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_tmp, base) = initialized();
    assert!(base.join(".rsbuilder").is_dir());
    let before = tree(&base);
    let after = tree_after(&base, &[&AIJOB]);
    // The first step at which a kill leaves `create api` with its journal committed (the run
    // record names the directory, so each copy is made committed by its own killed run).
    let commit_step = (1..)
        .find(|n| {
            let (_tmp, dir) = tree_dir_copy(&base);
            let out = rsbuilder(&dir, &AIJOB)
                .env("RSBUILDER_FAULT_AT", n.to_string())
                .output()
                .unwrap();
            assert!(
                !out.status.success(),
                "create api has no step after its journal"
            );
            dir.join(".rsbuilder/txn/journal").exists()
        })
        .unwrap();
    let committed = |dir: &Path| {
        let out = rsbuilder(dir, &AIJOB)
            .env("RSBUILDER_FAULT_AT", commit_step.to_string())
            .output()
            .unwrap();
        assert!(!out.status.success() && dir.join(".rsbuilder/txn/journal").exists());
        tree(dir)
    };
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    for attempt in 0..60 {
        let recovering = attempt % 2 == 1;
        let (tmp, dir) = tree_dir_copy(&base);
        let start = match recovering {
            true => committed(&dir),
            false => before.clone(),
        };
        let outside = tmp.path().join("outside");
        copy_tree(&dir.join(".rsbuilder"), &outside);
        let outside_before = tree(&outside);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = swap_state_dir(dir.clone(), outside.clone(), stop.clone());
        let args: &[&str] = match recovering {
            true => &["alpha", "recover"],
            false => &AIJOB,
        };
        let mut out = rsbuilder(&dir, args).output().unwrap();
        stop.store(true, Ordering::SeqCst);
        assert!(swapper.join().unwrap() > 0);
        // `alpha recover` says what it did on stdout; judge it with the rest.
        out.stderr.extend_from_slice(&out.stdout);
        let what = format!("attempt {attempt} ({args:?})");
        let outcome = check_raced_run(&what, &dir, &out, &start, &before, &after);
        if recovering && outcome == "succeeded" {
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(said.contains("(rolled forward)"), "{what}: {said}");
        }
        *outcomes.entry(outcome).or_default() += 1;
        assert_eq!(
            diff(&outside_before, &tree(&outside)),
            Vec::<String>::new(),
            "{what}: written outside the project"
        );
    }
    eprintln!("outcomes under the race: {outcomes:?}");
    // The race is real: some runs hit the link.
    assert!(outcomes.len() > 1, "{outcomes:?}");
}

/// A committed symbolic link into `.git` never makes a command write there: `.rsbuilder ->
/// .git/hooks` (where the journal and staged files would go) is refused, and so are
/// `config/crd/bases -> ../../.git/hooks` and `config/rbac -> ../.git` for `manifests`,
/// each naming the link. The tree, `.git` included, is left as it was.
#[cfg(unix)]
#[test]
fn a_symlink_into_git_is_never_written_through() {
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    std::fs::create_dir_all(base.join(".git/hooks")).unwrap();
    let swap_dir = |dir: &Path, rel: &str, target: &str| {
        let p = dir.join(rel);
        if p.exists() {
            std::fs::remove_dir_all(&p).unwrap();
        }
        std::os::unix::fs::symlink(target, &p).unwrap();
    };
    let bar = [
        "create",
        "api",
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "Bar",
    ];
    let cases: [(&str, &str, &[&str], &str); 3] = [
        (
            ".rsbuilder",
            ".git/hooks",
            &bar,
            ".rsbuilder is not a directory (a symbolic link",
        ),
        (
            "config/crd/bases",
            "../../.git/hooks",
            &["manifests"],
            "refusing to write config/crd/bases/ai.ai.example.com_aijobs.yaml: config/crd/bases is a symbolic link to .git/hooks, inside a version-control directory",
        ),
        (
            "config/rbac",
            "../.git",
            &["manifests"],
            "config/rbac is a symbolic link to .git, inside a version-control directory",
        ),
    ];
    for (rel, target, args, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ai-operator");
        copy_tree(&base, &dir);
        swap_dir(&dir, rel, target);
        // The files a run may change, without the link: those only differ by the fresh CRD.
        let git_before = tree(&dir.join(".git"));
        let before = tree(&dir);
        let out = rsbuilder(&dir, args).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{rel}: {said}");
        assert!(said.contains(says), "{rel}: {said}");
        assert_eq!(
            tree(&dir.join(".git")),
            git_before,
            "{rel}: wrote into .git"
        );
        assert_eq!(diff(&before, &tree(&dir)), Vec::<String>::new(), "{rel}");
    }
}

/// A recovery checks the links on the way as a plan does. `create api` for a second kind is
/// killed after its journal is committed; then `src/controller` (or `config/rbac`) is moved
/// into `.git` and replaced by a link to it, or moved out of the project and linked there.
/// `alpha recover` exits 1 naming the link (and, for `.git`, where it leads), writes nothing
/// (the whole tree, `.git` and the journal included, and the outside directory are byte for
/// byte as before) and keeps the journal; once the real directory is back, `alpha recover`
/// rolls the apply forward to exactly what an uninterrupted run makes. (Before, the recovery
/// wrote `.git/ctl/foo_controller.rs` and replaced `.git/ctl/mod.rs`, and for the link out of
/// the project failed with only `a path led outside of the filesystem`.)
#[cfg(unix)]
#[test]
fn a_recovery_never_writes_through_a_link_a_plan_refuses() {
    use std::os::unix::process::ExitStatusExt as _;
    let foo = [
        "create",
        "api",
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "Foo",
    ];
    let (_tmp, base) = initialized();
    run_ok(&base, &AIJOB);
    std::fs::create_dir_all(base.join(".git/hooks")).unwrap();
    std::fs::write(base.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let after = tree_after(&base, &[&foo]);
    // The first kill point after the commit: no file of the apply is in place yet.
    let killed_after_commit = |n: usize| {
        let (tmp, dir) = tree_dir_copy(&base);
        let out = rsbuilder(&dir, &foo)
            .env("RSBUILDER_FAULT_AT", n.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(9), "step {n}: not killed");
        let committed = dir.join(".rsbuilder/txn/journal").exists();
        (tmp, dir, committed)
    };
    let n = (1..100)
        .find(|&n| killed_after_commit(n).2)
        .expect("create api commits its journal");
    let outside = tempfile::tempdir().unwrap();
    let out_ctl = outside.path().join("ctl");
    let out_ctl_text = out_ctl.to_str().unwrap();
    // (the directory moved, where to, the link's text, what the error says)
    let cases: [(&str, &str, &str, &[&str]); 3] = [
        (
            "src/controller",
            ".git/ctl",
            "../.git/ctl",
            &[
                "refusing to write src/controller/foo_controller.rs: src/controller is a symbolic link to .git/ctl, inside a version-control directory",
            ],
        ),
        (
            "config/rbac",
            ".git/rbac",
            "../.git/rbac",
            &["config/rbac is a symbolic link to .git/rbac, inside a version-control directory"],
        ),
        (
            "src/controller",
            out_ctl_text,
            out_ctl_text,
            &[
                "refusing to write src/controller/foo_controller.rs: ",
                "ai-operator/src/controller is a symbolic link that leads outside the project",
            ],
        ),
    ];
    for (rel, moved_to, link_text, says) in cases {
        let (_keep, dir, committed) = killed_after_commit(n);
        assert!(committed, "{rel}");
        let real = dir.join(rel);
        let moved = dir.join(moved_to); // `moved_to` may be absolute
        std::fs::rename(&real, &moved).unwrap();
        std::os::unix::fs::symlink(link_text, &real).unwrap();
        let before = tree(&dir);
        let git_before = tree(&dir.join(".git"));
        let outside_before = tree(outside.path());
        let out = rsbuilder(&dir, &["alpha", "recover"]).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{rel}: {said}");
        for s in says {
            assert!(said.contains(s), "{rel}: {said}");
        }
        assert!(
            said.contains("nothing was written, and the journal is kept in")
                && said.contains("Replace the link with the real directory"),
            "{rel}: {said}"
        );
        assert_eq!(
            tree(&dir.join(".git")),
            git_before,
            "{rel}: wrote into .git"
        );
        assert_eq!(tree(outside.path()), outside_before, "{rel}: wrote outside");
        assert_eq!(diff(&before, &tree(&dir)), Vec::<String>::new(), "{rel}");
        assert!(dir.join(".rsbuilder/txn/journal").is_file(), "{rel}");
        // The real directory back: the kept journal is finished.
        std::fs::remove_file(&real).unwrap();
        std::fs::rename(&moved, &real).unwrap();
        let out = run_ok(&dir, &["alpha", "recover"]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("(rolled forward)"), "{rel}: {said}");
        assert_eq!(diff(&after, &tree(&dir)), Vec::<String>::new(), "{rel}");
    }
}
