// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! `as=Table` answers: a `meta.k8s.io/v1` Table with the `Name` column and the kind's printer
//! columns, each cell read from the object by the column's JSONPath and typed as the
//! apiextensions server's table convertor types it (`date` cells become ages like `5m`).

use serde_json::{Value, json};

use super::kind::{ApiKind, NAME_DOC};

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// No object.
    None,
    /// A `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

/// The column definitions: `Name`, then the kind's columns.
pub fn columns(kind: &ApiKind) -> Vec<Value> {
    let mut cols = vec![json!({
        "name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0,
    })];
    for c in &kind.columns {
        cols.push(json!({
            "name": c.name,
            "type": c.type_,
            "format": c.format.clone().unwrap_or_default(),
            "description": c.description.clone().unwrap_or_else(|| format!("Custom resource definition column (in JSONPath format): {}", c.json_path)),
            "priority": c.priority.unwrap_or(0),
        }));
    }
    cols
}

/// One row for `obj`.
pub fn row(kind: &ApiKind, obj: &Value, include: IncludeObject, now: jiff::Timestamp) -> Value {
    let mut cells = vec![obj["metadata"]["name"].clone()];
    for c in &kind.columns {
        let found = eval(&c.json_path, obj);
        cells.push(match found {
            Some(v) => cell(&c.type_, v, now),
            None => Value::Null,
        });
    }
    let mut row = json!({"cells": cells});
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            row["object"] = json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            });
        }
        IncludeObject::Object => row["object"] = obj.clone(),
    }
    row
}

/// A Table of `objects`. `list_meta` is the list's metadata (resourceVersion, continue);
/// `headers` false leaves out the column definitions (watch events after the first).
pub fn table(
    kind: &ApiKind,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    headers: bool,
) -> Value {
    let now = jiff::Timestamp::now();
    let mut t = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "rows": objects.iter().map(|o| row(kind, o, include, now)).collect::<Vec<_>>(),
    });
    if headers {
        t["columnDefinitions"] = Value::Array(columns(kind));
    }
    t
}

fn cell(column_type: &str, v: &Value, now: jiff::Timestamp) -> Value {
    match column_type {
        "integer" => v
            .as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        "number" => v.as_f64().map_or(Value::Null, |f| json!(f)),
        "boolean" => v.as_bool().map_or(Value::Null, Value::Bool),
        "date" => match v.as_str() {
            Some(s) => match s.parse::<jiff::Timestamp>() {
                Ok(t) => Value::String(human_duration(now.duration_since(t).as_secs())),
                Err(_) => Value::String("<invalid>".into()),
            },
            None => Value::Null,
        },
        // `string`, and any other type: the value printed as text.
        _ => match v {
            Value::String(s) => Value::String(s.clone()),
            other => Value::String(other.to_string()),
        },
    }
}

/// An age as kubectl shows it (apimachinery's `duration.HumanDuration`): `45s`, `3m20s`,
/// `15m`, `2h5m`, `20h`, `3d4h`, `30d`, `2y10d`, `9y`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let d = (hours / 24) % 365;
        return if d == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{d}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Evaluates the simple JSONPath printer columns use: `.a.b`, `.a[0]`, `.a['k']`, and
/// filters `[?(@.type=="Ready")]` (first match). Out: `None` for a missing key, as the API
/// server's convertor leaves such a cell empty.
pub fn eval<'a>(path: &str, obj: &'a Value) -> Option<&'a Value> {
    let mut cur = obj;
    let p = path.trim().trim_start_matches('{').trim_end_matches('}');
    let b = p.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                let start = i;
                while i < b.len() && b[i] != b'.' && b[i] != b'[' {
                    i += 1;
                }
                let key = &p[start..i];
                if key.is_empty() {
                    continue;
                }
                cur = cur.get(key)?;
            }
            b'[' => {
                let end = p[i..].find(']')? + i;
                let inner = p[i + 1..end].trim();
                i = end + 1;
                if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
                    let (lhs, rhs) = filter.split_once("==")?;
                    let field = lhs.trim().strip_prefix("@.")?;
                    let want = rhs.trim().trim_matches(|c| c == '"' || c == '\'');
                    cur = cur.as_array()?.iter().find(|item| {
                        item.get(field).is_some_and(|v| match v {
                            Value::String(s) => s == want,
                            other => {
                                serde_json::from_str::<Value>(want).ok().as_ref() == Some(other)
                            }
                        })
                    })?;
                } else if let Ok(n) = inner.parse::<usize>() {
                    cur = cur.get(n)?;
                } else {
                    cur = cur.get(inner.trim_matches(|c| c == '"' || c == '\''))?;
                }
            }
            _ => return None,
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let cases = [
            (0, "0s"),
            (119, "119s"),
            (200, "3m20s"),
            (240, "4m"),
            (900, "15m"),
            (7500, "125m"),
            (14700, "4h5m"),
            (72000, "20h"),
            (3 * 86400 + 4 * 3600, "3d4h"),
            (30 * 86400, "30d"),
            (740 * 86400, "2y10d"),
            (3300 * 86400, "9y"),
            (-5, "<invalid>"),
        ];
        for (s, want) in cases {
            assert_eq!(human_duration(s), want, "{s}");
        }
    }

    #[test]
    fn printer_column_paths_find_fields_indexes_and_filtered_items() {
        let obj = json!({
            "spec": {"engine": "mysql", "replicas": 3},
            "status": {"nodes": ["n1", "n2"], "conditions": [
                {"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]},
        });
        assert_eq!(eval(".spec.engine", &obj), Some(&json!("mysql")));
        assert_eq!(eval(".status.nodes[1]", &obj), Some(&json!("n2")));
        assert_eq!(
            eval(".status.conditions[?(@.type==\"Ready\")].status", &obj),
            Some(&json!("True"))
        );
        assert_eq!(eval(".spec['replicas']", &obj), Some(&json!(3)));
        assert_eq!(eval(".spec.missing", &obj), None);
    }

    #[test]
    fn cells_are_typed_by_their_column() {
        let now: jiff::Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        assert_eq!(cell("integer", &json!(3), now), json!(3));
        assert_eq!(cell("integer", &json!("x"), now), Value::Null);
        assert_eq!(cell("string", &json!(["a"]), now), json!("[\"a\"]"));
        assert_eq!(
            cell("date", &json!("2026-01-01T00:00:00Z"), now),
            json!("60m")
        );
        assert_eq!(cell("date", &json!("yesterday"), now), json!("<invalid>"));
    }
}
