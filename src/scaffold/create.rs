//! `rsbuilder create api`, `create webhook` and `create apiserver` as one library entry: the
//! command line builds a [`Settings`] value, [`run`] takes the project lock, runs the command
//! and returns a [`Report`] of what to print. Nothing here prints.

use std::path::Path;

use super::Resolved;
use super::api::ApiOptions;
use super::api::external::ExternalOptions;
use super::apiserver::ApiServerOptions;
use super::webhook::WebhookOptions;

/// Which `create` command to run, with its options.
#[derive(Debug, Clone)]
pub enum Settings {
    /// `create api` for a kind of this project or a built-in one.
    Api(ApiOptions),
    /// `create api --external-api-crd` or `--external-api-path`.
    External(ExternalOptions),
    /// `create apiserver`.
    ApiServer(ApiServerOptions),
    /// `create webhook`.
    Webhook(WebhookOptions),
}

/// What a `create` command did, in the order it is printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines for stderr, each with its `warning:`, `note:` or `error:` prefix.
    pub messages: Vec<String>,
    /// How many of [`Report::messages`] come before the written files; the rest after them.
    pub output_after: usize,
    /// What happened to each file (see [`super::report`]).
    pub written: Vec<Resolved>,
    /// The next steps, for stdout after the written files.
    pub next_steps: String,
    /// The flags do not make sense together (the `error:` message says why); nothing was
    /// written. The command line exits with its usage status.
    pub usage_error: bool,
}

/// Runs the `create` command `settings` names in the project at `dir`, holding the project
/// lock ([`crate::engine::lock_project`]) throughout. A flag combination `create webhook`
/// refuses is a report with [`Report::usage_error`] set, not an error.
///
/// Errors: the lock held by another command; the errors of [`super::api::run`],
/// [`super::api::external::run`], [`super::apiserver::run`] or [`super::webhook::run`], with
/// nothing written.
pub fn run(dir: &Path, settings: &Settings) -> anyhow::Result<Report> {
    let _lock = crate::engine::lock_project(dir)?;
    let mut report = Report::default();
    match settings {
        Settings::External(opts) => {
            let (done, next) = super::api::external::run(dir, opts)?;
            report.written = done;
            report.next_steps = next;
        }
        Settings::Api(opts) => {
            if let Ok(project) = crate::model::Project::load(dir) {
                if let Some(warning) =
                    crate::model::gvk::group_repeats_domain(&opts.group, &project.domain)
                {
                    report.messages.push(format!("warning: {warning}"));
                }
                if let Some(note) = super::api::builtin_namesake(opts, &project) {
                    report.messages.push(format!("note: {note}"));
                }
            }
            report.output_after = report.messages.len();
            report.written = super::api::run(dir, opts)?;
            let multigroup = crate::model::Project::load(dir).is_ok_and(|p| p.multigroup);
            report.next_steps = super::api::next_steps(opts, multigroup);
        }
        Settings::ApiServer(opts) => {
            report.written = super::apiserver::run(dir, opts)?;
            report.next_steps = super::apiserver::next_steps(opts);
        }
        Settings::Webhook(opts) => {
            if let Err(usage) = super::webhook::check_flags(opts) {
                report.messages.push(format!("error: {usage}"));
                report.output_after = report.messages.len();
                report.usage_error = true;
                return Ok(report);
            }
            let (done, notes) = super::webhook::run(dir, opts)?;
            report.written = done;
            report.messages = notes.into_iter().map(|n| format!("note: {n}")).collect();
            let multigroup = crate::model::Project::load(dir).is_ok_and(|p| p.multigroup);
            report.next_steps = super::webhook::next_steps(opts, multigroup);
        }
    }
    Ok(report)
}
