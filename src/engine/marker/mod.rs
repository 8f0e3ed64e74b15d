//! Scaffold markers found by syntax, not by a text search.
//!
//! A marker is the comment `// +kubebuilder:scaffold:<name>` in Rust, and
//! `# +kubebuilder:scaffold:<name>` in YAML, TOML, Makefiles and Dockerfiles. Later commands
//! insert code before it. Where it counts:
//!
//! - **Rust:** a plain line comment (not `///` or `//!`), alone on its line, where an item, a
//!   statement or a match arm may start: the previous token is `{`, `}`, `;` or `,`, the end of
//!   an inner attribute (`#![...]`), or nothing. The file is lexed with rustc's own lexer
//!   (`ra-ap-rustc_lexer`), so the same text inside a string literal, a raw string, a char
//!   literal or a `/* */` comment (which nest) is not a marker, and neither is one in the
//!   middle of an expression (`let x = a // ... \n + b;`), where inserted code would not parse.
//!   The file is also parsed (syn): a marker for a module's items (`api-kinds`) counts only
//!   among a module's items, not in a function body, an impl, trait, struct, enum or extern
//!   body, or a macro invocation; a marker for statements (`controllers`) counts only in a
//!   block. Code under a `cfg` that is never true (`any()`, `false`, `not(all())`, nested, or
//!   added by `cfg_attr`) is not compiled, so a marker there does not count; under a `cfg`
//!   predicate rsbuilder does not know, it does not count either.
//! - **YAML and the other `#` formats:** a whole comment line (only blanks before the `#`), not
//!   inside a YAML block scalar (`key: |`) or a TOML multi-line string (`"""`, `'''`). In YAML
//!   the file is also parsed (granit-parser, the parser serde-saphyr reads YAML with), and a
//!   line inside any scalar's span (a double- or single-quoted string running over several
//!   lines, a block scalar) or inside a flow collection written over several lines (`[ ... ]`,
//!   `{ ... }`) is not a marker. In a Dockerfile, a line inside a heredoc (`RUN <<EOF` …
//!   `EOF`), or inside an instruction continued from the line before (ending in `\`, or the
//!   character a `# escape=` directive names), is not a marker: it is part of the instruction.
//!
//! Each marker must appear exactly once in its file: a missing marker, or one written twice
//! (which would insert the code twice: a controller spawned twice), is a [`MarkerError`]
//! naming the file and the lines, and the command writes nothing.
//!
//! Submodules: `rust` (the lexer pass over Rust), `dead_code` (code cargo does not compile,
//! and where a marker stands), `hash` (the `#` comment formats), `dockerfile` (heredocs and
//! continued instructions). Tests for all of them are in `tests.rs`.

use std::path::{Path, PathBuf};

use thiserror::Error;

mod dead_code;
mod dockerfile;
mod hash;
mod rust;

use hash::hash_comment_markers;
use rust::rust_markers;

/// Why a marker could not be used. Every variant names the file; the line numbers are
/// 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MarkerError {
    /// No line of the file holds the marker where it counts.
    #[error(
        "{path} has no `{comment}` marker{}; rsbuilder inserts code before it. Restore the marker \
         line, alone on its line where new code should go, then re-run",
        ignored_note(.ignored)
    )]
    Missing {
        /// The file.
        path: PathBuf,
        /// The full marker comment expected.
        comment: String,
        /// Lines that hold the marker text where it does not count, with the reason.
        ignored: Vec<(usize, &'static str)>,
    },
    /// The marker appears more than once; inserting before each would duplicate the code.
    #[error(
        "{path} has the `{comment}` marker on lines {}; it must appear once. Delete all but the \
         one where new code should go, then re-run",
        join_lines(.lines)
    )]
    Duplicated {
        /// The file.
        path: PathBuf,
        /// The full marker comment.
        comment: String,
        /// Every line holding it (1-based).
        lines: Vec<usize>,
    },
    /// The file reads as its format now, and would not with the code inserted at the marker
    /// (or, for YAML, would read with one of its values changed): the marker stands where
    /// that code cannot go (inside a match, a `use` list, an indented YAML list, ...).
    #[error(
        "{path}:{line}: the `{comment}` marker stands where the code rsbuilder inserts cannot go: with it, the file is no longer valid {format} ({detail}). Move the marker line to where new {what} belong, then re-run"
    )]
    Breaks {
        /// The file.
        path: PathBuf,
        /// The marker's line (1-based).
        line: usize,
        /// The full marker comment.
        comment: String,
        /// `Rust`, `YAML` or `TOML`.
        format: &'static str,
        /// What the parser said about the result.
        detail: String,
        /// What the marker is for, in words (`items`, `list entries`).
        what: &'static str,
    },
}

fn join_lines(lines: &[usize]) -> String {
    lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn ignored_note(ignored: &[(usize, &'static str)]) -> String {
    if ignored.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = ignored
        .iter()
        .map(|(line, why)| format!("line {line} holds its text {why}"))
        .collect();
    format!(" ({}, which does not count)", parts.join("; "))
}

/// The full marker comment for a marker name in a file, chosen by the file's extension:
/// `// +kubebuilder:scaffold:<name>` for Rust, `# +kubebuilder:scaffold:<name>` otherwise.
pub fn comment(path: &Path, marker: &str) -> String {
    if is_rust(path) {
        format!("// +kubebuilder:scaffold:{marker}")
    } else {
        format!("# +kubebuilder:scaffold:{marker}")
    }
}

fn is_rust(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "rs")
}

/// The one line (0-based index into `text.split_inclusive('\n')`) that holds the marker
/// `marker` where it counts (see the module docs). `path` decides the syntax (`.rs` is Rust)
/// and is named in the errors. Errors: [`MarkerError::Missing`], listing lines where the text
/// was seen but does not count; [`MarkerError::Duplicated`] with every line.
pub fn locate(path: &Path, text: &str, marker: &str) -> Result<usize, MarkerError> {
    let comment = comment(path, marker);
    let (found, ignored) = if is_rust(path) {
        rust_markers(text, marker)
    } else {
        hash_comment_markers(path, text, marker)
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(MarkerError::Missing {
            path: path.to_path_buf(),
            comment,
            ignored: ignored.into_iter().map(|(l, why)| (l + 1, why)).collect(),
        }),
        many => Err(MarkerError::Duplicated {
            path: path.to_path_buf(),
            comment,
            lines: many.iter().map(|l| l + 1).collect(),
        }),
    }
}

/// Inserts `fragment` before the marker line of `marker` in `text` (found by [`locate`]),
/// indented like that line; a trailing newline is added to the fragment when missing. When
/// the fragment's non-blank lines already appear in the file in a row (indentation ignored),
/// `text` is returned unchanged, so re-running a command is safe. Errors as [`locate`].
pub fn insert(
    path: &Path,
    text: &str,
    marker: &str,
    fragment: &str,
) -> Result<String, MarkerError> {
    let at = locate(path, text, marker)?;
    // Rust is compared without comments; a fragment of comments only is looked for as it is.
    let code = is_rust(path)
        .then(|| rust::without_comments(fragment))
        .filter(|code| !code.trim().is_empty());
    let present = match code {
        Some(code) => contains_fragment(&rust::live_code(text), &code),
        None => contains_fragment(text, fragment),
    };
    if present {
        return Ok(text.to_string());
    }
    if dockerfile::is_dockerfile(path)
        && dockerfile::escape_char(text) != '\\'
        && fragment.lines().any(|l| l.trim_end().ends_with('\\'))
    {
        return Err(MarkerError::Breaks {
            path: path.to_path_buf(),
            line: at + 1,
            comment: comment(path, marker),
            format: "Dockerfile",
            detail: "its `# escape=` directive makes `\\` a plain character, and the inserted instruction continues its lines with `\\`".into(),
            what: "instructions (or remove the escape directive)",
        });
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + fragment.len() + 64);
    for (i, line) in lines.iter().enumerate() {
        if i == at {
            let indent: String = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            for frag_line in fragment.trim_end_matches('\n').split('\n') {
                if !frag_line.is_empty() {
                    out.push_str(&indent);
                    out.push_str(frag_line);
                }
                out.push('\n');
            }
        }
        out.push_str(line);
    }
    if let Some((format, detail, what)) = breaks(path, text, &out) {
        return Err(MarkerError::Breaks {
            path: path.to_path_buf(),
            line: at + 1,
            comment: comment(path, marker),
            format,
            detail,
            what,
        });
    }
    Ok(out)
}

/// A check that a text reads as its format, with the parser's message when it does not.
type Reads = fn(&str) -> Result<(), String>;

/// Whether inserting turned `before`, which reads as the format of `path` (Rust, YAML or
/// TOML, by extension), into `after`, which does not: the format, the parser's message about
/// `after`, and what the marker is for in words. `None` for other formats, and when `before`
/// did not read either (the insert is not what broke it; the build will say).
fn breaks(path: &Path, before: &str, after: &str) -> Option<(&'static str, String, &'static str)> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (format, what, check): (_, _, Reads) = match ext {
        "rs" => ("Rust", "items or statements", |t| {
            crate::syntax::parse_file(t).map(drop)
        }),
        "yaml" | "yml" => return yaml_breaks(before, after),
        "toml" => ("TOML", "entries", |t| {
            t.parse::<toml_edit::DocumentMut>()
                .map(drop)
                .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())
        }),
        _ => return None,
    };
    if check(before).is_err() {
        return None;
    }
    check(after).err().map(|detail| (format, detail, what))
}

/// [`breaks`] for YAML, each text parsed once. Valid YAML can still be the wrong YAML: an
/// entry folded into a plain scalar running over lines changes that value, so every value of
/// `before` must stay, in order; an empty value (`resources:` with no entries yet) is what the
/// first insert fills.
fn yaml_breaks(before: &str, after: &str) -> Option<(&'static str, String, &'static str)> {
    let old = yaml_scalars(before).ok()?;
    let new = match yaml_scalars(after) {
        Ok(new) => new,
        Err(detail) => return Some(("YAML", detail, "entries")),
    };
    let mut rest = new.iter();
    old.iter()
        .filter(|v| !matches!(v.as_str(), "" | "~"))
        .find(|v| !rest.any(|n| n == *v))
        .map(|changed| {
            (
                "YAML",
                format!("the value {changed:?} would change"),
                "entries",
            )
        })
}

/// The scalar values of the YAML `text`, in order, by granit-parser's events; the parser's
/// message when it does not read.
fn yaml_scalars(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for event in granit_parser::Parser::new_from_str(text) {
        let (event, _) = event.map_err(|e| e.to_string())?;
        if let granit_parser::Event::Scalar(value, ..) = event {
            out.push(value.into_owned());
        }
    }
    Ok(out)
}

/// Why the Rust file `rel` (under `src/`, not a crate root) is certainly not compiled, if it
/// is not: on the way from each crate root (`src/lib.rs`, `src/main.rs`, whichever `read`
/// finds) the module it is declared by is under a cfg that is never true, or names another
/// file with `#[path]`. `read` gives a file's text (as planned or on disk), `None` when it
/// does not exist. A root that does not declare the way at all (an inline module, another
/// layout) proves nothing, so `None` is returned unless some root proves the file is left out
/// and no root reaches it.
pub fn not_compiled(rel: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Option<String> {
    let Ok(under) = rel.strip_prefix("src") else {
        return None;
    };
    if under.starts_with("bin") || !is_rust(rel) {
        return None;
    }
    let mut segments: Vec<String> = under
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segments.last().is_some_and(|s| s == "mod") {
        segments.pop();
    }
    if segments.is_empty() || matches!(segments.as_slice(), [one] if one == "lib" || one == "main")
    {
        return None;
    }
    let mut proof = None;
    for root in ["src/lib.rs", "src/main.rs"] {
        let Some(mut text) = read(Path::new(root)) else {
            continue;
        };
        let mut file = std::path::PathBuf::from(root);
        let mut dir = std::path::PathBuf::from("src");
        for (i, seg) in segments.iter().enumerate() {
            match rust::declares(&text, seg) {
                None => break,
                Some(Err(why)) => {
                    proof = Some(format!("{} declares it so: {why}", file.display()));
                    break;
                }
                Some(Ok(())) if i + 1 == segments.len() => return None,
                Some(Ok(())) => {
                    let (flat, nested) =
                        (dir.join(format!("{seg}.rs")), dir.join(seg).join("mod.rs"));
                    dir = dir.join(seg);
                    match read(&flat)
                        .map(|t| (flat.clone(), t))
                        .or_else(|| read(&nested).map(|t| (nested.clone(), t)))
                    {
                        Some((next, t)) => {
                            file = next;
                            text = t;
                        }
                        None => break,
                    }
                }
            }
        }
    }
    proof
}

/// Whether a line of `text` (the contents of `path`) is `line` once trimmed, in code that is
/// compiled: for a Rust file, lines in comments, in strings that span lines and under a cfg
/// that is never true do not count ([`rust::live_code`]), so `#[cfg(any())] pub mod v2;` does
/// not stand for the module declaration `InsertSorted` adds.
pub fn has_live_line(path: &Path, text: &str, line: &str) -> bool {
    let live = match is_rust(path) {
        true => rust::live_code(text),
        false => text.to_string(),
    };
    live.lines().any(|l| l.trim() == line)
}

/// Whether the non-blank lines of `fragment` stand in `text` in a row, indentation ignored.
/// For Rust the fragment is compared without its comments ([`rust::without_comments`]) with
/// the code cargo compiles ([`rust::live_code`]), so a line inside `/* ... */`, after `//`,
/// in a string or under `#[cfg(any())]` is not code already there.
fn contains_fragment(text: &str, fragment: &str) -> bool {
    let want: Vec<&str> = fragment
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if want.is_empty() {
        return true;
    }
    let have: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    have.windows(want.len()).any(|w| w == want.as_slice())
}

/// Whether `body` (a comment without its `//` or `#`) is the marker `marker`.
fn is_marker_body(body: &str, marker: &str) -> bool {
    body.trim()
        .strip_prefix("+kubebuilder:scaffold:")
        .is_some_and(|name| name == marker)
}

#[cfg(test)]
mod tests;
