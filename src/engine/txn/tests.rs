//! Tests of the transaction: applied, rolled forward or back, discarded, refused.

#[cfg(target_os = "linux")]
use super::mode::new_file_mode;
use super::recover::recover;
use super::stage::prepare;
use super::sync::DirSync;
#[cfg(target_os = "linux")]
use super::sync::sync_file_system;
use super::sync::syncfs_reports_errors;
use super::*;
use crate::engine::record;

/// A project with `old.txt` ("old"), and the changes: `old.txt` replaced, `new/a.txt`
/// created in a new directory.
fn project() -> (tempfile::TempDir, Dir) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("old.txt"), "old").unwrap();
    let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
    (tmp, dir)
}

fn changes() -> Vec<Change<'static>> {
    vec![
        Change {
            path: Path::new("new/a.txt"),
            contents: b"a",
            replaces: false,
            removes: false,
        },
        Change {
            path: Path::new("old.txt"),
            contents: b"new",
            replaces: true,
            removes: false,
        },
    ]
}

fn names(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            e.path().strip_prefix(root).unwrap().display().to_string()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_committed_journal_is_rolled_forward() {
    let (tmp, dir) = project();
    prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
    // Killed after the commit, before any rename.
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
        "old"
    );
    let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
    assert!(
        matches!(&done, Recovery::RolledForward { files: 2, .. }),
        "{done:?}"
    );
    assert!(done.to_string().contains("(rolled forward)"), "{done}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
        "new"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("new/a.txt")).unwrap(),
        "a"
    );
    assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);
    assert_eq!(recover(tmp.path(), &dir, Mode::Repair).unwrap(), None);
}

/// The journal's text, rewritten by `edit` (as a checkout or a person could).
fn tamper(dir: &Dir, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut j: serde_json::Value = serde_json::from_slice(&dir.read(JOURNAL).unwrap()).unwrap();
    edit(&mut j);
    dir.write(JOURNAL, serde_json::to_vec(&j).unwrap()).unwrap();
}

/// A transaction this machine did not record, or whose journal or staged files were
/// changed after the record, is reported and left exactly as it is.
#[test]
fn only_a_recorded_untampered_journal_is_applied() {
    type Attack = fn(&Path, &Dir);
    let attacks: [(&str, Attack); 5] = [
        ("no record", |root, dir| {
            record::remove(&record::name(root, dir).unwrap());
        }),
        ("another nonce", |_, dir| {
            tamper(dir, |j| {
                j["nonce"] = "00000000000000000000000000000000".into()
            });
        }),
        ("a path in .git", |_, dir| {
            tamper(dir, |j| {
                j["files"][0]["path"] = ".git/hooks/pre-commit".into()
            });
        }),
        ("a path in .rsbuilder/txn", |_, dir| {
            tamper(dir, |j| j["dirs"] = serde_json::json!([".rsbuilder/txn/x"]));
        }),
        ("other staged bytes", |_, dir| {
            dir.write(stage_new(1), "evil").unwrap();
        }),
    ];
    for (what, attack) in attacks {
        let (tmp, dir) = project();
        prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
        attack(tmp.path(), &dir);
        let before = names(tmp.path());
        let err = recover(tmp.path(), &dir, Mode::Repair).unwrap_err();
        assert!(
            matches!(err, ScaffoldError::UntrustedTxn { .. }),
            "{what}: {err}"
        );
        assert!(
            err.to_string().contains("Nothing in it was applied"),
            "{err}"
        );
        assert_eq!(names(tmp.path()), before, "{what}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
            "old",
            "{what}"
        );
        // Read-only, the same answer.
        let err = recover(tmp.path(), &dir, Mode::ReadOnly).unwrap_err();
        assert!(
            matches!(err, ScaffoldError::UntrustedTxn { .. }),
            "{what}: {err}"
        );
        record::remove(&record::name(tmp.path(), &dir).unwrap());
    }
}

/// A genuine interrupted apply is reported, not finished, by a read-only command, which
/// changes nothing; the next command that writes finishes it.
#[test]
fn a_read_only_recovery_reports_and_changes_nothing() {
    let (tmp, dir) = project();
    prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
    let before = names(tmp.path());
    let err = recover(tmp.path(), &dir, Mode::ReadOnly).unwrap_err();
    assert!(
        matches!(
            &err,
            ScaffoldError::Interrupted {
                command: Some(_),
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("rsbuilder alpha recover"), "{err}");
    assert_eq!(names(tmp.path()), before);
    assert!(matches!(
        recover(tmp.path(), &dir, Mode::Repair).unwrap(),
        Some(Recovery::RolledForward { .. })
    ));
    assert_eq!(recover(tmp.path(), &dir, Mode::ReadOnly).unwrap(), None);
}

/// Files put in place by a recovery get rsbuilder's modes, not the staged files'.
#[cfg(target_os = "linux")]
#[test]
fn a_recovery_sets_the_modes_itself() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let (tmp, dir) = project();
    std::fs::set_permissions(
        tmp.path().join("old.txt"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
    for i in 0..2 {
        std::fs::set_permissions(
            tmp.path().join(stage_new(i)),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
    }
    recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
    assert_eq!(mode(&tmp.path().join("new/a.txt")), new_file_mode());
    assert_eq!(new_file_mode() & 0o111, 0);
    assert_eq!(mode(&tmp.path().join("old.txt")), 0o640);
}

#[test]
fn staged_files_without_a_journal_are_discarded() {
    let (tmp, dir) = project();
    prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
    // Killed before the journal's rename: as if it had never been written.
    dir.remove_file(JOURNAL).unwrap();
    assert_eq!(
        recover(tmp.path(), &dir, Mode::Repair).unwrap(),
        Some(Recovery::Discarded)
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
        "old"
    );
    assert_eq!(names(tmp.path()), ["old.txt"]);
}

#[test]
fn an_interrupted_undo_is_finished() {
    let (tmp, dir) = project();
    prepare(tmp.path(), &dir, &changes(), &DirSync::new(), &mut None).unwrap();
    // Both files were renamed into place, a later rename failed, the undo had begun.
    dir.create_dir("new").unwrap();
    dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
    dir.rename(stage_new(1), &dir, "old.txt").unwrap();
    dir.create(BACK).unwrap();
    let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
    assert!(
        matches!(&done, Recovery::RolledBack { files: 2, .. }),
        "{done:?}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
        "old"
    );
    assert_eq!(names(tmp.path()), ["old.txt"]);
}

#[test]
fn a_journal_that_does_not_parse_is_an_error_naming_it() {
    let (tmp, dir) = project();
    // Recorded (this machine's run), then the journal's text was damaged.
    let run = record::name(tmp.path(), &dir).unwrap();
    let rec = record::Record {
        nonce: record::nonce().unwrap(),
        root: tmp.path().to_path_buf(),
    };
    record::write(&run, &rec).unwrap();
    dir.create_dir_all(TXN_DIR).unwrap();
    dir.write(JOURNAL, "{ not json").unwrap();
    let err = recover(tmp.path(), &dir, Mode::Repair).unwrap_err();
    record::remove(&run);
    assert!(matches!(err, ScaffoldError::Journal { .. }), "{err}");
    assert!(err.to_string().contains(".rsbuilder/txn/journal"), "{err}");
    // Left for the user to look at.
    assert!(tmp.path().join(JOURNAL).is_file());
}

#[test]
fn an_empty_state_directory_is_removed_silently() {
    let (tmp, dir) = project();
    dir.create_dir_all(TXN_DIR).unwrap();
    dir.create(BACK).unwrap();
    assert_eq!(recover(tmp.path(), &dir, Mode::Repair).unwrap(), None);
    assert_eq!(names(tmp.path()), ["old.txt"]);
}

/// Directories are synced through a descriptor that `fsync` accepts: the `O_PATH`
/// handles of `Dir::open_dir` made every directory fsync fail with `EBADF`, unnoticed.
#[test]
fn directories_are_really_fsynced() {
    let (_tmp, dir) = project();
    dir.create_dir_all("a/b").unwrap();
    let sync = DirSync::new();
    for d in ["", "a", "a/b"] {
        sync.sync(&dir, Path::new(d)).unwrap();
    }
    assert!(
        !sync.unsupported.get(),
        "a local file system syncs directories"
    );
    // A path that is not a directory of the project is an error, not a silent skip.
    assert!(sync.sync(&dir, Path::new("missing")).is_err());
}

#[test]
fn syncfs_is_used_only_where_it_reports_write_errors() {
    for (release, yes) in [
        ("5.8.0", true),
        ("6.18.44-fc-v1098", true),
        ("10.0", true),
        ("5.7.19-generic", false),
        ("4.19.0-27-amd64", false),
        ("5", false),
        ("", false),
        ("linux", false),
    ] {
        assert_eq!(syncfs_reports_errors(release), yes, "{release}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_file_system_is_synced_in_one_call() {
    let (_tmp, dir) = project();
    let file = dir.create("x").unwrap();
    sync_file_system(&file).unwrap();
}

/// Staging keeps no descriptor per file: 2,000 files are written under a limit of 256
/// open descriptors. The limit is set in a child process (this test binary run again
/// for this one test), so the other tests keep theirs.
#[cfg(target_os = "linux")]
#[test]
fn staging_many_files_stays_within_a_low_descriptor_limit() {
    const CHILD: &str = "RSBUILDER_TEST_LOW_NOFILE_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "engine::txn::tests::staging_many_files_stays_within_a_low_descriptor_limit",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("2000 files applied"), "{text}");
        return;
    }
    let limit = rustix::process::Rlimit {
        current: Some(256),
        maximum: rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum,
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let (tmp, dir) = project();
    let paths: Vec<PathBuf> = (0..2000)
        .map(|i| PathBuf::from(format!("new/f{i}.txt")))
        .collect();
    let changes: Vec<Change<'_>> = paths
        .iter()
        .map(|p| Change {
            path: p,
            contents: b"x",
            replaces: false,
            removes: false,
        })
        .collect();
    apply(tmp.path(), &dir, &changes).unwrap();
    assert_eq!(
        std::fs::read_dir(tmp.path().join("new")).unwrap().count(),
        2000
    );
    println!("2000 files applied");
}

#[test]
fn apply_writes_everything_and_leaves_no_state() {
    let (tmp, dir) = project();
    apply(tmp.path(), &dir, &changes()).unwrap();
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old.txt")).unwrap(),
        "new"
    );
    assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);
}

/// A removal next to a write: rolled forward it is gone, rolled back it is there again
/// with its bytes.
#[test]
fn a_removal_is_rolled_forward_or_back_with_the_rest() {
    let with_removal = |dir: &Dir| {
        dir.write("gone.txt", "bye").unwrap();
        let mut c = changes();
        c.push(Change {
            path: Path::new("gone.txt"),
            contents: b"",
            replaces: true,
            removes: true,
        });
        c
    };
    let (tmp, dir) = project();
    prepare(
        tmp.path(),
        &dir,
        &with_removal(&dir),
        &DirSync::new(),
        &mut None,
    )
    .unwrap();
    assert!(tmp.path().join("gone.txt").is_file());
    recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
    assert_eq!(names(tmp.path()), ["new", "new/a.txt", "old.txt"]);

    let (tmp, dir) = project();
    prepare(
        tmp.path(),
        &dir,
        &with_removal(&dir),
        &DirSync::new(),
        &mut None,
    )
    .unwrap();
    // The removal and the first write happened, then a rename failed.
    dir.remove_file("gone.txt").unwrap();
    dir.create_dir("new").unwrap();
    dir.rename(stage_new(0), &dir, "new/a.txt").unwrap();
    dir.create(BACK).unwrap();
    let done = recover(tmp.path(), &dir, Mode::Repair).unwrap().unwrap();
    assert!(
        matches!(&done, Recovery::RolledBack { files: 3, .. }),
        "{done:?}"
    );
    assert_eq!(names(tmp.path()), ["gone.txt", "old.txt"]);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("gone.txt")).unwrap(),
        "bye"
    );
}
