//! `init` writes its Rust files without running rustfmt (most of the command's time): their
//! templates render already formatted. This checks it for every template and the inputs that
//! reach them: the shortest and longest project names and domains, each license and owner, and
//! both scopes. User input lands only in comments (rustfmt does not rewrap them) and in string
//! literals; the longest valid names keep those lines within rustfmt's width, except the Lease
//! name, a struct field rustfmt leaves as it is whatever its length. Skipped without rustfmt
//! (failing under CI=true).

use crate::common;

use std::io::Write as _;
use std::process::{Command, Stdio};

use rsbuilder::scaffold::init::{InitOptions, License, files, is_tool_owned};

/// rustfmt's output for `text` (edition 2024, default configuration: run in an empty directory
/// so no rustfmt.toml applies), or `None` when rustfmt is not installed.
fn rustfmt(text: &str, cwd: &std::path::Path) -> Option<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to rustfmt");
    let out = child.wait_with_output().expect("rustfmt runs");
    assert!(
        out.status.success(),
        "rustfmt failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("UTF-8"))
}

/// Option sets covering what the Rust templates read: name lengths at both ends (a project
/// name is a DNS-1123 label of at most 63 characters; the Lease name `<name>.<domain>` at most
/// 253), every license, an empty and a long owner, both scopes.
fn option_sets() -> Vec<InitOptions> {
    let longest_name = format!("a{}", "b".repeat(62));
    // 63 + 1 + 189 = 253 characters of Lease name, the most validate() accepts.
    let longest_domain = format!(
        "{}.{}.{}.com",
        "d".repeat(63),
        "e".repeat(63),
        "f".repeat(57)
    );
    let mut sets = Vec::new();
    for (name, domain) in [
        ("a", "io"),
        ("ai-operator", "ai.example.com"),
        (longest_name.as_str(), "io"),
        (longest_name.as_str(), longest_domain.as_str()),
    ] {
        for license in [License::None, License::Apache2, License::Mit] {
            for owner in ["", &"Owner ".repeat(30)] {
                for namespaced in [false, true] {
                    sets.push(InitOptions {
                        domain: domain.into(),
                        repo: format!("github.com/example/{name}"),
                        project_name: name.into(),
                        owner: owner.trim_end().into(),
                        license: license.clone(),
                        namespaced,
                        multigroup: false,
                        year: 2026,
                        runtime: Default::default(),
                    });
                }
            }
        }
    }
    sets
}

#[test]
fn every_init_rust_template_renders_rustfmt_clean() {
    let empty = tempfile::tempdir().expect("temp dir");
    if rustfmt("fn main() {}\n", empty.path()).is_none() {
        common::missing("rustfmt is not installed");
        return;
    }
    let mut checked = 0;
    for opts in option_sets() {
        opts.validate()
            .unwrap_or_else(|e| panic!("the test's options are valid: {e}"));
        for (path, text) in files(&opts).unwrap() {
            // The runtime's files are tool-owned: written byte for byte, never formatted.
            if !path.ends_with(".rs") || is_tool_owned(path) {
                continue;
            }
            let formatted = rustfmt(&text, empty.path()).expect("rustfmt ran before");
            assert!(
                formatted == text,
                "{path} with project name {:?}, domain {:?}, license {:?}, owner {:?}: rustfmt changes it:\n{}",
                opts.project_name,
                opts.domain,
                opts.license,
                opts.owner,
                diff(&text, &formatted)
            );
            checked += 1;
        }
    }
    // src/lib.rs, src/main.rs and tests/e2e.rs for each of the 48 option sets.
    assert_eq!(checked, 48 * 3);
}

/// The lines that differ, for the failure message.
fn diff(a: &str, b: &str) -> String {
    let mut out = String::new();
    for (x, y) in a.lines().zip(b.lines()) {
        if x != y {
            out.push_str(&format!("- {x}\n+ {y}\n"));
        }
    }
    if a.lines().count() != b.lines().count() {
        out.push_str("(line counts differ)\n");
    }
    out
}
