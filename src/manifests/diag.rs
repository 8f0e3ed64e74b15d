//! Diagnostics for `manifests`: an error located at `file:line:column` with the reason and,
//! where there is one, the fix. Several are collected per run and reported together.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem in the user's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Source file, as given to rsbuilder (relative when the input was relative).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// Whether the sources are wrong, or only beyond what rsbuilder evaluates without
    /// compiling.
    pub cause: Cause,
}

/// Why a kind could not be derived statically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Cause {
    /// The input is wrong for `crd()` itself: it does not compile, `crd()` panics on it, or
    /// the API server rejects the CRD it yields. Compiling cannot help.
    #[default]
    Invalid,
    /// The input is valid, but its schema depends on code rsbuilder does not evaluate
    /// statically (a `schema_with` function with logic, a hand-written `JsonSchema` impl, a
    /// default computed at run time). `manifests --evaluate auto` derives such a kind by
    /// compiling a probe against the user's crate.
    NeedsCompile,
}

impl Diagnostic {
    /// A diagnostic at an explicit position (1-based line and column).
    pub fn new(file: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line,
            column,
            message: message.into(),
            help: None,
            cause: Cause::Invalid,
        }
    }

    /// A diagnostic at the start of a syn/proc-macro2 span (needs the `span-locations`
    /// feature of proc-macro2, which rsbuilder enables).
    pub fn at(file: &Path, span: proc_macro2::Span, message: impl Into<String>) -> Self {
        let start = span.start();
        Self::new(file, start.line.max(1), start.column + 1, message)
    }

    /// Marks the diagnostic as [`Cause::NeedsCompile`].
    pub fn needs_compile(mut self) -> Self {
        self.cause = Cause::NeedsCompile;
        self
    }

    /// Adds the fix.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.message
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// All diagnostics of a run, as one error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        if self.0.len() > 1 {
            write!(f, "\n{} errors", self.0.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
