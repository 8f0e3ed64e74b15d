//! Warnings about manifests that are valid but likely not what their author meant. They never
//! stop generation.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::source::SourceSet;

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

/// The words the body of `fn default` says in each `impl ... Defaulter<...> for ...` of the
/// file `file` (a path relative to the project, matched as the end of a source's path):
/// identifiers, and the words of string literals (a JSON patch names fields in strings).
/// `None` when the sources hold no such file or no such function, so the caller cannot tell.
pub fn defaulter_words(sources: &SourceSet, file: &Path) -> Option<BTreeSet<String>> {
    let source = sources.files.iter().find(|f| f.path.ends_with(file))?;
    let mut words = BTreeSet::new();
    let mut found = false;
    for item in &source.ast.items {
        let syn::Item::Impl(imp) = item else { continue };
        let is_defaulter = imp
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last())
            .is_some_and(|s| s.ident == "Defaulter");
        if !is_defaulter {
            continue;
        }
        for inner in &imp.items {
            if let syn::ImplItem::Fn(f) = inner
                && f.sig.ident == "default"
            {
                found = true;
                collect_words(quote::ToTokens::to_token_stream(&f.block), &mut words);
            }
        }
    }
    found.then_some(words)
}

fn collect_words(tokens: proc_macro2::TokenStream, out: &mut BTreeSet<String>) {
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string().trim_start_matches("r#").to_string());
            }
            proc_macro2::TokenTree::Group(g) => collect_words(g.stream(), out),
            proc_macro2::TokenTree::Literal(l) => {
                let text = l.to_string();
                out.extend(
                    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(str::to_string),
                );
            }
            proc_macro2::TokenTree::Punct(_) => {}
        }
    }
}

/// Whether `words` ([`defaulter_words`]) name the last field of the dotted schema `path`
/// (`spec.maxRetries`): its JSON name, or that name in snake case (`max_retries`, the Rust
/// field serde renames).
pub fn names_field(words: &BTreeSet<String>, path: &str) -> bool {
    let last = path
        .rsplit('.')
        .next()
        .unwrap_or(path)
        .trim_end_matches("[]");
    let mut snake = String::new();
    for c in last.chars() {
        if c.is_uppercase() {
            if !snake.is_empty() {
                snake.push('_');
            }
            snake.extend(c.to_lowercase());
        } else {
            snake.push(c);
        }
    }
    words.contains(last) || words.contains(&snake)
}

#[cfg(test)]
mod tests {

    /// The words of `Defaulter::default` bodies only (not their doc comments, not other
    /// functions), and a field named by its JSON name or its snake-case Rust name.
    #[test]
    fn a_defaulter_names_the_fields_its_body_mentions() {
        let text = "impl Defaulter<Db> for DbWebhook {\n\
            /// Would set replicas.\n\
            async fn default(&self, db: &mut Db) -> Result<(), Denied> {\n\
                db.spec.max_retries.get_or_insert(3);\n\
                let _ = serde_json::json!({\"spec\": {\"storageClass\": \"x\"}});\n\
                Ok(())\n\
            }\n\
            fn other(&self) { let _ = self.engine; }\n\
        }\n";
        let sources = SourceSet::parse_all(vec![(
            "src/webhook/v1/db_webhook.rs".into(),
            text.to_string(),
        )])
        .unwrap();
        let words = defaulter_words(&sources, Path::new("src/webhook/v1/db_webhook.rs")).unwrap();
        assert!(names_field(&words, "spec.maxRetries"));
        assert!(names_field(&words, "spec.storageClass"));
        assert!(!names_field(&words, "spec.replicas"));
        assert!(!names_field(&words, "spec.engine"));
        // No such file, or no Defaulter in it: the caller cannot tell.
        assert_eq!(
            defaulter_words(&sources, Path::new("src/webhook/v1/x_webhook.rs")),
            None
        );
        let plain =
            SourceSet::parse_all(vec![("src/a.rs".into(), "fn default() {}\n".into())]).unwrap();
        assert_eq!(defaulter_words(&plain, Path::new("src/a.rs")), None);
    }

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
