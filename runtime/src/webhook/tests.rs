// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The webhook server against requests shaped as kube-apiserver sends them: AdmissionReview
//! and ConversionReview JSON posted over TLS (HTTP/1.1, `Content-Type: application/json`) to
//! a running server with a self-signed certificate.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tls::Certificates;

/// Defines a test kind `$name` of `widgets.example.com` in `$version`, serialized as
/// kube-derive serializes a custom resource (`apiVersion` and `kind` written from the type).
macro_rules! widget {
    ($name:ident, $version:literal, $spec:ty) => {
        #[derive(Debug, Clone, Default, Deserialize)]
        struct $name {
            #[serde(default)]
            metadata: ObjectMeta,
            spec: $spec,
            #[serde(default)]
            status: Option<WidgetStatus>,
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[derive(Serialize)]
                #[serde(rename_all = "camelCase")]
                struct Wire<'a> {
                    api_version: &'a str,
                    kind: &'a str,
                    metadata: &'a ObjectMeta,
                    spec: &'a $spec,
                    #[serde(skip_serializing_if = "Option::is_none")]
                    status: &'a Option<WidgetStatus>,
                }
                Wire {
                    api_version: concat!("example.com/", $version),
                    kind: "Widget",
                    metadata: &self.metadata,
                    spec: &self.spec,
                    status: &self.status,
                }
                .serialize(s)
            }
        }

        impl kube::Resource for $name {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                "Widget".into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                "example.com".into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
                "widgets".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct WidgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replicas: Option<i32>,
    #[serde(default)]
    color: String,
}

/// The v2 spec: `replicas` is called `size`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct WidgetSpecV2 {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<i32>,
    #[serde(default)]
    color: String,
}

/// A status as scaffolded: `conditions` is always written, so `status: {}` read and written
/// back becomes `status: {"conditions": []}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct WidgetStatus {
    #[serde(default)]
    conditions: Vec<Value>,
}

widget!(Widget, "v1", WidgetSpec);
widget!(WidgetV2, "v2", WidgetSpecV2);

impl Convert<Widget> for WidgetV2 {
    fn to_hub(self) -> anyhow::Result<Widget> {
        if self.spec.color == "infrared" {
            anyhow::bail!("spec.color: infrared has no v1 form");
        }
        Ok(Widget {
            metadata: self.metadata,
            spec: WidgetSpec {
                replicas: self.spec.size,
                color: self.spec.color,
            },
            status: self.status,
        })
    }

    fn from_hub(hub: Widget) -> anyhow::Result<Self> {
        Ok(WidgetV2 {
            metadata: hub.metadata,
            spec: WidgetSpecV2 {
                size: hub.spec.replicas,
                color: hub.spec.color,
            },
            status: hub.status,
        })
    }
}

/// Only for registering a spoke of the hub's own version, which is refused.
impl Convert<Widget> for Widget {
    fn to_hub(self) -> anyhow::Result<Widget> {
        Ok(self)
    }

    fn from_hub(hub: Widget) -> anyhow::Result<Self> {
        Ok(hub)
    }
}

/// Defaults `spec.replicas` to 1; refuses to default the color `forbidden`.
struct WidgetWebhook;

impl Defaulter<Widget> for WidgetWebhook {
    async fn default(&self, widget: &mut Widget) -> Result<(), Denied> {
        if widget.spec.color == "forbidden" {
            return Err(Denied::new("spec.color: forbidden cannot be defaulted"));
        }
        widget.spec.replicas.get_or_insert(1);
        Ok(())
    }
}

/// At most 10 replicas; a changed color is warned about; deletion of a `keep` widget denied.
impl Validator<Widget> for WidgetWebhook {
    async fn validate_create(&self, widget: &Widget) -> Validation {
        if widget.spec.color == "slow" {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        }
        match widget.spec.replicas {
            Some(n) if n > 10 => Err(Denied {
                message: format!("spec.replicas: must be at most 10, got {n}"),
                warnings: vec!["replicas are capped at 10".into()],
            }),
            _ => Ok(vec![]),
        }
    }

    async fn validate_update(&self, old: &Widget, new: &Widget) -> Validation {
        let mut warnings = self.validate_create(new).await?;
        if old.spec.color != new.spec.color {
            warnings.push(format!(
                "spec.color changed from {} to {}",
                old.spec.color, new.spec.color
            ));
        }
        Ok(warnings)
    }

    async fn validate_delete(&self, widget: &Widget) -> Validation {
        if widget.spec.color == "keep" {
            return Err("widgets colored keep are never deleted".into());
        }
        Ok(vec![])
    }
}

pub(super) const MUTATE: &str = "/mutate-example-com-v1-widget";
pub(super) const VALIDATE: &str = "/validate-example-com-v1-widget";

pub(super) fn webhooks() -> Webhooks {
    Webhooks::new()
        .defaulting::<Widget, _>(MUTATE, WidgetWebhook)
        .validating::<Widget, _>(VALIDATE, WidgetWebhook)
        .conversion(Conversion::<Widget>::new().spoke::<WidgetV2>())
}

/// The webhook server on a loopback port with a self-signed certificate for `localhost`;
/// cancelled when dropped.
pub(super) struct Server {
    pub(super) addr: SocketAddr,
    roots: Arc<rustls::RootCertStore>,
    pub(super) shutdown: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub(super) async fn start(webhooks: Webhooks) -> Server {
    start_with(webhooks, crate::tls::KEEP_ALIVE_IDLE_TIMEOUT).await
}

/// [`start`], closing kept-alive connections after `idle_timeout`.
pub(super) async fn start_with(webhooks: Webhooks, idle_timeout: std::time::Duration) -> Server {
    let certs = Certificates::self_signed(&["localhost"]).expect("a self-signed certificate");
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(certs.leaf().expect("the certificate"))
        .expect("trust the test certificate");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("local address");
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_listener_with(
        listener,
        certs,
        webhooks,
        shutdown.clone(),
        idle_timeout,
    ));
    Server {
        addr,
        roots: Arc::new(roots),
        shutdown,
    }
}

impl Server {
    /// POSTs `body` to `path` with `content_type` over HTTPS, as the API server does
    /// (verifying the server's certificate). Returns the HTTP status and the JSON answer.
    async fn post_raw(&self, path: &str, content_type: &str, body: Vec<u8>) -> (u16, Value) {
        let mut sender = self.connect().await;
        send(&mut sender, path, content_type, body)
            .await
            .expect("a response")
    }

    /// A new HTTPS connection to the server, ready to send requests (kept alive).
    pub(super) async fn connect(&self) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
        let config = rustls::ClientConfig::builder_with_provider(crate::tls::crypto_provider())
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connect");
        let tls = TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("localhost").expect("name"), tcp)
            .await
            .expect("TLS handshake");
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .expect("HTTP handshake");
        tokio::spawn(conn);
        sender
    }

    pub(super) async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.post_raw(path, "application/json", body.to_string().into_bytes())
            .await
    }

    /// Posts an AdmissionReview and returns its `response`, checking the envelope.
    pub(super) async fn admit(&self, path: &str, review: &Value) -> Value {
        let (status, answer) = self.post(path, review).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(answer["response"]["uid"], review["request"]["uid"]);
        answer["response"].clone()
    }
}

/// POSTs `body` to `path` on an open connection; the HTTP status and the JSON answer, or
/// hyper's error when the connection is closed.
pub(super) async fn send(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> hyper::Result<(u16, Value)> {
    {
        let request = hyper::Request::post(format!("{path}?timeout=10s"))
            .header("host", "localhost")
            .header("content-type", content_type)
            .header("accept", "application/json, */*")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let json = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "a JSON answer, got {e}: {}",
                String::from_utf8_lossy(&bytes)
            )
        });
        Ok((status, json))
    }
}

/// A Widget as the API server sends it: `status: {}`, fractional-second times in
/// `managedFields`, a `null`, and a field the Rust types do not know.
pub(super) fn widget(spec: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {
            "name": "w",
            "namespace": "default",
            "uid": "5e2c1f0a-0000-4000-8000-000000000001",
            "generation": 1,
            "creationTimestamp": null,
            "managedFields": [{
                "apiVersion": "example.com/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {".": {}, "f:color": {}}},
                "manager": "kubectl",
                "operation": "Update",
                "time": "2026-01-02T03:04:05.123456Z",
            }],
        },
        "spec": spec,
        "status": {},
        "extra": {"kept": true},
    })
}

/// An AdmissionReview request as kube-apiserver sends it for `operation` on `widgets`.
pub(super) fn review(operation: &str, object: Value, old_object: Value) -> Value {
    review_of(
        json!({"group": "example.com", "version": "v1", "kind": "Widget"}),
        json!({"group": "example.com", "version": "v1", "resource": "widgets"}),
        operation,
        object,
        old_object,
    )
}

pub(super) fn review_of(
    kind: Value,
    resource: Value,
    operation: &str,
    object: Value,
    old: Value,
) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0b0a4b9e-0000-4000-8000-000000000002",
            "kind": kind,
            "resource": resource,
            "requestKind": kind,
            "requestResource": resource,
            "name": "w",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": object,
            "oldObject": old,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    })
}

/// The JSON patch of a response: a base64 string holding a JSON array.
fn patch_of(response: &Value) -> Value {
    let encoded = response["patch"]
        .as_str()
        .unwrap_or_else(|| panic!("patch is a base64 string: {response}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    serde_json::from_slice(&bytes).expect("a JSON patch")
}

#[tokio::test]
async fn defaulting_patches_only_what_default_changed() {
    let server = start(webhooks()).await;
    let object = widget(json!({"color": "red", "ports": null}));
    // The scenario is real: the typed round trip rewrites this object.
    let typed = serde_json::to_value(Widget::deserialize(&object).unwrap()).unwrap();
    assert_eq!(typed["status"], json!({"conditions": []}));
    assert_ne!(typed["metadata"], object["metadata"]);
    assert!(typed.get("extra").is_none());

    let response = server
        .admit(MUTATE, &review("CREATE", object, Value::Null))
        .await;
    assert_eq!(response["allowed"], true);
    assert_eq!(response["status"]["code"], 200);
    assert_eq!(response["patchType"], "JSONPatch");
    assert_eq!(
        patch_of(&response),
        json!([{"op": "add", "path": "/spec/replicas", "value": 1}])
    );
}

#[tokio::test]
async fn defaulting_an_update_of_a_defaulted_object_sends_no_patch() {
    let server = start(webhooks()).await;
    let object = widget(json!({"color": "red", "replicas": 3}));
    let response = server
        .admit(MUTATE, &review("UPDATE", object.clone(), object))
        .await;
    assert_eq!(response["allowed"], true);
    assert!(response.get("patch").is_none(), "{response}");
    assert!(response.get("patchType").is_none(), "{response}");
}

#[tokio::test]
async fn defaulting_skips_deletes() {
    let server = start(webhooks()).await;
    let response = server
        .admit(MUTATE, &review("DELETE", Value::Null, widget(json!({}))))
        .await;
    assert_eq!(response["allowed"], true);
    assert!(response.get("patch").is_none(), "{response}");
}

#[tokio::test]
async fn a_defaulter_error_is_a_403_denial() {
    let server = start(webhooks()).await;
    let object = widget(json!({"color": "forbidden"}));
    let response = server
        .admit(MUTATE, &review("CREATE", object, Value::Null))
        .await;
    assert_eq!(response["allowed"], false);
    assert_eq!(
        response["status"],
        json!({"code": 403, "reason": "Forbidden", "message": "spec.color: forbidden cannot be defaulted"})
    );
    assert!(response.get("patch").is_none());
}

#[tokio::test]
async fn a_pod_review_is_denied_and_never_patched() {
    let server = start(webhooks()).await;
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    });
    let review = review_of(
        json!({"group": "", "version": "v1", "kind": "Pod"}),
        json!({"group": "", "version": "v1", "resource": "pods"}),
        "CREATE",
        pod,
        Value::Null,
    );
    for path in [MUTATE, VALIDATE] {
        let response = server.admit(path, &review).await;
        assert_eq!(response["allowed"], false, "{path}");
        assert!(response.get("patch").is_none(), "{path}: {response}");
        assert_eq!(response["status"]["code"], 400);
        assert_eq!(
            response["status"]["message"],
            "this webhook admits Widget of example.com/v1 (resource widgets), not Pod of v1 \
             (resource pods); the rules of its webhook configuration must select only widgets \
             in example.com/v1"
        );
    }
}

#[tokio::test]
async fn another_version_or_resource_of_the_kind_is_denied() {
    let server = start(webhooks()).await;
    let cases = [
        (
            json!({"group": "example.com", "version": "v2", "kind": "Widget"}),
            json!({"group": "example.com", "version": "v2", "resource": "widgets"}),
        ),
        (
            json!({"group": "example.com", "version": "v1", "kind": "Widget"}),
            json!({"group": "example.com", "version": "v1", "resource": "gadgets"}),
        ),
    ];
    for (kind, resource) in cases {
        let review = review_of(kind, resource, "CREATE", widget(json!({})), Value::Null);
        let response = server.admit(MUTATE, &review).await;
        assert_eq!(response["allowed"], false, "{response}");
        assert!(response.get("patch").is_none(), "{response}");
    }
}

#[tokio::test]
async fn a_validation_denial_is_403_forbidden_with_its_message_and_warnings() {
    let server = start(webhooks()).await;
    let object = widget(json!({"color": "red", "replicas": 11}));
    let response = server
        .admit(VALIDATE, &review("CREATE", object, Value::Null))
        .await;
    assert_eq!(response["allowed"], false);
    assert_eq!(
        response["status"],
        json!({"code": 403, "reason": "Forbidden", "message": "spec.replicas: must be at most 10, got 11"})
    );
    assert_eq!(response["warnings"], json!(["replicas are capped at 10"]));
}

#[tokio::test]
async fn an_update_is_validated_with_the_old_and_the_new_object() {
    let server = start(webhooks()).await;
    let old = widget(json!({"color": "red", "replicas": 1}));
    let new = widget(json!({"color": "blue", "replicas": 1}));
    let response = server.admit(VALIDATE, &review("UPDATE", new, old)).await;
    assert_eq!(response["allowed"], true);
    assert_eq!(response["status"]["code"], 200);
    assert_eq!(
        response["warnings"],
        json!(["spec.color changed from red to blue"])
    );
}

#[tokio::test]
async fn a_delete_is_validated_with_the_old_object() {
    let server = start(webhooks()).await;
    let response = server
        .admit(
            VALIDATE,
            &review("DELETE", Value::Null, widget(json!({"color": "keep"}))),
        )
        .await;
    assert_eq!(response["allowed"], false);
    assert_eq!(
        response["status"]["message"],
        "widgets colored keep are never deleted"
    );
    let response = server
        .admit(
            VALIDATE,
            &review("DELETE", Value::Null, widget(json!({"color": "red"}))),
        )
        .await;
    assert_eq!(response["allowed"], true);
}

/// A Widget whose serialized size is about `bytes`, in an annotation.
fn big_widget(bytes: usize) -> Value {
    let mut object = widget(json!({"color": "red"}));
    object["metadata"]["annotations"] = json!({"example.com/blob": "x".repeat(bytes)});
    object
}

#[tokio::test]
async fn an_update_review_over_2_mib_is_admitted() {
    let server = start(webhooks()).await;
    // 1.4 MiB objects, twice in the review: about 2.8 MiB.
    let object = big_widget(1_400 * 1024);
    let review = review("UPDATE", object.clone(), object);
    assert!(review.to_string().len() > 2 * 1024 * 1024);
    let response = server.admit(MUTATE, &review).await;
    assert_eq!(response["allowed"], true, "{response}");
    assert_eq!(
        patch_of(&response),
        json!([{"op": "add", "path": "/spec/replicas", "value": 1}])
    );
}

#[tokio::test]
async fn a_review_over_7_mib_is_answered_413_with_the_limit() {
    let server = start(webhooks()).await;
    let object = big_widget(4 * 1024 * 1024);
    let review = review("UPDATE", object.clone(), object);
    let (status, answer) = server.post(VALIDATE, &review).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(
        answer["response"]["status"],
        json!({"code": 413, "message": "request entity is too large; limit is 7340032 bytes"})
    );
}

#[tokio::test]
async fn a_body_that_is_not_a_json_admission_review_is_a_bad_request() {
    let server = start(webhooks()).await;
    let (_, answer) = server
        .post_raw(VALIDATE, "text/plain", b"{}".to_vec())
        .await;
    assert_eq!(answer["response"]["status"]["code"], 400);
    assert_eq!(
        answer["response"]["status"]["message"],
        "contentType=text/plain, expected application/json"
    );
    let (_, answer) = server
        .post(VALIDATE, &json!({"kind": "AdmissionReview"}))
        .await;
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(
        answer["response"]["status"]["message"],
        "the AdmissionReview has no request"
    );
    let (_, answer) = server
        .post_raw(VALIDATE, "application/json", b"[1]".to_vec())
        .await;
    assert_eq!(answer["response"]["status"]["code"], 400);
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the request body is not an AdmissionReview: "),
        "{message}"
    );
}

/// A ConversionReview request as kube-apiserver sends it.
fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c0a1b2c3-0000-4000-8000-000000000003",
            "desiredAPIVersion": desired,
            "objects": objects,
        },
    })
}

fn widget_v2(spec: Value) -> Value {
    let mut object = widget(spec);
    object["apiVersion"] = json!("example.com/v2");
    object["metadata"]["managedFields"][0]["apiVersion"] = json!("example.com/v2");
    object
}

#[tokio::test]
async fn conversion_changes_only_what_it_converts() {
    let server = start(webhooks()).await;
    let v2 = widget_v2(json!({"color": "red", "size": 3}));
    let (status, answer) = server
        .post(
            CONVERSION_PATH,
            &conversion_review("example.com/v1", vec![v2.clone()]),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(answer["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(answer["kind"], "ConversionReview");
    let response = &answer["response"];
    assert_eq!(response["uid"], "c0a1b2c3-0000-4000-8000-000000000003");
    assert_eq!(response["result"], json!({"status": "Success"}));
    let mut expected = v2.clone();
    expected["apiVersion"] = json!("example.com/v1");
    expected["spec"] = json!({"color": "red", "replicas": 3});
    assert_eq!(response["convertedObjects"], json!([expected]));

    // And back: the same object as first sent.
    let (_, answer) = server
        .post(
            CONVERSION_PATH,
            &conversion_review("example.com/v2", vec![expected]),
        )
        .await;
    assert_eq!(answer["response"]["convertedObjects"], json!([v2]));
}

#[tokio::test]
async fn a_conversion_review_of_a_list_over_2_mib_is_converted_in_order() {
    let server = start(webhooks()).await;
    let objects: Vec<Value> = (0..2_000)
        .map(|i| {
            let mut o = widget_v2(json!({"color": "x".repeat(1024), "size": i}));
            o["metadata"]["name"] = json!(format!("w{i}"));
            o
        })
        .collect();
    let review = conversion_review("example.com/v1", objects);
    assert!(review.to_string().len() > 2 * 1024 * 1024);
    let (status, answer) = server.post(CONVERSION_PATH, &review).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["result"]["status"], "Success");
    let converted = answer["response"]["convertedObjects"].as_array().unwrap();
    assert_eq!(converted.len(), 2_000);
    for (i, o) in converted.iter().enumerate() {
        assert_eq!(o["metadata"]["name"], format!("w{i}"));
        assert_eq!(o["spec"]["replicas"], i);
        assert_eq!(o["apiVersion"], "example.com/v1");
    }
}

#[tokio::test]
async fn a_failed_conversion_names_the_object_and_the_reason() {
    let server = start(webhooks()).await;
    let ok = widget_v2(json!({"color": "red"}));
    let mut bad = widget_v2(json!({"color": "infrared"}));
    bad["metadata"]["name"] = json!("ir");
    let (status, answer) = server
        .post(
            CONVERSION_PATH,
            &conversion_review("example.com/v1", vec![ok, bad]),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        answer["response"]["result"],
        json!({
            "status": "Failure",
            "message": "object 1 (\"ir\"): example.com/v2 Widget: spec.color: infrared has no v1 form",
        })
    );
    assert_eq!(answer["response"]["convertedObjects"], json!([]));

    let (_, answer) = server
        .post(
            CONVERSION_PATH,
            &conversion_review("example.com/v3", vec![widget(json!({}))]),
        )
        .await;
    assert_eq!(
        answer["response"]["result"]["message"],
        "object 0 (\"w\"): Widget has no version \"example.com/v3\" here (conversions: example.com/v1, example.com/v2)"
    );
}

#[tokio::test]
async fn a_body_that_is_not_a_conversion_review_gets_400() {
    let server = start(webhooks()).await;
    let (status, answer) = server
        .post(CONVERSION_PATH, &json!({"request": {"uid": 1}}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    let message = answer["response"]["result"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the request body is not a ConversionReview"),
        "{message}"
    );
}

#[test]
fn carry_over_copies_fields_of_the_same_name_and_names_a_missing_one() {
    let v1 = Widget::deserialize(widget(json!({"color": "red", "replicas": 2}))).unwrap();
    let v2: WidgetV2 = carry_over(&v1).unwrap();
    assert_eq!(v2.spec.color, "red");
    assert_eq!(v2.spec.size, None, "replicas is not size");
    assert_eq!(v2.metadata.name.as_deref(), Some("w"));

    /// A version whose spec requires a field v1 does not have.
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    struct StrictSpec {
        shape: String,
    }
    widget!(WidgetV3, "v3", StrictSpec);
    let err = carry_over::<_, WidgetV3>(&v1).unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot carry the fields over to example.com/v3 Widget: missing field `shape`"
    );
}

#[test]
fn misregistered_webhooks_are_reported_not_served() {
    let err = Webhooks::new()
        .defaulting::<Widget, _>(MUTATE, WidgetWebhook)
        .validating::<Widget, _>(MUTATE, WidgetWebhook)
        .defaulting::<Widget, _>("mutate", WidgetWebhook)
        .conversion(Conversion::<Widget>::new().spoke::<Widget>())
        .routes()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "webhooks: webhook path \"/mutate-example-com-v1-widget\" registered twice; webhook path \
         \"mutate\" must start with '/'; the spoke example.com/v1 Widget cannot convert to the \
         hub example.com/v1 Widget"
    );
}

#[test]
fn a_missing_certificate_directory_names_the_flag_and_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("serving-certs");
    let err = match certificates_from(&missing, None) {
        Ok(_) => panic!("loaded certificates from a missing directory"),
        Err(e) => format!("{e:#}"),
    };
    let want = format!(
        "cannot load the webhook serving certificate (tls.crt, tls.key) from --webhook-cert-dir \
         {}. In the cluster, cert-manager writes it there; to run the manager on this machine \
         without its webhooks, set ENABLE_WEBHOOKS=false (`make run ENABLE_WEBHOOKS=false`): ",
        missing.display()
    );
    assert!(err.starts_with(&want), "{err}");
    assert!(err.contains("tls.crt"), "{err}");
    // Any other value than `false` still asks for the certificate.
    assert!(certificates_from(&missing, Some("true")).is_err());
    assert!(certificates_from(&missing, Some("")).is_err());
}

#[test]
fn enable_webhooks_false_loads_no_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("serving-certs");
    assert!(
        certificates_from(&missing, Some("false"))
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_certificate_directory_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.path().join("tls.crt"), generated.cert.pem()).unwrap();
    std::fs::write(
        dir.path().join("tls.key"),
        generated.signing_key.serialize_pem(),
    )
    .unwrap();
    assert!(certificates_from(dir.path(), None).unwrap().is_some());
    // The flag reaches it from the parsed arguments.
    let options = crate::manager::Options {
        version: "0.0.0",
        leader_election_id: "test.example.com",
        namespaced: false,
    };
    let flag = dir.path().display().to_string();
    let args = crate::manager::Args::try_parse_from_with(
        &options,
        ["manager", "--webhook-cert-dir", flag.as_str()],
    )
    .unwrap();
    assert_eq!(args.webhook_cert_dir, dir.path());
}
