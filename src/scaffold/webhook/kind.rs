//! The files of one kind's webhooks: the version module that lists them
//! (`src/webhook/<version>/mod.rs`), and the kind's admission webhook file with a section per
//! webhook type and its tests, each webhook registered in main.rs and in the tests' registry.

use std::path::Path;

use anyhow::Result;
use askama::Template;

use super::names::Names;
use super::server::{main_path, register};
use super::templates::{
    Defaulting, DefaultingTests, KindFile, Validation, ValidationTests, VersionMod,
};
use crate::model::layout::{self, KindLayout};
use crate::scaffold::{File, Plan, render};

/// `src/webhook/<version>/mod.rs` and its module line (in a multigroup project
/// `src/webhook/<group>/<version>/mod.rs`, listed in the group's module, which
/// `src/webhook/mod.rs` lists).
pub(super) fn add_version_mod(
    plan: &mut Plan,
    n: &Names,
    files: &KindLayout,
    header: &str,
) -> Result<()> {
    if let Some(group) = &files.group {
        plan.insert(
            layout::WEBHOOK_MOD,
            "webhook-modules",
            layout::group_line(group),
        );
        plan.add(File::at(
            layout::group_mod(layout::WEBHOOK_DIR, group),
            format!(
                "{header}{}",
                render(&crate::scaffold::api::GroupModRs::webhook(group))?
            ),
        ));
    }
    plan.insert(
        files.webhook_versions_file(),
        "webhook-modules",
        format!("pub mod {};", n.version),
    );
    plan.add(File::at(
        files.webhook_version_mod(),
        format!(
            "{header}{}",
            render(&VersionMod {
                version: &n.version,
            })?
        ),
    ));
    Ok(())
}

/// The kind's webhook file (skeleton plus one section per webhook type, each with its tests),
/// its module and its routes. `force`: the file is written again from the templates.
pub(super) fn add_kind(
    plan: &mut Plan,
    n: &Names,
    files: &KindLayout,
    (defaulting, validation): (bool, bool),
    force: bool,
    header: &str,
) -> Result<()> {
    plan.insert(
        &files.webhook_version_mod().path,
        "webhook-kinds",
        format!("pub mod {};", files.webhook_module()),
    );
    // Kept when present (a second webhook type adds its section), rendered again with --force.
    let file = files.webhook();
    let path = file.path.clone();
    plan.add(File::at(
        file,
        format!("{header}{}", render(&KindFile { n })?),
    ));
    let module = format!(
        "{}::{}",
        n.crate_name,
        files.webhook_module_path(&files.webhook_module())
    );
    let kind = main_path(n, &n.type_path);
    // A kind file written before the tests through the test cluster has no registrations
    // marker in its tests: its new webhook gets the direct tests only.
    let cluster = force
        || plan
            .read(&path)?
            .is_none_or(|text| text.contains(TEST_REGISTRATIONS_MARKER));
    if cluster {
        crate::scaffold::api::ensure_test_cluster_dependency(plan)?;
    }
    if defaulting {
        plan.insert(&path, "webhook-handlers", Defaulting { n }.render()?);
        let tests = DefaultingTests { n, cluster };
        plan.insert(&path, "webhook-tests", tests.render()?);
        if cluster {
            test_register(
                plan,
                &path,
                format!(
                    "defaulting::<{}, _>(DEFAULTING_PATH, {}Webhook)",
                    n.kind, n.kind
                ),
            );
        }
        register(
            plan,
            format!(
                "defaulting::<{kind}, _>({module}::DEFAULTING_PATH, {module}::{}Webhook)",
                n.kind
            ),
        );
    }
    if validation {
        plan.insert(&path, "webhook-handlers", Validation { n }.render()?);
        let tests = ValidationTests { n, cluster };
        plan.insert(&path, "webhook-tests", tests.render()?);
        if cluster {
            test_register(
                plan,
                &path,
                format!(
                    "validating::<{}, _>(VALIDATION_PATH, {}Webhook)",
                    n.kind, n.kind
                ),
            );
        }
        register(
            plan,
            format!(
                "validating::<{kind}, _>({module}::VALIDATION_PATH, {module}::{}Webhook)",
                n.kind
            ),
        );
    }
    Ok(())
}

/// The marker in the tests of a kind's webhook file before which each webhook is registered
/// for the tests that go through the test cluster, as `src/main.rs` registers it.
const TEST_REGISTRATIONS_MARKER: &str = "+kubebuilder:scaffold:webhook-test-registrations";

/// Registers a webhook (`call`: `defaulting::<K, _>(PATH, KWebhook)`) in the `webhooks()` of
/// the tests of the kind's webhook file `path`.
fn test_register(plan: &mut Plan, path: &Path, call: String) {
    plan.insert(
        path,
        "webhook-test-registrations",
        format!("let webhooks = webhooks.{call};"),
    );
}
