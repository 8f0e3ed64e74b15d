//! The API server's validation of a CustomResourceDefinition, for the rules a Rust type can
//! break: kube-derive's `crd()` builds such a CRD without complaint, and `kubectl apply` is
//! the first to say no. rsbuilder checks the CRD it derived (the typed k8s-openapi object,
//! exactly what `crd()` returns) and refuses it with the rule, at the field that broke it.
//!
//! The rules follow k8s.io/apiextensions-apiserver: `ValidateCustomResourceDefinition` in
//! `pkg/apis/apiextensions/validation`, the structural-schema invariants of
//! `pkg/apiserver/schema` (`ValidateStructural`, completeness), and the validation of defaults
//! in `pkg/apiserver/schema/defaulting`. One file per idea:
//! - [`walk`]: visits every schema node with what the API server knows there (root, field,
//!   list item, inside `anyOf`/`oneOf`/`allOf`/`not`, inside resource metadata), the
//!   [`place`] each rule reads;
//! - [`structural`]: the structural-schema rules (a type everywhere, no value-validation
//!   keywords that carry structure, one `items` schema, forbidden keywords);
//! - [`metadata`]: `metadata`, `kind` and `apiVersion`, `x-kubernetes-embedded-resource` and
//!   `x-kubernetes-int-or-string`;
//! - [`lists`]: `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//!   `x-kubernetes-map-type`;
//! - [`defaults`]: defaults must validate against their own schema, survive pruning, and sit
//!   where defaults are allowed;
//! - [`cel`]: what can be checked of `x-kubernetes-validations` without a CEL compiler;
//! - [`columns`]: printer columns, the scale subresource, the deprecation warning;
//! - [`selectable`]: selectable fields;
//! - [`names`]: the CRD's object name and list kind.
//!
//! A rule is only here when the API server really rejects what it describes: a rule that
//! flags a valid CRD would refuse a type `crd()` handles. Where the check cannot be exact (CEL
//! expressions, regular expressions Go and the `regex` crate read differently), it is left
//! out.

use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;

pub mod cel;
pub mod columns;
pub mod defaults;
pub mod lists;
pub mod metadata;
pub mod names;
pub mod place;
pub mod selectable;
pub mod structural;
pub mod walk;

/// One step from a schema node to a node below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `properties[name]`: a field of an object.
    Property(String),
    /// `items`: the items of an array.
    Items,
    /// `additionalProperties`: the values of a map.
    AdditionalProperties,
    /// `allOf[i]`.
    AllOf(usize),
    /// `anyOf[i]`.
    AnyOf(usize),
    /// `oneOf[i]`.
    OneOf(usize),
    /// `not`.
    Not,
}

/// Where in a custom resource a schema node applies, read as an object path: `.spec.ports[*]`
/// for the items of the field `ports` of `spec`, `.labels.*` for the values of a map, `the
/// root` for the whole object. Junctor branches show as `.anyOf[0]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaPath(pub Vec<Step>);

impl SchemaPath {
    /// This path and one more step.
    pub fn child(&self, step: Step) -> Self {
        let mut v = self.0.clone();
        v.push(step);
        Self(v)
    }
}

impl fmt::Display for SchemaPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("the root");
        }
        for s in &self.0 {
            match s {
                Step::Property(p) => write!(f, ".{p}")?,
                Step::Items => f.write_str("[*]")?,
                Step::AdditionalProperties => f.write_str(".*")?,
                Step::AllOf(i) => write!(f, ".allOf[{i}]")?,
                Step::AnyOf(i) => write!(f, ".anyOf[{i}]")?,
                Step::OneOf(i) => write!(f, ".oneOf[{i}]")?,
                Step::Not => f.write_str(".not")?,
            }
        }
        Ok(())
    }
}

/// What part of one CRD version a rule is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A node of `schema.openAPIV3Schema`.
    Schema(SchemaPath),
    /// `additionalPrinterColumns[i]` (`#[kube(printcolumn)]`, in order).
    PrinterColumn(usize),
    /// `selectableFields[i]` (`#[kube(selectable)]`, in order).
    SelectableField(usize),
    /// `subresources.scale` (`#[kube(scale)]`).
    Scale,
    /// The version itself (`#[kube(deprecated)]`, ...).
    Version,
    /// The CRD's names (`#[kube(group, kind, plural)]` together).
    Names,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The CRD version (`#[kube(version)]`).
    pub version: String,
    /// Where.
    pub at: Location,
    /// The API server's rule, in its terms (`type: must not be empty for specified object
    /// fields`).
    pub rule: String,
    /// What in the Rust source usually leads there (`a tuple`), when a rule has a typical
    /// cause.
    pub construct: Option<String>,
    /// What to write instead, when known.
    pub help: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.construct.as_deref().unwrap_or("the schema");
        match &self.at {
            Location::Schema(p) => write!(f, "{what} at {p}: {}", self.rule),
            Location::PrinterColumn(i) => write!(f, "printer column {i}: {}", self.rule),
            Location::SelectableField(i) => write!(f, "selectable field {i}: {}", self.rule),
            Location::Scale => write!(f, "the scale subresource: {}", self.rule),
            Location::Version => write!(f, "version {}: {}", self.version, self.rule),
            Location::Names => write!(f, "the CRD's names: {}", self.rule),
        }
    }
}

/// Collects the violations of one version.
pub struct Sink<'v> {
    version: &'v str,
    /// Found so far, in the order the rules ran.
    pub found: Vec<Violation>,
}

impl<'v> Sink<'v> {
    /// An empty sink for `version`.
    pub fn new(version: &'v str) -> Self {
        Self {
            version,
            found: Vec::new(),
        }
    }

    /// Records a violation at a schema node.
    pub fn schema(&mut self, path: &SchemaPath, rule: impl Into<String>) -> &mut Violation {
        self.at(Location::Schema(path.clone()), rule)
    }

    /// Records a violation anywhere in the version.
    pub fn at(&mut self, at: Location, rule: impl Into<String>) -> &mut Violation {
        self.found.push(Violation {
            version: self.version.to_string(),
            at,
            rule: rule.into(),
            construct: None,
            help: None,
        });
        self.found.last_mut().expect("just pushed")
    }
}

impl Violation {
    /// Names the Rust construct that typically leads to this violation.
    pub fn construct(&mut self, c: impl Into<String>) -> &mut Self {
        self.construct = Some(c.into());
        self
    }

    /// Adds the fix.
    pub fn help(&mut self, h: impl Into<String>) -> &mut Self {
        self.help = Some(h.into());
        self
    }
}

/// Every rule `crd` breaks: its names, then version by version (versions in order; within a version, the
/// schema in depth-first order with properties sorted by name, then printer columns, scale,
/// selectable fields). Empty when the API server would accept the CRD as far as these rules
/// go.
pub fn check(crd: &apiext::CustomResourceDefinition) -> Vec<Violation> {
    let mut out = names::check(crd);
    out.extend(crd.spec.versions.iter().flat_map(check_version));
    out
}

/// Every rule one version of a CRD breaks (see [`check`]).
pub fn check_version(v: &apiext::CustomResourceDefinitionVersion) -> Vec<Violation> {
    let mut sink = Sink::new(&v.name);
    let status = v.subresources.as_ref().is_some_and(|s| s.status.is_some());
    let schema = v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref());
    match schema {
        Some(schema) => walk::check_schema(schema, status, &mut sink),
        None => {
            sink.at(Location::Version, "there is no openAPIV3Schema, and the API server requires a schema for every version of an apiextensions.k8s.io/v1 CRD")
                .help("derive the schema (remove `schema = \"disabled\"`); for content of any shape, type the spec's fields `serde_json::Value` with #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]");
        }
    }
    columns::check(v, &mut sink);
    if let Some(fields) = &v.selectable_fields {
        selectable::check(fields, schema, &mut sink);
    }
    sink.found
}

/// `s` with `key` set to true (`x-kubernetes-int-or-string: true`).
pub(crate) fn is_true(v: Option<bool>) -> bool {
    v == Some(true)
}

/// The single `items` schema of `s`, if it has one.
pub(crate) fn items(s: &apiext::JSONSchemaProps) -> Option<&apiext::JSONSchemaProps> {
    match &s.items {
        Some(apiext::JSONSchemaPropsOrArray::Schema(i)) => Some(i),
        _ => None,
    }
}

/// The `additionalProperties` schema of `s`, if it is a schema (not a bool).
pub(crate) fn additional(s: &apiext::JSONSchemaProps) -> Option<&apiext::JSONSchemaProps> {
    match &s.additional_properties {
        Some(apiext::JSONSchemaPropsOrBool::Schema(a)) => Some(a),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use serde_json::Value;

    /// A one-version CRD around `schema` (JSON), with the status subresource when `status`.
    pub fn crd_version(schema: Value, status: bool) -> apiext::CustomResourceDefinitionVersion {
        apiext::CustomResourceDefinitionVersion {
            name: "v1".into(),
            served: true,
            storage: true,
            schema: Some(apiext::CustomResourceValidation {
                open_api_v3_schema: Some(serde_json::from_value(schema).expect("a schema")),
            }),
            subresources: status.then(|| apiext::CustomResourceSubresources {
                status: Some(apiext::CustomResourceSubresourceStatus(Value::Object(
                    Default::default(),
                ))),
                scale: None,
            }),
            ..Default::default()
        }
    }

    /// The violations of a root schema whose `spec` is `spec` (JSON), each as `"<path>:
    /// <rule>"`.
    pub fn spec_violations(spec: Value) -> Vec<String> {
        let v = crd_version(
            serde_json::json!({"type": "object", "properties": {"spec": spec}}),
            false,
        );
        super::check_version(&v)
            .into_iter()
            .map(|v| match &v.at {
                super::Location::Schema(p) => format!("{p}: {}", v.rule),
                other => format!("{other:?}: {}", v.rule),
            })
            .collect()
    }
}
