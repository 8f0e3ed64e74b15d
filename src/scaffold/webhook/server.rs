//! The manager's webhook server: the `src/webhook` module tree and its line in lib.rs, the
//! start of the runtime's webhook server in main.rs, and the registration of each webhook
//! there.

use std::path::Path;

use anyhow::{Result, bail};

use super::names::Names;
use super::templates::{MainWebhookCerts, MainWebhooks, WebhookModFile};
use crate::model::layout;
use crate::scaffold::{File, Plan, render};

/// The webhook module tree and its wiring into lib.rs, and the start of the runtime's webhook
/// server in main.rs, with the `webhook-registrations` marker where each kind's webhooks are
/// registered.
pub(super) fn add_server(plan: &mut Plan, header: &str) -> Result<()> {
    // The webhook server is the runtime's (rsbuilder-runtime/, which `init` writes). A
    // project from an earlier rsbuilder, with no runtime, would get webhooks that do not
    // build: refuse it, writing nothing, until `alpha update` can bring the runtime in.
    let runtime_manifest = format!("{}/Cargo.toml", crate::scaffold::runtime::DIR);
    let by_version = crate::scaffold::runtime::Source::of(&crate::model::Project::load_in(plan)?)
        == crate::scaffold::runtime::Source::Crate;
    if !by_version && !plan.exists(&runtime_manifest)? {
        bail!(
            "this project has no {dir}/ (it was made by an rsbuilder from before the runtime \
             crate): the webhooks are served by the runtime, so nothing was written; \
             re-create the project with `rsbuilder init` and copy your types and \
             controllers over",
            dir = crate::scaffold::runtime::DIR
        );
    }
    plan.add(File::at(
        layout::shared(layout::WEBHOOK_MOD),
        format!("{header}{}", render(&WebhookModFile)?),
    ));
    plan.insert(layout::LIB_RS, "modules", "pub mod webhook;");
    let main = plan.read(layout::MAIN_RS)?.unwrap_or_default();
    // A server start of an earlier rsbuilder called `webhook::serve(` itself.
    if !main.contains(".serve_webhooks(") && !main.contains("rsbuilder_runtime::webhook::serve(") {
        // Found by syntax; a duplicated marker counts as present, so the insertion reports it.
        let early_certs = !matches!(
            crate::engine::marker::locate(Path::new(layout::MAIN_RS), &main, "certificates"),
            Err(crate::engine::marker::MarkerError::Missing { .. })
        );
        if early_certs {
            plan.insert(layout::MAIN_RS, "certificates", render(&MainWebhookCerts)?);
        }
        plan.insert(
            layout::MAIN_RS,
            "webhooks",
            render(&MainWebhooks { early_certs })?,
        );
    }
    Ok(())
}

/// Registers `call` (`defaulting::<K, _>(…)`, `conversion(…)`) with the runtime's webhook
/// registry in main.rs.
pub(super) fn register(plan: &mut Plan, call: String) {
    plan.insert(
        layout::MAIN_RS,
        "webhook-registrations",
        format!("let webhooks = webhooks.{call};"),
    );
}

/// The kind's type as main.rs names it: `crate::` in the library is the crate's name there.
pub(super) fn main_path(n: &Names, type_path: &str) -> String {
    match type_path.strip_prefix("crate::") {
        Some(rest) => format!("{}::{rest}", n.crate_name),
        None => type_path.to_string(),
    }
}
