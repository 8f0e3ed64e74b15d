//! The webhook server's memory under large ConversionReviews: the process's resident set
//! after each review, as `/proc/self/status` reports it (Linux only).
//!
//!   cargo bench -p rsbuilder-runtime --bench conversion_memory
//!
//! The server (TLS, the conversion of a two-version kind) and the client run in this
//! process. Each review holds `OBJECTS` objects whose specs together make `REVIEW_BYTES` of
//! JSON, to convert from v2 to v1. First `SEQUENTIAL` reviews one after the other, then
//! `ROUNDS` rounds of `CONCURRENT` reviews sent at once, each on its own connection. Printed
//! after each review (or round): `VmRSS` (resident now) and `VmHWM` (the highest resident so
//! far), in MiB. Last, one review just under [`CONVERSION_BODY_LIMIT`]. The client's share: the request bodies (built once, shared) and each answer
//! while it is read (one review's size per review in flight).

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rsbuilder_runtime::tls::{Certificates, crypto_provider};
use rsbuilder_runtime::webhook::{
    CONVERSION_BODY_LIMIT, CONVERSION_PATH, Conversion, Convert, Webhooks, serve_listener,
};
use serde::{Deserialize, Serialize};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_util::sync::CancellationToken;

const REVIEW_BYTES: usize = 4 * 1024 * 1024;
const OBJECTS: usize = 16;
const SEQUENTIAL: usize = 12;
const CONCURRENT: usize = 4;
const ROUNDS: usize = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    name: String,
    value: String,
    weight: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SpecV1 {
    replicas: i32,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SpecV2 {
    size: i32,
    entries: Vec<Entry>,
}

/// A kind `$name` of `widgets.example.com` in `$version`, written with its `apiVersion`
/// and `kind` as kube-derive writes a custom resource.
macro_rules! kind {
    ($name:ident, $version:literal, $spec:ty) => {
        #[derive(Debug, Clone, Deserialize)]
        struct $name {
            #[serde(default)]
            metadata: ObjectMeta,
            spec: $spec,
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
                }
                Wire {
                    api_version: concat!("example.com/", $version),
                    kind: "Widget",
                    metadata: &self.metadata,
                    spec: &self.spec,
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

kind!(WidgetV1, "v1", SpecV1);
kind!(WidgetV2, "v2", SpecV2);

impl Convert<WidgetV1> for WidgetV2 {
    fn to_hub(self) -> anyhow::Result<WidgetV1> {
        Ok(WidgetV1 {
            metadata: self.metadata,
            spec: SpecV1 {
                replicas: self.spec.size,
                entries: self.spec.entries,
            },
        })
    }

    fn from_hub(hub: WidgetV1) -> anyhow::Result<Self> {
        Ok(WidgetV2 {
            metadata: hub.metadata,
            spec: SpecV2 {
                size: hub.spec.replicas,
                entries: hub.spec.entries,
            },
        })
    }
}

/// A ConversionReview of `objects` v2 widgets, about `bytes` long, in the field order
/// kube-apiserver writes. Written as text, so that building it leaves no freed memory
/// behind in this process.
fn review_body(bytes: usize, objects: usize) -> Bytes {
    use std::fmt::Write as _;
    let per_object = bytes / objects;
    // One entry is about 120 bytes of JSON.
    let entries = per_object / 120;
    let mut out = String::with_capacity(bytes + bytes / 8);
    out.push_str(
        r#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"c0a1b2c3-0000-4000-8000-000000000003","desiredAPIVersion":"example.com/v1","objects":["#,
    );
    for i in 0..objects {
        if i > 0 {
            out.push(',');
        }
        write!(
            out,
            r#"{{"apiVersion":"example.com/v2","kind":"Widget","metadata":{{"name":"w{i}","namespace":"default","uid":"0000-{i}"}},"spec":{{"size":{i},"entries":["#
        )
        .unwrap();
        for j in 0..entries {
            if j > 0 {
                out.push(',');
            }
            write!(
                out,
                r#"{{"name":"entry-{j:08}","value":"{:064x}","weight":{j}}}"#,
                j * 7919
            )
            .unwrap();
        }
        out.push_str("]}}");
    }
    out.push_str("]}}");
    Bytes::from(out)
}

/// `VmRSS` and `VmHWM` of this process, in MiB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

struct Client {
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
}

impl Client {
    /// Posts `body` on a new connection; the HTTP status, the answer's length and whether
    /// it says `Success`.
    async fn convert(&self, body: Bytes) -> (u16, usize, bool) {
        let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let tls = TlsConnector::from(self.config.clone())
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(conn);
        let request = hyper::Request::post(format!("{CONVERSION_PATH}?timeout=30s"))
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(body))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status().as_u16();
        let answer = response.into_body().collect().await.unwrap().to_bytes();
        let success = answer.windows(20).any(|w| w == br#"{"status":"Success"}"#);
        (status, answer.len(), success)
    }
}

fn report(what: &str, status: u16, answer: usize, success: bool) {
    let (rss, hwm) = memory();
    println!(
        "{what:<24} HTTP {status} answer {:>5.2} MiB {} VmRSS {rss:>6.1} MiB VmHWM {hwm:>6.1} MiB",
        answer as f64 / 1048576.0,
        if success { "Success" } else { "FAILED " },
    );
}

#[tokio::main]
async fn main() {
    let body = review_body(REVIEW_BYTES, OBJECTS);
    let (rss, hwm) = memory();
    println!(
        "review: {OBJECTS} objects, {:.2} MiB; before the server: VmRSS {rss:.1} MiB VmHWM {hwm:.1} MiB",
        body.len() as f64 / 1048576.0
    );
    let certs = Certificates::self_signed(&["localhost"]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certs.leaf().unwrap()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let webhooks = Webhooks::new().conversion(Conversion::<WidgetV1>::new().spoke::<WidgetV2>());
    let server = tokio::spawn(serve_listener(listener, certs, webhooks, shutdown.clone()));
    let client = Arc::new(Client {
        addr,
        config: Arc::new(config),
    });

    for i in 1..=SEQUENTIAL {
        let (status, len, success) = client.convert(body.clone()).await;
        report(&format!("sequential {i}"), status, len, success);
    }
    for round in 1..=ROUNDS {
        let tasks: Vec<_> = (0..CONCURRENT)
            .map(|_| {
                let (client, body) = (client.clone(), body.clone());
                tokio::spawn(async move { client.convert(body).await })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        let status = answers.iter().map(|a| a.0).max().unwrap_or(0);
        let len = answers.iter().map(|a| a.1).max().unwrap_or(0);
        let success = answers.iter().all(|a| a.2);
        report(
            &format!("{CONCURRENT} at once, round {round}"),
            status,
            len,
            success,
        );
    }
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    report("2 s later", 0, 0, true);
    // One review just under the default body limit, objects of the same size.
    let largest = CONVERSION_BODY_LIMIT - CONVERSION_BODY_LIMIT / 16;
    let body = review_body(largest, OBJECTS * largest / REVIEW_BYTES);
    report(
        &format!("{:.2} MiB body built", body.len() as f64 / 1048576.0),
        0,
        0,
        true,
    );
    let (status, len, success) = client.convert(body).await;
    report("largest review", status, len, success);
    shutdown.cancel();
    let _ = server.await;
}
