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
//! `config/samples/` and waits for each to be `Ready`, then reads the manager's metrics with a
//! token of its service account.
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
    for sample in samples() {
        let object = kubectl(&["apply", "-f", &sample, "-o", "name"], None);
        let object = object.trim();
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
