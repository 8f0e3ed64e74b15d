//! controller-gen's marker grammar, parsed against a [`MarkerDef`].
//!
//! Mirrors controller-tools `pkg/markers/parse.go`:
//! - `+name`, `+name=value`, `+name:arg=value,arg2=value2`; with arguments, the text before
//!   the first `=` is split at its last `:` into the marker name and the first argument name;
//! - strings are bare (everything up to `,` `;` `}` with the ends trimmed), double-quoted with
//!   Go escapes, or raw between backticks;
//! - lists are `a;b;c` (legacy form) or `{a,b,c}`; one bare value is a list of one;
//! - integers and `true`/`false` are bare.
//!
//! Differences on purpose: unknown and repeated arguments, a missing required argument and an
//! empty bare value are errors (controller-gen overwrites, ignores or guesses); a bare value
//! is taken literally (controller-gen's tokenizer drops everything after a `//` in a bare
//! value, so `url=https://x` loses its host there).

use super::registry::{ArgDef, ArgType, Form, MarkerDef};

/// A typed argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string argument.
    String(String),
    /// An integer argument.
    Int(i64),
    /// A bool argument.
    Bool(bool),
    /// A list-of-strings argument.
    List(Vec<String>),
}

/// One parsed argument: its registered name, value, and 0-based char offset of the argument
/// name in the marker text (the text after `+`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedArg {
    /// Registered argument name (empty for the value of a `+name=value` marker).
    pub name: &'static str,
    /// The typed value.
    pub value: Value,
    /// Char offset of the argument in the marker text.
    pub offset: usize,
}

/// A grammar error: char offset into the marker text, message and optional help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarError {
    /// Char offset of the problem in the marker text (after `+`); `None` when the problem is
    /// the marker as a whole (a missing argument).
    pub offset: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl GrammarError {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        Self {
            offset: Some(offset),
            message: message.into(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Splits marker text (without `+`) as controller-gen's `splitMarker` does: returns the name
/// with the last `:` segment removed when there is an `=`, the whole text before `=`, and the
/// text after the first `=` (None when there is none).
pub fn split_marker(text: &str) -> (&str, &str, Option<&str>) {
    match text.split_once('=') {
        None => (text, text, None),
        Some((anon, rest)) => {
            let name = anon.rsplit_once(':').map_or(anon, |(n, _)| n);
            (name, anon, Some(rest))
        }
    }
}

/// Parses the arguments of marker text `text` (without `+`) for definition `def`, whose name
/// the text is known to carry. Returns the arguments in the order written.
pub fn parse(def: &MarkerDef, text: &str) -> Result<Vec<ParsedArg>, GrammarError> {
    let chars: Vec<char> = text.chars().collect();
    match def.form {
        Form::Ignored | Form::Unsupported(_) => Ok(Vec::new()),
        Form::Flag => {
            if chars.len() > def.name.chars().count() {
                Err(GrammarError::new(
                    def.name.chars().count(),
                    format!("+{} takes no arguments", def.name),
                ))
            } else {
                Ok(Vec::new())
            }
        }
        Form::Value(ty) => {
            let start = def.name.chars().count();
            if chars.get(start) != Some(&'=') {
                return Err(GrammarError::new(
                    start,
                    format!(
                        "+{} needs a value: +{}=<{}>",
                        def.name,
                        def.name,
                        ty.describe()
                    ),
                ));
            }
            let mut c = Cursor {
                chars: &chars,
                pos: start + 1,
            };
            let value = c.value(ty, "value")?;
            c.end_of_value()?;
            if !c.at_end() {
                return Err(GrammarError::new(
                    c.pos,
                    format!("+{} takes one value", def.name),
                ));
            }
            Ok(vec![ParsedArg {
                name: "",
                value,
                offset: start + 1,
            }])
        }
        Form::Args(defs) => {
            let name_len = def.name.chars().count();
            let mut c = Cursor {
                chars: &chars,
                pos: name_len,
            };
            let mut out: Vec<ParsedArg> = Vec::new();
            if c.at_end() {
                // `+kubebuilder:rbac` with nothing after it.
            } else if c.peek() == Some(':') {
                c.pos += 1;
                loop {
                    c.skip_ws();
                    let arg_at = c.pos;
                    let arg_name = c.ident();
                    if arg_name.is_empty() {
                        return Err(GrammarError::new(
                            arg_at,
                            format!(
                                "expected an argument name of +{}, found {}",
                                def.name,
                                c.describe_here()
                            ),
                        ));
                    }
                    let Some(arg_def) = defs.iter().find(|a| a.name == arg_name) else {
                        return Err(unknown_arg(def, defs, &arg_name, arg_at));
                    };
                    c.skip_ws();
                    if c.peek() != Some('=') {
                        return Err(GrammarError::new(
                            c.pos,
                            format!("expected `=` after argument `{arg_name}`"),
                        )
                        .help(format!("write {arg_name}=<{}>", arg_def.ty.describe())));
                    }
                    c.pos += 1;
                    if out.iter().any(|a| a.name == arg_def.name) {
                        return Err(GrammarError::new(
                            arg_at,
                            format!("argument `{arg_name}` is given twice"),
                        )
                        .help(format!("give all values in one argument: {arg_name}=a;b")));
                    }
                    let value = c.value(arg_def.ty, arg_def.name)?;
                    out.push(ParsedArg {
                        name: arg_def.name,
                        value,
                        offset: arg_at,
                    });
                    c.end_of_value()?;
                    if c.at_end() {
                        break;
                    }
                    // end_of_value guarantees a ','.
                    c.pos += 1;
                }
            } else {
                return Err(GrammarError::new(
                    name_len,
                    format!(
                        "expected `:` and arguments after +{}, found {}",
                        def.name,
                        c.describe_here()
                    ),
                ));
            }
            let missing: Vec<&ArgDef> = defs
                .iter()
                .filter(|a| !a.optional && !out.iter().any(|p| p.name == a.name))
                .collect();
            if !missing.is_empty() {
                let names: Vec<String> = missing.iter().map(|a| format!("`{}`", a.name)).collect();
                let message = if missing.len() == 1 {
                    format!(
                        "+{} is missing the required argument {}",
                        def.name, names[0]
                    )
                } else {
                    format!(
                        "+{} is missing the required arguments {}",
                        def.name,
                        names.join(", ")
                    )
                };
                let help = missing
                    .iter()
                    .map(|a| format!("{}=<{}>", a.name, a.ty.describe()))
                    .collect::<Vec<_>>()
                    .join(",");
                return Err(GrammarError {
                    offset: None,
                    message,
                    help: Some(format!("add {help}")),
                });
            }
            Ok(out)
        }
    }
}

fn unknown_arg(def: &MarkerDef, defs: &[ArgDef], name: &str, at: usize) -> GrammarError {
    let near = defs
        .iter()
        // The distance is at least the length difference; skip hopeless (and long) names.
        .filter(|a| name.len().abs_diff(a.name.len()) <= 2)
        .map(|a| {
            (
                strsim::damerau_levenshtein(&name.to_lowercase(), &a.name.to_lowercase()),
                a.name,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d);
    let err = GrammarError::new(at, format!("+{} has no argument `{name}`", def.name));
    match near {
        Some((_, cand)) => err.help(format!("did you mean `{cand}`?")),
        None => err.help(format!(
            "its arguments are {}",
            defs.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

struct Cursor<'a> {
    chars: &'a [char],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            None => "the end of the marker".into(),
            Some(c) => format!("`{c}`"),
        }
    }

    fn ident(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// After a value: only whitespace, then `,` or the end.
    fn end_of_value(&mut self) -> Result<(), GrammarError> {
        self.skip_ws();
        match self.peek() {
            None | Some(',') => Ok(()),
            Some(';') => Err(GrammarError::new(
                self.pos,
                "unexpected `;`: this argument takes a single value, not a list",
            )),
            Some(c) => Err(GrammarError::new(
                self.pos,
                format!("expected `,` or the end of the marker, found `{c}`"),
            )
            .help("quote values that contain `,`, `;`, `{` or `}`: name=\"a,b\"")),
        }
    }

    fn value(&mut self, ty: ArgType, name: &str) -> Result<Value, GrammarError> {
        self.skip_ws();
        let at = self.pos;
        match ty {
            ArgType::String => self.string(name, true).map(Value::String),
            ArgType::StringList => self.list(name).map(Value::List),
            ArgType::Int => {
                let tok = self.bare();
                if tok.is_empty() {
                    return Err(empty_value(at, name, ty));
                }
                tok.parse::<i64>().map(Value::Int).map_err(|_| {
                    GrammarError::new(at, format!("`{name}` must be an integer, found `{tok}`"))
                })
            }
            ArgType::Bool => {
                let tok = self.bare();
                match tok.as_str() {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "" => Err(empty_value(at, name, ty)),
                    _ => Err(GrammarError::new(
                        at,
                        format!("`{name}` must be true or false, found `{tok}`"),
                    )),
                }
            }
        }
    }

    /// Text up to the next `,` `;` `}` or the end, trimmed.
    fn bare(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| !matches!(c, ',' | ';' | '}')) {
            self.pos += 1;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    }

    /// A string in any of the three forms. `required_nonempty`: an empty *bare* value is an
    /// error (a quoted `""` is a real empty string).
    fn string(&mut self, name: &str, required_nonempty: bool) -> Result<String, GrammarError> {
        self.skip_ws();
        let at = self.pos;
        match self.peek() {
            Some('"') => self.quoted(),
            Some('`') => {
                self.pos += 1;
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '`') {
                    self.pos += 1;
                }
                if self.at_end() {
                    return Err(GrammarError::new(at, "raw string is not closed with `"));
                }
                let s = self.chars[start..self.pos].iter().collect();
                self.pos += 1;
                Ok(s)
            }
            _ => {
                let s = self.bare();
                if s.is_empty() && required_nonempty {
                    Err(empty_value(at, name, ArgType::String))
                } else {
                    Ok(s)
                }
            }
        }
    }

    fn quoted(&mut self) -> Result<String, GrammarError> {
        let at = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(GrammarError::new(at, "string is not closed with `\"`"));
            };
            self.pos += 1;
            match c {
                '"' => return Ok(s),
                '\\' => {
                    let esc_at = self.pos - 1;
                    let Some(e) = self.peek() else {
                        return Err(GrammarError::new(at, "string is not closed with `\"`"));
                    };
                    self.pos += 1;
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        'a' => s.push('\u{7}'),
                        'b' => s.push('\u{8}'),
                        'f' => s.push('\u{c}'),
                        'v' => s.push('\u{b}'),
                        '\\' | '"' => s.push(e),
                        'x' | 'u' | 'U' => {
                            let n = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = self
                                .chars
                                .get(self.pos..self.pos + n)
                                .map(|h| h.iter().collect())
                                .unwrap_or_default();
                            let ch = u32::from_str_radix(&hex, 16)
                                .ok()
                                .filter(|_| hex.len() == n)
                                .and_then(char::from_u32)
                                .ok_or_else(|| {
                                    GrammarError::new(esc_at, format!("bad escape `\\{e}{hex}`"))
                                })?;
                            self.pos += n;
                            s.push(ch);
                        }
                        other => {
                            return Err(GrammarError::new(
                                esc_at,
                                format!("unknown escape `\\{other}` in string"),
                            ));
                        }
                    }
                }
                c => s.push(c),
            }
        }
    }

    fn list(&mut self, name: &str) -> Result<Vec<String>, GrammarError> {
        self.skip_ws();
        let at = self.pos;
        let mut items = Vec::new();
        if self.peek() == Some('{') {
            self.pos += 1;
            loop {
                self.skip_ws();
                match self.peek() {
                    Some('}') => {
                        self.pos += 1;
                        return Ok(items);
                    }
                    None => {
                        return Err(GrammarError::new(at, "list is not closed with `}`"));
                    }
                    _ => {}
                }
                items.push(self.string(name, false)?);
                self.skip_ws();
                match self.peek() {
                    Some(',') => self.pos += 1,
                    Some('}') => {}
                    None => return Err(GrammarError::new(at, "list is not closed with `}`")),
                    Some(c) => {
                        return Err(GrammarError::new(
                            self.pos,
                            format!("expected `,` or `}}` in the list, found `{c}`"),
                        ));
                    }
                }
            }
        }
        // Legacy `a;b;c`.
        if matches!(self.peek(), None | Some(',')) {
            return Err(empty_value(at, name, ArgType::StringList));
        }
        loop {
            items.push(self.string(name, false)?);
            self.skip_ws();
            if self.peek() == Some(';') {
                self.pos += 1;
                self.skip_ws();
                if matches!(self.peek(), None | Some(',')) {
                    // A trailing `;` adds nothing, as in controller-gen.
                    return Ok(items);
                }
            } else {
                return Ok(items);
            }
        }
    }
}

fn empty_value(at: usize, name: &str, ty: ArgType) -> GrammarError {
    let err = GrammarError::new(at, format!("`{name}` has no value"));
    if name == "groups" {
        err.help("write groups=\"\" (or groups=core) for the core API group")
    } else if ty == ArgType::String {
        err.help(format!("write {name}=\"\" for an empty string"))
    } else {
        err.help(format!("write {name}=<{}>", ty.describe()))
    }
}
