//! Comparing two CRDs (or any JSON values) the way the conformance suite and `manifests
//! --verify` do: as parsed JSON values, reporting the JSON paths that differ and a unified
//! diff of the pretty-printed JSON.

use std::fmt::Write as _;

use serde_json::Value;

/// `None` when `expected` equals `actual` as JSON values (numbers keep their kind: `10.0` is
/// not `10`); otherwise a report: the number of differing fields, up to 25 of their paths
/// (`$.spec.versions[0].schema…: expected …, <actual_label> …`), and a unified diff (at most
/// 200 lines) with `expected_label` and `actual_label` as headers.
pub fn compare(
    expected: &Value,
    actual: &Value,
    expected_label: &str,
    actual_label: &str,
) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut paths = Vec::new();
    diff_paths("$", expected, actual, actual_label, &mut paths);
    let mut report = String::new();
    let shown = paths.len().min(25);
    writeln!(report, "{} differing field(s):", paths.len()).unwrap();
    for p in &paths[..shown] {
        writeln!(report, "  {p}").unwrap();
    }
    if paths.len() > shown {
        writeln!(report, "  ... and {} more", paths.len() - shown).unwrap();
    }
    let left = serde_json::to_string_pretty(expected).unwrap_or_default();
    let right = serde_json::to_string_pretty(actual).unwrap_or_default();
    let diff = similar::TextDiff::from_lines(&left, &right)
        .unified_diff()
        .context_radius(3)
        .header(expected_label, actual_label)
        .to_string();
    let lines: Vec<&str> = diff.lines().collect();
    let limit = 200;
    for l in lines.iter().take(limit) {
        writeln!(report, "{l}").unwrap();
    }
    if lines.len() > limit {
        writeln!(report, "... ({} more diff lines)", lines.len() - limit).unwrap();
    }
    Some(report)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}...", s.chars().take(117).collect::<String>())
    } else {
        s
    }
}

/// Lists the JSON paths where `a` and `b` differ, descending into objects and equal-length
/// arrays.
fn diff_paths(path: &str, a: &Value, b: &Value, label: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(va), Some(vb)) => diff_paths(&p, va, vb, label, out),
                    (Some(va), None) => {
                        out.push(format!("{p}: missing in {label} (expected {})", short(va)))
                    }
                    (None, Some(vb)) => {
                        out.push(format!("{p}: unexpected in {label} ({})", short(vb)))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_paths(&format!("{path}[{i}]"), va, vb, label, out);
            }
        }
        _ if a != b => out.push(format!(
            "{path}: expected {}, {label} {}",
            short(a),
            short(b)
        )),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_have_no_report_and_differences_name_their_paths() {
        let a = json!({"spec": {"names": {"plural": "foos"}, "versions": [{"name": "v1", "served": true}]}});
        assert_eq!(compare(&a, &a.clone(), "crd()", "rsbuilder"), None);
        let b =
            json!({"spec": {"names": {"plural": "fooz"}, "versions": [{"name": "v1"}]}, "x": 1.0});
        let report = compare(&a, &b, "crd()", "rsbuilder").unwrap();
        assert!(report.starts_with("3 differing field(s):\n"), "{report}");
        assert!(
            report.contains("$.spec.names.plural: expected \"foos\", rsbuilder \"fooz\""),
            "{report}"
        );
        assert!(
            report.contains("$.spec.versions[0].served: missing in rsbuilder (expected true)"),
            "{report}"
        );
        assert!(
            report.contains("$.x: unexpected in rsbuilder (1.0)"),
            "{report}"
        );
        assert!(report.contains("--- crd()\n+++ rsbuilder\n"), "{report}");
        assert!(report.contains("-      \"plural\": \"foos\""), "{report}");
        // Numbers keep their kind.
        assert!(compare(&json!(10), &json!(10.0), "a", "b").is_some());
    }
}
