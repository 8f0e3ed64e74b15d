//! Rust source parsed within bounds. syn's parser, its visitors and the drop of its syntax
//! tree recurse once per level of nesting, so a file with nesting no real crate reaches
//! (`((((…))))` five thousand deep, twenty thousand `!` in a row, `a = a = a …`) would
//! overflow the stack and abort the process. The token tree proc-macro2 lexes (iteratively,
//! whatever the nesting) is checked against the limits below first, and only then handed to
//! syn. `manifests` (`crate::manifests::parse`) and the commands that read a file to place
//! code in it (scaffold markers, the webhook's example field) all parse through here.
//!
//! The limits hold with room to spare on a spawned thread's 2 MiB stack in a debug build,
//! where syn needs up to 16 KiB of stack per level.

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};

/// Deepest nesting of `()`, `[]` and `{}` accepted. Hand-written crates stay far below it.
pub const MAX_DELIMITER_DEPTH: usize = 64;

/// Deepest nesting of `<…>` in one statement accepted (`Option<Vec<BTreeMap<…>>>` is 3).
/// Counted on the tokens: `<` opens, `>` closes, `;` and every delimited group start afresh,
/// so comparisons cannot add up across statements.
pub const MAX_ANGLE_DEPTH: usize = 32;

/// Operator tokens accepted in one run of an expression (between `;`, `,` or `=>`, within
/// one delimited group): `!`, `-`, `+`, `*`, `&`, `|`, `.`, `?`, `as` and the like. A chain
/// of binary operators or method calls is one syntax-tree level per operator. Hand-written
/// code stays far below it; 1,000 overflow a 2 MiB stack.
pub const MAX_OPERATORS: usize = 256;

/// Operators that nest at parse time, counted apart in the same run: an assignment `=` (right
/// associative), `return`, `break`, `yield`, `box`. 300 `return` in a row overflow a 2 MiB
/// stack while parsing.
pub const MAX_NESTING_OPERATORS: usize = 64;

/// The first place where `tokens` nest deeper than a limit above: its span, what is nested,
/// the limit. `None` when every limit holds.
pub fn too_deep(tokens: TokenStream) -> Option<(Span, &'static str, usize)> {
    /// One open group: its remaining tokens, and the counts of the current run in it.
    struct Level {
        tokens: proc_macro2::token_stream::IntoIter,
        angle: usize,
        operators: usize,
        nesting: usize,
        /// The previous token was a punct joined to this one (`==`, `=>`, `+=`, `..`).
        joint: Option<char>,
    }
    let level = |tokens: TokenStream| Level {
        tokens: tokens.into_iter(),
        angle: 0,
        operators: 0,
        nesting: 0,
        joint: None,
    };
    let mut stack = vec![level(tokens)];
    while let Some(top) = stack.last_mut() {
        let Some(token) = top.tokens.next() else {
            stack.pop();
            continue;
        };
        let joint = top.joint.take();
        match token {
            TokenTree::Group(g) => {
                if stack.len() > MAX_DELIMITER_DEPTH {
                    return Some((g.span_open(), "delimiters", MAX_DELIMITER_DEPTH));
                }
                stack.push(level(g.stream()));
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                if p.spacing() == Spacing::Joint {
                    top.joint = Some(c);
                }
                match c {
                    '<' => {
                        top.angle += 1;
                        if top.angle > MAX_ANGLE_DEPTH {
                            return Some((p.span(), "generic arguments `<…>`", MAX_ANGLE_DEPTH));
                        }
                    }
                    '>' if joint == Some('=') => {
                        // `=>`: a match arm starts a new run.
                        *top = Level {
                            tokens: std::mem::replace(
                                &mut top.tokens,
                                TokenStream::new().into_iter(),
                            ),
                            ..level(TokenStream::new())
                        };
                    }
                    '>' => top.angle = top.angle.saturating_sub(1),
                    ';' | ',' => {
                        let tokens =
                            std::mem::replace(&mut top.tokens, TokenStream::new().into_iter());
                        *top = Level {
                            tokens,
                            angle: if c == ';' { 0 } else { top.angle },
                            ..level(TokenStream::new())
                        };
                    }
                    ':' | '#' | '\'' | '$' => {}
                    _ => {
                        // The second character of `==`, `+=`, `->`, `..`, `&&` is part of one
                        // operator; `!!` or `--` are two.
                        let compound = joint.is_some_and(|prev| {
                            c == '='
                                || (c == '>' && prev == '-')
                                || (c == prev && ".&|<>".contains(c))
                        });
                        if !compound {
                            top.operators += 1;
                            if top.operators > MAX_OPERATORS {
                                return Some((
                                    p.span(),
                                    "operators in one expression",
                                    MAX_OPERATORS,
                                ));
                            }
                        }
                        // A lone `=` is an assignment (not `==`, `<=`, `=>`, `+=`).
                        let assignment =
                            c == '=' && joint.is_none() && p.spacing() == Spacing::Alone;
                        if assignment {
                            top.nesting += 1;
                            if top.nesting > MAX_NESTING_OPERATORS {
                                return Some((
                                    p.span(),
                                    "assignments in one expression",
                                    MAX_NESTING_OPERATORS,
                                ));
                            }
                        }
                    }
                }
            }
            TokenTree::Ident(i) => {
                let word = i.to_string();
                if matches!(word.as_str(), "return" | "break" | "yield" | "box") {
                    top.nesting += 1;
                    if top.nesting > MAX_NESTING_OPERATORS {
                        return Some((
                            i.span(),
                            "`return`, `break`, `yield` or `box` in one expression",
                            MAX_NESTING_OPERATORS,
                        ));
                    }
                } else if word == "as" {
                    top.operators += 1;
                    if top.operators > MAX_OPERATORS {
                        return Some((i.span(), "operators in one expression", MAX_OPERATORS));
                    }
                }
            }
            TokenTree::Literal(_) => {}
        }
    }
    None
}

/// Parses `text` as a Rust file as `syn::parse_file` does, after checking its tokens with
/// [`too_deep`]. Errors: a lexical error, nesting past a limit (naming it and its line), or
/// a syntax error; each as a message with the 1-based line.
pub fn parse_file(text: &str) -> Result<syn::File, String> {
    let mut content = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut shebang = None;
    if content.starts_with("#!") && !content[2..].trim_start().starts_with('[') {
        let end = content.find('\n').unwrap_or(content.len());
        shebang = Some(content[..end].to_string());
        content = &content[end..];
    }
    let tokens: TokenStream = content
        .parse()
        .map_err(|e: proc_macro2::LexError| format!("line {}: {e}", e.span().start().line))?;
    if let Some((span, what, limit)) = too_deep(tokens.clone()) {
        return Err(format!(
            "line {}: {what} nested more than {limit} deep",
            span.start().line
        ));
    }
    let mut file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("line {}: {e}", e.span().start().line))?;
    file.shebang = shebang;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit_hit(text: &str) -> Option<&'static str> {
        too_deep(text.parse().unwrap()).map(|(_, what, _)| what)
    }

    /// Chains that overflowed the stack (exit 134) are refused by name; the same chains
    /// within the limits parse, visit and drop on a test thread's 2 MiB stack.
    #[test]
    fn chains_past_the_limits_are_refused_and_those_within_parse() {
        let cases = [
            ("const _U: bool = {}true;", "!", MAX_OPERATORS, "operators"),
            ("const _U: i32 = 1{};", " + 1", MAX_OPERATORS, "operators"),
            ("const _U: u8 = 1{};", " as u8", MAX_OPERATORS, "operators"),
            ("fn f() {{ a{}; }}", ".b()", MAX_OPERATORS, "operators"),
            (
                "fn f() {{ {}1; }}",
                "a = ",
                MAX_NESTING_OPERATORS,
                "assignments",
            ),
            (
                "fn f() {{ {}1; }}",
                "return ",
                MAX_NESTING_OPERATORS,
                "`return`",
            ),
            ("const _U: &i32 = {}1;", "& ", MAX_OPERATORS, "operators"),
        ];
        for (shape, unit, limit, what) in cases {
            let at = |n: usize| {
                shape
                    .replace("{}", &unit.repeat(n))
                    .replace("{{", "{")
                    .replace("}}", "}")
            };
            // Room for the `=` of the item itself.
            let ok = at(limit - 2);
            assert_eq!(limit_hit(&ok), None, "{unit} x {limit}");
            let file = parse_file(&ok).unwrap();
            let _ = quote::ToTokens::to_token_stream(&file);
            let err = parse_file(&at(20_000)).unwrap_err();
            assert!(err.contains(what), "{unit}: {err}");
            assert!(err.starts_with("line 1: "), "{err}");
        }
    }

    /// Operators count per run: statements, list items and match arms start afresh, so long
    /// real code never adds up; `==`, `+=` and `..` are one operator each.
    #[test]
    fn runs_start_afresh_at_separators() {
        let statements: String = (0..400)
            .map(|i| format!("let b{i} = a + {i} == 2;\n"))
            .collect();
        assert_eq!(limit_hit(&format!("fn f() {{ {statements} }}")), None);
        let items = format!("const L: &[i32] = &[{}];", "-1, ".repeat(1000));
        assert_eq!(limit_hit(&items), None);
        let arms: String = (0..400).map(|i| format!("{i} => a + 1,\n")).collect();
        assert_eq!(
            limit_hit(&format!("fn f() {{ match x {{ {arms} _ => 0 }} }}")),
            None
        );
        let joined = format!("fn f() {{ a{}; }}", " += 1 == 2".repeat(100));
        assert_eq!(limit_hit(&joined), None);
        let nested = format!(
            "const X: i32 = {}1{};",
            "(".repeat(MAX_DELIMITER_DEPTH + 1),
            ")".repeat(MAX_DELIMITER_DEPTH + 1)
        );
        assert_eq!(limit_hit(&nested), Some("delimiters"));
    }
}
