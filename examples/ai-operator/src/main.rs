// Copyright 2026 The rsbuilder authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The manager: connects to the Kubernetes API server, serves metrics and health probes,
//! takes part in leader election, runs the controllers and webhooks, and shuts down
//! gracefully on SIGTERM or SIGINT. The machinery is the runtime's (`rsbuilder_runtime`);
//! this file only wires this project's parts into it.

use std::process::ExitCode;

use rsbuilder_runtime::manager::{self, Args, Options, Runner};
// +kubebuilder:scaffold:imports

/// What this project's manager flags default to.
const OPTIONS: Options = Options {
    version: env!("CARGO_PKG_VERSION"),
    leader_election_id: "ai-operator.example.com",
    // Watch all namespaces unless --namespace names one.
    namespaced: false,
};

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse_with(&OPTIONS);
    manager::init_tracing(args.log_format);
    manager::exit_code(run(args).await)
}

async fn run(args: Args) -> anyhow::Result<()> {
    // Certificates are loaded before connecting, so that a bad path is reported at once.
    // The webhook serving certificate (--webhook-cert-dir); none with ENABLE_WEBHOOKS=false.
    let webhook_certs = rsbuilder_runtime::webhook::certificates(&args)?;
    // +kubebuilder:scaffold:certificates
    let mut runner = Runner::start(args, &OPTIONS).await?;
    // Webhook servers run on every replica, leader or not.
    let webhooks = rsbuilder_runtime::webhook::Webhooks::new();
    let webhooks = webhooks.defaulting::<ai_operator::api::v1::AIJob, _>(
        ai_operator::webhook::v1::aijob_webhook::DEFAULTING_PATH,
        ai_operator::webhook::v1::aijob_webhook::AIJobWebhook,
    );
    let webhooks = webhooks.validating::<ai_operator::api::v1::AIJob, _>(
        ai_operator::webhook::v1::aijob_webhook::VALIDATION_PATH,
        ai_operator::webhook::v1::aijob_webhook::AIJobWebhook,
    );
    // +kubebuilder:scaffold:webhook-registrations
    runner.serve_webhooks(webhook_certs, webhooks);
    // +kubebuilder:scaffold:webhooks

    // Controllers run only on the replica that holds the Lease (on every replica without
    // --leader-elect); none start when shutdown began while waiting for it.
    if runner.elect_leader().await? {
        runner.spawn(rsbuilder_runtime::controller::run(
            runner.manager(),
            ai_operator::controller::aijob_controller::AIJobReconciler,
        ));
        // +kubebuilder:scaffold:controllers
    }
    runner.run().await
}
