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

//! The `Pod` controller end to end: the real controller loop (`controller::run`, as
//! `src/main.rs` starts it, with the Go original's event filter) against the runtime's in-process
//! test cluster (`rsbuilder_runtime::testing`, rsbuilder's docs/testing.md), which serves
//! Pods as a built-in kind. `RSBUILDER_TEST_CLUSTER=envtest` runs the same test on a real
//! kube-apiserver.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use pod_annotator::controller::pod_controller::{INJECTED, PodReconciler, TIMESTAMP};
use rsbuilder_runtime::testing::{TestCluster, wait};
use serde_json::json;

/// How long the controller may take for each step.
const WAIT: Duration = Duration::from_secs(30);

/// A Pod `name` in `default` with one container, a label and an annotation of its own.
fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            annotations: Some(BTreeMap::from([("team".into(), "ml".into())])),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx:1.27".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// Whether the Pod carries `example.com/injected: "true"`.
fn injected(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(INJECTED))
        .is_some_and(|v| v == "true")
}

/// The `Annotated` events of `default` (the Pod each is about, and its note), once there is
/// one: the controller publishes it after its patch, so it may come a little later. Errors:
/// none came within `timeout`; a list failed.
async fn annotated_events(
    cluster: &TestCluster,
    timeout: Duration,
) -> anyhow::Result<Vec<(Option<String>, Option<String>)>> {
    let events: Api<Event> = Api::default_namespaced(cluster.client());
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let found: Vec<_> = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("Annotated"))
            .map(|e| (e.regarding.and_then(|r| r.name), e.note))
            .collect();
        if !found.is_empty() {
            return Ok(found);
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("no Annotated event after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_new_pod_is_annotated_once_and_again_when_the_mark_is_removed() -> anyhow::Result<()> {
    let cluster = TestCluster::start()
        .await
        .context("starting the test cluster")?;
    let mgr = cluster.manager();
    let shutdown = mgr.shutdown.clone();
    let running = tokio::spawn(rsbuilder_runtime::controller::run(mgr, PodReconciler));
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());

    pods.create(&PostParams::default(), &pod("web")).await?;
    let annotated = match wait::until(&pods, "web", WAIT, "be annotated", injected).await {
        Ok(pod) => pod,
        Err(e) if running.is_finished() => {
            return Err(e.context(format!("the controller ended: {:?}", running.await)));
        }
        Err(e) => return Err(e),
    };
    let annotations = annotated.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        ["example.com/injected", "example.com/timestamp", "team"]
    );
    // RFC 3339 in UTC, whole seconds (Go's time.RFC3339).
    let stamp = &annotations[TIMESTAMP];
    let parsed: k8s_openapi::jiff::Timestamp = stamp.parse().context("the timestamp")?;
    assert_eq!(&parsed.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), stamp);
    // The patch touched only the annotations: the labels and the spec are the Pod's own.
    assert_eq!(annotated.metadata.labels, pod("web").metadata.labels);
    assert_eq!(annotated.spec, pod("web").spec);
    // The write is recorded as the controller's.
    let managers: Vec<_> = annotated
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.as_deref())
        .collect();
    assert!(managers.contains(&"pod-annotator"), "{managers:?}");

    assert_eq!(
        annotated_events(&cluster, WAIT).await?,
        [(
            Some("web".to_string()),
            Some(format!("added the annotations {INJECTED} and {TIMESTAMP}"))
        )]
    );

    // Taking the mark off is an annotation change: the filter lets it through and the Pod
    // is annotated again.
    pods.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {INJECTED: null}}})),
    )
    .await?;
    wait::until(&pods, "web", WAIT, "be annotated again", injected).await?;

    shutdown.cancel();
    running.await??;
    Ok(())
}
