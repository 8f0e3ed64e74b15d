//! Where rsbuilder runs rustfmt on the files it writes: in a temporary directory
//! with an explicit configuration, so a `rustfmt.toml` planted in the system's temporary
//! directory does not change generated code, and a killed run's directory is removed by the
//! next command; and from the file system's root, so a checkout's `rust-toolchain.toml` does
//! not choose the rustfmt binary that runs.

use crate::common;

fn have_rustfmt() -> bool {
    let found = std::process::Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        common::missing("rustfmt is not installed (rustup component add rustfmt)");
    }
    found
}

/// The `fmt-*` entries under the project's `.rsbuilder/`.
fn fmt_dirs(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir.join(".rsbuilder"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fmt-"))
                .collect()
        })
        .unwrap_or_default()
}

fn initialized() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    common::rsbuilder(tmp.path())
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/x",
        ])
        .args(["--project-name", "x"])
        .assert()
        .success();
    tmp
}

/// Before, `create api` formatted in `$TMPDIR/rsbuilder-fmt-*`, and rustfmt found a
/// `rustfmt.toml` in `$TMPDIR`: `hard_tabs = true` there gave the project tab-indented code.
#[test]
fn a_rustfmt_toml_in_the_temporary_directory_does_not_apply() {
    if !have_rustfmt() {
        return;
    }
    let tmp = initialized();
    let planted = tempfile::tempdir().unwrap();
    std::fs::write(
        planted.path().join("rustfmt.toml"),
        "hard_tabs = true\nmax_width = 40\n",
    )
    .unwrap();
    common::rsbuilder(tmp.path())
        .env("TMPDIR", planted.path())
        .args(["create", "api"])
        .args(common::AIJOB_FLAGS)
        .assert()
        .success();
    let controller = common::read(tmp.path(), "src/controller/aijob_controller.rs");
    assert!(!controller.contains('\t'), "{controller}");
    let types = common::read(tmp.path(), "src/api/v1/aijob_types.rs");
    assert!(!types.contains('\t'), "{types}");
    // Nothing left in either place.
    assert_eq!(
        std::fs::read_dir(planted.path()).unwrap().count(),
        1,
        "only the planted rustfmt.toml"
    );
    assert_eq!(fmt_dirs(tmp.path()), Vec::<String>::new());
}

/// A formatting directory a killed command left is removed by the next command.
#[test]
fn a_killed_runs_formatting_directory_is_removed_by_the_next_command() {
    let tmp = initialized();
    let left = tmp.path().join(".rsbuilder/fmt-AbC123/src");
    std::fs::create_dir_all(&left).unwrap();
    std::fs::write(left.join("main.rs"), "fn main() {}\n").unwrap();
    common::rsbuilder(tmp.path())
        .args(["create", "api"])
        .args(common::AIJOB_FLAGS)
        .assert()
        .success();
    assert_eq!(fmt_dirs(tmp.path()), Vec::<String>::new());
}

/// rustfmt runs from the file system's root: a `rust-toolchain.toml` in the project naming a
/// toolchain `path` does not choose the binary rustup's proxy starts. Before, a checkout could
/// make `create api` run a `rustfmt` of its choosing. Run without `RUSTUP_TOOLCHAIN` (which
/// cargo sets for tests, and which would hide the toolchain file), as from a user's shell.
#[test]
fn a_checkouts_toolchain_file_does_not_choose_the_rustfmt_that_runs() {
    if !have_rustfmt() {
        return;
    }
    if std::process::Command::new("rustup")
        .arg("--version")
        .output()
        .is_err()
    {
        common::missing("rustup is not installed, so no toolchain file is read");
        return;
    }
    let tmp = initialized();
    let toolchain = tempfile::tempdir().unwrap();
    let ran = toolchain.path().join("ran");
    let bin = toolchain.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["rustfmt", "rustc", "cargo"] {
        let script = bin.join(tool);
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntouch {}\ncat\n", ran.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        tmp.path().join("rust-toolchain.toml"),
        format!("[toolchain]\npath = \"{}\"\n", toolchain.path().display()),
    )
    .unwrap();
    // Where rustup reads the file, the planted rustfmt runs.
    let read = std::process::Command::new("rustfmt")
        .arg("--version")
        .env_remove("RUSTUP_TOOLCHAIN")
        .current_dir(tmp.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        read.status.success() && ran.exists(),
        "the toolchain file was not read"
    );
    std::fs::remove_file(&ran).unwrap();
    common::rsbuilder(tmp.path())
        .env_remove("RUSTUP_TOOLCHAIN")
        .args(["create", "api"])
        .args(common::AIJOB_FLAGS)
        .assert()
        .success();
    assert!(
        !ran.exists(),
        "the checkout's toolchain file chose the rustfmt that ran"
    );
    // The real rustfmt formatted the files.
    let controller = common::read(tmp.path(), "src/controller/aijob_controller.rs");
    assert!(controller.contains("\n    "), "{controller}");
}

/// rustfmt formats the file a `#[path]` module names, wherever it is. Before, a `main.rs`
/// holding `#[path = "/abs/evil.rs"] mod evil;` and `#[path = "../../evil2.rs"] mod evil2;`
/// (which, from the temporary formatting directory, names a file in `$TMPDIR`) made
/// `create api` rewrite both files outside the project. A file with a `path` attribute is now
/// formatted through standard input, where rustfmt follows no module; the project's own files
/// are formatted as before.
#[test]
fn a_path_module_never_makes_rustfmt_write_outside_the_project() {
    if !have_rustfmt() {
        return;
    }
    let tmp = initialized();
    let outside = tempfile::tempdir().unwrap();
    let tmpdir = outside.path().join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let unformatted = "pub fn   f( )->u8{1}\n";
    let evil = outside.path().join("evil.rs");
    let evil2 = tmpdir.join("evil2.rs");
    std::fs::write(&evil, unformatted).unwrap();
    std::fs::write(&evil2, unformatted).unwrap();
    let main = tmp.path().join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    let marker = "// +kubebuilder:scaffold:imports";
    assert!(text.contains(marker), "{text}");
    std::fs::write(
        &main,
        text.replace(
            marker,
            &format!(
                "#[path = {:?}]\nmod evil;\n#[path = \"../../evil2.rs\"]\nmod evil2;\n{marker}",
                evil.display().to_string()
            ),
        ),
    )
    .unwrap();
    common::rsbuilder(tmp.path())
        .env("TMPDIR", &tmpdir)
        .args(["create", "api"])
        .args(common::AIJOB_FLAGS)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&evil).unwrap(), unformatted);
    assert_eq!(std::fs::read_to_string(&evil2).unwrap(), unformatted);
    // The generated files are still formatted.
    let controller = common::read(tmp.path(), "src/controller/aijob_controller.rs");
    assert!(controller.contains("\n    "), "{controller}");
    let main = std::fs::read_to_string(&main).unwrap();
    assert!(main.contains("mod evil2;"), "{main}");
}
