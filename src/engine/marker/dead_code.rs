//! Code cargo never compiles as written (`macro_rules!` bodies, items under a `cfg` that is
//! never true or that rsbuilder cannot decide), found with syn, and the brace-delimited
//! regions of a Rust file.

/// Where a Rust marker may stand: where an item of a module may (`api-kinds`, `imports`),
/// where a statement of a function body may (`controllers` in `main.rs`), or either (a
/// marker rsbuilder does not scaffold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
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

pub(super) fn marker_position(marker: &str) -> Position {
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
pub(super) struct DeadCode {
    pub(super) spans: Vec<(usize, usize, &'static str)>,
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
    pub(super) fn misplaced(&self, line: usize, position: Position) -> Option<&'static str> {
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

/// Whether `attrs` put their item under a cfg that is never true (`#[cfg(any())]`).
pub(super) fn never_compiled_item(attrs: &[syn::Attribute]) -> bool {
    never_compiled(attrs) == Some(CFG_NEVER)
}

pub(super) const CFG_NEVER: &str =
    "inside an item whose cfg is never true (cargo does not compile it)";
const CFG_UNKNOWN: &str = "inside an item under a cfg rsbuilder cannot decide (an unknown predicate); move the marker out of it";
const IN_MACRO_RULES: &str = "inside a macro_rules! definition";
const IN_MACRO: &str =
    "inside a macro invocation (its tokens are the macro's input, not items or statements)";

impl<'ast> syn::visit::Visit<'ast> for DeadCode {
    fn visit_file(&mut self, file: &'ast syn::File) {
        // `#![cfg(any())]` at the top: the whole file is left out.
        match never_compiled(&file.attrs) {
            Some(why) => self.spans.push((1, usize::MAX, why)),
            None => syn::visit::visit_file(self, file),
        }
    }

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
            syn::Expr::If(e) => &e.attrs,
            syn::Expr::Loop(e) => &e.attrs,
            syn::Expr::ForLoop(e) => &e.attrs,
            syn::Expr::While(e) => &e.attrs,
            syn::Expr::Match(e) => &e.attrs,
            syn::Expr::TryBlock(e) => &e.attrs,
            syn::Expr::Const(e) => &e.attrs,
            _ => &[],
        };
        match never_compiled(attrs) {
            Some(why) => self.add(expr.span(), why),
            None => syn::visit::visit_expr(self, expr),
        }
    }
}
