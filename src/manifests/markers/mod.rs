//! Markers: controller-gen's `// +kubebuilder:...` comments, read from Rust sources.
//!
//! Where markers are read: every line whose first non-blank text is a plain `//` comment
//! (not a `///` or `//!` doc comment, not a comment after code on the same line) whose text
//! starts with `+`. Unlike controller-gen, which ties markers to the Go package or type they
//! precede, rsbuilder's markers (`rbac`, `webhook`, `webhookconfiguration`) describe the whole
//! program, so their position in a file does not matter. Lines inside string literals and
//! block comments are not line comments and are skipped.
//!
//! Which markers are checked: every marker whose name starts with `kubebuilder:` (or a near
//! miss of it, such as `kubebuider:`) must be registered in [`registry::MARKERS`]; others
//! (`+optional`, `+k8s:...`) belong to other tools and are left alone. A marker in a doc
//! comment is an error when it names an rbac or webhook marker (it would otherwise be lost
//! silently). Controller-gen ignores unknown and misspelled markers; rsbuilder reports them.

pub mod grammar;
pub mod registry;
pub mod typed;

use std::path::{Path, PathBuf};

pub use grammar::Value;
pub use registry::{ArgDef, ArgType, Form, MARKERS, MarkerDef};

use super::diag::Diagnostic;
use super::source::SourceSet;

/// One parsed argument of a [`Marker`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// Registered argument name (`verbs`).
    pub name: &'static str,
    /// Typed value.
    pub value: Value,
    /// 1-based column of the argument name in the source line.
    pub column: usize,
}

/// A registered marker found in a source file, with its typed arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// Its definition in the registry.
    pub def: &'static MarkerDef,
    /// File it was found in.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column of the `+`.
    pub column: usize,
    /// The marker text after `+` (for messages).
    pub text: String,
    /// Arguments in the order written.
    pub args: Vec<Arg>,
}

impl Marker {
    /// Registered name (`kubebuilder:rbac`).
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// A diagnostic at the marker's `+`.
    pub fn diag(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, self.line, self.column, message)
    }

    /// A diagnostic at argument `name` when it was written, else at the marker.
    pub fn diag_at(&self, name: &str, message: impl Into<String>) -> Diagnostic {
        let column = self
            .args
            .iter()
            .find(|a| a.name == name)
            .map_or(self.column, |a| a.column);
        Diagnostic::new(&self.file, self.line, column, message)
    }
}

/// Reads every marker of every file of `sources` (files in path order, markers in line
/// order). Returns the registered markers that take arguments or values (`rbac`, `webhook`,
/// `webhookconfiguration`); ignored markers (`kubebuilder:scaffold:*`) are dropped.
///
/// Errors, each at the marker's file:line:column: an unknown `+kubebuilder:` marker (with the
/// nearest registered name), a controller-gen CRD marker (with the Rust attribute to use), an
/// unknown or repeated argument (with the nearest argument name), a missing required argument,
/// a value of the wrong type, a bad string or list, an rbac/webhook marker in a doc comment.
/// All errors of all files are returned together.
pub fn collect(sources: &SourceSet) -> Result<Vec<Marker>, Vec<Diagnostic>> {
    let mut markers = Vec::new();
    let mut errors = Vec::new();
    for file in &sources.files {
        let (m, e) = collect_text(&file.path, &file.text);
        markers.extend(m);
        errors.extend(e);
        if let Some(over) = markers.get(MAX_MARKERS) {
            return Err(vec![
                Diagnostic::new(
                    &over.file,
                    over.line,
                    over.column,
                    format!("more than {MAX_MARKERS} markers in the sources: rsbuilder stops here rather than hold them all"),
                )
                .with_help("a project needs a few dozen; remove generated or repeated marker comments"),
            ]);
        }
        if errors.len() > MAX_MARKERS {
            errors.truncate(MAX_MARKERS);
            return Err(errors);
        }
    }
    if errors.is_empty() {
        Ok(markers)
    } else {
        Err(errors)
    }
}

/// The most markers one run reads (10,000). Each is kept with its text and arguments until
/// the manifests are written; 720,000 rbac comment lines took 2.3 GB. Projects hold a few
/// dozen.
pub const MAX_MARKERS: usize = 10_000;

/// [`collect`] for one file's text, claimed to come from `path`: its markers and its errors.
pub fn collect_text(path: &Path, text: &str) -> (Vec<Marker>, Vec<Diagnostic>) {
    let comment_lines = line_comment_lines(text);
    let mut markers = Vec::new();
    let mut errors = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        let line_no = idx + 1;
        if comment_lines.binary_search(&line_no).is_err() {
            continue;
        }
        let indent = line.chars().take_while(|c| c.is_whitespace()).count();
        let trimmed = line.trim_start();
        let Some(after) = trimmed.strip_prefix("//") else {
            continue;
        };
        // `///` and `//!` are doc comments; `////` is a plain comment whose text starts with
        // `//`, i.e. a commented-out marker, which the `+` check below skips.
        let is_doc = (after.starts_with('/') && !after.starts_with("//")) || after.starts_with('!');
        let body = if is_doc { &after[1..] } else { after };
        let lead = body.chars().take_while(|c| c.is_whitespace()).count();
        let Some(text) = body.trim_start().strip_prefix('+') else {
            continue;
        };
        let text = text.trim_end();
        // 1-based column of '+'.
        let column = indent + 2 + usize::from(is_doc) + lead + 1;
        match parse_marker(path, line_no, column, text, is_doc) {
            Ok(Some(m)) => markers.push(m),
            Ok(None) => {}
            Err(d) => errors.push(d),
        }
        // Past the limit [`collect`] refuses the run; holding more changes nothing.
        if markers.len() > MAX_MARKERS || errors.len() > MAX_MARKERS {
            break;
        }
    }
    (markers, errors)
}

/// Parses one marker text (after `+`) found at `path:line:column` (the column of `+`).
/// `Ok(None)`: not ours, or a valid ignored marker.
pub fn parse_marker(
    path: &Path,
    line: usize,
    column: usize,
    text: &str,
    in_doc_comment: bool,
) -> Result<Option<Marker>, Diagnostic> {
    let at = |offset: usize| column + 1 + offset;
    let (name, anon, _) = grammar::split_marker(text);
    let first = anon.split(':').next().unwrap_or_default();
    // rsbuilder's own markers (`+rsbuilder:allow=...`) are read as registered ones; any other
    // `+rsbuilder:` text is not a marker.
    let ours = first == "rsbuilder" && registry::lookup(anon).is_some();
    if first != "kubebuilder" && !ours {
        let near_prefix = first.len() > 3
            && first.len().abs_diff("kubebuilder".len()) <= 2
            && strsim::damerau_levenshtein(&first.to_ascii_lowercase(), "kubebuilder") <= 2;
        if !near_prefix || in_doc_comment {
            return Ok(None);
        }
        let fixed = format!("kubebuilder{}", &name[first.len()..]);
        let known = registry::lookup(&fixed)
            .or_else(|| registry::lookup(&format!("kubebuilder{}", &anon[first.len()..])));
        let d = Diagnostic::new(path, line, column, format!("unknown marker +{name}"));
        return Err(match known {
            Some(def) => d.with_help(format!("did you mean +{}?", def.name)),
            None => d.with_help("rsbuilder's markers start with +kubebuilder:"),
        });
    }
    let Some(def) = registry::lookup(anon).or_else(|| registry::lookup(name)) else {
        if in_doc_comment {
            return Ok(None);
        }
        let near = registry::suggest(name).or_else(|| registry::suggest(anon));
        let d = Diagnostic::new(path, line, column, format!("unknown marker +{name}"));
        return Err(match near {
            Some(n) => d.with_help(format!("did you mean +{n}?")),
            None => d.with_help(format!(
                "rsbuilder knows {}; see docs/markers.md",
                MARKERS
                    .iter()
                    .filter(|m| !matches!(m.form, Form::Unsupported(_)))
                    .map(|m| format!("+{}", m.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        });
    };
    if in_doc_comment {
        return match def.form {
            Form::Args(_) | Form::Value(_) | Form::Flag => Err(Diagnostic::new(
                path,
                line,
                column,
                format!("+{} is in a doc comment, where markers are not read", def.name),
            )
            .with_help(
                "write it as a plain `// +kubebuilder:...` comment; doc comments are documentation (kube-derive copies them into CRD descriptions)",
            )),
            _ => Ok(None),
        };
    }
    match def.form {
        Form::Ignored => return Ok(None),
        Form::Unsupported(instead) => {
            return Err(Diagnostic::new(
                path,
                line,
                column,
                format!(
                    "+{anon} is a controller-gen marker for Go types; rsbuilder takes CRD schemas from Rust attributes, not comments"
                ),
            )
            .with_help(registry::instead_of(anon, instead)));
        }
        _ => {}
    }
    // Markers may carry a trailing name part for Args markers: re-slice from the definition
    // name so offsets count from the start of the text.
    match grammar::parse(def, text) {
        Ok(args) => Ok(Some(Marker {
            def,
            file: path.to_path_buf(),
            line,
            column,
            text: text.to_string(),
            args: args
                .into_iter()
                .map(|a| Arg {
                    name: a.name,
                    value: a.value,
                    column: at(a.offset),
                })
                .collect(),
        })),
        Err(e) => {
            let d = Diagnostic::new(path, line, e.offset.map_or(column, at), e.message);
            Err(match e.help {
                Some(h) => d.with_help(h),
                None => d,
            })
        }
    }
}

/// Lines (1-based, sorted) whose first non-blank text starts a `//` comment in code: not
/// inside a string, char or raw string literal, and not inside a (nested) block comment.
/// A small lexer of Rust's comment and literal syntax; anything else is code.
fn line_comment_lines(text: &str) -> Vec<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    // Advances over one char, keeping the line count.
    macro_rules! bump {
        () => {{
            if chars[i] == '\n' {
                line += 1;
            }
            i += 1;
        }};
    }
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        match chars[i] {
            '/' if next == Some('/') => {
                let line_start = chars[..i]
                    .iter()
                    .rposition(|&c| c == '\n')
                    .map_or(0, |p| p + 1);
                if chars[line_start..i].iter().all(|c| c.is_whitespace()) {
                    out.push(line);
                }
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0usize;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        bump!();
                    }
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        bump!();
                    }
                    bump!();
                }
                i += 1;
            }
            'r' if (i == 0
                || !is_ident(chars[i - 1])
                || (chars[i - 1] == 'b' && (i == 1 || !is_ident(chars[i - 2]))))
                && matches!(next, Some('"') | Some('#')) =>
            {
                // Raw string r"..." / r#"..."#: count the hashes.
                let mut j = i + 1;
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    // `r#ident`: a raw identifier.
                    i += 1;
                    continue;
                }
                let hashes = j - i - 1;
                i = j + 1;
                while i < chars.len() {
                    if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                        i += 1 + hashes;
                        break;
                    }
                    bump!();
                }
            }
            '\'' => {
                // A char literal ('a', '\n', '\u{..}') or a lifetime / label ('a).
                if next == Some('\\') {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' && chars[i] != '\n' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            _ => bump!(),
        }
    }
    out
}

#[cfg(test)]
mod tests;
