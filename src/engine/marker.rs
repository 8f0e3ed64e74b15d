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

/// Where a Rust marker may stand: where an item of a module may (`api-kinds`, `imports`),
/// where a statement of a function body may (`controllers` in `main.rs`), or either (a
/// marker rsbuilder does not scaffold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    Item,
    Statement,
    Either,
}

/// The markers rsbuilder scaffolds inside function bodies; every other marker it scaffolds
/// stands among a module's items.
const STATEMENT_MARKERS: &[&str] = &[
    "certificates",
    "webhooks",
    "controllers",
    "webhook-registrations",
    "webhook-test-registrations",
];

/// The markers rsbuilder scaffolds among a module's items. `apiserver-kinds` is one in a
/// version module and a statement in `src/bin/apiserver.rs`, so it is left to either.
const ITEM_MARKERS: &[&str] = &[
    "imports",
    "modules",
    "api-versions",
    "api-kinds",
    "controller-modules",
    "webhook-modules",
    "webhook-kinds",
    "webhook-imports",
    "webhook-handlers",
    "webhook-tests",
    "apiserver-versions",
    "external-groups",
    "external-versions",
];

fn marker_position(marker: &str) -> Position {
    if STATEMENT_MARKERS.contains(&marker) {
        Position::Statement
    } else if ITEM_MARKERS.contains(&marker) {
        Position::Item
    } else {
        Position::Either
    }
}

/// Code cargo never compiles as written, where an inserted line would not take effect: the
/// bodies of `macro_rules!` definitions and items or statements under a `cfg` that is never
/// true (`#[cfg(any())]`, `#[cfg(false)]`, `#[cfg(all(any(), unix))]`, a `cfg_attr` that adds
/// one) or that rsbuilder cannot decide (an unknown predicate). Spans as (first line, last
/// line, why). Also the brace-delimited regions of the file, to tell where a marker stands.
#[derive(Default)]
struct DeadCode {
    spans: Vec<(usize, usize, &'static str)>,
    /// (first line, first column, last line, what the region is).
    regions: Vec<(usize, usize, usize, Region)>,
}

/// What a brace-delimited region of a Rust file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    /// The items of an inline `mod`.
    Module,
    /// The statements of a block (a function body, a `const` block, a closure's block).
    Block,
    /// Anything else: why a marker inside it does not count.
    Other(&'static str),
}

impl DeadCode {
    fn add(&mut self, span: proc_macro2::Span, why: &'static str) {
        self.spans.push((span.start().line, span.end().line, why));
    }

    fn region(&mut self, span: proc_macro2::Span, region: Region) {
        let (start, end) = (span.start(), span.end());
        self.regions
            .push((start.line, start.column, end.line, region));
    }

    /// Why a marker on `line` (1-based) does not stand where `position` asks, if it does not:
    /// the innermost region strictly around the line decides (none: the file's items).
    fn misplaced(&self, line: usize, position: Position) -> Option<&'static str> {
        let inner = self
            .regions
            .iter()
            .filter(|(a, _, b, _)| *a < line && line < *b)
            .max_by_key(|(a, col, _, _)| (*a, *col))
            .map_or(Region::Module, |r| r.3);
        match (inner, position) {
            (Region::Other(why), _) => Some(why),
            (Region::Module, Position::Statement) => Some(
                "among a module's items, where this marker does not belong (it marks where statements of a function body go)",
            ),
            (Region::Block, Position::Item) => Some(
                "inside a function body or another block, where this marker does not belong (it marks where a module's items go)",
            ),
            _ => None,
        }
    }
}

/// A `cfg` predicate: `true`, `false` (literals), or a name, `name = "value"` or `any(..)`,
/// `all(..)`, `not(..)`.
enum Pred {
    Bool(bool),
    Meta(Box<syn::Meta>),
}

impl syn::parse::Parse for Pred {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(syn::LitBool) {
            return Ok(Pred::Bool(input.parse::<syn::LitBool>()?.value));
        }
        input.parse().map(|m| Pred::Meta(Box::new(m)))
    }
}

/// The comma-separated predicates of `list`.
fn preds(list: &syn::MetaList) -> Result<Vec<Pred>, ()> {
    list.parse_args_with(syn::punctuated::Punctuated::<Pred, syn::Token![,]>::parse_terminated)
        .map(|p| p.into_iter().collect())
        .map_err(|_| ())
}

/// Whether a `cfg` predicate holds: `Some(true)` always, `Some(false)` never, `None` when it
/// depends on the build (`test`, `unix`, `feature = "x"`) and rsbuilder counts it as compiled.
/// `Err` for a predicate it does not know. The rules are rustc's: `any()` is false, `all()`
/// true, and `true` / `false` are literals.
fn cfg_holds(pred: &Pred) -> Result<Option<bool>, ()> {
    const KNOWN: &[&str] = &[
        "test",
        "unix",
        "windows",
        "debug_assertions",
        "doc",
        "doctest",
        "miri",
        "feature",
        "panic",
        "proc_macro",
        "overflow_checks",
        "ub_checks",
        "relocation_model",
        "sanitize",
        "fmt_debug",
        "contract_checks",
    ];
    let meta = match pred {
        Pred::Bool(b) => return Ok(Some(*b)),
        Pred::Meta(m) => m,
    };
    let name = meta.path().get_ident().map(|i| i.to_string()).ok_or(())?;
    let known = KNOWN.contains(&name.as_str()) || name.starts_with("target_");
    match meta.as_ref() {
        syn::Meta::Path(_) | syn::Meta::NameValue(_) => match known {
            true => Ok(None),
            false => Err(()),
        },
        syn::Meta::List(l) => {
            let values = preds(l)?
                .iter()
                .map(cfg_holds)
                .collect::<Result<Vec<_>, _>>()?;
            match name.as_str() {
                "any" if values.contains(&Some(true)) => Ok(Some(true)),
                "any" if values.iter().all(|v| *v == Some(false)) => Ok(Some(false)),
                "any" => Ok(None),
                "all" if values.contains(&Some(false)) => Ok(Some(false)),
                "all" if values.iter().all(|v| *v == Some(true)) => Ok(Some(true)),
                "all" => Ok(None),
                "not" if values.len() == 1 => Ok(values[0].map(|v| !v)),
                _ => Err(()),
            }
        }
    }
}

/// Whether `attrs` make their item or statement never compiled (`Some(CFG_NEVER)`), or hold a
/// `cfg` rsbuilder cannot decide (`Some(CFG_UNKNOWN)`). A `cfg_attr` whose predicate holds
/// counts with the attributes it adds; one that depends on the build adds a never-true `cfg`
/// only maybe, which counts as undecided.
fn never_compiled(attrs: &[syn::Attribute]) -> Option<&'static str> {
    fn cfg_of(meta: &syn::Meta, applies: Option<bool>) -> Option<&'static str> {
        let syn::Meta::List(l) = meta else {
            return None;
        };
        if l.path.is_ident("cfg") {
            let Ok(pred) = l.parse_args::<Pred>() else {
                return Some(CFG_UNKNOWN);
            };
            return match (cfg_holds(&pred), applies) {
                (Err(()), _) => Some(CFG_UNKNOWN),
                (Ok(Some(false)), Some(true)) => Some(CFG_NEVER),
                (Ok(Some(false)), _) => Some(CFG_UNKNOWN),
                _ => None,
            };
        }
        if l.path.is_ident("cfg_attr") {
            let Ok(args) = l.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            ) else {
                // The predicate may be a literal: parse it apart from the attributes.
                return cfg_attr_literal(l, applies);
            };
            let mut args = args.into_iter();
            let Some(pred) = args.next() else {
                return Some(CFG_UNKNOWN);
            };
            let holds = match cfg_holds(&Pred::Meta(Box::new(pred))) {
                Ok(h) => h,
                Err(()) => return Some(CFG_UNKNOWN),
            };
            return cfg_attr_rest(holds, applies, args);
        }
        None
    }
    /// `cfg_attr(true, ...)` / `cfg_attr(false, ...)`.
    fn cfg_attr_literal(l: &syn::MetaList, applies: Option<bool>) -> Option<&'static str> {
        let parsed = l.parse_args_with(|input: syn::parse::ParseStream<'_>| {
            let b: syn::LitBool = input.parse()?;
            input.parse::<syn::Token![,]>()?;
            let rest =
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated(input);
            rest.map(|r| (b.value, r))
        });
        match parsed {
            Ok((b, rest)) => cfg_attr_rest(Some(b), applies, rest.into_iter()),
            Err(_) => Some(CFG_UNKNOWN),
        }
    }
    fn cfg_attr_rest(
        holds: Option<bool>,
        applies: Option<bool>,
        mut attrs: impl Iterator<Item = syn::Meta>,
    ) -> Option<&'static str> {
        if holds == Some(false) {
            return None;
        }
        let applies = match (holds, applies) {
            (Some(true), Some(true)) => Some(true),
            _ => None,
        };
        attrs.find_map(|m| cfg_of(&m, applies))
    }
    let mut out = None;
    for a in attrs {
        match cfg_of(&a.meta, Some(true)) {
            Some(CFG_NEVER) => return Some(CFG_NEVER),
            Some(why) => out = Some(why),
            None => {}
        }
    }
    out
}

const CFG_NEVER: &str = "inside an item whose cfg is never true (cargo does not compile it)";
const CFG_UNKNOWN: &str = "inside an item under a cfg rsbuilder cannot decide (an unknown predicate); move the marker out of it";
const IN_MACRO_RULES: &str = "inside a macro_rules! definition";
const IN_MACRO: &str =
    "inside a macro invocation (its tokens are the macro's input, not items or statements)";

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
        if let Some(why) = never_compiled(attrs) {
            self.add(item.span(), why);
            return;
        }
        match item {
            syn::Item::Mod(m) if m.content.is_some() => self.region(m.span(), Region::Module),
            syn::Item::Impl(_) | syn::Item::Trait(_) => {
                self.region(item.span(), Region::Other("inside an impl or trait body"))
            }
            syn::Item::Struct(_) | syn::Item::Enum(_) | syn::Item::Union(_) => self.region(
                item.span(),
                Region::Other("inside a struct, enum or union body"),
            ),
            syn::Item::ForeignMod(_) => {
                self.region(item.span(), Region::Other("inside an extern block"))
            }
            syn::Item::Verbatim(_) => self.region(
                item.span(),
                Region::Other("inside an item rsbuilder does not read (such as `macro`)"),
            ),
            _ => {}
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.region(block.brace_token.span.join(), Region::Block);
        syn::visit::visit_block(self, block);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        use syn::spanned::Spanned as _;
        self.region(mac.span(), Region::Other(IN_MACRO));
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        use syn::spanned::Spanned as _;
        match stmt {
            syn::Stmt::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                self.add(stmt.span(), IN_MACRO_RULES)
            }
            syn::Stmt::Macro(m) if never_compiled(&m.attrs).is_some() => {
                self.add(stmt.span(), never_compiled(&m.attrs).unwrap_or(CFG_NEVER))
            }
            syn::Stmt::Local(l) if never_compiled(&l.attrs).is_some() => {
                self.add(stmt.span(), never_compiled(&l.attrs).unwrap_or(CFG_NEVER))
            }
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
            Some(why) => self.add(item.span(), why),
            None => syn::visit::visit_impl_item(self, item),
        }
    }

    fn visit_expr(&mut self, expr: &'ast syn::Expr) {
        use syn::spanned::Spanned as _;
        // A block or closure under a never-true cfg (statement expressions carry attributes).
        let attrs: &[syn::Attribute] = match expr {
            syn::Expr::Block(e) => &e.attrs,
            syn::Expr::Unsafe(e) => &e.attrs,
            syn::Expr::Closure(e) => &e.attrs,
            syn::Expr::Call(e) => &e.attrs,
            syn::Expr::MethodCall(e) => &e.attrs,
            syn::Expr::Async(e) => &e.attrs,
            _ => &[],
        };
        match never_compiled(attrs) {
            Some(why) => self.add(expr.span(), why),
            None => syn::visit::visit_expr(self, expr),
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
    let inside: Vec<(Vec<bool>, &'static str)> = if yaml {
        yaml_inside_lines(text)
            .map(|(scalars, flows)| {
                vec![
                    (scalars, "inside a YAML string"),
                    (flows, "inside a YAML flow collection ([...] or {...})"),
                ]
            })
            .unwrap_or_default()
    } else if is_dockerfile(path) {
        vec![
            (heredoc_lines(text), "inside a Dockerfile heredoc"),
            (
                continued_lines(text),
                "inside a Dockerfile instruction continued from the line before",
            ),
        ]
    } else {
        Vec::new()
    };
    for (inside, why) in inside {
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
/// it, and whether it lies inside a flow collection (`[ ... ]`, `{ ... }`) written over several
/// lines: after the line where the node starts and up to the line where it ends (the end's
/// line only when the node ends after its first column). A comment line inside a flow
/// collection is a real comment, but a block-style line inserted there breaks the YAML.
/// `None` when `text` is not YAML the parser reads (the line rules above still apply).
fn yaml_inside_lines(text: &str) -> Option<(Vec<bool>, Vec<bool>)> {
    use granit_parser::{Event, StructureStyle};
    let lines = text.lines().count();
    let mut scalars = vec![false; lines + 1];
    let mut flows = vec![false; lines + 1];
    // One entry per open collection: the 1-based line of a flow collection's start, `None`
    // for a block collection.
    let mut open: Vec<Option<usize>> = Vec::new();
    for event in granit_parser::Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        // Lines are 1-based in the parser.
        let last = if span.end.col() == 0 {
            span.end.line().saturating_sub(1)
        } else {
            span.end.line()
        };
        let (first, slots) = match event {
            Event::SequenceStart(style, ..) | Event::MappingStart(style, ..) => {
                open.push(matches!(style, StructureStyle::Flow).then(|| span.start.line()));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some(Some(first)) => (first, &mut flows),
                _ => continue,
            },
            Event::Scalar(..) => (span.start.line(), &mut scalars),
            _ => continue,
        };
        // The node's first line holds its key or indicator: a comment there is not a whole
        // line. Lines after it are the node's own.
        for l in first + 1..=last {
            if let Some(slot) = slots.get_mut(l - 1) {
                *slot = true;
            }
        }
    }
    Some((scalars, flows))
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

/// For each line of a Dockerfile (0-based), whether it continues the instruction of a line
/// before it: the line before (skipping comment and blank lines, which Docker drops inside a
/// continued instruction) ends with the escape character, `\` or the one a `# escape=`
/// parser directive at the top of the file names. A marker there would have its insert
/// joined to that instruction.
fn continued_lines(text: &str) -> Vec<bool> {
    let lines: Vec<&str> = text.lines().collect();
    let mut escape = '\\';
    // Parser directives are comments of the form `# key=value` before any other line.
    for line in &lines {
        let Some(directive) = line.trim().strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = directive.split_once('=') else {
            break;
        };
        let key = key.trim().to_ascii_lowercase();
        if key == "escape" {
            if let Some(c @ ('\\' | '`')) = value.trim().chars().next() {
                escape = c;
            }
        } else if key != "syntax" && key != "check" {
            break;
        }
    }
    let mut inside = vec![false; lines.len()];
    let mut continued = false;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if continued {
            inside[i] = true;
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
        }
        continued = !trimmed.starts_with('#') && trimmed.ends_with(escape);
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
    // Properties may stand between the key and the indicator: `key: &anchor !!str |`.
    let mut before = code[..code.len() - last.len()].trim_end();
    while let Some(word) = before.rsplit([' ', '\t']).next()
        && !word.is_empty()
        && (word.starts_with('&') || word.starts_with('!'))
    {
        before = before[..before.len() - word.len()].trim_end();
    }
    let before_ok = before.is_empty() || before.ends_with([':', '-', '?']);
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
}
