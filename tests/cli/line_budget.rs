//! The size of what a user owns after the quick start: in the AIJob
//! project (`init`, `create api`, `create webhook --defaulting --programmatic-validation`),
//! the user-owned Rust outside test modules is at most 280 lines (`src/main.rs` at most 55: the
//! webhook server is the runtime's), and a second kind adds at most 150. The machinery is the
//! runtime's (`rsbuilder-runtime/`, tool-owned), so it does not count.
//!
//! Counted: every `.rs` file of the project except `rsbuilder-runtime/` (tool-owned),
//! `.rsbuilder/` (the records of tool-owned files) and `tests/` (integration tests, test code
//! as a whole). In a file, a line counts unless it is blank, inside a `#[cfg(test)]` module,
//! or part of the license header `init` writes at the top of each file. Comments and doc
//! comments count: the user reads and owns them too. The code-only figure (comments left
//! out as well) is printed beside it.

use std::path::Path;

use assert_cmd::Command;

/// Lines counted in one source text: (lines, of which code).
fn count(text: &str) -> (usize, usize) {
    let mut lines = text.lines().peekable();
    // The license header: the leading comment block of a file that starts with it.
    if text.starts_with("// Copyright") {
        while lines.next_if(|l| l.starts_with("//")).is_some() {}
    }
    let (mut all, mut code) = (0, 0);
    let mut in_tests = false;
    let mut cfg_test = false;
    for line in lines {
        if in_tests {
            // rustfmt closes a top-level module with `}` in the first column.
            in_tests = line != "}";
            continue;
        }
        let t = line.trim();
        if t == "#[cfg(test)]" {
            cfg_test = true;
            continue;
        }
        if cfg_test {
            cfg_test = false;
            if t.starts_with("mod ") && t.ends_with('{') {
                in_tests = true;
                continue;
            }
            // `#[cfg(test)]` on something else: count the attribute and the item.
            all += 1;
            code += 1;
        }
        if t.is_empty() {
            continue;
        }
        all += 1;
        if !t.starts_with("//") {
            code += 1;
        }
    }
    (all, code)
}

/// Every counted file of the project in `dir`: (relative path, lines, code lines), sorted.
fn user_owned(dir: &Path) -> Vec<(String, usize, usize)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| {
            let rel = e.path().strip_prefix(dir).unwrap();
            !["rsbuilder-runtime", ".rsbuilder", "tests", "target"]
                .iter()
                .any(|skip| rel.starts_with(skip))
        })
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let (all, code) = count(&std::fs::read_to_string(e.path()).unwrap());
            (rel, all, code)
        })
        .collect();
    files.sort();
    files
}

fn rsbuilder(dir: &Path, args: &[&str]) {
    Command::cargo_bin("rsbuilder")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .assert()
        .success();
}

fn totals(files: &[(String, usize, usize)]) -> (usize, usize) {
    files
        .iter()
        .fold((0, 0), |(a, c), (_, all, code)| (a + all, c + code))
}

fn print(title: &str, files: &[(String, usize, usize)]) {
    println!("{title}:");
    for (path, all, code) in files {
        println!("  {all:4} lines ({code:4} code)  {path}");
    }
    let (all, code) = totals(files);
    println!("  {all:4} lines ({code:4} code)  total");
}

#[test]
fn the_quick_start_project_owns_at_most_280_lines_and_a_second_kind_adds_at_most_150() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ai-operator");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder(
        &dir,
        &[
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
        ],
    );
    rsbuilder(
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
        ],
    );
    rsbuilder(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "AIJob",
            "--defaulting",
            "--programmatic-validation",
        ],
    );
    let first = user_owned(&dir);
    print("user-owned Rust of the quick start (AIJob)", &first);
    let names: Vec<&str> = first.iter().map(|(p, _, _)| p.as_str()).collect();
    for want in [
        "src/api/v1/aijob_types.rs",
        "src/controller/aijob_controller.rs",
        "src/webhook/v1/aijob_webhook.rs",
        "src/main.rs",
    ] {
        assert!(names.contains(&want), "{want} not counted: {names:?}");
    }
    let (lines, _) = totals(&first);
    assert!(
        lines <= 280,
        "the quick start owns {lines} lines, more than 280"
    );
    let main = first.iter().find(|(p, _, _)| p == "src/main.rs").unwrap();
    assert!(main.1 <= 55, "src/main.rs has {} lines", main.1);
    let controller = first
        .iter()
        .find(|(p, _, _)| p == "src/controller/aijob_controller.rs")
        .unwrap();
    assert!(
        controller.1 <= 120,
        "the controller has {} lines",
        controller.1
    );

    rsbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ai",
            "--version",
            "v1",
            "--kind",
            "Inference",
        ],
    );
    let second = user_owned(&dir);
    print("after a second kind (Inference)", &second);
    let added = totals(&second).0 - lines;
    println!("the second kind adds {added} lines");
    assert!(
        added <= 150,
        "a second kind adds {added} lines, more than 150"
    );
}

#[test]
fn test_modules_blank_lines_and_the_license_header_do_not_count() {
    let text = "// Copyright 2026.\n//\n// Licensed.\n\n//! Docs.\n\nuse std::fmt;\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n\n#[cfg(test)]\nfn helper() {}\n";
    // `//! Docs.`, `use std::fmt;`, and the `#[cfg(test)]` function with its attribute.
    assert_eq!(count(text), (4, 3));
}
