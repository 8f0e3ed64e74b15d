//! Source discovery and parsing: every `.rs` file under the given paths, parsed with syn,
//! never compiled. Files are read in sorted order so output is deterministic.

use std::path::{Path, PathBuf};

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
    /// `target/` and hidden directories are skipped). A syntax error becomes a diagnostic at
    /// its `file:line:column`; all files are tried so every error is reported in one run.
    pub fn load(paths: &[PathBuf]) -> Result<Self, Vec<Diagnostic>> {
        Self::parse_all(Self::read(paths)?)
    }

    /// Reads every `.rs` file under `paths` (as [`SourceSet::load`] finds them), without
    /// parsing: `(path, text)` sorted by path. Errors: missing paths and unreadable files,
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
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    let name = e.file_name().to_string_lossy();
                    e.depth() == 0 || !(name.starts_with('.') || name == "target")
                });
            for entry in walker {
                match entry {
                    Ok(e)
                        if e.file_type().is_file()
                            && e.path().extension().is_some_and(|x| x == "rs") =>
                    {
                        found.push(e.path().to_path_buf())
                    }
                    Ok(_) => {}
                    Err(e) => errors.push(Diagnostic::new(
                        e.path().unwrap_or(p),
                        1,
                        1,
                        format!("cannot read: {e}"),
                    )),
                }
            }
        }
        found.sort();
        found.dedup();
        let mut texts = Vec::with_capacity(found.len());
        for path in found {
            match std::fs::read_to_string(&path) {
                Ok(text) => texts.push((path, text)),
                Err(e) => errors.push(Diagnostic::new(&path, 1, 1, format!("cannot read: {e}"))),
            }
        }
        if errors.is_empty() {
            Ok(texts)
        } else {
            Err(errors)
        }
    }

    /// Parses texts [`SourceSet::read`] returned; every syntax error is reported.
    pub fn parse_all(texts: Vec<(PathBuf, String)>) -> Result<Self, Vec<Diagnostic>> {
        let mut files = Vec::with_capacity(texts.len());
        let mut errors = Vec::new();
        for (path, text) in texts {
            match Self::parse_text(&path, text) {
                Ok(f) => files.push(f),
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok(Self { files })
        } else {
            Err(errors)
        }
    }

    /// Parses one file from disk.
    pub fn parse_file(path: &Path) -> Result<SourceFile, Diagnostic> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Diagnostic::new(path, 1, 1, format!("cannot read: {e}")))?;
        Self::parse_text(path, text)
    }

    /// Parses source text that claims to come from `path`.
    pub fn parse_text(path: &Path, text: String) -> Result<SourceFile, Diagnostic> {
        match syn::parse_file(&text) {
            Ok(ast) => Ok(SourceFile {
                path: path.to_path_buf(),
                text,
                ast,
            }),
            Err(e) => Err(Diagnostic::at(
                path,
                e.span(),
                format!("Rust syntax error: {e}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = SourceSet::parse_text(Path::new("src/x.rs"), "struct A {\n  a: ,\n}\n".into())
            .unwrap_err();
        assert_eq!(err.file, PathBuf::from("src/x.rs"));
        assert_eq!(err.line, 2);
        assert_eq!(err.column, 6);
        assert!(err.message.contains("syntax error"), "{err}");
    }
}
