//! `rsbuilder create api --controller-name <name>`: a further controller for a kind that
//! already has its API (in PROJECT) or is a built-in type, as Kubebuilder lets several
//! controllers reconcile one group/version/kind.
//!
//! Each named controller gets its own file (`src/controller/<name>_controller.rs`), reconciler
//! type (`<Name>Reconciler`), `NAME` (the field manager, event reporter and metrics label),
//! finalizer (`<group>/<name>`, so one controller's cleanup never holds back another's) and
//! start in `src/main.rs`. Its RBAC markers are those of the kind's own controller, which
//! `manifests` merges. PROJECT records it in Kubebuilder's `plugins:` map under
//! [`PLUGIN_KEY`], the way Kubebuilder's optional plugins record their resources, so a Go
//! Kubebuilder still loads the file and `alpha generate` re-creates the controller.

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::json;

use super::{ApiOptions, BuiltinControllerRs, ControllerRs, Names};
use crate::model::{NameError, Project, layout};
use crate::scaffold::render;
use crate::scaffold::{File, Plan};

/// The key of PROJECT's `plugins:` map that lists the named controllers:
/// `{resources: [{group, version, kind, controllerName}]}`.
pub const PLUGIN_KEY: &str = "controllers.rsbuilder.io/v1-alpha";

/// A named controller as PROJECT records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedController {
    /// Short group (`ai`, `core`).
    pub group: String,
    /// Version (`v1`).
    pub version: String,
    /// Kind (`AIJob`).
    pub kind: String,
    /// `--controller-name` (`aijob-backup`).
    pub name: String,
}

/// The named controllers PROJECT records under [`PLUGIN_KEY`], in order. Entries that lack
/// one of the four fields are skipped (they were not written by rsbuilder).
pub fn recorded(project: &Project) -> Vec<NamedController> {
    project
        .plugin_resources(PLUGIN_KEY)
        .iter()
        .filter_map(|e| {
            let field = |k: &str| e.get(k).and_then(|v| v.as_str()).map(str::to_owned);
            Some(NamedController {
                group: field("group")?,
                version: field("version")?,
                kind: field("kind")?,
                name: field("controllerName")?,
            })
        })
        .collect()
}

/// The flags that re-create a recorded named controller (`alpha generate`).
pub fn options(c: &NamedController) -> ApiOptions {
    ApiOptions {
        group: c.group.clone(),
        version: c.version.clone(),
        kind: c.kind.clone(),
        resource: false,
        controller: true,
        namespaced: true,
        plural: None,
        force: false,
        controller_name: Some(c.name.clone()),
        image: None,
    }
}

/// Checks `--controller-name`: a DNS-1123 label that starts with a letter (it becomes a Rust
/// module and type name, and part of a finalizer).
fn check_name(name: &str) -> Result<(), NameError> {
    let err = |reason: String| NameError {
        flag: "--controller-name".into(),
        value: name.into(),
        reason,
    };
    crate::model::validate::dns1123_label(name).map_err(err)?;
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(err(
            "must start with a letter: it names a Rust module (`<name>_controller`)".into(),
        ));
    }
    Ok(())
}

/// Plans a named controller for `opts`' kind in the project at `dir`, writing nothing.
///
/// Errors: an invalid name (flag, value, rule); `--resource` or `--controller=false` with
/// `--controller-name`; a kind that is neither in PROJECT with its API nor a built-in type; a
/// name another controller of the project already has (named, or a kind's own
/// `<kind>-controller`, or one whose file would be the same); the file existing without
/// `--force`.
pub(super) fn plan(dir: &Path, opts: &ApiOptions, name: &str) -> Result<Plan> {
    check_name(name)?;
    if !opts.controller {
        bail!("--controller-name names a controller, and --controller=false asks for none");
    }
    if opts.image.is_some() {
        bail!(
            "--image scaffolds a new kind with its controller; --controller-name adds a controller to an existing kind: use one of them"
        );
    }
    if opts.resource {
        bail!(
            "--controller-name adds a controller to a kind that already exists; add --resource=false:\n  rsbuilder create api --group {} --version {} --kind {} --resource=false --controller-name {name}",
            opts.group,
            opts.version,
            opts.kind
        );
    }
    let mut plan = Plan::new(dir, opts.force);
    let mut project = super::super::load_project_or_explain(&plan, dir)?;
    let (resource, _) = super::resolve_resource(&project, opts)?;
    let files = layout::KindLayout::of(&resource, project.multigroup);
    super::check_group_allowed(&project, opts, &resource)?;
    let module = layout::named_controller_module(name);
    let others = recorded(&project);
    let same = others.iter().find(|c| c.name == name);
    if let Some(c) = same
        && !(opts.force
            && c.group == opts.group
            && c.version == opts.version
            && c.kind == opts.kind)
    {
        return Err(NameError {
            flag: "--controller-name".into(),
            value: name.into(),
            reason: format!(
                "PROJECT already has a controller of that name, for {}/{} {}; choose another name{}",
                c.group,
                c.version,
                c.kind,
                if c.kind == opts.kind { " (or --force to re-render its file)" } else { "" }
            ),
        }
        .into());
    }
    let mg = project.multigroup;
    if let Some(r) = project.resources.iter().find(|r| {
        r.controller
            && (format!("{}-controller", r.kind.to_lowercase()) == name
                || layout::controller_file(layout::group_of(mg, &r.group), &r.kind)
                    == files.named_controller(name).path)
    }) {
        return Err(NameError {
            flag: "--controller-name".into(),
            value: name.into(),
            reason: format!(
                "the kind {}'s own controller has that name or file ({}); choose another name",
                r.kind,
                layout::controller_file(layout::group_of(mg, &r.group), &r.kind).display()
            ),
        }
        .into());
    }

    let mut n = Names::new(&resource, &project);
    n.controller_name = name.to_owned();
    n.reconciler = format!("{}Reconciler", heck::AsUpperCamelCase(name));
    n.finalizer = format!("{}/{name}", resource.qualified_group());
    let header = super::rust_header(&plan)?;
    let text = if resource.builtin.is_some() {
        render(&BuiltinControllerRs { n: &n })?
    } else {
        super::ensure_controller_test_dependencies(&mut plan)?;
        render(&ControllerRs { n: &n })?
    };
    plan.add(File::at(
        files.named_controller(name),
        format!("{header}{text}"),
    ));
    if same.is_some() {
        // --force on a recorded controller: its file only.
        return Ok(plan);
    }
    let krate = super::crate_name(&project);
    super::wire_controller(&mut plan, &header, &krate, &files, &module, &n.reconciler)?;
    let entry = json!({
        "group": opts.group,
        "version": opts.version,
        "kind": opts.kind,
        "controllerName": name,
    });
    project.push_plugin_resource(PLUGIN_KEY, entry)?;
    plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_must_be_a_label_that_starts_with_a_letter() {
        assert!(check_name("aijob-backup").is_ok());
        for bad in ["", "Backup", "2nd", "a_b", "-a", "a-", &"a".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let err = check_name("2nd").unwrap_err();
        assert_eq!(err.flag, "--controller-name");
        assert!(err.reason.contains("start with a letter"), "{}", err.reason);
    }

    #[test]
    fn recorded_reads_the_plugin_entries_and_skips_incomplete_ones() {
        let mut project = Project::new("ai.example.com", "example.com/x", "x", false);
        project.plugins.insert(
            PLUGIN_KEY.into(),
            json!({"resources": [
                {"group": "ai", "version": "v1", "kind": "AIJob", "controllerName": "aijob-backup"},
                {"group": "ai", "version": "v1", "kind": "AIJob"},
            ]}),
        );
        assert_eq!(
            recorded(&project),
            [NamedController {
                group: "ai".into(),
                version: "v1".into(),
                kind: "AIJob".into(),
                name: "aijob-backup".into(),
            }]
        );
    }
}
