// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The schema's `x-kubernetes-validations` rules, evaluated as apiextensions-apiserver's
//! `pkg/apiserver/schema/cel` evaluates them for custom resources, on cel-rust (the `cel`
//! crate).
//!
//! - A rule attaches at any schema node; `self` is the value there (objects and maps as CEL
//!   maps, property names escaped as the API server escapes them: `__dash__`, `__dot__`,
//!   `__slash__`, `__underscores__`, `__{keyword}__`; `x-kubernetes-int-or-string` as `int`
//!   or `string`; `format: byte` as `bytes`, `date`/`date-time` as timestamps, `duration`
//!   as durations; at the root only `apiVersion`, `kind` and
//!   `metadata.name`/`generateName`), and the rule runs only where the value is present and
//!   not null.
//! - Failures: `message`, `messageExpression` (a string, falling back to the message on any
//!   error), `reason` (`FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired`,
//!   `FieldValueDuplicate`) and `fieldPath` (appended to the node's path), as the API
//!   server's causes word them (`spec: Invalid value: "object": <message>`).
//! - Transition rules (`oldSelf`) run on updates only, where the old object has a value at the
//!   correlatable path (object fields and map keys; `x-kubernetes-list-type: map` items by
//!   their keys; never items of other lists); `optionalOldSelf: true` runs them anyway with
//!   `oldSelf` an optional.
//! - Rules compile once per schema ([`Rules::compile`], cached by [`rules_for`]); a rule that
//!   does not parse, names a function or variable this module does not provide (the
//!   Kubernetes libraries `url`, `quantity`, `ip`, `cidr`, `format`, `authz`, `semver` …), or
//!   has a malformed `fieldPath`, or sits under `anyOf`/`oneOf`/`not` makes the kind fail to
//!   load with an error naming the rule and its schema path ([`check`]). Rules under `allOf`
//!   run at their node.
//! - Cost: cel-rust counts no evaluation cost, so the API server's exact runtime cost cannot
//!   be measured. Each call is refused beforehand when an upper bound of its cost, the rule's
//!   size times the number of values in `self` and `oldSelf` raised to the rule's
//!   comprehension nesting depth, passes the API server's per-call limit ([`PER_CALL_LIMIT`]),
//!   or the bounds of one object's calls pass its budget ([`RUNTIME_BUDGET`]); the
//!   CRD-creation-time estimate (from `maxItems`, `maxLength`, `maxProperties`) is not
//!   done. docs/apiserver.md says what that means.
//!
//! The parts: `compile.rs` (a schema's rules compiled and checked), `shape.rs` (what an
//! expression uses: its cost bound, functions and names), `fields.rs` (field selections and
//! paths against the schema), `value.rs` (JSON values as CEL values), `walk.rs` and `eval.rs`
//! (the rules run over an object), `guard.rs` (the parser and interpreter behind
//! `catch_unwind`) and `library.rs` (the CEL environment).

use std::sync::{Arc, LazyLock, RwLock};

use serde_json::Value;

mod compile;
mod eval;
mod fields;
mod guard;
mod library;
mod shape;
mod value;
mod walk;

use compile::{Node, compile_node};
use eval::Out;
pub use value::escape;
use walk::walk;

/// The largest cost one rule's evaluation may have, k8s.io/apiserver's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The cost all the rules of one object may add up to, k8s.io/apiserver's
/// `RuntimeCELCostBudget`.
pub const RUNTIME_BUDGET: u64 = 10_000_000;

/// The compiled `x-kubernetes-validations` of one schema, with the schema they came from.
pub struct Rules {
    schema: Value,
    root: Node,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules").finish_non_exhaustive()
    }
}

impl Rules {
    /// Compiles every rule of `schema` (a kind's `openAPIV3Schema`). Out: `None` when it has
    /// no rules. Errors: the first rule that does not compile, uses a function or variable
    /// that is not provided, or has a bad `reason` or `fieldPath`, named with its schema path
    /// (`openAPIV3Schema.properties[spec].x-kubernetes-validations[0]`), as the apiextensions
    /// server refuses such a CRD.
    pub fn compile(schema: &Value) -> Result<Option<Self>, String> {
        let root = compile_node(schema, schema, true, "openAPIV3Schema")?;
        Ok((!root.is_empty()).then(|| Self {
            schema: schema.clone(),
            root,
        }))
    }

    /// Evaluates the rules on `obj` (the whole object), with `old` the stored object on an
    /// update. Out: `(field, message)` causes in the API server's wording, empty when every
    /// rule holds.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<(String, String)> {
        let mut out = Out {
            causes: Vec::new(),
            budget: RUNTIME_BUDGET,
        };
        let _ = walk(&self.root, &self.schema, "", obj, old, false, &mut out);
        out.causes
    }
}

/// The compiled rules for `schema`, compiled on first use and kept for the process (the
/// server's kinds are few and fixed; a schema that changes is compiled anew). Errors: as
/// [`Rules::compile`].
pub fn rules_for(schema: &Value) -> Result<Option<Arc<Rules>>, String> {
    // Read on every write request, written once per schema: readers do not wait on each other.
    type Cache = RwLock<Vec<(Value, Option<Arc<Rules>>)>>;
    static CACHE: LazyLock<Cache> = LazyLock::new(RwLock::default);
    if let Some((_, rules)) = CACHE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(s, _)| s == schema)
    {
        return Ok(rules.clone());
    }
    let rules = Rules::compile(schema)?.map(Arc::new);
    let mut cache = CACHE.write().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= 256 {
        cache.remove(0);
    }
    cache.push((schema.clone(), rules.clone()));
    Ok(rules)
}

/// Compiles `schema`'s rules once, so that a kind whose rules do not compile fails to load
/// (as the apiextensions server refuses to create such a CRD). Errors: as [`Rules::compile`].
pub fn check(schema: Option<&Value>) -> Result<(), String> {
    match schema {
        Some(s) => rules_for(s).map(|_| ()),
        None => Ok(()),
    }
}

/// The rules of `schema` evaluated on `obj` (`old`: the stored object on an update). A
/// schema whose rules do not compile (a kind built without [`check`]) answers one cause
/// saying so, as the API server reports a rule compile error at validation. Out: causes.
pub fn validate(schema: Option<&Value>, obj: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    match rules_for(schema) {
        Ok(Some(rules)) => rules.validate(obj, old),
        Ok(None) => Vec::new(),
        Err(e) => vec![(
            "<nil>".into(),
            format!("Invalid value: \"object\": rule compiler initialization error: {e}"),
        )],
    }
}

/// The rules' causes after the schema's and metadata's `causes`, as the custom-resource
/// strategy runs them: not at all when a cause is of a blocking type (required, unsupported,
/// too long, too many, wrong type; one cause then says the rules were not checked), else
/// [`validate`]'s.
pub fn after_schema(
    schema: Option<&Value>,
    obj: &Value,
    old: Option<&Value>,
    causes: &[(String, String)],
) -> Vec<(String, String)> {
    let blocking = causes.iter().any(|(_, m)| {
        [
            "Required value",
            "Unsupported value",
            "Too long",
            "Too many",
        ]
        .iter()
        .any(|p| m.starts_with(p))
            || m.contains(" must be of type ")
    });
    if !blocking {
        return validate(schema, obj, old);
    }
    match rules_for_quiet(schema) {
        true => vec![(
            "<nil>".into(),
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
        )],
        false => Vec::new(),
    }
}

/// Whether `schema` has rules (or rules that do not compile).
fn rules_for_quiet(schema: Option<&Value>) -> bool {
    schema.is_some_and(|s| !matches!(rules_for(s), Ok(None)))
}

#[cfg(test)]
mod tests;
