//! Lists that finish under writes at scale, and server-side apply throughput (figures in
//! docs/benchmarks.md, run through `scripts/bench-apiserver.sh`).
//!
//! The server runs in this process as a project's `src/bin/apiserver.rs` runs it
//! (`ApiServer::serve` over TLS with a self-signed certificate, the Database kind with its
//! schema), reached by real clients on loopback. For each store (redb, and etcd when built with
//! the `etcd` feature and an `etcd` binary is in PATH):
//!
//! 1. create `BENCH_LIST_OBJECTS` Databases (default 25,000) with kube-rs, 32 at once;
//! 2. server-side apply: `BENCH_APPLIES` forced applies (default 5,000) of kube-rs
//!    `Patch::Apply` by one field manager to those objects, 16 at once, each changing the
//!    replicas (the first apply of an object takes the field from its creator);
//! 3. a writer starts: 10 merge patches a second to existing objects, until the end;
//! 4. `kubectl get databases -o name` with kubectl's default chunking (pages of 500): the
//!    time to list, and every object created in step 1 must be in it;
//! 5. a kube-rs reflector with default settings (`watcher::Config::default()`, pages of
//!    500): the time until its initial list is done, and every object must be in its store.
//!
//! The tests (tests/apiserver/kubectl/list_under_writes.rs) do steps 3 to 5 on 3,000
//! objects; this is the 25,000-object run. One run each, on purpose: the figures are wall-clock
//! times, so the machine's load average is printed before and after.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{reflector, watcher};
use kube::{Client, CustomResource};
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::{RedbStore, Storage};
use rsbuilder_runtime::tls::{self, Certificates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The Database example's kind, as `examples/database-apiserver` declares it.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "db.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db"
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

fn name(i: usize) -> String {
    format!("db-{i:06}")
}

fn database(i: usize) -> Database {
    Database::new(
        &name(i),
        DatabaseSpec {
            engine: [Engine::Mysql, Engine::Postgresql, Engine::Mongodb][i % 3].clone(),
            version: "8.0.26".into(),
            replicas: 1 + (i % 10) as i32,
        },
    )
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

/// A running server and a kubeconfig that reaches it (TLS not verified, as for a
/// self-signed certificate; no authentication).
struct Running {
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    kubeconfig: std::path::PathBuf,
}

async fn start<S: Storage>(store: S, dir: &Path) -> anyhow::Result<Running> {
    let kind = ApiKind::of::<Database>().map_err(anyhow::Error::msg)?;
    let shutdown = CancellationToken::new();
    let server = ApiServer::new(Config::new(vec![kind]), store, shutdown.clone());
    let certs = Arc::new(Certificates::self_signed(&["localhost", "127.0.0.1"])?);
    let listener = tls::bind("127.0.0.1:0".parse()?).await?;
    let port = listener.local_addr()?.port();
    let task = tokio::spawn(async move {
        server
            .serve(listener, certs, rsbuilder_runtime::axum::Router::new())
            .await
    });
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user: {{token: not-checked}}\ncontexts:\n- name: c\n  context: {{cluster: s, user: u, namespace: default}}\ncurrent-context: c\n"
        ),
    )?;
    Ok(Running {
        shutdown,
        task,
        kubeconfig,
    })
}

impl Running {
    async fn client(&self) -> anyhow::Result<Client> {
        let kubeconfig = Kubeconfig::read_from(&self.kubeconfig)?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
        Ok(Client::try_from(config)?)
    }

    async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await??;
        Ok(())
    }
}

/// `| store | what | count | time | throughput | p50 | p99 |`, latencies sorted here.
fn row(
    store: &str,
    what: &str,
    count: usize,
    elapsed: Duration,
    latencies: &mut [Duration],
) -> String {
    latencies.sort();
    let pick = |q: usize| {
        let n = latencies.len();
        if n == 0 {
            return String::new();
        }
        format!(
            "{:.2} ms",
            latencies[(n * q / 100).min(n - 1)].as_secs_f64() * 1000.0
        )
    };
    format!(
        "| {store} | {what} | {count} | {:.2} s | {:.0}/s | {} | {} |",
        elapsed.as_secs_f64(),
        count as f64 / elapsed.as_secs_f64(),
        pick(50),
        pick(99)
    )
}

/// Runs `count` operations made by `op(i)`, `width` at once. Out: the time, the latencies.
async fn timed<F>(
    count: usize,
    width: usize,
    op: impl Fn(usize) -> F,
) -> anyhow::Result<(Duration, Vec<Duration>)>
where
    F: std::future::Future<Output = anyhow::Result<()>>,
{
    let started = Instant::now();
    let op = &op;
    let latencies: Vec<anyhow::Result<Duration>> = futures::stream::iter(0..count)
        .map(|i| async move {
            let t = Instant::now();
            op(i).await?;
            Ok(t.elapsed())
        })
        .buffer_unordered(width)
        .collect()
        .await;
    let latencies = latencies.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    Ok((started.elapsed(), latencies))
}

/// 10 merge patches a second to existing objects until `stop`; `done` counts them.
fn spawn_writer(
    api: Api<Database>,
    objects: usize,
    stop: CancellationToken,
    done: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut writes = 0usize;
        while !stop.is_cancelled() {
            tick.tick().await;
            let patch = json!({"spec": {"replicas": 1 + (writes % 10) as i32}});
            api.patch(
                &name(writes * 7919 % objects),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .context("the writer's patch")?;
            writes += 1;
            done.store(writes, Ordering::SeqCst);
        }
        Ok(())
    })
}

/// Steps 1 to 5 against `server`.
async fn measure(
    store: &str,
    server: &Running,
    objects: usize,
    applies: usize,
) -> anyhow::Result<Vec<String>> {
    let mut rows = Vec::new();
    let client = server.client().await?;
    let api: Api<Database> = Api::namespaced(client, "default");

    let (elapsed, mut lat) = timed(objects, 32, |i| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &database(i)).await?;
            Ok(())
        }
    })
    .await?;
    rows.push(row(
        store,
        "create (kube-rs, 32 at once)",
        objects,
        elapsed,
        &mut lat,
    ));

    let (elapsed, mut lat) = timed(applies, 16, |i| {
        let api = api.clone();
        async move {
            let mut db = database(i % objects);
            db.spec.replicas = 1 + ((i / objects + i + 1) % 10) as i32;
            api.patch(
                &name(i % objects),
                &PatchParams::apply("bench").force(),
                &Patch::Apply(&db),
            )
            .await?;
            Ok(())
        }
    })
    .await?;
    rows.push(row(
        store,
        "server-side apply (kube-rs `Patch::Apply`, forced, 16 at once)",
        applies,
        elapsed,
        &mut lat,
    ));

    let all: BTreeSet<String> = (0..objects).map(name).collect();
    let stop = CancellationToken::new();
    let done = Arc::new(AtomicUsize::new(0));
    let writer = spawn_writer(api.clone(), objects, stop.clone(), done.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;

    let kubectl_present = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if kubectl_present {
        let kubeconfig = server.kubeconfig.clone();
        let before = done.load(Ordering::SeqCst);
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(["get", "databases", "-o", "name"])
                .output()
        })
        .await??;
        let elapsed = started.elapsed();
        let during = done.load(Ordering::SeqCst) - before;
        if !out.status.success() {
            bail!(
                "kubectl get failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let listed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("database.db.example.com/"))
            .map(str::to_owned)
            .collect();
        let missing = all.difference(&listed).count();
        if missing > 0 {
            bail!("kubectl get lacks {missing} of the {objects} Databases");
        }
        rows.push(row(
            store,
            &format!(
                "`kubectl get databases` (default chunks of 500) under 10 writes/s ({during} writes during it)"
            ),
            listed.len(),
            elapsed,
            &mut [],
        ));
    } else {
        rows.push(format!(
            "| {store} | `kubectl get`: not measured, no kubectl in PATH | | | | | |"
        ));
    }

    let before = done.load(Ordering::SeqCst);
    let started = Instant::now();
    let (reader, writer_half) = reflector::store::<Database>();
    let mut events = reflector(
        writer_half,
        watcher(api.clone(), watcher::Config::default()),
    )
    .boxed();
    loop {
        match events.next().await {
            Some(Ok(watcher::Event::InitDone)) => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => bail!("the reflector's watcher failed: {e}"),
            None => bail!("the reflector's stream ended before its initial list"),
        }
    }
    let elapsed = started.elapsed();
    let during = done.load(Ordering::SeqCst) - before;
    let held: BTreeSet<String> = reader
        .state()
        .iter()
        .filter_map(|d| d.metadata.name.clone())
        .collect();
    let missing = all.difference(&held).count();
    if missing > 0 {
        bail!("the reflector's store lacks {missing} of the {objects} Databases");
    }
    rows.push(row(
        store,
        &format!(
            "kube-rs reflector, default settings: initial list done under 10 writes/s ({during} writes during it)"
        ),
        held.len(),
        elapsed,
        &mut [],
    ));
    drop(events);
    stop.cancel();
    writer.await??;
    Ok(rows)
}

async fn redb(objects: usize, applies: usize) -> anyhow::Result<Vec<String>> {
    let dir = tempfile::tempdir()?;
    let server = start(RedbStore::open(&dir.path().join("store.redb"))?, dir.path()).await?;
    let rows = measure("redb", &server, objects, applies).await?;
    server.stop().await?;
    Ok(rows)
}

#[cfg(feature = "etcd")]
async fn etcd(objects: usize, applies: usize) -> anyhow::Result<Vec<String>> {
    use rsbuilder_runtime::apiserver::etcd::EtcdStorage;
    use std::process::{Command, Stdio};
    let free_port = || -> anyhow::Result<u16> {
        Ok(std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port())
    };
    let dir = tempfile::tempdir()?;
    let client_url = format!("http://127.0.0.1:{}", free_port()?);
    let peer_url = format!("http://127.0.0.1:{}", free_port()?);
    let mut child = Command::new("etcd")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--name", "bench"])
        .args(["--listen-client-urls", &client_url])
        .args(["--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("bench={peer_url}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting etcd")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let store = loop {
        match EtcdStorage::connect(std::slice::from_ref(&client_url), "/bench").await {
            Ok(store) => break store,
            Err(e) if Instant::now() > deadline => {
                let _ = child.kill();
                bail!("etcd did not answer: {e}");
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let server = start(store, dir.path()).await?;
    let rows = measure("etcd", &server, objects, applies).await;
    server.stop().await?;
    let _ = child.kill();
    let _ = child.wait();
    rows
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
        bail!("unknown argument {arg:?}; sizes are set by BENCH_LIST_OBJECTS, BENCH_APPLIES");
    }
    let objects = env_size("BENCH_LIST_OBJECTS", 25_000)?;
    let applies = env_size("BENCH_APPLIES", 5_000)?;
    println!("objects: {objects}, applies: {applies}");
    println!(
        "load average (1, 5, 15 min) at the start: {}",
        load_average()
    );
    println!();
    println!("| Store | Measurement | Count | Time | Throughput | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|");
    for row in redb(objects, applies).await? {
        println!("{row}");
    }
    #[cfg(feature = "etcd")]
    {
        if std::process::Command::new("etcd")
            .arg("--version")
            .output()
            .is_ok()
        {
            for row in etcd(objects, applies).await? {
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
