//! Scaffolding: the commands that fill a plan for the write engine ([`crate::engine`]) from
//! templates (`init`, `create api`, `create apiserver`, `create webhook`)
//! or bring a project to this version (`alpha update`, `alpha generate`).

pub mod alpha;
pub mod api;
pub mod apiserver;
pub mod cargo_merge;
pub mod create;
pub mod edit;
pub mod grafana;
pub mod init;
pub mod lockfile;
pub mod multigroup;
pub mod relicense;
pub mod runtime;
pub mod textmerge;
pub mod webhook;

pub use crate::engine::{self, marker, rustfmt};
pub use crate::engine::{
    Action, File, FileOp, Format, IfExists, Owner, Plan, Resolved, ScaffoldError, count,
};

/// What a command wrote, one line per file (`create  src/main.rs`), the files of the vendored
/// runtime crate summed up in one line per action ([`engine::report_grouped`]).
pub fn report(resolved: &[Resolved]) -> String {
    engine::report_grouped(resolved, &[runtime::DIR])
}

/// A template that did not render (a filter or a value's `Display` failed).
#[derive(Debug, thiserror::Error)]
#[error("rendering the template {template} failed")]
pub struct RenderError {
    /// The Rust type of the template (its askama struct).
    pub template: &'static str,
    /// askama's error.
    #[source]
    pub source: askama::Error,
}

/// The text of the askama template `t`, ending in a newline (askama drops the template
/// file's final newline; this puts it back). Every command renders its files through here.
///
/// Errors: [`RenderError`] when askama's rendering fails, naming the template's type.
pub fn render<T: askama::Template>(t: &T) -> Result<String, RenderError> {
    let mut text = t.render().map_err(|source| RenderError {
        template: std::any::type_name::<T>(),
        source,
    })?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

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

#[cfg(test)]
mod tests {
    /// A template whose rendering fails is an error naming the template, never text in the
    /// generated file; a rendered template ends with a newline.
    #[test]
    fn a_template_that_fails_to_render_is_an_error_not_text() {
        struct Failing;
        impl std::fmt::Display for Failing {
            fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                Err(std::fmt::Error)
            }
        }
        #[derive(askama::Template)]
        #[template(source = "kind: {{ v }}", ext = "txt")]
        struct Probe<V: std::fmt::Display> {
            v: V,
        }
        let err = super::render(&Probe { v: Failing }).unwrap_err();
        assert!(err.template.contains("Probe"), "{}", err.template);
        assert!(
            err.to_string().starts_with("rendering the template "),
            "{err}"
        );
        assert_eq!(super::render(&Probe { v: "Job" }).unwrap(), "kind: Job\n");
    }

    #[test]
    fn counts_name_one_in_the_singular() {
        assert_eq!(crate::engine::count(0, "file"), "0 files");
        assert_eq!(crate::engine::count(1, "file"), "1 file");
        assert_eq!(
            crate::engine::count(3, "tool-owned file"),
            "3 tool-owned files"
        );
    }

    /// The directories whose product code reads and writes project files only through the
    /// engine ([`crate::engine`], which lives outside them): every command, the command line
    /// and the model. `manifests`' entry point is held to the same rule.
    const SCANNED_DIRS: &[&str] = &["src/scaffold", "src/cli", "src/model"];
    const SCANNED_FILES: &[&str] = &["src/manifests/run.rs"];

    /// `(path relative to the package, text)` of every `.rs` file below [`SCANNED_DIRS`] and
    /// of [`SCANNED_FILES`], sorted; test files (`tests.rs`, `*_tests.rs`) left out.
    fn scanned() -> Vec<(String, String)> {
        let package = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        let mut pending: Vec<std::path::PathBuf> =
            SCANNED_DIRS.iter().map(|d| package.join(d)).collect();
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    pending.push(path);
                } else if name.ends_with(".rs")
                    && name != "tests.rs"
                    && !name.ends_with("_tests.rs")
                {
                    let rel = path.strip_prefix(package).unwrap();
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        for file in SCANNED_FILES {
            let text = std::fs::read_to_string(package.join(file)).unwrap();
            out.push((file.to_string(), text));
        }
        out.sort();
        out
    }

    /// Direct file-system uses that stay, each with the reason: `(file, text of the line,
    /// why)`. Finding the project root happens before there is a root to hold a handle on
    /// (as cargo walks up to `Cargo.toml`); the sources `manifests` reads may lie outside the
    /// project (`--paths`) and are read as cargo reads them, following links; none of these
    /// writes. Anything else in the scanned files goes through the engine.
    const ALLOWED: &[(&str, &str, &str)] = &[
        (
            "src/scaffold/runtime.rs",
            "if !entry.header().entry_type().is_file() {",
            "the type of an entry of an embedded tar archive, not a file on disk",
        ),
        (
            "src/manifests/run.rs",
            "let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {",
            "whether an outside --output-dir is the project itself, before either is locked",
        ),
        (
            "src/manifests/run.rs",
            "if dir.is_dir() && !lock_root.as_deref().is_some_and(|l| same(l, &dir)) {",
            "whether there is a project to lock read-only, before it is locked",
        ),
        (
            "src/manifests/run.rs",
            "let existing = output_dir.ancestors().find(|a| a.exists());",
            "the real path of an absolute --output-dir, refused inside .git before anything is locked or written",
        ),
        (
            "src/manifests/run.rs",
            "Some(e.canonicalize().ok()?.join(rest))",
            "the real path of an absolute --output-dir, refused inside .git before anything is locked or written",
        ),
        (
            "src/cli/alpha.rs",
            "let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {",
            "whether --output-dir names the input project, before either is locked",
        ),
        (
            "src/cli/alpha.rs",
            "&& out.exists()",
            "checking the --output-dir flag, before there is a root",
        ),
        (
            "src/cli/alpha.rs",
            "&& !out.is_dir()",
            "checking the --output-dir flag, before there is a root",
        ),
        (
            "src/cli/alpha.rs",
            "Some(out) if out.is_dir() => Some(crate::engine::lock_project(out)?),",
            "whether there is an output project to lock",
        ),
        (
            "src/scaffold/api/external.rs",
            "if !file.is_file() {",
            "the old project's CRD file, named by PROJECT, checked for a clear message",
        ),
        (
            "src/scaffold/api/external.rs",
            "&& let (Ok(real), Ok(real_root)) = (file.canonicalize(), root.canonicalize())",
            "whether the old project's CRD file, named by PROJECT, lies inside it through links, before it is read",
        ),
        (
            "src/scaffold/api/external.rs",
            "dirs.into_iter().map(|d| d.join(&exe)).find(|p| p.is_file())",
            "finding kopium on PATH, outside the project",
        ),
        (
            "src/scaffold/api/external.rs",
            "let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());",
            "whether --external-api-crd lies inside the project, to record it relative",
        ),
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
        let files = scanned();
        assert!(
            files.iter().any(|(f, _)| f == "src/scaffold/init.rs")
                && files.iter().any(|(f, _)| f == "src/cli/create.rs")
                && files.iter().any(|(f, _)| f == "src/model/project.rs"),
            "the scan missed a directory"
        );
        let found: Vec<String> = files
            .iter()
            .flat_map(|(file, text)| direct_fs(file, text))
            .collect();
        let stale: Vec<&str> = ALLOWED
            .iter()
            .filter(|(f, l, _)| {
                !files
                    .iter()
                    .any(|(file, text)| file == f && text.lines().any(|line| line.trim() == *l))
            })
            .map(|(_, l, _)| *l)
            .collect();
        assert!(stale.is_empty(), "allowed lines no longer found: {stale:?}");
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
