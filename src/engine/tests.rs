//! Tests of plans: resolved and applied, refused, read.

use std::path::Path;

use super::*;

#[test]
fn ensure_dependency_edits_cargo_toml_or_refuses_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cargo = "[package]\nname = \"p\"\n\n[dependencies]\nkube = \"5\" # keep\n";
    std::fs::write(dir.path().join("Cargo.toml"), cargo).unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.ensure_dependency("Cargo.toml", "dependencies", "kube", "\"5\"", &["runtime"]);
    plan.ensure_dependency("Cargo.toml", "dev-dependencies", "tempfile", "\"3\"", &[]);
    plan.apply().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap(),
        "[package]\nname = \"p\"\n\n[dependencies]\nkube = { version = \"5\", features = [\"runtime\"] } # keep\n\n[dev-dependencies]\ntempfile = \"3\"\n"
    );
    let before = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("new.txt", "x", IfExists::Error));
    plan.ensure_dependency("Cargo.toml", "dependencies", "kube", "\"4\"", &[]);
    let err = plan.apply().unwrap_err().to_string();
    assert!(
        err.ends_with("Cargo.toml:5: `kube` in [dependencies] asks for \"5\", and rsbuilder needs a version compatible with \"4\"; change that line to a compatible version, then re-run"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap(),
        before
    );
    assert!(!dir.path().join("new.txt").exists());
}

#[test]
fn plan_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() {}\n").unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("a/b.txt", "hello", IfExists::Error));
    plan.insert("main.rs", "controllers", "x();");
    let err = plan.apply().unwrap_err();
    assert!(matches!(err, ScaffoldError::Marker(_)), "{err}");
    assert!(!dir.path().join("a").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("main.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn existing_files_follow_policy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "user").unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("f", "new", IfExists::Error));
    assert!(matches!(plan.apply(), Err(ScaffoldError::Exists { .. })));
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("f", "new", IfExists::Skip));
    plan.apply().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f")).unwrap(),
        "user"
    );
    let mut plan = Plan::new(dir.path(), true);
    plan.add(File::new("f", "new", IfExists::Error));
    let done = plan.apply().unwrap();
    assert_eq!(done[0].action, Action::Updated);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f")).unwrap(),
        "new"
    );
}

#[test]
fn rejects_paths_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["../x", "/etc/passwd", "a/../../x"] {
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new(bad, "x", IfExists::Overwrite));
        assert!(
            matches!(plan.apply(), Err(ScaffoldError::OutsideProject { .. })),
            "{bad}"
        );
    }
}

#[cfg(unix)]
#[test]
fn rejects_symlinks_leading_out() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("config")).unwrap();
    let mut plan = Plan::new(dir.path(), true);
    plan.add(File::new("config/x.yaml", "x", IfExists::Overwrite));
    assert!(matches!(
        plan.apply(),
        Err(ScaffoldError::SymlinkEscape { .. })
    ));
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
}

/// A link inside the project that leads into `.git` (or another VCS directory), live or
/// dangling, is refused by name: the path's own names hold no VCS directory.
#[cfg(unix)]
#[test]
fn rejects_symlinks_leading_into_a_vcs_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dir.path().join(".hg")).unwrap();
    std::fs::create_dir_all(dir.path().join("config/crd")).unwrap();
    std::os::unix::fs::symlink("../../.git/hooks", dir.path().join("config/crd/bases")).unwrap();
    std::os::unix::fs::symlink("../.hg", dir.path().join("config/rbac")).unwrap();
    std::os::unix::fs::symlink(".git/newdir", dir.path().join("dangling")).unwrap();
    for (rel, link, target) in [
        ("config/crd/bases/a.yaml", "config/crd/bases", ".git/hooks"),
        ("config/rbac/role.yaml", "config/rbac", ".hg"),
        ("dangling/x.yaml", "dangling", ".git/newdir"),
    ] {
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new(rel, "x", IfExists::Overwrite));
        let err = plan.apply().unwrap_err();
        assert!(
            matches!(&err, ScaffoldError::SymlinkIntoVcs { path, link: l, target: t }
                if path == Path::new(rel) && l == Path::new(link) && t == Path::new(target)),
            "{rel}: {err}"
        );
    }
    assert!(
        std::fs::read_dir(dir.path().join(".git/hooks"))
            .unwrap()
            .next()
            .is_none()
    );
    assert!(
        std::fs::read_dir(dir.path().join(".hg"))
            .unwrap()
            .next()
            .is_none()
    );
    assert!(!dir.path().join(".git/newdir").exists());
}

#[cfg(unix)]
#[test]
fn rejects_dangling_symlinks_leading_out() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path().join("new.rs"), dir.path().join("x.rs")).unwrap();
    std::os::unix::fs::symlink("../../elsewhere/y.rs", dir.path().join("y.rs")).unwrap();
    for rel in ["x.rs", "y.rs"] {
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new(rel, "x", IfExists::Overwrite));
        assert!(
            matches!(plan.apply(), Err(ScaffoldError::SymlinkEscape { .. })),
            "{rel}"
        );
    }
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    // A dangling link that stays inside is replaced by the file.
    std::os::unix::fs::symlink("sub/../z-target.rs", dir.path().join("z.rs")).unwrap();
    let mut plan = Plan::new(dir.path(), true);
    plan.add(File::new("z.rs", "z", IfExists::Overwrite));
    plan.apply().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("z.rs")).unwrap(),
        "z"
    );
}

#[test]
fn updates_leave_no_backup_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "old").unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("f", "new", IfExists::Overwrite));
    assert_eq!(plan.apply().unwrap()[0].action, Action::Updated);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f")).unwrap(),
        "new"
    );
}

/// New files get the mode any program's new files get (0666 minus the umask), not the
/// temporary file's 0600; a replaced file keeps its mode.
#[cfg(target_os = "linux")]
#[test]
fn new_files_follow_the_umask_and_updates_keep_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let Some(umask) = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
    else {
        return; // kernels before 4.7 do not show the umask
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.sh"), "old").unwrap();
    std::fs::set_permissions(
        dir.path().join("script.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("new.txt", "new", IfExists::Error));
    plan.add(File::new("script.sh", "new", IfExists::Overwrite));
    plan.apply().unwrap();
    let mode = |f: &str| {
        std::fs::metadata(dir.path().join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("new.txt"), 0o666 & !umask);
    assert_eq!(mode("script.sh"), 0o750);
}

#[cfg(unix)]
#[test]
fn reads_stay_inside_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "//! x\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let plan = Plan::new(dir.path(), false);
    assert_eq!(plan.read("src/lib.rs").unwrap().as_deref(), Some("//! x\n"));
    assert_eq!(plan.read("src/none.rs").unwrap(), None);
    assert!(matches!(
        plan.read("out/secret"),
        Err(ScaffoldError::SymlinkEscape { .. })
    ));
    assert!(matches!(
        plan.read("../x"),
        Err(ScaffoldError::OutsideProject { .. })
    ));
}

#[test]
fn sorted_insertions_keep_the_module_run_sorted_and_happen_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.txt"),
        "//! x\npub mod manager;\n# +kubebuilder:scaffold:modules\n",
    )
    .unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.insert_sorted("lib.txt", "modules", "pub mod webhook;");
    plan.insert_sorted("lib.txt", "modules", "pub mod api;");
    plan.insert_sorted("lib.txt", "modules", "pub mod api;");
    plan.insert_sorted("lib.txt", "modules", "pub mod manager;");
    let done = plan.apply().unwrap();
    assert_eq!(done[0].action, Action::Updated);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("lib.txt")).unwrap(),
        "//! x\npub mod api;\npub mod manager;\npub mod webhook;\n# +kubebuilder:scaffold:modules\n"
    );
    // A missing file and a missing marker are errors, and nothing is written.
    let mut plan = Plan::new(dir.path(), false);
    plan.insert_sorted("none.txt", "modules", "pub mod api;");
    assert!(matches!(
        plan.apply(),
        Err(ScaffoldError::MissingFile { .. })
    ));
    let mut plan = Plan::new(dir.path(), false);
    plan.insert_sorted("lib.txt", "controllers", "pub mod api;");
    assert!(matches!(plan.apply(), Err(ScaffoldError::Marker(_))));
}

#[test]
fn skip_unless_forced_keeps_a_file_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "user").unwrap();
    for (force, want) in [(false, "user"), (true, "new")] {
        let mut plan = Plan::new(dir.path(), force);
        plan.add(File::new("f", "new", IfExists::SkipUnlessForced));
        plan.apply().unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("f")).unwrap(), want);
    }
    let mut plan = Plan::new(dir.path(), false);
    plan.add(File::new("g", "fresh", IfExists::SkipUnlessForced));
    assert_eq!(plan.apply().unwrap()[0].action, Action::Created);
}

#[cfg(unix)]
#[test]
fn trees_are_read_inside_the_project_only() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.rs"), "s").unwrap();
    for d in ["src/api/v1", "src/.hidden", "src/target"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    for (f, text) in [
        ("src/lib.rs", "lib"),
        ("src/api/v1/a_types.rs", "a"),
        ("src/api/notes.md", "md"),
        ("src/.hidden/h.rs", "h"),
        ("src/target/t.rs", "t"),
    ] {
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let plan = Plan::new(dir.path(), false);
    let got = plan.read_tree("src", "rs").unwrap();
    assert_eq!(
        got,
        [
            (dir.path().join("src/api/v1/a_types.rs"), "a".to_string()),
            (dir.path().join("src/lib.rs"), "lib".to_string()),
        ]
    );
    assert_eq!(plan.read_tree("tests", "rs").unwrap(), []);
    assert!(plan.exists("src/lib.rs").unwrap());
    assert!(!plan.exists("src/none.rs").unwrap());
    std::os::unix::fs::symlink(outside.path(), dir.path().join("src/out")).unwrap();
    assert!(plan.read_tree("src", "rs").is_err());
    assert!(matches!(
        plan.exists("src/out/secret.rs"),
        Err(ScaffoldError::SymlinkEscape { .. })
    ));
}

#[test]
fn removals_and_verbatim_writes_are_applied_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/gone.rs"), "fn gone() {}\n").unwrap();
    let mut plan = Plan::new(dir.path(), false);
    plan.remove("src/gone.rs");
    plan.remove("src/never-there.rs");
    // Not valid for rustfmt's taste, kept byte for byte.
    plan.add(File::verbatim("src/kept.rs", "fn   kept( ) {}\n"));
    let done = plan.apply().unwrap();
    let actions: Vec<(&Path, Action)> = done.iter().map(|r| (r.path.as_path(), r.action)).collect();
    assert_eq!(
        actions,
        [
            (Path::new("src/gone.rs"), Action::Removed),
            (Path::new("src/kept.rs"), Action::Created)
        ]
    );
    assert!(!dir.path().join("src/gone.rs").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/kept.rs")).unwrap(),
        "fn   kept( ) {}\n"
    );
    assert_eq!(report(&done), "remove  src/gone.rs\ncreate  src/kept.rs\n");
}

/// A read-only file is refused by name, not replaced by the rename; nothing is written.
#[cfg(unix)]
#[test]
fn a_read_only_file_is_refused_not_replaced() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "user").unwrap();
    std::fs::set_permissions(dir.path().join("f"), std::fs::Permissions::from_mode(0o444)).unwrap();
    for remove in [false, true] {
        let mut plan = Plan::new(dir.path(), true);
        plan.add(File::new("new.txt", "x", IfExists::Error));
        match remove {
            true => plan.remove("f"),
            false => plan.add(File::new("f", "new", IfExists::Overwrite)),
        }
        let err = plan.apply().unwrap_err();
        assert!(matches!(err, ScaffoldError::ReadOnly { .. }), "{err}");
        assert!(err.to_string().contains("is read-only"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f")).unwrap(),
            "user"
        );
        assert!(!dir.path().join("new.txt").exists());
    }
}

#[test]
fn file_in_place_of_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config"), "").unwrap();
    let mut plan = Plan::new(dir.path(), true);
    plan.add(File::new("config/x.yaml", "x", IfExists::Overwrite));
    assert!(matches!(
        plan.apply(),
        Err(ScaffoldError::NotADirectory { .. })
    ));
}

/// The files of a grouped directory are one line per action where there are several; a
/// lone file there keeps its own line, and other files are listed as they are. Before, a
/// first `create api` listed each of the runtime's hundred files.
#[test]
fn a_grouped_directory_is_one_line_per_action() {
    let r = |path: &str, action| Resolved {
        path: std::path::PathBuf::from(path),
        action,
        contents: String::new(),
    };
    let done = [
        r("Cargo.toml", Action::Updated),
        r("rt/src/a.rs", Action::Created),
        r("rt/src/b.rs", Action::Created),
        r("rt/Cargo.toml", Action::Updated),
        r("rt/src/c.rs", Action::Unchanged),
        r("src/main.rs", Action::Created),
    ];
    assert_eq!(
        report_grouped(&done, &["rt"]),
        "update  Cargo.toml\ncreate  rt/ (2 files)\nupdate  rt/Cargo.toml\ncreate  src/main.rs\n"
    );
}
