//! Source discovery and parsing: every `.rs` file under the given paths, parsed with syn,
//! never compiled. Files are read in sorted order so output is deterministic.

use std::path::{Path, PathBuf};

use super::cfg::Cfg;
use super::diag::Diagnostic;

/// One parsed Rust source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as discovered (joined onto the input path the user gave).
    pub path: PathBuf,
    /// The file's text (markers are read from `//` comments, which syn drops).
    pub text: String,
    /// The parsed syntax tree.
    pub ast: syn::File,
}

/// The set of parsed files of one run.
#[derive(Debug, Clone, Default)]
pub struct SourceSet {
    /// Files sorted by path.
    pub files: Vec<SourceFile>,
}

impl SourceSet {
    /// Reads and parses every `.rs` file under `paths` (files or directories, recursively;
    /// `target/` and hidden directories are skipped; symbolic links are followed, as cargo
    /// follows them when it compiles the crate, and a link loop or a dangling link to a `.rs`
    /// file is a diagnostic at the link's path). A syntax error becomes a diagnostic at
    /// its `file:line:column`; all files are tried so every error is reported in one run.
    ///
    /// `cfg` is applied with no features enabled (see [`SourceSet::load_with`]).
    pub fn load(paths: &[PathBuf]) -> Result<Self, Vec<Diagnostic>> {
        Self::load_with(paths, &Cfg::default())
    }

    /// [`SourceSet::load`] under `cfg`: see [`SourceSet::parse_all_with`].
    pub fn load_with(paths: &[PathBuf], cfg: &Cfg) -> Result<Self, Vec<Diagnostic>> {
        Self::parse_all_with(Self::read(paths)?, cfg)
    }

    /// Reads every `.rs` file under `paths` (as [`SourceSet::load`] finds them), without
    /// parsing: `(path, text)` sorted by path (a file reached through a symbolic link keeps the
    /// link's path). Errors: missing paths, unreadable files, symlink loops and dangling links,
    /// all of them.
    pub fn read(paths: &[PathBuf]) -> Result<Vec<(PathBuf, String)>, Vec<Diagnostic>> {
        let mut found = Vec::new();
        let mut errors = Vec::new();
        for p in paths {
            if p.is_file() {
                found.push(p.clone());
                continue;
            }
            if !p.is_dir() {
                errors.push(Diagnostic::new(p, 1, 1, "no such file or directory"));
                continue;
            }
            let walker = walkdir::WalkDir::new(p)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| e.depth() == 0 || !skipped_name(e.path()));
            for entry in walker {
                match entry {
                    // Not only regular files: a FIFO or device named `*.rs` is refused by
                    // name when it is read, never skipped silently.
                    Ok(e)
                        if !e.file_type().is_dir()
                            && e.path().extension().is_some_and(|x| x == "rs") =>
                    {
                        found.push(e.path().to_path_buf())
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let path = e.path().unwrap_or(p);
                        // filter_entry sees only entries that could be read: an error under a
                        // skipped name (an editor's dangling `.#main.rs` lock link) or a
                        // dangling link that cannot name a Rust file stays skipped.
                        if path != p && (skipped_name(path) || !may_hold_rust(path)) {
                            continue;
                        }
                        errors.push(walk_error(path, &e));
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        // Each file's size is looked at before it is read: one above the per-file bound is
        // refused unread, and the bytes read over all files stay within the run's budget.
        use super::parse::{MAX_SOURCE_BYTES, MAX_TOTAL_SOURCE_BYTES, over_total, too_large};
        let mut texts = Vec::with_capacity(found.len());
        let mut used: u64 = 0;
        for path in found {
            let size = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            if let Some(size) = size {
                if size > MAX_SOURCE_BYTES as u64 {
                    errors.push(too_large(&path, size));
                    continue;
                }
                if used + size > MAX_TOTAL_SOURCE_BYTES {
                    errors.push(over_total(&path, size, used));
                    break;
                }
            }
            let limit = (MAX_SOURCE_BYTES as u64).min(MAX_TOTAL_SOURCE_BYTES - used);
            match crate::engine::regular::read_path_at_most(&path, limit) {
                Ok(text) => {
                    used += text.len() as u64;
                    texts.push((path, text));
                }
                Err(e) => errors.push(Diagnostic::new(&path, 1, 1, format!("cannot read: {e}"))),
            }
        }
        if errors.is_empty() {
            Ok(texts)
        } else {
            Err(errors)
        }
    }

    /// Parses texts [`SourceSet::read`] returned, with no features enabled (see
    /// [`SourceSet::parse_all_with`]).
    pub fn parse_all(texts: Vec<(PathBuf, String)>) -> Result<Self, Vec<Diagnostic>> {
        Self::parse_all_with(texts, &Cfg::default())
    }

    /// Parses texts [`SourceSet::read`] returned and applies `cfg` to each (see
    /// [`crate::manifests::cfg`]). Files that cargo does not compile under `cfg` (included by a
    /// left-out `mod`, or left out by their own `#![cfg]`) are dropped with their errors, as
    /// cargo never reads them. Errors: every syntax error and malformed `cfg` of the other
    /// files.
    pub fn parse_all_with(
        texts: Vec<(PathBuf, String)>,
        cfg: &Cfg,
    ) -> Result<Self, Vec<Diagnostic>> {
        let mut files = Vec::with_capacity(texts.len());
        let mut errors = Vec::new();
        for (path, text) in texts {
            match Self::parse_configured(&path, text, cfg) {
                Ok(f) => files.push(f),
                Err(d) => errors.extend(d),
            }
        }
        let excluded = super::cfg::excluded_files(files.iter().map(|f| (f.path.as_path(), &f.ast)));
        if !excluded.is_empty() {
            let normal = super::modtree::normalize;
            files.retain(|f| !excluded.contains(&normal(&f.path)));
            errors.retain(|d: &Diagnostic| !excluded.contains(&normal(&d.file)));
        }
        if errors.is_empty() {
            Ok(Self { files })
        } else {
            Err(errors)
        }
    }

    /// Parses one file from disk.
    pub fn parse_file(path: &Path) -> Result<SourceFile, Diagnostic> {
        let text = crate::engine::regular::read_path(path)
            .map_err(|e| Diagnostic::new(path, 1, 1, format!("cannot read: {e}")))?;
        Self::parse_text(path, text)
    }

    /// Parses source text that claims to come from `path`, and applies `cfg` with no
    /// features enabled. Errors: the syntax error, or the first malformed `cfg`.
    pub fn parse_text(path: &Path, text: String) -> Result<SourceFile, Diagnostic> {
        Self::parse_text_with(path, text, &Cfg::default())
    }

    /// [`SourceSet::parse_text`] under `cfg`.
    pub fn parse_text_with(path: &Path, text: String, cfg: &Cfg) -> Result<SourceFile, Diagnostic> {
        Self::parse_configured(path, text, cfg).map_err(|mut d| d.swap_remove(0))
    }

    /// Parses and applies `cfg`; every malformed `cfg` is a diagnostic.
    fn parse_configured(
        path: &Path,
        text: String,
        cfg: &Cfg,
    ) -> Result<SourceFile, Vec<Diagnostic>> {
        let text = normalize_src(text);
        let mut ast = super::parse::parse_rust(path, &text).map_err(|d| vec![d])?;
        let errors = super::cfg::strip(&mut ast, cfg);
        if !errors.is_empty() {
            return Err(errors
                .iter()
                .flat_map(|e| e.clone().into_iter())
                .map(|e| {
                    Diagnostic::at(path, e.span(), e.to_string())
                        .with_help("rustc rejects this attribute too; see the Rust reference on conditional compilation")
                })
                .collect());
        }
        Ok(SourceFile {
            path: path.to_path_buf(),
            text,
            ast,
        })
    }
}

/// Names the walk does not descend into or read: hidden entries and `target`.
/// The text rustc lexes for a source file: a leading byte order mark dropped and every `\r\n`
/// turned into `\n`, as rustc_span's `normalize_src` does before lexing. Without it a CRLF
/// checkout (git's autocrlf on Windows) would keep `\r` in raw strings, `/** */` docs,
/// defaults and CEL rules, where the compiled `crd()` has none. A lone `\r` stays: rustc
/// keeps it too (and rejects it where it is not allowed).
pub fn normalize_src(text: String) -> String {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    if text.contains("\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

fn skipped_name(path: &Path) -> bool {
    path.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.starts_with('.') || n == "target"
    })
}

/// Whether an unreadable entry could have been a Rust file or a directory of them: named
/// `*.rs`, or without an extension.
fn may_hold_rust(path: &Path) -> bool {
    path.extension().is_none_or(|x| x == "rs")
}

/// The diagnostic for an entry the walk could not read, naming the link problem when there is
/// one (a loop back to an ancestor directory, a link whose target does not exist).
fn walk_error(path: &Path, e: &walkdir::Error) -> Diagnostic {
    if let Some(ancestor) = e.loop_ancestor() {
        Diagnostic::new(
            path,
            1,
            1,
            format!(
                "symbolic link loop: this link leads back to {}",
                ancestor.display()
            ),
        )
        .with_help("remove the link or point it outside the directories it is in")
    } else if path.is_symlink() && !path.exists() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        Diagnostic::new(
            path,
            1,
            1,
            format!("dangling symbolic link: its target `{target}` does not exist"),
        )
        .with_help("fix the link's target or remove the link")
    } else {
        Diagnostic::new(path, 1, 1, format!("cannot read: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRD YAML of `text` read as `src/types.rs`.
    fn crd_of(text: String) -> String {
        let set = SourceSet::parse_all(vec![(PathBuf::from("src/types.rs"), text)]).unwrap();
        let crds = crate::manifests::crds_from_sources(&set).unwrap();
        serde_json::to_string_pretty(&crds[0].crd).unwrap()
    }

    const LEXICAL: &str = r####"use kube::CustomResource;
use kube::core::Rule;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/** A spec
   written in a block doc comment. */
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Lexical", namespaced)]
#[kube(validation = Rule::new(r#"self.size >= 0
  && self.size < 10"#).message("size out of range"))]
pub struct LexicalSpec {
    /// Line one
    /// line two.
    #[doc = "attribute
doc"]
    pub size: i32,
    #[schemars(description = r"raw
description")]
    pub name: String,
}
"####;

    #[test]
    fn crlf_and_bom_read_as_rustc_reads_them() {
        let lf = crd_of(LEXICAL.to_string());
        assert!(lf.contains(r"self.size >= 0\n  && self.size < 10"), "{lf}");
        assert!(lf.contains(r"raw\ndescription"), "{lf}");
        assert!(lf.contains(r"A spec\n   written"), "{lf}");
        assert!(lf.contains(r"attribute\ndoc"), "{lf}");
        assert!(!lf.contains(r"\r"), "{lf}");
        let crlf = LEXICAL.replace('\n', "\r\n");
        assert_eq!(crd_of(crlf.clone()), lf, "CRLF");
        assert_eq!(crd_of(format!("\u{feff}{LEXICAL}")), lf, "BOM");
        assert_eq!(crd_of(format!("\u{feff}{crlf}")), lf, "BOM and CRLF");
    }

    #[test]
    fn nfd_identifiers_read_as_their_nfc_spelling() {
        let nfc = "pub struct CaféSpec {\n    pub café: String,\n    pub naïve: i32,\n}\n";
        let nfd: String = {
            use unicode_normalization::UnicodeNormalization;
            nfc.nfd().collect()
        };
        assert_ne!(nfd, nfc);
        let text = |idents: &str| {
            format!(
                "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"example.com\", version = \"v1\", kind = \"Cafe\")]\n{idents}"
            )
        };
        let from_nfc = crd_of(text(nfc));
        assert!(from_nfc.contains("\"café\""), "{from_nfc}");
        assert_eq!(crd_of(text(&nfd)), from_nfc);
        // A name given in a string literal keeps its spelling, as rustc keeps literals.
        let renamed = |idents: &str| {
            text(&idents.replace(
                "    pub naïve",
                "    #[serde(rename = \"nai\u{308}ve\")]\n    pub naïve",
            ))
        };
        let from_nfc = crd_of(renamed(nfc));
        assert!(from_nfc.contains("\"nai\u{308}ve\""), "{from_nfc}");
        assert!(!from_nfc.contains("\"naïve\""), "{from_nfc}");
        let nfd_renamed: String = {
            use unicode_normalization::UnicodeNormalization;
            renamed(nfc).nfd().collect()
        };
        assert_eq!(crd_of(nfd_renamed), from_nfc);
    }

    const DEFAULTS: &str = r####"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_script() -> String {
    r#"line one
line two"#.to_string()
}

fn default_escaped() -> String {
    "a\r\nb".into()
}

fn default_continued() -> String {
    "one \
     two".into()
}

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Defaults")]
pub struct DefaultsSpec {
    #[serde(default = "default_script")]
    pub script: String,
    #[serde(default = "default_escaped")]
    pub escaped: String,
    #[serde(default = "default_continued")]
    pub continued: String,
}
"####;

    #[test]
    fn a_raw_string_default_reads_lf_and_written_escapes_stay() {
        let lf = crd_of(DEFAULTS.to_string());
        let json: serde_json::Value = serde_json::from_str(&lf).unwrap();
        let props = &json["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"];
        assert_eq!(props["script"]["default"], "line one\nline two", "{lf}");
        // `\r\n` written as escapes is what the string holds, whatever the file's endings.
        assert_eq!(props["escaped"]["default"], "a\r\nb", "{lf}");
        // A `\` at the end of a line skips the line break and the next line's indentation.
        assert_eq!(props["continued"]["default"], "one two", "{lf}");
        let crlf = DEFAULTS.replace('\n', "\r\n");
        assert_eq!(crd_of(crlf.clone()), lf, "CRLF");
        assert_eq!(crd_of(format!("\u{feff}{crlf}")), lf, "BOM and CRLF");
    }

    #[test]
    fn each_doc_form_reads_the_same_with_crlf() {
        for (form, want) in [
            ("/// one\n    /// two", "one\ntwo"),
            // A block is one doc attribute: schemars removes one space before it and trims
            // the whole, and keeps the later lines' indentation and stars.
            ("/** one\n        two */", "one\n        two"),
            ("/**\n * one\n * two\n */", "* one\n * two"),
            ("#[doc = \"one\n    two\"]", "one\n    two"),
            ("#[doc = r\"one\n    two\"]", "one\n    two"),
        ] {
            let text = format!(
                "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\n\
                 #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
                 #[kube(group = \"example.com\", version = \"v1\", kind = \"Doc\")]\n\
                 pub struct DocSpec {{\n    {form}\n    pub a: i32,\n}}\n"
            );
            let lf = crd_of(text.clone());
            let json: serde_json::Value = serde_json::from_str(&lf).unwrap();
            let a = &json["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
                ["properties"]["a"];
            assert_eq!(a["description"], want, "{form}: {lf}");
            let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
            assert_eq!(crd_of(crlf), lf, "{form} with BOM and CRLF");
        }
    }

    #[test]
    fn camel_case_of_a_name_starting_with_a_non_ascii_letter_is_a_diagnostic_not_a_crash() {
        // serde_derive panics on these (so the crate does not compile); rsbuilder panicked too.
        for (body, line) in [
            (
                "#[serde(rename_all = \"camelCase\")]\npub struct XSpec {\n    pub ok: i32,\n    pub ärgs: i32,\n}\n",
                10,
            ),
            (
                "pub struct XSpec {\n    pub e: E,\n}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(rename_all = \"camelCase\")]\npub enum E {\n    A,\n    Über,\n}\n",
                14,
            ),
        ] {
            let text = format!(
                "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{{Deserialize, Serialize}};\n\n\
                 #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
                 #[kube(group = \"example.com\", version = \"v1\", kind = \"X\")]\n{body}"
            );
            let set = SourceSet::parse_all(vec![(PathBuf::from("src/types.rs"), text)]).unwrap();
            let errs = crate::manifests::crds_from_sources(&set).unwrap_err();
            let d = errs
                .iter()
                .find(|d| d.message.contains("starts with a non-ASCII letter"))
                .unwrap_or_else(|| panic!("{errs:?}"));
            assert_eq!(d.line, line, "{d}");
            assert!(d.help.as_deref().unwrap_or("").contains("rename"), "{d}");
        }
        // An accent after the first letter is fine for serde, and for rsbuilder.
        let crd = crd_of(
            "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"example.com\", version = \"v1\", kind = \"X\")]\n\
             #[serde(rename_all = \"camelCase\")]\npub struct XSpec {\n    pub cäfe_ölig: i32,\n}\n"
                .into(),
        );
        // serde upper-cases ASCII letters only: `ölig` keeps its `ö`.
        assert!(crd.contains("\"cäfeölig\""), "{crd}");
    }

    #[test]
    fn normalize_src_keeps_a_lone_carriage_return() {
        assert_eq!(normalize_src("a\r\nb\rc\r\n".into()), "a\nb\rc\n");
        assert_eq!(normalize_src("\u{feff}x\u{feff}".into()), "x\u{feff}");
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = SourceSet::parse_text(Path::new("src/x.rs"), "struct A {\n  a: ,\n}\n".into())
            .unwrap_err();
        assert_eq!(err.file, PathBuf::from("src/x.rs"));
        assert_eq!(err.line, 2);
        assert_eq!(err.column, 6);
        assert!(err.message.contains("syntax error"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_files_and_directories_are_read_under_the_link_path() {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        let src = tmp.path().join("src");
        std::fs::create_dir_all(shared.join("api")).unwrap();
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(shared.join("k3.rs"), "struct K3;\n").unwrap();
        std::fs::write(shared.join("api/v1.rs"), "struct V1;\n").unwrap();
        std::fs::write(src.join("main.rs"), "fn main() {}\n").unwrap();
        std::os::unix::fs::symlink("../shared/k3.rs", src.join("k3.rs")).unwrap();
        std::os::unix::fs::symlink("../shared/api", src.join("api")).unwrap();
        let texts = SourceSet::read(std::slice::from_ref(&src)).unwrap();
        let got: Vec<_> = texts
            .iter()
            .map(|(p, t)| (p.strip_prefix(&src).unwrap().to_path_buf(), t.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (PathBuf::from("api/v1.rs"), "struct V1;\n"),
                (PathBuf::from("k3.rs"), "struct K3;\n"),
                (PathBuf::from("main.rs"), "fn main() {}\n"),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loop_and_dangling_link_are_diagnostics_at_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(src.join("api")).unwrap();
        std::fs::write(src.join("main.rs"), "fn main() {}\n").unwrap();
        std::os::unix::fs::symlink("..", src.join("api/back")).unwrap();
        std::os::unix::fs::symlink("../shared/gone.rs", src.join("gone.rs")).unwrap();
        // Not reported: an editor's lock link (hidden) and a dangling non-Rust file.
        std::os::unix::fs::symlink("user@host.1234", src.join(".#main.rs")).unwrap();
        std::os::unix::fs::symlink("nowhere", src.join("notes.md")).unwrap();
        let errors = SourceSet::read(std::slice::from_ref(&src)).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        let by_file = |name: &str| {
            errors
                .iter()
                .find(|d| d.file == src.join(name))
                .unwrap_or_else(|| panic!("no diagnostic at {name}: {errors:?}"))
        };
        let lp = by_file("api/back");
        assert!(lp.message.contains("symbolic link loop"), "{}", lp.message);
        assert!(
            lp.message.contains(&src.display().to_string()),
            "{}",
            lp.message
        );
        let dangling = by_file("gone.rs");
        assert_eq!(
            dangling.message,
            "dangling symbolic link: its target `../shared/gone.rs` does not exist"
        );
        assert_eq!(
            dangling.help.as_deref(),
            Some("fix the link's target or remove the link")
        );
    }
}
