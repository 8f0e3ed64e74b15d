//! One generated file as a value: where it goes and what to do when it is already there.

use std::path::PathBuf;

/// What to do when a file to create already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Fail the whole command ("already exists; use --force"), unless the plan is forced, in
    /// which case the file is overwritten. For files the user edits (types, controllers, ...).
    Error,
    /// Leave the existing file alone (shared files a previous command may have written).
    Skip,
    /// Leave the existing file alone, unless the plan is forced, in which case the file is
    /// overwritten: a skeleton that later commands add sections to (the kind's webhook file,
    /// which `--force` renders again with every webhook type).
    SkipUnlessForced,
    /// Always overwrite (files rsbuilder owns, such as PROJECT).
    Overwrite,
}

/// A file of the project: its path (relative to the project root) and its policy when it
/// exists already. The contents come from the template the command renders for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// Path relative to the project root.
    pub path: PathBuf,
    /// What to do when the file exists.
    pub if_exists: IfExists,
}

impl FileSpec {
    /// The file at `path` with the policy `if_exists`.
    pub fn new(path: impl Into<PathBuf>, if_exists: IfExists) -> Self {
        Self {
            path: path.into(),
            if_exists,
        }
    }
}

/// How the engine turns a file's text into the bytes it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// A Rust file (`.rs`) goes through rustfmt, as Kubebuilder formats the Go files it
    /// writes, so the project stays `cargo fmt` clean; other files are written as they are.
    #[default]
    Rustfmt,
    /// The text is already what rustfmt (default configuration, edition 2024) makes of it, as
    /// `init`'s templates render for every valid input (tests/cli/init_rustfmt.rs checks it):
    /// rustfmt is skipped, which is most of the time of `init`. It still runs when a
    /// `rustfmt.toml` or `.rustfmt.toml` applies in the project root, when the project's
    /// edition is not 2024, or when another operation of the plan inserts into the file.
    Preformatted,
    /// Written byte for byte, never reformatted: text that already is a project's file
    /// (`alpha generate` carrying files over) or a file rsbuilder owns.
    Verbatim,
}

/// Who a written file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Owner {
    /// The user's: the engine writes it by its [`IfExists`] policy and forgets it.
    #[default]
    User,
    /// rsbuilder's (the runtime crate's sources): recorded under `.rsbuilder/` with its
    /// SHA-256 and a merge base ([`super::owned`]), which a later `alpha update` merges from.
    Tool {
        /// The merge base to record, when it is not the text written: what `alpha update`
        /// records for a file it merged (the user's changes stay changes against the new base,
        /// so the next update merges them again) or left with conflict markers.
        base: Option<String>,
    },
}

/// One generated file, whole: where it goes (a path from [`crate::model::layout`]), its
/// text, how it is formatted, who owns it and what to do when it already exists. A command
/// builds these values and hands them to [`super::Plan::add`]; the engine does the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Path relative to the project root.
    pub path: PathBuf,
    /// The full text, as rendered from a template or carried over verbatim.
    pub contents: String,
    /// How the text is formatted before it is written.
    pub format: Format,
    /// Who owns the file once written.
    pub owner: Owner,
    /// What to do when the file exists.
    pub if_exists: IfExists,
}

impl File {
    /// A user file at `path` with `contents`, formatted by rustfmt when it is Rust, written by
    /// the policy `if_exists`.
    pub fn new(path: impl Into<PathBuf>, contents: impl Into<String>, if_exists: IfExists) -> Self {
        Self {
            path: path.into(),
            contents: contents.into(),
            format: Format::Rustfmt,
            owner: Owner::User,
            if_exists,
        }
    }

    /// A user file at the path and with the policy of `spec` (from [`crate::model::layout`]).
    pub fn at(spec: FileSpec, contents: impl Into<String>) -> Self {
        Self::new(spec.path, contents, spec.if_exists)
    }

    /// A user file written byte for byte with the policy [`IfExists::Overwrite`]
    /// ([`Format::Verbatim`]).
    pub fn verbatim(path: impl Into<PathBuf>, contents: impl Into<String>) -> Self {
        Self::new(path, contents, IfExists::Overwrite).with_format(Format::Verbatim)
    }

    /// A tool-owned file ([`Owner::Tool`]) written byte for byte, its written text recorded
    /// as the merge base.
    pub fn tool_owned(
        path: impl Into<PathBuf>,
        contents: impl Into<String>,
        if_exists: IfExists,
    ) -> Self {
        Self {
            owner: Owner::Tool { base: None },
            ..Self::new(path, contents, if_exists).with_format(Format::Verbatim)
        }
    }

    /// A tool-owned file written over whatever is there, with `base` recorded as its merge
    /// base and hash instead of the text written (see [`Owner::Tool`]).
    pub fn tool_owned_with_base(
        path: impl Into<PathBuf>,
        contents: impl Into<String>,
        base: impl Into<String>,
    ) -> Self {
        Self {
            owner: Owner::Tool {
                base: Some(base.into()),
            },
            ..Self::tool_owned(path, contents, IfExists::Overwrite)
        }
    }

    /// The same file, formatted as `format` says.
    pub fn with_format(self, format: Format) -> Self {
        Self { format, ..self }
    }
}
