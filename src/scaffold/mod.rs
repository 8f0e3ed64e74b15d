//! Scaffolding: the engine that plans and applies file changes ([`engine`]), and the commands
//! that fill a plan from templates (`init`, `create api`, `create apiserver`, `create webhook`)
//! or bring a project to this version (`alpha update`, `alpha generate`).

pub mod alpha;
pub mod api;
pub mod apiserver;
pub mod cargo_merge;
pub mod edit;
pub mod engine;
pub mod grafana;
pub mod init;
pub mod lockfile;
pub mod marker;
pub mod multigroup;
pub mod relicense;
pub mod runtime;
pub mod rustfmt;
pub mod webhook;

pub use engine::{Action, FileOp, IfExists, Plan, Resolved, ScaffoldError};

/// What `create webhook` and `create apiserver` insert at config/default's `default-sections`
/// marker to add replacements, given the file's `text`: `block` (a `replacements:` key with its
/// items) when the file has no `replacements:` key yet, or `items` alone when its last
/// top-level key before the marker is `replacements:` (the other command's list), since
/// kustomize refuses a second `replacements:` key. Errors: a `replacements:` list that is not
/// the last section before the marker (the message says to add the items by hand).
pub(crate) fn default_replacements_fragment(
    text: &str,
    block: &str,
    items: &str,
) -> anyhow::Result<String> {
    let marker = "+kubebuilder:scaffold:default-sections";
    let top_keys: Vec<&str> = text
        .lines()
        .take_while(|l| !l.contains(marker))
        .filter(|l| !l.is_empty() && !l.starts_with([' ', '-', '#', '\t']))
        .collect();
    if !top_keys.iter().any(|l| l.starts_with("replacements:")) {
        return Ok(block.to_owned());
    }
    if top_keys
        .last()
        .is_some_and(|l| l.trim_end() == "replacements:")
    {
        return Ok(items.to_owned());
    }
    anyhow::bail!(
        "{} has a `replacements:` list that is not the last section before its `# {marker}` marker, so rsbuilder cannot add to it; add these entries to that list by hand, then re-run:\n{items}",
        crate::model::layout::DEFAULT_KUSTOMIZATION
    )
}

/// PROJECT of the project at `dir`, read through `plan`, for a command that adds to an
/// existing project (`create api`, `create apiserver`, `create webhook`).
///
/// Errors: no PROJECT file (run `rsbuilder init` first); a PROJECT that does not parse (the
/// model's message, with file and line); a PROJECT of another layout, such as a Go
/// Kubebuilder project, which rsbuilder does not scaffold into.
pub(crate) fn load_project_or_explain(
    plan: &Plan,
    dir: &std::path::Path,
) -> anyhow::Result<crate::model::Project> {
    use crate::model::project;
    let project = project::Project::load_in(plan).map_err(|e| {
        if !plan.exists(project::FILE_NAME).unwrap_or(false) {
            anyhow::anyhow!(
                "no PROJECT file here ({}); run `rsbuilder init` first",
                dir.display()
            )
        } else {
            e
        }
    })?;
    if !project.layout.iter().any(|l| l == project::LAYOUT) {
        anyhow::bail!(
            "PROJECT in {} has layout {:?}; rsbuilder scaffolds into {} projects only",
            dir.display(),
            project.layout,
            project::LAYOUT
        );
    }
    Ok(project)
}

/// Prints what a plan did, one line per file, in Kubebuilder's style (`create  config/...`).
/// Unchanged files are not listed, nor rsbuilder's own records under `.rsbuilder/`.
pub fn report(resolved: &[Resolved]) -> String {
    let mut out = String::new();
    for r in resolved
        .iter()
        .filter(|r| r.action != Action::Unchanged && !r.path.starts_with(engine::STATE_DIR))
    {
        out.push_str(&format!(
            "{:<7} {}\n",
            r.action.to_string(),
            r.path.display()
        ));
    }
    out
}

/// `n` and `noun` for a message, the noun in the singular for one: `1 file`, `3 files`
/// (nouns whose plural is `+s`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_name_one_in_the_singular() {
        assert_eq!(super::count(0, "file"), "0 files");
        assert_eq!(super::count(1, "file"), "1 file");
        assert_eq!(super::count(3, "tool-owned file"), "3 tool-owned files");
    }

    /// The command modules and the PROJECT model, with their paths for messages. They read
    /// the project through [`Plan`] (or [`engine::read`]) and write it only by applying a plan.
    const COMMANDS: &[(&str, &str)] = &[
        ("src/scaffold/alpha.rs", include_str!("alpha.rs")),
        ("src/scaffold/api.rs", include_str!("api.rs")),
        ("src/scaffold/apiserver.rs", include_str!("apiserver.rs")),
        ("src/scaffold/edit.rs", include_str!("edit.rs")),
        ("src/scaffold/init.rs", include_str!("init.rs")),
        ("src/scaffold/relicense.rs", include_str!("relicense.rs")),
        ("src/scaffold/webhook.rs", include_str!("webhook.rs")),
        (
            "src/scaffold/webhook/spec_sample.rs",
            include_str!("webhook/spec_sample.rs"),
        ),
        ("src/model/project.rs", include_str!("../model/project.rs")),
        ("src/model/layout.rs", include_str!("../model/layout.rs")),
        ("src/model/root.rs", include_str!("../model/root.rs")),
        ("src/cli/manifests.rs", include_str!("../cli/manifests.rs")),
        ("src/manifests/run.rs", include_str!("../manifests/run.rs")),
    ];

    /// Direct file-system uses that stay, each with the reason: `(file, text of the line,
    /// why)`. Finding the project root happens before there is a root to hold a handle on
    /// (as cargo walks up to `Cargo.toml`); the sources `manifests` reads may lie outside the
    /// project (`--paths`) and are read as cargo reads them, following links; none of these
    /// writes. Anything else in [`COMMANDS`] goes through the engine.
    const ALLOWED: &[(&str, &str, &str)] = &[
        (
            "src/model/root.rs",
            ".find(|dir| markers.iter().any(|m| dir.join(m).is_file()))",
            "finding the root, before there is a handle",
        ),
        (
            "src/manifests/run.rs",
            "if args.dir.is_some() && !dir.is_dir() {",
            "--dir names the root itself",
        ),
        (
            "src/manifests/run.rs",
            ".find(|a| a.is_dir())",
            "where to lock an absolute --output-dir that does not exist yet",
        ),
        (
            "src/manifests/run.rs",
            "let project = if dir.join(PROJECT_FILE).is_file() {",
            "whether the root is an rsbuilder project (PROJECT is then read by Project::load, for namespaced and the kinds the API server serves)",
        ),
        (
            "src/manifests/run.rs",
            "paths.iter().filter(|p| !p.exists()).collect()",
            "--paths may name sources outside the project",
        ),
        (
            "src/manifests/run.rs",
            "if args.paths.is_empty() && !paths[0].is_dir() {",
            "the sources are read as cargo reads them",
        ),
        (
            "src/manifests/run.rs",
            "let cfg = match super::cfg::Cfg::for_dir(&dir, &args.features) {",
            "cargo's view of the crate's features, as cargo reads Cargo.toml",
        ),
        (
            "src/manifests/run.rs",
            "let crate_dir = dir.join(\"Cargo.toml\").is_file().then(|| dir.clone());",
            "whether the --verify probe has a crate to build against",
        ),
    ];

    /// What touches the file system without the engine's rooted handle.
    const DIRECT_FS: &[&str] = &[
        "std::fs",
        "fs::",
        "walkdir",
        "File::open",
        "OpenOptions",
        ".exists()",
        ".is_file()",
        ".is_dir()",
        "read_dir",
        "symlink_metadata",
        "canonicalize",
        "SourceSet::read",
        "SourceSet::load",
        "Cfg::for_dir",
    ];

    /// `file:line: token` for every use of [`DIRECT_FS`] in the product code of `text` (before
    /// its `#[cfg(test)] mod tests`, whose fixtures write files), comment lines left out.
    fn direct_fs(file: &str, text: &str) -> Vec<String> {
        let product = text
            .split("\n#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or(text);
        let mut out = Vec::new();
        for (i, line) in product.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let allowed = ALLOWED
                .iter()
                .any(|(f, l, _)| *f == file && line.trim() == *l);
            if allowed {
                continue;
            }
            for token in DIRECT_FS.iter().filter(|t| line.contains(*t)) {
                out.push(format!("{file}:{}: {token}", i + 1));
            }
        }
        out
    }

    #[test]
    fn commands_touch_the_file_system_only_through_the_engine() {
        let found: Vec<String> = COMMANDS
            .iter()
            .flat_map(|(file, text)| direct_fs(file, text))
            .collect();
        assert!(
            found.is_empty(),
            "read and write project files through Plan (plan.read, plan.exists, plan.read_tree, plan.apply):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_scan_sees_direct_reads_but_not_comments_or_tests() {
        let text = "fn a() {\n    // std::fs is named here only\n    let t = std::fs::read_to_string(p);\n    if p.exists() {}\n}\n#[cfg(test)]\nmod tests {\n    std::fs::write(p, t);\n}\n";
        assert_eq!(
            direct_fs("x.rs", text),
            ["x.rs:3: std::fs", "x.rs:3: fs::", "x.rs:4: .exists()"]
        );
    }
}
