//! Rust markers: lexed with rustc's own lexer, counted only where an item, a statement or
//! a match arm may start, and only in code cargo compiles ([`super::dead_code`]).

use ra_ap_rustc_lexer::{FrontmatterAllowed, LiteralKind, TokenKind, tokenize};

use super::dead_code::{CFG_NEVER, DeadCode, marker_position};
use super::is_marker_body;

/// 0-based line of each byte offset's line start, for the offsets of `text`.
pub(super) struct LineIndex(Vec<usize>);

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
pub(super) fn rust_markers(text: &str, marker: &str) -> (Vec<usize>, Vec<(usize, &'static str)>) {
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
        && let Ok(file) = crate::syntax::parse_file(text)
    {
        let mut dead = DeadCode::default();
        syn::visit::Visit::visit_file(&mut dead, &file);
        let position = marker_position(marker);
        found.retain(|&line| {
            // Lines of proc-macro2 spans are 1-based.
            let why = dead
                .spans
                .iter()
                .find(|(a, b, _)| *a <= line + 1 && line < *b)
                .map(|(_, _, why)| *why)
                .or_else(|| dead.misplaced(line + 1, position));
            if let Some(why) = why {
                ignored.push((line, why));
            }
            why.is_none()
        });
        ignored.sort();
    }
    (found, ignored)
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

/// The code of `text` cargo compiles, for telling whether a fragment is already there:
/// [`without_comments`], with string literals that span lines blanked too (a line of a raw
/// string is not code) and the lines of items whose cfg is never true (`#[cfg(any())]`,
/// `#[cfg(false)]`) left empty. Lines under a cfg that depends on the build (`test`, a
/// feature) or in a `macro_rules!` body still count: they are compiled in some builds, or
/// where the macro is called. Newlines are kept, so line numbers stay; a text syn cannot
/// parse keeps those lines.
pub(super) fn live_code(text: &str) -> String {
    let out = blanked(text, |kind, piece| {
        // A line inside a string that spans lines is not a line of code. A one-line string
        // stays: fragments hold them (`.route("/x", ...)`), and no whole line of code is
        // inside one.
        matches!(
            kind,
            TokenKind::Literal {
                kind: LiteralKind::Str { .. }
                    | LiteralKind::RawStr { .. }
                    | LiteralKind::ByteStr { .. }
                    | LiteralKind::RawByteStr { .. }
                    | LiteralKind::CStr { .. }
                    | LiteralKind::RawCStr { .. },
                ..
            }
        ) && piece.contains('\n')
    });
    let Ok(file) = crate::syntax::parse_file(text) else {
        return out;
    };
    let mut dead = DeadCode::default();
    syn::visit::Visit::visit_file(&mut dead, &file);
    // Only what is never compiled: an item under a cfg rsbuilder cannot decide (`test`, a
    // feature) is compiled in some builds, and a macro body may be expanded, so a line
    // there still counts (inserting it again would declare it twice in those builds).
    dead.spans.retain(|(_, _, why)| *why == CFG_NEVER);
    if dead.spans.is_empty() {
        return out;
    }
    out.split_inclusive('\n')
        .enumerate()
        .map(|(i, line)| {
            // Spans' lines are 1-based.
            let dead_line = dead.spans.iter().any(|(a, b, _)| *a <= i + 1 && i < *b);
            match dead_line {
                true if line.ends_with('\n') => "\n",
                true => "",
                false => line,
            }
        })
        .collect()
}

/// `text` with every comment (line, block and doc comments) replaced by spaces, newlines
/// kept, as rustc's lexer finds them; a text the lexer cannot take apart is returned as it
/// is.
pub(super) fn without_comments(text: &str) -> String {
    blanked(text, |_, _| false)
}

/// `text` with every comment, and every other token `also` picks, replaced by spaces
/// (newlines kept), as rustc's lexer finds them; a text the lexer cannot take apart is
/// returned as it is.
fn blanked(text: &str, also: impl Fn(TokenKind, &str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut offset = 0;
    for token in tokenize(text, FrontmatterAllowed::No) {
        let len = token.len as usize;
        let Some(piece) = text.get(offset..offset + len) else {
            return text.to_string();
        };
        let comment = matches!(
            token.kind,
            TokenKind::LineComment { .. } | TokenKind::BlockComment { .. }
        );
        match comment || also(token.kind, piece) {
            true => out.extend(piece.chars().map(|c| if c == '\n' { '\n' } else { ' ' })),
            false => out.push_str(piece),
        }
        offset += len;
    }
    out
}

/// How the top-level `mod name` items of `text` (a parsed Rust file) declare the module
/// `name`: `None` when no such item is there (it may be declared inline, or the file is not
/// on the way); `Some(Ok(()))` when one is compiled and names its file the default way;
/// `Some(Err(why))` when every one is under a cfg that is never true or names another file
/// with `#[path]`, so the file rsbuilder would edit is not that module.
pub(super) fn declares(text: &str, name: &str) -> Option<Result<(), String>> {
    let file = crate::syntax::parse_file(text).ok()?;
    let mut why = None;
    for item in &file.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.ident != name {
            continue;
        }
        if super::dead_code::never_compiled_item(&m.attrs) {
            why = Some(format!("`mod {name}` is under a cfg that is never true"));
        } else if m.attrs.iter().any(|a| a.path().is_ident("path")) {
            why = Some(format!("`mod {name}` names another file with #[path]"));
        } else {
            return Some(Ok(()));
        }
    }
    why.map(Err)
}
