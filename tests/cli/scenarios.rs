//! "User code is never lost": a scripted session through the built binary that edits the
//! generated types file, controller, `src/main.rs`, `src/lib.rs` and PROJECT by hand and then
//! runs every command again, plus file-system faults (read-only directory, a file where a
//! directory should be, symlinks leading out of the project, a write failing midway, a full
//! disk). Each fault must end with exit code 1, an error naming the path, the tree exactly as
//! it was and nothing written outside the project.
//!
//! Case D of `shared/cases/README.md`: its scaffolding rows are tested next to the command they
//! belong to (`tests/cli/create_api.rs` `case_d_*`, `tests/cli/init.rs`
//! `init_refuses_an_existing_cargo_project` / `second_init_refuses_and_changes_nothing`); its
//! manifests rows in `tests/manifests/cli.rs` and `tests/cli/markers_cli.rs`. docs/safety.md maps
//! each row to its test.

use crate::common;
use common::{rsbuilder, tree};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

/// 2026-06-01T00:00:00Z: fixes the copyright year in license headers.
const EPOCH_2026: &str = "1780272000";
const AIJOB: [&str; 6] = ["--group", "ai", "--version", "v1", "--kind", "AIJob"];
const MODEL: [&str; 6] = ["--group", "ai", "--version", "v1", "--kind", "Model"];

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rsbuilder")
}

/// Every directory under `dir`, relative, so that a failed command leaving an empty directory
/// behind is caught too.
fn dirs(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect()
}

/// Paths added, removed or modified between two trees, sorted.
fn changed(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut out: Vec<String> = after
        .iter()
        .filter(|(p, b)| before.get(*p) != Some(*b))
        .map(|(p, _)| p.clone())
        .chain(before.keys().filter(|p| !after.contains_key(*p)).cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `rsbuilder init` for `ai-operator` (domain `ai.example.com`) in a fresh temp dir.
fn init_ai_operator() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    init_in(&dir);
    (tmp, dir)
}

fn init_in(dir: &Path) {
    rsbuilder(dir)
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ])
        .assert()
        .success();
}

/// Runs `rsbuilder <args>` in `dir` and asserts success.
fn run_ok(dir: &Path, args: &[&str]) {
    rsbuilder(dir).args(args).assert().success();
}

fn create(dir: &Path, what: &str, kind: &[&str], extra: &[&str]) {
    let mut args = vec!["create", what];
    args.extend_from_slice(kind);
    args.extend_from_slice(extra);
    run_ok(dir, &args);
}

/// Appends `line` to the file `rel` under `dir`.
fn append(dir: &Path, rel: &str, line: &str) {
    let path = dir.join(rel);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(line);
    text.push('\n');
    std::fs::write(&path, text).unwrap();
}

/// Asserts every line of `edited` is still in `rel`, in the same order (new code may have
/// been inserted between them, nothing removed).
fn assert_lines_kept(dir: &Path, rel: &str, edited: &str) {
    let now = std::fs::read_to_string(dir.join(rel)).unwrap();
    let mut rest = now.as_str();
    for line in edited.lines() {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("{rel}: lost or reordered line {line:?}\n{now}"));
        rest = &rest[at + line.len()..];
    }
}

/// Hand edits of the scenario: a recognisable line appended to each file.
const TYPES: &str = "src/api/v1/aijob_types.rs";
const CONTROLLER: &str = "src/controller/aijob_controller.rs";
const WEBHOOK: &str = "src/webhook/v1/aijob_webhook.rs";

fn edit_everything(dir: &Path) {
    append(dir, TYPES, "// user: a note in the types file");
    append(dir, CONTROLLER, "// user: a note in the controller");
    append(dir, "src/main.rs", "// user: a note in main.rs");
    append(dir, "src/lib.rs", "// user: a note in lib.rs");
}

#[test]
fn user_edits_survive_every_command() {
    let (_tmp, dir) = init_ai_operator();
    create(&dir, "api", &AIJOB, &[]);
    edit_everything(&dir);
    // A data edit of PROJECT (its comments are rsbuilder's: the file says DO NOT EDIT).
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let renamed = project.replace(
        "repo: example.com/ai-operator",
        "repo: example.com/renamed-by-user",
    );
    assert_ne!(project, renamed);
    std::fs::write(dir.join("PROJECT"), &renamed).unwrap();
    let edited = tree(&dir);
    let text = |p: &str| String::from_utf8(edited[p].clone()).unwrap();

    // 1. `create api` for a new kind: the AIJob files are untouched, main.rs and lib.rs keep
    //    every line, PROJECT keeps the edited value.
    create(&dir, "api", &MODEL, &[]);
    let after_model = tree(&dir);
    let touched = changed(&edited, &after_model);
    for own in [TYPES, CONTROLLER, "config/samples/ai_v1_aijob.yaml"] {
        assert!(!touched.contains(&own.to_string()), "{own} touched");
    }
    for p in ["src/main.rs", "src/lib.rs"] {
        assert_lines_kept(&dir, p, &text(p));
    }
    assert!(touched.contains(&"src/api/v1/model_types.rs".to_string()));
    let project = String::from_utf8(after_model["PROJECT"].clone()).unwrap();
    assert!(
        project.contains("repo: example.com/renamed-by-user\n"),
        "{project}"
    );
    assert!(project.contains("kind: Model\n"), "{project}");

    // 2. The same kind again: refused, the tree byte for byte as it was.
    let out = rsbuilder(&dir)
        .args(["create", "api"])
        .args(AIJOB)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("already exists"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(
        tree(&dir),
        after_model,
        "a refused create api changed files"
    );

    // 3. The same kind with --force: only that kind's own files (types, controller, sample)
    //    are written again; main.rs, lib.rs, PROJECT and the Model files stay as they were.
    const SAMPLE: &str = "config/samples/ai_v1_aijob.yaml";
    append(&dir, SAMPLE, "# user: a note in the sample");
    let before_force = tree(&dir);
    create(&dir, "api", &AIJOB, &["--force"]);
    let after_force = tree(&dir);
    assert_eq!(
        changed(&before_force, &after_force),
        [SAMPLE, TYPES, CONTROLLER],
        "--force may only rewrite the kind's own files"
    );
    for p in [SAMPLE, TYPES, CONTROLLER] {
        assert!(!String::from_utf8_lossy(&after_force[p]).contains("user: a note"));
    }

    // 4. Webhooks: defaulting, a hand edit, validation for the same kind, then a second kind.
    edit_everything(&dir);
    create(&dir, "webhook", &AIJOB, &["--defaulting"]);
    append(&dir, WEBHOOK, "// user: a note in the webhook");
    let before_validation = tree(&dir);
    create(&dir, "webhook", &AIJOB, &["--programmatic-validation"]);
    let after_validation = tree(&dir);
    let webhook = String::from_utf8(before_validation[WEBHOOK].clone()).unwrap();
    assert_lines_kept(&dir, WEBHOOK, &webhook);
    assert!(
        String::from_utf8_lossy(&after_validation[WEBHOOK]).contains("fn validate_create"),
        "validation was not merged into {WEBHOOK}"
    );
    for p in [TYPES, CONTROLLER] {
        assert_eq!(after_validation[p], before_validation[p], "{p} touched");
    }
    for p in ["src/main.rs", "src/lib.rs"] {
        let edited = String::from_utf8(before_validation[p].clone()).unwrap();
        assert_lines_kept(&dir, p, &edited);
    }
    create(&dir, "webhook", &MODEL, &["--defaulting"]);
    let after_second = tree(&dir);
    for p in [TYPES, CONTROLLER, WEBHOOK] {
        assert_eq!(after_second[p], after_validation[p], "{p} touched");
    }
    for p in ["src/main.rs", "src/lib.rs"] {
        let edited = String::from_utf8(after_validation[p].clone()).unwrap();
        assert_lines_kept(&dir, p, &edited);
    }

    // 5. manifests: only files under config/ change; a second run changes nothing.
    run_ok(&dir, &["manifests"]);
    let after_manifests = tree(&dir);
    let touched = changed(&after_second, &after_manifests);
    assert!(!touched.is_empty());
    for p in &touched {
        assert!(p.starts_with("config/"), "manifests touched {p}");
    }
    assert!(touched.contains(&"config/crd/bases/ai.ai.example.com_aijobs.yaml".to_string()));
    run_ok(&dir, &["manifests"]);
    assert_eq!(tree(&dir), after_manifests, "manifests is not idempotent");
    // Nothing landed next to the project either.
    let beside: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["ai-operator"]);
    for (p, line) in [
        (TYPES, "// user: a note in the types file"),
        (CONTROLLER, "// user: a note in the controller"),
        ("src/main.rs", "// user: a note in main.rs"),
        ("src/lib.rs", "// user: a note in lib.rs"),
        (WEBHOOK, "// user: a note in the webhook"),
    ] {
        assert!(
            String::from_utf8_lossy(&after_manifests[p]).contains(line),
            "{p} lost {line:?}"
        );
    }
}

/// Runs `rsbuilder <args>` in `dir` through `cmd` (the binary, maybe wrapped), expects exit
/// code 1 and an error naming every one of `says`, and the tree and its directories exactly
/// as before. Returns stderr.
fn assert_fails_unchanged(dir: &Path, mut cmd: StdCommand, says: &[&str]) -> String {
    let files = tree(dir);
    let folders = dirs(dir);
    let out = cmd.current_dir(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{cmd:?}\n{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    // A failed command reports no file as created or updated.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for s in says {
        assert!(stderr.contains(s), "{s:?} not in:\n{stderr}");
    }
    let now = tree(dir);
    assert_eq!(
        changed(&files, &now),
        Vec::<String>::new(),
        "a failed command changed files"
    );
    assert_eq!(dirs(dir), folders, "a failed command left directories");
    stderr
}

fn plain(args: &[&str]) -> StdCommand {
    let mut cmd = StdCommand::new(bin());
    cmd.args(args).env("SOURCE_DATE_EPOCH", EPOCH_2026);
    cmd
}

fn args_of(what: &str, kind: &[&str]) -> Vec<String> {
    ["create", what]
        .iter()
        .chain(kind)
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_file_where_a_directory_should_be() {
    let (_tmp, dir) = init_ai_operator();
    std::fs::write(dir.join("src/api"), "not a directory\n").unwrap();
    let args = args_of("api", &AIJOB);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Either the engine's check ("<dir>/src/api exists and is not a directory") or the OS
    // error of reading a module file below it ("Not a directory").
    assert_fails_unchanged(&dir, plain(&args), &["src/api", "ot a directory"]);

    // manifests, when config/crd is a file.
    std::fs::remove_file(dir.join("src/api")).unwrap();
    create(&dir, "api", &AIJOB, &[]);
    std::fs::remove_dir_all(dir.join("config/crd")).unwrap();
    std::fs::write(dir.join("config/crd"), "").unwrap();
    assert_fails_unchanged(
        &dir,
        plain(&["manifests"]),
        &[
            "config/crd",
            "is not a directory",
            "move or rename that file",
        ],
    );
}

#[cfg(unix)]
#[test]
fn symlinks_leading_out_of_the_project_are_refused() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let outside_is_empty = || std::fs::read_dir(outside.path()).unwrap().count() == 0;

    // A directory the command writes into is a link to a directory outside.
    let (_tmp, dir) = init_ai_operator();
    symlink(outside.path(), dir.join("src/controller")).unwrap();
    let args = args_of("api", &AIJOB);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails_unchanged(
        &dir,
        plain(&args),
        &[
            "src/controller",
            "symbolic link that leads outside the project; replace it",
        ],
    );
    assert!(outside_is_empty(), "wrote outside the project");

    // A file the command updates is a link to a file outside.
    let (_tmp2, dir) = init_ai_operator();
    let target = outside.path().join("main.rs");
    std::fs::rename(dir.join("src/main.rs"), &target).unwrap();
    symlink(&target, dir.join("src/main.rs")).unwrap();
    let main_before = std::fs::read(&target).unwrap();
    assert_fails_unchanged(
        &dir,
        plain(&args),
        &[
            "src/main.rs",
            "symbolic link that leads outside the project; replace it",
        ],
    );
    assert_eq!(std::fs::read(&target).unwrap(), main_before);
    std::fs::remove_file(&target).unwrap();

    // A file the command creates is a dangling link to a path outside.
    let (_tmp3, dir) = init_ai_operator();
    std::fs::create_dir_all(dir.join("src/controller")).unwrap();
    symlink(
        outside.path().join("aijob_controller.rs"),
        dir.join(CONTROLLER),
    )
    .unwrap();
    assert_fails_unchanged(
        &dir,
        plain(&args),
        &[
            CONTROLLER,
            "symbolic link that leads outside the project; replace it",
        ],
    );
    assert!(outside_is_empty(), "wrote outside the project");
    assert!(
        std::fs::symlink_metadata(dir.join(CONTROLLER))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // init, in a directory whose config/ leads outside.
    let tmp5 = tempfile::tempdir().unwrap();
    let dir = tmp5.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    symlink(outside.path(), dir.join("config")).unwrap();
    assert_fails_unchanged(
        &dir,
        plain(&["init", "--domain", "ai.example.com"]),
        &[
            "config",
            "symbolic link that leads outside the project; replace it",
        ],
    );
    assert!(outside_is_empty(), "wrote outside the project");

    // manifests, when config/crd/bases leads outside.
    let (_tmp4, dir) = init_ai_operator();
    create(&dir, "api", &AIJOB, &[]);
    std::fs::create_dir_all(dir.join("config/crd")).unwrap();
    symlink(outside.path(), dir.join("config/crd/bases")).unwrap();
    assert_fails_unchanged(
        &dir,
        plain(&["manifests"]),
        &[
            "config/crd/bases",
            "symbolic link that leads outside the project; replace it",
        ],
    );
    assert!(outside_is_empty(), "wrote outside the project");
}

/// Whether `prog --version` runs.
fn have(prog: &str) -> bool {
    StdCommand::new(prog)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A fresh project after `init` and the `create api` commands in `before`, then the sizes of
/// the files `create api <kind>` writes, in the order the engine writes them (by path).
fn sizes_written_by(before_kinds: &[&[&str]], kind: &[&str]) -> Vec<(String, usize)> {
    let (_tmp, dir) = init_ai_operator();
    for k in before_kinds {
        create(&dir, "api", k, &[]);
    }
    let before = tree(&dir);
    create(&dir, "api", kind, &[]);
    let after = tree(&dir);
    changed(&before, &after)
        .into_iter()
        .map(|p| {
            let n = after[&p].len();
            (p, n)
        })
        .collect()
}

/// A write fails midway (the file-size limit stops one file after others were written):
/// everything already written is rolled back, directories the command created included.
#[cfg(unix)]
#[test]
fn a_write_failing_midway_is_rolled_back() {
    if !have("prlimit") {
        common::missing("prlimit (util-linux) is not installed");
        return;
    }
    // A second kind (updates shared files) and a first kind (also creates directories).
    for (before_kinds, kind) in [(&[&AIJOB[..]][..], &MODEL[..]), (&[][..], &AIJOB[..])] {
        let sizes = sizes_written_by(before_kinds, kind);
        // The limit lets the first file through and stops the first larger one after it.
        let limit = sizes[0].1;
        let (failing, _) = sizes
            .iter()
            .find(|(_, n)| *n > limit)
            .expect("a file larger than the first");
        let written_first = sizes.iter().take_while(|(p, _)| p != failing).count();
        assert!(written_first >= 1, "{sizes:?}");

        let (_tmp, dir) = init_ai_operator();
        for k in before_kinds {
            create(&dir, "api", k, &[]);
        }
        // SIGXFSZ ignored, so the oversized write fails with EFBIG instead of killing the
        // process.
        let mut cmd = StdCommand::new("sh");
        cmd.arg("-c")
            .arg(format!("trap '' XFSZ; exec prlimit --fsize={limit} \"$@\""))
            .arg("sh")
            .arg(bin())
            .args(args_of("api", kind))
            .env("SOURCE_DATE_EPOCH", EPOCH_2026);
        let stderr = assert_fails_unchanged(&dir, cmd, &["error: writing ", failing.as_str()]);
        // What failed, then why, on its own line, without temporary file names.
        assert!(stderr.contains("\n  caused by: File too large"), "{stderr}");
        assert!(!stderr.contains("at path"), "{stderr}");
    }
}

/// The same, with a real full disk: a tiny tmpfs (needs root and mount; skipped otherwise).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_rolled_back() {
    struct Mount(PathBuf);
    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = StdCommand::new("umount").arg(&self.0).status();
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = StdCommand::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        common::missing(
            "cannot mount a tmpfs here (needs root); see a_write_failing_midway_is_rolled_back",
        );
        return;
    }
    let _guard = Mount(mnt.clone());
    let dir = mnt.join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    init_in(&dir);
    create(&dir, "api", &AIJOB, &[]);
    // Fill the disk, then free two pages: a few writes succeed, a later one fails.
    let filler = mnt.join("filler");
    {
        use std::io::Write as _;
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len.saturating_sub(2 * 4096) / 4096 * 4096)
        .unwrap();
    let args = args_of("api", &MODEL);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stderr = assert_fails_unchanged(&dir, plain(&args), &["ai-operator/"]);
    assert!(stderr.contains("caused by: No space left"), "{stderr}");
    // PROJECT is written first; the disk filled up at a later file, so this was a rollback.
    assert!(!stderr.contains("PROJECT"), "{stderr}");
}

/// A read-only directory stops the command midway (files sorted before it were written);
/// they are rolled back. root ignores directory permissions, so as root the command runs as
/// `nobody` through setpriv (skipped when that is impossible).
#[cfg(target_os = "linux")]
#[test]
fn a_read_only_directory_is_rolled_back() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, dir) = init_ai_operator();
    create(&dir, "api", &AIJOB, &[]);
    let ro = dir.join("src/controller");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = ro.join(".probe");
    let as_root = std::fs::write(&probe, "").is_ok();
    let _ = std::fs::remove_file(&probe);
    let args = args_of("api", &MODEL);
    let cmd = if as_root {
        if !have("setpriv") {
            common::missing(
                "running as root and setpriv is missing, so a read-only directory cannot be simulated",
            );
            return;
        }
        // nobody owns the project (so only the read-only directory is unwritable).
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for e in walkdir::WalkDir::new(&dir) {
            std::os::unix::fs::chown(e.unwrap().path(), Some(65534), Some(65534)).unwrap();
        }
        // nobody's own state directory for the run record (its HOME is root's).
        let state = tmp.path().join("state");
        std::fs::create_dir(&state).unwrap();
        std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
        let mut cmd = StdCommand::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin())
            .args(&args)
            .env("XDG_STATE_HOME", &state)
            .env("SOURCE_DATE_EPOCH", EPOCH_2026);
        cmd
    } else {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        plain(&args)
    };
    let stderr = assert_fails_unchanged(&dir, cmd, &["src/controller/"]);
    assert!(stderr.contains("ermission denied"), "{stderr}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `manifests --output-dir` that climbs out of the project with `..` writes there, as an
/// absolute path outside the project does, and changes nothing in the project.
#[test]
fn an_output_dir_climbing_out_writes_outside_as_an_absolute_one_does() {
    let (tmp, dir) = init_ai_operator();
    create(&dir, "api", &AIJOB, &[]);
    let files = tree(&dir);
    let out = plain(&["manifests", "--output-dir", "../elsewhere"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let crds = tmp.path().join("elsewhere/crd/bases");
    assert_eq!(std::fs::read_dir(&crds).unwrap().count(), 1, "{stderr}");
    assert_eq!(tree(&dir), files, "the project is unchanged");
}
