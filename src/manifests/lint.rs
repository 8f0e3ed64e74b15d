//! Warnings about manifests that are valid but likely not what their author meant. They never
//! stop generation.

use serde_json::Value;

/// The fields of a CRD that carry a `default:` in some served version's schema, as dotted
/// paths from the object's root (`spec.replicas`, `spec.servers[].port`), sorted and each once.
/// `crd_yaml` is a CRD as `manifests` writes it; YAML it cannot read gives no field.
///
/// A defaulting webhook never sees such a field missing: the API server applies the schema's
/// defaults when it decodes the request, before the admission chain (as apiextensions-apiserver
/// defaults custom resources), and serde fills the same default when the webhook decodes the
/// object.
pub fn schema_defaults(crd_yaml: &str) -> Vec<String> {
    let Ok(crd) = serde_saphyr::from_str::<Value>(crd_yaml) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for v in &versions {
        defaults_under(&v["schema"]["openAPIV3Schema"], "", &mut paths);
    }
    paths.sort();
    paths.dedup();
    paths
}

fn defaults_under(schema: &Value, path: &str, out: &mut Vec<String>) {
    if !path.is_empty() && schema.get("default").is_some() {
        out.push(path.to_string());
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            defaults_under(sub, &child, out);
        }
    }
    if let Some(items) = schema.get("items") {
        defaults_under(items, &format!("{path}[]"), out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        defaults_under(values, &format!("{path}[*]"), out);
    }
}

/// Where the field at the CRD path `path` (`spec.replicas`) of kind `kind` is declared: the
/// `#[derive(CustomResource)]` struct whose `#[kube(kind = "…")]` is `kind`, and in it the field
/// named (by `#[serde(rename = "…")]`, or the identifier in camelCase under `rename_all =
/// "camelCase"`, or as written) like the path's segment after `spec`. Out: `(file, line,
/// column)`, 1-based; the struct itself when the field is deeper or not found by name; `None`
/// when no such struct is in the sources.
pub fn field_location(
    sources: &super::source::SourceSet,
    kind: &str,
    path: &str,
) -> Option<(std::path::PathBuf, usize, usize)> {
    let wanted_kind = format!("kind = \"{kind}\"");
    let segment = path
        .strip_prefix("spec.")
        .map(|rest| rest.split('.').next().unwrap_or(rest));
    for file in &sources.files {
        for item in &file.ast.items {
            let syn::Item::Struct(st) = item else {
                continue;
            };
            let attrs = |a: &[syn::Attribute], name: &str| -> String {
                a.iter()
                    .filter(|a| a.path().is_ident(name))
                    .map(|a| quote::ToTokens::to_token_stream(&a.meta).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let is_kind = super::crd::attrs::derives(&st.attrs)
                .iter()
                .any(|d| d == "CustomResource")
                && attrs(&st.attrs, "kube").contains(&wanted_kind);
            if !is_kind {
                continue;
            }
            let camel = attrs(&st.attrs, "serde").contains("rename_all = \"camelCase\"");
            let at = |span: proc_macro2::Span| {
                let start = span.start();
                (file.path.clone(), start.line, start.column + 1)
            };
            if let (Some(segment), syn::Fields::Named(fields)) = (segment, &st.fields) {
                for field in &fields.named {
                    let Some(ident) = &field.ident else { continue };
                    let written = ident.to_string().trim_start_matches("r#").to_string();
                    let serde = attrs(&field.attrs, "serde");
                    let name = match serde
                        .split("rename = \"")
                        .nth(1)
                        .and_then(|r| r.split('"').next())
                    {
                        Some(renamed) => renamed.to_string(),
                        None if camel => snake_to_camel(&written),
                        None => written,
                    };
                    if name == segment {
                        return Some(at(ident.span()));
                    }
                }
            }
            return Some(at(st.ident.span()));
        }
    }
    None
}

/// `gpu_count` → `gpuCount`, as serde's `rename_all = "camelCase"` names a field.
fn snake_to_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_found_in_nested_objects_lists_and_maps_once() {
        let crd = r#"
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            default: {}
            properties:
              replicas:
                default: 1
                type: integer
              servers:
                items:
                  properties:
                    port: {default: 80, type: integer}
                    host: {type: string}
                type: array
              labels:
                additionalProperties: {default: "x", type: string}
                type: object
            type: object
  - name: v2
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              replicas: {default: 2, type: integer}
            type: object
"#;
        assert_eq!(
            schema_defaults(crd),
            [
                "spec",
                "spec.labels[*]",
                "spec.replicas",
                "spec.servers[].port"
            ]
        );
        assert!(schema_defaults("spec: {versions: [{name: v1}]}").is_empty());
        assert!(schema_defaults(": not yaml [").is_empty());
    }
}
