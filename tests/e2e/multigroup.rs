//! End to end: a multigroup project (`init --multigroup`) with the same kind, `Frigate`, in
//! two groups, each with its controller, a defaulting webhook on one and a validating one on
//! the other, and a second version of one with a conversion webhook. The generated project
//! builds, passes its own tests and clippy with no edit; `rsbuilder manifests` writes both
//! CRDs from the nested modules.
//!
//! Runs with CI=true or RSBUILDER_E2E=1 (minutes of compiling); RSBUILDER_SKIP_E2E=1 skips it
//! (a failure under CI=true). Builds share one target directory: `RSBUILDER_E2E_TARGET_DIR`,
//! default `<repo>/target/e2e`.

use crate::common;
use common::e2e::{cargo_ok as cargo, describe};

use std::path::Path;

fn rsbuilder_ok(dir: &Path, args: &[&str]) {
    let out = common::rsbuilder(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("rsbuilder {args:?}"), dir, &out)
    );
}

#[test]
fn a_multigroup_project_with_one_kind_in_two_groups_builds_and_passes_its_tests() {
    let Some(_serial) = common::e2e::opted_in() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/fleet",
            "--multigroup",
        ],
    );
    for group in ["ship", "sea"] {
        let gvk = ["--group", group, "--version", "v1", "--kind", "Frigate"];
        rsbuilder_ok(&dir, &[&["create", "api"][..], &gvk].concat());
        let hook = if group == "ship" {
            "--defaulting"
        } else {
            "--programmatic-validation"
        };
        rsbuilder_ok(&dir, &[&["create", "webhook"][..], &gvk, &[hook]].concat());
    }
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v2",
            "--kind",
            "Frigate",
            "--controller=false",
        ],
    );
    rsbuilder_ok(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--conversion",
            "--spoke",
            "v2",
        ],
    );
    for f in [
        "src/api/ship/v1/frigate_types.rs",
        "src/api/sea/v1/frigate_types.rs",
        "src/controller/ship/frigate_controller.rs",
        "src/controller/sea/frigate_controller.rs",
        "src/webhook/ship/v1/frigate_webhook.rs",
        "src/webhook/ship/v1/frigate_conversion.rs",
        "src/webhook/sea/v1/frigate_webhook.rs",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }

    // The controllers' tests run on the test cluster, which reads the CRDs `manifests` writes
    // (`make test` runs it first).
    rsbuilder_ok(&dir, &["manifests"]);
    cargo(&dir, &["build"]);
    cargo(&dir, &["test"]);
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);

    for crd in [
        "config/crd/bases/ship.example.com_frigates.yaml",
        "config/crd/bases/sea.example.com_frigates.yaml",
    ] {
        assert!(
            dir.join(crd).is_file(),
            "`rsbuilder manifests` wrote no {crd}"
        );
    }
    let ship = std::fs::read_to_string(dir.join("config/crd/bases/ship.example.com_frigates.yaml"))
        .unwrap();
    assert!(ship.contains("  - name: v2\n"), "{ship}");
}
