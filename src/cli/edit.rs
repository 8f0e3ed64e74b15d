//! `rsbuilder edit`: flags, and the call into [`crate::scaffold::edit`].

use std::path::Path;

/// `rsbuilder edit` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  rsbuilder edit --namespaced=true    # watch only the manager's namespace, RBAC as a Role\n  rsbuilder edit --namespaced=false   # watch all namespaces, RBAC as a ClusterRole\n  rsbuilder edit --license mit --owner \"Example Corp.\"   # headers, LICENSE, Cargo.toml\n  rsbuilder edit --plugins grafana     # Grafana dashboards under grafana/\n  rsbuilder edit --multigroup=true     # src/api/<group>/<version>/, one directory per API group\n\n\
Besides PROJECT, `edit --namespaced` switches every part of the project that `init` writes \
differently for the setting (src/main.rs, config/manager/manager.yaml, config/rbac/role.yaml, \
config/rbac/role_binding.yaml, README.md), as long as the part still \
holds what `init` wrote. If you changed such a part, nothing is written and the error shows \
the change to make by hand; --force instead replaces the parts you changed with what `init` \
writes, as long as the lines around them are unchanged (a whole file is never overwritten)."
)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["namespaced", "license", "owner", "plugins", "multigroup"])))]
pub struct EditArgs {
    /// Restrict the manager to one namespace (true) or let it watch all of them (false):
    /// RBAC becomes a Role and RoleBinding instead of a ClusterRole and ClusterRoleBinding.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub namespaced: Option<bool>,
    /// Change the license as `init --license` sets it: the header of every Rust source under
    /// src/ and tests/, LICENSE and Cargo.toml's `license` (`none`, `apache2`, `mit`, or the
    /// path of a header file).
    #[arg(long, value_name = "none|apache2|mit|FILE", value_parser = super::init::parse_license)]
    pub license: Option<crate::scaffold::init::License>,
    /// Change the copyright owner in the license header and LICENSE.
    #[arg(long)]
    pub owner: Option<String>,
    /// Apply optional plugins, as Kubebuilder's `edit --plugins`: `grafana` (or its Kubebuilder
    /// key `grafana.kubebuilder.io/v1-alpha`) writes dashboards for the manager's metrics under
    /// grafana/ and, from grafana/custom-metrics/config.yaml, one for your own metrics; run it
    /// again after editing that file.
    #[arg(long, value_delimiter = ',', value_parser = parse_plugin)]
    pub plugins: Vec<Plugin>,
    /// Switch to Kubebuilder's multigroup layout (true: `src/api/<group>/<version>/`,
    /// `src/controller/<group>/`, `src/webhook/<group>/<version>/`, PROJECT `multigroup:
    /// true`) or back to the single-group one (false, refused with kinds of several groups).
    /// The scaffolded files move, with their module lines and paths; a file not as the
    /// scaffold wrote it is named and nothing is written.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub multigroup: Option<bool>,
    /// Replace the namespace-dependent parts you changed with what `init` writes for the
    /// new setting (your changes to them are lost); a part that cannot be found by the lines
    /// around it is refused as without --force. README.md is never overwritten.
    #[arg(long)]
    pub force: bool,
}

/// An optional plugin of `edit --plugins`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugin {
    /// Grafana dashboards ([`crate::scaffold::grafana`]).
    Grafana,
}

/// Parses one `--plugins` value: a short name or Kubebuilder's plugin key.
fn parse_plugin(value: &str) -> Result<Plugin, String> {
    match value {
        "grafana" | crate::scaffold::grafana::PLUGIN_KEY | "grafana/v1-alpha" => {
            Ok(Plugin::Grafana)
        }
        other => Err(format!(
            "unknown plugin `{other}`; rsbuilder has `grafana` ({})",
            crate::scaffold::grafana::PLUGIN_KEY
        )),
    }
}

/// Runs `edit` in `dir`: changes the license and owner (see
/// [`crate::scaffold::relicense::plan`]) and switches the project to `--namespaced=<bool>` (see
/// [`crate::scaffold::edit::plan_namespaced`]), printing each file updated, the files left
/// alone, and a warning for every kind a namespaced Role cannot grant. Returns exit code 0;
/// a missing PROJECT or a part the user changed (without `--force`) is an error (exit code 1)
/// with nothing written.
pub fn run(dir: &Path, args: EditArgs) -> anyhow::Result<i32> {
    if args.namespaced.is_none()
        && args.multigroup.is_none()
        && args.license.is_none()
        && args.owner.is_none()
        && args.plugins.is_empty()
    {
        // clap requires one of them; kept for callers that build EditArgs themselves.
        eprintln!("error: nothing to edit; pass --namespaced, --license, --owner or --plugins");
        return Ok(super::EXIT_USAGE);
    }
    let _lock = crate::engine::lock_project(dir)?;
    if let Some(on) = args.multigroup {
        if args.namespaced.is_some()
            || args.license.is_some()
            || args.owner.is_some()
            || !args.plugins.is_empty()
        {
            eprintln!(
                "error: pass --multigroup on its own, not with --namespaced, --license, --owner or --plugins"
            );
            return Ok(super::EXIT_USAGE);
        }
        return run_multigroup(dir, on);
    }
    if !args.plugins.is_empty() {
        // Checked (PROJECT, config.yaml) before any other edit writes.
        let grafana = crate::scaffold::grafana::plan(dir)?;
        if args.namespaced.is_none() && args.license.is_none() && args.owner.is_none() {
            print!("{}", crate::scaffold::grafana::report(&grafana.apply()?));
            return Ok(super::EXIT_OK);
        }
        eprintln!("error: pass --plugins on its own, not with --namespaced, --license or --owner");
        return Ok(super::EXIT_USAGE);
    }
    if args.license.is_some() || args.owner.is_some() {
        let relicense =
            || crate::scaffold::relicense::plan(dir, args.license.clone(), args.owner.clone());
        if let Some(namespaced) = args.namespaced {
            // Checked before the namespace switch writes anything, planned again after it,
            // over the files it switched.
            relicense()?;
            run_namespaced(dir, namespaced, args.force)?;
        }
        let relicense = relicense()?;
        print!("{}", crate::scaffold::report(&relicense.plan.apply()?));
        for note in &relicense.notes {
            println!("note: {note}");
        }
        return Ok(super::EXIT_OK);
    }
    match args.namespaced {
        Some(namespaced) => run_namespaced(dir, namespaced, args.force),
        None => Ok(super::EXIT_OK),
    }
}

/// `edit --multigroup=<on>`: see [`crate::scaffold::multigroup::plan`].
fn run_multigroup(dir: &Path, on: bool) -> anyhow::Result<i32> {
    let planned = crate::scaffold::multigroup::plan(dir, on)?;
    let layout = if on { "multigroup" } else { "single-group" };
    if planned.unchanged {
        println!(
            "The project already has the {layout} layout (PROJECT has `multigroup: {on}`); nothing changed."
        );
        return Ok(super::EXIT_OK);
    }
    print!("{}", crate::scaffold::report(&planned.plan.apply()?));
    for (from, to) in &planned.moved {
        println!("moved   {} -> {}", from.display(), to.display());
    }
    println!("\nThe project now has the {layout} layout.");
    Ok(super::EXIT_OK)
}

/// `edit --namespaced=<namespaced>`: see [`run`].
fn run_namespaced(dir: &Path, namespaced: bool, force: bool) -> anyhow::Result<i32> {
    use crate::scaffold::edit;
    let planned = edit::plan_namespaced(dir, namespaced, force)?;
    let setting = if namespaced {
        "namespaced"
    } else {
        "cluster-wide"
    };
    if planned.unchanged {
        println!(
            "The project is already {setting} (PROJECT has `namespaced: {namespaced}` and its files match); nothing changed."
        );
        for note in &planned.notes {
            println!("note: {note}");
        }
        return Ok(super::EXIT_OK);
    }
    print!("{}", crate::scaffold::report(&planned.plan.apply()?));
    if planned.project_had_it {
        println!(
            "PROJECT already had `namespaced: {namespaced}`; switched the files that were not {setting} yet."
        );
    }
    for path in &planned.forced_parts {
        println!(
            "replaced the parts of {} you changed with what `rsbuilder init` writes (--force)",
            path.display()
        );
    }
    for note in &planned.notes {
        println!("note: {note}");
    }
    if !planned.warnings.is_empty() {
        eprintln!(
            "warning: a namespaced Role cannot grant access to cluster-scoped resources, so the \
             manager will be denied these:"
        );
        for w in &planned.warnings {
            eprintln!("  - {w}");
        }
        eprintln!(
            "  help: keep the project cluster-wide (`rsbuilder edit --namespaced=false`), or \
             grant them with a ClusterRole of your own"
        );
    }
    println!(
        "\nThe project is now {setting}. Run `rsbuilder manifests` to regenerate config/rbac/role.yaml."
    );
    Ok(super::EXIT_OK)
}
