//! Kind names the generated Rust cannot hold, shared by `create api`, `create webhook` and
//! `create apiserver`.
//!
//! A kind `K` becomes `pub struct K` in its types module and is imported by name (`use
//! crate::api::v1::K;`) into its controller and webhook modules. A kind that is also a name
//! those modules import, or a type of Rust's prelude that they (or kube-derive's expansion)
//! use unqualified, makes the project fail to compile. The list is what the templates under
//! `templates/api`, `templates/webhook` and `templates/apiserver` import with `use` (a test
//! in tests/cli/create_webhook.rs scaffolds every kind of file and checks that each imported
//! name is here), plus the edition-2024 prelude of the generated crate.

use super::NameError;

/// Rust's keywords (strict and reserved, edition 2024) that a lower-case name can spell: a
/// name the generated code uses as an identifier (a webhook's variable, a group's module)
/// must not be one.
pub const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Types, traits and derive macros of Rust's edition-2024 prelude
/// (`std::prelude::rust_2024`) that a kind can spell (kinds start with an upper-case letter).
const PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Hash",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// Names the generated modules import (or define) next to the kind: the name, and where it
/// comes from, for the error message.
const IMPORTED: &[(&str, &str)] = &[
    (
        "Condition",
        "k8s_openapi's meta/v1 Condition, imported by the CRD types module (templates/api/types.rs)",
    ),
    (
        "CustomResource",
        "kube::CustomResource, imported by the types modules",
    ),
    (
        "JsonSchema",
        "schemars::JsonSchema, imported by the types modules",
    ),
    (
        "Deserialize",
        "serde::Deserialize, imported by the types modules",
    ),
    (
        "Serialize",
        "serde::Serialize, imported by the types modules",
    ),
    ("Arc", "std::sync::Arc, imported by the controller module"),
    (
        "Duration",
        "std::time::Duration, imported by the controller module",
    ),
    (
        "ResourceExt",
        "kube::ResourceExt, imported by the controller module",
    ),
    (
        "Action",
        "kube::runtime::controller::Action, imported by the controller module",
    ),
    (
        "EventType",
        "kube::runtime::events::EventType, imported by the controller module",
    ),
    (
        "Context",
        "rsbuilder_runtime::controller::Context, imported by the controller module",
    ),
    (
        "Reconciler",
        "rsbuilder_runtime::controller::Reconciler, imported by the controller module",
    ),
    (
        "Conversion",
        "rsbuilder_runtime::webhook::Conversion, imported by the webhook and conversion modules",
    ),
    (
        "Convert",
        "rsbuilder_runtime::webhook::Convert, imported by the webhook and conversion modules",
    ),
    (
        "Defaulter",
        "rsbuilder_runtime::webhook::Defaulter, imported by the webhook module",
    ),
    (
        "Denied",
        "rsbuilder_runtime::webhook::Denied, imported by the webhook module",
    ),
    (
        "Validation",
        "rsbuilder_runtime::webhook::Validation, imported by the webhook module",
    ),
    (
        "Validator",
        "rsbuilder_runtime::webhook::Validator, imported by the webhook module",
    ),
    (
        "Warnings",
        "rsbuilder_runtime::webhook::Warnings, imported by the webhook module",
    ),
    (
        "Webhooks",
        "rsbuilder_runtime::webhook::Webhooks, imported by the webhook module",
    ),
    (
        "Hub",
        "the hub type alias that the conversion module defines",
    ),
];

/// Every reserved kind name: the prelude's, then the imported ones.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRELUDE
        .iter()
        .copied()
        .chain(IMPORTED.iter().map(|(name, _)| *name))
}

/// Why `kind` cannot be a kind's name, or `None` when it can.
pub fn reason(kind: &str) -> Option<String> {
    if PRELUDE.contains(&kind) {
        return Some(format!(
            "`{kind}` is a type of Rust's prelude, which the generated modules use unqualified"
        ));
    }
    IMPORTED
        .iter()
        .find(|(name, _)| *name == kind)
        .map(|(_, from)| format!("`{kind}` is {from}"))
}

/// Refuses a kind whose name the generated Rust already uses ([`reason`]).
///
/// Errors: a [`NameError`] for `--kind` that names the clash and asks for another kind.
pub fn check_kind(kind: &str) -> Result<(), NameError> {
    match reason(kind) {
        None => Ok(()),
        Some(why) => Err(NameError {
            flag: "--kind".into(),
            value: kind.into(),
            reason: format!("{why}, so the project would not compile; choose another kind"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reserved_name_is_refused_with_its_origin() {
        for name in names() {
            let err = check_kind(name).unwrap_err().to_string();
            assert!(err.contains(&format!("`{name}`")), "{err}");
            assert!(err.contains("choose another kind"), "{err}");
        }
        assert!(check_kind("AIJob").is_ok());
    }

    #[test]
    fn reserved_names_are_listed_once_and_are_valid_kinds() {
        let mut all: Vec<&str> = names().collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count, "a name is listed twice");
        for name in all {
            assert!(super::super::gvk::validate_kind(name).is_ok(), "{name}");
        }
    }

    /// Built-in kinds skip the check (their names are k8s-openapi's), which is sound only
    /// while none of them is reserved.
    #[test]
    fn no_built_in_kind_is_reserved() {
        for b in crate::model::builtin::all() {
            assert_eq!(reason(b.kind), None, "{}", b.rust_path);
        }
    }
}
