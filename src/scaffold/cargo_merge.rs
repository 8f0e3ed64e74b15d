//! The three-way merge of a project's `Cargo.toml` for `alpha generate` in place, key by key
//! with `toml_edit` rather than line by line, so the user's formatting, comments, extra
//! dependencies, features and sections stay where they are.
//!
//! The rule (the one `git merge` applies to lines, applied here to TOML keys): for every key
//! of the base (what rsbuilder wrote before) or of theirs (what this version writes), compared
//! as TOML values (formatting and comments aside):
//! - the user left it as the base had it: it becomes theirs (changed, added or removed);
//! - this version left it as the base had it: the user's stays;
//! - both agree: kept;
//! - otherwise it is a conflict, named by its dotted path (`dependencies.kube.version`).
//!
//! Tables (`[dependencies]`, an inline `{ version = .., features = [..] }`) are merged key by
//! key; every other value (a string, an array such as a `features` list, an array of tables
//! such as `[[bin]]`) is one value. Keys only the user has are never touched. A new table of
//! theirs goes at the end of the file. Without a base every key both sides have with
//! different values is a conflict.

use toml_edit::{DocumentMut, Item, TableLike};

/// The merge of the Cargo.toml texts `ours` (the project's) and `theirs` (this version's
/// scaffold) against `base` (what rsbuilder wrote before; `None` when there is no record).
///
/// Returns `Ok(text)` when every key merges (the text is `ours` edited in place, byte for byte
/// where nothing changed), or `Err(keys)`: the dotted paths of the keys that both sides changed
/// differently, or, when `ours` or `theirs` is not valid TOML, one line saying so. A `base`
/// that does not parse counts as no base.
pub fn merge(base: Option<&str>, ours: &str, theirs: &str) -> Result<String, Vec<String>> {
    let parse = |text: &str, whose: &str| {
        text.parse::<DocumentMut>().map_err(|e| {
            vec![format!(
                "{whose} Cargo.toml is not valid TOML: {}",
                e.message()
            )]
        })
    };
    let mut doc = parse(ours, "your")?;
    let theirs = parse(theirs, "this version's")?;
    let base = base.and_then(|b| b.parse::<DocumentMut>().ok());
    let mut next_position = max_position(doc.as_table()) + 1;
    let mut conflicts = Vec::new();
    merge_table(
        base.as_ref().map(|b| b.as_table() as &dyn TableLike),
        doc.as_table_mut(),
        theirs.as_table(),
        "",
        &mut next_position,
        &mut conflicts,
    );
    if conflicts.is_empty() {
        Ok(doc.to_string())
    } else {
        Err(conflicts)
    }
}

/// Merges the keys of `base` and `theirs` into `ours` (see the module documentation),
/// pushing the dotted path of each conflicting key onto `conflicts`.
fn merge_table(
    base: Option<&dyn TableLike>,
    ours: &mut dyn TableLike,
    theirs: &dyn TableLike,
    prefix: &str,
    next_position: &mut isize,
    conflicts: &mut Vec<String>,
) {
    let mut keys: Vec<String> = theirs.iter().map(|(k, _)| k.to_owned()).collect();
    if let Some(base) = base {
        for (k, _) in base.iter() {
            if theirs.get(k).is_none() {
                keys.push(k.to_owned());
            }
        }
    }
    for key in keys {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let b = base.and_then(|t| t.get(&key));
        let t = theirs.get(&key);
        let both_tables = t.and_then(Item::as_table_like).is_some()
            && ours.get(&key).and_then(Item::as_table_like).is_some()
            && b.is_none_or(|b| b.as_table_like().is_some());
        if both_tables {
            let o = ours
                .get_mut(&key)
                .and_then(Item::as_table_like_mut)
                .expect("checked above");
            merge_table(
                b.and_then(Item::as_table_like),
                o,
                t.and_then(Item::as_table_like).expect("checked above"),
                &path,
                next_position,
                conflicts,
            );
            continue;
        }
        let (cb, co, ct) = (
            b.and_then(canonical),
            ours.get(&key).and_then(canonical),
            t.and_then(canonical),
        );
        if co == ct || ct == cb {
            continue;
        }
        if co != cb {
            conflicts.push(path);
            continue;
        }
        // The user left the key as rsbuilder wrote it: it becomes this version's.
        match (ours.get_mut(&key), t) {
            (_, None) => {
                ours.remove(&key);
            }
            (Some(Item::Value(o)), Some(Item::Value(t))) => {
                let decor = o.decor().clone();
                *o = t.clone();
                *o.decor_mut() = decor;
            }
            (_, Some(t)) => {
                let mut item = t.clone();
                renumber(&mut item, next_position);
                ours.insert(&key, item);
            }
        }
    }
}

/// The value of `item` without its formatting or comments, for comparison; `None` for an
/// empty item.
fn canonical(item: &Item) -> Option<toml::Value> {
    if item.is_none() {
        return None;
    }
    let mut doc = DocumentMut::new();
    doc.insert("k", item.clone());
    let table: toml::Table = toml::from_str(&doc.to_string()).ok()?;
    table.get("k").cloned()
}

/// The highest document position of the tables under `table` (0 when none has one).
fn max_position(table: &dyn TableLike) -> isize {
    table
        .iter()
        .map(|(_, item)| match item {
            Item::Table(t) => t.position().unwrap_or(0).max(max_position(t)),
            Item::ArrayOfTables(a) => a
                .iter()
                .map(|t| t.position().unwrap_or(0).max(max_position(t)))
                .max()
                .unwrap_or(0),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Gives the tables of `item` (taken from another document) positions after every table of
/// the document it goes into, in their own order, so they are written at its end, each after
/// a blank line and without the scaffold markers that stood above it.
fn renumber(item: &mut Item, next_position: &mut isize) {
    let mut pending: Vec<&mut toml_edit::Table> = match item {
        Item::Table(t) => vec![t],
        Item::ArrayOfTables(a) => a.iter_mut().collect(),
        _ => Vec::new(),
    };
    pending.reverse();
    while let Some(t) = pending.pop() {
        if t.position().is_some() {
            t.set_position(Some(*next_position));
            *next_position += 1;
        }
        // The comments above the table's header are its own, but for scaffold markers, which
        // belong to the table above it in the other document.
        let prefix = t
            .decor()
            .prefix()
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_owned();
        let kept: String = prefix
            .split_inclusive('\n')
            .filter(|l| !l.contains("+kubebuilder:scaffold:"))
            .collect();
        let kept = if kept.starts_with('\n') {
            kept
        } else {
            format!("\n{}", kept.trim_start_matches('\n'))
        };
        t.decor_mut().set_prefix(kept);
        let mut children: Vec<&mut toml_edit::Table> = Vec::new();
        for (_, child) in t.iter_mut() {
            match child {
                Item::Table(c) => children.push(c),
                Item::ArrayOfTables(a) => children.extend(a.iter_mut()),
                _ => {}
            }
        }
        children.reverse();
        pending.extend(children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[package]\nname = \"x\"\n\n[dependencies]\nkube = { version = \"4\", features = [\"client\"] }\nserde = \"1\"\n# +kubebuilder:scaffold:dependencies\n\n[dev-dependencies]\ntokio = \"1\"\n# +kubebuilder:scaffold:dev-dependencies\n";

    #[test]
    fn the_users_entries_stay_and_this_versions_changes_come_in() {
        let ours = BASE
            .replace("serde = \"1\"\n", "serde = \"1\"  # mine\nrand = \"0.9\"\n")
            .replace(
                "tokio = \"1\"\n",
                "tokio = \"1\"\nproptest = \"1\"\n\n[features]\nextra = []\n",
            );
        let theirs = BASE
            .replace("version = \"4\"", "version = \"5\"")
            .replace("serde = \"1\"\n", "serde = \"1\"\nanyhow = \"1\"\n");
        let merged = merge(Some(BASE), &ours, &theirs).unwrap();
        assert_eq!(
            merged,
            "[package]\nname = \"x\"\n\n[dependencies]\nkube = { version = \"5\", features = [\"client\"] }\nserde = \"1\"  # mine\nrand = \"0.9\"\nanyhow = \"1\"\n# +kubebuilder:scaffold:dependencies\n\n[dev-dependencies]\ntokio = \"1\"\nproptest = \"1\"\n\n[features]\nextra = []\n# +kubebuilder:scaffold:dev-dependencies\n"
        );
    }

    #[test]
    fn a_key_both_sides_changed_differently_is_a_conflict() {
        let ours = BASE.replace("version = \"4\"", "version = \"4.1\"");
        let theirs = BASE.replace("version = \"4\"", "version = \"5\"");
        assert_eq!(
            merge(Some(BASE), &ours, &theirs).unwrap_err(),
            ["dependencies.kube.version"]
        );
        // The same change on both sides is no conflict; without a base, a difference is one.
        assert_eq!(merge(Some(BASE), &theirs, &theirs).unwrap(), theirs);
        assert_eq!(
            merge(None, &ours, &theirs).unwrap_err(),
            ["dependencies.kube.version"]
        );
    }

    #[test]
    fn a_new_table_of_this_version_goes_at_the_end_and_a_dropped_one_goes() {
        let ours = format!("{BASE}\n[lints.rust]\nunsafe_code = \"forbid\"\n");
        let theirs = BASE.replace(
            "[dev-dependencies]\ntokio = \"1\"\n",
            "[dev-dependencies]\n",
        ) + "\n[profile.dev]\ndebug = false\n";
        let merged = merge(Some(BASE), &ours, &theirs).unwrap();
        assert!(!merged.contains("tokio"), "{merged}");
        assert!(
            merged.ends_with(
                "[lints.rust]\nunsafe_code = \"forbid\"\n\n[profile.dev]\ndebug = false\n"
            ),
            "{merged}"
        );
    }

    #[test]
    fn text_that_is_not_toml_cannot_merge() {
        let err = merge(Some(BASE), "[dependencies\n", BASE).unwrap_err();
        assert_eq!(err.len(), 1);
        assert!(
            err[0].starts_with("your Cargo.toml is not valid TOML"),
            "{err:?}"
        );
    }
}
