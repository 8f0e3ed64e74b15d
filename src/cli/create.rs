//! `rsbuilder create api`, `create webhook` and `create apiserver`: flags, and the calls into
//! [`crate::scaffold`].

use std::path::Path;

use crate::scaffold::create::Settings;

/// `rsbuilder create` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum CreateCommand {
    /// Scaffold a CRD type and its controller, or a controller for an existing type.
    Api(ApiArgs),
    /// Scaffold defaulting, validating or conversion webhooks for a kind.
    Webhook(WebhookArgs),
    /// Scaffold a kind served by the project's own aggregated API server (not a CRD).
    Apiserver(ApiServerArgs),
}

/// `rsbuilder create apiserver` flags (those of `create api` that apply to a served kind).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  rsbuilder create apiserver --group db --version v1 --kind Database"
)]
pub struct ApiServerArgs {
    /// API group (`db`; the served group is `<group>.<domain>`).
    #[arg(long)]
    pub group: String,
    /// API version (`v1`, `v1beta1`).
    #[arg(long)]
    pub version: String,
    /// Kind, CamelCase (`Database`).
    #[arg(long)]
    pub kind: String,
    /// Namespaced (true) or cluster-scoped (false) kind.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = true, action = clap::ArgAction::Set)]
    pub namespaced: bool,
    /// Plural resource name, when kube-derive's rule gives the wrong one (`people`).
    #[arg(long)]
    pub plural: Option<String>,
    /// Overwrite the kind's types and sample files if they exist.
    #[arg(long)]
    pub force: bool,
}

/// `rsbuilder create api` flags (Kubebuilder's names).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  rsbuilder create api --group ai --version v1 --kind AIJob\n  rsbuilder create api --group core --version v1 --kind Pod --resource=false --controller=true"
)]
pub struct ApiArgs {
    /// API group (`ai`; the qualified group is `<group>.<domain>`; `core`, `apps`, ... for
    /// built-in types). Read from the CRD with --external-api-crd.
    #[arg(long, required_unless_present = "external_api_crd")]
    pub group: Option<String>,
    /// API version (`v1`, `v1beta1`). With --external-api-crd, the CRD's storage version
    /// unless given.
    #[arg(long, required_unless_present = "external_api_crd")]
    pub version: Option<String>,
    /// Kind, CamelCase (`AIJob`). Read from the CRD with --external-api-crd.
    #[arg(long, required_unless_present = "external_api_crd")]
    pub kind: Option<String>,
    /// A controller for a kind another project defines: generate its Rust types from this CRD
    /// file with kopium (into src/api/external/, tool-owned; `manifests` writes no CRD for it).
    #[arg(long, value_name = "CRD_FILE", conflicts_with_all = ["external_api_path", "image", "controller_name", "plural"])]
    pub external_api_crd: Option<std::path::PathBuf>,
    /// A controller for a kind another project defines, whose Rust type is in a dependency
    /// (`cert_manager_types::v1::Certificate`); needs --external-api-domain.
    #[arg(long, value_name = "CRATE::PATH::TYPE", conflicts_with_all = ["image", "controller_name"], requires = "external_api_domain")]
    pub external_api_path: Option<String>,
    /// With --external-api-path: the kind's domain; its API group is `<group>.<domain>`
    /// (`--group cert-manager --external-api-domain io`).
    #[arg(
        long,
        value_name = "DOMAIN",
        requires = "external_api_path",
        conflicts_with = "external_api_crd"
    )]
    pub external_api_domain: Option<String>,
    /// Scaffold the resource type (CRD).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = true, action = clap::ArgAction::Set)]
    pub resource: bool,
    /// Scaffold the controller.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = true, action = clap::ArgAction::Set)]
    pub controller: bool,
    /// Namespaced (true) or cluster-scoped (false) resource.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = true, action = clap::ArgAction::Set)]
    pub namespaced: bool,
    /// Plural resource name, when kube-derive's rule gives the wrong one (`people`).
    #[arg(long)]
    pub plural: Option<String>,
    /// Overwrite the kind's types, controller and sample files if they exist.
    #[arg(long)]
    pub force: bool,
    /// Add a further controller for a kind that already exists (in PROJECT, or a built-in type),
    /// under this name (a DNS-1123 label starting with a letter): its own file, reconciler type,
    /// finalizer and start in src/main.rs. Use with --resource=false.
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,
    /// Scaffold a controller that runs this container image as a Deployment each object owns,
    /// sized by `spec.size` (Kubebuilder's deploy-image plugin).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// With --image: the container's command, comma-separated (`memcached,-m=64,-v`).
    #[arg(long, value_name = "COMMAND", requires = "image")]
    pub image_container_command: Option<String>,
    /// With --image: the port the container listens on (`spec.containerPort`'s default).
    #[arg(long, value_name = "PORT", requires = "image")]
    pub image_container_port: Option<String>,
    /// With --image: the user id the container runs as.
    #[arg(long, value_name = "UID", requires = "image")]
    pub run_as_user: Option<String>,
}

/// `rsbuilder create webhook` flags (Kubebuilder's names).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  rsbuilder create webhook --group ai --version v1 --kind AIJob --defaulting --programmatic-validation"
)]
pub struct WebhookArgs {
    /// API group of the kind.
    #[arg(long)]
    pub group: String,
    /// API version of the kind.
    #[arg(long)]
    pub version: String,
    /// Kind.
    #[arg(long)]
    pub kind: String,
    /// Scaffold a defaulting (mutating) webhook.
    #[arg(long)]
    pub defaulting: bool,
    /// Scaffold a validating webhook.
    #[arg(long)]
    pub programmatic_validation: bool,
    /// Scaffold a conversion webhook.
    #[arg(long)]
    pub conversion: bool,
    /// Spoke versions converted through this (hub) version, with `--conversion`.
    #[arg(long, value_delimiter = ',')]
    pub spoke: Vec<String>,
    /// Custom path of the defaulting webhook.
    #[arg(long)]
    pub defaulting_path: Option<String>,
    /// Custom path of the validating webhook.
    #[arg(long)]
    pub validation_path: Option<String>,
    /// Overwrite the webhook file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The external kind's source that `create api` was given (`--external-api-crd`, resolved
/// against the working directory, or `--external-api-path`), `None` for any other kind.
fn external_source(
    dir: &Path,
    args: &ApiArgs,
) -> Option<crate::scaffold::api::external::ExternalSource> {
    use crate::scaffold::api::external::ExternalSource;
    if let Some(file) = &args.external_api_crd {
        let cwd = std::env::current_dir().unwrap_or_else(|_| dir.to_path_buf());
        return Some(ExternalSource::Crd {
            file: cwd.join(file),
            recorded: None,
        });
    }
    args.external_api_path.clone().map(ExternalSource::Path)
}

/// The library's form of the `create` flags.
fn settings(dir: &Path, cmd: CreateCommand) -> Settings {
    use crate::scaffold::{api, apiserver, webhook};
    match cmd {
        CreateCommand::Api(args) => match external_source(dir, &args) {
            Some(source) => Settings::External(api::external::ExternalOptions {
                source,
                group: args.group,
                version: args.version,
                kind: args.kind,
                domain: args.external_api_domain,
                plural: args.plural,
                namespaced: args.namespaced,
                controller: args.controller,
                force: args.force,
                replay: false,
            }),
            None => Settings::Api(api::ApiOptions {
                // clap requires the three unless --external-api-crd is given, handled above.
                group: args.group.unwrap_or_default(),
                version: args.version.unwrap_or_default(),
                kind: args.kind.unwrap_or_default(),
                resource: args.resource,
                controller: args.controller,
                namespaced: args.namespaced,
                plural: args.plural,
                force: args.force,
                controller_name: args.controller_name,
                image: args.image.map(|image| api::deploy_image::DeployImage {
                    image,
                    command: args.image_container_command,
                    port: args.image_container_port,
                    run_as_user: args.run_as_user,
                }),
            }),
        },
        CreateCommand::Apiserver(args) => Settings::ApiServer(apiserver::ApiServerOptions {
            group: args.group,
            version: args.version,
            kind: args.kind,
            namespaced: args.namespaced,
            plural: args.plural,
            force: args.force,
        }),
        CreateCommand::Webhook(args) => Settings::Webhook(webhook::WebhookOptions {
            group: args.group,
            version: args.version,
            kind: args.kind,
            defaulting: args.defaulting,
            validation: args.programmatic_validation,
            conversion: args.conversion,
            spoke: args.spoke,
            defaulting_path: args.defaulting_path,
            validation_path: args.validation_path,
            force: args.force,
        }),
    }
}

/// Runs a `create` subcommand in `dir`: the flags as [`Settings`], the run
/// ([`crate::scaffold::create::run`]), its report printed (messages on stderr, the written
/// files and the next steps on stdout). Returns the exit code: 0 success, 2 flags that do not
/// go together. Errors: those of the run, with nothing written.
pub fn run(dir: &Path, cmd: CreateCommand) -> anyhow::Result<i32> {
    let report = crate::scaffold::create::run(dir, &settings(dir, cmd))?;
    let (before, after) = report
        .messages
        .split_at(report.output_after.min(report.messages.len()));
    before.iter().for_each(|m| eprintln!("{m}"));
    if report.usage_error {
        return Ok(super::EXIT_USAGE);
    }
    print!("{}", crate::scaffold::report(&report.written));
    after.iter().for_each(|m| eprintln!("{m}"));
    print!("{}", report.next_steps);
    Ok(super::EXIT_OK)
}
