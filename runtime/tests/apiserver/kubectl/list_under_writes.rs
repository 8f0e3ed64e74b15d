//! Lists that finish while others write: `kubectl get --chunk-size` and a kube-rs reflector
//! with default settings, against 3,000 Databases while a writer updates and creates more. The
//! server pages every list at one revision, so the continue token stays valid under writes
//! (as kube-apiserver's does until compaction).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{reflector, watcher};
use tokio_util::sync::CancellationToken;

use super::{Database, DatabaseSpec, Engine, Server, kubectl};

/// How many Databases exist before the writer starts.
const OBJECTS: usize = 3_000;

/// A client of `s` built from its kubeconfig.
pub(super) async fn client(s: &Server) -> Client {
    let kubeconfig = Kubeconfig::read_from(&s.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    Client::try_from(config).unwrap()
}

pub(super) fn database(name: &str) -> Database {
    Database::new(
        name,
        DatabaseSpec {
            engine: Engine::Postgres,
            version: "16".into(),
            replicas: 1,
        },
    )
}

/// Creates `OBJECTS` Databases, 32 at a time; out: their names.
async fn create_objects(api: &Api<Database>) -> BTreeSet<String> {
    let names: Vec<String> = (0..OBJECTS).map(|i| format!("db-{i:05}")).collect();
    futures::stream::iter(names.clone())
        .map(|name| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &database(&name))
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(32)
        .for_each(|_| async {})
        .await;
    names.into_iter().collect()
}

/// Writes about 20 times a second until `stop` (at most 2,000 writes): patches a pre-existing
/// Database's replicas, and every fourth write creates a new one. `done` counts the writes made.
fn spawn_writer(
    api: Api<Database>,
    stop: CancellationToken,
    done: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut writes = 0;
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        while writes < 2_000 && !stop.is_cancelled() {
            tick.tick().await;
            if writes % 4 == 3 {
                api.create(
                    &PostParams::default(),
                    &database(&format!("new-{writes:05}")),
                )
                .await
                .unwrap();
            } else {
                let name = format!("db-{:05}", (writes * 7) % OBJECTS);
                let patch = serde_json::json!({"spec": {"replicas": 1 + writes as i32 % 9}});
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .unwrap();
            }
            writes += 1;
            done.store(writes, Ordering::SeqCst);
        }
    })
}

/// Fills `s`, starts the writer, then lists with kubectl (three times) and syncs a reflector
/// while it writes.
pub(super) fn lists_finish_under_writes(s: &Server) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = client(s).await;
        let api: Api<Database> = Api::namespaced(client, "default");
        let before = create_objects(&api).await;
        let stop = CancellationToken::new();
        let done = Arc::new(AtomicUsize::new(0));
        let writer = spawn_writer(api.clone(), stop.clone(), done.clone());
        tokio::time::sleep(Duration::from_millis(300)).await;

        for round in 0..3 {
            let writes_before = done.load(Ordering::SeqCst);
            let kubeconfig = s.kubeconfig.clone();
            let (success, out, err) = tokio::task::spawn_blocking(move || {
                kubectl(
                    &kubeconfig,
                    &["get", "databases", "--chunk-size=200", "-o", "name"],
                )
            })
            .await
            .unwrap();
            assert!(success && !err.contains("Expired"), "round {round}: {err}");
            let listed: BTreeSet<String> = out
                .lines()
                .filter_map(|l| l.strip_prefix("database.example.com/"))
                .map(str::to_string)
                .collect();
            // The writer wrote while kubectl paged (the list takes many requests).
            assert!(
                done.load(Ordering::SeqCst) > writes_before,
                "round {round}: no write during the list"
            );
            let missing: Vec<&String> = before.difference(&listed).collect();
            assert!(
                missing.is_empty(),
                "round {round}: {} missing, e.g. {:?}",
                missing.len(),
                &missing[..missing.len().min(5)]
            );
        }

        // The reflector's stream, read until its initial list is done: any error (a 410 on a
        // continue token) fails the test rather than being retried.
        let (reader, writer_half) = reflector::store::<Database>();
        let mut events = reflector(
            writer_half,
            watcher(api.clone(), watcher::Config::default()),
        )
        .boxed();
        let synced = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match events.next().await {
                    Some(Ok(watcher::Event::InitDone)) => return,
                    Some(Ok(_)) => {}
                    Some(Err(e)) => panic!("the reflector's watcher failed: {e}"),
                    None => panic!("the reflector's stream ended before InitDone"),
                }
            }
        });
        synced
            .await
            .expect("the reflector did not sync within 60 s");
        reader.wait_until_ready().await.unwrap();
        let held: BTreeSet<String> = reader
            .state()
            .iter()
            .filter_map(|d| d.metadata.name.clone())
            .collect();
        let missing = before.difference(&held).count();
        assert_eq!(
            missing, 0,
            "the reflector's store lacks {missing} Databases"
        );
        drop(events);

        stop.cancel();
        writer.await.unwrap();
    });
}
