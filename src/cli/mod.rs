//! Command-line definitions (clap derive), one file per command; [`run`] dispatches a parsed
//! command to the library.

use clap::{Parser, Subcommand};

pub mod alpha;
pub mod create;
pub mod edit;
pub mod init;
pub mod manifests;

/// Exit codes: success.
pub const EXIT_OK: i32 = 0;
/// Exit codes: a user error, or drift found by `manifests --check`.
pub const EXIT_FAILURE: i32 = 1;
/// Exit codes: a usage error (bad flags, a command not implemented yet).
pub const EXIT_USAGE: i32 = 2;
/// Exit codes: another rsbuilder command held the project lock for the whole wait (sysexits'
/// `EX_TEMPFAIL`: try again later).
pub const EXIT_LOCKED: i32 = 75;

/// rsbuilder: Kubebuilder + controller-gen for operators written in Rust on kube-rs.
#[derive(Debug, Parser)]
#[command(
    name = "rsbuilder",
    version,
    about = "Scaffold kube-rs operators and derive their CRD, RBAC and webhook manifests",
    long_about = "rsbuilder scaffolds Kubernetes operators written in Rust on kube-rs, laid out like \
Kubebuilder projects, and derives CRD YAML, RBAC roles and webhook configurations statically from \
the annotated Rust types (the same attributes kube-derive reads).",
    after_help = "Examples:\n  mkdir ai-operator && cd ai-operator\n  rsbuilder init --domain example.com --repo example.com/ai-operator\n  rsbuilder create api --group ai --version v1 --kind AIJob\n  rsbuilder manifests"
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands, named as Kubebuilder names them.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Initialize a new kube-rs operator project in the current directory.
    Init(init::InitArgs),
    /// Scaffold a CRD and controller (api), a webhook, or an aggregated API kind (apiserver).
    #[command(subcommand)]
    Create(create::CreateCommand),
    /// Generate CRD, RBAC and webhook manifests from the Rust sources: read statically first;
    /// under `--evaluate auto` (the default) a kind that needs it is compiled (see --help).
    Manifests(manifests::ManifestsArgs),
    /// Update the project configuration (PROJECT) and the files that depend on it.
    Edit(EditArgs),
    /// Bring a project to this rsbuilder's version (`alpha update`, `alpha generate`).
    #[command(subcommand)]
    Alpha(alpha::AlphaCommand),
    /// Print rsbuilder's version and the kube / k8s-openapi versions it scaffolds.
    #[command(after_help = "Example:\n  rsbuilder version")]
    Version,
    /// Generate a shell completion script.
    #[command(
        after_help = "Example:\n  rsbuilder completion bash > /etc/bash_completion.d/rsbuilder"
    )]
    Completion {
        /// Shell to generate the script for.
        shell: clap_complete::Shell,
    },
}

pub use edit::EditArgs;

/// Versions of the crates a scaffolded project depends on ([`crate::model::versions`]).
pub use crate::model::versions;

/// Runs a parsed command. Returns the process exit code, or an error whose chain the binary
/// prints (exit code 1).
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    // Commands that work on a project run at its root, found upwards from the current
    // directory as cargo finds Cargo.toml; without one they report the missing PROJECT.
    let root = || {
        crate::model::find_root(&cwd, crate::model::root::PROJECT).unwrap_or_else(|| cwd.clone())
    };
    match cli.command {
        Command::Init(args) => init::run(&cwd, args),
        Command::Create(cmd) => create::run(&root(), cmd),
        Command::Manifests(args) => manifests::run(&cwd, args),
        Command::Edit(args) => edit::run(&root(), args),
        Command::Alpha(cmd) => alpha::run(&cwd, &root(), cmd),
        Command::Version => {
            println!(
                "rsbuilder {}\nscaffolds: kube {}, k8s-openapi {} (feature {}), schemars {}",
                env!("CARGO_PKG_VERSION"),
                versions::KUBE,
                versions::K8S_OPENAPI,
                versions::K8S_FEATURE,
                versions::SCHEMARS
            );
            Ok(EXIT_OK)
        }
        Command::Completion { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "rsbuilder", &mut std::io::stdout());
            Ok(EXIT_OK)
        }
    }
}

/// The answer of a command that a later release implements: a message and exit code 2.
pub fn not_implemented(what: &str) -> anyhow::Result<i32> {
    eprintln!("error: `rsbuilder {what}` is not implemented yet");
    Ok(EXIT_USAGE)
}
