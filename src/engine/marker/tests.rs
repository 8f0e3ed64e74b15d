use super::hash::opens_block_scalar;
use super::*;

/// A marker in code cargo does not compile (a `#[cfg(any())]` item or block, a
/// `macro_rules!` body) does not count; before, it received the insert.
#[test]
fn markers_in_code_cargo_does_not_compile_do_not_count() {
    for (text, why) in [
        (
            "#[cfg(any())]\nmod off {\n    // +kubebuilder:scaffold:controllers\n}\nfn main() {}\n",
            "cfg is never true",
        ),
        (
            "fn main() {\n    #[cfg(any())]\n    {\n        // +kubebuilder:scaffold:controllers\n    }\n}\n",
            "cfg is never true",
        ),
        (
            "macro_rules! m {\n    () => {\n        // +kubebuilder:scaffold:controllers\n    };\n}\nfn main() {}\n",
            "macro_rules!",
        ),
        (
            "fn main() {\n    macro_rules! m {\n        () => {\n            // +kubebuilder:scaffold:controllers\n        };\n    }\n}\n",
            "macro_rules!",
        ),
    ] {
        let err = rs(text).unwrap_err();
        assert!(err.to_string().contains(why), "{text}: {err}");
    }
    // The same marker in compiled code still counts.
    let text = "#[cfg(test)]\nmod on {\n    // +kubebuilder:scaffold:api-kinds\n}\n";
    assert_eq!(items(text).unwrap(), 2);
}

/// A marker line inside a quoted YAML string running over lines, or inside a Dockerfile
/// heredoc, is text of the value, not a marker: before, it received the insert.
#[test]
fn markers_inside_yaml_strings_and_dockerfile_heredocs_do_not_count() {
    let yaml = Path::new("config/x.yaml");
    for text in [
        "a: \"one\n  # +kubebuilder:scaffold:crdkustomizeresource\n  two\"\nb: 1\n",
        "a: 'one\n  # +kubebuilder:scaffold:crdkustomizeresource\n  two'\nb: 1\n",
        "a: |\n  x\n  # +kubebuilder:scaffold:crdkustomizeresource\nb: 1\n",
    ] {
        let err = locate(yaml, text, "crdkustomizeresource").unwrap_err();
        assert!(
            matches!(&err, MarkerError::Missing { ignored, .. } if ignored.len() == 1),
            "{text}: {err}"
        );
    }
    // A real comment line between keys still counts.
    let text = "a: \"one two\"\n# +kubebuilder:scaffold:crdkustomizeresource\nb: 1\n";
    assert_eq!(locate(yaml, text, "crdkustomizeresource").unwrap(), 1);
    let docker = Path::new("Dockerfile");
    let text = "FROM x\nRUN <<EOF\necho hi\n# +kubebuilder:scaffold:copy\nEOF\n";
    let err = locate(docker, text, "copy").unwrap_err();
    assert!(
        err.to_string().contains("inside a Dockerfile heredoc"),
        "{err}"
    );
    let text = "FROM x\nRUN <<-\"EOF\"\n\techo hi\n\tEOF\n# +kubebuilder:scaffold:copy\n";
    assert_eq!(locate(docker, text, "copy").unwrap(), 4);
}

/// A comment line inside a YAML flow collection written over several lines is a real
/// comment, but a block line inserted there breaks the file; a Dockerfile comment line
/// inside an instruction continued with `\` (or the escape a directive names) would have
/// the insert joined to that instruction. Before, both received the insert.
#[test]
fn markers_inside_yaml_flow_collections_and_continued_dockerfile_lines_do_not_count() {
    let yaml = Path::new("config/x.yaml");
    for text in [
        "resources: [\n  a.yaml,\n  # +kubebuilder:scaffold:crdkustomizeresource\n  b.yaml]\n",
        "a: {\n  x: 1,\n  # +kubebuilder:scaffold:crdkustomizeresource\n}\nb: 1\n",
        "a:\n  - [1,\n    # +kubebuilder:scaffold:crdkustomizeresource\n    2]\n",
    ] {
        let err = locate(yaml, text, "crdkustomizeresource").unwrap_err();
        assert!(
            err.to_string().contains("inside a YAML flow collection"),
            "{text}: {err}"
        );
    }
    // After the collection closes, and in a one-line collection's file, it counts.
    let text = "resources: [\n  a.yaml]\n# +kubebuilder:scaffold:crdkustomizeresource\n";
    assert_eq!(locate(yaml, text, "crdkustomizeresource").unwrap(), 2);
    let text = "a: [1, 2]\nb:\n  # +kubebuilder:scaffold:crdkustomizeresource\n  - 3\n";
    assert_eq!(locate(yaml, text, "crdkustomizeresource").unwrap(), 2);

    let docker = Path::new("Dockerfile");
    for text in [
        "FROM x\nRUN a \\\n# +kubebuilder:scaffold:copy\n  && b\n",
        "FROM x\nRUN a \\\n\n  # note\n# +kubebuilder:scaffold:copy\n  b\n",
        "# escape=`\nFROM x\nRUN a `\n# +kubebuilder:scaffold:copy\n  b\n",
    ] {
        let err = locate(docker, text, "copy").unwrap_err();
        assert!(
            err.to_string().contains("continued from the line before"),
            "{text}: {err}"
        );
    }
    // Once the instruction ends, the marker counts; with `# escape=` a backslash does not
    // continue a line.
    let text = "FROM x\nRUN a \\\n  b\n# +kubebuilder:scaffold:copy\n";
    assert_eq!(locate(docker, text, "copy").unwrap(), 3);
    let text = "# escape=`\nFROM x\nRUN dir c:\\\n# +kubebuilder:scaffold:copy\n";
    assert_eq!(locate(docker, text, "copy").unwrap(), 3);
}

fn rs(text: &str) -> Result<usize, MarkerError> {
    locate(Path::new("src/main.rs"), text, "controllers")
}

/// `text` as a version module, with its item marker `api-kinds`.
fn items(text: &str) -> Result<usize, MarkerError> {
    locate(Path::new("src/api/v1/mod.rs"), text, "api-kinds")
}

/// An item marker counts only among a module's items, and a statement marker only in a
/// block, in code cargo compiles (cfg evaluated). Before, these received the insert.
#[test]
fn markers_count_only_where_their_code_belongs_and_is_compiled() {
    let m = "// +kubebuilder:scaffold:api-kinds";
    for (text, why) in [
        (format!("fn f() {{\n{m}\n}}\n"), "inside a function body"),
        (
            format!("const _: () = {{\n{m}\n}};\n"),
            "inside a function body",
        ),
        (
            format!("static F: fn() = || {{\n{m}\n}};\n"),
            "inside a function body",
        ),
        (
            format!("trait T {{\n    fn d() {{\n{m}\n    }}\n}}\n"),
            "inside a function body",
        ),
        (format!("impl S {{\n{m}\n}}\n"), "impl or trait body"),
        (
            format!("enum E {{\n    A,\n{m}\n}}\n"),
            "struct, enum or union body",
        ),
        (
            format!("struct S2 {{\n    a: u8,\n{m}\n}}\n"),
            "struct, enum or union body",
        ),
        (format!("extern \"C\" {{\n{m}\n}}\n"), "extern block"),
        (format!("some_macro! {{\n{m}\n}}\n"), "macro invocation"),
        (format!("pub macro m() {{\n{m}\n}}\n"), "does not read"),
        (format!("#[cfg(false)]\nmod x {{\n{m}\n}}\n"), "never true"),
        (
            format!("#[cfg(all(any(), unix))]\nmod x {{\n{m}\n}}\n"),
            "never true",
        ),
        (
            format!("#[cfg(any(any()))]\nmod x {{\n{m}\n}}\n"),
            "never true",
        ),
        (
            format!("#[cfg_attr(all(), cfg(any()))]\nmod x {{\n{m}\n}}\n"),
            "never true",
        ),
        (
            format!("#[cfg(not(any(all())))]\nmod x {{\n{m}\n}}\n"),
            "never true",
        ),
        (
            format!("#[cfg_attr(true, cfg(false))]\nmod x {{\n{m}\n}}\n"),
            "never true",
        ),
        (
            format!("#[cfg(my_own_flag)]\nmod x {{\n{m}\n}}\n"),
            "cannot decide",
        ),
        (
            format!("#[cfg_attr(unix, cfg(false))]\nmod x {{\n{m}\n}}\n"),
            "cannot decide",
        ),
    ] {
        let err = items(&text).unwrap_err();
        assert!(
            matches!(&err, MarkerError::Missing { .. }) && err.to_string().contains(why),
            "{text}: {err}"
        );
    }
    // Compiled module code still counts, under a cfg that may hold or always holds.
    for (text, line) in [
        (format!("pub mod a;\n{m}\n"), 1),
        (format!("mod x {{\n    pub mod a;\n{m}\n}}\n"), 2),
        (format!("#[cfg(test)]\nmod x {{\n{m}\n}}\n"), 2),
        (
            format!("#[cfg(all(unix, not(any())))]\nmod x {{\n{m}\n}}\n"),
            2,
        ),
        (format!("#[cfg(feature = \"x\")]\nmod x {{\n{m}\n}}\n"), 2),
        (
            format!("#[cfg_attr(false, cfg(false))]\nmod x {{\n{m}\n}}\n"),
            2,
        ),
        (format!("#[cfg(true)]\nmod x {{\n{m}\n}}\n"), 2),
    ] {
        assert_eq!(items(&text), Ok(line), "{text}");
    }
    // A statement marker: in a block, not among items, not in a never-compiled block.
    let c = "// +kubebuilder:scaffold:controllers";
    assert!(
        rs(&format!("{c}\nfn main() {{}}\n"))
            .unwrap_err()
            .to_string()
            .contains("among a module's items")
    );
    for text in [
        format!("fn main() {{\n    #[cfg(false)]\n    {{\n{c}\n    }}\n}}\n"),
        format!("fn main() {{\n    #[cfg(all(any(), unix))]\n    {{\n{c}\n    }}\n}}\n"),
    ] {
        assert!(
            rs(&text).unwrap_err().to_string().contains("never true"),
            "{text}"
        );
    }
    assert_eq!(
        rs(&format!(
            "async fn run() {{\n    if ok {{\n{c}\n    }}\n}}\n"
        )),
        Ok(2)
    );
}

#[test]
fn a_statement_position_marker_is_found() {
    let text = "fn main() {\n    let a = 1;\n    // +kubebuilder:scaffold:controllers\n}\n";
    assert_eq!(rs(text), Ok(2));
    let out = insert(Path::new("src/main.rs"), text, "controllers", "run_a();").unwrap();
    assert_eq!(
        out,
        "fn main() {\n    let a = 1;\n    run_a();\n    // +kubebuilder:scaffold:controllers\n}\n"
    );
    let again = insert(Path::new("src/main.rs"), &out, "controllers", "run_a();").unwrap();
    assert_eq!(again, out);
}

#[test]
fn item_and_match_arm_and_inner_attribute_positions_count() {
    assert_eq!(items("// +kubebuilder:scaffold:api-kinds\nmod a;\n"), Ok(0));
    assert_eq!(
        items("#![allow(unused)]\n// +kubebuilder:scaffold:api-kinds\n"),
        Ok(1)
    );
    assert_eq!(
        rs(
            "fn f(x: u8) -> u8 {\n    match x {\n        1 => 2,\n        // +kubebuilder:scaffold:controllers\n        _ => 0,\n    }\n}\n"
        ),
        Ok(3)
    );
}

#[test]
fn a_marker_in_a_string_literal_does_not_count() {
    let text = "const S: &str = \"\n// +kubebuilder:scaffold:controllers\n\";\n";
    let err = rs(text).unwrap_err();
    assert_eq!(
        err,
        MarkerError::Missing {
            path: "src/main.rs".into(),
            comment: "// +kubebuilder:scaffold:controllers".into(),
            ignored: vec![(2, "inside a literal")],
        }
    );
    assert!(err.to_string().contains("src/main.rs has no `// +kubebuilder:scaffold:controllers` marker (line 2 holds its text inside a literal"), "{err}");
    let raw = "const S: &str = r#\"\n// +kubebuilder:scaffold:controllers\n\"#;\n";
    assert!(matches!(rs(raw), Err(MarkerError::Missing { .. })));
}

#[test]
fn a_marker_in_a_block_comment_does_not_count_even_nested() {
    let text = "/* outer /* inner */\n// +kubebuilder:scaffold:controllers\n*/\nfn main() {}\n";
    assert_eq!(
        rs(text),
        Err(MarkerError::Missing {
            path: "src/main.rs".into(),
            comment: "// +kubebuilder:scaffold:controllers".into(),
            ignored: vec![(2, "inside a /* */ comment")],
        })
    );
}

#[test]
fn char_literals_and_lifetimes_do_not_confuse_the_lexer() {
    let text = "fn f<'a>(x: &'a str) -> char {\n    let _ = '\"';\n    // +kubebuilder:scaffold:controllers\n    'x'\n}\n";
    assert_eq!(rs(text), Ok(2));
}

#[test]
fn a_marker_inside_an_expression_or_after_code_does_not_count() {
    let text = "fn f() -> u8 {\n    let a = 1\n        // +kubebuilder:scaffold:controllers\n        + 2;\n    a\n}\n";
    assert!(matches!(rs(text), Err(MarkerError::Missing { ignored, .. }) if ignored[0].0 == 3));
    let text = "fn f() {} // +kubebuilder:scaffold:controllers\n";
    assert!(
        matches!(rs(text), Err(MarkerError::Missing { ignored, .. }) if ignored == [(1, "after code on the same line")])
    );
    let doc = "/// // +kubebuilder:scaffold:controllers\nfn f() {}\n";
    assert!(matches!(rs(doc), Err(MarkerError::Missing { .. })));
}

#[test]
fn a_duplicated_marker_names_both_lines() {
    let text = "fn main() {\n    // +kubebuilder:scaffold:controllers\n    // +kubebuilder:scaffold:controllers\n}\n";
    let err = rs(text).unwrap_err();
    assert_eq!(
        err,
        MarkerError::Duplicated {
            path: "src/main.rs".into(),
            comment: "// +kubebuilder:scaffold:controllers".into(),
            lines: vec![2, 3],
        }
    );
    assert!(err.to_string().contains("on lines 2, 3"), "{err}");
}

#[test]
fn yaml_markers_are_whole_comment_lines_outside_block_scalars() {
    let path = Path::new("config/crd/kustomization.yaml");
    let ok = "resources:\n# +kubebuilder:scaffold:crdkustomizeresource\n";
    assert_eq!(locate(path, ok, "crdkustomizeresource"), Ok(1));
    let in_scalar =
        "data:\n  script: |\n    # +kubebuilder:scaffold:crdkustomizeresource\nresources: []\n";
    assert!(matches!(
        locate(path, in_scalar, "crdkustomizeresource"),
        Err(MarkerError::Missing { ignored, .. }) if ignored == [(3, "inside a YAML block scalar (`|` or `>`)")]
    ));
    let trailing = "resources: [] # +kubebuilder:scaffold:crdkustomizeresource\n";
    assert!(matches!(
        locate(path, trailing, "crdkustomizeresource"),
        Err(MarkerError::Missing { .. })
    ));
    let twice = "# +kubebuilder:scaffold:crdkustomizeresource\n  # +kubebuilder:scaffold:crdkustomizeresource\n";
    assert!(matches!(
        locate(path, twice, "crdkustomizeresource"),
        Err(MarkerError::Duplicated { lines, .. }) if lines == [1, 2]
    ));
}

#[test]
fn toml_markers_outside_multi_line_strings() {
    let path = Path::new("Cargo.toml");
    let text = "[package]\ndescription = \"\"\"\n# +kubebuilder:scaffold:dependencies\n\"\"\"\n[dependencies]\n# +kubebuilder:scaffold:dependencies\n";
    assert_eq!(locate(path, text, "dependencies"), Ok(5));
}

#[test]
fn block_scalar_indicators_after_properties_and_complex_keys() {
    for line in [
        "an: &x |",
        "tg: !!str |",
        "tl: !foo |-",
        "at: &y !!str >",
        "? |",
    ] {
        assert!(opens_block_scalar(line), "{line}");
    }
    let yaml = Path::new("config/x.yaml");
    let text = "an: &x |\n  # +kubebuilder:scaffold:crdkustomizeresource\nb: 1\n";
    assert!(locate(yaml, text, "crdkustomizeresource").is_err());
}

#[test]
fn block_scalar_indicators() {
    for yes in ["key: |", "key: >-", "- |", "key: |2 # c", "|"] {
        assert!(opens_block_scalar(yes), "{yes}");
    }
    for no in ["key: a|b", "key: 'x'", "key:", "a >= b"] {
        assert!(!opens_block_scalar(no), "{no}");
    }
}

/// An insert that turns a file that reads as Rust, YAML or TOML into one that does not is
/// refused naming the marker's line: a `controllers` marker between match arms, a module
/// marker inside a `use` list, a YAML marker at column 0 under an indented list. Before,
/// each received the insert (exit 0) and the project no longer built.
#[test]
fn an_insert_that_breaks_the_file_is_refused_at_the_marker() {
    let main = Path::new("src/main.rs");
    let text = "fn main() {\n    match x {\n        1 => {}\n        // +kubebuilder:scaffold:controllers\n        _ => {}\n    }\n}\n";
    let err = insert(main, text, "controllers", "runner.spawn(x);").unwrap_err();
    assert!(
        matches!(
            &err,
            MarkerError::Breaks {
                line: 4,
                format: "Rust",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().starts_with(
            "src/main.rs:4: the `// +kubebuilder:scaffold:controllers` marker stands where"
        ),
        "{err}"
    );
    let text =
        "use std::{\n    fmt,\n    // +kubebuilder:scaffold:controller-modules\n    io,\n};\n";
    let err = insert(
        Path::new("src/controller/mod.rs"),
        text,
        "controller-modules",
        "pub mod foo_controller;",
    )
    .unwrap_err();
    assert!(matches!(&err, MarkerError::Breaks { line: 3, .. }), "{err}");

    let yaml = Path::new("config/crd/kustomization.yaml");
    let text = "resources:\n  - bases/a.yaml\n# +kubebuilder:scaffold:crdkustomizeresource\n";
    let err = insert(yaml, text, "crdkustomizeresource", "- bases/b.yaml").unwrap_err();
    assert!(
        matches!(
            &err,
            MarkerError::Breaks {
                line: 3,
                format: "YAML",
                ..
            }
        ),
        "{err}"
    );
    // The same marker where the list's items stand takes the insert.
    let text = "resources:\n  - bases/a.yaml\n  # +kubebuilder:scaffold:crdkustomizeresource\n";
    let out = insert(yaml, text, "crdkustomizeresource", "- bases/b.yaml").unwrap();
    assert_eq!(
        out,
        "resources:\n  - bases/a.yaml\n  - bases/b.yaml\n  # +kubebuilder:scaffold:crdkustomizeresource\n"
    );

    let toml = Path::new("Cargo.toml");
    let text = "[dependencies]\nx = [\n  1,\n# +kubebuilder:scaffold:deps\n]\n";
    let err = insert(toml, text, "deps", "b = \"1\"").unwrap_err();
    assert!(
        matches!(&err, MarkerError::Breaks { format: "TOML", .. }),
        "{err}"
    );

    // A file broken before the insert is not the insert's doing: it goes ahead.
    let text = "fn main( {\n// +kubebuilder:scaffold:controllers\n";
    assert!(insert(main, text, "controllers", "x();").is_ok());
}

/// Dockerfile corners: a byte order mark before `# escape=` does not hide the directive; a
/// heredoc word with a dash (`<<EOF-X`) is the whole word; an instruction continued with `\`
/// is not inserted into a Dockerfile whose escape character is a backtick. Before, each
/// marker received the insert.
#[test]
fn dockerfile_escape_after_a_bom_dashed_heredoc_words_and_backtick_escapes() {
    let docker = Path::new("Dockerfile");
    let text = "\u{feff}# escape=`\nFROM x\nRUN a `\n# +kubebuilder:scaffold:copy\n  b\n";
    let err = locate(docker, text, "copy").unwrap_err();
    assert!(
        err.to_string().contains("continued from the line before"),
        "{err}"
    );
    let text = "FROM x\nRUN <<EOF-X\nEOF\n# +kubebuilder:scaffold:copy\nEOF-X\n";
    let err = locate(docker, text, "copy").unwrap_err();
    assert!(
        err.to_string().contains("inside a Dockerfile heredoc"),
        "{err}"
    );
    let text = "# escape=`\nFROM x\n# +kubebuilder:scaffold:copy\n";
    let err = insert(docker, text, "copy", "COPY a \\\n  b /b").unwrap_err();
    assert!(
        matches!(
            &err,
            MarkerError::Breaks {
                line: 3,
                format: "Dockerfile",
                ..
            }
        ),
        "{err}"
    );
    assert!(insert(docker, text, "copy", "COPY a /b").is_ok());
}

/// A fragment's lines inside a comment are not code already there: the insert happens.
/// Before, `/* pub mod foo_controller; */` made `create api` skip the module line, and the
/// project no longer built. Lines that are there as code still make the insert a no-op,
/// and a fragment with its own comment lines is found again on a re-run.
#[test]
fn a_fragment_inside_a_comment_is_not_already_there() {
    let path = Path::new("src/controller/mod.rs");
    let text = "/*\npub mod foo_controller;\n*/\n// pub mod foo_controller;\n// +kubebuilder:scaffold:controller-modules\n";
    let out = insert(path, text, "controller-modules", "pub mod foo_controller;").unwrap();
    assert!(
        out.ends_with("pub mod foo_controller;\n// +kubebuilder:scaffold:controller-modules\n"),
        "{out}"
    );
    assert_eq!(
        insert(path, &out, "controller-modules", "pub mod foo_controller;").unwrap(),
        out
    );
    let fragment = "// The Foo controller.\npub mod foo_controller;";
    let once = insert(
        path,
        "// +kubebuilder:scaffold:controller-modules\n",
        "controller-modules",
        fragment,
    )
    .unwrap();
    assert_eq!(
        insert(path, &once, "controller-modules", fragment).unwrap(),
        once
    );
    // A fragment of comments only is found by its own text.
    let hint = "// runner.spawn(foo);";
    let marker = "// +kubebuilder:scaffold:controller-modules\n";
    let with = insert(path, marker, "controller-modules", hint).unwrap();
    assert!(with.starts_with(hint), "{with}");
    assert_eq!(
        insert(path, &with, "controller-modules", hint).unwrap(),
        with
    );
}

/// A never-true cfg on an `if`, `loop`, `for`, `while` or `match` statement, or at the top of
/// the file (`#![cfg(any())]`), leaves its code out: a marker there does not count. Before,
/// the controller was registered in code cargo does not compile.
#[test]
fn a_never_true_cfg_on_a_control_flow_statement_or_the_file_is_dead_code() {
    for stmt in [
        "if true",
        "loop",
        "for _ in 0..1",
        "while false",
        "match () { () =>",
    ] {
        let close = if stmt.starts_with("match") {
            "}\n    }"
        } else {
            "}"
        };
        let text = format!(
            "fn main() {{\n    #[cfg(any())]\n    {stmt} {{\n        // +kubebuilder:scaffold:controllers\n    {close}\n}}\n"
        );
        let err = rs(&text).unwrap_err();
        assert!(err.to_string().contains("never true"), "{text}: {err}");
    }
    let text = "#![cfg(any())]\nfn main() {\n    // +kubebuilder:scaffold:controllers\n}\n";
    let err = rs(text).unwrap_err();
    assert!(err.to_string().contains("never true"), "{err}");
}

/// An insert that leaves valid YAML but changes a value is refused too: an entry folded into
/// a plain scalar that runs over lines. Before, the annotation silently became
/// `word1 - bases/b.yaml`.
#[test]
fn a_yaml_insert_that_changes_a_value_is_refused() {
    let yaml = Path::new("config/x.yaml");
    let text = "metadata:\n  annotations:\n    note: word1\n      # +kubebuilder:scaffold:crdkustomizeresource\n";
    let err = insert(yaml, text, "crdkustomizeresource", "- bases/b.yaml").unwrap_err();
    assert!(
        matches!(
            &err,
            MarkerError::Breaks {
                line: 4,
                format: "YAML",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("the value \"word1\" would change"),
        "{err}"
    );
    // An empty list that the first insert fills goes ahead.
    let text = "resources:\n# +kubebuilder:scaffold:crdkustomizeresource\n";
    let out = insert(yaml, text, "crdkustomizeresource", "- a.yaml").unwrap();
    assert_eq!(
        out,
        "resources:\n- a.yaml\n# +kubebuilder:scaffold:crdkustomizeresource\n"
    );
    // An insert that only adds values goes ahead.
    let text = "resources:\n- a.yaml\n# +kubebuilder:scaffold:crdkustomizeresource\n";
    let out = insert(yaml, text, "crdkustomizeresource", "- b.yaml").unwrap();
    assert_eq!(
        out,
        "resources:\n- a.yaml\n- b.yaml\n# +kubebuilder:scaffold:crdkustomizeresource\n"
    );
}

/// A fragment's lines in code cargo never compiles (an item under `#[cfg(any())]` or
/// `#[cfg(false)]`) or inside a string that spans lines are not code already there: the insert
/// happens. Before, either made `create api` skip `pub mod foo_types;`, exit 0, and leave a
/// crate that no longer built. One-line strings still count (fragments hold them), and a
/// re-run is a no-op. Lines under a cfg that holds in some builds (`test`) or in a
/// `macro_rules!` body still count: inserting them again would declare the module twice
/// there. The module lists (`has_live_line`, for `InsertSorted`) read lines the same way.
#[test]
fn a_fragment_in_dead_code_or_a_string_is_not_already_there() {
    let path = Path::new("src/api/v1/mod.rs");
    let fragment = "pub mod foo_types;\npub use foo_types::*;";
    let marker = "// +kubebuilder:scaffold:api-kinds\n";
    for hidden in [
        "#[cfg(any())]\nmod disabled {\n    pub mod foo_types;\n    pub use foo_types::*;\n}\n",
        "pub const NOTE: &str = r\"\npub mod foo_types;\npub use foo_types::*;\n\";\n",
        "#[cfg(false)]\nmod disabled {\n    pub mod foo_types;\n    pub use foo_types::*;\n}\n",
    ] {
        let text = format!("{hidden}{marker}");
        let out = insert(path, &text, "api-kinds", fragment).unwrap();
        assert_eq!(out, format!("{hidden}{fragment}\n{marker}"), "{hidden}");
        assert_eq!(insert(path, &out, "api-kinds", fragment).unwrap(), out);
    }
    for counted in [
        "#[cfg(test)]\nmod testing {\n    pub mod foo_types;\n    pub use foo_types::*;\n}\n",
        "macro_rules! m {\n    () => {\n        pub mod foo_types;\n        pub use foo_types::*;\n    };\n}\n",
    ] {
        let text = format!("{counted}{marker}");
        assert_eq!(insert(path, &text, "api-kinds", fragment).unwrap(), text);
    }
    let lists = Path::new("src/api/mod.rs");
    assert!(!has_live_line(
        lists,
        "#[cfg(any())]\npub mod v2;\n",
        "pub mod v2;"
    ));
    assert!(!has_live_line(
        lists,
        "/*\npub mod v2;\n*/\n",
        "pub mod v2;"
    ));
    assert!(has_live_line(
        lists,
        "#[cfg(test)]\npub mod v2;\n",
        "pub mod v2;"
    ));
    assert!(has_live_line(
        lists,
        "pub mod v1;\npub mod v2;\n",
        "pub mod v2;"
    ));
    let route = "let app = app.route(\"/x\", get(x));";
    let text = format!("fn f() {{\n    {route}\n    // +kubebuilder:scaffold:routes\n}}\n");
    assert_eq!(insert(path, &text, "routes", route).unwrap(), text);
}

/// A file is certainly not compiled when, from every crate root, the module that includes it
/// is under a never-true cfg or names another file with `#[path]`; a root that does not
/// declare the way at all (an inline module, another layout) proves nothing.
#[test]
fn a_file_left_out_of_the_crate_is_told_by_its_declarations() {
    let tree = |lib: &'static str| {
        move |p: &Path| -> Option<String> {
            match p.to_str()? {
                "src/lib.rs" => Some(lib.to_string()),
                "src/api/mod.rs" => Some("pub mod v1;\n".to_string()),
                "src/api/v1/mod.rs" => Some("// +kubebuilder:scaffold:api-kinds\n".to_string()),
                _ => None,
            }
        }
    };
    let rel = Path::new("src/api/v1/mod.rs");
    assert_eq!(not_compiled(rel, &tree("pub mod api;\n")), None);
    let why = not_compiled(rel, &tree("#[cfg(any())]\npub mod api;\n")).unwrap();
    assert!(
        why.contains("src/lib.rs declares it so: `mod api` is under a cfg that is never true"),
        "{why}"
    );
    let why = not_compiled(rel, &tree("#[path = \"nothere.rs\"]\npub mod api;\n")).unwrap();
    assert!(
        why.contains("`mod api` names another file with #[path]"),
        "{why}"
    );
    // Declared compiled once is enough; undeclared, or under a cfg of the build, proves nothing.
    assert_eq!(
        not_compiled(rel, &tree("#[cfg(any())]\nmod api;\npub mod api;\n")),
        None
    );
    assert_eq!(not_compiled(rel, &tree("pub mod other;\n")), None);
    assert_eq!(
        not_compiled(rel, &tree("#[cfg(test)]\npub mod api;\n")),
        None
    );
    assert_eq!(not_compiled(Path::new("src/lib.rs"), &tree("")), None);
    assert_eq!(
        not_compiled(Path::new("src/bin/apiserver.rs"), &tree("")),
        None
    );
}
