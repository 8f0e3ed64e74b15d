//! Selectable fields (`#[kube(selectable = ".spec.x")]`), as
//! `ValidateCustomResourceSelectableFields` checks them: each path names a field of the
//! schema (through properties and map values, not list items), outside `metadata`, whose type
//! is string, boolean or integer; no path twice; at most 8 of them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, SelectableField,
};

use super::{Location, Sink, additional, is_true};

/// The most selectable fields a version may have.
pub const MAX: usize = 8;

pub(super) fn check(
    fields: &[SelectableField],
    schema: Option<&JSONSchemaProps>,
    sink: &mut Sink<'_>,
) {
    let mut seen: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let at = || Location::SelectableField(i);
        let p = f.json_path.as_str();
        if p.is_empty() {
            sink.at(at(), "the jsonPath must not be empty");
            continue;
        }
        let Some(root) = schema else {
            sink.at(
                at(),
                "selectable fields need the version's schema (schema = \"disabled\" has none)",
            );
            continue;
        };
        match resolve(root, p) {
            Resolved::Unknown => {}
            Resolved::Invalid(why) => {
                sink.at(at(), format!("{p:?} is not a valid path: {why}"))
                    .help("name a field as serde names it, from the root: `.spec.name`");
                continue;
            }
            Resolved::Field(s, canonical) => {
                if canonical.first().is_some_and(|c| c == "metadata") {
                    sink.at(at(), format!("{p:?} must not point into metadata"));
                }
                if !matches!(s.type_.as_deref(), Some("string" | "boolean" | "integer")) {
                    sink.at(
                        at(),
                        format!(
                            "{p:?} must name a field of type string, boolean or integer, not {}",
                            s.type_.as_deref().unwrap_or("one without a type")
                        ),
                    );
                }
                let key = canonical.join("\u{0}");
                if seen.contains(&key) {
                    sink.at(at(), format!("{p:?} is selectable twice"));
                } else {
                    seen.push(key);
                }
            }
        }
    }
    if seen.len() > MAX {
        sink.at(
            Location::SelectableField(MAX),
            format!(
                "a version may have at most {MAX} selectable fields, this one has {}",
                seen.len()
            ),
        );
    }
}

enum Resolved<'s> {
    /// The schema of the named field and its segments.
    Field(&'s JSONSchemaProps, Vec<String>),
    /// The path does not name a field.
    Invalid(String),
    /// The path runs into a part of the schema that preserves unknown fields, or has a shape
    /// this check does not read: left to the API server.
    Unknown,
}

fn resolve<'s>(root: &'s JSONSchemaProps, path: &str) -> Resolved<'s> {
    let mut node = root;
    let mut segs = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let (seg, tail) = if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (&r[..end], &r[end..])
        } else if let Some(r) = rest.strip_prefix("['") {
            let Some(end) = r.find("']") else {
                return Resolved::Unknown;
            };
            (&r[..end], &r[end + 2..])
        } else if rest.starts_with('[') {
            return Resolved::Invalid("list indexes are not allowed".into());
        } else {
            return Resolved::Invalid("it must start with `.`".into());
        };
        if seg.is_empty() {
            return Resolved::Invalid("it has an empty segment".into());
        }
        if seg.contains('\\') {
            return Resolved::Unknown;
        }
        node = match node.properties.as_ref().and_then(|p| p.get(seg)) {
            Some(n) => n,
            None => match additional(node) {
                Some(a) => a,
                None if is_true(node.x_kubernetes_preserve_unknown_fields)
                    || node.additional_properties.is_some() =>
                {
                    return Resolved::Unknown;
                }
                None => {
                    return Resolved::Invalid(format!("`{seg}` is not a field of the schema"));
                }
            },
        };
        segs.push(seg.to_string());
        rest = tail;
    }
    if segs.is_empty() {
        return Resolved::Invalid("it names no field".into());
    }
    Resolved::Field(node, segs)
}

#[cfg(test)]
mod tests {
    use super::super::{check_version, test_support::crd_version};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use serde_json::json;

    fn with(paths: &[&str]) -> Vec<String> {
        let mut v = crd_version(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "name": {"type": "string"}, "n": {"type": "integer"}, "on": {"type": "boolean"},
                "f": {"type": "number"}, "list": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            }}}}),
            false,
        );
        v.selectable_fields = Some(
            paths
                .iter()
                .map(|p| apiext::SelectableField {
                    json_path: p.to_string(),
                })
                .collect(),
        );
        check_version(&v)
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn selectable_fields_name_scalar_fields_once() {
        assert!(with(&[".spec.name", ".spec.n", ".spec.on", ".spec.labels.app"]).is_empty());
        assert_eq!(
            with(&[
                ".spec.f",
                ".spec.missing",
                ".spec.list",
                ".spec.name",
                ".spec['name']"
            ]),
            [
                "selectable field 0: \".spec.f\" must name a field of type string, boolean or integer, not number",
                "selectable field 1: \".spec.missing\" is not a valid path: `missing` is not a field of the schema",
                "selectable field 2: \".spec.list\" must name a field of type string, boolean or integer, not array",
                "selectable field 4: \".spec['name']\" is selectable twice",
            ]
        );
    }

    #[test]
    fn at_most_eight_selectable_fields() {
        let paths: Vec<String> = (0..9).map(|i| format!(".spec.labels.k{i}")).collect();
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let got = with(&refs);
        assert_eq!(
            got,
            ["selectable field 8: a version may have at most 8 selectable fields, this one has 9"]
        );
    }
}
