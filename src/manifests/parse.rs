//! Parsing one Rust source file with limits: the text is lexed by proc-macro2 (iteratively,
//! whatever the nesting), the token tree is checked for nesting no real crate reaches
//! ([`crate::syntax::too_deep`]), and only then handed to syn, whose parser recurses once per
//! nesting level. Without the check a
//! generated or hostile file (`((((…))))` five thousand deep, `Option<Option<…>>` three
//! thousand deep) overflows the stack and aborts the process instead of giving a diagnostic.
//!
//! Every identifier token is put in Unicode NFC between lexing and parsing, as rustc's lexer
//! does, so that an identifier written in decomposed form (NFD) names the same item and gives
//! the same property name as its composed spelling, in items, attribute arguments and macro
//! calls alike.

use std::path::Path;

use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};

use super::diag::Diagnostic;

pub use crate::syntax::{MAX_ANGLE_DEPTH, MAX_DELIMITER_DEPTH};

/// Largest source file read, in bytes (16 MiB). Hand-written and generated crates stay far
/// below it; the memory of a parse grows with the file, and a 50 MB file took 5.5 GiB.
pub const MAX_SOURCE_BYTES: usize = 16 << 20;

/// Bytes of source one run reads over all its files (128 MiB). Every text is held until the
/// run ends, so this bounds that memory whatever the number of files; the largest crate
/// known to be read whole (k8s-openapi 0.28, with `--paths`) holds some 54 MB of source.
/// Files are read in path order; the one that would go over the budget is refused by name.
pub const MAX_TOTAL_SOURCE_BYTES: u64 = 128 << 20;

/// Tokens a source file may hold: this many, plus [`MAX_TOKENS_PER_LINE`] per line. A parse
/// keeps up to some 480 bytes per token (the token tree, syn's syntax tree), so the budget
/// bounds memory by the file's lines (at most about 460 MiB per 100,000 lines): a file of
/// ordinary code (6 to 7 tokens a line) is within it at any length, a 10 MB line of tokens is
/// not. docs/benchmarks.md has the figures.
pub const MAX_TOKENS_BASE: usize = 300_000;

/// See [`MAX_TOKENS_BASE`].
pub const MAX_TOKENS_PER_LINE: usize = 7;

/// Parses `text` (claimed to come from `path`) as a Rust file, as `syn::parse_file` does
/// (shebang line allowed), with every identifier in Unicode NFC as rustc's lexer gives it.
/// `text` is what rustc lexes: the file's text after
/// [`crate::manifests::source::normalize_src`] (leading byte order mark dropped, no `\r\n`),
/// so a second byte order mark is an error, as in rustc.
///
/// Errors, each at its `file:line:column`: a file larger than [`MAX_SOURCE_BYTES`] or with
/// more tokens than [`MAX_TOKENS_BASE`] and [`MAX_TOKENS_PER_LINE`] allow (checked before
/// anything is built from it), a carriage return not followed by a line feed in a
/// string literal or doc comment (rustc refuses it too), another lexical error (unbalanced
/// delimiter, unterminated string or comment), nesting or chains past the limits of
/// [`crate::syntax::too_deep`], a syntax error.
pub fn parse_rust(path: &Path, text: &str) -> Result<syn::File, Diagnostic> {
    check_size(path, text)?;
    let mut content = text;
    if content.starts_with('\u{feff}') {
        // proc-macro2 would drop this one too; rustc drops only the file's first.
        return Err(Diagnostic::new(
            path,
            1,
            1,
            "unknown start of token: a second byte order mark (U+FEFF); rustc skips only one",
        )
        .with_help("remove the extra byte order mark at the start of the file"));
    }
    let mut shebang = None;
    if content.starts_with("#!") && !content[2..].trim_start().starts_with('[') {
        let end = content.find('\n').unwrap_or(content.len());
        shebang = Some(content[..end].to_string());
        content = &content[end..];
    }
    let tokens: TokenStream = content.parse().map_err(|e: proc_macro2::LexError| {
        if let Some(d) = bare_carriage_return(path, content, e.span()) {
            return d;
        }
        Diagnostic::at(
            path,
            e.span(),
            "Rust syntax error: unbalanced delimiters, or an unterminated string, character or comment",
        )
        .with_help("rsbuilder reads the sources without compiling them; `cargo check` points at the same place")
    })?;
    if let Some((span, what, limit)) = crate::syntax::too_deep(tokens.clone()) {
        return Err(Diagnostic::at(
            path,
            span,
            format!("{what} nested more than {limit} deep: rsbuilder stops here rather than risk its stack"),
        )
        .with_help("split the expression or type into named parts (a `type` alias, a `const`, a helper struct)"));
    }
    // The nesting is bounded now, so the recursion of `nfc_idents` is too.
    let tokens = if content.is_ascii() {
        tokens
    } else {
        nfc_idents(tokens)
    };
    let mut file: syn::File = syn::parse2(tokens).map_err(|e| {
        // A doc comment with a lone `\r` is not a doc comment to proc-macro2 but a `/`
        // followed by an ordinary comment, which syn then refuses.
        if let Some(d) = bare_carriage_return(path, content, e.span()) {
            return d;
        }
        Diagnostic::at(path, e.span(), format!("Rust syntax error: {e}"))
            .with_help("rsbuilder reads the sources without compiling them; `cargo check` points at the same place")
    })?;
    file.shebang = shebang;
    Ok(file)
}

const SIZE_HELP: &str = "split the file into modules, or move large data out of Rust source (`include_str!`, a data file read at run time); rsbuilder reads source files without compiling them and keeps their syntax trees in memory";

/// The error for the source file `path` of `len` bytes, above [`MAX_SOURCE_BYTES`]: at
/// `path:1:1`, with advice.
pub(crate) fn too_large(path: &Path, len: u64) -> Diagnostic {
    Diagnostic::new(
        path,
        1,
        1,
        format!(
            "this source file is {len} bytes; rsbuilder reads source files of at most {MAX_SOURCE_BYTES} bytes (16 MiB)"
        ),
    )
    .with_help(SIZE_HELP)
}

/// The error for the source file `path` of `len` bytes that would take the bytes read by
/// this run (`used` so far) above [`MAX_TOTAL_SOURCE_BYTES`]: at `path:1:1`, with advice.
pub(crate) fn over_total(path: &Path, len: u64, used: u64) -> Diagnostic {
    Diagnostic::new(
        path,
        1,
        1,
        format!(
            "reading this source file ({len} bytes) would take the source read by this run above {MAX_TOTAL_SOURCE_BYTES} bytes (128 MiB), the most rsbuilder reads in one run; {used} bytes were read before it"
        ),
    )
    .with_help("point `--paths` at the crate's own sources only (not vendored or generated code), or split the run; rsbuilder keeps every source file it reads in memory")
}

/// Refuses a file above [`MAX_SOURCE_BYTES`], or with more tokens than its lines allow
/// ([`MAX_TOKENS_BASE`], [`MAX_TOKENS_PER_LINE`]). Tokens are counted with rustc's own lexer
/// (`ra_ap_rustc_lexer`), which builds nothing, so the count costs no memory; comments and
/// whitespace are not counted, a doc comment counts as one.
fn check_size(path: &Path, text: &str) -> Result<(), Diagnostic> {
    if text.len() > MAX_SOURCE_BYTES {
        return Err(too_large(path, text.len() as u64));
    }
    use ra_ap_rustc_lexer::{FrontmatterAllowed, TokenKind, tokenize};
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let budget = MAX_TOKENS_BASE.saturating_add(lines.saturating_mul(MAX_TOKENS_PER_LINE));
    let tokens = tokenize(text, FrontmatterAllowed::No)
        .filter(|t| match t.kind {
            TokenKind::Whitespace => false,
            TokenKind::LineComment { doc_style } | TokenKind::BlockComment { doc_style, .. } => {
                doc_style.is_some()
            }
            _ => true,
        })
        .count();
    if tokens > budget {
        return Err(Diagnostic::new(
            path,
            1,
            1,
            format!(
                "this source file holds {tokens} tokens in {lines} lines; rsbuilder reads at most {MAX_TOKENS_BASE} tokens plus {MAX_TOKENS_PER_LINE} per line ({budget} here), which bounds the memory of a run"
            ),
        )
        .with_help(SIZE_HELP));
    }
    Ok(())
}

/// The diagnostic for a lexical error caused by a carriage return that no line feed follows,
/// when the token that failed at `at` holds one: rustc refuses such a `\r` in string
/// literals (normal and raw) and doc comments ("bare CR not allowed"), and proc-macro2 fails
/// there with no reason. `None` when the error has another cause (a lone `\r` in whitespace
/// or an ordinary comment is allowed).
fn bare_carriage_return(path: &Path, content: &str, at: Span) -> Option<Diagnostic> {
    let start = at.start();
    // Byte offset of the error's line:column (columns count chars, as proc-macro2's do).
    let line_start = content
        .split_inclusive('\n')
        .take(start.line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>();
    let offset = line_start
        + content[line_start..]
            .char_indices()
            .nth(start.column)
            .map_or(content.len() - line_start, |(i, _)| i);
    let rest = &content[offset..];
    // The failed token runs from the error to the end of its line at most, unless it is a
    // string or block comment: look as far as the next lone `\r`, then check nothing but
    // that token lies between (the lexer fails at the start of the token it cannot finish).
    let cr = rest
        .match_indices('\r')
        .map(|(i, _)| i)
        .find(|&i| !rest[i + 1..].starts_with('\n'))?;
    if !open_up_to(&rest[..cr]) {
        return None;
    }
    let before = &content[..offset + cr];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some(
        Diagnostic::new(
            path,
            line,
            column,
            "a carriage return (\\r) that no line feed follows, inside a string literal or doc comment: rustc refuses it (bare CR not allowed)",
        )
        .with_help("write the escape `\\r` in a normal string literal, or give the file consistent line endings (all LF or all CRLF)"),
    )
}

/// Whether `token` opens a string literal or doc comment that is still open at its end.
fn open_up_to(token: &str) -> bool {
    if let Some(body) = token
        .strip_prefix("///")
        .or_else(|| token.strip_prefix("//!"))
    {
        return !body.starts_with('/') && !body.contains('\n');
    }
    if let Some(body) = token
        .strip_prefix("/**")
        .or_else(|| token.strip_prefix("/*!"))
    {
        return !body.contains("*/");
    }
    let body = token
        .strip_prefix('b')
        .or_else(|| token.strip_prefix('c'))
        .unwrap_or(token);
    if let Some(raw) = body.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let Some(text) = raw[hashes..].strip_prefix('"') else {
            return false;
        };
        let end = format!("\"{}", "#".repeat(hashes));
        return !text.contains(&end);
    }
    let Some(text) = body.strip_prefix('"') else {
        return false;
    };
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' => return false,
            _ => {}
        }
    }
    true
}

/// `tokens` with every identifier in Unicode NFC, as rustc's lexer puts them (its
/// `nfc_normalize` of each identifier token); spans are kept. Called on token trees whose
/// nesting [`too_deep`] has bounded.
///
/// Inside the attributes of serde, schemars and kube, a string that the derive parses as Rust
/// (`default = "path"`, `with = "Type"`, `status = "Type"`, see [`PATH_KEYS`]) gets its
/// identifiers composed too: the derive lexes it with rustc, which composes them, and it must
/// name the item the sources define. Every other string keeps its spelling, as in rustc.
fn nfc_idents(tokens: TokenStream) -> TokenStream {
    nfc_tokens(tokens, false)
}

/// Keys whose string value the derives of serde, schemars and kube-derive parse as a path,
/// a type or bounds.
const PATH_KEYS: &[&str] = &[
    "default",
    "with",
    "serialize_with",
    "deserialize_with",
    "skip_serializing_if",
    "from",
    "try_from",
    "into",
    "remote",
    "getter",
    "bound",
    "schema_with",
    "status",
];

/// Attributes whose [`PATH_KEYS`] strings are Rust to their derive.
const PATH_ATTRS: &[&str] = &["serde", "schemars", "kube"];

fn nfc_tokens(tokens: TokenStream, in_attr: bool) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    for (i, tree) in trees.iter().enumerate() {
        out.push(match tree {
            TokenTree::Ident(ident) => TokenTree::Ident(nfc_ident(ident)),
            TokenTree::Group(group) => {
                // `#[serde(...)]`: a bracket group after `#` (or `#!`) whose path is one of
                // PATH_ATTRS; once inside, every nested group is too.
                let after_pound = matches!(
                    trees[..i].last(),
                    Some(TokenTree::Punct(p)) if p.as_char() == '#' || p.as_char() == '!'
                );
                let opens_attr = group.delimiter() == proc_macro2::Delimiter::Bracket
                    && after_pound
                    && matches!(
                        group.stream().into_iter().next(),
                        Some(TokenTree::Ident(i)) if PATH_ATTRS.iter().any(|a| i == a)
                    );
                let mut g = Group::new(
                    group.delimiter(),
                    nfc_tokens(group.stream(), in_attr || opens_attr),
                );
                g.set_span(group.span());
                TokenTree::Group(g)
            }
            TokenTree::Literal(lit) if in_attr && i >= 2 => {
                let keyed = matches!(
                    (&trees[i - 2], &trees[i - 1]),
                    (TokenTree::Ident(k), TokenTree::Punct(eq))
                        if eq.as_char() == '=' && PATH_KEYS.iter().any(|p| k == p)
                );
                match keyed.then(|| nfc_string(lit)).flatten() {
                    Some(l) => TokenTree::Literal(l),
                    None => TokenTree::Literal(lit.clone()),
                }
            }
            other => other.clone(),
        });
    }
    out.into_iter().collect()
}

/// `ident` in NFC.
fn nfc_ident(ident: &Ident) -> Ident {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    let text = ident.to_string();
    let (raw, name) = match text.strip_prefix("r#") {
        Some(name) => (true, name),
        None => (false, text.as_str()),
    };
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        return ident.clone();
    }
    let nfc: String = name.nfc().collect();
    if nfc == name {
        return ident.clone();
    }
    if raw {
        Ident::new_raw(&nfc, ident.span())
    } else {
        Ident::new(&nfc, ident.span())
    }
}

/// A string literal holding `lit`'s value in NFC, when it is a string literal whose value
/// changes; `None` otherwise.
fn nfc_string(lit: &proc_macro2::Literal) -> Option<proc_macro2::Literal> {
    use unicode_normalization::UnicodeNormalization;
    let s: syn::LitStr = syn::parse2(TokenTree::Literal(lit.clone()).into()).ok()?;
    let value = s.value();
    if value.is_ascii() {
        return None;
    }
    let nfc: String = value.nfc().collect();
    if nfc == value {
        return None;
    }
    let mut out = proc_macro2::Literal::string(&nfc);
    out.set_span(lit.span());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<syn::File, Diagnostic> {
        let text = crate::manifests::source::normalize_src(text.to_string());
        parse_rust(Path::new("src/x.rs"), &text)
    }

    /// A file above the size limit, or with more tokens than its lines allow, is refused by
    /// name before anything is built from it; the same tokens spread over enough lines parse.
    #[test]
    fn files_too_large_or_too_dense_are_refused_naming_the_limit() {
        let big = format!("/// {}\nstruct A;\n", "x".repeat(MAX_SOURCE_BYTES));
        let err = parse(&big).unwrap_err().to_string();
        assert!(err.starts_with("src/x.rs:1:1: "), "{err}");
        assert!(
            err.contains(&format!(
                "rsbuilder reads source files of at most {MAX_SOURCE_BYTES} bytes (16 MiB)"
            )),
            "{err}"
        );
        // 600,012 tokens on one line (`1,` 300,000 times, and twelve more): over 300,000 + 14.
        let items = 300_000;
        let dense = format!("const L: &[u8] = &[{}];\n", "1,".repeat(items));
        let err = parse(&dense).unwrap_err().to_string();
        assert!(
            err.contains("holds 600012 tokens in 2 lines; rsbuilder reads at most 300000 tokens plus 7 per line (300014 here)"),
            "{err}"
        );
        // The same tokens, ten to a line: within the budget.
        let spread = format!(
            "const L: &[u8] = &[\n{}];\n",
            "1, 1, 1, 1, 1,\n".repeat(items / 5)
        );
        assert!(parse(&spread).is_ok());
        // Comments and whitespace are not counted.
        let comments = format!(
            "// {}\n/* {} */\nstruct A;\n",
            "a b ".repeat(300_000),
            "c d ".repeat(300_000)
        );
        assert!(parse(&comments).is_ok());
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
        // rustc drops one byte order mark; a second is an unknown token.
        let err = parse("\u{feff}\u{feff}struct A;\n").unwrap_err();
        assert!(err.message.contains("second byte order mark"), "{err}");
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

    /// Every identifier of `file`, in order, as text.
    fn idents(file: &syn::File) -> Vec<String> {
        fn walk(tokens: TokenStream, out: &mut Vec<String>) {
            for t in tokens {
                match t {
                    TokenTree::Ident(i) => out.push(i.to_string()),
                    TokenTree::Group(g) => walk(g.stream(), out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(quote::ToTokens::to_token_stream(file), &mut out);
        out
    }

    #[test]
    fn identifiers_are_nfc_everywhere_and_strings_are_untouched() {
        // "café" and "naïve" decomposed: e + U+0301, i + U+0308.
        let (cafe_nfd, naive_nfd) = ("cafe\u{301}", "nai\u{308}ve");
        let text = format!(
            "#[serde(rename = \"{cafe_nfd}\")]\n#[schemars(description = {cafe_nfd})]\n\
             pub struct S {{ pub {cafe_nfd}: r#{naive_nfd}, pub x: m!({naive_nfd}) }}\n"
        );
        let file = parse(&text).unwrap();
        let got = idents(&file);
        assert_eq!(
            got,
            [
                "serde",
                "rename",
                "schemars",
                "description",
                "café",
                "pub",
                "struct",
                "S",
                "pub",
                "café",
                "r#naïve",
                "pub",
                "x",
                "m",
                "naïve"
            ]
        );
        // A string literal keeps its spelling: rustc does not normalize literals (strings
        // a derive parses as paths aside, see the next test).
        let text = quote::ToTokens::to_token_stream(&file).to_string();
        assert!(text.contains(&format!("\"{cafe_nfd}\"")), "{text}");
        // Spans survive: an error after NFD text is at its place (columns count chars).
        let err = parse(&format!("struct {cafe_nfd} {{\n  a: ,\n}}\n")).unwrap_err();
        assert_eq!((err.line, err.column), (2, 6), "{err}");
        let err = parse(&format!("fn {cafe_nfd}() {{ (1 }}\n")).unwrap_err();
        assert_eq!(err.line, 1, "{err}");
    }

    #[test]
    fn strings_the_derives_parse_as_paths_are_composed_and_others_are_not() {
        let nfd = "Pha\u{308}se";
        let text = format!(
            "#[serde(default = \"{nfd}::d\", rename = \"{nfd}\")]\n\
             #[schemars(with = \"{nfd}\", description = \"{nfd}\")]\n\
             #[kube(status = \"{nfd}\", kind = \"{nfd}\")]\n\
             #[doc = \"{nfd}\"]\n#[other(default = \"{nfd}\")]\nstruct S;\n"
        );
        let file = parse(&text).unwrap();
        let strings: Vec<String> = file.items[0]
            .to_token_stream_strings()
            .into_iter()
            .collect();
        assert_eq!(
            strings,
            [
                "Phäse::d".to_string(),
                nfd.to_string(),
                "Phäse".to_string(),
                nfd.to_string(),
                "Phäse".to_string(),
                nfd.to_string(),
                nfd.to_string(),
                nfd.to_string(),
            ]
        );
    }

    /// The values of the string literals of a token tree, in order.
    trait Strings {
        fn to_token_stream_strings(&self) -> Vec<String>;
    }

    impl Strings for syn::Item {
        fn to_token_stream_strings(&self) -> Vec<String> {
            fn walk(tokens: TokenStream, out: &mut Vec<String>) {
                for t in tokens {
                    match t {
                        TokenTree::Literal(l) => {
                            if let Ok(s) = syn::parse2::<syn::LitStr>(TokenTree::Literal(l).into())
                            {
                                out.push(s.value());
                            }
                        }
                        TokenTree::Group(g) => walk(g.stream(), out),
                        _ => {}
                    }
                }
            }
            let mut out = Vec::new();
            walk(quote::ToTokens::to_token_stream(self), &mut out);
            out
        }
    }

    #[test]
    fn a_bare_carriage_return_in_a_string_or_doc_comment_is_named() {
        for (text, line, column) in [
            ("struct A;\nconst S: &str = \"a\rb\";\n", 2, 19),
            ("const S: &str = r#\"a\rb\"#;\n", 1, 21),
            ("struct A;\n/// a\rb\nstruct B;\n", 2, 6),
            ("struct A {\n    /// a\rb\n    x: i32,\n}\n", 2, 10),
            ("/** a\r */\nstruct B;\n", 1, 6),
            ("const S: &[u8] = b\"\r\";\n", 1, 20),
        ] {
            let err = parse(text).unwrap_err();
            assert!(
                err.message.contains("bare CR not allowed"),
                "{text:?}: {err}"
            );
            assert_eq!((err.line, err.column), (line, column), "{text:?}: {err}");
        }
        // Allowed as rustc allows it: in whitespace and ordinary comments.
        parse("struct A;\r// a\rb\n/* c\r */ struct B;\n").unwrap();
        // Another lexical error with a lone `\r` elsewhere keeps the general message.
        let err = parse("fn a( {}\n// x\ry\n").unwrap_err();
        assert!(err.message.contains("unbalanced delimiters"), "{err}");
    }
}
