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
//! - **YAML and the other `#` formats:** a whole comment line (only blanks before the `#`), not
//!   inside a YAML block scalar (`key: |`) or a TOML multi-line string (`"""`, `'''`). In YAML
//!   the file is also parsed (granit-parser, the parser serde-saphyr reads YAML with), and a
//!   line inside any scalar's span (a double- or single-quoted string running over several
//!   lines, a block scalar) is not a marker. In a Dockerfile, a line inside a heredoc
//!   (`RUN <<EOF` … `EOF`) is not a marker: it is part of the instruction.
//!
//! Each marker must appear exactly once in its file: a missing marker, or one written twice
//! (which would insert the code twice: a controller spawned twice), is a [`MarkerError`]
//! naming the file and the lines, and the command writes nothing.

use std::path::{Path, PathBuf};

use ra_ap_rustc_lexer::{FrontmatterAllowed, TokenKind, tokenize};
use thiserror::Error;

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
    if contains_fragment(text, fragment) {
        return Ok(text.to_string());
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
    Ok(out)
}

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

/// 0-based line of each byte offset's line start, for the offsets of `text`.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self(starts)
    }

    fn line_of(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset) - 1
    }

    fn start(&self, line: usize) -> usize {
        self.0[line]
    }
}

/// Rust: the lines of counted markers, and the lines where the marker's text appears but does
/// not count, with the reason.
fn rust_markers(text: &str, marker: &str) -> (Vec<usize>, Vec<(usize, &'static str)>) {
    let index = LineIndex::new(text);
    let needle = format!("+kubebuilder:scaffold:{marker}");
    let mut found = Vec::new();
    let mut ignored = Vec::new();
    // The last token that is neither whitespace nor a comment, and whether it closed an inner
    // attribute.
    let mut prev: Option<TokenKind> = None;
    let mut prev_inner_attr_end = false;
    // Open brackets: true for the `[` of an inner attribute `#![`.
    let mut brackets: Vec<bool> = Vec::new();
    // The two tokens before the current one (for `#` `!` `[`).
    let mut last2: [Option<TokenKind>; 2] = [None, None];
    let mut offset = 0usize;
    for token in tokenize(text, FrontmatterAllowed::No) {
        let len = token.len as usize;
        let src = &text[offset..offset + len];
        let line = index.line_of(offset);
        let alone = text[index.start(line)..offset]
            .chars()
            .all(|c| c == ' ' || c == '\t');
        match token.kind {
            TokenKind::LineComment { doc_style } => {
                let body = src.strip_prefix("//").unwrap_or(src);
                if src.contains(&needle) {
                    if doc_style.is_some() {
                        ignored.push((line, "in a doc comment"));
                    } else if !is_marker_body(body, marker) {
                        ignored.push((line, "inside a longer comment"));
                    } else if !alone {
                        ignored.push((line, "after code on the same line"));
                    } else if at_item_or_statement(prev, prev_inner_attr_end) {
                        found.push(line);
                    } else {
                        ignored.push((
                            line,
                            "where no item, statement or match arm can start (inside an expression)",
                        ));
                    }
                }
            }
            TokenKind::BlockComment { .. } => {
                push_inner(
                    src,
                    &needle,
                    &index,
                    offset,
                    &mut ignored,
                    "inside a /* */ comment",
                );
            }
            TokenKind::Literal { .. } => {
                push_inner(
                    src,
                    &needle,
                    &index,
                    offset,
                    &mut ignored,
                    "inside a literal",
                );
            }
            TokenKind::Whitespace => {}
            kind => {
                prev_inner_attr_end = false;
                match kind {
                    TokenKind::OpenBracket => brackets.push(matches!(
                        last2,
                        [Some(TokenKind::Pound), Some(TokenKind::Bang)]
                    )),
                    TokenKind::CloseBracket => {
                        prev_inner_attr_end = brackets.pop().unwrap_or(false);
                    }
                    _ => {}
                }
                last2 = [last2[1], Some(kind)];
                prev = Some(kind);
            }
        }
        offset += len;
    }
    if !found.is_empty()
        && let Ok(file) = syn::parse_file(text)
    {
        let mut dead = DeadCode::default();
        syn::visit::Visit::visit_file(&mut dead, &file);
        found.retain(|&line| {
            // Lines of proc-macro2 spans are 1-based.
            let why = dead
                .spans
                .iter()
                .find(|(a, b, _)| *a <= line + 1 && line < *b);
            if let Some((_, _, why)) = why {
                ignored.push((line, why));
            }
            why.is_none()
        });
        ignored.sort();
    }
    (found, ignored)
}

/// Code cargo never compiles as written, where an inserted line would not take effect: the
/// bodies of `macro_rules!` definitions and items or statements under a `cfg` that is never
/// true (`#[cfg(any())]`, `#[cfg(not(all()))]`). Spans as (first line, last line, why).
#[derive(Default)]
struct DeadCode {
    spans: Vec<(usize, usize, &'static str)>,
}

impl DeadCode {
    fn add(&mut self, span: proc_macro2::Span, why: &'static str) {
        self.spans.push((span.start().line, span.end().line, why));
    }
}

/// Whether `attrs` hold a `cfg` that is never true.
fn never_compiled(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t: String = l.tokens.to_string().split_whitespace().collect();
                t == "any()" || t == "not(all())"
            })
    })
}

const CFG_NEVER: &str = "inside an item whose cfg is never true (cargo does not compile it)";
const IN_MACRO_RULES: &str = "inside a macro_rules! definition";

impl<'ast> syn::visit::Visit<'ast> for DeadCode {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        use syn::spanned::Spanned as _;
        if let syn::Item::Macro(m) = item
            && m.mac.path.is_ident("macro_rules")
        {
            self.add(item.span(), IN_MACRO_RULES);
            return;
        }
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::ExternCrate(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::ForeignMod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::TraitAlias(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => &[],
        };
        if never_compiled(attrs) {
            self.add(item.span(), CFG_NEVER);
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        use syn::spanned::Spanned as _;
        match stmt {
            syn::Stmt::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                self.add(stmt.span(), IN_MACRO_RULES)
            }
            syn::Stmt::Macro(m) if never_compiled(&m.attrs) => self.add(stmt.span(), CFG_NEVER),
            syn::Stmt::Local(l) if never_compiled(&l.attrs) => self.add(stmt.span(), CFG_NEVER),
            _ => syn::visit::visit_stmt(self, stmt),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        use syn::spanned::Spanned as _;
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        match never_compiled(attrs) {
            true => self.add(item.span(), CFG_NEVER),
            false => syn::visit::visit_impl_item(self, item),
        }
    }

    fn visit_expr(&mut self, expr: &'ast syn::Expr) {
        use syn::spanned::Spanned as _;
        // A block or closure under `#[cfg(any())]` (statement expressions carry attributes).
        let attrs: &[syn::Attribute] = match expr {
            syn::Expr::Block(e) => &e.attrs,
            syn::Expr::Unsafe(e) => &e.attrs,
            syn::Expr::Closure(e) => &e.attrs,
            syn::Expr::Call(e) => &e.attrs,
            syn::Expr::MethodCall(e) => &e.attrs,
            _ => &[],
        };
        match never_compiled(attrs) {
            true => self.add(expr.span(), CFG_NEVER),
            false => syn::visit::visit_expr(self, expr),
        }
    }
}

fn push_inner(
    src: &str,
    needle: &str,
    index: &LineIndex,
    offset: usize,
    ignored: &mut Vec<(usize, &'static str)>,
    why: &'static str,
) {
    for (i, _) in src.match_indices(needle) {
        let line = index.line_of(offset + i);
        if ignored.last().map(|l| l.0) != Some(line) {
            ignored.push((line, why));
        }
    }
}

/// Whether a line comment after the token `prev` stands where an item, a statement or a match
/// arm may start.
fn at_item_or_statement(prev: Option<TokenKind>, prev_inner_attr_end: bool) -> bool {
    match prev {
        None => true,
        Some(TokenKind::OpenBrace | TokenKind::CloseBrace | TokenKind::Semi | TokenKind::Comma) => {
            true
        }
        Some(TokenKind::CloseBracket) => prev_inner_attr_end,
        Some(_) => false,
    }
}

/// `#` formats: the lines whose whole content is the marker comment, outside YAML block
/// scalars and TOML multi-line strings, and the lines where the text appears otherwise.
fn hash_comment_markers(
    path: &Path,
    text: &str,
    marker: &str,
) -> (Vec<usize>, Vec<(usize, &'static str)>) {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let yaml = matches!(ext, "yaml" | "yml");
    let toml = ext == "toml";
    let needle = format!("+kubebuilder:scaffold:{marker}");
    let mut found = Vec::new();
    let mut ignored = Vec::new();
    // YAML: the indentation of the line that opened a block scalar, while inside it.
    let mut block_scalar: Option<usize> = None;
    // TOML: the delimiter of an open multi-line string.
    let mut toml_string: Option<&'static str> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let trimmed = line.trim();
        if let Some(parent) = block_scalar {
            if trimmed.is_empty() || indent > parent {
                if line.contains(&needle) {
                    ignored.push((i, "inside a YAML block scalar (`|` or `>`)"));
                }
                continue;
            }
            block_scalar = None;
        }
        if let Some(delim) = toml_string {
            if line.contains(&needle) {
                ignored.push((i, "inside a TOML multi-line string"));
            }
            if line.matches(delim).count() % 2 == 1 {
                toml_string = None;
            }
            continue;
        }
        if let Some(body) = trimmed.strip_prefix('#') {
            if is_marker_body(body, marker) {
                found.push(i);
            } else if line.contains(&needle) {
                ignored.push((i, "inside a longer comment"));
            }
            continue;
        }
        if line.contains(&needle) {
            ignored.push((i, "after other text on the same line"));
        }
        if yaml && opens_block_scalar(trimmed) {
            block_scalar = Some(indent);
        }
        if toml {
            for delim in ["\"\"\"", "'''"] {
                if line.matches(delim).count() % 2 == 1 {
                    toml_string = Some(delim);
                    break;
                }
            }
        }
    }
    let inside: Option<(Vec<bool>, &'static str)> = if yaml {
        yaml_scalar_lines(text).map(|lines| (lines, "inside a YAML string"))
    } else if is_dockerfile(path) {
        Some((heredoc_lines(text), "inside a Dockerfile heredoc"))
    } else {
        None
    };
    if let Some((inside, why)) = inside {
        found.retain(|&i| {
            let keep = !inside.get(i).copied().unwrap_or(false);
            if !keep {
                ignored.push((i, why));
            }
            keep
        });
        ignored.sort();
    }
    (found, ignored)
}

/// For each line of `text` (0-based), whether it lies inside a scalar of the YAML parsed from
/// it: after the line where a scalar starts and up to the line where it ends (the end's line
/// only when the scalar ends after its first column). `None` when `text` is not YAML the
/// parser reads (the line rules above still apply).
fn yaml_scalar_lines(text: &str) -> Option<Vec<bool>> {
    let lines = text.lines().count();
    let mut inside = vec![false; lines + 1];
    for event in granit_parser::Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        if !matches!(event, granit_parser::Event::Scalar(..)) {
            continue;
        }
        // Lines are 1-based in the parser.
        let (first, last) = (span.start.line(), span.end.line());
        let last = if span.end.col() == 0 {
            last.saturating_sub(1)
        } else {
            last
        };
        for l in first..=last {
            // The scalar's first line holds its key or indicator: a comment there is not a
            // whole line. Lines after it are the scalar's own.
            if l > first
                && let Some(slot) = inside.get_mut(l - 1)
            {
                *slot = true;
            }
        }
    }
    Some(inside)
}

/// Whether `path` is a Dockerfile (`Dockerfile`, `Dockerfile.<x>`, `<x>.Dockerfile`).
fn is_dockerfile(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "Dockerfile" || name.starts_with("Dockerfile.") || name.ends_with(".Dockerfile")
}

/// For each line of a Dockerfile (0-based), whether it is inside a heredoc: the lines after
/// an instruction line holding `<<WORD` (also `<<-WORD`, `<<"WORD"`, `<<'WORD'`), up to and
/// including the line that is `WORD` (leading tabs allowed after `<<-`). Several heredocs of
/// one line follow each other.
fn heredoc_lines(text: &str) -> Vec<bool> {
    let lines: Vec<&str> = text.lines().collect();
    let mut inside = vec![false; lines.len()];
    let mut pending: std::collections::VecDeque<(String, bool)> = Default::default();
    for (i, line) in lines.iter().enumerate() {
        if let Some((word, dash)) = pending.front() {
            inside[i] = true;
            let candidate = if *dash {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if candidate == word {
                pending.pop_front();
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        let mut rest = *line;
        while let Some(at) = rest.find("<<") {
            rest = &rest[at + 2..];
            let dash = rest.starts_with('-');
            let word_part = rest.trim_start_matches('-');
            let word: String = word_part
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !word.is_empty() {
                pending.push_back((word, dash));
            }
        }
    }
    inside
}

/// Whether a YAML line (trimmed, not a comment) ends with a block scalar indicator: `key: |`,
/// `- >-`, `key: |2 # comment`.
fn opens_block_scalar(trimmed: &str) -> bool {
    let code = match trimmed.find(" #") {
        Some(i) => trimmed[..i].trim_end(),
        None => trimmed,
    };
    let Some(last) = code.rsplit([' ', '\t']).next() else {
        return false;
    };
    let mut chars = last.chars();
    let starts = matches!(chars.next(), Some('|' | '>'));
    let before_ok = code.len() == last.len()
        || code[..code.len() - last.len()]
            .trim_end()
            .ends_with([':', '-']);
    starts && before_ok && chars.all(|c| c.is_ascii_digit() || c == '+' || c == '-')
}

#[cfg(test)]
mod tests {
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
        let text = "#[cfg(test)]\nmod on {\n    // +kubebuilder:scaffold:controllers\n}\n";
        assert_eq!(rs(text).unwrap(), 2);
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

    fn rs(text: &str) -> Result<usize, MarkerError> {
        locate(Path::new("src/main.rs"), text, "controllers")
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
        assert_eq!(rs("// +kubebuilder:scaffold:controllers\nmod a;\n"), Ok(0));
        assert_eq!(
            rs("#![allow(unused)]\n// +kubebuilder:scaffold:controllers\n"),
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
    fn block_scalar_indicators() {
        for yes in ["key: |", "key: >-", "- |", "key: |2 # c", "|"] {
            assert!(opens_block_scalar(yes), "{yes}");
        }
        for no in ["key: a|b", "key: 'x'", "key:", "a >= b"] {
            assert!(!opens_block_scalar(no), "{no}");
        }
    }
}
