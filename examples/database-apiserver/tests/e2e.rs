// Copyright 2026.
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

//! End to end, against a real cluster: deploys the manager with kustomize (`config/default`,
//! with the image `IMG`), waits until it is available, creates every sample of
//! `config/samples/` and waits for those of kinds with a controller (`controller: true` in
//! PROJECT) to be `Ready`, then reads the manager's metrics with a token of its service account.
//! A kind without a controller, or served by the project's aggregated API server, has nothing
//! that sets its `Ready` condition.
//!
//! Needs a cluster that KUBECONFIG points at, `kubectl`, and the image loaded into the cluster:
//! `make test-e2e` builds the image, loads it into the kind cluster `KIND_CLUSTER` and runs
//! these tests. Without a cluster they are ignored: `cargo test` skips them.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The namespace `config/default` deploys into.
const NAMESPACE: &str = "database-apiserver-system";
/// The prefix `config/default` gives every object's name.
const PREFIX: &str = "database-apiserver-";
/// The image `config/manager/manager.yaml` names, replaced by `IMG`.
const DEFAULT_IMAGE: &str = "controller:latest";

/// Runs `kubectl` with `args` (and `stdin`), returning its standard output. Panics with
/// kubectl's error output when it fails.
fn kubectl(args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kubectl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run kubectl (is it installed?): {e}"));
    let mut input = child.stdin.take().expect("stdin is piped");
    if let Some(text) = stdin {
        input
            .write_all(text.as_bytes())
            .expect("writing to kubectl");
    }
    drop(input);
    let out = child.wait_with_output().expect("waiting for kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Panics unless KUBECONFIG names a cluster to test against.
fn require_cluster() {
    if std::env::var_os("KUBECONFIG").is_none_or(|k| k.is_empty()) {
        panic!("KUBECONFIG is not set: point it at a test cluster (`make test-e2e` does)");
    }
}

/// Deploys `config/default` with the image `IMG` and waits for the manager's Deployment.
fn deploy() {
    let image = std::env::var("IMG").unwrap_or_else(|_| DEFAULT_IMAGE.to_string());
    let rendered = kubectl(&["kustomize", "config/default"], None).replace(
        &format!("image: {DEFAULT_IMAGE}"),
        &format!("image: {image}"),
    );
    kubectl(&["apply", "-f", "-"], Some(&rendered));
    let deployment = format!("deployment/{PREFIX}controller-manager");
    kubectl(
        &[
            "rollout",
            "status",
            &deployment,
            "-n",
            NAMESPACE,
            "--timeout=180s",
        ],
        None,
    );
}

/// The sample files of `config/samples/` (none before `rsbuilder create api`).
fn samples() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(Path::new("config/samples")) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml")
                && p.file_name().is_some_and(|n| n != "kustomization.yaml")
        })
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

/// The (API group, kind) of every resource the text of PROJECT records with
/// `controller: true`: the kinds the manager reconciles. PROJECT is the file rsbuilder writes,
/// one `key: value` per line under `resources:`, each resource opening with `- `.
fn reconciled_kinds(project: &str) -> Vec<(String, String)> {
    let mut kinds = Vec::new();
    let mut resource: Vec<(String, String)> = Vec::new();
    let mut finish = |resource: &mut Vec<(String, String)>| {
        let get = |key: &str| {
            resource
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        if get("controller") == "true" {
            let group = match (get("group"), get("domain")) {
                (g, d) if d.is_empty() => g,
                (g, d) if g.is_empty() => d,
                (g, d) => format!("{g}.{d}"),
            };
            kinds.push((group, get("kind")));
        }
        resource.clear();
    };
    let mut in_resources = false;
    for line in project.lines() {
        if !line.starts_with([' ', '-']) {
            finish(&mut resource);
            in_resources = line.trim_end() == "resources:";
            continue;
        }
        if !in_resources {
            continue;
        }
        let entry = match line.strip_prefix("- ") {
            Some(rest) => {
                finish(&mut resource);
                rest
            }
            None => line.trim_start(),
        };
        // Only the resource's own keys (two spaces deep), not those of nested maps.
        let own_key =
            line.starts_with("- ") || (line.starts_with("  ") && !line.starts_with("   "));
        if own_key && let Some((key, value)) = entry.split_once(':') {
            resource.push((key.trim().into(), value.trim().trim_matches('"').into()));
        }
    }
    finish(&mut resource);
    kinds
}

/// The (API group, kind) of a sample file: its top-level `apiVersion` and `kind`.
fn sample_kind(text: &str) -> (String, String) {
    let top = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let api_version = top("apiVersion:");
    let group = api_version
        .rsplit_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default();
    (group, top("kind:"))
}

/// Reads `/metrics` over HTTPS from a pod in the cluster, with a token of the manager's
/// service account bound to the `metrics-reader` role, and returns the response.
fn metrics() -> String {
    let account = format!("{PREFIX}controller-manager");
    let binding = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {PREFIX}e2e-metrics-reader\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {PREFIX}metrics-reader\nsubjects:\n- kind: ServiceAccount\n  name: {account}\n  namespace: {NAMESPACE}\n"
    );
    kubectl(&["apply", "-f", "-"], Some(&binding));
    // Reachable also when config/network-policy is deployed.
    kubectl(
        &[
            "label",
            "--overwrite",
            "namespace",
            NAMESPACE,
            "metrics=enabled",
        ],
        None,
    );
    let token = kubectl(&["create", "token", &account, "-n", NAMESPACE], None);
    let url =
        format!("https://{PREFIX}controller-manager-metrics-service.{NAMESPACE}.svc:8443/metrics");
    let pod = "e2e-curl-metrics";
    kubectl(
        &[
            "delete",
            "pod",
            pod,
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            "--wait",
        ],
        None,
    );
    let auth = format!("Authorization: Bearer {}", token.trim());
    kubectl(
        &[
            "run",
            pod,
            "-n",
            NAMESPACE,
            "--restart=Never",
            "--image=curlimages/curl:latest",
            "--",
            "curl",
            "-sSk",
            "--fail",
            "-H",
            &auth,
            &url,
        ],
        None,
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let phase = kubectl(
            &[
                "get",
                "pod",
                pod,
                "-n",
                NAMESPACE,
                "-o",
                "jsonpath={.status.phase}",
            ],
            None,
        );
        match phase.trim() {
            "Succeeded" => break,
            "Failed" => panic!(
                "reading the metrics failed:\n{}",
                kubectl(&["logs", pod, "-n", NAMESPACE], None)
            ),
            _ if Instant::now() > deadline => {
                panic!("the metrics pod is still {phase:?} after 120 s")
            }
            _ => std::thread::sleep(Duration::from_secs(2)),
        }
    }
    let body = kubectl(&["logs", pod, "-n", NAMESPACE], None);
    kubectl(
        &["delete", "pod", pod, "-n", NAMESPACE, "--ignore-not-found"],
        None,
    );
    body
}

#[test]
#[ignore = "needs a cluster: KUBECONFIG"]
fn the_manager_reconciles_the_samples_and_serves_metrics() {
    require_cluster();
    deploy();
    let project = std::fs::read_to_string("PROJECT").expect("reading PROJECT");
    let reconciled = reconciled_kinds(&project);
    for sample in samples() {
        let object = kubectl(&["apply", "-f", &sample, "-o", "name"], None);
        let object = object.trim();
        let text = std::fs::read_to_string(&sample).expect("reading the sample");
        if !reconciled.contains(&sample_kind(&text)) {
            continue;
        }
        kubectl(
            &["wait", "--for=condition=Ready", object, "--timeout=120s"],
            None,
        );
    }
    let body = metrics();
    assert!(
        body.contains("# TYPE "),
        "the metrics endpoint did not answer in the Prometheus text format:\n{body}"
    );
}

#[test]
fn only_samples_of_kinds_with_a_controller_are_waited_for() {
    let project = [
        "domain: example.com",
        "resources:",
        "- api:",
        "    crdVersion: v1",
        "    namespaced: true",
        "  controller: true",
        "  domain: example.com",
        "  group: db",
        "  kind: Database",
        "  version: v1",
        "- domain: example.com",
        "  group: db",
        "  kind: Backup",
        "  version: v1",
        "  apiServer:",
        "    namespaced: true",
        "- controller: true",
        "  group: core",
        "  kind: Pod",
        "  path: k8s.io/api/core/v1",
        "  version: v1",
        "version: \"3\"",
    ]
    .join("\n");
    let kinds = reconciled_kinds(&project);
    let database = ("db.example.com".to_string(), "Database".to_string());
    assert_eq!(kinds, [database.clone(), ("core".into(), "Pod".into())]);
    let sample = "apiVersion: db.example.com/v1\nkind: Database\nmetadata:\n  name: db\n";
    assert_eq!(sample_kind(sample), database);
    let aggregated = "apiVersion: db.example.com/v1\nkind: Backup\nmetadata:\n  name: b\n";
    assert!(!kinds.contains(&sample_kind(aggregated)));
}
