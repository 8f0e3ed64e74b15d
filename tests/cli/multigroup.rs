//! Kubebuilder's multigroup layout: `init --multigroup`, `create api` / `create webhook` in
//! two groups (the same kind in both), and `edit --multigroup=true|false` moving an existing
//! project over and back. Scaffold trees and contents, the refusals (nothing written), and
//! that every `pub mod` line has its file. No generated project is compiled here (see
//! tests/e2e/multigroup.rs).

use crate::common;
use common::{read, rsbuilder, tree};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `rsbuilder init --domain example.com` (with `extra` flags) in a fresh directory `fleet`.
fn init(extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    ok(
        &dir,
        &[&["init", "--domain", "example.com"][..], extra].concat(),
    );
    (tmp, dir)
}

/// Runs rsbuilder in `dir`, asserting success; returns stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = rsbuilder(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rsbuilder {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs rsbuilder in `dir`, asserting exit code 1 and that nothing changed; returns stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let before = tree(dir);
    let out = rsbuilder(dir).args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "rsbuilder {args:?}:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(tree(dir), before, "a refused command wrote");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn api(group: &str, version: &str, kind: &str) -> Vec<String> {
    [
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ]
    .map(String::from)
    .to_vec()
}

fn run(dir: &Path, args: Vec<String>, extra: &[&str]) -> String {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(extra);
    ok(dir, &all)
}

/// Every `pub mod x;` line of every Rust source under `src/` has its file (`x.rs` or
/// `x/mod.rs` beside a `mod.rs`/`lib.rs`), and every Rust file below `src/` (besides the
/// crate roots and `src/bin/`) is declared by its parent module: nothing is left unlinked.
fn assert_module_tree_complete(dir: &Path) {
    let files: BTreeMap<String, Vec<u8>> = tree(dir)
        .into_iter()
        .filter(|(p, _)| p.starts_with("src/") && p.ends_with(".rs"))
        .collect();
    let mut declared = vec!["src/lib.rs".to_string(), "src/main.rs".to_string()];
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        let base = if path.ends_with("/mod.rs") || path == "src/lib.rs" || path == "src/main.rs" {
            Path::new(path).parent().unwrap().to_path_buf()
        } else {
            Path::new(path).with_extension("")
        };
        for line in text.lines() {
            let Some(name) = line
                .trim()
                .strip_prefix("pub mod ")
                .and_then(|l| l.strip_suffix(';'))
            else {
                continue;
            };
            let flat = base.join(format!("{name}.rs"));
            let nested = base.join(name).join("mod.rs");
            let found = [&flat, &nested]
                .into_iter()
                .map(|p| p.to_string_lossy().into_owned())
                .find(|p| files.contains_key(p));
            let Some(found) = found else {
                panic!(
                    "{path}: `pub mod {name};` has no file ({} or {})",
                    flat.display(),
                    nested.display()
                );
            };
            declared.push(found);
        }
    }
    for path in files.keys() {
        if path.starts_with("src/bin/") {
            continue;
        }
        assert!(declared.contains(path), "{path} is in no module tree");
    }
}

#[test]
fn init_multigroup_records_it_in_project() {
    let (_tmp, dir) = init(&["--multigroup"]);
    let project = read(&dir, "PROJECT");
    assert!(project.contains("\nmultigroup: true\n"), "{project}");
    let (_tmp, single) = init(&[]);
    assert!(!read(&single, "PROJECT").contains("multigroup"));
}

#[test]
fn the_same_kind_in_two_groups_gets_directories_of_its_own() {
    let (_tmp, dir) = init(&["--multigroup"]);
    let out = run(&dir, api("ship", "v1", "Frigate"), &[]);
    assert!(out.contains("src/api/ship/v1/frigate_types.rs"), "{out}");
    run(&dir, api("sea", "v1", "Frigate"), &[]);
    let files = tree(&dir);
    for f in [
        "src/api/mod.rs",
        "src/api/ship/mod.rs",
        "src/api/ship/v1/mod.rs",
        "src/api/ship/v1/frigate_types.rs",
        "src/api/sea/mod.rs",
        "src/api/sea/v1/frigate_types.rs",
        "src/controller/mod.rs",
        "src/controller/ship/mod.rs",
        "src/controller/ship/frigate_controller.rs",
        "src/controller/sea/mod.rs",
        "src/controller/sea/frigate_controller.rs",
        "config/rbac/ship_frigate_admin_role.yaml",
        "config/rbac/sea_frigate_viewer_role.yaml",
        "config/samples/ship_v1_frigate.yaml",
        "config/samples/sea_v1_frigate.yaml",
    ] {
        assert!(files.contains_key(f), "{f} missing: {:?}", files.keys());
    }
    assert!(!files.contains_key("src/api/v1/mod.rs"));
    let api_mod = read(&dir, "src/api/mod.rs");
    assert!(
        api_mod.contains("pub mod sea;\npub mod ship;\n"),
        "{api_mod}"
    );
    assert!(api_mod.contains("one module per API group"), "{api_mod}");
    assert!(read(&dir, "src/api/ship/mod.rs").contains("pub mod v1;\n"));
    assert!(
        read(&dir, "src/api/ship/v1/mod.rs")
            .contains("pub mod frigate_types;\npub use frigate_types::*;\n")
    );
    let controllers = read(&dir, "src/controller/mod.rs");
    assert!(
        controllers.contains("pub mod sea;\npub mod ship;\n"),
        "{controllers}"
    );
    let ship = read(&dir, "src/controller/ship/frigate_controller.rs");
    assert!(
        ship.contains("use crate::api::ship::v1::Frigate;\n"),
        "{ship}"
    );
    assert!(ship.contains("\"ship-frigate-controller\""), "{ship}");
    assert!(
        ship.contains("Some(\"ship.example.com/finalizer\")"),
        "{ship}"
    );
    let sea = read(&dir, "src/controller/sea/frigate_controller.rs");
    assert!(sea.contains("use crate::api::sea::v1::Frigate;\n"), "{sea}");
    assert!(sea.contains("\"sea-frigate-controller\""), "{sea}");
    let main = read(&dir, "src/main.rs");
    assert!(
        main.contains("fleet::controller::ship::frigate_controller::FrigateReconciler,"),
        "{main}"
    );
    assert!(
        main.contains("fleet::controller::sea::frigate_controller::FrigateReconciler,"),
        "{main}"
    );
    let role = read(&dir, "config/rbac/ship_frigate_admin_role.yaml");
    assert!(role.contains("  name: ship-frigate-admin-role\n"), "{role}");
    assert!(role.contains("  - ship.example.com\n"), "{role}");
    let rbac = read(&dir, "config/rbac/kustomization.yaml");
    assert!(rbac.contains("- sea_frigate_editor_role.yaml\n"), "{rbac}");
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("path: crate::api::ship::v1::Frigate\n"),
        "{project}"
    );
    assert!(
        project.contains("path: crate::api::sea::v1::Frigate\n"),
        "{project}"
    );
    assert_module_tree_complete(&dir);

    // manifests finds both kinds in the nested modules.
    ok(&dir, &["manifests"]);
    let files = tree(&dir);
    for crd in [
        "config/crd/bases/ship.example.com_frigates.yaml",
        "config/crd/bases/sea.example.com_frigates.yaml",
    ] {
        assert!(files.contains_key(crd), "{crd} missing: {:?}", files.keys());
    }
    let role = read(&dir, "config/rbac/role.yaml");
    assert!(
        role.contains("- sea.example.com\n") && role.contains("- ship.example.com\n"),
        "{role}"
    );
}

#[test]
fn webhooks_named_and_image_controllers_and_builtin_types_follow_the_layout() {
    let (_tmp, dir) = init(&["--multigroup"]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    run(&dir, api("ship", "v2", "Frigate"), &["--controller=false"]);
    run(&dir, api("sea", "v1", "Frigate"), &[]);
    let hook = |g: &str, extra: &[&str]| {
        let mut args = vec![
            "create",
            "webhook",
            "--group",
            g,
            "--version",
            "v1",
            "--kind",
            "Frigate",
        ];
        args.extend(extra);
        ok(&dir, &args)
    };
    hook("ship", &["--defaulting", "--conversion", "--spoke", "v2"]);
    hook("sea", &["--programmatic-validation"]);
    run(
        &dir,
        api("ship", "v1", "Frigate"),
        &["--resource=false", "--controller-name", "frigate-backup"],
    );
    run(
        &dir,
        api("cache", "v1alpha1", "Memcached"),
        &["--image", "memcached:1.6"],
    );
    run(&dir, api("core", "v1", "Pod"), &["--resource=false"]);
    let files = tree(&dir);
    for f in [
        "src/webhook/mod.rs",
        "src/webhook/ship/mod.rs",
        "src/webhook/ship/v1/mod.rs",
        "src/webhook/ship/v1/frigate_webhook.rs",
        "src/webhook/ship/v1/frigate_conversion.rs",
        "src/webhook/sea/v1/frigate_webhook.rs",
        "src/controller/ship/frigate_backup_controller.rs",
        "src/controller/cache/memcached_controller.rs",
        "src/controller/core/pod_controller.rs",
        "config/crd/patches/webhook_in_ship_frigates.yaml",
    ] {
        assert!(files.contains_key(f), "{f} missing: {:?}", files.keys());
    }
    let main = read(&dir, "src/main.rs");
    for wired in [
        "defaulting::<fleet::api::ship::v1::Frigate, _>(\n        fleet::webhook::ship::v1::frigate_webhook::DEFAULTING_PATH,\n",
        "validating::<fleet::api::sea::v1::Frigate, _>(\n        fleet::webhook::sea::v1::frigate_webhook::VALIDATION_PATH,\n",
        "conversion(fleet::webhook::ship::v1::frigate_conversion::conversion())",
        "fleet::controller::ship::frigate_backup_controller::FrigateBackupReconciler,",
        "fleet::controller::cache::memcached_controller::MemcachedReconciler,",
        "fleet::controller::core::pod_controller::PodReconciler,",
    ] {
        assert!(main.contains(wired), "{wired} not in main.rs:\n{main}");
    }
    let conversion = read(&dir, "src/webhook/ship/v1/frigate_conversion.rs");
    assert!(
        conversion.contains("pub type Hub = crate::api::ship::v1::Frigate;"),
        "{conversion}"
    );
    assert!(
        conversion.contains("crate::api::ship::v2::Frigate"),
        "{conversion}"
    );
    let crd = read(&dir, "config/crd/kustomization.yaml");
    assert!(
        crd.contains("- path: patches/webhook_in_ship_frigates.yaml\n"),
        "{crd}"
    );
    assert!(read(&dir, "src/webhook/mod.rs").contains("pub mod sea;"));
    assert_module_tree_complete(&dir);
}

#[test]
fn a_second_group_in_a_single_group_project_is_refused_with_the_command_to_run() {
    let (_tmp, dir) = init(&[]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    let err = refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "sea",
            "--version",
            "v1",
            "--kind",
            "Buoy",
        ],
    );
    assert!(err.contains("--group"), "{err}");
    assert!(err.contains("the group ship"), "{err}");
    assert!(err.contains("rsbuilder edit --multigroup=true"), "{err}");
    // A built-in type's controller has no API: allowed in any layout.
    run(&dir, api("core", "v1", "Pod"), &["--resource=false"]);
    assert!(tree(&dir).contains_key("src/controller/pod_controller.rs"));
}

#[test]
fn a_group_that_is_no_rust_module_is_refused_in_multigroup() {
    let (_tmp, dir) = init(&["--multigroup"]);
    let err = refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "type",
            "--version",
            "v1",
            "--kind",
            "Buoy",
        ],
    );
    assert!(err.contains("Rust keyword"), "{err}");
    let err = refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "9ers",
            "--version",
            "v1",
            "--kind",
            "Buoy",
        ],
    );
    assert!(err.contains("start with a letter"), "{err}");
}

/// The commands of a single-group project with one group: two versions of a kind with
/// defaulting and conversion webhooks, a named controller, a second kind.
fn scaffold_one_group(dir: &Path) {
    run(dir, api("ship", "v1", "Frigate"), &[]);
    run(dir, api("ship", "v2", "Frigate"), &["--controller=false"]);
    run(dir, api("ship", "v1", "Dock"), &["--namespaced=false"]);
    ok(
        dir,
        &[
            "create",
            "webhook",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--defaulting",
            "--conversion",
            "--spoke",
            "v2",
        ],
    );
    run(
        dir,
        api("ship", "v1", "Frigate"),
        &["--resource=false", "--controller-name", "frigate-backup"],
    );
    // A controller for a built-in type: no API, its file only, in its own group's directory
    // in the multigroup layout.
    run(dir, api("core", "v1", "Pod"), &["--resource=false"]);
}

#[test]
fn edit_multigroup_moves_a_project_over_as_if_made_multigroup_and_back_byte_for_byte() {
    let (_a, dir) = init(&[]);
    scaffold_one_group(&dir);
    // The user's code in a moved file and a file of their own in a moved directory.
    let types = "src/api/v1/frigate_types.rs";
    let text = read(&dir, types).replacen(
        "pub struct FrigateSpec {",
        "pub struct FrigateSpec {\n    /// The user's field.\n    pub crew: Option<i32>,",
        1,
    );
    std::fs::write(dir.join(types), text).unwrap();
    let single = tree(&dir);

    let out = ok(&dir, &["edit", "--multigroup=true"]);
    assert!(
        out.contains("moved   src/api/v1/frigate_types.rs -> src/api/ship/v1/frigate_types.rs"),
        "{out}"
    );
    assert!(out.contains("multigroup layout"), "{out}");
    assert!(read(&dir, "src/api/ship/v1/frigate_types.rs").contains("pub crew: Option<i32>"));
    assert_module_tree_complete(&dir);

    // The same commands in a project made multigroup: the same tree, except the controllers'
    // names (kept by the switch: the name is the field manager of what they applied) and the
    // user's field.
    let (_b, fresh) = init(&["--multigroup"]);
    scaffold_one_group(&fresh);
    let (moved, made) = (tree(&dir), tree(&fresh));
    assert_eq!(
        moved.keys().collect::<Vec<_>>(),
        made.keys().collect::<Vec<_>>()
    );
    let differing: Vec<&String> = moved.keys().filter(|k| moved[*k] != made[*k]).collect();
    assert_eq!(
        differing,
        [
            "src/api/ship/v1/frigate_types.rs",
            "src/controller/core/pod_controller.rs",
            "src/controller/ship/dock_controller.rs",
            "src/controller/ship/frigate_controller.rs",
        ]
    );
    let controller =
        String::from_utf8_lossy(&moved["src/controller/ship/frigate_controller.rs"]).into_owned();
    assert!(
        controller.contains("\"frigate-controller\""),
        "{controller}"
    );
    assert!(
        controller.contains("use crate::api::ship::v1::Frigate;"),
        "{controller}"
    );
    assert!(
        out.contains(
            "moved   src/controller/pod_controller.rs -> src/controller/core/pod_controller.rs"
        ),
        "{out}"
    );
    assert!(
        read(&dir, "src/main.rs").contains("controller::core::pod_controller::PodReconciler"),
        "the built-in type's controller is started from its new module"
    );

    // Again: nothing to do.
    let again = ok(&dir, &["edit", "--multigroup=true"]);
    assert!(
        again.contains("already has the multigroup layout"),
        "{again}"
    );

    // And back.
    ok(&dir, &["edit", "--multigroup=false"]);
    let back = tree(&dir);
    let differing: Vec<&String> = back
        .keys()
        .chain(single.keys())
        .filter(|k| back.get(*k) != single.get(*k))
        .collect();
    assert!(
        differing.is_empty(),
        "differ after the round trip: {differing:?}"
    );
}

#[test]
fn edit_multigroup_refuses_a_reference_it_did_not_write_and_names_it() {
    let (_a, dir) = init(&[]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    std::fs::write(
        dir.join("src/fleet_util.rs"),
        "//! The user's helpers.\n\npub fn kind() -> &'static str {\n    <crate::api::v1::Frigate as kube::Resource>::KIND\n}\n",
    )
    .unwrap();
    let lib =
        read(&dir, "src/lib.rs").replacen("pub mod api;", "pub mod api;\npub mod fleet_util;", 1);
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let err = refused(&dir, &["edit", "--multigroup=true"]);
    assert!(
        err.contains("src/fleet_util.rs:4: names the module `api::v1`"),
        "{err}"
    );
    assert!(err.contains("`api::ship::v1`"), "{err}");
    assert!(err.contains("Nothing was changed"), "{err}");
}

#[test]
fn edit_multigroup_refuses_a_module_line_not_where_the_scaffold_put_it() {
    let (_a, dir) = init(&[]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    let controllers = read(&dir, "src/controller/mod.rs").replace(
        "pub mod frigate_controller;",
        "pub(crate) mod frigate_controller;",
    );
    std::fs::write(dir.join("src/controller/mod.rs"), controllers).unwrap();
    let err = refused(&dir, &["edit", "--multigroup=true"]);
    assert!(
        err.contains("src/controller/mod.rs: lacks the line `pub mod frigate_controller;`"),
        "{err}"
    );
}

#[test]
fn edit_multigroup_false_with_two_groups_is_refused() {
    let (_a, dir) = init(&["--multigroup"]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    run(&dir, api("sea", "v1", "Frigate"), &[]);
    let err = refused(&dir, &["edit", "--multigroup=false"]);
    assert!(err.contains("the groups sea, ship"), "{err}");
}

#[test]
fn edit_multigroup_false_refuses_two_groups_controllers_of_one_file_name() {
    let (_a, dir) = init(&["--multigroup"]);
    run(&dir, api("ship", "v1", "Service"), &[]);
    run(&dir, api("core", "v1", "Service"), &["--resource=false"]);
    let err = refused(&dir, &["edit", "--multigroup=false"]);
    assert!(
        err.contains(
            "the controllers service_controller of the groups ship and core would both be src/controller/service_controller.rs"
        ),
        "{err}"
    );
}

#[test]
fn edit_multigroup_on_a_fresh_project_only_sets_project() {
    let (_a, dir) = init(&[]);
    let out = ok(&dir, &["edit", "--multigroup"]);
    assert!(out.contains("update  PROJECT"), "{out}");
    let (_b, fresh) = init(&["--multigroup"]);
    assert_eq!(read(&dir, "PROJECT"), read(&fresh, "PROJECT"));
}

#[test]
fn alpha_generate_reproduces_a_multigroup_project() {
    let (tmp, dir) = init(&["--multigroup"]);
    run(&dir, api("ship", "v1", "Frigate"), &[]);
    run(&dir, api("sea", "v1", "Frigate"), &[]);
    ok(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "sea",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--defaulting",
        ],
    );
    run(
        &dir,
        api("ship", "v1", "Frigate"),
        &["--resource=false", "--controller-name", "frigate-backup"],
    );
    ok(&dir, &["manifests"]);
    let out_dir = tmp.path().join("regenerated");
    ok(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    let (before, mut after) = (tree(&dir), tree(&out_dir));
    // The record `alpha generate` keeps of the scaffold it wrote.
    after.retain(|p, _| !p.starts_with(".rsbuilder/scaffold/"));
    let differing: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(differing.is_empty(), "differ: {differing:?}");
}
