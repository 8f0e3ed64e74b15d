//! The parts of a version outside its schema that `#[kube(...)]` fills: printer columns
//! (`printcolumn`: a name, a known type and format, a JSON path starting with `.`), the scale
//! subresource (`scale`: replica paths under `.spec.` and `.status.`), and the deprecation
//! warning (`deprecated = "..."`: at most 256 printable characters). Mirrors
//! `ValidateCustomResourceColumnDefinition`, `ValidateCustomResourceDefinitionSubresources`
//! and `validateDeprecationWarning`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion;

use super::{Location, Sink};

/// The types a printer column may have.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
/// The formats a printer column may have.
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

pub(super) fn check(v: &CustomResourceDefinitionVersion, sink: &mut Sink<'_>) {
    for (i, c) in v.additional_printer_columns.iter().flatten().enumerate() {
        let at = || Location::PrinterColumn(i);
        if c.name.is_empty() {
            sink.at(at(), "the column needs a name");
        }
        if !COLUMN_TYPES.contains(&c.type_.as_str()) {
            sink.at(
                at(),
                format!(
                    "the type {:?} of column {:?} is not one of {}",
                    c.type_,
                    c.name,
                    COLUMN_TYPES.join(", ")
                ),
            );
        }
        if let Some(f) = c.format.as_deref().filter(|f| !f.is_empty())
            && !COLUMN_FORMATS.contains(&f)
        {
            sink.at(
                at(),
                format!(
                    "the format {f:?} of column {:?} is not one of {}",
                    c.name,
                    COLUMN_FORMATS.join(", ")
                ),
            );
        }
        if let Err(why) = simple_json_path(&c.json_path) {
            sink.at(
                at(),
                format!(
                    "the jsonPath {:?} of column {:?} {why}",
                    c.json_path, c.name
                ),
            )
            .help(
                "write the path from the object's root, like `.spec.replicas` or `.status.phase`",
            );
        }
    }
    if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
        for (what, path, under) in [
            (
                "specReplicasPath",
                Some(&scale.spec_replicas_path),
                &[".spec."][..],
            ),
            (
                "statusReplicasPath",
                Some(&scale.status_replicas_path),
                &[".status."][..],
            ),
            (
                "labelSelectorPath",
                scale.label_selector_path.as_ref().filter(|p| !p.is_empty()),
                &[".spec.", ".status."][..],
            ),
        ] {
            let Some(path) = path else { continue };
            if let Err(why) = simple_json_path(path) {
                sink.at(Location::Scale, format!("{what} {path:?} {why}"));
            } else if !under.iter().any(|u| path.starts_with(u)) {
                sink.at(
                    Location::Scale,
                    format!(
                        "{what} {path:?} must be a path under {}",
                        under.join(" or ")
                    ),
                );
            }
        }
    }
    let deprecated = v.deprecated == Some(true);
    if let Some(w) = &v.deprecation_warning {
        if !deprecated {
            sink.at(
                Location::Version,
                "a deprecation warning is only allowed on a deprecated version",
            );
        }
        if w.is_empty() {
            sink.at(
                Location::Version,
                "the deprecation warning must not be empty",
            );
        }
        if w.len() > 256 {
            sink.at(
                Location::Version,
                format!(
                    "the deprecation warning has {} bytes, more than 256",
                    w.len()
                ),
            );
        }
        if let Some((i, _)) = w
            .char_indices()
            .find(|(_, c)| c.is_control() || !is_printable(*c))
        {
            sink.at(
                Location::Version,
                format!("the deprecation warning must be printable text; byte {i} is a control or non-printable character"),
            );
        }
    }
}

/// Go's `unicode.IsPrint` for the characters a Rust string literal holds: letters, marks,
/// numbers, punctuation, symbols and the ASCII space. Approximated by "not a control, not a
/// format character, not a separator other than ' '".
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_whitespace() {
        return false;
    }
    // Format characters Go refuses: soft hyphen, zero-width and directional marks, BOM.
    !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// The API server's simple JSON path: not empty and starting with `.`.
fn simple_json_path(p: &str) -> Result<(), &'static str> {
    if p.is_empty() {
        Err("must not be empty")
    } else if !p.starts_with('.') {
        Err("must be a simple JSON path starting with `.`")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check_version, test_support::crd_version};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use serde_json::json;

    fn rules(v: &apiext::CustomResourceDefinitionVersion) -> Vec<String> {
        check_version(v)
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn printer_columns_need_a_known_type_and_a_dotted_path() {
        let mut v = crd_version(json!({"type": "object"}), false);
        let col = |name: &str, ty: &str, path: &str, format: Option<&str>| {
            apiext::CustomResourceColumnDefinition {
                name: name.into(),
                type_: ty.into(),
                json_path: path.into(),
                format: format.map(Into::into),
                ..Default::default()
            }
        };
        v.additional_printer_columns = Some(vec![
            col("Ok", "string", ".spec.a", None),
            col("Bad", "text", "spec.a", Some("uuid")),
        ]);
        assert_eq!(
            rules(&v),
            [
                "printer column 1: the type \"text\" of column \"Bad\" is not one of boolean, date, integer, number, string",
                "printer column 1: the format \"uuid\" of column \"Bad\" is not one of byte, date, date-time, double, float, int32, int64, password",
                "printer column 1: the jsonPath \"spec.a\" of column \"Bad\" must be a simple JSON path starting with `.`",
            ]
        );
    }

    #[test]
    fn scale_paths_sit_under_spec_and_status() {
        let mut v = crd_version(json!({"type": "object"}), true);
        v.subresources.as_mut().unwrap().scale = Some(apiext::CustomResourceSubresourceScale {
            spec_replicas_path: ".status.r".into(),
            status_replicas_path: ".status.r".into(),
            label_selector_path: Some("sel".into()),
        });
        assert_eq!(
            rules(&v),
            [
                "the scale subresource: specReplicasPath \".status.r\" must be a path under .spec.",
                "the scale subresource: labelSelectorPath \"sel\" must be a simple JSON path starting with `.`",
            ]
        );
    }

    #[test]
    fn deprecation_warnings_are_short_printable_text() {
        let mut v = crd_version(json!({"type": "object"}), false);
        v.deprecated = Some(true);
        v.deprecation_warning = Some("use v2".into());
        assert!(rules(&v).is_empty());
        v.deprecation_warning = Some("x".repeat(257));
        assert_eq!(
            rules(&v),
            ["version v1: the deprecation warning has 257 bytes, more than 256"]
        );
        v.deprecation_warning = Some("line\nbreak".into());
        assert!(
            rules(&v)[0].contains("byte 4 is a control"),
            "{:?}",
            rules(&v)
        );
    }
}
