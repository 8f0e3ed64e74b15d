//! Manifest objects as YAML: serde-saphyr's serialization (docs/yaml.md says why that
//! library), and the `---` documents controller-gen writes each object of a file as.

use super::diag::Diagnostic;

/// Serializes a manifest object to YAML with serde-saphyr (see docs/yaml.md for the choice).
pub fn to_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(value)
}

/// Appends `value` as one YAML document introduced by `---`, as controller-gen writes every
/// object of a manifest file. `target` names the file in the (practically impossible)
/// serialization error.
pub fn push_document<T: serde::Serialize>(
    out: &mut String,
    value: &T,
    target: &str,
) -> Result<(), Vec<Diagnostic>> {
    let yaml = to_yaml(value).map_err(|e| {
        vec![Diagnostic::new(
            std::path::Path::new(target),
            1,
            1,
            format!("cannot serialize to YAML: {e}"),
        )]
    })?;
    out.push_str("---\n");
    out.push_str(&yaml);
    if !yaml.ends_with('\n') {
        out.push('\n');
    }
    Ok(())
}
