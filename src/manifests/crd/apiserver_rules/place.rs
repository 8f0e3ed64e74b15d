//! The place of a schema node, as the API server's validation knows it: what the node is to
//! its parent, whether it is inside a value validation or resource metadata, and what is
//! forbidden there. [`super::walk`] computes it; the rules read it.

use super::SchemaPath;

/// What a node is to its parent (the API server's `level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The whole custom resource.
    Root,
    /// The items of an array.
    Item,
    /// A property, or the values of a map.
    Field,
}

/// The place of one node.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Where the node is.
    pub path: SchemaPath,
    /// What it is to its parent.
    pub level: Level,
    /// Inside a value validation (`anyOf`, `oneOf`, `allOf`, `not`): the path of the branch
    /// that started it.
    pub junctor: Option<SchemaPath>,
    /// Whether the node is one of the branches `anyOf: [{type: integer}, {type: string}]`
    /// that the API server allows for int-or-string values (a `type` is then fine).
    pub int_or_string_branch: bool,
    /// Inside `metadata`, `kind` or `apiVersion` of the resource or of an embedded resource.
    pub inside_meta: bool,
    /// Why a `default` is forbidden here, if it is.
    pub no_defaults: Option<&'static str>,
    /// Whether the root has the status subresource (which restricts the root's keywords).
    pub status: bool,
    /// The first enclosing list whose items old and new objects cannot be paired by (a list
    /// not of type map): CEL rules below it cannot use `oldSelf`.
    pub uncorrelatable: Option<SchemaPath>,
}
