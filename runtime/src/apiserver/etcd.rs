// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! [`EtcdStorage`]: the API server's [`Storage`] on an etcd v3 cluster, through the
//! `etcd-client` crate (feature `etcd`).
//!
//! The mapping is the one k8s.io/apiserver's etcd3 storage uses: a key's `mod_revision` is the
//! object's resourceVersion; a conditional write is a transaction comparing `mod_revision`; a
//! list reports the header revision it was read at and a continued list reads at that revision
//! (etcd keeps old revisions until compaction); a watch starts at `after + 1` with etcd's own
//! watch, and a revision lost to compaction is [`StoreError::Expired`] (the registry's 410).
//! Every key is stored under a root prefix given at connect time (`/registry` in a typical
//! setup), so several servers or tests can share one cluster.

use etcd_client::{
    Client, Compare, CompareOp, DeleteOptions, EventType, GetOptions, KeyValue, KvClient,
    PutOptions, Txn, TxnOp, TxnOpResponse, WatchOptions,
};
use serde_json::Value;

use super::storage::{
    Change, ChangeKind, ListRange, ListResult, Storage, StoreError, Versioned, Watch,
};

/// The largest gRPC message the store decodes: as large as gRPC allows, as kube-apiserver
/// sets its etcd client's receive limit, so that no single object is too large to read (a
/// list is read in pages, [`Storage::list`]'s `limit`, so no page needs the whole prefix).
const MAX_DECODING_MESSAGE_SIZE: usize = i32::MAX as usize;

/// The [`Storage`] on etcd. Cloning shares the connection.
#[derive(Clone)]
pub struct EtcdStorage {
    client: Client,
    /// The key-value client with the raised message limit, for reads that return values.
    kv: KvClient,
    root: String,
}

/// etcd's answer to a read at a future revision.
fn is_future(e: &etcd_client::Error) -> bool {
    e.to_string()
        .contains("required revision is a future revision")
}

/// etcd's answer to a read at a revision lost to compaction.
fn is_compacted(e: &etcd_client::Error) -> bool {
    e.to_string()
        .contains("required revision has been compacted")
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// etcd revisions are `i64` and never negative; the trait's are `u64`.
fn rev(r: i64) -> u64 {
    u64::try_from(r).unwrap_or(0)
}

fn to_i64(r: u64) -> i64 {
    i64::try_from(r).unwrap_or(i64::MAX)
}

/// The first key after every key starting with `prefix` (etcd's range end for a prefix).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Every byte was 0xff (or the prefix was empty): the range runs to the end of the keyspace.
    vec![0]
}

impl EtcdStorage {
    /// Connects to the etcd cluster at `endpoints` (`http://127.0.0.1:2379`, …) and stores
    /// every key under `root` (no trailing slash needed; `""` for none). Errors: `Backend`
    /// when no endpoint answers.
    pub async fn connect(endpoints: &[String], root: &str) -> Result<Self, StoreError> {
        let client = Client::connect(endpoints, None).await.map_err(backend)?;
        let kv = client
            .kv_client()
            .max_decoding_message_size(MAX_DECODING_MESSAGE_SIZE);
        let mut store = EtcdStorage {
            client,
            kv,
            root: root.trim_end_matches('/').to_string(),
        };
        // A first round trip, so a wrong endpoint fails here and not at the first request.
        store.current().await?;
        Ok(store)
    }

    fn full(&self, key: &str) -> String {
        format!("{}{key}", self.root)
    }

    fn versioned(&self, kv: &KeyValue) -> Result<Versioned, StoreError> {
        let key = kv.key_str().map_err(backend)?;
        Ok(Versioned {
            key: key
                .strip_prefix(self.root.as_str())
                .unwrap_or(key)
                .to_string(),
            value: serde_json::from_slice(kv.value()).map_err(backend)?,
            revision: rev(kv.mod_revision()),
        })
    }

    async fn current(&mut self) -> Result<u64, StoreError> {
        let resp = self
            .client
            .get(
                self.root.as_bytes(),
                Some(GetOptions::new().with_count_only()),
            )
            .await
            .map_err(backend)?;
        Ok(resp.header().map_or(0, |h| rev(h.revision())))
    }

    /// A put of `value` under `key` when `guard` holds; otherwise the key's current state.
    /// Out: `Ok(revision)` of the put, or `Err(current)` with the key as it is (`None` when
    /// absent).
    async fn put_if(
        &self,
        key: &str,
        value: &Value,
        guard: Compare,
    ) -> Result<Result<u64, Option<Versioned>>, StoreError> {
        let full = self.full(key);
        let bytes = serde_json::to_vec(value).map_err(backend)?;
        let txn = Txn::new()
            .when([guard])
            .and_then([TxnOp::put(full.clone(), bytes, None::<PutOptions>)])
            .or_else([TxnOp::get(full, None)]);
        let resp = self.client.clone().txn(txn).await.map_err(backend)?;
        if resp.succeeded() {
            return Ok(Ok(resp.header().map_or(0, |h| rev(h.revision()))));
        }
        Ok(Err(self.current_of(&resp.op_responses())?))
    }

    /// The store's error for a failed read at revision `requested`: `Expired` when etcd has
    /// compacted it (etcd does not say to which revision; the current one is reported as the
    /// oldest), `Future` when it is not yet written.
    async fn read_error(&self, e: etcd_client::Error, requested: u64) -> StoreError {
        if is_compacted(&e) {
            let oldest = self.clone().current().await.unwrap_or(0);
            StoreError::Expired { requested, oldest }
        } else if is_future(&e) {
            let current = self.clone().current().await.unwrap_or(0);
            StoreError::Future { requested, current }
        } else {
            backend(e)
        }
    }

    /// The key's state from the `get` of a failed transaction's else branch.
    fn current_of(&self, ops: &[TxnOpResponse]) -> Result<Option<Versioned>, StoreError> {
        for op in ops {
            if let TxnOpResponse::Get(get) = op {
                return get.kvs().first().map(|kv| self.versioned(kv)).transpose();
            }
        }
        Ok(None)
    }
}

impl Storage for EtcdStorage {
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        let resp = self
            .client
            .clone()
            .get(self.full(key), None)
            .await
            .map_err(backend)?;
        resp.kvs().first().map(|kv| self.versioned(kv)).transpose()
    }

    async fn list(&self, prefix: &str, range: ListRange<'_>) -> Result<ListResult, StoreError> {
        let full_prefix = self.full(prefix);
        let start = match range.start {
            Some(start) if start > prefix => self.full(start),
            _ => full_prefix.clone(),
        };
        // etcd's range request: a `limit`, at a revision; its `count` is every key of the
        // range from the start key, whatever the limit.
        let mut opts = GetOptions::new().with_range(prefix_end(full_prefix.as_bytes()));
        if range.limit > 0 {
            opts = opts.with_limit(i64::try_from(range.limit).unwrap_or(i64::MAX));
        }
        if let Some(at) = range.revision {
            opts = opts.with_revision(to_i64(at));
        }
        let resp = match self.kv.clone().get(start, Some(opts)).await {
            Ok(resp) => resp,
            Err(e) => return Err(self.read_error(e, range.revision.unwrap_or(0)).await),
        };
        let items = resp
            .kvs()
            .iter()
            .map(|kv| self.versioned(kv))
            .collect::<Result<Vec<_>, _>>()?;
        // A read at a past revision reports that revision; etcd's header carries the current one.
        let revision = match range.revision {
            Some(at) => at,
            None => resp.header().map_or(0, |h| rev(h.revision())),
        };
        let remaining = rev(resp.count()).saturating_sub(items.len() as u64);
        Ok(ListResult {
            items,
            revision,
            remaining,
        })
    }

    async fn create(&self, key: &str, value: Value) -> Result<u64, StoreError> {
        // A key that does not exist has create revision 0.
        let guard = Compare::create_revision(self.full(key), CompareOp::Equal, 0);
        match self.put_if(key, &value, guard).await? {
            Ok(revision) => Ok(revision),
            Err(_) => Err(StoreError::AlreadyExists(key.to_string())),
        }
    }

    async fn update(&self, key: &str, value: Value, expected: u64) -> Result<u64, StoreError> {
        let guard = Compare::mod_revision(self.full(key), CompareOp::Equal, to_i64(expected));
        match self.put_if(key, &value, guard).await? {
            Ok(revision) => Ok(revision),
            Err(None) => Err(StoreError::NotFound(key.to_string())),
            Err(Some(current)) => Err(StoreError::Conflict {
                key: key.to_string(),
                expected,
                actual: current.revision,
            }),
        }
    }

    async fn delete(&self, key: &str, expected: Option<u64>) -> Result<Versioned, StoreError> {
        let full = self.full(key);
        let guard = match expected {
            Some(e) => Compare::mod_revision(full.clone(), CompareOp::Equal, to_i64(e)),
            // Unconditional: only that the key exists.
            None => Compare::create_revision(full.clone(), CompareOp::Greater, 0),
        };
        let txn = Txn::new()
            .when([guard])
            .and_then([TxnOp::delete(
                full.clone(),
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(full, None)]);
        let resp = self.client.clone().txn(txn).await.map_err(backend)?;
        let ops = resp.op_responses();
        if !resp.succeeded() {
            return match self.current_of(&ops)? {
                None => Err(StoreError::NotFound(key.to_string())),
                Some(current) => Err(StoreError::Conflict {
                    key: key.to_string(),
                    expected: expected.unwrap_or(0),
                    actual: current.revision,
                }),
            };
        }
        let revision = resp.header().map_or(0, |h| rev(h.revision()));
        for op in &ops {
            if let TxnOpResponse::Delete(d) = op
                && let Some(prev) = d.prev_kvs().first()
            {
                let mut last = self.versioned(prev)?;
                last.revision = revision;
                return Ok(last);
            }
        }
        // The guard held, so the key existed; a delete without its previous value is etcd's bug.
        Err(StoreError::Backend(format!(
            "etcd deleted {key} without returning its value"
        )))
    }

    async fn watch(&self, prefix: &str, after: u64) -> Result<Watch, StoreError> {
        let full_prefix = self.full(prefix);
        let opts = WatchOptions::new()
            .with_range(prefix_end(full_prefix.as_bytes()))
            .with_start_revision(to_i64(after + 1))
            .with_prev_key();
        let mut stream = self
            .client
            .watch_client()
            .max_decoding_message_size(MAX_DECODING_MESSAGE_SIZE)
            .watch(full_prefix, Some(opts))
            .await
            .map_err(backend)?;
        // A start revision lost to compaction: a read at `after` fails the same way. etcd then
        // cancels the watch with the compaction revision, which is the oldest one to report.
        let (tx, rx) = tokio::sync::mpsc::channel(256);
        let store = self.clone();
        let mut first = Vec::new();
        if after > 0 {
            let probe = GetOptions::new()
                .with_count_only()
                .with_revision(to_i64(after));
            if let Err(e) = self
                .client
                .clone()
                .get(self.root.as_bytes(), Some(probe))
                .await
                && is_compacted(&e)
            {
                let wait = std::time::Duration::from_secs(5);
                while let Ok(msg) = tokio::time::timeout(wait, stream.message()).await {
                    match msg.map_err(backend)? {
                        Some(resp) if resp.compact_revision() > 0 => {
                            return Err(StoreError::Expired {
                                requested: after,
                                oldest: rev(resp.compact_revision()),
                            });
                        }
                        // `after + 1` is the compaction revision itself: still watchable.
                        Some(resp) if !resp.events().is_empty() => {
                            first.push(resp);
                            break;
                        }
                        Some(_) => continue,
                        None => return Err(StoreError::Backend("etcd closed the watch".into())),
                    }
                }
            }
        }
        tokio::spawn(async move {
            let mut pending = first;
            loop {
                let resp = match pending.pop() {
                    Some(resp) => resp,
                    None => match stream.message().await {
                        Ok(Some(resp)) => resp,
                        Ok(None) => return,
                        Err(e) => {
                            let _ = tx.send(Err(backend(e))).await;
                            return;
                        }
                    },
                };
                if resp.compact_revision() > 0 {
                    let _ = tx
                        .send(Err(StoreError::Expired {
                            requested: after,
                            oldest: rev(resp.compact_revision()),
                        }))
                        .await;
                    return;
                }
                for event in resp.events() {
                    let Some(kv) = event.kv() else { continue };
                    let change = match event.event_type() {
                        EventType::Put => store.versioned(kv).and_then(|now| {
                            let prev = event
                                .prev_kv()
                                .map(|p| store.versioned(p).map(|v| v.value))
                                .transpose()?;
                            Ok(Change {
                                revision: now.revision,
                                kind: ChangeKind::Put,
                                key: now.key,
                                value: now.value,
                                prev,
                            })
                        }),
                        EventType::Delete => match event.prev_kv() {
                            Some(p) => store.versioned(p).map(|last| Change {
                                revision: rev(kv.mod_revision()),
                                kind: ChangeKind::Delete,
                                key: last.key,
                                value: last.value.clone(),
                                prev: Some(last.value),
                            }),
                            None => Err(StoreError::Backend(format!(
                                "etcd reported a delete of {} without its last value",
                                String::from_utf8_lossy(kv.key())
                            ))),
                        },
                    };
                    if tx.send(change).await.is_err() {
                        // The Watch was dropped: dropping the stream cancels etcd's watch.
                        return;
                    }
                }
            }
        });
        Ok(Watch::from_channel(rx))
    }

    async fn revision(&self) -> Result<u64, StoreError> {
        self.clone().current().await
    }

    async fn compact(&self, revision: u64) -> Result<(), StoreError> {
        match self.client.clone().compact(to_i64(revision), None).await {
            Ok(_) => Ok(()),
            // Already compacted to it or past it (by another server or etcd's own
            // auto-compaction): nothing to do.
            Err(e) if is_compacted(&e) => Ok(()),
            Err(e) => Err(self.read_error(e, revision).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::contract;
    use serde_json::json;

    /// As tests/common's `missing()`: skip with a message locally, fail under CI=true.
    fn missing(what: &str) {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{what} (CI must run this test)");
        }
        eprintln!("skipped: {what}");
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    /// A real etcd on loopback with a temporary data directory; killed on drop.
    struct Etcd {
        child: std::process::Child,
        endpoint: String,
        _dir: tempfile::TempDir,
    }

    impl Drop for Etcd {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts `etcd` from PATH, or `None` (after `missing()`) when it is not installed.
    async fn start_etcd() -> Option<Etcd> {
        if std::process::Command::new("etcd")
            .arg("--version")
            .output()
            .is_err()
        {
            missing("etcd is not installed (Debian: apt-get install etcd-server)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let (client, peer) = (free_port(), free_port());
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let child = std::process::Command::new("etcd")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--name", "test"])
            .args(["--listen-client-urls", &client_url])
            .args(["--advertise-client-urls", &client_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("test={peer_url}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let etcd = Etcd {
            child,
            endpoint: client_url,
            _dir: dir,
        };
        for _ in 0..100 {
            if EtcdStorage::connect(std::slice::from_ref(&etcd.endpoint), "/probe")
                .await
                .is_ok()
            {
                return Some(etcd);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("etcd did not answer on {} within 10 s", etcd.endpoint);
    }

    async fn store(etcd: &Etcd, root: &str) -> EtcdStorage {
        EtcdStorage::connect(std::slice::from_ref(&etcd.endpoint), root)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_etcd_store_keeps_the_storage_contract() {
        let Some(etcd) = start_etcd().await else {
            return;
        };
        // One cluster, a fresh root per contract function: their keys never meet.
        let mut n = 0;
        let etcd = &etcd;
        contract::run_all(|| {
            n += 1;
            let root = format!("/contract{n}");
            async move { store(etcd, &root).await }
        })
        .await;
    }

    #[tokio::test]
    async fn keys_live_under_the_root_and_past_revisions_are_listed_until_compacted() {
        let Some(etcd) = start_etcd().await else {
            return;
        };
        let s = store(&etcd, "/registry").await;
        let r0 = s.revision().await.unwrap();
        s.create("/g/things/ns/a", json!({"v": 1})).await.unwrap();
        s.create("/g/things/ns/b", json!({"v": 1})).await.unwrap();
        s.update("/g/things/ns/a", json!({"v": 2}), r0 + 1)
            .await
            .unwrap();
        // The key in etcd carries the root; the store hands it back without.
        let mut raw = Client::connect([etcd.endpoint.as_str()], None)
            .await
            .unwrap();
        let got = raw.get("/registry/g/things/ns/a", None).await.unwrap();
        assert_eq!(got.kvs()[0].value(), br#"{"v":2}"#);
        // A continued list reads the state at the list's revision, even after a change.
        let old = s
            .list(
                "/g/things/",
                ListRange {
                    revision: Some(r0 + 2),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(old.revision, r0 + 2);
        let values: Vec<_> = old.items.iter().map(|i| i.value.clone()).collect();
        assert_eq!(values, [json!({"v": 1}), json!({"v": 1})]);
        // Once etcd compacts past it, that revision is gone: Expired, for lists and watches.
        raw.compact(to_i64(r0 + 3), None).await.unwrap();
        assert!(matches!(
            s.list("/g/things/", ListRange { revision: Some(r0 + 2), ..Default::default() }).await.unwrap_err(),
            StoreError::Expired { requested, .. } if requested == r0 + 2
        ));
        match s.watch("/g/things/", r0 + 1).await {
            Err(StoreError::Expired { requested, oldest }) => {
                assert_eq!((requested, oldest), (r0 + 1, r0 + 3));
            }
            Err(e) => panic!("expected Expired, got {e}"),
            Ok(_) => panic!("expected Expired, got a watch"),
        }
        // From the compaction revision on, the watch works.
        let mut w = s.watch("/g/things/", r0 + 2).await.unwrap();
        let c = w.next().await.unwrap().unwrap();
        assert_eq!((c.revision, c.key.as_str()), (r0 + 3, "/g/things/ns/a"));
    }

    #[tokio::test]
    async fn a_wrong_endpoint_is_a_backend_error_at_connect() {
        let port = free_port();
        let err = EtcdStorage::connect(&[format!("http://127.0.0.1:{port}")], "/x")
            .await
            .err()
            .unwrap();
        assert!(matches!(err, StoreError::Backend(_)), "{err}");
    }
}
