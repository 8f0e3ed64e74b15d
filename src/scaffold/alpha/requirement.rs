//! `alpha update` in a project that depends on the runtime by version (`init --runtime
//! crate`): the project holds no copy to refresh, so what moves is the version requirement of
//! its `rsbuilder-runtime` dependencies. Each becomes this rsbuilder's version, edited with
//! `toml_edit`, so the entry's other keys (`features`, `default-features`, `optional`, ...),
//! the comments and the rest of Cargo.toml stay byte for byte.
//!
//! An entry without a `version` key (`path`, `git` or `workspace` only) is the user's choice
//! of where the runtime comes from, and is left alone.

use anyhow::{Result, anyhow};
use toml_edit::{DocumentMut, Item, TableLike, Value};

use crate::model::layout;
use crate::scaffold::runtime::PACKAGE;

/// One `rsbuilder-runtime` requirement that moves to this rsbuilder's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The dependency table it is in, as Cargo.toml names it (`dependencies`,
    /// `dev-dependencies`, `target.'cfg(unix)'.dependencies`).
    pub table: String,
    /// The requirement it had (`0.0.9`).
    pub from: String,
}

/// The dependency tables Cargo reads, at the top level and under each `[target.<spec>]`.
const TABLES: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];

/// `text` (a project's Cargo.toml) with every `rsbuilder-runtime` version requirement set to
/// `version`, and the requirements that moved, in file order of the tables. Out: `None` when
/// none differs (the text is then unchanged).
///
/// Errors: `text` is not valid TOML (naming Cargo.toml and the parser's message).
pub fn move_to(text: &str, version: &str) -> Result<Option<(String, Vec<Moved>)>> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| anyhow!("{}: not valid TOML: {e}", layout::CARGO_TOML))?;
    let mut moved = Vec::new();
    for name in TABLES {
        if let Some(t) = doc.get_mut(name).and_then(Item::as_table_like_mut) {
            move_in(t, name, version, &mut moved);
        }
    }
    if let Some(targets) = doc.get_mut("target").and_then(Item::as_table_like_mut) {
        for (spec, target) in targets.iter_mut() {
            let Some(target) = target.as_table_like_mut() else {
                continue;
            };
            for name in TABLES {
                if let Some(t) = target.get_mut(name).and_then(Item::as_table_like_mut) {
                    let table = format!("target.{}.{name}", quoted_key(spec.get()));
                    move_in(t, &table, version, &mut moved);
                }
            }
        }
    }
    Ok((!moved.is_empty()).then(|| (doc.to_string(), moved)))
}

/// Sets the requirement of the `rsbuilder-runtime` entry of `deps` (the table `table`) to
/// `version` where it has one that differs, keeping the value's comments and spacing.
fn move_in(deps: &mut dyn TableLike, table: &str, version: &str, moved: &mut Vec<Moved>) {
    let Some(entry) = deps.get_mut(PACKAGE) else {
        return;
    };
    let value = match entry {
        // `rsbuilder-runtime = "0.1.0"`
        Item::Value(Value::String(_)) => entry.as_value_mut(),
        // `{ version = "0.1.0", features = [...] }` or a `[dependencies.rsbuilder-runtime]`
        // table.
        _ => entry
            .as_table_like_mut()
            .and_then(|t| t.get_mut("version"))
            .and_then(Item::as_value_mut),
    };
    let Some(value) = value else {
        return;
    };
    let Some(from) = value.as_str().map(str::to_owned) else {
        return;
    };
    if from == version {
        return;
    }
    let decor = value.decor().clone();
    *value = Value::from(version);
    *value.decor_mut() = decor;
    moved.push(Moved {
        table: table.to_owned(),
        from,
    });
}

/// A `[target.<spec>]` key as Cargo.toml writes it: bare when it can be, else quoted.
fn quoted_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        key.to_owned()
    } else {
        format!("'{key}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_requirement_moves_and_the_entries_other_keys_and_comments_stay() {
        let text = "[package]\nname = \"p\"\n\n[dependencies]\n\
            rsbuilder-runtime = { version = \"0.0.9\", features = [\"apiserver\"], default-features = false } # ours\n\
            kube = \"5\"\n\n[dev-dependencies]\n\
            rsbuilder-runtime = \"0.0.9\"  # tests\n\n\
            [target.'cfg(unix)'.dependencies.rsbuilder-runtime]\nversion = \"0.0.8\"\noptional = true\n";
        let (out, moved) = move_to(text, "0.1.0").unwrap().unwrap();
        assert_eq!(
            out,
            "[package]\nname = \"p\"\n\n[dependencies]\n\
            rsbuilder-runtime = { version = \"0.1.0\", features = [\"apiserver\"], default-features = false } # ours\n\
            kube = \"5\"\n\n[dev-dependencies]\n\
            rsbuilder-runtime = \"0.1.0\"  # tests\n\n\
            [target.'cfg(unix)'.dependencies.rsbuilder-runtime]\nversion = \"0.1.0\"\noptional = true\n"
        );
        assert_eq!(
            moved,
            vec![
                Moved {
                    table: "dependencies".into(),
                    from: "0.0.9".into()
                },
                Moved {
                    table: "dev-dependencies".into(),
                    from: "0.0.9".into()
                },
                Moved {
                    table: "target.'cfg(unix)'.dependencies".into(),
                    from: "0.0.8".into()
                },
            ]
        );
    }

    #[test]
    fn a_current_requirement_or_a_path_dependency_is_left_alone() {
        let text = "[dependencies]\nrsbuilder-runtime = \"0.1.0\"\n\n[dev-dependencies]\n\
            rsbuilder-runtime = { path = \"../runtime\", features = [\"testing\"] }\n";
        assert_eq!(move_to(text, "0.1.0").unwrap(), None);
    }

    #[test]
    fn a_cargo_toml_that_does_not_parse_is_an_error_naming_it() {
        let e = move_to("[dependencies\n", "0.1.0").unwrap_err().to_string();
        assert!(e.starts_with("Cargo.toml: not valid TOML: "), "{e}");
    }
}
