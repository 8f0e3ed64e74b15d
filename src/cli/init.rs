//! `rsbuilder init`: flags, and the call into [`crate::scaffold`].

use std::path::Path;

/// Parses `--license`: `none`, `apache2`, `mit`, or the path of a header file (read now, so a
/// missing file is a usage error naming the flag).
pub fn parse_license(value: &str) -> Result<crate::scaffold::init::License, String> {
    use crate::scaffold::init::License;
    match value {
        "none" => Ok(License::None),
        "apache2" => Ok(License::Apache2),
        "mit" => Ok(License::Mit),
        path => {
            let text = crate::engine::regular::read_path(Path::new(path)).map_err(|e| {
                format!(
                    "expected none, apache2, mit or the path of a license header file; \
                     cannot read {path:?}: {e}"
                )
            })?;
            License::from_header_file(&text)
                .ok_or_else(|| format!("the license header file {path:?} is empty"))
        }
    }
}

/// `rsbuilder init` flags (Kubebuilder's names).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  mkdir ai-operator && cd ai-operator\n  rsbuilder init --domain example.com --repo example.com/ai-operator"
)]
pub struct InitArgs {
    /// Domain for groups: an API `--group ai` becomes `ai.<domain>`.
    #[arg(long, default_value = "my.domain")]
    pub domain: String,
    /// Repository path of the project (recorded in PROJECT and Cargo.toml).
    #[arg(long)]
    pub repo: Option<String>,
    /// Project name (a DNS-1123 label); defaults to the directory name.
    #[arg(long)]
    pub project_name: Option<String>,
    /// Copyright owner named in license headers and LICENSE (none by default: `Copyright
    /// <year>.`).
    #[arg(long)]
    pub owner: Option<String>,
    /// License of the generated project: `apache2`, `mit`, `none`, or the path of a file whose
    /// text becomes the comment header of every generated Rust source (as Kubebuilder's
    /// boilerplate file).
    #[arg(long, value_name = "none|apache2|mit|FILE", default_value = "apache2", value_parser = parse_license)]
    pub license: crate::scaffold::init::License,
    /// Watch only the manager's own namespace: RBAC is generated as Roles, not ClusterRoles.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
    pub namespaced: bool,
    /// Kubebuilder's multigroup layout: each API group gets directories of its own
    /// (`src/api/<group>/<version>/`, `src/controller/<group>/`, `src/webhook/<group>/`), so one
    /// project can hold several groups (PROJECT `multigroup: true`; `edit --multigroup`
    /// switches later).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
    pub multigroup: bool,
    /// How the project holds the runtime crate (`rsbuilder-runtime`): `vendored`, a tool-owned
    /// copy under `rsbuilder-runtime/` that `rsbuilder alpha update` refreshes; or `crate`, a
    /// dependency on `rsbuilder-runtime = "<this rsbuilder's version>"` from crates.io, with
    /// no copy (recorded in PROJECT). docs/runtime.md compares the two.
    #[arg(long, value_name = "vendored|crate", default_value = "vendored", value_parser = crate::scaffold::runtime::Source::parse)]
    pub runtime: crate::scaffold::runtime::Source,
}

/// Runs `init` in `dir`: validates the flags, refuses a directory that already holds a
/// project (PROJECT, Cargo.toml or src/main.rs), writes the project atomically, and prints
/// each file created and the next steps. Returns exit code 0; every refusal is an error
/// (exit code 1) with nothing written.
pub fn run(dir: &Path, args: InitArgs) -> anyhow::Result<i32> {
    use crate::scaffold::init;
    let _lock = crate::engine::lock_project(dir)?;
    let project_name = init::project_name(dir, args.project_name.as_deref())?;
    let opts = init::InitOptions {
        repo: args.repo.unwrap_or_else(|| project_name.clone()),
        project_name,
        domain: args.domain,
        owner: args.owner.unwrap_or_default(),
        license: args.license,
        namespaced: args.namespaced,
        multigroup: args.multigroup,
        year: init::current_year(),
        runtime: args.runtime,
    };
    let plan = init::plan(dir, &opts)?;
    let note = init::gitignore_note(&plan)?;
    print!("{}", crate::scaffold::report(&plan.apply()?));
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    println!(
        "\nNext: add an API and its controller, then build and test:\n  \
         rsbuilder create api --group <group> --version v1 --kind <Kind>\n  \
         cargo build && cargo test"
    );
    Ok(super::EXIT_OK)
}
