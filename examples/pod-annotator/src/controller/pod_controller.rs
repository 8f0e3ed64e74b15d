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

//! The `Pod` controller: reconciles objects of the built-in Kubernetes kind `Pod` (group
//! `core`, version `v1`; the k8s-openapi type `k8s_openapi::api::core::v1::Pod`).
//!
//! This is the Pod annotator example, ported from the Go `PodAnnotator` of the specification. Every
//! Pod in the watched namespace (the manager's `--namespace` flag, the Go original's
//! `target-namespace` check) gets the annotations [`INJECTED`]` = "true"` and [`TIMESTAMP`] (when
//! it was annotated, RFC 3339), once, through a merge patch that touches only those two
//! annotations, and an `Annotated` event. Like the Go original's `WithEventFilter`, the controller
//! reacts only to Pods it has not seen yet (creates) and to annotation changes; see [`triggers`].
//!
//! The machinery around `apply` is the runtime's ([`rsbuilder_runtime::controller`]): retries
//! after 409 Conflict (the patch names the Pod's resource version), the quiet end when the Pod
//! was deleted meanwhile (404), backoff on other errors, metrics.

use std::sync::Arc;

use futures::Stream;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::{PredicateConfig, WatchStreamExt, predicates, reflector, watcher};
use rsbuilder_runtime::controller::{Context, Reconciler, object_key};

// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// The annotation that marks a Pod as done; its value is `"true"`.
pub const INJECTED: &str = "example.com/injected";

/// The annotation that records when the Pod was annotated (RFC 3339, UTC, whole seconds, as
/// Go's `time.RFC3339`).
pub const TIMESTAMP: &str = "example.com/timestamp";

/// Annotates `Pod` objects.
pub struct PodReconciler;

impl Reconciler for PodReconciler {
    type Kind = Pod;
    const NAME: &'static str = "pod-annotator";
    // Not this project's kind: no finalizer, no cleanup.
    const FINALIZER: Option<&'static str> = None;

    /// Annotates the Pod, once: a Pod that already carries [`INJECTED`], or is being deleted,
    /// is left alone. Otherwise it gets [`annotation_patch`] as a JSON merge patch (field
    /// manager [`Reconciler::NAME`]) and an `Annotated` event. A merge patch, not server-side
    /// apply: on a Pod deleted meanwhile apply would try to create it, a patch answers 404.
    async fn apply(&self, obj: Arc<Pod>, ctx: &Context) -> anyhow::Result<Action> {
        let key = object_key(obj.as_ref());
        if obj.annotations().contains_key(INJECTED) || obj.metadata.deletion_timestamp.is_some() {
            tracing::debug!(object = %key, "already annotated or being deleted");
            return Ok(Action::await_change());
        }
        let api: Api<Pod> =
            Api::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default());
        let now = k8s_openapi::jiff::Timestamp::now();
        let params = PatchParams {
            field_manager: Some(Self::NAME.into()),
            ..PatchParams::default()
        };
        let patch = annotation_patch(&obj, now);
        api.patch(&obj.name_any(), &params, &Patch::Merge(&patch))
            .await?;
        let note = format!("added the annotations {INJECTED} and {TIMESTAMP}");
        ctx.publish(
            obj.as_ref(),
            EventType::Normal,
            "Annotated",
            "Annotate",
            note,
        )
        .await;
        tracing::info!(object = %key, "annotated");
        Ok(Action::await_change())
    }

    /// Watches the Pods through [`triggers`] (the Go original's event filter) instead of every
    /// change.
    fn controller(&self, api: Api<Pod>) -> Controller<Pod> {
        let (reader, writer) = reflector::store();
        let pods = watcher(api, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .applied_objects();
        Controller::for_stream(triggers(pods), reader)
    }
}

/// The merge patch that annotates `pod` at `now`: the two annotations, and the Pod's resource
/// version, so a Pod changed meanwhile is refused with 409 as the Go original's `r.Update` would
/// be, while the rest of the Pod is never sent back.
pub fn annotation_patch(pod: &Pod, now: k8s_openapi::jiff::Timestamp) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "resourceVersion": pod.resource_version(),
            "annotations": {
                INJECTED: "true",
                TIMESTAMP: now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            },
        },
    })
}

/// Filters a stream of watched Pods down to the ones worth reconciling, as the Go original's
/// `predicate.Funcs` does: a Pod seen for the first time (a create, or every Pod when the
/// watch starts) and a Pod whose annotations changed pass; status changes, other updates and
/// deletions do not. Built on kube's `predicate_filter` with `predicates::annotations`.
pub fn triggers<S>(pods: S) -> impl Stream<Item = Result<Pod, watcher::Error>>
where
    S: Stream<Item = Result<Pod, watcher::Error>>,
{
    pods.predicate_filter(predicates::annotations, PredicateConfig::default())
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;
    use serde_json::json;

    use super::*;

    /// A Pod `name` in `target-namespace`, at resource version `rv`, with `annotations`.
    fn pod(name: &str, rv: &str, annotations: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some("target-namespace".into());
        pod.metadata.uid = Some(format!("uid-{name}"));
        pod.metadata.resource_version = Some(rv.into());
        if !annotations.is_empty() {
            pod.metadata.annotations = Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        pod
    }

    #[test]
    fn the_patch_holds_only_the_resource_version_and_our_annotations() {
        let now: k8s_openapi::jiff::Timestamp = "2026-12-02T10:20:30.456Z".parse().unwrap();
        let patch = annotation_patch(&pod("web", "10", &[("team", "ml")]), now);
        assert_eq!(
            patch,
            json!({
                "metadata": {
                    "resourceVersion": "10",
                    "annotations": {
                        "example.com/injected": "true",
                        "example.com/timestamp": "2026-12-02T10:20:30Z",
                    },
                },
            })
        );
    }

    #[tokio::test]
    async fn only_new_pods_and_annotation_changes_trigger() {
        let events = vec![
            Ok(pod("a", "1", &[])),
            // a status or spec change: annotations unchanged
            Ok(pod("a", "2", &[])),
            Ok(pod("b", "3", &[])),
            // our own patch changes the annotations: reconciled again (and skipped)
            Ok(pod("a", "4", &[(INJECTED, "true")])),
            Ok(pod("a", "5", &[(INJECTED, "true")])),
        ];
        let passed: Vec<(String, String)> = triggers(futures::stream::iter(events))
            .map(|pod| {
                let pod = pod.unwrap();
                (pod.name_any(), pod.resource_version().unwrap())
            })
            .collect()
            .await;
        let expected =
            [("a", "1"), ("b", "3"), ("a", "4")].map(|(n, rv)| (n.to_string(), rv.to_string()));
        assert_eq!(passed, expected);
    }
}
