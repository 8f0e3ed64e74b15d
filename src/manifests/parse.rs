//! Parsing one Rust source file with limits: the text is lexed by proc-macro2 (iteratively,
//! whatever the nesting), the token tree is checked for nesting no real crate reaches, and only
//! then handed to syn, whose parser recurses once per nesting level. Without the check a
//! generated or hostile file (`((((…))))` five thousand deep, `Option<Option<…>>` three
//! thousand deep) overflows the stack and aborts the process instead of giving a diagnostic.

use std::path::Path;

use proc_macro2::{Span, TokenStream, TokenTree};

use super::diag::Diagnostic;

/// Deepest nesting of `()`, `[]` and `{}` accepted. Hand-written crates stay far below it;
/// syn needs up to 16 KiB of stack per level in a debug build, so 64 levels fit the 2 MiB of
/// a spawned thread.
pub const MAX_DELIMITER_DEPTH: usize = 64;

/// Deepest nesting of `<…>` in one statement accepted (`Option<Vec<BTreeMap<…>>>` is 3).
/// Counted on the tokens: `<` opens, `>` closes, `;` and every delimited group start afresh,
/// so comparisons cannot add up across statements.
pub const MAX_ANGLE_DEPTH: usize = 32;

/// Parses `text` (claimed to come from `path`) as a Rust file, as `syn::parse_file` does
/// (byte-order mark and shebang line allowed).
///
/// Errors, each at its `file:line:column`: a lexical error (unbalanced delimiter, unterminated
/// string or comment), nesting deeper than [`MAX_DELIMITER_DEPTH`] or [`MAX_ANGLE_DEPTH`], a
/// syntax error.
pub fn parse_rust(path: &Path, text: &str) -> Result<syn::File, Diagnostic> {
    let mut content = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut shebang = None;
    if content.starts_with("#!") && !content[2..].trim_start().starts_with('[') {
        let end = content.find('\n').unwrap_or(content.len());
        shebang = Some(content[..end].to_string());
        content = &content[end..];
    }
    let tokens: TokenStream = content.parse().map_err(|e: proc_macro2::LexError| {
        Diagnostic::at(
            path,
            e.span(),
            "Rust syntax error: unbalanced delimiters, or an unterminated string, character or comment",
        )
        .with_help("rsbuilder reads the sources without compiling them; `cargo check` points at the same place")
    })?;
    if let Some((span, what, limit)) = too_deep(tokens.clone()) {
        return Err(Diagnostic::at(
            path,
            span,
            format!("{what} nested more than {limit} deep: rsbuilder stops here rather than risk its stack"),
        )
        .with_help("split the expression or type into named parts (a `type` alias, a `const`, a helper struct)"));
    }
    let mut file: syn::File = syn::parse2(tokens).map_err(|e| {
        Diagnostic::at(path, e.span(), format!("Rust syntax error: {e}"))
            .with_help("rsbuilder reads the sources without compiling them; `cargo check` points at the same place")
    })?;
    file.shebang = shebang;
    Ok(file)
}

/// The first place where the nesting exceeds a limit: its span, what is nested, the limit.
fn too_deep(tokens: TokenStream) -> Option<(Span, &'static str, usize)> {
    // (remaining tokens of a group, `<` depth in the current statement)
    let mut stack = vec![(tokens.into_iter(), 0usize)];
    while let Some((iter, angle)) = stack.last_mut() {
        match iter.next() {
            None => {
                stack.pop();
            }
            Some(TokenTree::Group(g)) => {
                if stack.len() > MAX_DELIMITER_DEPTH {
                    return Some((g.span_open(), "delimiters", MAX_DELIMITER_DEPTH));
                }
                stack.push((g.stream().into_iter(), 0));
            }
            Some(TokenTree::Punct(p)) => match p.as_char() {
                '<' => {
                    *angle += 1;
                    if *angle > MAX_ANGLE_DEPTH {
                        return Some((p.span(), "generic arguments `<…>`", MAX_ANGLE_DEPTH));
                    }
                }
                '>' => *angle = angle.saturating_sub(1),
                ';' => *angle = 0,
                _ => {}
            },
            Some(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<syn::File, Diagnostic> {
        parse_rust(Path::new("src/x.rs"), text)
    }

    #[test]
    fn parses_what_syn_parses_with_bom_and_shebang() {
        let f = parse("\u{feff}#!/usr/bin/env run-cargo-script\nstruct A;\n").unwrap();
        assert_eq!(
            f.shebang.as_deref(),
            Some("#!/usr/bin/env run-cargo-script")
        );
        assert_eq!(f.items.len(), 1);
        let f = parse("#![allow(dead_code)]\nstruct A;\n").unwrap();
        assert_eq!((f.shebang, f.attrs.len()), (None, 1));
    }

    #[test]
    fn syntax_errors_keep_their_position_after_a_shebang() {
        let err = parse("#!/bin/x\nstruct A {\n  a: ,\n}\n").unwrap_err();
        assert_eq!((err.line, err.column), (3, 6), "{err}");
        assert!(err.help.is_some());
    }

    #[test]
    fn unbalanced_delimiters_are_a_lexical_error() {
        let err = parse("fn a() {}\nfn b( {}\n").unwrap_err();
        assert!(err.message.contains("unbalanced delimiters"), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = |n: usize| format!("pub const X: i32 = {}1{};\n", "(".repeat(n), ")".repeat(n));
        // The limit itself parses (on a test thread's 2 MiB stack).
        parse(&deep(MAX_DELIMITER_DEPTH - 1)).unwrap();
        let err = parse(&deep(5000)).unwrap_err();
        assert!(
            err.message.contains("delimiters nested more than 64"),
            "{err}"
        );
        assert_eq!(
            (err.line, err.column),
            (1, 20 + MAX_DELIMITER_DEPTH),
            "{err}"
        );

        let generic = |n: usize| {
            format!(
                "pub struct S {{ pub f: {}i32{} }}\n",
                "Option<".repeat(n),
                ">".repeat(n)
            )
        };
        parse(&generic(MAX_ANGLE_DEPTH)).unwrap();
        let err = parse(&generic(3000)).unwrap_err();
        assert!(err.message.contains("generic arguments"), "{err}");
    }

    #[test]
    fn comparisons_in_many_statements_do_not_add_up() {
        let body: String = (0..200).map(|i| format!("let b{i} = a < {i};\n")).collect();
        parse(&format!("fn f(a: i32) {{\n{body}}}\n")).unwrap();
    }
}
