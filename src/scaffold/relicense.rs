//! `rsbuilder edit --license ... --owner ...`: changes the license of an existing project as
//! `init --license ... --owner ...` would have written it: the comment header of every Rust
//! source under `src/` and `tests/`, `LICENSE`, and Cargo.toml's `license`.
//!
//! The current header is the leading `//` block of `src/lib.rs` (what `create` copies into new
//! files). A source that does not start with it (a header the user changed) is left alone and
//! named; so is a LICENSE that differs from what `init` wrote for the current license.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::init::{self, License};
use super::{File, Plan};
use crate::model::Project;
use crate::model::layout;

/// A planned license change and what it leaves alone.
#[derive(Debug)]
pub struct Relicense {
    /// The writes (nothing is written until it is applied).
    pub plan: Plan,
    /// Files left alone, with the reason.
    pub notes: Vec<String>,
}

/// The year and owner of a header whose first line is `// Copyright <year>[ <owner>].`.
fn copyright_of(header: &str) -> Option<(i32, String)> {
    let rest = header.lines().next()?.strip_prefix("// Copyright ")?;
    let rest = rest.trim_end().strip_suffix('.')?;
    let (year, owner) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((year.parse().ok()?, owner.trim_end_matches('.').to_owned()))
}

/// Which of the licenses `init` writes produced `header` (the leading comment block of
/// `src/lib.rs`, [`super::api::rust_header`]), with its year and owner: a known license when
/// `init` would write exactly that header for the year and owner its first line names, else
/// the header itself. No header: [`License::None`] and the current year.
pub fn recognize(header: &str) -> (License, i32, String) {
    if header.is_empty() {
        return (License::None, init::current_year(), String::new());
    }
    if let Some((year, owner)) = copyright_of(header) {
        for known in [License::Apache2, License::Mit] {
            if known.rust_header(year, &owner) == header {
                return (known, year, owner);
            }
        }
        return (License::Header(header.to_owned()), year, owner);
    }
    (
        License::Header(header.to_owned()),
        init::current_year(),
        String::new(),
    )
}

/// Plans the change of the project in `dir` to `license` (kept when `None`) and `owner`
/// (kept when `None`). The year stays the one the current header names.
///
/// Errors: no or bad PROJECT; `--owner` alone on a header of the user's own (rsbuilder cannot
/// tell where its owner is); an owner that is not one line; unreadable files.
pub fn plan(dir: &Path, license: Option<License>, owner: Option<String>) -> Result<Relicense> {
    let mut plan = Plan::new(dir, false);
    Project::load_in(&plan)?;
    let old_header = super::api::rust_header(&plan)?;
    let (old_license, year, old_owner) = recognize(&old_header);
    if let Some(o) = &owner {
        crate::model::validate::single_line(o)
            .map_err(|r| anyhow::anyhow!("invalid value {o:?} for --owner: the owner {r}"))?;
    }
    if license.is_none() && matches!(old_license, License::Header(_)) {
        bail!(
            "the Rust sources start with a header of your own (src/lib.rs), so rsbuilder cannot \
             put an owner into it; pass --license with apache2, mit or a new header file too"
        );
    }
    let new_license = license.unwrap_or_else(|| old_license.clone());
    let new_owner = owner.unwrap_or_else(|| old_owner.clone());
    let new_header = new_license.rust_header(year, &new_owner);

    let mut notes = Vec::new();
    for (rel, text) in rust_sources(&plan)? {
        let Some(body) = text.strip_prefix(old_header.as_str()) else {
            notes.push(format!(
                "{} does not start with the project's license header; left alone",
                rel.display()
            ));
            continue;
        };
        let new = format!("{new_header}{body}");
        if new != text {
            plan.add(File::at(layout::owned(rel), new));
        }
    }

    let old_file = old_license.license_file(year, &old_owner);
    let new_file = new_license.license_file(year, &new_owner);
    match (plan.read(layout::LICENSE)?, new_file) {
        (None, Some(text)) => plan.add(File::at(layout::owned(layout::LICENSE), text)),
        (Some(current), new) if Some(&current) == old_file.as_ref() => match new {
            Some(text) => plan.add(File::at(layout::owned(layout::LICENSE), text)),
            None => notes.push(
                "LICENSE holds the previous license, which the new one does not replace; delete \
                 it or put your own text there"
                    .into(),
            ),
        },
        (Some(current), new) if Some(&current) != new.as_ref() => notes.push(
            "LICENSE differs from what `init` wrote for the previous license; left alone".into(),
        ),
        _ => {}
    }

    let Some(cargo) = plan.read(layout::CARGO_TOML)? else {
        bail!(
            "{} does not exist; restore the project's Cargo.toml, then re-run",
            dir.join(layout::CARGO_TOML).display()
        );
    };
    let relicensed = set_package_license(&cargo, new_license.spdx());
    if relicensed != cargo {
        plan.add(File::at(layout::owned(layout::CARGO_TOML), relicensed));
    }
    if plan
        .read(layout::README)?
        .is_some_and(|r| r.contains("## License"))
    {
        notes.push("README.md has a License section of its own; update it by hand".into());
    }
    Ok(Relicense { plan, notes })
}

/// The `.rs` files under `src/` and `tests/` with their text, paths relative to the project
/// root, sorted, read through `plan` ([`Plan::read_tree`]; hidden entries and `target/` are
/// left out).
fn rust_sources(plan: &Plan) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for top in [layout::SRC_DIR, layout::TESTS_DIR] {
        for (path, text) in plan.read_tree(top, "rs")? {
            let rel = path
                .strip_prefix(plan.root())
                .unwrap_or(&path)
                .to_path_buf();
            out.push((rel, text));
        }
    }
    out.sort();
    Ok(out)
}

/// `cargo` (a Cargo.toml) with `license = "<spdx>"` set in `[package]`, or removed there for
/// `None`; added after `edition` (or the `[package]` line) when missing.
fn set_package_license(cargo: &str, spdx: Option<&str>) -> String {
    let mut out = Vec::new();
    let mut in_package = false;
    let mut done = false;
    let mut anchor = None;
    for line in cargo.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
            if in_package {
                anchor = Some(out.len());
            }
        } else if in_package && t.starts_with("license") && t[7..].trim_start().starts_with('=') {
            done = true;
            if let Some(id) = spdx {
                out.push(format!("license = \"{id}\"\n"));
            }
            continue;
        } else if in_package && t.starts_with("edition") {
            anchor = Some(out.len());
        }
        out.push(line.to_owned());
    }
    if !done && let (Some(id), Some(at)) = (spdx, anchor) {
        out.insert(at + 1, format!("license = \"{id}\"\n"));
    }
    out.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_init_writes_are_recognized() {
        let apache = License::Apache2.rust_header(2024, "Jane Doe");
        assert_eq!(
            recognize(&apache),
            (License::Apache2, 2024, "Jane Doe".into())
        );
        let mit = License::Mit.rust_header(2025, "");
        assert_eq!(recognize(&mit), (License::Mit, 2025, String::new()));
        let own = "// Copyright 2020 X.\n// All rights reserved.\n\n";
        assert_eq!(recognize(own).0, License::Header(own.into()));
    }

    #[test]
    fn the_package_license_is_set_replaced_or_removed() {
        let with = "[package]\nname = \"a\"\nedition = \"2024\"\nlicense = \"Apache-2.0\"\n\n[dependencies]\nlicense = \"x\"\n";
        assert_eq!(
            set_package_license(with, Some("MIT")),
            with.replace("license = \"Apache-2.0\"", "license = \"MIT\"")
        );
        assert_eq!(
            set_package_license(with, None),
            with.replace("license = \"Apache-2.0\"\n", "")
        );
        let without = "[package]\nname = \"a\"\nedition = \"2024\"\npublish = false\n";
        assert_eq!(
            set_package_license(without, Some("MIT")),
            "[package]\nname = \"a\"\nedition = \"2024\"\nlicense = \"MIT\"\npublish = false\n"
        );
    }
}
