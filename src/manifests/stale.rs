//! Files a `manifests` run leaves behind or does not list: CRD files no kind generates any
//! more, and a CRD kustomization that disagrees with the generated CRDs. `manifests` warns
//! about both, `--check` fails on them; rsbuilder changes neither.

use std::path::{Path, PathBuf};

use crate::model::layout::generated as layout;

/// Disagreements between `<output_dir>/crd/kustomization.yaml` (which `create api` writes and
/// `kubectl apply -k config/default` reads) and the CRDs this run generates: a `bases/*.yaml`
/// entry that no kind generates (a kind removed or renamed: kustomize then fails on the
/// missing file, or applies a CRD that is gone from the sources), and a generated CRD the
/// file does not list (never applied). Each is one message with the fix. `manifests` warns,
/// `--check` fails; the file is never edited (its lines are the user's). A missing or
/// unparsable file has no problems (`kubectl kustomize` reports the latter); one that cannot
/// be read (not a regular file) is one problem naming it.
pub fn crd_kustomization_problems(
    plan_root: &Path,
    output_dir: &Path,
    generated: &[(PathBuf, String)],
) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Kustomization {
        #[serde(default)]
        resources: Option<Vec<String>>,
    }
    let rel = output_dir.join(layout::CRD_KUSTOMIZATION);
    let path = plan_root.join(&rel);
    let text = match crate::engine::read(plan_root, &rel) {
        Ok(Some(text)) => text,
        Ok(None) => return Vec::new(),
        // A FIFO, a device, a directory: said, so `--check` does not pass without reading it.
        Err(e) => {
            let why = e.read_reason();
            return vec![format!(
                "{} cannot be read: {why}
  help: make it the regular file `create api` writes (its `resources:` list the CRDs under bases/)",
                path.display()
            )];
        }
    };
    let Ok(kustomization) = serde_saphyr::from_str::<Kustomization>(&text) else {
        return Vec::new();
    };
    // Entries as kustomize resolves them: `./bases/x.yaml`, `bases//x.yaml` and
    // `bases/../bases/x.yaml` all name `bases/x.yaml`.
    let normal = |entry: &str| -> String {
        let mut parts: Vec<&str> = Vec::new();
        for part in entry.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        parts.join("/")
    };
    let mut listed: Vec<String> = kustomization
        .resources
        .unwrap_or_default()
        .iter()
        .map(|r| normal(r))
        .filter(|r| r.starts_with(layout::CRD_ENTRY_PREFIX) && r.ends_with(".yaml"))
        .collect();
    let mut seen = std::collections::HashSet::new();
    listed.retain(|e| seen.insert(e.clone()));
    let bases = output_dir.join(layout::CRD_BASES);
    let made: Vec<String> = generated
        .iter()
        .filter(|(p, _)| p.parent() == Some(bases.as_path()))
        .filter_map(|(p, _)| p.file_name())
        .map(|n| format!("{}{}", layout::CRD_ENTRY_PREFIX, n.to_string_lossy()))
        .collect();
    let mut problems = Vec::new();
    for entry in listed.iter().filter(|e| !made.contains(e)) {
        problems.push(format!(
            "{} lists {entry}, which no kind in the sources generates\n  help: remove that line if its kind was removed or renamed (rsbuilder never edits it)",
            path.display()
        ));
    }
    for file in made.iter().filter(|f| !listed.contains(f)) {
        problems.push(format!(
            "{} does not list {file}, so `kubectl apply -k config/default` leaves that CRD out\n  help: add `- {file}` under `resources:`",
            path.display()
        ));
    }
    problems
}

/// `<output_dir>/crd/bases/*.yaml` files on disk that this run did not generate, sorted: CRDs of
/// kinds removed or renamed in the sources. Like controller-gen, rsbuilder never deletes them
/// (a CRD the cluster still serves may be wanted); `manifests` warns and `--check` fails.
/// Paths are `plan_root` joined with the path under it, as `--check` diffs name files. A
/// missing or unreadable directory has no stale files.
pub fn stale_crd_files(
    plan_root: &Path,
    output_dir: &Path,
    generated: &[(PathBuf, String)],
) -> Vec<PathBuf> {
    let bases = output_dir.join(layout::CRD_BASES);
    let Ok(Some(entries)) = crate::engine::list(plan_root, &bases) else {
        return Vec::new();
    };
    let generated: std::collections::HashSet<PathBuf> =
        generated.iter().map(|(p, _)| plan_root.join(p)).collect();
    let mut stale: Vec<PathBuf> = entries
        .into_iter()
        .filter(|e| !e.is_dir)
        .map(|e| plan_root.join(&bases).join(e.name))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                && !generated.contains(p)
        })
        .collect();
    stale.sort();
    stale
}
