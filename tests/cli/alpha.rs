//! `rsbuilder alpha update` and `rsbuilder alpha generate` through the built binary.
//!
//! An "older version" of a project is made by hand: a tool-owned file is given another text,
//! on disk and in its records (`.rsbuilder/tool-owned.sha256`, and the copy of the text under
//! `.rsbuilder/base/` that rsbuilder versions before the embedded merge bases kept), exactly
//! as an older rsbuilder whose runtime differed would have left it, and a recorded file this
//! version does not have is added. A project of this version keeps no copy: its merge base
//! is the runtime text rsbuilder carries. The e2e test at the end builds and tests a re-generated project
//! (with CI=true or RSBUILDER_E2E=1; skipped otherwise, as it takes minutes).

use crate::common;
use common::{read, tree};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::Digest as _;

const MANIFEST: &str = ".rsbuilder/tool-owned.sha256";
const DROPPED: &str = "rsbuilder-runtime/src/legacy.rs";

fn rsbuilder(dir: &Path, args: &[&str]) -> Output {
    common::rsbuilder(dir).args(args).output().unwrap()
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = rsbuilder(dir, args);
    assert!(
        out.status.success(),
        "rsbuilder {args:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The files that are not tool-owned nor rsbuilder's records: the user's.
fn users_files(tree: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.iter()
        .filter(|(p, _)| !p.starts_with("rsbuilder-runtime/") && !p.starts_with(".rsbuilder/"))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

fn differing(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
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

/// The files under `.rsbuilder/base/`: copies of merge bases, which older rsbuilder versions
/// kept in the project and this one removes.
fn copies(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_keys()
        .filter(|p| p.starts_with(".rsbuilder/base/"))
        .collect()
}

fn sha256_hex(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project named `name` after `init`, `create api` for AIJob and its defaulting and
/// validating webhook, under a fresh temporary directory.
fn project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            &format!("example.com/{name}"),
            "--owner",
            "Example Corp",
        ],
    );
    let aijob = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];
    run_ok(&dir, &[&["create", "api"][..], &aijob].concat());
    run_ok(
        &dir,
        &[
            &["create", "webhook"][..],
            &aijob,
            &["--defaulting", "--programmatic-validation"],
        ]
        .concat(),
    );
    (tmp, dir)
}

/// The tool-owned file with the most lines (the runtime's largest source), so edits can be
/// made far apart in it.
fn largest_tool_owned(dir: &Path) -> String {
    read(dir, MANIFEST)
        .lines()
        .map(|l| l.split_once("  ").unwrap().1.to_owned())
        .max_by_key(|p| read(dir, p).lines().count())
        .unwrap()
}

/// `text` with line `at` (0-based) replaced by `line`.
fn with_line(text: &str, at: usize, line: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[at] = line;
    lines.join("\n") + "\n"
}

/// Rewrites the project as an older rsbuilder would have left it: `file` (tool-owned) had
/// another line a quarter of the way in, on disk and in its records; and the recorded file
/// [`DROPPED`], which this version does not have. Returns the line index changed.
fn as_if_older(dir: &Path, file: &str) -> usize {
    let now = read(dir, file);
    let at = now.lines().count() / 4;
    let old = with_line(&now, at, "// a line of the older version");
    write(dir, file, &old);
    write(dir, &format!(".rsbuilder/base/{file}"), &old);
    let legacy = "// Tool-owned: an older runtime's file.\npub fn legacy() {}\n";
    write(dir, DROPPED, legacy);
    write(dir, &format!(".rsbuilder/base/{DROPPED}"), legacy);
    let mut entries: BTreeMap<String, String> = read(dir, MANIFEST)
        .lines()
        .map(|l| {
            let (h, p) = l.split_once("  ").unwrap();
            (p.to_owned(), h.to_owned())
        })
        .collect();
    entries.insert(file.to_owned(), sha256_hex(&old));
    entries.insert(DROPPED.to_owned(), sha256_hex(legacy));
    let manifest: String = entries.iter().map(|(p, h)| format!("{h}  {p}\n")).collect();
    write(dir, MANIFEST, &manifest);
    at
}

#[test]
fn alpha_help_shows_examples() {
    let tmp = tempfile::tempdir().unwrap();
    for (cmd, example) in [
        ("update", "rsbuilder alpha update --dry-run"),
        ("generate", "rsbuilder alpha generate --output-dir"),
    ] {
        let out = run_ok(tmp.path(), &["alpha", cmd, "--help"]);
        assert!(out.contains("Examples:"), "{out}");
        assert!(out.contains(example), "{out}");
    }
}

#[test]
fn an_untouched_project_has_nothing_to_update() {
    let (_tmp, dir) = project("ai-operator");
    let before = tree(&dir);
    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(
        out.contains("tool-owned files are those of rsbuilder"),
        "{out}"
    );
    assert!(out.contains("nothing to do"), "{out}");
    assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());
}

#[test]
fn untouched_files_of_an_older_version_are_replaced_and_dropped_ones_removed() {
    let (_tmp, dir) = project("ai-operator");
    let fresh = tree(&dir);
    let file = largest_tool_owned(&dir);
    as_if_older(&dir, &file);
    let older = tree(&dir);

    // --dry-run lists the same work and writes nothing.
    let dry = run_ok(&dir, &["alpha", "update", "--dry-run"]);
    assert_eq!(differing(&older, &tree(&dir)), Vec::<String>::new());

    let out = run_ok(&dir, &["alpha", "update"]);
    // One line per file, sorted by path.
    let mut expected = [
        (file.clone(), format!("replace  {file}")),
        (DROPPED.to_owned(), format!("remove   {DROPPED}")),
    ];
    expected.sort();
    let expected: Vec<&str> = expected.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(out.lines().take(2).collect::<Vec<_>>(), expected, "{out}");
    assert_eq!(
        dry.lines().take(2).collect::<Vec<_>>(),
        out.lines().take(2).collect::<Vec<_>>()
    );
    // Exactly the project this version's init wrote: files and records.
    assert_eq!(differing(&fresh, &tree(&dir)), Vec::<String>::new());
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
}

const LOCK: &str = "Cargo.lock";
const PINNED: &str = ".rsbuilder/Cargo.lock.pinned";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `lock` (a Cargo.lock) with the entry of `package` at `version`, and the version it had.
fn with_version(lock: &str, package: &str, version: &str) -> (String, String) {
    let head = format!("\nname = \"{package}\"\nversion = \"");
    let at = lock
        .find(&head)
        .unwrap_or_else(|| panic!("{package} not in the lock"));
    let start = at + head.len();
    let end = start + lock[start..].find('"').unwrap();
    let was = lock[start..end].to_owned();
    (format!("{}{version}{}", &lock[..start], &lock[end..]), was)
}

/// `version` with its patch number moved by `by` (an older or newer release in the same
/// semver-compatible range).
fn patch(version: &str, by: i64) -> String {
    let mut v = semver::Version::parse(version).unwrap();
    v.build = semver::BuildMetadata::EMPTY;
    v.patch = (v.patch as i64 + by).max(0) as u64;
    assert_ne!(
        v.to_string(),
        version,
        "no other patch release of {version}"
    );
    v.to_string()
}

/// An older rsbuilder pinned rustls and tokio one patch release lower (its lock and its
/// record); the user then ran `cargo update -p tokio`, to a release this version does not
/// pin either. `alpha update` moves rustls, keeps the user's tokio and says so.
#[test]
fn the_lock_takes_new_pins_where_the_user_kept_the_old_ones() {
    let (_tmp, dir) = project("ai-operator");
    let fresh = read(&dir, LOCK);
    assert_eq!(read(&dir, PINNED), fresh);
    let (_, rustls) = with_version(&fresh, "rustls", "");
    let (_, tokio) = with_version(&fresh, "tokio", "");
    let (old_rustls, old_tokio, users_tokio) =
        (patch(&rustls, -1), patch(&tokio, -1), patch(&tokio, 1));
    let (older, _) = with_version(&fresh, "rustls", &old_rustls);
    let (older, _) = with_version(&older, "tokio", &old_tokio);
    write(&dir, PINNED, &older);
    let (users, _) = with_version(&older, "tokio", &users_tokio);
    write(&dir, LOCK, &users);
    let before = tree(&dir);

    let expected = format!(
        "lock     Cargo.lock: moved 1 package to the versions rsbuilder {VERSION} pins (what its tests built the runtime with)
           rustls {old_rustls} -> {rustls}
lock     Cargo.lock: tokio {users_tokio}: yours, kept (rsbuilder {VERSION} pins {tokio}; `cargo update -p tokio` is yours to run)

The tool-owned files now match rsbuilder {VERSION}. Next: cargo build && cargo test
"
    );
    // --dry-run says the same and writes nothing.
    let dry = run_ok(&dir, &["alpha", "update", "--dry-run"]);
    assert_eq!(
        dry,
        expected
            .replace("moved 1", "would move 1")
            .replace("files now", "files would now")
    );
    assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());

    let out = run_ok(&dir, &["alpha", "update"]);
    assert_eq!(out, expected);
    // This version's lock but for the user's tokio; the record is this version's pins.
    assert_eq!(
        read(&dir, LOCK),
        with_version(&fresh, "tokio", &users_tokio).0
    );
    assert_eq!(read(&dir, PINNED), fresh);
    assert_eq!(differing(&before, &tree(&dir)), [PINNED, LOCK]);
    // Done: the next update has nothing to do, and the user's tokio stays.
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
    assert_eq!(
        read(&dir, LOCK),
        with_version(&fresh, "tokio", &users_tokio).0
    );
}

/// A project made before rsbuilder recorded its pins: nothing tells an old pin from the
/// user's choice, so every version in the lock stays, and the output says why.
#[test]
fn a_lock_without_a_record_is_kept_as_the_users() {
    let (_tmp, dir) = project("ai-operator");
    let fresh = read(&dir, LOCK);
    let (_, rustls) = with_version(&fresh, "rustls", "");
    let old = patch(&rustls, -1);
    let (users, _) = with_version(&fresh, "rustls", &old);
    write(&dir, LOCK, &users);
    std::fs::remove_file(dir.join(PINNED)).unwrap();

    let out = run_ok(&dir, &["alpha", "update"]);
    assert_eq!(
        out.lines().take(2).collect::<Vec<_>>(),
        [
            format!(
                "lock     Cargo.lock: no record of the versions rsbuilder wrote before ({PINNED}; the project predates it), so every version in it is kept as yours; the pins of rsbuilder {VERSION} are recorded from now on"
            ),
            format!(
                "lock     Cargo.lock: rustls {old}: yours, kept (rsbuilder {VERSION} pins {rustls}; `cargo update -p rustls` is yours to run)"
            ),
        ],
        "{out}"
    );
    assert_eq!(read(&dir, LOCK), users);
    assert_eq!(read(&dir, PINNED), fresh);
}

#[test]
fn a_project_without_a_lock_gets_this_versions() {
    let (_tmp, dir) = project("ai-operator");
    let fresh = read(&dir, LOCK);
    std::fs::remove_file(dir.join(LOCK)).unwrap();
    std::fs::remove_file(dir.join(PINNED)).unwrap();
    let out = run_ok(&dir, &["alpha", "update"]);
    assert_eq!(
        out.lines().next(),
        Some(
            format!(
                "create   Cargo.lock (the versions rsbuilder {VERSION} pins; the project had none)"
            )
            .as_str()
        ),
        "{out}"
    );
    assert_eq!(read(&dir, LOCK), fresh);
    assert_eq!(read(&dir, PINNED), fresh);
}

/// A lock cargo would not read either: `alpha update` names the file and the line, and
/// writes nothing, not even the tool-owned files it would have replaced.
#[test]
fn a_broken_lock_stops_the_update_before_anything_is_written() {
    let (_tmp, dir) = project("ai-operator");
    let file = largest_tool_owned(&dir);
    as_if_older(&dir, &file);
    let fresh = read(&dir, LOCK);
    let (older, _) = with_version(&fresh, "rustls", "0.23.0");
    write(&dir, PINNED, &older);
    let (broken, _) = with_version(&fresh, "tokio", "one");
    write(&dir, LOCK, &broken);
    let line = broken[..broken.find("name = \"tokio\"").unwrap()]
        .lines()
        .count();
    let before = tree(&dir);

    let out = rsbuilder(&dir, &["alpha", "update"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Cargo.lock: line {line}: the [[package]] entry of tokio: version \"one\": "
        )),
        "{stderr}"
    );
    assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());
}

#[test]
fn a_users_edit_that_does_not_overlap_is_merged() {
    let (_tmp, dir) = project("ai-operator");
    let file = largest_tool_owned(&dir);
    let new = read(&dir, &file);
    let lines = new.lines().count();
    as_if_older(&dir, &file);
    let ours = with_line(&read(&dir, &file), lines * 3 / 4, "// my own line");
    write(&dir, &file, &ours);
    let users_before = users_files(&tree(&dir));

    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(out.contains(&format!("merge    {file}")), "{out}");
    let merged = with_line(&new, lines * 3 / 4, "// my own line");
    assert_eq!(read(&dir, &file), merged);
    // The record is this version's text: the user's line stays a change against it.
    // No copy of the base stays in the project: rsbuilder carries this version's text.
    assert_eq!(copies(&dir), Vec::<String>::new());
    assert!(
        read(&dir, MANIFEST).contains(&format!("{}  {file}\n", sha256_hex(&new))),
        "{}",
        read(&dir, MANIFEST)
    );
    assert_eq!(
        differing(&users_before, &users_files(&tree(&dir))),
        Vec::<String>::new()
    );
    // A second update keeps the user's line and has nothing to do.
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
    assert_eq!(read(&dir, &file), merged);
}

#[test]
fn overlapping_edits_are_left_with_markers_listed_and_exit_1() {
    let (_tmp, dir) = project("ai-operator");
    let file = largest_tool_owned(&dir);
    let new = read(&dir, &file);
    let at = as_if_older(&dir, &file);
    let original_line = new.lines().nth(at).unwrap().to_owned();
    let ours = with_line(&read(&dir, &file), at, "// my edit of the same line");
    write(&dir, &file, &ours);
    let users_before = users_files(&tree(&dir));

    // --dry-run: the same verdict, nothing written.
    let unmerged = tree(&dir);
    let dry = rsbuilder(&dir, &["alpha", "update", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&dry.stdout).contains(&format!("conflict {file}")));
    assert_eq!(differing(&unmerged, &tree(&dir)), Vec::<String>::new());

    let out = rsbuilder(&dir, &["alpha", "update"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("conflict {file}")), "{stdout}");
    assert!(
        stderr.contains(&format!("  {file}: your change and this version's overlap")),
        "{stderr}"
    );
    let marked = read(&dir, &file);
    let block = format!(
        "<<<<<<< ours\n// my edit of the same line\n||||||| original\n// a line of the older version\n=======\n{original_line}\n>>>>>>> theirs\n"
    );
    assert!(marked.contains(&block), "{marked}");
    // The rest of the file is this version's.
    assert_eq!(marked.replace(&block, &format!("{original_line}\n")), new);
    // No copy of the base stays in the project: rsbuilder carries this version's text.
    assert_eq!(copies(&dir), Vec::<String>::new());
    assert_eq!(
        differing(&users_before, &users_files(&tree(&dir))),
        Vec::<String>::new()
    );

    // Unresolved, a second update leaves the file alone and fails again.
    let again = rsbuilder(&dir, &["alpha", "update"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("still holds the conflict markers"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(read(&dir, &file), marked);

    // Resolved by keeping the user's line: nothing more to do.
    write(
        &dir,
        &file,
        &with_line(&new, at, "// my edit of the same line"),
    );
    let done = run_ok(&dir, &["alpha", "update"]);
    assert!(done.contains("nothing to do"), "{done}");
}

#[test]
fn a_dropped_file_the_user_changed_is_kept_as_theirs() {
    let (_tmp, dir) = project("ai-operator");
    let file = largest_tool_owned(&dir);
    as_if_older(&dir, &file);
    write(&dir, DROPPED, "pub fn legacy() { /* mine */ }\n");
    let out = rsbuilder(&dir, &["alpha", "update"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rsbuilder no longer has this file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&dir, DROPPED), "pub fn legacy() { /* mine */ }\n");
    assert!(!read(&dir, MANIFEST).contains(DROPPED));
    assert_eq!(copies(&dir), Vec::<String>::new());
    // No longer rsbuilder's: the next update leaves it alone.
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
}

/// The merge base of a project of this version is the runtime text rsbuilder carries: a
/// user's edit of a tool-owned file is kept as a change against it, with no copy of the text
/// in the project (without a base, every difference would be a conflict).
#[test]
fn a_users_edit_merges_against_the_runtime_rsbuilder_carries() {
    let (_tmp, dir) = project("ai-operator");
    assert_eq!(copies(&dir), Vec::<String>::new());
    let file = largest_tool_owned(&dir);
    let new = read(&dir, &file);
    let ours = with_line(&new, new.lines().count() / 2, "// my own line");
    write(&dir, &file, &ours);
    let out = run_ok(&dir, &["alpha", "update"]);
    // The edit is named, not passed over: the runtime matches this version apart from it.
    assert!(
        out.contains(&format!(
            "keep     {file} (your change; rsbuilder {VERSION} changes nothing there)\n"
        )),
        "{out}"
    );
    assert!(
        out.contains("apart from your changes in 1 file, kept; nothing to do."),
        "{out}"
    );
    assert_eq!(read(&dir, &file), ours);
    assert_eq!(copies(&dir), Vec::<String>::new());
}

/// A project whose runtime is a version rsbuilder carries no text of (a later one, or a
/// build that was never released) is refused, naming the version, with nothing written.
#[test]
fn a_version_rsbuilder_carries_no_runtime_of_is_refused_naming_it() {
    let (_tmp, dir) = project("ai-operator");
    write(&dir, ".rsbuilder/runtime-version", "9.9.9\n");
    let file = largest_tool_owned(&dir);
    let now = read(&dir, &file);
    write(&dir, &file, &with_line(&now, 3, "// mine"));
    let before = tree(&dir);
    for args in [&["alpha", "update"][..], &["alpha", "update", "--dry-run"]] {
        let out = rsbuilder(&dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "this project's tool-owned files are rsbuilder 9.9.9's, and this rsbuilder ({VERSION}) carries no copy of rsbuilder 9.9.9's runtime"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("nothing was written"), "{stderr}");
        assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());
    }
}

/// A project an older rsbuilder made keeps a copy of each merge base under `.rsbuilder/base/`:
/// `alpha update` merges against the copy, then removes every copy, and records this version.
#[test]
fn the_copies_an_older_rsbuilder_kept_are_used_then_removed() {
    let (_tmp, dir) = project("ai-operator");
    let file = largest_tool_owned(&dir);
    let new = read(&dir, &file);
    let lines = new.lines().count();
    as_if_older(&dir, &file);
    // Older projects had no version record, and a copy of every base.
    std::fs::remove_file(dir.join(".rsbuilder/runtime-version")).unwrap();
    for path in read(&dir, MANIFEST)
        .lines()
        .map(|l| l.split_once("  ").unwrap().1.to_owned())
    {
        if !dir.join(".rsbuilder/base").join(&path).exists() {
            write(&dir, &format!(".rsbuilder/base/{path}"), &read(&dir, &path));
        }
    }
    let kept = copies(&dir).len();
    assert!(kept > 10, "{:?}", copies(&dir));
    let ours = with_line(&read(&dir, &file), lines * 3 / 4, "// my own line");
    write(&dir, &file, &ours);
    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(out.contains(&format!("merge    {file}")), "{out}");
    assert!(
        out.contains(&format!(
            "remove   .rsbuilder/base/ ({kept} files an older rsbuilder kept"
        )),
        "{out}"
    );
    assert_eq!(
        read(&dir, &file),
        with_line(&new, lines * 3 / 4, "// my own line")
    );
    assert_eq!(copies(&dir), Vec::<String>::new());
    assert_eq!(
        read(&dir, ".rsbuilder/runtime-version"),
        format!("{VERSION}\n")
    );
    let again = run_ok(&dir, &["alpha", "update"]);
    assert!(again.contains("nothing to do"), "{again}");
}

/// `.rsbuilder/` holds records, never a copy of a source: after `init`, `create api`,
/// `create webhook`, `create apiserver` and `alpha update`.
#[test]
fn the_records_hold_no_copy_of_a_source() {
    let (_tmp, dir) = project("ai-operator");
    let records = |dir: &Path| -> Vec<String> {
        tree(dir)
            .into_keys()
            .filter(|p| p.starts_with(".rsbuilder/"))
            .collect()
    };
    let expected = [
        ".rsbuilder/Cargo.lock.pinned",
        ".rsbuilder/runtime-version",
        ".rsbuilder/tool-owned.sha256",
    ];
    assert_eq!(records(&dir), expected);
    run_ok(
        &dir,
        &[
            "create",
            "apiserver",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Database",
        ],
    );
    assert_eq!(records(&dir), expected);
    let file = largest_tool_owned(&dir);
    as_if_older(&dir, &file);
    run_ok(&dir, &["alpha", "update"]);
    assert_eq!(records(&dir), expected);
}

#[test]
fn alpha_commands_refuse_a_directory_without_project() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["alpha", "update"][..], &["alpha", "generate"][..]] {
        let out = rsbuilder(tmp.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no PROJECT file in"), "{stderr}");
    }
    assert_eq!(tree(tmp.path()), BTreeMap::new());
}

#[test]
fn alpha_generate_refuses_a_go_kubebuilder_project() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "PROJECT",
        "domain: my.domain\nlayout:\n- go.kubebuilder.io/v4\nprojectName: guestbook\nrepo: my.domain/guestbook\nversion: \"3\"\n",
    );
    let before = tree(tmp.path());
    let out = rsbuilder(tmp.path(), &["alpha", "generate", "--output-dir", "out"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("belongs to a Kubebuilder project written in Go"),
        "{stderr}"
    );
    assert_eq!(tree(tmp.path()), before);
}

/// A project of the multigroup layout (switched to it after its first kind) with kinds of
/// several groups (one cluster-scoped with its own plural), webhooks, a controller for a
/// built-in type, generated manifests, and the user's own code and files.
fn rich_project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project(name);
    // Kinds of several groups: the multigroup layout, the single-group project moved over.
    run_ok(&dir, &["edit", "--multigroup=true"]);
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ml",
            "--version",
            "v1alpha1",
            "--kind",
            "Inference",
            "--namespaced=false",
            "--plural",
            "inferencez",
        ],
    );
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
        ],
    );
    // A kind of the deploy-image shape (`--image`): PROJECT's plugin entry brings it back.
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6",
            "--image-container-port",
            "11211",
        ],
    );
    // A further, named controller of AIJob, with the user's edit.
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--resource=false",
            "--controller-name",
            "aijob-backup",
        ],
    );
    let backup = "src/controller/ai/aijob_backup_controller.rs";
    let text = read(&dir, backup);
    write(&dir, backup, &format!("{text}\n// The backup note.\n"));
    // A kind served by the project's aggregated API server, with the user's field.
    run_ok(
        &dir,
        &[
            "create",
            "apiserver",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Database",
        ],
    );
    let served = "src/apiserver/v1/database_types.rs";
    let text = read(&dir, served).replacen(
        "pub struct DatabaseSpec {",
        "pub struct DatabaseSpec {\n    /// The user's field.\n    pub engine: Option<String>,",
        1,
    );
    assert!(text.contains("pub engine"), "{text}");
    write(&dir, served, &text);
    run_ok(&dir, &["manifests"]);
    let controller = "src/controller/ai/aijob_controller.rs";
    let text = read(&dir, controller);
    write(&dir, controller, &format!("{text}\n// The user's note.\n"));
    let types = "src/api/ai/v1/aijob_types.rs";
    let text = read(&dir, types).replacen(
        "pub struct AIJobSpec {",
        "pub struct AIJobSpec {\n    /// The user's field.\n    pub model: Option<String>,",
        1,
    );
    write(&dir, types, &text);
    write(&dir, "docs/notes.md", "# Our notes\n");
    (tmp, dir)
}

#[test]
fn alpha_generate_into_an_output_dir_reproduces_the_project() {
    let (tmp, dir) = rich_project("ai-operator");
    // The user's `cargo update -p tokio`: the lock is carried over with the record of the pins.
    let (_, tokio) = with_version(&read(&dir, LOCK), "tokio", "");
    let (users, _) = with_version(&read(&dir, LOCK), "tokio", &patch(&tokio, 1));
    write(&dir, LOCK, &users);
    let before = tree(&dir);
    let out_dir = tmp.path().join("regenerated");
    let out = run_ok(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    assert!(out.contains("0 added, 0 changed, 0 removed"), "{out}");
    // Every file, generated or carried over, and the records, as in the original project;
    // and the record of the scaffold, each file as this version writes it.
    let regenerated = tree(&out_dir);
    assert_eq!(
        differing(&before, &without_scaffold_record(&regenerated)),
        Vec::<String>::new()
    );
    assert_eq!(
        regenerated[".rsbuilder/scaffold/src/main.rs"],
        before["src/main.rs"]
    );
    assert!(!regenerated.contains_key(".rsbuilder/scaffold/src/api/ai/v1/aijob_types.rs"));
    assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());

    // Not empty any more: refused without --force, and nothing is written.
    std::fs::remove_file(out_dir.join("Makefile")).unwrap();
    let written = tree(&out_dir);
    let again = rsbuilder(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(again.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("is not empty"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(tree(&out_dir), written);
    run_ok(
        &dir,
        &[
            "alpha",
            "generate",
            "--force",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(
        differing(&before, &without_scaffold_record(&tree(&out_dir))),
        Vec::<String>::new()
    );
}

/// A relative `--output-dir` inside the project: the new project holds the old one's files
/// but not itself; a file that is not UTF-8 text is named, not copied.
#[test]
fn alpha_generate_into_a_directory_inside_the_project() {
    let (_tmp, dir) = project("ai-operator");
    std::fs::write(dir.join("logo.bin"), [0xff, 0xfe, 0x00]).unwrap();
    write(&dir, "scripts/release.sh", "#!/bin/sh\necho release\n");
    let mut before = tree(&dir);
    let out = rsbuilder(
        &dir.join("src"),
        &["alpha", "generate", "--output-dir", "../regen"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("note: logo.bin is not UTF-8 text: not carried over"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let regen = without_scaffold_record(&tree(&dir.join("regen")));
    before.remove("logo.bin");
    assert_eq!(differing(&before, &regen), Vec::<String>::new());
    // Again, over it: the new project is still not copied into itself.
    run_ok(
        &dir.join("src"),
        &["alpha", "generate", "--force", "--output-dir", "../regen"],
    );
    assert_eq!(
        differing(&before, &without_scaffold_record(&tree(&dir.join("regen")))),
        Vec::<String>::new()
    );
}

#[test]
fn alpha_generate_in_place_renews_the_scaffold_and_keeps_the_users_code() {
    let (_tmp, dir) = rich_project("ai-operator");
    let before = tree(&dir);
    // A change to a scaffolded file, a missing one, and a tool-owned file the user changed.
    write(&dir, "Makefile", "all:\n\techo mine\n");
    std::fs::remove_file(dir.join("Dockerfile")).unwrap();
    // A tool-owned file of an older version, which the user changed too, and one this
    // version dropped.
    let file = largest_tool_owned(&dir);
    as_if_older(&dir, &file);
    write(&dir, &file, &format!("{}// mine\n", read(&dir, &file)));
    let out = run_ok(&dir, &["alpha", "generate"]);
    let listed: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    let mut expected = [
        "add     Dockerfile".to_owned(),
        "keep    Makefile".to_owned(),
        format!("merge   {file}"),
        format!("remove  {DROPPED}"),
    ];
    expected.sort_by_key(|l| l[8..].to_owned());
    assert_eq!(listed, expected, "{out}");
    // The scaffold is this version's again, but for the user's edits: the Makefile (this
    // version brings nothing new to it) and the tool-owned file (merged with this version's);
    // the user's types, controller, notes and manifests are as they were.
    let after = without_scaffold_record(&tree(&dir));
    assert_eq!(
        differing(&before, &after),
        ["Makefile".to_owned(), file.clone()]
    );
    assert_eq!(read(&dir, "Makefile"), "all:\n\techo mine\n");
    assert_eq!(
        after[&file],
        [&before[&file][..], b"// mine\n"].concat(),
        "{file}"
    );
}

/// `tree` without the record `alpha generate` keeps of the scaffold it wrote
/// (`.rsbuilder/scaffold/`), which `init` and `create` do not write.
fn without_scaffold_record(tree: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.iter()
        .filter(|(p, _)| !p.starts_with(".rsbuilder/scaffold/"))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

/// The re-generated project of [`rich_project`] builds and passes its own tests. Runs with
/// CI=true or RSBUILDER_E2E=1 (minutes of compiling); RSBUILDER_SKIP_E2E=1 skips it. Builds in
/// the shared `RSBUILDER_E2E_TARGET_DIR` under a package name no other test uses.
#[test]
fn a_generated_project_builds_and_passes_its_tests() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let (tmp, dir) = rich_project("regen-operator");
    let out_dir = tmp.path().join("regen-operator-new");
    run_ok(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    for args in [&["build"][..], &["test"][..]] {
        common::e2e::cargo_ok(&out_dir, args);
    }
}

/// What `alpha generate` re-runs for a PROJECT entry (each options type's
/// `from_project_resource`) is what the command was asked for: the options of `create api`,
/// `create webhook` and `create apiserver` come back from the entries they recorded.
#[test]
fn options_from_project_entries_are_the_options_that_made_them() {
    use rsbuilder::scaffold::{api, apiserver, webhook};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("round-trip");
    std::fs::create_dir(&dir).unwrap();
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/round-trip",
        ],
    );
    let crd = api::ApiOptions {
        group: "ai".into(),
        version: "v1".into(),
        kind: "Person".into(),
        resource: true,
        controller: true,
        namespaced: false,
        plural: Some("people".into()),
        force: false,
        controller_name: None,
        image: None,
    };
    api::run(&dir, &crd).unwrap();
    let v2 = api::ApiOptions {
        version: "v2".into(),
        controller: false,
        ..crd.clone()
    };
    api::run(&dir, &v2).unwrap();
    let builtin = api::ApiOptions {
        group: "apps".into(),
        version: "v1".into(),
        kind: "Deployment".into(),
        resource: false,
        controller: true,
        namespaced: true,
        plural: None,
        force: false,
        controller_name: None,
        image: None,
    };
    api::run(&dir, &builtin).unwrap();
    let hooks = webhook::WebhookOptions {
        group: "ai".into(),
        version: "v1".into(),
        kind: "Person".into(),
        defaulting: true,
        validation: true,
        conversion: true,
        spoke: vec!["v2".into()],
        defaulting_path: Some("/default-person".into()),
        validation_path: None,
        force: false,
    };
    webhook::run(&dir, &hooks).unwrap();
    let served = apiserver::ApiServerOptions {
        group: "db".into(),
        version: "v1".into(),
        kind: "Database".into(),
        namespaced: false,
        plural: None,
        force: false,
    };
    apiserver::run(&dir, &served).unwrap();

    let project = rsbuilder::model::Project::load(&dir).unwrap();
    let entry = |group: &str, version: &str, kind: &str| {
        project
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .unwrap_or_else(|| panic!("{group}/{version} {kind} in PROJECT"))
    };
    let person = entry("ai", "v1", "Person");
    assert_eq!(api::ApiOptions::from_project_resource(person), crd);
    assert_eq!(
        api::ApiOptions::from_project_resource(entry("ai", "v2", "Person")),
        v2
    );
    let deployment = entry("apps", "v1", "Deployment");
    assert_eq!(api::ApiOptions::from_project_resource(deployment), builtin);
    assert_eq!(
        webhook::WebhookOptions::from_project_resource(person),
        Some(hooks)
    );
    assert_eq!(
        webhook::WebhookOptions::from_project_resource(deployment),
        None
    );
    let database = entry("db", "v1", "Database");
    assert_eq!(
        apiserver::ApiServerOptions::from_project_resource(database),
        served
    );
}

const APISERVER_BIN: &str = "src/bin/apiserver.rs";
const ROUTER: &str = "rsbuilder_runtime::axum::Router::new()";
const CUSTOM_ROUTE: &str = "rsbuilder_runtime::axum::Router::new().route(\"/custom\", rsbuilder_runtime::axum::routing::get(|| async { \"custom\" }))";
const TRACING_START: &str = "    manager::init_tracing(args.log_format);\n";
const USERS_START: &str =
    "    manager::init_tracing(args.log_format);\n    tracing::info!(\"our operator starts\");\n";
const DEV_DEPS: &str = "# +kubebuilder:scaffold:dev-dependencies\n";
const USERS_DEV_DEPS: &str = "proptest = \"1\"\ninsta = { version = \"1\", features = [\"yaml\"] }\n# +kubebuilder:scaffold:dev-dependencies\n";

/// [`project`] with a kind served by the aggregated API server (`create apiserver`).
fn served_project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project(name);
    run_ok(
        &dir,
        &[
            "create",
            "apiserver",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Database",
        ],
    );
    (tmp, dir)
}

/// A new user's edits: two dev-dependencies in Cargo.toml, a `/custom` route in
/// src/bin/apiserver.rs, a line in src/main.rs.
fn users_edits(dir: &Path) {
    let edit = |file: &str, from: &str, to: &str| {
        let text = read(dir, file);
        assert!(text.contains(from), "{file}: {text}");
        write(dir, file, &text.replacen(from, to, 1));
    };
    edit("Cargo.toml", DEV_DEPS, USERS_DEV_DEPS);
    edit(APISERVER_BIN, ROUTER, CUSTOM_ROUTE);
    edit("src/main.rs", TRACING_START, USERS_START);
}

/// Rewrites the project as an older rsbuilder's `alpha generate` would have left it: PROJECT's
/// `cliVersion` is 0.0.1, and `file` had `older` where this version writes `now`, on disk and
/// in the record under `.rsbuilder/scaffold/`.
fn as_if_generated_by_older(dir: &Path, file: &str, now: &str, older: &str) {
    let text = read(dir, file);
    assert!(text.contains(now), "{file}: {text}");
    let old = text.replacen(now, older, 1);
    write(dir, file, &old);
    write(dir, &format!(".rsbuilder/scaffold/{file}"), &old);
    let project: String = read(dir, "PROJECT")
        .lines()
        .map(|l| {
            if l.starts_with("cliVersion:") {
                "cliVersion: 0.0.1\n".to_owned()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    write(dir, "PROJECT", &project);
}

/// The lines this version writes that the "older version" of the tests had otherwise.
const NOW: [(&str, &str, &str); 3] = [
    (
        "Cargo.toml",
        "tracing = \"0.1\"\n",
        "tracing = \"0.1.30\"\n",
    ),
    (
        APISERVER_BIN,
        "// `kinds` is filled one push per kind, each added above the marker by rsbuilder.\n",
        "// The kinds.\n",
    ),
    (
        "src/main.rs",
        "    // Certificates are loaded before connecting, so that a bad path is reported at once.\n",
        "    // Certificates first.\n",
    ),
];

/// A new user's edits survive `alpha generate` in place: with the same rsbuilder, every file
/// they changed stays as it is (listed `keep`), and the scaffold is otherwise unchanged.
/// Failed before the three-way merge: the dev-dependencies, the route and the line in main.rs
/// were replaced by the scaffold's text (listed as `change`).
#[test]
fn alpha_generate_in_place_keeps_a_new_users_edits() {
    let (_tmp, dir) = served_project("ai-operator");
    users_edits(&dir);
    let before = tree(&dir);
    let out = run_ok(&dir, &["alpha", "generate"]);
    assert!(read(&dir, "Cargo.toml").contains(USERS_DEV_DEPS));
    assert!(read(&dir, APISERVER_BIN).contains(CUSTOM_ROUTE));
    assert!(read(&dir, "src/main.rs").contains(USERS_START));
    assert_eq!(
        differing(&users_files(&before), &users_files(&tree(&dir))),
        Vec::<String>::new()
    );
    let listed: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        listed,
        [
            "keep    Cargo.toml",
            "keep    src/bin/apiserver.rs",
            "keep    src/main.rs"
        ],
        "{out}"
    );
    assert!(out.contains("3 kept with your edits"), "{out}");
    // The record of this version's scaffold, the base of the next merge.
    let recorded = read(&dir, ".rsbuilder/scaffold/Cargo.toml");
    assert!(recorded.contains(DEV_DEPS) && !recorded.contains("proptest"));
}

/// The user's edits and an older version's scaffold: each file merges three ways against the
/// record the older `alpha generate` left; Cargo.toml key by key. Failed before: the user's
/// lines were replaced by this version's text.
#[test]
fn alpha_generate_in_place_merges_the_users_edits_with_this_versions_changes() {
    let (_tmp, dir) = served_project("ai-operator");
    let now: BTreeMap<&str, String> = NOW.iter().map(|(f, _, _)| (*f, read(&dir, f))).collect();
    for (file, this, older) in NOW {
        as_if_generated_by_older(&dir, file, this, older);
    }
    users_edits(&dir);
    let out = run_ok(&dir, &["alpha", "generate"]);
    // This version's text with the user's edits: nothing else.
    assert_eq!(
        read(&dir, "Cargo.toml"),
        now["Cargo.toml"].replacen(DEV_DEPS, USERS_DEV_DEPS, 1)
    );
    assert_eq!(
        read(&dir, APISERVER_BIN),
        now[APISERVER_BIN].replacen(ROUTER, CUSTOM_ROUTE, 1)
    );
    assert_eq!(
        read(&dir, "src/main.rs"),
        now["src/main.rs"].replacen(TRACING_START, USERS_START, 1)
    );
    let listed: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        listed,
        [
            "merge   Cargo.toml",
            "change  PROJECT",
            "merge   src/bin/apiserver.rs",
            "merge   src/main.rs"
        ],
        "{out}"
    );
    for (file, _, _) in NOW {
        assert_eq!(
            read(&dir, &format!(".rsbuilder/scaffold/{file}")),
            now[file]
        );
    }
    assert!(
        read(&dir, "PROJECT").contains(&format!("cliVersion: \"{}\"\n", env!("CARGO_PKG_VERSION")))
    );
}

/// Where the user's edit and this version's change meet, `alpha generate` in place refuses:
/// exit 1, the files listed with why, how to go on, and nothing written. `--force` then writes
/// them with conflict blocks (exit 1). Failed before: exit 0 and the user's lines replaced.
#[test]
fn alpha_generate_in_place_refuses_a_conflicting_edit_and_writes_nothing() {
    let (_tmp, dir) = served_project("ai-operator");
    for (file, this, older) in NOW {
        as_if_generated_by_older(&dir, file, this, older);
    }
    users_edits(&dir);
    let edit = |file: &str, from: &str, to: &str| {
        let text = read(&dir, file);
        write(&dir, file, &text.replacen(from, to, 1));
    };
    // The very lines this version changes, changed otherwise by the user.
    edit("Cargo.toml", "tracing = \"0.1.30\"", "tracing = \"0.1.41\"");
    edit(
        "src/main.rs",
        "    // Certificates first.\n",
        "    // Our certificates.\n",
    );
    // A file of the older version without a record: the user's lines cannot be told apart.
    write(&dir, "Makefile", "all:\n\techo mine\n");
    let before = tree(&dir);
    let out = rsbuilder(&dir, &["alpha", "generate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[..4],
        [
            &format!(
                "error: 3 files you changed cannot merge with what rsbuilder {} scaffolds; nothing was written:",
                env!("CARGO_PKG_VERSION")
            ),
            "  Cargo.toml: you and this version changed `dependencies.tracing` differently",
            "  Makefile: no record of what rsbuilder wrote into it before, so your changes and this version's cannot be told apart",
            "  src/main.rs: your lines and this version's overlap",
        ],
        "{stderr}"
    );
    assert!(stderr.contains("--output-dir"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(differing(&before, &tree(&dir)), Vec::<String>::new());

    // With --force: written with conflict blocks, the clean merge done, exit 1.
    let out = rsbuilder(&dir, &["alpha", "generate", "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("3 files left with conflict blocks"),
        "{stderr}"
    );
    let main = read(&dir, "src/main.rs");
    assert!(
        main.contains(
            "<<<<<<< ours\n    // Our certificates.\n||||||| original\n    // Certificates first.\n=======\n    // Certificates are loaded before connecting"
        ),
        "{main}"
    );
    assert!(main.contains(USERS_START), "{main}");
    let cargo = read(&dir, "Cargo.toml");
    assert!(
        cargo.contains("<<<<<<< ours\ntracing = \"0.1.41\"\n"),
        "{cargo}"
    );
    assert!(read(&dir, APISERVER_BIN).contains(CUSTOM_ROUTE));
    let makefile = read(&dir, "Makefile");
    assert!(
        makefile.contains("<<<<<<< ours\nall:\n\techo mine\n"),
        "{makefile}"
    );
}
