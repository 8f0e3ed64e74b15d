//! Formatting generated Rust files with rustfmt, as Kubebuilder formats the Go files it writes,
//! so a project stays `cargo fmt` clean however long its crate and kind names are.
//!
//! Starting rustfmt costs more than formatting a scaffold's files (through the rustup proxy,
//! tens of milliseconds per process), so all files of a plan go to **one** rustfmt process: they
//! are written to a temporary directory at their relative paths and formatted in place. That
//! directory is in the system's temporary directory, never in the project (see [`fmt_dir`]);
//! rustfmt gets its configuration explicitly (`--config-path`): the project's, or an empty file
//! meaning the defaults. Earlier versions used `.rsbuilder/fmt-*`; such a directory a killed
//! run left is removed by the next command ([`remove_leftovers`]). rustfmt follows `mod name;` declarations and fails when the module's file
//! is missing, so each declared module that is not among the files gets an empty stand-in file.
//! When that run fails (a syntax error in one file, a `#[path]` module rustfmt cannot find), each
//! file is formatted on its own through standard input, so the result is the same as formatting
//! every file separately. A file with a `#[path]` module goes through standard input from the
//! start: rustfmt would format the file the attribute names, wherever it is.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ra_ap_rustc_lexer::{FrontmatterAllowed, TokenKind, tokenize};

/// Formats `files` (relative path, text) with rustfmt for `edition`, using the rustfmt
/// configuration that applies in `root` (a `rustfmt.toml` or `.rustfmt.toml` there or in a
/// parent directory). Returns one entry per file, in order: the formatted text, or `None` when
/// rustfmt is not installed or cannot format that file (the caller keeps the text unformatted,
/// which still compiles).
pub fn format_all(files: &[(&Path, &str)], edition: &str, root: &Path) -> Vec<Option<String>> {
    let config = config_file(root);
    // rustfmt formats the file a `#[path = "..."]` module names too, wherever it is (an
    // absolute path, or one that climbs out of the temporary directory): a file with such an
    // attribute goes through standard input, where rustfmt follows no module.
    if files.len() > 1
        && !files.iter().any(|(_, text)| has_path_attribute(text))
        && let Some(formatted) = format_in_one_run(files, edition, config.as_deref(), root)
    {
        return formatted;
    }
    files
        .iter()
        .map(|(_, text)| format_stdin(text, edition, root))
        .collect()
}

/// The rustfmt configuration file that rustfmt would use for a file in `root`.
pub(crate) fn config_file(root: &Path) -> Option<PathBuf> {
    std::path::absolute(root)
        .ok()?
        .ancestors()
        .flat_map(|dir| [dir.join("rustfmt.toml"), dir.join(".rustfmt.toml")])
        .find(|p| p.is_file())
}

/// The prefix of the formatting directories under `.rsbuilder/`.
const FMT_PREFIX: &str = "fmt-";

/// Removes the formatting directories a killed command left: this project's in the system's
/// temporary directory, and those an earlier version left under `root/.rsbuilder/` (and
/// `.rsbuilder` when that leaves it empty). Called with the project lock held, so no running
/// command uses them.
pub fn remove_leftovers(root: &Path) {
    remove_killed_runs(root);
    let state = root.join(super::STATE_DIR);
    // Never through a link: `.rsbuilder` must be the project's own directory.
    if !std::fs::symlink_metadata(&state).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&state) else {
        return;
    };
    let mut removed = false;
    for e in entries.flatten() {
        let is_fmt = e.file_name().to_string_lossy().starts_with(FMT_PREFIX)
            && e.file_type().is_ok_and(|t| t.is_dir());
        if is_fmt {
            removed |= std::fs::remove_dir_all(e.path()).is_ok();
        }
    }
    if removed {
        let _ = std::fs::remove_dir(&state); // only when empty
    }
}

/// The start of the name of this project's formatting directories in the system's temporary
/// directory: `rsbuilder-fmt-` and 16 hex digits of the SHA-256 of the project's canonical
/// path, so the next command in the same project finds what a killed run left.
fn tmp_prefix(root: &Path) -> String {
    use sha2::Digest;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("rsbuilder-fmt-{hex}-")
}

/// Removes this project's formatting directories a killed run left in the system's temporary
/// directory. Called with the project lock held, so no running command of this project uses
/// them. Only real directories owned by this user are removed (`remove_dir_all` does not
/// follow links).
fn remove_killed_runs(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let prefix = tmp_prefix(root);
    let tmp = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&tmp) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() && meta.uid() == me {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A temporary directory for one rustfmt run, in the system's temporary directory. Not under
/// the project's `.rsbuilder`: rustfmt and this module reach it by path, and another process
/// could swap `.rsbuilder` for a symbolic link while the run writes, sending the writes (and
/// the removal at the end) outside the project. rustfmt gets its configuration explicitly, so
/// nothing in the temporary directory applies. The name starts with [`tmp_prefix`], so the
/// next command in this project removes what a killed run left ([`remove_leftovers`]).
fn fmt_dir(root: &Path) -> Option<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&tmp_prefix(root))
        .tempdir()
        .ok()
}

fn format_in_one_run(
    files: &[(&Path, &str)],
    edition: &str,
    config: Option<&Path>,
    root: &Path,
) -> Option<Vec<Option<String>>> {
    let tmp = fmt_dir(root)?;
    format_in(&tmp, files, edition, config)
}

fn format_in(
    tmp: &tempfile::TempDir,
    files: &[(&Path, &str)],
    edition: &str,
    config: Option<&Path>,
) -> Option<Vec<Option<String>>> {
    let write = |rel: &Path, text: &str| -> Option<()> {
        let abs = tmp.path().join(rel);
        std::fs::create_dir_all(abs.parent()?).ok()?;
        std::fs::write(abs, text).ok()
    };
    for (rel, text) in files {
        if !is_plain_relative(rel) {
            return None;
        }
        // rustfmt's default `newline_style = "Auto"` keeps a file's CRLF line endings but
        // writes LF for standard input; LF in makes both the same.
        write(rel, &text.replace("\r\n", "\n"))?;
    }
    for (rel, text) in files {
        for name in out_of_line_modules(text) {
            // Per directory rustfmt may search, `name.rs` or `name/mod.rs` (never both,
            // which rustfmt refuses).
            for pair in module_candidates(rel, &name).chunks(2) {
                if !pair.iter().any(|c| tmp.path().join(c).exists()) {
                    write(&pair[0], "")?;
                }
            }
        }
    }
    let mut cmd = rustfmt();
    cmd.args(["--edition", edition])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Always explicit: without a project configuration, an empty file (rustfmt's defaults),
    // so no rustfmt.toml above the temporary directory applies.
    let defaults = tmp.path().join(".rsbuilder-defaults-rustfmt.toml");
    let config = match config {
        Some(config) => config.to_path_buf(),
        None => {
            std::fs::write(&defaults, "").ok()?;
            defaults
        }
    };
    cmd.arg("--config-path").arg(config);
    cmd.args(files.iter().map(|(rel, _)| tmp.path().join(rel)));
    if !cmd.status().ok()?.success() {
        return None;
    }
    files
        .iter()
        .map(|(rel, _)| {
            std::fs::read_to_string(tmp.path().join(rel))
                .ok()
                .map(|s| Some(s).filter(|s| !s.trim().is_empty()))
        })
        .collect()
}

fn is_plain_relative(rel: &Path) -> bool {
    !rel.as_os_str().is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The names of `mod name;` declarations in `text` (lexed, so comments and strings do not
/// count; raw identifiers lose their `r#`).
fn out_of_line_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    // The last two tokens that are not whitespace or comments.
    let mut last: [Option<(TokenKind, &str)>; 2] = [None, None];
    let mut offset = 0;
    for token in tokenize(text, FrontmatterAllowed::No) {
        let len = token.len as usize;
        let src = &text[offset..offset + len];
        offset += len;
        match token.kind {
            TokenKind::Whitespace
            | TokenKind::LineComment { .. }
            | TokenKind::BlockComment { .. } => continue,
            TokenKind::Semi => {
                if let [
                    Some((TokenKind::Ident, "mod")),
                    Some((TokenKind::Ident | TokenKind::RawIdent, name)),
                ] = last
                {
                    names.push(name.trim_start_matches("r#").to_owned());
                }
            }
            _ => {}
        }
        last = [last[1], Some((token.kind, src))];
    }
    names
}

/// Whether `text` may hold a `path = ...` attribute argument (`#[path = "x.rs"]`,
/// `#[cfg_attr(unix, path = "x.rs")]`), judged on the raw text, not on tokens: the word
/// `path` followed, after any whitespace, by `=` (not `==`) or by `/` (a comment that may
/// hide the `=`). A lexer could read the text differently from rustfmt (a shebang line, an
/// edition's literal rules) and miss an attribute; the raw text errs on the side of yes (a
/// `path =` in a string or comment matches too), which only costs speed.
fn has_path_attribute(text: &str) -> bool {
    text.match_indices("path").any(|(at, word)| {
        let rest = text[at + word.len()..].trim_start();
        (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with('/')
    })
}

/// Where rustfmt may look for the file of `mod name;` declared in `rel`: next to it (for
/// `lib.rs`, `main.rs`, `mod.rs` and files rustfmt takes as crate roots) and in the directory
/// named after it (for other files), each as `name.rs` and `name/mod.rs`.
fn module_candidates(rel: &Path, name: &str) -> Vec<PathBuf> {
    let parent = rel.parent().unwrap_or(Path::new(""));
    let mut dirs = vec![parent.to_path_buf()];
    if let Some(stem) = rel.file_stem()
        && !matches!(stem.to_str(), Some("lib" | "main" | "mod"))
    {
        dirs.push(parent.join(stem));
    }
    dirs.iter()
        .flat_map(|d| [d.join(format!("{name}.rs")), d.join(name).join("mod.rs")])
        .collect()
}

/// The rustfmt command, started in the file system's root. Through rustup's proxy, the
/// working directory chooses the toolchain: a `rust-toolchain.toml` a checkout carries (or one
/// planted in a shared temporary directory) may name any binary as its `rustfmt`, and
/// rsbuilder runs nothing a checkout names. The files and the configuration are given by
/// absolute path.
fn rustfmt() -> Command {
    let mut cmd = Command::new("rustfmt");
    cmd.current_dir("/");
    cmd
}

/// `text` formatted by one rustfmt process reading standard input, with the configuration
/// that applies in `root` ([`config_file`]; rustfmt's defaults without one); `None` when
/// rustfmt is missing or fails.
pub fn format_stdin(text: &str, edition: &str, root: &Path) -> Option<String> {
    let config = config_file(root).unwrap_or_else(|| PathBuf::from("/dev/null"));
    let mut child = rustfmt()
        .args(["--edition", edition])
        .arg("--config-path")
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = text.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()
        .filter(|s| !s.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rustfmt process starts in the file system's root, where no checkout's
    /// `rust-toolchain.toml` can choose the binary rustup's proxy runs (the project root did,
    /// for the per-file path); `tests/cli/rustfmt_dir.rs` runs a whole command so.
    #[test]
    fn path_attributes_are_found_by_their_tokens() {
        for yes in [
            "#[path = \"x.rs\"]\nmod x;",
            "#[cfg_attr(unix, path = \"/abs/x.rs\")] mod x;",
            "#[ path /* c */ = \"x\"] mod x;",
            "#[r#path = \"x\"] mod x;",
        ] {
            assert!(has_path_attribute(yes), "{yes}");
        }
        // Read on the raw text: what a lexer might take for a string or a shebang line does
        // not hide it.
        for yes in [
            "#!/usr/bin/env x\"\n#[path = \"/abs/evil.rs\"]\nmod evil;\n// \"\n",
            "m!(#\"a\");\n#[path=\"/abs/evil.rs\"] mod evil; const _:&str=\"\";",
            "#[path\n=\n\"x\"] mod x;",
        ] {
            assert!(has_path_attribute(yes), "{yes}");
        }
        for no in [
            "use std::path::Path;\nfn f(path: &Path) -> bool { path == Path::new(\"x\") }",
            "fn f(path: &str) { let p = path; }",
        ] {
            assert!(!has_path_attribute(no), "{no}");
        }
    }

    #[test]
    fn rustfmt_starts_in_the_file_systems_root() {
        assert_eq!(rustfmt().get_current_dir(), Some(Path::new("/")));
        let source = include_str!("rustfmt.rs");
        let spawns = source
            .matches(&["Command::new(", "\"rustfmt\")"].concat())
            .count();
        assert_eq!(spawns, 1, "rustfmt is started only through rustfmt()");
    }

    /// A killed run's formatting directory in the system's temporary directory is removed by
    /// the next command in the same project, and another project's is left alone.
    #[test]
    fn the_next_command_removes_a_killed_runs_directory() {
        let project = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let tmp = std::env::temp_dir();
        let mine = tmp.join(format!("{}killed", tmp_prefix(project.path())));
        let theirs = tmp.join(format!("{}killed", tmp_prefix(other.path())));
        for d in [&mine, &theirs] {
            std::fs::create_dir_all(d.join("src")).unwrap();
            std::fs::write(d.join("src/lib.rs"), "fn f() {}\n").unwrap();
        }
        remove_leftovers(project.path());
        assert!(!mine.exists(), "this project's leftover is removed");
        assert!(theirs.exists(), "another project's directory is left alone");
        std::fs::remove_dir_all(&theirs).unwrap();
    }

    #[test]
    fn module_declarations_are_found_by_syntax() {
        let text = "pub mod a;\n// mod b;\nmod r#type;\nmod inline { }\nconst S: &str = \"mod c;\";\n#[cfg(test)]\nmod tests;\n";
        assert_eq!(out_of_line_modules(text), ["a", "type", "tests"]);
    }

    #[test]
    fn candidates_follow_rustfmt_module_lookup() {
        assert_eq!(
            module_candidates(Path::new("src/lib.rs"), "api"),
            [PathBuf::from("src/api.rs"), PathBuf::from("src/api/mod.rs")]
        );
        assert_eq!(
            module_candidates(Path::new("src/webhook.rs"), "v1"),
            [
                PathBuf::from("src/v1.rs"),
                PathBuf::from("src/v1/mod.rs"),
                PathBuf::from("src/webhook/v1.rs"),
                PathBuf::from("src/webhook/v1/mod.rs"),
            ]
        );
    }

    /// One run gives what separate runs give, including for files whose modules are missing
    /// and when one file does not parse (then every file falls back to its own run).
    #[test]
    fn one_run_formats_like_separate_runs() {
        if format_stdin("fn main() {}\n", "2024", Path::new(".")).is_none() {
            assert!(
                std::env::var_os("CI").is_none(),
                "rustfmt is needed under CI=true"
            );
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let lib = "pub mod missing;\npub   mod controller;\nfn  f( ) -> u8 { 1 }\n";
        let controller = "pub fn   run( a: u8 )->u8{a}\r\n#[cfg(test)]\r\nmod tests;\r\n";
        let broken = "fn ( {\n";
        let files = [
            (Path::new("src/lib.rs"), lib),
            (Path::new("src/controller.rs"), controller),
        ];
        assert!(
            format_in_one_run(&files, "2024", None, root.path()).is_some(),
            "one run for both files"
        );
        let one = format_all(&files, "2024", root.path());
        let separate: Vec<_> = files
            .iter()
            .map(|(_, t)| format_stdin(t, "2024", root.path()))
            .collect();
        assert_eq!(one, separate);
        assert_eq!(
            one[0].as_deref(),
            Some("pub mod controller;\npub mod missing;\nfn f() -> u8 {\n    1\n}\n")
        );
        let with_broken = [files[0], (Path::new("src/broken.rs"), broken)];
        let out = format_all(&with_broken, "2024", root.path());
        assert_eq!(out[0], separate[0]);
        assert_eq!(out[1], None);
    }
}
