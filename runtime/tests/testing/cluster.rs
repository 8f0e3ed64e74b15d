//! The in-process test cluster (`rsbuilder_runtime::testing`) as a test of a project sees it:
//! through a `kube::Client`, the core group and API groups, namespaces, the garbage
//! collector's three modes, a CRD's status subresource, the project's webhooks, faults, the
//! clock, and kubectl on the loopback socket.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::{Api, CustomResource, CustomResourceExt, ResourceExt};
use rsbuilder_runtime::testing::{Fault, Mode, TestCluster, Verb, wait};
use rsbuilder_runtime::webhook::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const WAIT: Duration = Duration::from_secs(10);

/// A namespaced kind with a status subresource, as `create api` scaffolds one.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "test.rsbuilder.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    pub size: i32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct WidgetStatus {
    pub phase: Option<String>,
}

async fn cluster() -> TestCluster {
    TestCluster::builder()
        .mode(Mode::InProcess)
        .crd(Widget::crd())
        .start()
        .await
        .expect("the test cluster starts")
}

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

fn owned_by(owner: &ConfigMap, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.name_any(),
        uid: owner.uid().unwrap(),
        block_owner_deletion: Some(block),
        controller: Some(true),
    }
}

fn secret(name: &str, owner: Option<OwnerReference>, finalizers: &[&str]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: owner.map(|o| vec![o]),
            finalizers: (!finalizers.is_empty())
                .then(|| finalizers.iter().map(|f| f.to_string()).collect()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn core_kinds_are_served_under_api_v1_and_listed_by_discovery() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let made = cms
        .create(&PostParams::default(), &config_map("a", &[("k", "v")]))
        .await
        .unwrap();
    assert_eq!(made.metadata.namespace.as_deref(), Some("default"));
    assert!(made.metadata.uid.is_some() && made.metadata.creation_timestamp.is_some());
    let read = cms.get("a").await.unwrap();
    assert_eq!(read.data.unwrap()["k"], "v");
    let discovery = kube::Discovery::new(cluster.client()).run().await.unwrap();
    let mut found: Vec<String> = discovery
        .groups()
        .flat_map(|g| {
            g.recommended_resources()
                .into_iter()
                .map(|(r, _)| format!("{}/{}", r.api_version, r.plural))
        })
        .filter(|r| {
            [
                "v1/pods",
                "v1/namespaces",
                "apps/v1/deployments",
                "test.rsbuilder.dev/v1/widgets",
            ]
            .contains(&r.as_str())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "apps/v1/deployments",
            "test.rsbuilder.dev/v1/widgets",
            "v1/namespaces",
            "v1/pods"
        ]
    );
}

#[tokio::test]
async fn a_create_in_a_namespace_that_does_not_exist_is_refused_as_kube_does() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client(), "nowhere");
    let err = cms
        .create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap_err();
    assert_eq!(
        api_error(err),
        (
            404,
            "NotFound".into(),
            "namespaces \"nowhere\" not found".into()
        )
    );
    let system: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    system
        .create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_server_side_apply_that_creates_checks_the_namespace_and_activates_a_namespace() {
    use k8s_openapi::api::core::v1::Namespace;
    let cluster = cluster().await;
    let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a"}, "data": {"k": "v"}});
    let params = PatchParams::apply("tester");
    let nowhere: Api<ConfigMap> = Api::namespaced(cluster.client(), "nowhere");
    let err = nowhere
        .patch("a", &params, &Patch::Apply(&cm))
        .await
        .unwrap_err();
    assert_eq!(
        api_error(err),
        (
            404,
            "NotFound".into(),
            "namespaces \"nowhere\" not found".into()
        )
    );
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    let ns =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    let made = namespaces
        .patch("team", &params, &Patch::Apply(&ns))
        .await
        .unwrap();
    assert_eq!(made.status.unwrap().phase.as_deref(), Some("Active"));
    let team: Api<ConfigMap> = Api::namespaced(cluster.client(), "team");
    let applied = team.patch("a", &params, &Patch::Apply(&cm)).await.unwrap();
    assert_eq!(applied.data.unwrap()["k"], "v");
    let entry = &applied.metadata.managed_fields.unwrap()[0];
    assert_eq!(
        (entry.manager.as_deref(), entry.operation.as_deref()),
        (Some("tester"), Some("Apply"))
    );
}

#[tokio::test]
async fn a_kind_the_cluster_does_not_serve_is_a_404_that_names_it() {
    use k8s_openapi::api::storage::v1::StorageClass;
    let cluster = cluster().await;
    let classes: Api<StorageClass> = Api::all(cluster.client());
    let (code, reason, message) = api_error(classes.list(&Default::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (404, "NotFound"));
    assert!(
        message.contains("the test cluster does not serve storageclasses in storage.k8s.io/v1"),
        "{message}"
    );
}

#[tokio::test]
async fn background_deletion_removes_dependents_after_their_owner() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let owner = cms
        .create(&PostParams::default(), &config_map("owner", &[]))
        .await
        .unwrap();
    secrets
        .create(
            &PostParams::default(),
            &secret("dependent", Some(owned_by(&owner, false)), &[]),
        )
        .await
        .unwrap();
    secrets
        .create(&PostParams::default(), &secret("bystander", None, &[]))
        .await
        .unwrap();
    cms.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    wait::until_gone(&secrets, "dependent", WAIT).await.unwrap();
    secrets.get("bystander").await.unwrap();
}

#[tokio::test]
async fn foreground_deletion_keeps_the_owner_until_blocking_dependents_are_gone() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let owner = cms
        .create(&PostParams::default(), &config_map("owner", &[]))
        .await
        .unwrap();
    // The dependent holds a finalizer of its own, so its deletion (and the owner's) waits.
    secrets
        .create(
            &PostParams::default(),
            &secret("dependent", Some(owned_by(&owner, true)), &["test/hold"]),
        )
        .await
        .unwrap();
    cms.delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    let owner_now = cms.get("owner").await.unwrap();
    assert!(owner_now.metadata.deletion_timestamp.is_some());
    assert_eq!(owner_now.finalizers(), ["foregroundDeletion"]);
    let dependent = secrets.get("dependent").await.unwrap();
    assert!(
        dependent.metadata.deletion_timestamp.is_some(),
        "the dependent is being deleted"
    );
    secrets
        .patch(
            "dependent",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    wait::until_gone(&secrets, "dependent", WAIT).await.unwrap();
    wait::until_gone(&cms, "owner", WAIT).await.unwrap();
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_and_removes_their_owner_references() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let owner = cms
        .create(&PostParams::default(), &config_map("owner", &[]))
        .await
        .unwrap();
    secrets
        .create(
            &PostParams::default(),
            &secret("dependent", Some(owned_by(&owner, true)), &[]),
        )
        .await
        .unwrap();
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..Default::default()
    };
    cms.delete("owner", &params).await.unwrap();
    wait::until_gone(&cms, "owner", WAIT).await.unwrap();
    let dependent = wait::until(
        &secrets,
        "dependent",
        WAIT,
        "lose its owner reference",
        |s| {
            s.metadata
                .owner_references
                .as_ref()
                .is_none_or(|r| r.is_empty())
        },
    )
    .await
    .unwrap();
    assert!(dependent.metadata.deletion_timestamp.is_none());
}

/// A DELETE sent as raw HTTP (what kube-rs's typed API cannot spell): the answer's status
/// code and body.
async fn raw_delete(cluster: &TestCluster, path_and_query: &str) -> (u16, serde_json::Value) {
    let request = http::Request::delete(path_and_query)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = cluster.client().send(request).await.unwrap();
    let code = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn a_percent_encoded_dry_run_delete_writes_nothing() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cms.create(&PostParams::default(), &config_map("c", &[]))
        .await
        .unwrap();
    // `%64ryRun` is `dryRun`, to the front door as to the API server.
    let (code, answer) = raw_delete(
        &cluster,
        "/api/v1/namespaces/default/configmaps/c?%64ryRun=All&propagationPolicy=Foreground",
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(
        answer["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"]),
        "the answer is the object as the delete would mark it: {answer}"
    );
    let stored = cms.get("c").await.unwrap();
    assert!(
        stored.finalizers().is_empty(),
        "stored finalizers {:?}",
        stored.finalizers()
    );
    assert!(stored.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn orphan_dependents_is_read_as_kube_reads_it_and_conflicts_with_a_policy() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    // Every value but `0` and `false` (any case) is true, as the parameter codec reads it.
    for (owner_name, value) in [("o1", "1"), ("o2", "yes")] {
        let owner = cms
            .create(&PostParams::default(), &config_map(owner_name, &[]))
            .await
            .unwrap();
        let dependent = format!("{owner_name}-dep");
        secrets
            .create(
                &PostParams::default(),
                &secret(&dependent, Some(owned_by(&owner, false)), &[]),
            )
            .await
            .unwrap();
        let (code, answer) = raw_delete(
            &cluster,
            &format!("/api/v1/namespaces/default/configmaps/{owner_name}?orphanDependents={value}"),
        )
        .await;
        assert_eq!(code, 200, "{answer}");
        wait::until_gone(&cms, owner_name, WAIT).await.unwrap();
        let kept = secrets.get(&dependent).await.unwrap();
        assert!(kept.metadata.deletion_timestamp.is_none(), "{value}");
        assert_eq!(kept.metadata.owner_references, None, "{value}");
    }
    // orphanDependents with propagationPolicy: 422, and nothing written.
    cms.create(&PostParams::default(), &config_map("o3", &[]))
        .await
        .unwrap();
    let (code, answer) = raw_delete(
        &cluster,
        "/api/v1/namespaces/default/configmaps/o3?orphanDependents=1&propagationPolicy=Foreground",
    )
    .await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(
        answer["message"],
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set"#
    );
    let o3 = cms.get("o3").await.unwrap();
    assert!(o3.finalizers().is_empty(), "{:?}", o3.finalizers());
    assert!(o3.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn a_collection_is_deleted_with_the_propagation_policy_asked() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let mut owner = config_map("owner", &[]);
    owner.metadata.labels = Some(BTreeMap::from([("set".to_string(), "a".to_string())]));
    let owner = cms.create(&PostParams::default(), &owner).await.unwrap();
    secrets
        .create(
            &PostParams::default(),
            &secret("dependent", Some(owned_by(&owner, true)), &[]),
        )
        .await
        .unwrap();
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..Default::default()
    };
    cms.delete_collection(&params, &kube::api::ListParams::default().labels("set=a"))
        .await
        .unwrap();
    wait::until_gone(&cms, "owner", WAIT).await.unwrap();
    let kept = secrets.get("dependent").await.unwrap();
    assert!(kept.metadata.deletion_timestamp.is_none());
    assert_eq!(kept.metadata.owner_references, None);
}

#[tokio::test]
async fn a_secrets_string_data_is_merged_into_data_on_every_write() {
    use k8s_openapi::ByteString;
    let cluster = cluster().await;
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let data = |s: &Secret| -> BTreeMap<String, String> {
        s.data
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|(k, ByteString(v))| (k, String::from_utf8(v).unwrap()))
            .collect()
    };
    let want = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let created: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "s"},
        "data": {"k": "b2xk", "other": "eA=="},
        "stringData": {"k": "v"},
    }))
    .unwrap();
    let created = secrets
        .create(&PostParams::default(), &created)
        .await
        .unwrap();
    // stringData wins over data's key, is never answered, and the type defaults to Opaque.
    assert_eq!(data(&created), want(&[("k", "v"), ("other", "x")]));
    assert_eq!(created.string_data, None);
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    let stored = secrets.get("s").await.unwrap();
    assert_eq!(data(&stored), want(&[("k", "v"), ("other", "x")]));
    assert_eq!(stored.string_data, None);
    // Update.
    let mut replaced = stored.clone();
    replaced.string_data = Some(BTreeMap::from([("u".to_string(), "1".to_string())]));
    let updated = secrets
        .replace("s", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(
        data(&updated),
        want(&[("k", "v"), ("other", "x"), ("u", "1")])
    );
    assert_eq!(updated.string_data, None);
    // Merge patch.
    let patched = secrets
        .patch(
            "s",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"stringData": {"p": "2"}})),
        )
        .await
        .unwrap();
    assert_eq!(data(&patched)["p"], "2");
    assert_eq!(patched.string_data, None);
    // Server-side apply.
    let applied = secrets
        .patch(
            "applied",
            &PatchParams::apply("test"),
            &Patch::Apply(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "applied"}, "stringData": {"a": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(data(&applied), want(&[("a", "3")]));
    assert_eq!(applied.string_data, None);
    let stored = secrets.get("s").await.unwrap();
    assert_eq!(stored.string_data, None);
    assert_eq!(data(&stored)["u"], "1");
}

#[tokio::test]
async fn pods_events_and_secrets_are_selected_by_their_own_fields() {
    use k8s_openapi::api::core::v1::{Event, Pod};
    use kube::api::ListParams;
    let cluster = cluster().await;
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    for (name, node) in [("p1", Some("n1")), ("p2", None)] {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "a", "image": "x"}]},
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    cluster.make_pod_ready("default", "p1").await.unwrap();
    let names = |l: kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items.iter().map(|p| p.name_any()).collect()
    };
    let select = |f: &str| ListParams::default().fields(f);
    assert_eq!(
        names(pods.list(&select("status.phase=Running")).await.unwrap()),
        ["p1"]
    );
    assert_eq!(
        names(pods.list(&select("spec.nodeName=")).await.unwrap()),
        ["p2"]
    );
    assert_eq!(
        names(
            pods.list(&select("spec.nodeName=n1,metadata.name=p1"))
                .await
                .unwrap()
        ),
        ["p1"]
    );
    let (code, reason, message) =
        api_error(pods.list(&select("spec.containers=x")).await.unwrap_err());
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (
            400,
            "BadRequest",
            "field label not supported: spec.containers"
        )
    );
    // A kind without fields of its own keeps the two of metadata.
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let (code, _, message) = api_error(cms.list(&select("spec.nodeName=n1")).await.unwrap_err());
    assert_eq!(code, 400);
    assert_eq!(
        message,
        r#""spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let events: Api<Event> = Api::default_namespaced(cluster.client());
    for (name, about) in [("e1", "p1"), ("e2", "p2")] {
        let event: Event = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": about, "namespace": "default"},
            "reason": "Started", "type": "Normal", "source": {"component": "kubelet"},
        }))
        .unwrap();
        events.create(&PostParams::default(), &event).await.unwrap();
    }
    let picked = events
        .list(&select(
            "involvedObject.kind=Pod,involvedObject.name=p1,source=kubelet,type=Normal",
        ))
        .await
        .unwrap();
    assert_eq!(
        picked
            .items
            .iter()
            .map(|e| e.name_any())
            .collect::<Vec<_>>(),
        ["e1"]
    );
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    secrets
        .create(&PostParams::default(), &secret("opaque", None, &[]))
        .await
        .unwrap();
    let opaque = secrets.list(&select("type=Opaque")).await.unwrap();
    assert_eq!(opaque.items.len(), 1);
    assert!(
        secrets
            .list(&select("type!=Opaque"))
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn a_crd_with_a_status_subresource_ignores_status_on_writes_of_the_object() {
    let cluster = cluster().await;
    let widgets: Api<Widget> = Api::default_namespaced(cluster.client());
    let mut w = Widget::new("w", WidgetSpec { size: 1 });
    w.status = Some(WidgetStatus {
        phase: Some("Sneaky".into()),
    });
    let made = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert!(
        made.status.is_none(),
        "create drops the status: {:?}",
        made.status
    );
    assert_eq!(made.metadata.generation, Some(1));
    let set = widgets
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {"phase": "Ready"}})),
        )
        .await
        .unwrap();
    assert_eq!(set.status.unwrap().phase.as_deref(), Some("Ready"));
    let mut changed = widgets.get("w").await.unwrap();
    changed.spec.size = 2;
    changed.status = Some(WidgetStatus {
        phase: Some("Overwritten".into()),
    });
    let after = widgets
        .replace("w", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(after.status.unwrap().phase.as_deref(), Some("Ready"));
    assert_eq!(after.metadata.generation, Some(2));
}

#[tokio::test]
async fn crds_are_read_from_a_directory_of_yaml_files() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "# a comment\n---\n{}\n",
        serde_json::to_string_pretty(&Widget::crd()).unwrap()
    );
    std::fs::write(dir.path().join("test.rsbuilder.dev_widgets.yaml"), yaml).unwrap();
    std::fs::write(dir.path().join("README.md"), "not a CRD").unwrap();
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .crd_dir(dir.path())
        .start()
        .await
        .unwrap();
    let widgets: Api<Widget> = Api::default_namespaced(cluster.client());
    widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec { size: 1 }),
        )
        .await
        .unwrap();
}

/// The project's ConfigMap webhooks: a label by default; a `forbidden` key is denied.
struct ConfigMapWebhook;

impl Defaulter<ConfigMap> for ConfigMapWebhook {
    async fn default(&self, cm: &mut ConfigMap) -> Result<(), Denied> {
        cm.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .entry("defaulted".into())
            .or_insert("yes".into());
        Ok(())
    }
}

impl Validator<ConfigMap> for ConfigMapWebhook {
    async fn validate_create(&self, cm: &ConfigMap) -> Validation {
        match cm
            .data
            .as_ref()
            .is_some_and(|d| d.contains_key("forbidden"))
        {
            true => Err(Denied::new("data.forbidden: this key is not allowed")),
            false => Ok(Vec::new()),
        }
    }
}

#[tokio::test]
async fn the_projects_webhooks_default_and_deny_as_the_api_server_calls_them() {
    let webhooks = Webhooks::new()
        .defaulting::<ConfigMap, _>("/mutate--v1-configmap", ConfigMapWebhook)
        .validating::<ConfigMap, _>("/validate--v1-configmap", ConfigMapWebhook);
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .webhooks(webhooks)
        .webhook_manifests(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/testing/webhook-manifests.yaml"
        ))
        .start()
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let made = cms
        .create(&PostParams::default(), &config_map("ok", &[("a", "b")]))
        .await
        .unwrap();
    assert_eq!(made.labels()["defaulted"], "yes");
    let err = cms
        .create(
            &PostParams::default(),
            &config_map("bad", &[("forbidden", "x")]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        api_error(err),
        (
            403,
            "Forbidden".into(),
            "admission webhook \"vconfigmap-v1.kb.io\" denied the request: data.forbidden: this key is not allowed".into()
        )
    );
    assert!(
        cms.get_opt("bad").await.unwrap().is_none(),
        "nothing was stored"
    );
    // A dry run calls the webhooks (they declare `sideEffects: None`) and stores nothing.
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let would = cms
        .create(&dry, &config_map("dry", &[("a", "b")]))
        .await
        .unwrap();
    assert_eq!(would.labels()["defaulted"], "yes");
    assert!(
        cms.get_opt("dry").await.unwrap().is_none(),
        "a dry run stored it"
    );
    let err = cms
        .create(&dry, &config_map("bad", &[("forbidden", "x")]))
        .await
        .unwrap_err();
    assert_eq!(api_error(err).0, 403);
    // Secrets have no webhook: untouched.
    let secrets: Api<Secret> = Api::default_namespaced(cluster.client());
    let s = secrets
        .create(&PostParams::default(), &secret("s", None, &[]))
        .await
        .unwrap();
    assert!(s.metadata.labels.is_none());
}

/// A webhook registered at a path no configuration names would never be called by the API
/// server, so a test of it would pass without it running: the cluster refuses to start,
/// naming the path, the file and the paths it does name. So does a placeholder file that
/// `rsbuilder manifests` has not filled yet.
#[tokio::test]
async fn a_webhook_no_configuration_names_is_refused_at_start() {
    let webhooks = Webhooks::new()
        .defaulting::<ConfigMap, _>("/mutate--v1-configmap", ConfigMapWebhook)
        .validating::<ConfigMap, _>("/validate-configmap", ConfigMapWebhook);
    let manifests = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testing/webhook-manifests.yaml"
    );
    let err = TestCluster::builder()
        .mode(Mode::InProcess)
        .webhooks(webhooks)
        .webhook_manifests(manifests)
        .start()
        .await
        .err()
        .expect("a webhook no configuration names");
    assert_eq!(
        err.to_string(),
        format!(
            "the webhook registered at \"/validate-configmap\" is named by no webhook configuration in {manifests} (it names /mutate--v1-configmap, /validate--v1-configmap): the API server would never call it. Run `rsbuilder manifests` (`make manifests`) to write the configurations from the +kubebuilder:webhook markers, and check that the marker's `path` equals the path the webhook is registered at"
        )
    );

    let dir = tempfile::tempdir().unwrap();
    let placeholder = dir.path().join("manifests.yaml");
    std::fs::write(
        &placeholder,
        "# Generated by `rsbuilder manifests` (or `make manifests`) from the +kubebuilder:webhook\n# markers in src/webhook/; run it to fill this file.\n",
    )
    .unwrap();
    let webhooks =
        Webhooks::new().defaulting::<ConfigMap, _>("/mutate--v1-configmap", ConfigMapWebhook);
    let err = TestCluster::builder()
        .mode(Mode::InProcess)
        .webhooks(webhooks)
        .webhook_manifests(placeholder)
        .start()
        .await
        .err()
        .expect("a placeholder configuration file");
    assert!(
        err.to_string().starts_with(
            "the webhook registered at \"/mutate--v1-configmap\" is named by no webhook configuration in "
        ) && err.to_string().contains("(it names none)"),
        "{err}"
    );
}

#[tokio::test]
async fn a_dry_run_is_refused_by_a_webhook_with_side_effects_and_a_real_write_is_not() {
    let manifests = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testing/webhook-manifests.yaml"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("manifests.yaml");
    std::fs::write(
        &path,
        manifests.replace("sideEffects: None", "sideEffects: Some"),
    )
    .unwrap();
    let webhooks = Webhooks::new()
        .defaulting::<ConfigMap, _>("/mutate--v1-configmap", ConfigMapWebhook)
        .validating::<ConfigMap, _>("/validate--v1-configmap", ConfigMapWebhook);
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .webhooks(webhooks)
        .webhook_manifests(path.clone())
        .start()
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let err = cms
        .create(&dry, &config_map("dry", &[("a", "b")]))
        .await
        .unwrap_err();
    assert_eq!(
        api_error(err),
        (
            400,
            "BadRequest".into(),
            "admission webhook \"mconfigmap-v1.kb.io\" does not support dry run".into()
        )
    );
    let made = cms
        .create(&PostParams::default(), &config_map("real", &[("a", "b")]))
        .await
        .unwrap();
    assert_eq!(made.labels()["defaulted"], "yes");
}

#[tokio::test]
async fn an_injected_conflict_fails_the_next_update_once() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let made = cms
        .create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap();
    cluster
        .inject(Fault::conflict(Verb::Update, "configmaps").once())
        .unwrap();
    let (code, reason, message) = api_error(
        cms.replace("a", &PostParams::default(), &made)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert!(
        message.starts_with("Operation cannot be fulfilled on configmaps \"a\""),
        "{message}"
    );
    cms.replace("a", &PostParams::default(), &made)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_clock_stamps_creation_and_deletion_and_moves_only_when_advanced() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let first = cms
        .create(&PostParams::default(), &config_map("first", &[]))
        .await
        .unwrap();
    cluster.advance(Duration::from_secs(3600)).unwrap();
    let second = cms
        .create(&PostParams::default(), &config_map("second", &[]))
        .await
        .unwrap();
    let t = |cm: &ConfigMap| cm.metadata.creation_timestamp.clone().unwrap().0;
    assert_eq!(t(&second).duration_since(t(&first)).as_secs(), 3600);
    let mut held = config_map("held", &[]);
    held.metadata.finalizers = Some(vec!["test/hold".into()]);
    cms.create(&PostParams::default(), &held).await.unwrap();
    cluster.advance(Duration::from_secs(60)).unwrap();
    cms.delete("held", &DeleteParams::default()).await.unwrap();
    let deleting = cms.get("held").await.unwrap();
    assert_eq!(
        deleting
            .metadata
            .deletion_timestamp
            .unwrap()
            .0
            .duration_since(t(&second))
            .as_secs(),
        60
    );
}

#[tokio::test]
async fn a_deleted_namespace_takes_its_content_with_it() {
    use k8s_openapi::api::core::v1::Namespace;
    let cluster = cluster().await;
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let made = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    assert_eq!(made.status.unwrap().phase.as_deref(), Some("Active"));
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client(), "team");
    cms.create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap();
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    wait::until_gone(&cms, "a", WAIT).await.unwrap();
    wait::until_gone(&namespaces, "team", WAIT).await.unwrap();
}

#[tokio::test]
async fn the_kubelets_part_is_played_by_the_test() {
    use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
    let cluster = cluster().await;
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("busybox".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let made = pods.create(&PostParams::default(), &pod).await.unwrap();
    assert!(made.status.is_none(), "no kubelet runs it");
    let ready = cluster.make_pod_ready("default", "p").await.unwrap();
    let status = ready.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert!(
        status
            .conditions
            .unwrap()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    );
    assert!(status.container_statuses.unwrap()[0].ready);
}

#[tokio::test]
async fn kubectl_reads_the_cluster_on_the_loopback_socket() {
    if std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        return common::missing("kubectl is not installed");
    }
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cms.create(&PostParams::default(), &config_map("seen-by-kubectl", &[]))
        .await
        .unwrap();
    let loopback = cluster.serve_loopback().await.unwrap();
    let kubeconfig = loopback.kubeconfig.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("kubectl")
            .args([
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "get",
                "configmaps,pods,widgets",
                "-o",
                "name",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "configmap/seen-by-kubectl");
}

#[tokio::test]
async fn metadata_lists_and_watches_answer_partial_object_metadata() {
    use futures::StreamExt as _;
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cms.create(&PostParams::default(), &config_map("a", &[("k", "v")]))
        .await
        .unwrap();
    let list = cms.list_metadata(&Default::default()).await.unwrap();
    let names: Vec<String> = list.items.iter().map(|m| m.name_any()).collect();
    assert_eq!(names, ["a"]);
    assert_eq!(
        list.items[0].types.as_ref().unwrap().kind,
        "PartialObjectMetadata"
    );
    let rv = list.metadata.resource_version.unwrap();
    let mut events = cms
        .watch_metadata(&kube::api::WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(&PostParams::default(), &config_map("b", &[]))
        .await
        .unwrap();
    let event = tokio::time::timeout(WAIT, events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match event {
        kube::api::WatchEvent::Added(m) => assert_eq!(m.name_any(), "b"),
        other => panic!("expected ADDED, got {other:?}"),
    }
}

#[tokio::test]
async fn a_json_patch_testing_null_at_a_missing_path_applies_as_kube_apiserver_applies_it() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cms.create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap();
    // What kube-runtime's finalizer helper sends for the first finalizer.
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": ["x/y"]},
    ]))
    .unwrap();
    let patched = cms
        .patch("a", &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
        .unwrap();
    assert_eq!(patched.finalizers(), ["x/y"]);
    // A test of null where there is a value still fails.
    let again: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
    ]))
    .unwrap();
    let (code, reason, _) = api_error(
        cms.patch("a", &PatchParams::default(), &Patch::<()>::Json(again))
            .await
            .unwrap_err(),
    );
    // 422 Invalid, as kube-apiserver answers an operation that fails.
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
}

mod two_versions {
    use super::*;

    pub mod v1 {
        use super::*;
        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
        #[kube(
            group = "test.rsbuilder.dev",
            version = "v1",
            kind = "Thing",
            namespaced
        )]
        pub struct ThingSpec {
            pub size_cm: i32,
        }
    }

    pub mod v2 {
        use super::*;
        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
        #[kube(
            group = "test.rsbuilder.dev",
            version = "v2",
            kind = "Thing",
            namespaced
        )]
        pub struct ThingSpec {
            pub size_mm: i32,
        }
    }

    impl Convert<v1::Thing> for v2::Thing {
        fn to_hub(self) -> anyhow::Result<v1::Thing> {
            let mut hub: v1::Thing = carry_over(
                &serde_json::json!({"metadata": self.metadata, "spec": {"size_cm": 0}}),
            )?;
            hub.spec.size_cm = self.spec.size_mm / 10;
            Ok(hub)
        }
        fn from_hub(hub: v1::Thing) -> anyhow::Result<Self> {
            let mut spoke: v2::Thing =
                carry_over(&serde_json::json!({"metadata": hub.metadata, "spec": {"size_mm": 0}}))?;
            spoke.spec.size_mm = hub.spec.size_cm * 10;
            Ok(spoke)
        }
    }

    fn crd()
    -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition
    {
        let mut crd =
            kube::core::crd::merge_crds(vec![v1::Thing::crd(), v2::Thing::crd()], "v1").unwrap();
        crd.spec.conversion = Some(serde_json::from_value(serde_json::json!({
            "strategy": "Webhook",
            "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}}},
        })).unwrap());
        crd
    }

    #[tokio::test]
    async fn every_served_version_reads_and_writes_through_the_conversion_webhook() {
        let webhooks =
            Webhooks::new().conversion(Conversion::<v1::Thing>::new().spoke::<v2::Thing>());
        let cluster = TestCluster::builder()
            .mode(Mode::InProcess)
            .crd(crd())
            .webhooks(webhooks)
            .webhook_manifests(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/testing/webhook-manifests.yaml"
            ))
            .start()
            .await
            .unwrap();
        let new: Api<v2::Thing> = Api::default_namespaced(cluster.client());
        let old: Api<v1::Thing> = Api::default_namespaced(cluster.client());
        let made = new
            .create(
                &PostParams::default(),
                &v2::Thing::new("t", v2::ThingSpec { size_mm: 120 }),
            )
            .await
            .unwrap();
        assert_eq!(made.spec.size_mm, 120);
        assert_eq!(old.get("t").await.unwrap().spec.size_cm, 12, "stored as v1");
        let listed = new.list(&Default::default()).await.unwrap();
        assert_eq!(listed.items[0].spec.size_mm, 120);
        {
            use futures::StreamExt as _;
            let rv = listed.metadata.resource_version.clone().unwrap();
            let mut events = new
                .watch(&kube::api::WatchParams::default(), &rv)
                .await
                .unwrap()
                .boxed();
            old.create(
                &PostParams::default(),
                &v1::Thing::new("u", v1::ThingSpec { size_cm: 3 }),
            )
            .await
            .unwrap();
            match tokio::time::timeout(WAIT, events.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap()
            {
                kube::api::WatchEvent::Added(t) => {
                    assert_eq!((t.name_any(), t.spec.size_mm), ("u".to_string(), 30))
                }
                other => panic!("expected ADDED, got {other:?}"),
            }
        }
        // A patch of v2 is refused rather than applied to the wrong shape.
        let (code, _, message) = api_error(
            new.patch(
                "t",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"spec": {"size_mm": 1}})),
            )
            .await
            .unwrap_err(),
        );
        assert_eq!(code, 400, "{message}");
        new.delete("t", &DeleteParams::default()).await.unwrap();
        wait::until_gone(&old, "t", WAIT).await.unwrap();
    }

    #[tokio::test]
    async fn a_webhook_conversion_without_the_projects_webhooks_is_refused_at_start() {
        let err = TestCluster::builder()
            .mode(Mode::InProcess)
            .crd(crd())
            .start()
            .await
            .err()
            .unwrap();
        assert!(err.to_string().contains("converts with a webhook"), "{err}");
    }
}

/// The AIJob example's CRD, loaded from its YAML: the schema's `default`s (`status.conditions:
/// []`, `status.readyReplicas: 0`) are filled when the status is written and when the object
/// is read back, as the apiextensions server fills them.
#[tokio::test]
async fn a_crds_schema_defaults_are_filled_on_write_and_read() {
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
    let crds = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/ai-operator/config/crd/bases"
    );
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .crd_dir(std::path::Path::new(crds))
        .start()
        .await
        .unwrap();
    let gvk = GroupVersionKind::gvk("ai.example.com", "v1", "AIJob");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "aijobs");
    let jobs: Api<DynamicObject> = Api::namespaced_with(cluster.client(), "default", &resource);
    let mut job = DynamicObject::new("train", &resource);
    job.data = serde_json::json!({"spec": {"modelName": "resnet50", "gpuCount": 1}});
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let status = serde_json::json!({"status": {"phase": "Pending"}});
    let written = jobs
        .patch_status("train", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(
        written.data["status"],
        serde_json::json!({"phase": "Pending", "readyReplicas": 0, "conditions": []})
    );
    let read = jobs.get("train").await.unwrap();
    assert_eq!(read.data["status"]["readyReplicas"], 0);
    assert_eq!(read.data["status"]["conditions"], serde_json::json!([]));
    assert_eq!(read.data["spec"]["modelName"], "resnet50");
}

/// `Widget`'s CRD with `rules` as the `x-kubernetes-validations` of its `spec`.
fn widget_crd_with_rules(
    rules: serde_json::Value,
) -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    let mut crd = serde_json::to_value(Widget::crd()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] =
        rules;
    serde_json::from_value(crd).unwrap()
}

#[tokio::test]
async fn a_crds_cel_rules_refuse_writes_with_the_api_servers_422() {
    let crd = widget_crd_with_rules(serde_json::json!([
        {"rule": "self.size <= 10", "message": "size must be at most 10"},
        {"rule": "self.size >= oldSelf.size", "message": "size may only grow", "fieldPath": ".size"},
    ]));
    let cluster = TestCluster::builder()
        .mode(Mode::InProcess)
        .crd(crd)
        .start()
        .await
        .expect("the test cluster starts");
    let widgets: Api<Widget> = Api::default_namespaced(cluster.client());
    let e = widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec { size: 11 }),
        )
        .await
        .unwrap_err();
    assert_eq!(
        api_error(e),
        (
            422,
            "Invalid".into(),
            "Widget.test.rsbuilder.dev \"w\" is invalid: spec: Invalid value: \"object\": size must be at most 10".into()
        )
    );
    widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec { size: 5 }),
        )
        .await
        .unwrap();
    let shrink = Patch::Merge(serde_json::json!({"spec": {"size": 4}}));
    let e = widgets
        .patch("w", &PatchParams::default(), &shrink)
        .await
        .unwrap_err();
    assert_eq!(
        api_error(e),
        (
            422,
            "Invalid".into(),
            "Widget.test.rsbuilder.dev \"w\" is invalid: spec.size: Invalid value: \"object\": size may only grow".into()
        )
    );
    let grow = Patch::Merge(serde_json::json!({"spec": {"size": 6}}));
    let w = widgets
        .patch("w", &PatchParams::default(), &grow)
        .await
        .unwrap();
    assert_eq!(w.spec.size, 6);
}

#[tokio::test]
async fn a_crd_whose_cel_rule_uses_an_unprovided_function_does_not_load() {
    let crd = widget_crd_with_rules(serde_json::json!([{"rule": "quantity('1Gi').isInteger()"}]));
    let e = TestCluster::builder()
        .mode(Mode::InProcess)
        .crd(crd)
        .start()
        .await
        .err()
        .expect("the cluster refuses the CRD");
    let text = format!("{e:#}");
    assert!(
        text.contains("CRD widgets.test.rsbuilder.dev version v1: openAPIV3Schema.properties[spec].x-kubernetes-validations[0]: rule \"quantity('1Gi').isInteger()\": compilation failed: function \"isInteger\" is not supported"),
        "{text}"
    );
}

fn deployment(containers: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": containers}}}})
}

fn containers(d: &k8s_openapi::api::apps::v1::Deployment) -> serde_json::Value {
    serde_json::to_value(d).unwrap()["spec"]["template"]["spec"]["containers"].clone()
}

#[tokio::test]
async fn two_managers_applying_different_containers_of_a_deployment_both_keep_theirs() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = cluster().await;
    let deps: Api<Deployment> = Api::default_namespaced(cluster.client());
    let a = deployment(serde_json::json!([{"name": "app", "image": "app:1"}]));
    deps.patch("web", &PatchParams::apply("a"), &Patch::Apply(&a))
        .await
        .unwrap();
    // As kube-apiserver merges `containers` by `name` (`x-kubernetes-list-type: map`): b's
    // container is added beside a's, and nobody conflicts.
    let b = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "side:1"}]}}}});
    let got = deps
        .patch("web", &PatchParams::apply("b"), &Patch::Apply(&b))
        .await
        .unwrap();
    assert_eq!(
        containers(&got),
        serde_json::json!([{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "side:1"}])
    );
    let fields: Vec<(String, serde_json::Value)> = got
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                serde_json::to_value(m.fields_v1.unwrap()).unwrap(),
            )
        })
        .collect();
    // Structs carry no `.` of their own (they had one while every object was read as a map);
    // list items do, as in structured-merge-diff's field sets.
    let (manager, b_fields) = &fields[1];
    assert_eq!(manager, "b");
    let pod = &b_fields["f:spec"]["f:template"]["f:spec"];
    assert_eq!(b_fields["f:spec"].get("."), None);
    assert_eq!(b_fields["f:spec"]["f:template"].get("."), None);
    assert_eq!(pod.get("."), None);
    assert_eq!(
        pod["f:containers"]["k:{\"name\":\"sidecar\"}"],
        serde_json::json!({".": {}, "f:image": {}, "f:name": {}})
    );
    // a gives up its container: only a's goes, b's stays.
    let a = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 2}});
    let got = deps
        .patch("web", &PatchParams::apply("a"), &Patch::Apply(&a))
        .await
        .unwrap();
    assert_eq!(
        containers(&got),
        serde_json::json!([{"name": "sidecar", "image": "side:1"}])
    );
}

#[tokio::test]
async fn a_forced_apply_of_one_env_var_keeps_the_containers_other_fields() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = cluster().await;
    let deps: Api<Deployment> = Api::default_namespaced(cluster.client());
    let a = deployment(serde_json::json!([{"name": "app", "image": "app:1",
        "ports": [{"containerPort": 80}], "env": [{"name": "FOO", "value": "1"}]}]));
    deps.patch("web", &PatchParams::apply("a"), &Patch::Apply(&a))
        .await
        .unwrap();
    let b = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "app",
            "env": [{"name": "BAR", "value": "2"}]}]}}}});
    let got = deps
        .patch("web", &PatchParams::apply("b").force(), &Patch::Apply(&b))
        .await
        .unwrap();
    assert_eq!(
        containers(&got),
        serde_json::json!([{"name": "app", "image": "app:1", "ports": [{"containerPort": 80}],
            "env": [{"name": "FOO", "value": "1"}, {"name": "BAR", "value": "2"}]}])
    );
    // A port applied without its protocol is keyed by the Go default, as kube keys it.
    let a_fields = serde_json::to_value(&got.metadata.managed_fields.unwrap()[0]).unwrap();
    let ports = &a_fields["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]
        ["f:ports"];
    assert!(
        ports
            .get("k:{\"containerPort\":80,\"protocol\":\"TCP\"}")
            .is_some(),
        "{ports}"
    );
}

#[tokio::test]
async fn a_strategic_merge_patch_merges_containers_by_name_and_deletes_one() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = cluster().await;
    let deps: Api<Deployment> = Api::default_namespaced(cluster.client());
    let d: Deployment = serde_json::from_value(deployment(serde_json::json!([
        {"name": "app", "image": "app:1", "env": [{"name": "FOO", "value": "1"}]},
        {"name": "sidecar", "image": "side:1"}
    ])))
    .unwrap();
    deps.create(&PostParams::default(), &d).await.unwrap();
    let p = serde_json::json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "app:2", "env": [{"name": "BAR", "value": "2"}]}]}}}});
    let got = deps
        .patch("web", &PatchParams::default(), &Patch::Strategic(&p))
        .await
        .unwrap();
    assert_eq!(
        containers(&got),
        serde_json::json!([
            {"name": "app", "image": "app:2",
             "env": [{"name": "FOO", "value": "1"}, {"name": "BAR", "value": "2"}]},
            {"name": "sidecar", "image": "side:1"}
        ])
    );
    let p = serde_json::json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "$patch": "delete"}]}}}});
    let got = deps
        .patch("web", &PatchParams::default(), &Patch::Strategic(&p))
        .await
        .unwrap();
    assert_eq!(
        containers(&got),
        serde_json::json!([{"name": "app", "image": "app:2",
            "env": [{"name": "FOO", "value": "1"}, {"name": "BAR", "value": "2"}]}])
    );
    // A directive the server does not know is refused, naming it.
    let p = serde_json::json!({"spec": {"$unknown": 1}});
    let (code, _, message) = api_error(
        deps.patch("web", &PatchParams::default(), &Patch::Strategic(&p))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
    assert!(message.contains("\"$unknown\""), "{message}");
    // Custom resources answer 415, as kube-apiserver answers them.
    let widgets: Api<Widget> = Api::default_namespaced(cluster.client());
    widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec { size: 1 }),
        )
        .await
        .unwrap();
    let (code, _, _) = api_error(
        widgets
            .patch(
                "w",
                &PatchParams::default(),
                &Patch::Strategic(&serde_json::json!({"spec": {"size": 2}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 415);
}
