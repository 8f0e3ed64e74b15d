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
