//! `rsbuilder create apiserver`: the files it writes and edits, a second kind and a second
//! version joining the same server, every refusal (message, exit code, the tree byte for byte
//! unchanged), and `kubectl kustomize config/default` rendering the APIService, the Service it
//! names, the certificate, and the delegated-auth RBAC (with kubernetes-validate when
//! installed).

use crate::common;
use common::{read, rsbuilder, tree};

use std::path::{Path, PathBuf};

const DATABASE: &[&str] = &["--group", "db", "--version", "v1", "--kind", "Database"];

/// `init` for `db-operator` (domain example.com) in a fresh temp dir.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db-operator");
    std::fs::create_dir(&dir).unwrap();
    rsbuilder(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/db-operator",
        ])
        .assert()
        .success();
    (tmp, dir)
}

fn create_apiserver(dir: &Path, args: &[&str]) -> String {
    let out = rsbuilder(dir)
        .args(["create", "apiserver"])
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// Runs `create apiserver` expecting a failure: returns stderr, and asserts that the exit
/// code is non-zero and that nothing in the tree changed.
fn refused(dir: &Path, args: &[&str]) -> String {
    let before = tree(dir);
    let out = rsbuilder(dir)
        .args(["create", "apiserver"])
        .args(args)
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(before, tree(dir), "a refused command wrote files: {stderr}");
    stderr
}

#[test]
fn create_apiserver_writes_the_kind_the_server_and_its_manifests() {
    let (_tmp, dir) = project();
    let before = tree(&dir);
    let out = create_apiserver(&dir, DATABASE);
    let after = tree(&dir);
    let created: Vec<&str> = after
        .keys()
        .filter(|k| !before.contains_key(*k) && !k.starts_with(".rsbuilder/"))
        .filter(|k| !k.starts_with("rsbuilder-runtime/"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        created,
        [
            "config/apiserver/apiservice_db_example_com_v1.yaml",
            "config/apiserver/auth_delegator.yaml",
            "config/apiserver/auth_reader.yaml",
            "config/apiserver/certificate.yaml",
            "config/apiserver/deployment.yaml",
            "config/apiserver/flowcontrol_reader.yaml",
            "config/apiserver/issuer.yaml",
            "config/apiserver/kustomization.yaml",
            "config/apiserver/kustomizeconfig.yaml",
            "config/apiserver/service.yaml",
            "config/apiserver/service_account.yaml",
            "config/default/apiserver_replacements.yaml",
            "config/network-policy/allow-apiserver-traffic.yaml",
            "config/samples/db_v1_database.yaml",
            "config/samples/kustomization.yaml",
            "src/apiserver/mod.rs",
            "src/apiserver/v1/database_types.rs",
            "src/apiserver/v1/mod.rs",
            "src/bin/apiserver.rs",
        ]
    );
    let updated: Vec<&str> = after
        .iter()
        .filter(|(k, v)| before.get(*k).is_some_and(|old| old != *v))
        .map(|(k, _)| k.as_str())
        .filter(|k| !k.starts_with(".rsbuilder/"))
        .collect();
    assert_eq!(
        updated,
        [
            "Cargo.toml",
            "Dockerfile",
            "PROJECT",
            "config/default/kustomization.yaml",
            "config/network-policy/kustomization.yaml",
            "rsbuilder-runtime/Cargo.toml",
            "src/lib.rs"
        ]
    );
    assert!(out.contains("create  src/bin/apiserver.rs\n"), "{out}");
    // The runtime's server part (the API server, and the test cluster built on it) joins the
    // project's copy: `init` wrote it without.
    let full = rsbuilder::scaffold::runtime::project_files(true);
    let slim = rsbuilder::scaffold::runtime::project_files(false);
    let mut server: Vec<String> = full
        .keys()
        .filter(|p| !slim.contains_key(*p))
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    server.sort();
    assert!(
        server.contains(&"rsbuilder-runtime/src/apiserver/mod.rs".to_owned()),
        "{server:?}"
    );
    let runtime_created: Vec<String> = after
        .keys()
        .filter(|k| !before.contains_key(*k) && k.starts_with("rsbuilder-runtime/"))
        .cloned()
        .collect();
    assert_eq!(runtime_created, server);
    for (path, text) in &full {
        assert_eq!(
            read(&dir, path.to_str().unwrap()),
            *text,
            "{}",
            path.display()
        );
    }

    let types = read(&dir, "src/apiserver/v1/database_types.rs");
    for want in [
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]",
        "    group = \"db.example.com\",\n    version = \"v1\",\n    kind = \"Database\",\n    namespaced,\n    status = \"DatabaseStatus\"\n)]",
        "pub struct DatabaseSpec {",
        "pub struct DatabaseStatus {",
    ] {
        assert!(types.contains(want), "missing {want:?} in:\n{types}");
    }
    assert!(!types.contains("plural ="), "{types}");
    assert_eq!(
        read(&dir, "src/apiserver/v1/mod.rs")
            .lines()
            .filter(|l| l.starts_with("pub "))
            .collect::<Vec<_>>(),
        ["pub mod database_types;", "pub use database_types::*;"]
    );
    assert!(
        read(&dir, "src/apiserver/mod.rs")
            .contains("pub mod v1;\n// +kubebuilder:scaffold:apiserver-versions")
    );
    assert!(read(&dir, "src/lib.rs").contains("pub mod apiserver;\n"));
    let bin = read(&dir, "src/bin/apiserver.rs");
    assert!(
        bin.contains("    let mut kinds: Vec<ApiKind> = Vec::new();\n    kinds.push(ApiKind::of::<db_operator::apiserver::v1::Database>().map_err(anyhow::Error::msg)?);\n    // +kubebuilder:scaffold:apiserver-kinds\n"),
        "{bin}"
    );
    assert!(
        bin.contains("args.run(kinds, rsbuilder_runtime::axum::Router::new())"),
        "{bin}"
    );
    let cargo = read(&dir, "Cargo.toml");
    assert!(
        cargo.contains(
            "\nrsbuilder-runtime = { path = \"rsbuilder-runtime\", features = [\"apiserver\"] }\n"
        ),
        "{cargo}"
    );
    assert_image_runs_the_apiserver(&dir);
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- domain: example.com\n  group: db\n  kind: Database\n  path: crate::apiserver::v1::Database\n  version: v1\n  apiServer:\n    namespaced: true\n"),
        "{project}"
    );
    assert!(!project.contains("crdVersion"), "{project}");
    let apiservice = read(&dir, "config/apiserver/apiservice_db_example_com_v1.yaml");
    for want in [
        "kind: APIService\n",
        "  name: v1.db.example.com\n",
        "cert-manager.io/inject-ca-from: db-operator-system/db-operator-apiserver-serving-cert\n",
        "  group: db.example.com\n  version: v1\n",
        "  groupPriorityMinimum: 1000\n  versionPriority: 100\n",
        "  service:\n    name: apiserver-service\n    namespace: system\n    port: 443\n",
    ] {
        assert!(
            apiservice.contains(want),
            "missing {want:?} in:\n{apiservice}"
        );
    }
    assert!(!apiservice.contains("insecureSkipTLSVerify:"));
    assert!(read(&dir, "config/apiserver/kustomization.yaml").contains(
        "- apiservice_db_example_com_v1.yaml\n# +kubebuilder:scaffold:apiserver-resources"
    ));
    let default = read(&dir, "config/default/kustomization.yaml");
    assert!(
        default.contains("- ../apiserver\n# +kubebuilder:scaffold:default-resources"),
        "{default}"
    );
    assert!(
        default.contains("replacements:\n- path: apiserver_replacements.yaml\n# +kubebuilder:scaffold:default-sections"),
        "{default}"
    );
    assert!(read(&dir, "config/samples/kustomization.yaml").contains("- db_v1_database.yaml\n"));
    assert!(
        read(&dir, "config/samples/db_v1_database.yaml")
            .contains("apiVersion: db.example.com/v1\nkind: Database\n")
    );
}

/// The image `make docker-build` builds holds /apiserver, and config/apiserver's Deployment
/// runs it from the manager's image (the Makefile's `deploy` and `build-installer` set every
/// `image: controller:latest` to IMG). Checked on the text: no test builds the image.
fn assert_image_runs_the_apiserver(dir: &Path) {
    let docker = read(dir, "Dockerfile");
    let build = "# The aggregated API server (src/bin/apiserver.rs), which config/apiserver's Deployment runs.\nRUN cargo build --release --bin apiserver \\\n    && cp target/release/apiserver /apiserver\n# +kubebuilder:scaffold:dockerfile-builds\n";
    let copy = "COPY --from=builder /manager /manager\nCOPY --from=builder /apiserver /apiserver\n# +kubebuilder:scaffold:dockerfile-binaries\n";
    let build_at = docker.find(build).unwrap_or_else(|| panic!("{docker}"));
    let copy_at = docker.find(copy).unwrap_or_else(|| panic!("{docker}"));
    // Built in the builder stage, after the project's sources and the manager; copied into
    // the final stage.
    let final_stage = docker.find("\nFROM gcr.io/distroless/").unwrap();
    assert!(
        docker.find("COPY src/ src/").unwrap() < build_at,
        "{docker}"
    );
    assert!(build_at < final_stage && final_stage < copy_at, "{docker}");
    assert_eq!(docker.matches("--bin apiserver").count(), 1, "{docker}");
    assert_eq!(
        docker.matches("COPY --from=builder /apiserver").count(),
        1,
        "{docker}"
    );
    let deployment = read(dir, "config/apiserver/deployment.yaml");
    assert!(
        deployment
            .contains("        image: controller:latest\n        command:\n        - /apiserver\n"),
        "{deployment}"
    );
    assert!(
        read(dir, "Makefile").contains("sed -e 's|image: controller:latest|image: ${IMG}|'"),
        "the Makefile no longer sets the image of every Deployment"
    );
}

#[test]
fn a_changed_dockerfile_is_refused_with_what_to_add_by_hand() {
    let (_tmp, dir) = project();
    let path = dir.join("Dockerfile");
    let docker = read(&dir, "Dockerfile");
    let marker = "# +kubebuilder:scaffold:dockerfile-builds\n";
    assert!(docker.contains(marker), "{docker}");
    std::fs::write(&path, docker.replacen(marker, "", 1)).unwrap();
    let err = refused(&dir, DATABASE);
    for want in [
        "Dockerfile has no `# +kubebuilder:scaffold:dockerfile-builds` marker",
        "Nothing was written",
        "cargo build --release --bin apiserver",
        "COPY --from=builder /apiserver /apiserver",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    std::fs::remove_file(&path).unwrap();
    let err = refused(&dir, DATABASE);
    assert!(err.contains("Dockerfile: missing"), "{err}");
    // A Dockerfile that builds /apiserver already (added by hand) is left alone.
    let by_hand = format!(
        "{}\nRUN cargo build --release --bin apiserver && cp target/release/apiserver /apiserver\nCOPY --from=builder /apiserver /apiserver\n",
        docker.replacen(marker, "", 1)
    );
    std::fs::write(&path, &by_hand).unwrap();
    create_apiserver(&dir, DATABASE);
    assert_eq!(read(&dir, "Dockerfile"), by_hand);
}

#[test]
fn running_it_twice_refuses_without_force_and_rerenders_with_it() {
    let (_tmp, dir) = project();
    create_apiserver(&dir, DATABASE);
    let err = refused(&dir, DATABASE);
    assert!(
        err.contains("the kind db/v1 Database is already served by the API server (PROJECT); re-run with --force"),
        "{err}"
    );
    let types = dir.join("src/apiserver/v1/database_types.rs");
    std::fs::write(&types, "// edited\n").unwrap();
    let mut args = DATABASE.to_vec();
    args.push("--force");
    create_apiserver(&dir, &args);
    assert!(read(&dir, "src/apiserver/v1/database_types.rs").contains("pub struct DatabaseSpec"));
    // The inserts are not repeated.
    assert_eq!(
        read(&dir, "src/bin/apiserver.rs")
            .matches("kinds.push(")
            .count(),
        1
    );
    assert_eq!(read(&dir, "PROJECT").matches("kind: Database").count(), 1);
    assert_eq!(
        read(&dir, "config/default/kustomization.yaml")
            .matches("replacements:")
            .count(),
        1
    );
}

#[test]
fn a_second_kind_and_a_second_version_join_the_same_server() {
    let (_tmp, dir) = project();
    create_apiserver(&dir, DATABASE);
    create_apiserver(
        &dir,
        &[
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Engine",
            "--namespaced=false",
            "--plural",
            "enginez",
        ],
    );
    create_apiserver(
        &dir,
        &["--group", "db", "--version", "v2", "--kind", "Database"],
    );
    // One build of /apiserver for every kind.
    assert_image_runs_the_apiserver(&dir);
    let bin = read(&dir, "src/bin/apiserver.rs");
    for want in [
        "kinds.push(ApiKind::of::<db_operator::apiserver::v1::Database>()",
        "kinds.push(ApiKind::of::<db_operator::apiserver::v1::Engine>()",
        "kinds.push(ApiKind::of::<db_operator::apiserver::v2::Database>()",
    ] {
        assert!(bin.contains(want), "missing {want:?} in:\n{bin}");
    }
    let engine = read(&dir, "src/apiserver/v1/engine_types.rs");
    assert!(
        engine.contains("    plural = \"enginez\",\n    status"),
        "{engine}"
    );
    assert!(!engine.contains("namespaced"), "{engine}");
    assert!(
        read(&dir, "PROJECT")
            .contains("  plural: enginez\n  version: v1\n  apiServer:\n    namespaced: false\n")
    );
    let k = read(&dir, "config/apiserver/kustomization.yaml");
    assert!(
        k.contains("- apiservice_db_example_com_v1.yaml\n- apiservice_db_example_com_v2.yaml\n"),
        "{k}"
    );
    assert!(
        read(&dir, "config/apiserver/apiservice_db_example_com_v2.yaml")
            .contains("  name: v2.db.example.com\n")
    );
    assert_eq!(
        read(&dir, "src/apiserver/mod.rs")
            .lines()
            .filter(|l| l.starts_with("pub mod"))
            .collect::<Vec<_>>(),
        ["pub mod v1;", "pub mod v2;"]
    );
    // Another version keeps the kind's plural; a different one is refused by flag.
    let err = refused(
        &dir,
        &[
            "--group",
            "db",
            "--version",
            "v3",
            "--kind",
            "Engine",
            "--plural",
            "engines",
        ],
    );
    assert!(err.contains("--plural"), "{err}");
    assert!(err.contains("\"enginez\""), "{err}");
}

#[test]
fn bad_names_are_refused_by_flag_and_nothing_is_written() {
    let (_tmp, dir) = project();
    for (args, flag) in [
        (
            ["--group", "db", "--version", "v1", "--kind", "database"],
            "--kind",
        ),
        (
            ["--group", "db", "--version", "1", "--kind", "Database"],
            "--version",
        ),
        (
            ["--group", "Db_x", "--version", "v1", "--kind", "Database"],
            "--group",
        ),
        (
            ["--group", "db", "--version", "v1", "--kind", "JsonSchema"],
            "--kind",
        ),
    ] {
        let err = refused(&dir, &args);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn a_crd_kind_of_the_same_group_version_or_a_missing_project_is_refused() {
    let (_tmp, dir) = project();
    rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Backup",
        ])
        .assert()
        .success();
    let err = refused(&dir, DATABASE);
    assert!(
        err.contains("db.example.com/v1 has the CRD kind Backup (rsbuilder create api): its APIService would take the whole group-version"),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    let err = refused(empty.path(), DATABASE);
    assert!(err.contains("run `rsbuilder init` first"), "{err}");
}

/// The copy of the runtime gets the server part from the text of the rsbuilder version that
/// wrote it, so the copy stays one version's; a version rsbuilder carries no text of is
/// refused, with nothing written.
#[test]
fn the_server_part_is_the_runtime_versions_and_an_unknown_version_is_refused() {
    let (_tmp, dir) = project();
    std::fs::write(dir.join(".rsbuilder/runtime-version"), "9.9.9\n").unwrap();
    let err = refused(&dir, DATABASE);
    assert!(
        err.contains("this project's rsbuilder-runtime/ is rsbuilder 9.9.9's, and this rsbuilder"),
        "{err}"
    );
    assert!(err.contains("run `rsbuilder alpha update` first"), "{err}");
}

/// `kubectl kustomize config/default`, or `None` (skipped locally) without kubectl.
fn render_default(dir: &Path) -> Option<String> {
    let Ok(out) = std::process::Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(dir)
        .output()
    else {
        common::missing("kubectl is not installed: the kustomize render of config/apiserver");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The rendered objects of `yaml` (a multi-document stream) as JSON values.
fn objects(yaml: &str) -> Vec<serde_json::Value> {
    yaml.split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<serde_json::Value>(doc).unwrap())
        .collect()
}

fn find<'a>(objs: &'a [serde_json::Value], kind: &str, name: &str) -> &'a serde_json::Value {
    objs.iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn config_default_renders_the_apiservice_its_service_certificate_and_auth_rbac() {
    let (_tmp, dir) = project();
    create_apiserver(&dir, DATABASE);
    let Some(yaml) = render_default(&dir) else {
        return;
    };
    let objs = objects(&yaml);
    let svc = find(&objs, "APIService", "v1.db.example.com");
    assert_eq!(
        svc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "db-operator-system/db-operator-apiserver-serving-cert"
    );
    assert_eq!(
        svc["spec"],
        serde_json::json!({
            "group": "db.example.com",
            "version": "v1",
            "groupPriorityMinimum": 1000,
            "versionPriority": 100,
            "service": {"name": "db-operator-apiserver-service", "namespace": "db-operator-system", "port": 443},
        })
    );
    // The Service, Certificate and Deployment the APIService depends on exist under those names.
    let service = find(&objs, "Service", "db-operator-apiserver-service");
    assert_eq!(service["metadata"]["namespace"], "db-operator-system");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 8443);
    let cert = find(&objs, "Certificate", "db-operator-apiserver-serving-cert");
    assert_eq!(cert["metadata"]["namespace"], "db-operator-system");
    assert_eq!(
        cert["spec"]["dnsNames"],
        serde_json::json!([
            "db-operator-apiserver-service.db-operator-system.svc",
            "db-operator-apiserver-service.db-operator-system.svc.cluster.local"
        ])
    );
    assert_eq!(
        cert["spec"]["issuerRef"]["name"],
        "db-operator-apiserver-selfsigned-issuer"
    );
    let deploy = find(&objs, "Deployment", "db-operator-apiserver");
    let pod = &deploy["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "db-operator-apiserver");
    assert_eq!(
        pod["containers"][0]["command"],
        serde_json::json!(["/apiserver"])
    );
    // In the cluster, callers are authenticated and authorized through the cluster.
    assert!(
        pod["containers"][0]["args"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("--delegated-auth")),
        "{}",
        pod["containers"][0]["args"]
    );
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "apiserver-serving-cert"
    );
    assert_eq!(
        service["spec"]["selector"],
        deploy["spec"]["template"]["metadata"]["labels"]
    );
    // Delegated authentication and authorization.
    let delegator = find(
        &objs,
        "ClusterRoleBinding",
        "db-operator-apiserver-auth-delegator",
    );
    assert_eq!(delegator["roleRef"]["name"], "system:auth-delegator");
    let sa = serde_json::json!([{"kind": "ServiceAccount", "name": "db-operator-apiserver", "namespace": "db-operator-system"}]);
    assert_eq!(delegator["subjects"], sa);
    // Priority and fairness from the cluster: its objects read, never written.
    assert!(
        pod["containers"][0]["args"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("--flowcontrol-source=cluster")),
        "{}",
        pod["containers"][0]["args"]
    );
    let fc_role = find(
        &objs,
        "ClusterRole",
        "db-operator-apiserver-flowcontrol-reader",
    );
    assert_eq!(
        fc_role["rules"],
        serde_json::json!([{
            "apiGroups": ["flowcontrol.apiserver.k8s.io"],
            "resources": ["flowschemas", "prioritylevelconfigurations"],
            "verbs": ["get", "list", "watch"]
        }])
    );
    let fc_binding = find(
        &objs,
        "ClusterRoleBinding",
        "db-operator-apiserver-flowcontrol-reader",
    );
    assert_eq!(
        fc_binding["roleRef"]["name"],
        "db-operator-apiserver-flowcontrol-reader"
    );
    assert_eq!(fc_binding["subjects"], sa);
    let reader = find(&objs, "RoleBinding", "db-operator-apiserver-auth-reader");
    assert_eq!(reader["metadata"]["namespace"], "kube-system");
    assert_eq!(
        reader["roleRef"]["name"],
        "extension-apiserver-authentication-reader"
    );
    assert_eq!(reader["subjects"], sa);
    find(&objs, "ServiceAccount", "db-operator-apiserver");

    // The render against the Kubernetes schema (kubernetes-validate, as tests/manifest_validation).
    let ok = std::process::Command::new("kubernetes-validate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::missing("kubernetes-validate is not installed (pip install kubernetes-validate)");
        return;
    }
    let file = dir.join("render.yaml");
    std::fs::write(&file, &yaml).unwrap();
    let out = std::process::Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", "1.37.0"])
        .arg(&file)
        .output()
        .unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("passed for resource apiservice/v1.db.example.com against version 1.37"),
        "{report}"
    );
}

#[test]
fn create_api_refuses_a_group_version_the_api_server_serves() {
    let (_tmp, dir) = project();
    create_apiserver(&dir, DATABASE);
    let before = tree(&dir);
    let out = rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Backup",
        ])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("db/v1 is served by the project's aggregated API server (the kind Database"),
        "{err}"
    );
    assert_eq!(before, tree(&dir));
}

#[test]
fn manifests_writes_no_crd_for_a_served_kind() {
    let (_tmp, dir) = project();
    create_apiserver(
        &dir,
        &["--group", "db", "--version", "v1", "--kind", "Database"],
    );
    rsbuilder(&dir)
        .args([
            "create",
            "api",
            "--group",
            "ops",
            "--version",
            "v1",
            "--kind",
            "Backup",
        ])
        .assert()
        .success();
    let out = rsbuilder(&dir).arg("manifests").assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(
            "Database.db.example.com: served by the aggregated API server (PROJECT `apiServer`), no CRD"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let bases: Vec<String> = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(bases, ["ops.example.com_backups.yaml"]);
    rsbuilder(&dir)
        .args(["manifests", "--check"])
        .assert()
        .success();
}

/// Both orders of `create apiserver` and `create webhook` leave config/default with one
/// `replacements:` list (kustomize refuses a second key) that holds both commands' entries.
#[test]
fn apiserver_and_webhook_share_one_replacements_list_in_either_order() {
    for apiserver_first in [true, false] {
        let (_tmp, dir) = project();
        let api = || {
            rsbuilder(&dir)
                .args([
                    "create",
                    "api",
                    "--group",
                    "ops",
                    "--version",
                    "v1",
                    "--kind",
                    "Backup",
                ])
                .assert()
                .success();
        };
        let webhook = || {
            rsbuilder(&dir)
                .args([
                    "create",
                    "webhook",
                    "--group",
                    "ops",
                    "--version",
                    "v1",
                    "--kind",
                    "Backup",
                    "--defaulting",
                ])
                .assert()
                .success();
        };
        api();
        if apiserver_first {
            create_apiserver(&dir, DATABASE);
            webhook();
        } else {
            webhook();
            create_apiserver(&dir, DATABASE);
        }
        let text = read(&dir, "config/default/kustomization.yaml");
        let keys = text
            .lines()
            .filter(|l| l.starts_with("replacements:"))
            .count();
        assert_eq!(keys, 1, "apiserver first: {apiserver_first}\n{text}");
        assert!(
            text.contains("- path: apiserver_replacements.yaml"),
            "{text}"
        );
        assert!(text.contains("name: webhook-service"), "{text}");
        rsbuilder(&dir).arg("manifests").assert().success();
        let Some(yaml) = render_default(&dir) else {
            return;
        };
        let objs = objects(&yaml);
        // The webhook's Certificate got its DNS names from the replacements.
        let cert = find(&objs, "Certificate", "db-operator-serving-cert");
        assert_eq!(
            cert["spec"]["dnsNames"][0], "db-operator-webhook-service.db-operator-system.svc",
            "apiserver first: {apiserver_first}"
        );
        find(&objs, "APIService", "v1.db.example.com");
    }
}

/// Every kind name the generated Rust already uses is refused by `create apiserver` too,
/// with the reason `create api` gives.
#[test]
fn every_reserved_kind_is_refused_with_its_reason() {
    let (_tmp, dir) = project();
    for name in rsbuilder::model::reserved::names() {
        let stderr = refused(&dir, &["--group", "db", "--version", "v1", "--kind", name]);
        let why = rsbuilder::model::reserved::reason(name).unwrap();
        assert!(
            stderr.contains("--kind") && stderr.contains(&why),
            "{name}: {stderr}"
        );
        assert!(stderr.contains("choose another kind"), "{stderr}");
    }
}

/// `create webhook` for a kind the aggregated API server serves says why it cannot: webhooks
/// are for CRD kinds, and names the kind and where its admission lives.
#[test]
fn a_webhook_for_a_served_kind_is_refused_naming_the_api_server() {
    let (_tmp, dir) = project();
    create_apiserver(&dir, DATABASE);
    let before = tree(&dir);
    let out = rsbuilder(&dir)
        .args(["create", "webhook"])
        .args(DATABASE)
        .arg("--defaulting")
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    for want in [
        "db/v1 Database is served by this project's aggregated API server",
        "for CRD kinds only",
        "admission lives in the API server",
    ] {
        assert!(stderr.contains(want), "{want:?} not in:\n{stderr}");
    }
    assert!(!stderr.contains("create it first"), "{stderr}");
    assert_eq!(before, tree(&dir), "a refused command wrote files");
}

/// `rsbuilder create --help` (and the command list of `rsbuilder --help`) name `apiserver`
/// in the summary of `create`.
#[test]
fn create_help_mentions_apiserver() {
    let tmp = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let out = rsbuilder(tmp.path()).args(args).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let create = help(&["create", "--help"]);
    let summary = &create[..create.find("Usage:").unwrap()];
    assert!(summary.contains("apiserver"), "{create}");
    let top = help(&["--help"]);
    let line = top
        .lines()
        .find(|l| l.trim_start().starts_with("create "))
        .unwrap_or_else(|| panic!("{top}"));
    assert!(line.contains("(apiserver)"), "{top}");
}
