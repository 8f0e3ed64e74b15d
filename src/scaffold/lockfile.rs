//! The `Cargo.lock` of a generated project: `init` writes one, so that its first build uses
//! the crate versions rsbuilder's own tests built the runtime with (as `go.sum` pins a
//! Kubebuilder project's modules) instead of whatever crates.io published last night; `alpha
//! update` moves those pins with the runtime without undoing the user's own `cargo update`.
//!
//! The lock is this repository's own lock file, which cargo resolves for every feature of the
//! runtime (the API server, etcd, the test cluster) and for rsbuilder itself, without
//! rsbuilder's own entry. A project's first build keeps every version it pins that the project
//! uses, resolves what it does not pin, and drops the entries it does not need.
//!
//! The lock is the user's file (`cargo update` is theirs to run). What rsbuilder wrote is
//! recorded in [`PINNED`] under `.rsbuilder/`, kept in version control with the other records:
//! the base of a three-way choice per package at `alpha update` ([`update`]).

use std::collections::{BTreeMap, BTreeSet};

/// The repository's lock file, as rsbuilder was built with it.
const REPOSITORY_LOCK: &str = crate::model::versions::repository_lock();

/// The package of this repository that no project depends on: rsbuilder itself.
const OWN_PACKAGE: &str = "rsbuilder";

/// The project's lock file.
pub const FILE: &str = "Cargo.lock";

/// The record of the lock rsbuilder wrote last (`init`, `alpha update`): the base `alpha
/// update` compares the user's lock with, so it can tell a pin the user left alone from a
/// version the user chose.
pub const PINNED: &str = ".rsbuilder/Cargo.lock.pinned";

/// The text of a new project's `Cargo.lock`: the repository's lock without rsbuilder's own
/// `[[package]]` entry.
pub fn project_lock() -> String {
    without_package(REPOSITORY_LOCK, OWN_PACKAGE)
}

/// `lock` without the `[[package]]` entries named `name`. Each entry runs from its
/// `[[package]]` line to the line before the next one (or the end).
fn without_package(lock: &str, name: &str) -> String {
    let wanted = format!("name = \"{name}\"");
    let mut out = String::with_capacity(lock.len());
    let mut entries = lock.split("\n[[package]]\n");
    if let Some(head) = entries.next() {
        out.push_str(head);
    }
    for entry in entries {
        if entry.lines().next() == Some(wanted.as_str()) {
            continue;
        }
        out.push_str("\n[[package]]\n");
        out.push_str(entry);
    }
    out
}

/// What one lock cannot hold twice and a compatible version bump keeps: the name, the source
/// (`None` for a path package) and the semver-compatible range (`1`, `0.23`, `0.0.3`), as
/// cargo resolves one version of a package per compatible range and source.
type Key = (String, Option<String>, String);

/// One `[[package]]` entry, its text kept as cargo wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    name: String,
    version: semver::Version,
    /// `None` for a path package (the project itself, the runtime crate).
    source: Option<String>,
    /// The entry from its `[[package]]` line to its last line, with a final newline.
    text: String,
}

impl Package {
    fn key(&self) -> Key {
        let v = &self.version;
        let range = if v.major > 0 {
            v.major.to_string()
        } else if v.minor > 0 {
            format!("0.{}", v.minor)
        } else {
            format!("0.0.{}", v.patch)
        };
        (self.name.clone(), self.source.clone(), range)
    }
}

/// A parsed lock file: the lines before the first entry (the `@generated` comment and
/// `version = 4`), the entries, and what cargo writes after them (`[[patch.unused]]`, an old
/// format's `[metadata]`), kept as it is.
#[derive(Debug, Clone)]
struct Lock {
    header: String,
    packages: Vec<Package>,
    trailer: String,
}

/// The fields of an entry the choice needs; cargo's others (`checksum`, `dependencies`) stay
/// in [`Package::text`].
#[derive(serde::Deserialize)]
struct Fields {
    name: String,
    version: String,
    source: Option<String>,
}

impl Lock {
    /// Parses cargo's lock format (versions 3 and 4). Errors name the line (1-based): an
    /// entry that is not TOML, lacks a name or version, or whose version is not semver; a
    /// `[[package]]` after the tables cargo writes last.
    fn parse(text: &str) -> Result<Lock, String> {
        let mut header = String::new();
        let mut trailer = String::new();
        let mut blocks: Vec<(usize, String)> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if !trailer.is_empty() {
                if line == "[[package]]" {
                    return Err(format!(
                        "line {number}: a [[package]] entry after `{}`; cargo writes the entries first",
                        trailer.lines().next().unwrap_or_default()
                    ));
                }
                trailer.push_str(line);
                trailer.push('\n');
                continue;
            }
            if line == "[[package]]" {
                blocks.push((number, String::new()));
            } else if line.starts_with('[') {
                trailer.push_str(line);
                trailer.push('\n');
                continue;
            }
            match blocks.last_mut() {
                Some((_, block)) => {
                    block.push_str(line);
                    block.push('\n');
                }
                None => {
                    header.push_str(line);
                    header.push('\n');
                }
            }
        }
        let mut packages = Vec::with_capacity(blocks.len());
        for (number, block) in blocks {
            let body = block
                .strip_prefix("[[package]]\n")
                .unwrap_or(block.as_str());
            let fields: Fields = toml::from_str(body).map_err(|e| {
                // The span is in `body`, which starts on the line after `[[package]]`; a
                // field that is missing is the whole entry's, named by its first line.
                let at = match e.span() {
                    Some(s) if !e.message().starts_with("missing field") => {
                        body.get(..s.start).map_or(0, |b| b.matches('\n').count()) + 1
                    }
                    _ => 0,
                };
                format!(
                    "line {}: the [[package]] entry: {}",
                    number + at,
                    e.message().trim_end()
                )
            })?;
            let version = semver::Version::parse(&fields.version).map_err(|e| {
                format!(
                    "line {number}: the [[package]] entry of {}: version \"{}\": {e}",
                    fields.name, fields.version
                )
            })?;
            packages.push(Package {
                name: fields.name,
                version,
                source: fields.source,
                text: format!("{}\n", block.trim_end()),
            });
        }
        let trim = |s: &str| {
            if s.trim().is_empty() {
                String::new()
            } else {
                format!("{}\n", s.trim_end())
            }
        };
        Ok(Lock {
            header: trim(&header),
            packages,
            trailer: trim(&trailer),
        })
    }

    /// The text as cargo writes it: the header, then each entry after a blank line, in
    /// cargo's order (name, version, source), then the trailer after a blank line.
    fn render(mut self) -> String {
        self.packages.sort_by(|a, b| {
            (&a.name, &a.version, &a.source).cmp(&(&b.name, &b.version, &b.source))
        });
        let mut out = self.header;
        for p in &self.packages {
            out.push('\n');
            out.push_str(&p.text);
        }
        if !self.trailer.is_empty() {
            out.push('\n');
            out.push_str(&self.trailer);
        }
        out
    }

    fn by_key(&self) -> BTreeMap<Key, &Package> {
        self.packages.iter().map(|p| (p.key(), p)).collect()
    }
}

/// A package whose version in the user's lock differs from this version's pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The package name.
    pub name: String,
    /// The version in the user's lock.
    pub from: String,
    /// The version this rsbuilder pins.
    pub to: String,
}

/// What [`update`] does to a project's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The new text of the lock.
    pub text: String,
    /// Packages moved to this version's pin: the user's entry was still what rsbuilder
    /// wrote before.
    pub updated: Vec<Change>,
    /// Packages the user changed (a `cargo update`), or had before rsbuilder pinned them,
    /// where this version pins another version: left as the user has them.
    pub kept: Vec<Change>,
    /// Pinned packages the lock had no entry for, added (cargo drops those the project does
    /// not use at its next build).
    pub added: usize,
    /// Whether there was a record of what rsbuilder wrote before ([`PINNED`]); without one
    /// every entry of the user's counts as the user's.
    pub recorded: bool,
}

/// The three-way choice per package of `alpha update`, between `base` (the lock rsbuilder
/// wrote before, from [`PINNED`]; `None` when the project has no record, so that every entry
/// of the user's counts as the user's), `ours` (the project's lock) and `theirs` (this
/// version's, [`project_lock`]), as `git merge-file` chooses per line:
///
/// - a package whose entry in `ours` still has the version `base` has takes the entry of
///   `theirs` (moved);
/// - a package the user changed, or that rsbuilder did not pin before, keeps the user's entry
///   (kept, when `theirs` pins another version);
/// - a pinned package `ours` lacks is added (cargo drops it again if the project does not use
///   it);
/// - every entry `theirs` does not pin, and every path package (the project, the runtime
///   crate), stays as `ours` has it.
///
/// Packages are matched by name, source and semver-compatible range, so a new major version of
/// a pin is added beside the old one and cargo keeps the one the manifests ask for. Cargo
/// rewrites the dependency lists of the entries at the next build; the versions it keeps are
/// the ones chosen here.
///
/// Errors: a lock that does not parse, naming the file and the line.
pub fn update(base: Option<&str>, ours: &str, theirs: &str) -> Result<Update, String> {
    let recorded = base.is_some();
    let base = match base {
        Some(text) => Lock::parse(text).map_err(|e| format!("{PINNED}: {e}"))?,
        None => Lock {
            header: String::new(),
            packages: Vec::new(),
            trailer: String::new(),
        },
    };
    let ours = Lock::parse(ours).map_err(|e| format!("{FILE}: {e}"))?;
    let theirs = Lock::parse(theirs).map_err(|e| format!("the lock this rsbuilder pins: {e}"))?;
    let (base_keys, our_keys) = (base.by_key(), ours.by_key());
    let mut chosen = Vec::new();
    let (mut updated, mut kept, mut added) = (Vec::new(), Vec::new(), 0);
    for (key, pin) in theirs.by_key() {
        if pin.source.is_none() {
            continue;
        }
        let Some(mine) = our_keys.get(&key) else {
            chosen.push(pin.clone());
            added += 1;
            continue;
        };
        if mine.version == pin.version {
            continue;
        }
        let change = Change {
            name: pin.name.clone(),
            from: mine.version.to_string(),
            to: pin.version.to_string(),
        };
        if base_keys
            .get(&key)
            .is_some_and(|was| was.version == mine.version)
        {
            chosen.push(pin.clone());
            updated.push(change);
        } else {
            kept.push(change);
        }
    }
    let replaced: BTreeSet<Key> = chosen.iter().map(Package::key).collect();
    chosen.extend(
        ours.packages
            .iter()
            .filter(|p| !replaced.contains(&p.key()))
            .cloned(),
    );
    let text = Lock {
        header: ours.header,
        packages: chosen,
        trailer: ours.trailer,
    }
    .render();
    Ok(Update {
        text,
        updated,
        kept,
        added,
        recorded,
    })
}

/// `ours` with the registry and git entries of `theirs` it lacks added, every entry it has
/// kept: what a command that turns on a runtime feature (`create apiserver`) writes, so the
/// crates the feature brings in get the pinned versions even after cargo dropped them from
/// the lock as unused; `theirs_name` names `theirs` in errors. Errors: a lock that does not
/// parse, naming the file and the line.
pub fn add_missing(ours: &str, theirs: &str, theirs_name: &str) -> Result<String, String> {
    let mut ours = Lock::parse(ours).map_err(|e| format!("{FILE}: {e}"))?;
    let theirs = Lock::parse(theirs).map_err(|e| format!("{theirs_name}: {e}"))?;
    let have: BTreeSet<Key> = ours.packages.iter().map(Package::key).collect();
    ours.packages.extend(
        theirs
            .packages
            .into_iter()
            .filter(|p| p.source.is_some() && !have.contains(&p.key())),
    );
    Ok(ours.render())
}

/// The project's lock with the pinned entries it lacks added ([`add_missing`]), for a command
/// that turns on a runtime feature: the pins are those recorded in [`PINNED`] (the ones of the
/// runtime the project has), else this version's. `None` when the project has no lock (cargo
/// makes one) or lacks no pinned entry. Errors: an unreadable or unparsable lock or record,
/// naming it.
pub fn with_feature_pins(plan: &super::Plan) -> anyhow::Result<Option<String>> {
    let Some(ours) = plan.read(FILE)? else {
        return Ok(None);
    };
    let (pins, name) = match plan.read(PINNED)? {
        Some(pins) => (pins, PINNED),
        None => (project_lock(), "the lock this rsbuilder pins"),
    };
    let text = add_missing(&ours, &pins, name).map_err(anyhow::Error::msg)?;
    Ok((text != ours).then_some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the packages a lock file pins.
    fn packages(lock: &str) -> Vec<&str> {
        lock.split("\n[[package]]\n")
            .skip(1)
            .filter_map(|e| e.lines().next()?.strip_prefix("name = \""))
            .map(|n| n.trim_end_matches('"'))
            .collect()
    }

    /// The (name, version) of every entry of `lock`, in its order.
    fn versions(lock: &str) -> Vec<(String, String)> {
        Lock::parse(lock)
            .unwrap()
            .packages
            .into_iter()
            .map(|p| (p.name, p.version.to_string()))
            .collect()
    }

    /// The version of the first entry named `name`.
    fn version_of(lock: &str, name: &str) -> String {
        let (_, version) = versions(lock)
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not in the lock"));
        version
    }

    /// `lock` with the first entry named `name` at `version`, every other line as it is.
    fn with_version(lock: &str, name: &str, version: &str) -> String {
        let was = version_of(lock, name);
        let from = format!("\nname = \"{name}\"\nversion = \"{was}\"\n");
        assert!(lock.contains(&from), "{name} {was}");
        lock.replacen(
            &from,
            &format!("\nname = \"{name}\"\nversion = \"{version}\"\n"),
            1,
        )
    }

    /// Another version than `version` in its semver-compatible range, below it where there is
    /// one: what an older rsbuilder (or a user's `cargo update`) would have had.
    fn another(version: &str) -> String {
        let mut v = semver::Version::parse(version).unwrap();
        v.build = semver::BuildMetadata::EMPTY;
        if v.patch > 0 {
            v.patch -= 1;
        } else if v.major > 0 && v.minor > 0 {
            v.minor -= 1;
        } else {
            v.patch += 1;
        }
        v.to_string()
    }

    fn registry(name: &str, version: &str) -> String {
        format!(
            "[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"0000\"\n"
        )
    }

    fn path(name: &str) -> String {
        format!(
            "[[package]]\nname = \"{name}\"\nversion = \"0.1.0\"\ndependencies = [\n \"rustls\",\n]\n"
        )
    }

    fn lock(entries: &[String]) -> String {
        let mut out = String::from(
            "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n",
        );
        for e in entries {
            out.push('\n');
            out.push_str(e);
        }
        out
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_project_lock_pins_the_runtime_and_its_dependencies_but_not_rsbuilder() {
        let lock = project_lock();
        assert!(lock.starts_with("# This file is automatically @generated by Cargo."));
        assert!(lock.contains("\nversion = 4\n"), "{lock:.200}");
        let names = packages(&lock);
        assert!(
            !names.contains(&"rsbuilder"),
            "rsbuilder is no project's dependency"
        );
        for dependency in [
            "rsbuilder-runtime",
            "kube",
            "k8s-openapi",
            "rustls",
            "tokio",
            "redb",
            "etcd-client",
            "schemars",
        ] {
            assert!(names.contains(&dependency), "{dependency} is not pinned");
        }
        // Everything else of the repository's lock is kept byte for byte.
        assert_eq!(packages(REPOSITORY_LOCK).len(), names.len() + 1);
        assert_eq!(
            without_package(REPOSITORY_LOCK, "no-such-package"),
            REPOSITORY_LOCK
        );
    }

    #[test]
    fn only_the_named_entry_is_dropped() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"ab\"\nversion = \"2.0.0\"\n\n[[package]]\nname = \"b\"\nversion = \"3.0.0\"\n";
        assert_eq!(
            without_package(lock, "a"),
            "version = 4\n\n[[package]]\nname = \"ab\"\nversion = \"2.0.0\"\n\n[[package]]\nname = \"b\"\nversion = \"3.0.0\"\n"
        );
        assert_eq!(
            without_package(lock, "b"),
            "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"ab\"\nversion = \"2.0.0\"\n"
        );
    }

    #[test]
    fn the_repository_lock_parses_and_renders_as_cargo_writes_it() {
        for text in [REPOSITORY_LOCK.to_owned(), project_lock()] {
            let lock = Lock::parse(&text).unwrap();
            assert_eq!(lock.packages.len(), packages(&text).len());
            assert_eq!(lock.render(), text);
        }
        let runtime = Lock::parse(&project_lock())
            .unwrap()
            .packages
            .into_iter()
            .find(|p| p.name == "rsbuilder-runtime")
            .unwrap();
        assert_eq!(runtime.source, None);
    }

    /// An older rsbuilder pinned `rustls` and `tokio` at other versions; the user then ran
    /// `cargo update -p tokio` and added a crate of their own. This version's pins (the real
    /// lock) move rustls, and leave tokio and the user's crate as the user has them.
    #[test]
    fn a_pin_the_user_left_moves_and_a_version_the_user_chose_stays() {
        let theirs = project_lock();
        let (rustls, tokio) = (version_of(&theirs, "rustls"), version_of(&theirs, "tokio"));
        let (old_rustls, old_tokio) = (another(&rustls), another(&tokio));
        let base = with_version(
            &with_version(&theirs, "rustls", &old_rustls),
            "tokio",
            &old_tokio,
        );
        let users_tokio = format!("{old_tokio}-users");
        let mine = registry("my-own-crate", "2.0.0");
        let ours = format!("{}\n{mine}", with_version(&base, "tokio", &users_tokio));

        let up = update(Some(&base), &ours, &theirs).unwrap();
        let change = |name: &str, from: &str, to: &str| Change {
            name: name.into(),
            from: from.into(),
            to: to.into(),
        };
        assert_eq!(up.updated, [change("rustls", &old_rustls, &rustls)]);
        assert_eq!(up.kept, [change("tokio", &users_tokio, &tokio)]);
        assert_eq!(up.added, 0);
        assert!(up.recorded);
        // This version's lock, but for the user's tokio, and the user's crate in cargo's order.
        let mut expected = Lock::parse(&with_version(&theirs, "tokio", &users_tokio)).unwrap();
        expected
            .packages
            .push(Lock::parse(&lock(&[mine])).unwrap().packages.remove(0));
        assert_eq!(up.text, expected.render());
        assert_eq!(version_of(&up.text, "rustls"), rustls);
        // Once moved, the same update changes nothing more.
        let again = update(Some(&theirs), &up.text, &theirs).unwrap();
        assert_eq!(again.text, up.text);
        assert!(again.updated.is_empty());
        assert_eq!(again.kept, [change("tokio", &users_tokio, &tokio)]);
    }

    #[test]
    fn without_a_record_every_version_in_the_lock_is_the_users() {
        let theirs = project_lock();
        let rustls = version_of(&theirs, "rustls");
        let old = another(&rustls);
        let ours = with_version(&theirs, "rustls", &old);
        let up = update(None, &ours, &theirs).unwrap();
        assert!(!up.recorded);
        assert!(up.updated.is_empty());
        assert_eq!(
            up.kept,
            [Change {
                name: "rustls".into(),
                from: old,
                to: rustls
            }]
        );
        assert_eq!(up.text, ours);
    }

    #[test]
    fn pins_the_lock_lacks_are_added_and_path_packages_stay_the_users() {
        let base = lock(&[registry("rustls", "0.23.46"), registry("axum", "0.8.0")]);
        // The project's first build dropped axum (unused) and added the project's own entry;
        // its runtime entry lists the dependencies of the user's runtime.
        let ours = lock(&[
            path("ai-operator"),
            path("rsbuilder-runtime"),
            registry("rustls", "0.23.46"),
        ]);
        let theirs = lock(&[
            registry("axum", "0.8.1"),
            "[[package]]\nname = \"rsbuilder-runtime\"\nversion = \"0.1.0\"\ndependencies = [\n \"axum\",\n]\n".into(),
            registry("rustls", "0.23.48"),
        ]);
        let up = update(Some(&base), &ours, &theirs).unwrap();
        assert_eq!(
            versions(&up.text),
            pairs(&[
                ("ai-operator", "0.1.0"),
                ("axum", "0.8.1"),
                ("rsbuilder-runtime", "0.1.0"),
                ("rustls", "0.23.48"),
            ])
        );
        assert_eq!(up.added, 1);
        assert!(up.text.contains(&path("rsbuilder-runtime")), "{}", up.text);
    }

    #[test]
    fn a_new_major_version_is_added_beside_the_old_one() {
        let base = lock(&[registry("rustls", "0.23.46")]);
        let theirs = lock(&[registry("rustls", "0.24.0")]);
        let up = update(Some(&base), &base, &theirs).unwrap();
        assert_eq!(
            versions(&up.text),
            pairs(&[("rustls", "0.23.46"), ("rustls", "0.24.0")])
        );
        assert_eq!((up.updated.len(), up.kept.len(), up.added), (0, 0, 1));
    }

    #[test]
    fn what_cargo_writes_after_the_entries_is_kept() {
        let trailer = "[[patch.unused]]\nname = \"kube\"\nversion = \"5.0.0\"\n";
        let base = lock(&[registry("rustls", "0.23.46")]);
        let ours = format!("{base}\n{trailer}");
        let theirs = lock(&[registry("rustls", "0.23.48")]);
        let up = update(Some(&base), &ours, &theirs).unwrap();
        assert_eq!(up.text, format!("{theirs}\n{trailer}"));
        let misplaced = format!("{ours}\n{}", registry("tokio", "1.0.0"));
        assert_eq!(
            update(None, &misplaced, &theirs).unwrap_err(),
            "Cargo.lock: line 15: a [[package]] entry after `[[patch.unused]]`; cargo writes the entries first"
        );
    }

    #[test]
    fn a_broken_lock_is_refused_with_its_file_and_line() {
        let good = lock(&[registry("rustls", "0.23.46")]);
        // Line 11: a version that is not semver.
        let bad_version = format!("{good}\n{}", registry("tokio", "one"));
        let err = update(None, &bad_version, &good).unwrap_err();
        assert!(
            err.starts_with(
                "Cargo.lock: line 11: the [[package]] entry of tokio: version \"one\": "
            ),
            "{err}"
        );
        // Line 13: not TOML, inside the entry that starts at line 11.
        let not_toml = format!("{good}\n[[package]]\nname = \"tokio\"\nversion = 1.0.0\n");
        let err = update(Some(&not_toml), &good, &good).unwrap_err();
        assert!(
            err.starts_with(".rsbuilder/Cargo.lock.pinned: line 13: the [[package]] entry: "),
            "{err}"
        );
        // No version at all.
        let err = update(None, "version = 4\n\n[[package]]\nname = \"x\"\n", &good).unwrap_err();
        assert_eq!(
            err,
            "Cargo.lock: line 3: the [[package]] entry: missing field `version`"
        );
    }

    /// `create apiserver`: the feature's crates, which the project's first build dropped as
    /// unused, come back at the recorded pins; the user's versions stay.
    #[test]
    fn a_feature_gets_the_pins_the_lock_lacks() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = super::super::Plan::new(tmp.path(), false);
        assert_eq!(with_feature_pins(&plan).unwrap(), None);
        let ours = lock(&[path("op"), registry("rustls", "0.23.50")]);
        std::fs::write(tmp.path().join(FILE), &ours).unwrap();
        std::fs::create_dir(tmp.path().join(".rsbuilder")).unwrap();
        let pins = lock(&[registry("axum", "0.8.1"), registry("rustls", "0.23.48")]);
        std::fs::write(tmp.path().join(PINNED), &pins).unwrap();
        let text = with_feature_pins(&plan).unwrap().unwrap();
        assert_eq!(
            versions(&text),
            pairs(&[("axum", "0.8.1"), ("op", "0.1.0"), ("rustls", "0.23.50")])
        );
        std::fs::write(tmp.path().join(FILE), &text).unwrap();
        assert_eq!(with_feature_pins(&plan).unwrap(), None);
        // Without a record: this version's pins.
        std::fs::remove_file(tmp.path().join(PINNED)).unwrap();
        let text = with_feature_pins(&plan).unwrap().unwrap();
        assert_eq!(version_of(&text, "rustls"), "0.23.50");
        assert_eq!(
            version_of(&text, "tokio"),
            version_of(&project_lock(), "tokio")
        );
    }

    #[test]
    fn add_missing_keeps_every_entry_of_the_users() {
        let ours = lock(&[path("op"), registry("rustls", "0.23.46")]);
        let theirs = lock(&[
            path("rsbuilder-runtime"),
            registry("rustls", "0.23.48"),
            registry("axum", "0.8.1"),
        ]);
        assert_eq!(
            versions(&add_missing(&ours, &theirs, PINNED).unwrap()),
            pairs(&[("axum", "0.8.1"), ("op", "0.1.0"), ("rustls", "0.23.46")])
        );
        let sorted = Lock::parse(&theirs).unwrap().render();
        assert_eq!(add_missing(&theirs, &theirs, PINNED).unwrap(), sorted);
    }
}
