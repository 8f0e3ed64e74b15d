{{ p.rust_header }}//! The manager: connects to the Kubernetes API server, serves metrics and health probes,
//! takes part in leader election, runs the controllers (and webhooks), and shuts down
//! gracefully on SIGTERM or SIGINT. The machinery is the runtime's
//! (`rsbuilder-runtime/`, tool-owned); this file only wires this project's parts into it.

use std::process::ExitCode;

use rsbuilder_runtime::manager::{self, Args, Options, Runner};
// +kubebuilder:scaffold:imports

/// What this project's manager flags default to.
const OPTIONS: Options = Options {
    version: env!("CARGO_PKG_VERSION"),
    leader_election_id: "{{ p.leader_election_id }}",
{%- if p.namespaced %}
    // Watch one namespace: --namespace, else POD_NAMESPACE, else the manager's own.
    namespaced: true,
{%- else %}
    // Watch all namespaces unless --namespace names one.
    namespaced: false,
{%- endif %}
};

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse_with(&OPTIONS);
    manager::init_tracing(args.log_format);
    manager::exit_code(run(args).await)
}

async fn run(args: Args) -> anyhow::Result<()> {
    // Certificates are loaded before connecting, so that a bad path is reported at once.
    // +kubebuilder:scaffold:certificates
    let mut runner = Runner::start(args, &OPTIONS).await?;
    // Webhook servers run on every replica, leader or not.
    // +kubebuilder:scaffold:webhooks

    // Controllers run only on the replica that holds the Lease (on every replica without
    // --leader-elect); none start when shutdown began while waiting for it.
    if runner.elect_leader().await? {
        // +kubebuilder:scaffold:controllers
    }
    runner.run().await
}
