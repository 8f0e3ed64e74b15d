// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! JSON values as rules see them: the schema decides a value's CEL type (doubles, bytes,
//! timestamps, durations), property names are escaped as the API server escapes them, and
//! `oldSelf` is wrapped in an optional where `optionalOldSelf` asks for it.

use std::sync::{Arc, LazyLock};

use cel::{Context, Program, Value as Cel};
use serde_json::Value;

use super::guard::{compile, guarded};
use super::library::ENV;

/// `optional.of(v)` or `optional.none()`, made by the environment's own functions.
pub(super) fn optional(v: Option<Cel>) -> Cel {
    static OF: LazyLock<Program> =
        LazyLock::new(|| ENV.compile("optional.of(v)").expect("optional.of compiles"));
    static NONE: LazyLock<Program> = LazyLock::new(|| {
        ENV.compile("optional.none()")
            .expect("optional.none compiles")
    });
    let mut ctx = Context::with_env(ENV.clone());
    let r = match v {
        Some(v) => {
            ctx.add_variable_from_value("v", v);
            OF.execute(&ctx)
        }
        None => NONE.execute(&ctx),
    };
    r.unwrap_or(Cel::Null)
}

/// A `date-time`, `date` (midnight UTC) or `duration` string as the CEL timestamp or duration
/// it is to rules, made by the environment's own `timestamp()` and `duration()`; `None` when
/// it does not parse (the schema's format check reports it).
fn time_value(format: &str, s: &str) -> Option<Cel> {
    static TIMESTAMP: LazyLock<Option<Program>> = LazyLock::new(|| compile("timestamp(v)").ok());
    static DURATION: LazyLock<Option<Program>> = LazyLock::new(|| compile("duration(v)").ok());
    let (program, text) = match format {
        "date" => (&*TIMESTAMP, format!("{s}T00:00:00Z")),
        "date-time" => (&*TIMESTAMP, s.to_string()),
        _ => (&*DURATION, s.to_string()),
    };
    let mut ctx = Context::with_env(ENV.clone());
    ctx.add_variable_from_value("v", Cel::from(text));
    guarded(|| program.as_ref().map_or(Ok(Cel::Null), |p| p.execute(&ctx)))
        .ok()
        .filter(|v| !matches!(v, Cel::Null))
}

/// A property name as CEL sees it (`foo-bar` → `foo__dash__bar`), as the API server escapes
/// it; `None` when it cannot be escaped (the property is then not visible to rules).
pub fn escape(name: &str) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if KEYWORDS.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return None,
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    Some(
        name.replace("__", "__underscores__")
            .replace('.', "__dot__")
            .replace('-', "__dash__")
            .replace('/', "__slash__"),
    )
}

/// `v` as CEL sees it under `schema`: numbers of type `number` as doubles, integers as
/// ints, `format: byte` strings as bytes, `date`/`date-time`/`duration` strings as timestamps
/// and durations, objects with properties as maps of escaped names
/// (null fields left out, as absent), maps as maps, lists as lists.
pub(super) fn to_cel(schema: &Value, v: &Value, root: bool) -> Cel {
    let ty = schema.get("type").and_then(Value::as_str);
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if ty == Some("number") {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => match schema.get("format").and_then(Value::as_str) {
            Some("byte") => {
                use base64::Engine as _;
                match base64::engine::general_purpose::STANDARD.decode(s) {
                    Ok(b) => Cel::Bytes(Arc::new(b)),
                    Err(_) => Cel::from(s.as_str()),
                }
            }
            Some(f @ ("date-time" | "date" | "duration")) => {
                time_value(f, s).unwrap_or_else(|| Cel::from(s.as_str()))
            }
            _ => Cel::from(s.as_str()),
        },
        Value::Array(a) => {
            let items = schema.get("items").unwrap_or(&Value::Null);
            Cel::List(Arc::new(
                a.iter().map(|x| to_cel(items, x, false)).collect(),
            ))
        }
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            let mut out = std::collections::HashMap::new();
            for (k, x) in m {
                if root && k == "metadata" {
                    // At the root, rules see only the name and generateName of metadata.
                    let mut meta = std::collections::HashMap::new();
                    for f in ["name", "generateName"] {
                        if let Some(Value::String(s)) = x.get(f) {
                            meta.insert(f.to_string(), Cel::from(s.as_str()));
                        }
                    }
                    out.insert("metadata".to_string(), Cel::from(meta));
                    continue;
                }
                match (props, extra) {
                    (Some(p), _) => {
                        if x.is_null() {
                            continue;
                        }
                        let sub = p.get(k).unwrap_or(&Value::Null);
                        if let Some(name) = escape(k) {
                            out.insert(name, to_cel(sub, x, false));
                        }
                    }
                    (None, Some(e)) => {
                        out.insert(k.clone(), to_cel(e, x, false));
                    }
                    (None, None) => {
                        out.insert(k.clone(), to_cel(&Value::Null, x, false));
                    }
                }
            }
            Cel::from(out)
        }
    }
}
