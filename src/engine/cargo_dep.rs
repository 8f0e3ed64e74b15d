//! [`super::FileOp::EnsureDependency`]: a dependency made present in a Cargo.toml with
//! `toml_edit`, so the rest of the file (the user's formatting, comments, order) stays byte for
//! byte as it was.
//!
//! The rule for an entry that is already there (decided here, documented in docs/safety.md):
//! - no entry: `name = <spec>` is appended to the table (the table is created when missing),
//!   with `features` merged into the spec;
//! - an entry whose version requirement is caret-compatible with the wanted one (the same
//!   leading components up to the first non-zero one: `"1"` and `"1.4"`, `"0.26"` and
//!   `"0.26.1"`), or that has no version (a `path`, `git` or `workspace` dependency: the user's
//!   choice): kept as it is; wanted features it lacks are added to its `features` list;
//! - any other version requirement: an error naming Cargo.toml and the line of the entry, and
//!   nothing is written. rsbuilder never downgrades or upgrades a dependency the user chose.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

/// Why the dependency cannot be ensured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyError {
    /// 1-based line of the conflicting entry (or of the parse error), when known.
    pub line: Option<usize>,
    /// What is wrong and what to do.
    pub reason: String,
}

/// `text` (a Cargo.toml) with the dependency `name` present in `[table]` as [`self`] (module
/// docs) describes. `spec` is a TOML value: a version string (`"0.26"`) or an inline table
/// (`{ version = "0.26", default-features = false }`). Returns the text unchanged when nothing
/// is needed.
///
/// Errors: `text` or `spec` is not valid TOML; `[table]` is not a table; the entry conflicts.
pub fn ensure(
    text: &str,
    table: &str,
    name: &str,
    spec: &str,
    features: &[String],
) -> Result<String, DependencyError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let spanned = toml_edit::Document::parse(text).map_err(|e| DependencyError {
        line: e.span().map(|s| line_of(s.start)),
        reason: format!("it is not valid TOML: {}", e.message()),
    })?;
    let entry_line = spanned
        .get(table)
        .and_then(Item::as_table_like)
        .and_then(|t| t.get_key_value(name))
        .and_then(|(k, _)| k.span())
        .map(|s| line_of(s.start));
    let mut doc: DocumentMut = spanned.into_mut();
    let wanted = parse_spec(spec)?;
    let wanted_version = version_of(&wanted);
    if doc.get(table).is_none() {
        doc[table] = Item::Table(Table::new());
    }
    let Some(deps) = doc[table].as_table_like_mut() else {
        return Err(DependencyError {
            line: None,
            reason: format!("`{table}` is not a table"),
        });
    };
    let Some(existing) = deps.get_mut(name) else {
        let mut value = wanted;
        add_features(&mut value, features);
        deps.insert(name, Item::Value(value));
        return Ok(doc.to_string());
    };
    let have_version = existing.as_value().and_then(version_of);
    let has_source = existing.as_table_like().is_some_and(|t| {
        t.contains_key("path") || t.contains_key("git") || t.contains_key("workspace")
    });
    match (&have_version, &wanted_version) {
        (Some(have), Some(want)) if compatible(have, want) => {}
        (None, _) if has_source => {}
        (_, None) => {}
        _ => {
            return Err(DependencyError {
                line: entry_line,
                reason: format!(
                    "`{name}` in [{table}] asks for {}, and rsbuilder needs a version compatible with \"{}\"; change that line to a compatible version, then re-run",
                    have_version
                        .as_deref()
                        .map_or("no version".to_string(), |v| format!("\"{v}\"")),
                    wanted_version.as_deref().unwrap_or_default()
                ),
            });
        }
    }
    let missing: Vec<String> = features
        .iter()
        .filter(|f| !features_of(existing).iter().any(|h| h == *f))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(text.to_string());
    }
    match existing {
        Item::Value(v @ (Value::String(_) | Value::InlineTable(_))) => add_features(v, &missing),
        Item::Table(t) => {
            let list = t
                .entry("features")
                .or_insert(Item::Value(Value::Array(Array::new())));
            if let Some(a) = list.as_array_mut() {
                a.extend(missing);
            }
        }
        _ => {
            return Err(DependencyError {
                line: entry_line,
                reason: format!("`{name}` in [{table}] is neither a version nor a table"),
            });
        }
    }
    Ok(doc.to_string())
}

fn parse_spec(spec: &str) -> Result<Value, DependencyError> {
    spec.parse::<Value>().map_err(|e| DependencyError {
        line: None,
        reason: format!(
            "the dependency spec {spec:?} is not a TOML value: {}",
            e.message()
        ),
    })
}

/// The version requirement of a dependency value: the string itself, or its `version` key.
fn version_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.value().clone()),
        Value::InlineTable(t) => t.get("version").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

fn features_of(item: &Item) -> Vec<String> {
    item.as_table_like()
        .and_then(|t| t.get("features"))
        .and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Adds `features` (those not yet listed) to a dependency value, turning a bare version string
/// into `{ version = "...", features = [...] }`.
fn add_features(value: &mut Value, features: &[String]) {
    if features.is_empty() {
        return;
    }
    if let Value::String(_) = value {
        // The string's own spacing and trailing comment (`"1" # pinned`) go to the table that
        // replaces it, not inside it.
        let decor = value.decor().clone();
        let mut version = value.clone();
        version.decor_mut().clear();
        let mut table = InlineTable::new();
        table.insert("version", version);
        let mut replaced = Value::InlineTable(table);
        *replaced.decor_mut() = decor;
        *value = replaced;
    }
    if let Value::InlineTable(t) = value {
        let list = t.entry("features").or_insert(Value::Array(Array::new()));
        if let Some(a) = list.as_array_mut() {
            for f in features {
                if !a.iter().any(|v| v.as_str() == Some(f)) {
                    a.push(f.as_str());
                }
            }
        }
    }
}

/// Whether two version requirements accept the same caret range: equal numeric components up
/// to and including the first non-zero one (`^`, `=` and `~` prefixes ignored).
fn compatible(have: &str, want: &str) -> bool {
    fn key(req: &str) -> Option<Vec<u64>> {
        let req = req.trim().trim_start_matches(['^', '=', '~']).trim();
        let mut out = Vec::new();
        for part in req.split('.') {
            let n: u64 = part.parse().ok()?;
            out.push(n);
            if n != 0 {
                break;
            }
        }
        Some(out)
    }
    matches!((key(have), key(want)), (Some(a), Some(b)) if a == b)
}

/// Where and why `text` is not valid TOML, as `line L, column C: <message>`, from the parser's
/// error `e`. Never quotes the text: the file may be a link to something that is not a
/// manifest (`/proc/self/environ`), and the parser's own display shows the offending line.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_string(),
    }
}

/// The names code uses for the crates `text` (a Cargo.toml) depends on in `[dependencies]`
/// and every `[target.<cfg>.dependencies]` table: each key with `-` as `_`, as rustc names an
/// extern crate (a renamed dependency, `k = { package = "p" }`, is `k`). Sorted, each once.
///
/// Errors: `text` is not valid TOML (with its line).
pub fn crate_names(text: &str) -> Result<Vec<String>, DependencyError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let doc = toml_edit::Document::parse(text).map_err(|e| DependencyError {
        line: e.span().map(|s| line_of(s.start)),
        reason: format!("it is not valid TOML: {}", e.message()),
    })?;
    let mut tables: Vec<&dyn toml_edit::TableLike> = Vec::new();
    if let Some(t) = doc.get("dependencies").and_then(Item::as_table_like) {
        tables.push(t);
    }
    if let Some(targets) = doc.get("target").and_then(Item::as_table_like) {
        for (_, target) in targets.iter() {
            if let Some(t) = target.get("dependencies").and_then(Item::as_table_like) {
                tables.push(t);
            }
        }
    }
    let mut names: Vec<String> = tables
        .iter()
        .flat_map(|t| t.iter().map(|(k, _)| k.replace('-', "_")))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The message of a [`DependencyError`] for the file at `path`: `path:line: reason`.
pub fn describe(path: &Path, e: &DependencyError) -> String {
    match e.line {
        Some(line) => format!("{}:{line}: {}", path.display(), e.reason),
        None => format!("{}: {}", path.display(), e.reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARGO: &str = "[package]\nname = \"p\"\n\n[dependencies]\n# the API client\nkube   = { version = \"5\", features = [\"runtime\"] } # pinned\nserde = \"1\"\n";

    #[test]
    fn crate_names_are_the_dependency_keys_as_code_names_them() {
        let text = "[package]\nname = \"p\"\n\n[dependencies]\ncert-manager-types = \"1\"\nkube = { version = \"5\" }\nalias = { package = \"real-name\", version = \"1\" }\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n\n[dev-dependencies]\ninsta = \"1\"\n";
        assert_eq!(
            crate_names(text).unwrap(),
            ["alias", "cert_manager_types", "kube", "libc"]
        );
        let bad = crate_names("[dependencies\n").unwrap_err();
        assert_eq!(bad.line, Some(1));
    }

    #[test]
    fn a_missing_dependency_is_appended_and_the_rest_is_kept_byte_for_byte() {
        let out = ensure(CARGO, "dependencies", "anyhow", "\"1\"", &[]).unwrap();
        assert_eq!(out, format!("{CARGO}anyhow = \"1\"\n"));
    }

    #[test]
    fn a_missing_table_is_created() {
        let out = ensure(
            "[package]\nname = \"p\"\n",
            "dev-dependencies",
            "tempfile",
            "\"3\"",
            &[],
        )
        .unwrap();
        assert_eq!(
            out,
            "[package]\nname = \"p\"\n\n[dev-dependencies]\ntempfile = \"3\"\n"
        );
    }

    #[test]
    fn a_compatible_entry_is_left_as_is() {
        assert_eq!(
            ensure(CARGO, "dependencies", "kube", "\"5.1\"", &[]).unwrap(),
            CARGO
        );
        assert_eq!(
            ensure(
                CARGO,
                "dependencies",
                "serde",
                "{ version = \"1.0.200\" }",
                &[]
            )
            .unwrap(),
            CARGO
        );
    }

    #[test]
    fn missing_features_are_added_to_a_compatible_entry() {
        let out = ensure(
            CARGO,
            "dependencies",
            "kube",
            "\"5\"",
            &["runtime".into(), "derive".into()],
        )
        .unwrap();
        assert_eq!(
            out,
            CARGO.replace("[\"runtime\"] }", "[\"runtime\", \"derive\"] }")
        );
        let out = ensure(CARGO, "dependencies", "serde", "\"1\"", &["derive".into()]).unwrap();
        assert!(
            out.contains("serde = { version = \"1\", features = [\"derive\"] }\n"),
            "{out}"
        );
        assert!(out.contains("# the API client\nkube   = "), "{out}");
    }

    #[test]
    fn an_incompatible_version_is_an_error_naming_the_line() {
        let e = ensure(CARGO, "dependencies", "kube", "\"4\"", &[]).unwrap_err();
        assert_eq!(e.line, Some(6));
        assert_eq!(
            describe(Path::new("Cargo.toml"), &e),
            "Cargo.toml:6: `kube` in [dependencies] asks for \"5\", and rsbuilder needs a version compatible with \"4\"; change that line to a compatible version, then re-run"
        );
        assert!(!compatible("0.26", "0.27"));
        assert!(compatible("^0.26.1", "0.26"));
    }

    #[test]
    fn a_path_dependency_is_the_users_choice() {
        let text = "[dependencies]\nrsbuilder-runtime = { path = \"rsbuilder-runtime\" }\n";
        assert_eq!(
            ensure(text, "dependencies", "rsbuilder-runtime", "\"0.1\"", &[]).unwrap(),
            text
        );
    }

    #[test]
    fn invalid_toml_is_an_error_with_its_line() {
        let e = ensure("[package]\nname = \n", "dependencies", "a", "\"1\"", &[]).unwrap_err();
        assert_eq!(e.line, Some(2));
    }
}
