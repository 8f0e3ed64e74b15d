//! The aggregated API server under load on loopback (figures in docs/benchmarks.md, run
//! through `scripts/bench-apiserver.sh`).
//!
//! The server runs in this process exactly as a project's `src/bin/apiserver.rs` runs it
//! (`ApiServer::serve` over TLS with a self-signed certificate, the Database example's kind with
//! its schema validation), and the client speaks HTTP/1.1 over TLS to it on 127.0.0.1 with
//! keep-alive connections, as kubectl and client-go do. For each store (redb, and etcd when
//! built with the `etcd` feature and an `etcd` binary is in PATH):
//!
//! 1. create `BENCH_OBJECTS` objects (default 10,000) over `BENCH_CONNECTIONS` connections
//!    (default 16);
//! 2. get as many, in a scattered order;
//! 3. list: all objects in one answer, and in pages of 500;
//! 4. watch: `BENCH_WATCHERS` watchers (default 100, one connection each) from the current
//!    resourceVersion, while `BENCH_WATCH_WRITES` merge patches (default 1,000) are written;
//!    each watcher must see every one. Latency is from the start of the write to its arrival
//!    at a watcher;
//! 5. memory: the resident set size (VmRSS) of this process (and of etcd) before and after
//!    the creates, and the store's size on disk;
//! 6. recovery: the server is shut down and its store closed (etcd: stopped with SIGTERM),
//!    then opened again and served; the time until a full list answers with every object.
//!
//! Each request's status is checked; a wrong one stops the benchmark with the answer. Not
//! a criterion benchmark: the phases run once each, on purpose (10k writes, 100 watchers),
//! and print one Markdown table row per measurement.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use kube::CustomResource;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::{RedbStore, Storage};
use rsbuilder_runtime::tls::{self, Certificates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, pki_types};
use tokio_util::sync::CancellationToken;

/// The Database API server example's kind, as `examples/database-apiserver` declares it.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "db.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas")
)]
pub struct DatabaseSpec {
    engine: Engine,
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+\.[0-9]+$"))]
    version: String,
    #[schemars(range(min = 1, max = 10))]
    replicas: i32,
}

#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Engine {
    Mysql,
    Postgresql,
    Mongodb,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct DatabaseStatus {
    phase: Option<String>,
}

const COLLECTION: &str = "/apis/db.example.com/v1/namespaces/default/databases";

/// The benchmark's sizes, from the environment.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    objects: usize,
    connections: usize,
    watchers: usize,
    watch_writes: usize,
}

fn env_size(name: &str, default: usize) -> anyhow::Result<usize> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| anyhow!("{name}={v:?}: not a positive number")),
        Err(_) => Ok(default),
    }
}

/// A running server and what a client needs to reach it.
struct Running {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    connector: TlsConnector,
}

/// Serves `store` on a free loopback port, as the scaffolded binary serves it.
async fn start<S: Storage>(store: S) -> anyhow::Result<Running> {
    let kind = ApiKind::of::<Database>().map_err(anyhow::Error::msg)?;
    let shutdown = CancellationToken::new();
    let server = ApiServer::new(Config::new(vec![kind]), store, shutdown.clone());
    let certs = Arc::new(Certificates::self_signed(&["localhost"])?);
    let leaf = certs.leaf().context("the self-signed certificate")?;
    let listener = tls::bind("127.0.0.1:0".parse()?).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        server
            .serve(listener, certs, rsbuilder_runtime::axum::Router::new())
            .await
    });
    let mut roots = rustls::RootCertStore::empty();
    roots.add(leaf)?;
    let config =
        rustls::ClientConfig::builder_with_provider(rsbuilder_runtime::tls::crypto_provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(Running {
        addr,
        shutdown,
        task,
        connector: TlsConnector::from(Arc::new(config)),
    })
}

impl Running {
    /// A new keep-alive HTTP/1.1 connection over TLS.
    async fn connect(&self) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        let tcp = tokio::net::TcpStream::connect(self.addr).await?;
        tcp.set_nodelay(true)?;
        let tls = self
            .connector
            .connect(pki_types::ServerName::try_from("localhost")?, tcp)
            .await?;
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
        tokio::spawn(conn);
        Ok(send)
    }

    async fn connections(&self, n: usize) -> anyhow::Result<Vec<SendRequest<Full<Bytes>>>> {
        let mut all = Vec::with_capacity(n);
        for _ in 0..n {
            all.push(self.connect().await?);
        }
        Ok(all)
    }

    /// Shuts the server down and waits until it has let go of its store.
    async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await??;
        Ok(())
    }
}

/// One request; a status other than `expect` is an error with the answer.
async fn call(
    send: &mut SendRequest<Full<Bytes>>,
    method: Method,
    path: &str,
    body: Option<(&str, &Value)>,
    expect: u16,
) -> anyhow::Result<Bytes> {
    send.ready().await?;
    let mut request = Request::builder()
        .method(method.clone())
        .uri(path)
        .header("host", "localhost");
    let bytes = match body {
        Some((content_type, value)) => {
            request = request.header("content-type", content_type);
            Bytes::from(value.to_string())
        }
        None => Bytes::new(),
    };
    let response = send.send_request(request.body(Full::new(bytes))?).await?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await?.to_bytes();
    if status != expect {
        bail!(
            "{method} {path}: {status} (expected {expect}): {}",
            String::from_utf8_lossy(&body)
        );
    }
    Ok(body)
}

fn object(i: usize) -> Value {
    let engine = ["mysql", "postgresql", "mongodb"][i % 3];
    json!({
        "apiVersion": "db.example.com/v1",
        "kind": "Database",
        "metadata": {"name": name(i), "labels": {"bench": "yes", "shard": (i % 10).to_string()}},
        "spec": {"engine": engine, "version": "8.0.26", "replicas": 1 + (i % 10) as i32},
    })
}

fn name(i: usize) -> String {
    format!("db-{i:06}")
}

/// Latencies of one phase and how long it took.
struct Figures {
    what: String,
    count: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    fn row(&mut self, store: &str) -> String {
        self.latencies.sort();
        let pick = |q: usize| {
            let n = self.latencies.len();
            if n == 0 {
                return "—".to_owned();
            }
            let d = self.latencies[(n * q / 100).min(n - 1)];
            format!("{:.2} ms", d.as_secs_f64() * 1000.0)
        };
        format!(
            "| {store} | {} | {} | {:.2} s | {:.0}/s | {} | {} |",
            self.what,
            self.count,
            self.elapsed.as_secs_f64(),
            self.count as f64 / self.elapsed.as_secs_f64(),
            pick(50),
            pick(99),
        )
    }
}

/// Runs `count` requests made by `make(i)` over `conns`, each connection taking every
/// `conns.len()`-th index in turn.
async fn phase(
    what: &str,
    conns: &mut [SendRequest<Full<Bytes>>],
    count: usize,
    make: impl Fn(usize) -> (Method, String, Option<Value>, u16),
) -> anyhow::Result<Figures> {
    let width = conns.len();
    let make = &make;
    let started = Instant::now();
    let runs = conns.iter_mut().enumerate().map(|(c, send)| async move {
        let mut latencies = Vec::new();
        let mut i = c;
        while i < count {
            let (method, path, body, expect) = make(i);
            let t = Instant::now();
            let content_type = if method == Method::PATCH {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            call(
                send,
                method,
                &path,
                body.as_ref().map(|b| (content_type, b)),
                expect,
            )
            .await?;
            latencies.push(t.elapsed());
            i += width;
        }
        anyhow::Ok(latencies)
    });
    let mut latencies = Vec::with_capacity(count);
    for run in futures::future::join_all(runs).await {
        latencies.extend(run?);
    }
    Ok(Figures {
        what: what.to_owned(),
        count,
        elapsed: started.elapsed(),
        latencies,
    })
}

/// VmRSS of `pid` (`self` for this process), in KiB.
fn rss_kib(pid: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS in /proc/<pid>/status")
}

fn dir_size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if meta.is_file() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| dir_size(&e.path())).sum())
        .unwrap_or(0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The list's resourceVersion and number of items.
fn list_state(body: &[u8]) -> anyhow::Result<(String, usize)> {
    let list: Value = serde_json::from_slice(body)?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .context("a list without resourceVersion")?
        .to_owned();
    let items = list["items"].as_array().map_or(0, Vec::len);
    Ok((rv, items))
}

/// Phases 1–5 on a running server. `other` is a separate store process (etcd) whose memory
/// counts too; `on_disk` is where the store keeps its data.
async fn measure(
    store: &str,
    server: &Running,
    sizes: Sizes,
    other: Option<u32>,
    on_disk: &Path,
) -> anyhow::Result<Vec<String>> {
    let mut rows = Vec::new();
    let mut conns = server.connections(sizes.connections).await?;
    let rss = || -> anyhow::Result<u64> {
        let mut kib = rss_kib("self")?;
        if let Some(pid) = other {
            kib += rss_kib(&pid.to_string())?;
        }
        Ok(kib)
    };
    let disk_before = dir_size(on_disk);
    let rss_before = rss()?;

    let n = sizes.objects;
    let mut create = phase("create", &mut conns, n, |i| {
        (Method::POST, COLLECTION.to_owned(), Some(object(i)), 201)
    })
    .await?;
    rows.push(create.row(store));
    let rss_after = rss()?;
    let disk_after = dir_size(on_disk);

    // A scattered order: 7919 is prime, so i * 7919 mod n visits every object once when n is
    // not a multiple of it.
    let mut get = phase("get", &mut conns, n, |i| {
        (
            Method::GET,
            format!("{COLLECTION}/{}", name(i * 7919 % n)),
            None,
            200,
        )
    })
    .await?;
    rows.push(get.row(store));

    let mut list = phase(
        &format!("list (all {n} objects per answer)"),
        &mut conns[..4.min(sizes.connections)],
        20,
        |_| (Method::GET, COLLECTION.to_owned(), None, 200),
    )
    .await?;
    rows.push(list.row(store));

    // Paging through everything, 500 per page, on one connection.
    let pages = n.div_ceil(500);
    let mut paged = Figures {
        what: "list (pages of 500)".into(),
        count: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
    };
    let started = Instant::now();
    let mut token: Option<String> = None;
    loop {
        let path = match &token {
            Some(t) => format!("{COLLECTION}?limit=500&continue={t}"),
            None => format!("{COLLECTION}?limit=500"),
        };
        let t = Instant::now();
        let body = call(&mut conns[0], Method::GET, &path, None, 200).await?;
        paged.latencies.push(t.elapsed());
        paged.count += 1;
        let page: Value = serde_json::from_slice(&body)?;
        match page["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => token = Some(t.to_owned()),
            _ => break,
        }
    }
    paged.elapsed = started.elapsed();
    if paged.count != pages {
        bail!("paging took {} pages, expected {pages}", paged.count);
    }
    rows.push(paged.row(store));

    rows.extend(watch(store, server, &mut conns, sizes).await?);

    let per_10k = |kib: u64| kib * 10_000 / n as u64;
    rows.push(format!(
        "| {store} | memory: resident set growth over the {n} creates | {} (per 10k: {}) | | | | |",
        mib(rss_after.saturating_sub(rss_before)),
        mib(per_10k(rss_after.saturating_sub(rss_before))),
    ));
    rows.push(format!(
        "| {store} | memory: resident set after the creates{} | {} | | | | |",
        if other.is_some() {
            " (this process + etcd)"
        } else {
            ""
        },
        mib(rss_after)
    ));
    rows.push(format!(
        "| {store} | on disk: growth over the {n} creates | {} | | | | |",
        mib(disk_after.saturating_sub(disk_before) / 1024)
    ));
    Ok(rows)
}

/// Phase 4: watchers from the current revision, then merge patches; every watcher must see
/// every patch.
async fn watch(
    store: &str,
    server: &Running,
    conns: &mut [SendRequest<Full<Bytes>>],
    sizes: Sizes,
) -> anyhow::Result<Vec<String>> {
    let writes = sizes.watch_writes.min(sizes.objects);
    let body = call(
        &mut conns[0],
        Method::GET,
        &format!("{COLLECTION}?limit=1"),
        None,
        200,
    )
    .await?;
    let (rv, _) = list_state(&body)?;
    let sent: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();

    // Open every watch before the first write: `send_request` returns with the headers,
    // which the server sends once the watch is registered with the store.
    let mut watchers = Vec::with_capacity(sizes.watchers);
    for _ in 0..sizes.watchers {
        let mut send = server.connect().await?;
        send.ready().await?;
        let request = Request::get(format!("{COLLECTION}?watch=true&resourceVersion={rv}"))
            .header("host", "localhost")
            .body(Full::new(Bytes::new()))?;
        let response = send.send_request(request).await?;
        if response.status() != 200 {
            bail!("watch: {}", response.status());
        }
        let sent = sent.clone();
        watchers.push(tokio::spawn(async move {
            let _keep = send;
            let mut body = response.into_body();
            let mut buffer = Vec::new();
            let mut latencies = Vec::with_capacity(writes);
            while latencies.len() < writes {
                let Some(frame) = body.frame().await else {
                    bail!("the watch ended after {} events", latencies.len());
                };
                let Ok(data) = frame?.into_data() else {
                    continue;
                };
                buffer.extend_from_slice(&data);
                while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    let event: Value = serde_json::from_slice(&line)?;
                    if event["type"] != "MODIFIED" {
                        bail!("unexpected watch event {event}");
                    }
                    let name = event["object"]["metadata"]["name"].as_str().unwrap_or("");
                    let start = sent.lock().ok().and_then(|m| m.get(name).copied());
                    let start =
                        start.with_context(|| format!("an event for {name} before its write"))?;
                    latencies.push(start.elapsed());
                }
            }
            anyhow::Ok(latencies)
        }));
    }

    let started = Instant::now();
    let mut patch = phase(
        &format!("merge patch, with {} watchers open", sizes.watchers),
        conns,
        writes,
        |i| {
            if let Ok(mut m) = sent.lock() {
                m.insert(name(i), Instant::now());
            }
            (
                Method::PATCH,
                format!("{COLLECTION}/{}", name(i)),
                Some(json!({"spec": {"replicas": 1 + (i + 1) % 10}})),
                200,
            )
        },
    )
    .await?;
    let mut latencies = Vec::with_capacity(writes * sizes.watchers);
    for watcher in watchers {
        let got = tokio::time::timeout(Duration::from_secs(300), watcher)
            .await
            .context("a watcher did not get every event within 300 s")???;
        latencies.extend(got);
    }
    let mut delivered = Figures {
        what: format!(
            "watch: events delivered ({} watchers × {writes} writes), latency write → watcher",
            sizes.watchers
        ),
        count: latencies.len(),
        elapsed: started.elapsed(),
        latencies,
    };
    Ok(vec![patch.row(store), delivered.row(store)])
}

/// Phase 6: time from reopening the store (`open`, described by `how`) to a full list of
/// every object.
async fn recovery<S: Storage, F: Future<Output = anyhow::Result<S>>>(
    store: &str,
    how: &str,
    n: usize,
    open: F,
) -> anyhow::Result<String> {
    let started = Instant::now();
    let reopened = open.await?;
    let opened = started.elapsed();
    let server = start(reopened).await?;
    let mut send = server.connect().await?;
    let body = call(&mut send, Method::GET, COLLECTION, None, 200).await?;
    let total = started.elapsed();
    let (_, items) = list_state(&body)?;
    if items != n {
        bail!("after the restart the list has {items} objects, expected {n}");
    }
    drop(send);
    server.stop().await?;
    Ok(format!(
        "| {store} | recovery: {how}, serve, first full list of {n} | 1 | {:.3} s (open: {:.3} s) | | | |",
        total.as_secs_f64(),
        opened.as_secs_f64()
    ))
}

async fn redb(sizes: Sizes) -> anyhow::Result<Vec<String>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store.redb");
    let server = start(RedbStore::open(&path)?).await?;
    let mut rows = measure("redb", &server, sizes, None, dir.path()).await?;
    server.stop().await?;
    let reopen = async { Ok(RedbStore::open(&path)?) };
    rows.push(recovery("redb", "reopen the store", sizes.objects, reopen).await?);
    Ok(rows)
}

#[cfg(feature = "etcd")]
mod on_etcd {
    use super::*;
    use rsbuilder_runtime::apiserver::etcd::EtcdStorage;
    use std::process::{Child, Command, Stdio};

    pub struct Etcd {
        child: Child,
        data: std::path::PathBuf,
        client_url: String,
        peer_url: String,
    }

    fn free_port() -> anyhow::Result<u16> {
        Ok(std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port())
    }

    /// etcd on `data` with the given URLs, its output thrown away.
    fn spawn(data: &Path, client_url: &str, peer_url: &str) -> anyhow::Result<Child> {
        Command::new("etcd")
            .arg("--data-dir")
            .arg(data)
            .args(["--name", "bench"])
            .args(["--listen-client-urls", client_url])
            .args(["--advertise-client-urls", client_url])
            .args(["--listen-peer-urls", peer_url])
            .args(["--initial-advertise-peer-urls", peer_url])
            .args(["--initial-cluster", &format!("bench={peer_url}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting etcd")
    }

    impl Etcd {
        /// A new single-member etcd on free loopback ports, its data in `data`.
        pub fn start(data: &Path) -> anyhow::Result<Etcd> {
            let client_url = format!("http://127.0.0.1:{}", free_port()?);
            let peer_url = format!("http://127.0.0.1:{}", free_port()?);
            Ok(Etcd {
                child: spawn(data, &client_url, &peer_url)?,
                data: data.to_path_buf(),
                client_url,
                peer_url,
            })
        }

        /// Starts it again on the same data and ports (after [`Etcd::stop`]).
        pub fn restart(&mut self) -> anyhow::Result<()> {
            self.child = spawn(&self.data, &self.client_url, &self.peer_url)?;
            Ok(())
        }

        pub fn pid(&self) -> u32 {
            self.child.id()
        }

        /// SIGTERM, and waits for it to exit.
        pub fn stop(&mut self) -> anyhow::Result<()> {
            let status = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status()?;
            if !status.success() {
                bail!("kill -TERM etcd failed");
            }
            self.child.wait()?;
            Ok(())
        }

        /// Connects, retrying while etcd starts (at most 30 s).
        pub async fn connect(&self) -> anyhow::Result<EtcdStorage> {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                match EtcdStorage::connect(std::slice::from_ref(&self.client_url), "/bench").await {
                    Ok(store) => return Ok(store),
                    Err(e) if Instant::now() > deadline => bail!("etcd did not answer: {e}"),
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        }
    }

    impl Drop for Etcd {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    pub async fn run(sizes: Sizes) -> anyhow::Result<Vec<String>> {
        let dir = tempfile::tempdir()?;
        let data = dir.path().join("data");
        let mut etcd = Etcd::start(&data)?;
        let store = etcd.connect().await?;
        let server = start(store).await?;
        let mut rows = measure("etcd", &server, sizes, Some(etcd.pid()), &data).await?;
        server.stop().await?;
        etcd.stop()?;
        let restart = async {
            etcd.restart()?;
            etcd.connect().await
        };
        rows.push(recovery("etcd", "restart etcd, connect", sizes.objects, restart).await?);
        Ok(rows)
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    if let Some(arg) = std::env::args().skip(1).find(|a| a != "--bench") {
        bail!(
            "unknown argument {arg:?}; sizes are set by BENCH_OBJECTS, BENCH_CONNECTIONS, BENCH_WATCHERS, BENCH_WATCH_WRITES"
        );
    }
    let sizes = Sizes {
        objects: env_size("BENCH_OBJECTS", 10_000)?,
        connections: env_size("BENCH_CONNECTIONS", 16)?,
        watchers: env_size("BENCH_WATCHERS", 100)?,
        watch_writes: env_size("BENCH_WATCH_WRITES", 1_000)?,
    };
    println!("sizes: {sizes:?}");
    println!(
        "load average (1, 5, 15 min) at the start: {}",
        load_average()
    );
    println!();
    println!("| Store | Measurement | Count | Time | Throughput | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|");
    for row in redb(sizes).await? {
        println!("{row}");
    }
    #[cfg(feature = "etcd")]
    {
        if std::process::Command::new("etcd")
            .arg("--version")
            .output()
            .is_ok()
        {
            for row in on_etcd::run(sizes).await? {
                println!("{row}");
            }
        } else {
            println!("| etcd | not measured: no `etcd` in PATH | | | | | |");
        }
    }
    #[cfg(not(feature = "etcd"))]
    println!("| etcd | not measured: built without the `etcd` feature | | | | | |");
    println!();
    println!("load average (1, 5, 15 min) at the end: {}", load_average());
    Ok(())
}
