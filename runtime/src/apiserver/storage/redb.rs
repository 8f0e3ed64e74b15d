// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! [`RedbStore`]: the embedded, persistent default [`Storage`], one redb database file.
//!
//! Four tables, written together in each write's transaction:
//! - `objects`: key → (mod revision, value), the current state;
//! - `past`: (key, revision) → (the revision that replaced or deleted it, value), every
//!   version a write replaced since the last compaction: with `objects`, the state at any
//!   retained revision, which paged lists and `Exact` reads need (etcd keeps the same history
//!   of every key);
//! - `changes`: revision → the change it made, which watches replay;
//! - `meta`: the current revision and the compacted one.
//!
//! [`Storage::compact`] drops the versions and changes no read at or after the compacted
//! revision needs, as etcd's compaction does.

use std::path::Path;
use std::sync::{Arc, Mutex};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::broadcast;

use super::{
    Change, ChangeKind, ListRange, ListResult, Storage, StoreError, Versioned, Watch, WatchSource,
};

/// Key → (mod revision, JSON value).
const OBJECTS: TableDefinition<&str, (u64, &[u8])> = TableDefinition::new("objects");
/// (key, mod revision of a past version) → (revision of the write that replaced or deleted
/// it, JSON value): the version is the key's state for the revisions in between.
const PAST: TableDefinition<(&str, u64), (u64, &[u8])> = TableDefinition::new("past");
/// Revision → the change it made (JSON of [`Change`]), the retained history watches replay.
const CHANGES: TableDefinition<u64, &[u8]> = TableDefinition::new("changes");
/// "revision" → the current revision; "compacted" → the revision of the last compaction.
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// The embedded default [`Storage`]: one redb database file.
///
/// redb commits with fsync by default (`Durability::Immediate`) and its copy-on-write B-trees
/// keep the last committed state intact if the process dies mid-write, so an acknowledged
/// write survives a restart or a kill (docs/apiserver.md says why redb). The objects, their
/// past versions, the revision and the changes are all in the file, so a reopened store
/// serves lists at past revisions and watches from revisions written before the restart.
/// The history grows until [`Storage::compact`] (the API server compacts on a schedule,
/// [`super::compact_periodically`]).
#[derive(Clone)]
pub struct RedbStore {
    inner: Arc<Inner>,
}

struct Inner {
    db: redb::Database,
    /// Held for the whole of a write and its broadcast, so watchers see changes in revision
    /// order and a watch being set up cannot miss one.
    write: Mutex<()>,
    events: broadcast::Sender<Arc<Change>>,
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn meta_get(meta: &impl ReadableTable<&'static str, u64>, name: &str) -> Result<u64, StoreError> {
    Ok(meta.get(name).map_err(backend)?.map_or(0, |v| v.value()))
}

impl RedbStore {
    /// Opens (or creates) the database file at `path`. A file written before the store kept
    /// past versions starts its history at its current revision. Errors: the file cannot be
    /// opened or created, is locked by another process, or is not a redb database.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = redb::Database::create(path)
            .map_err(|e| StoreError::Backend(format!("{}: {e}", path.display())))?;
        Self::with_database(db)
    }

    /// A store held in memory only (redb's `InMemoryBackend`): the same rules as a file, gone
    /// when the last clone is dropped. The test cluster's store ([`crate::testing`]). Errors:
    /// redb cannot set up its tables.
    pub fn in_memory() -> Result<Self, StoreError> {
        let db = redb::Builder::new()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(backend)?;
        Self::with_database(db)
    }

    fn with_database(db: redb::Database) -> Result<Self, StoreError> {
        let txn = db.begin_write().map_err(backend)?;
        {
            txn.open_table(OBJECTS).map_err(backend)?;
            txn.open_table(PAST).map_err(backend)?;
            txn.open_table(CHANGES).map_err(backend)?;
            let mut meta = txn.open_table(META).map_err(backend)?;
            if meta.get("compacted").map_err(backend)?.is_none() {
                // No past versions were recorded before this revision.
                let current = meta_get(&meta, "revision")?;
                meta.insert("compacted", current).map_err(backend)?;
            }
        }
        txn.commit().map_err(backend)?;
        let (events, _) = broadcast::channel(4096);
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                write: Mutex::new(()),
                events,
            }),
        })
    }

    /// Runs a blocking database call off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || f(&inner))
            .await
            .map_err(backend)?
    }
}

impl Inner {
    fn current_revision(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        meta_get(&txn.open_table(META).map_err(backend)?, "revision")
    }

    /// One write: checks `precondition` against the key's current entry, stores `value`
    /// (or removes the key when `None`), keeps the replaced version, records the change and
    /// broadcasts it.
    fn write(
        &self,
        key: &str,
        value: Option<Value>,
        precondition: impl FnOnce(Option<(u64, Value)>) -> Result<Option<(u64, Value)>, StoreError>,
    ) -> Result<(u64, Option<Value>), StoreError> {
        let _guard = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let txn = self.db.begin_write().map_err(backend)?;
        let (revision, change) = {
            let mut objects = txn.open_table(OBJECTS).map_err(backend)?;
            let mut past = txn.open_table(PAST).map_err(backend)?;
            let mut meta = txn.open_table(META).map_err(backend)?;
            let mut changes = txn.open_table(CHANGES).map_err(backend)?;
            let existing = match objects.get(key).map_err(backend)? {
                Some(entry) => {
                    let (rev, bytes) = entry.value();
                    Some((rev, bytes.to_vec()))
                }
                None => None,
            };
            let decoded = existing
                .as_ref()
                .map(|(rev, bytes)| {
                    Ok::<_, StoreError>((*rev, serde_json::from_slice(bytes).map_err(backend)?))
                })
                .transpose()?;
            let prev = precondition(decoded)?.map(|(_, v)| v);
            let revision = meta_get(&meta, "revision")? + 1;
            meta.insert("revision", revision).map_err(backend)?;
            if let Some((old_revision, bytes)) = &existing {
                past.insert((key, *old_revision), (revision, bytes.as_slice()))
                    .map_err(backend)?;
            }
            let change = match value {
                Some(value) => {
                    let bytes = serde_json::to_vec(&value).map_err(backend)?;
                    objects
                        .insert(key, (revision, bytes.as_slice()))
                        .map_err(backend)?;
                    Change {
                        revision,
                        kind: ChangeKind::Put,
                        key: key.to_string(),
                        value,
                        prev,
                    }
                }
                None => {
                    objects.remove(key).map_err(backend)?;
                    let last = prev.clone().unwrap_or(Value::Null);
                    Change {
                        revision,
                        kind: ChangeKind::Delete,
                        key: key.to_string(),
                        value: last,
                        prev,
                    }
                }
            };
            let bytes = serde_json::to_vec(&change).map_err(backend)?;
            changes
                .insert(revision, bytes.as_slice())
                .map_err(backend)?;
            (revision, change)
        };
        txn.commit().map_err(backend)?;
        let value = match change.kind {
            ChangeKind::Put => None,
            ChangeKind::Delete => Some(change.value.clone()),
        };
        // No receiver is not an error: nobody is watching.
        let _ = self.events.send(Arc::new(change));
        Ok((revision, value))
    }

    /// One page of the keys under `prefix` at revision `at` (the current one when `None`):
    /// the current entries of `objects` merged in key order with the versions in `past`. A
    /// key's version at `at` is the one written at or before `at` and not replaced by then.
    fn list(
        &self,
        prefix: &str,
        start: Option<&str>,
        at: Option<u64>,
        limit: usize,
    ) -> Result<ListResult, StoreError> {
        // One read transaction: a consistent snapshot of every table.
        let txn = self.db.begin_read().map_err(backend)?;
        let meta = txn.open_table(META).map_err(backend)?;
        let current = meta_get(&meta, "revision")?;
        let compacted = meta_get(&meta, "compacted")?;
        let at = at.unwrap_or(current);
        if at > current {
            return Err(StoreError::Future {
                requested: at,
                current,
            });
        }
        if at < compacted {
            return Err(StoreError::Expired {
                requested: at,
                oldest: compacted,
            });
        }
        let start = match start {
            Some(s) if s > prefix => s,
            _ => prefix,
        };
        let objects = txn.open_table(OBJECTS).map_err(backend)?;
        let past_table = txn.open_table(PAST).map_err(backend)?;
        let mut objs = objects.range(start..).map_err(backend)?;
        // At the current revision every visible version is in `objects`.
        let mut pasts = if at < current {
            Some(past_table.range((start, 0u64)..).map_err(backend)?)
        } else {
            None
        };
        let mut obj = objs.next().transpose().map_err(backend)?;
        let mut old = match pasts.as_mut() {
            Some(p) => p.next().transpose().map_err(backend)?,
            None => None,
        };
        let mut items = Vec::new();
        let mut remaining = 0u64;
        loop {
            let obj_key = obj.as_ref().map(|(k, _)| k.value().to_string());
            let old_key = old.as_ref().map(|(k, _)| k.value().0.to_string());
            let key = match (obj_key, old_key) {
                (None, None) => break,
                (Some(k), None) | (None, Some(k)) => k,
                (Some(a), Some(b)) => a.min(b),
            };
            if !key.starts_with(prefix) {
                break;
            }
            let full = limit > 0 && items.len() == limit;
            let mut visible = false;
            if let Some((k, entry)) = &obj
                && k.value() == key
            {
                let (revision, bytes) = entry.value();
                if revision <= at {
                    visible = true;
                    if !full {
                        items.push(Versioned {
                            key: key.clone(),
                            value: serde_json::from_slice(bytes).map_err(backend)?,
                            revision,
                        });
                    }
                }
                obj = objs.next().transpose().map_err(backend)?;
            }
            while let Some((k, entry)) = &old
                && k.value().0 == key
            {
                let revision = k.value().1;
                let (replaced_at, bytes) = entry.value();
                if !visible && revision <= at && at < replaced_at {
                    visible = true;
                    if !full {
                        items.push(Versioned {
                            key: key.clone(),
                            value: serde_json::from_slice(bytes).map_err(backend)?,
                            revision,
                        });
                    }
                }
                old = match pasts.as_mut() {
                    Some(p) => p.next().transpose().map_err(backend)?,
                    None => None,
                };
            }
            if full && visible {
                remaining += 1;
            }
        }
        Ok(ListResult {
            items,
            revision: at,
            remaining,
        })
    }

    /// Drops the versions replaced at or before `revision` and the changes before it, and
    /// records `revision` as compacted.
    fn compact(&self, revision: u64) -> Result<(), StoreError> {
        let _guard = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let mut meta = txn.open_table(META).map_err(backend)?;
            let current = meta_get(&meta, "revision")?;
            if revision > current {
                return Err(StoreError::Future {
                    requested: revision,
                    current,
                });
            }
            if revision <= meta_get(&meta, "compacted")? {
                return Ok(());
            }
            let mut past = txn.open_table(PAST).map_err(backend)?;
            past.retain(|_, (replaced_at, _)| replaced_at > revision)
                .map_err(backend)?;
            let mut changes = txn.open_table(CHANGES).map_err(backend)?;
            changes
                .retain_in(..revision, |_, _| false)
                .map_err(backend)?;
            meta.insert("compacted", revision).map_err(backend)?;
        }
        txn.commit().map_err(backend)
    }
}

impl Storage for RedbStore {
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        let key = key.to_string();
        self.blocking(move |inner| {
            let txn = inner.db.begin_read().map_err(backend)?;
            let objects = txn.open_table(OBJECTS).map_err(backend)?;
            let Some(entry) = objects.get(key.as_str()).map_err(backend)? else {
                return Ok(None);
            };
            let (revision, bytes) = entry.value();
            Ok(Some(Versioned {
                value: serde_json::from_slice(bytes).map_err(backend)?,
                key,
                revision,
            }))
        })
        .await
    }

    async fn list(&self, prefix: &str, range: ListRange<'_>) -> Result<ListResult, StoreError> {
        let prefix = prefix.to_string();
        let start = range.start.map(str::to_string);
        let (at, limit) = (range.revision, range.limit);
        self.blocking(move |inner| inner.list(&prefix, start.as_deref(), at, limit))
            .await
    }

    async fn create(&self, key: &str, value: Value) -> Result<u64, StoreError> {
        let key = key.to_string();
        self.blocking(move |inner| {
            let (revision, _) = inner.write(&key, Some(value), |existing| match existing {
                Some(_) => Err(StoreError::AlreadyExists(key.clone())),
                None => Ok(None),
            })?;
            Ok(revision)
        })
        .await
    }

    async fn update(&self, key: &str, value: Value, expected: u64) -> Result<u64, StoreError> {
        let key = key.to_string();
        self.blocking(move |inner| {
            let (revision, _) = inner.write(&key, Some(value), |existing| match existing {
                None => Err(StoreError::NotFound(key.clone())),
                Some((actual, _)) if actual != expected => Err(StoreError::Conflict {
                    key: key.clone(),
                    expected,
                    actual,
                }),
                found => Ok(found),
            })?;
            Ok(revision)
        })
        .await
    }

    async fn delete(&self, key: &str, expected: Option<u64>) -> Result<Versioned, StoreError> {
        let key = key.to_string();
        self.blocking(move |inner| {
            let (revision, last) = inner.write(&key, None, |existing| match existing {
                None => Err(StoreError::NotFound(key.clone())),
                Some((actual, _)) if expected.is_some_and(|e| e != actual) => {
                    Err(StoreError::Conflict {
                        key: key.clone(),
                        expected: expected.unwrap_or_default(),
                        actual,
                    })
                }
                found => Ok(found),
            })?;
            Ok(Versioned {
                key,
                value: last.unwrap_or(Value::Null),
                revision,
            })
        })
        .await
    }

    async fn watch(&self, prefix: &str, after: u64) -> Result<Watch, StoreError> {
        let prefix = prefix.to_string();
        self.blocking(move |inner| {
            // Subscribing and reading the backlog under the write lock: no change can fall
            // between the two.
            let _guard = inner.write.lock().unwrap_or_else(|e| e.into_inner());
            let live = inner.events.subscribe();
            let txn = inner.db.begin_read().map_err(backend)?;
            let meta = txn.open_table(META).map_err(backend)?;
            let current = meta_get(&meta, "revision")?;
            // Changes from the compacted revision on are kept, as etcd keeps them.
            let oldest = meta_get(&meta, "compacted")?;
            if after.saturating_add(1) < oldest {
                return Err(StoreError::Expired {
                    requested: after,
                    oldest,
                });
            }
            let changes = txn.open_table(CHANGES).map_err(backend)?;
            let mut backlog = Vec::new();
            for entry in changes.range(after + 1..).map_err(backend)? {
                let (_, bytes) = entry.map_err(backend)?;
                let change: Change = serde_json::from_slice(bytes.value()).map_err(backend)?;
                if change.key.starts_with(&prefix) {
                    backlog.push(change);
                }
            }
            Ok(Watch {
                source: WatchSource::Local {
                    prefix,
                    backlog: backlog.into_iter(),
                    live,
                    last: current.max(after),
                },
            })
        })
        .await
    }

    async fn revision(&self) -> Result<u64, StoreError> {
        self.blocking(|inner| inner.current_revision()).await
    }

    async fn compact(&self, revision: u64) -> Result<(), StoreError> {
        self.blocking(move |inner| inner.compact(revision)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store(dir: &tempfile::TempDir) -> RedbStore {
        RedbStore::open(&dir.path().join("db.redb")).unwrap()
    }

    #[tokio::test]
    async fn the_redb_store_keeps_the_storage_contract() {
        let dir = tempfile::tempdir().unwrap();
        let mut n = 0;
        super::super::contract::run_all(|| {
            n += 1;
            let path = dir.path().join(format!("db{n}.redb"));
            async move { RedbStore::open(&path).unwrap() }
        })
        .await;
    }

    #[tokio::test]
    async fn a_file_without_past_versions_starts_its_history_at_its_revision() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        {
            // A store file as written before past versions were kept: no "compacted" entry.
            let s = store(&dir);
            s.create("/a/x", json!(1)).await.unwrap();
            s.update("/a/x", json!(2), 1).await.unwrap();
            let db = redb::Database::create(&path);
            assert!(db.is_err(), "the store holds the file open");
        }
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(META).unwrap().remove("compacted").unwrap();
        txn.commit().unwrap();
        drop(db);
        let s = store(&dir);
        assert!(matches!(
            s.list(
                "/a/",
                ListRange {
                    revision: Some(1),
                    ..Default::default()
                }
            )
            .await
            .unwrap_err(),
            StoreError::Expired {
                requested: 1,
                oldest: 2
            }
        ));
        assert_eq!(
            s.list("/a/", ListRange::default())
                .await
                .unwrap()
                .items
                .len(),
            1
        );
    }

    #[tokio::test]
    async fn nothing_written_is_lost_when_the_store_is_reopened() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = store(&dir);
            s.create("/a/x", json!({"v": 1})).await.unwrap();
            s.create("/a/y", json!({"v": 2})).await.unwrap();
            s.delete("/a/y", None).await.unwrap();
        }
        let s = store(&dir);
        assert_eq!(s.revision().await.unwrap(), 3);
        assert_eq!(s.get("/a/x").await.unwrap().unwrap().value, json!({"v": 1}));
        assert!(s.get("/a/y").await.unwrap().is_none());
        // The history survives too: a watch from before the restart replays it.
        let mut w = s.watch("/a/", 1).await.unwrap();
        let c = w.next().await.unwrap().unwrap();
        assert_eq!(
            (c.revision, c.kind, c.key.as_str()),
            (2, ChangeKind::Put, "/a/y")
        );
        let c = w.next().await.unwrap().unwrap();
        assert_eq!((c.revision, c.kind), (3, ChangeKind::Delete));
        assert_eq!(c.value, json!({"v": 2}));
    }

    #[tokio::test]
    async fn compaction_keeps_the_history_after_it_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = store(&dir);
            for i in 0..5 {
                s.create(&format!("/a/{i}"), json!(i)).await.unwrap();
            }
            s.update("/a/0", json!(10), 1).await.unwrap();
            s.compact(3).await.unwrap();
        }
        let s = store(&dir);
        assert!(matches!(
            s.watch("/a/", 1).await.err().unwrap(),
            StoreError::Expired {
                requested: 1,
                oldest: 3
            }
        ));
        let mut w = s.watch("/a/", 2).await.unwrap();
        assert_eq!(w.next().await.unwrap().unwrap().revision, 3);
        let old = s
            .list(
                "/a/",
                ListRange {
                    revision: Some(5),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(old.items[0].value, json!(0));
        assert_eq!(old.items.len(), 5);
    }

    #[tokio::test]
    async fn the_periodic_compaction_compacts_to_the_revision_of_the_round_before() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir);
        let shutdown = tokio_util::sync::CancellationToken::new();
        let every = std::time::Duration::from_millis(300);
        let task = tokio::spawn(crate::apiserver::storage::compact_periodically(
            s.clone(),
            every,
            shutdown.clone(),
        ));
        s.create("/a/x", json!(1)).await.unwrap();
        s.update("/a/x", json!(2), 1).await.unwrap();
        // First round (at 300 ms) only notes revision 2; the second (600 ms) compacts to it.
        tokio::time::sleep(std::time::Duration::from_millis(450)).await;
        s.update("/a/x", json!(3), 2).await.unwrap();
        let at = |revision| ListRange {
            revision: Some(revision),
            ..Default::default()
        };
        assert!(s.list("/a/", at(1)).await.is_ok(), "nothing compacted yet");
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        assert!(matches!(
            s.list("/a/", at(1)).await.unwrap_err(),
            StoreError::Expired {
                requested: 1,
                oldest: 2
            }
        ));
        assert_eq!(s.list("/a/", at(2)).await.unwrap().items[0].value, json!(2));
        shutdown.cancel();
        task.await.unwrap();
    }

    /// The writer of [`acknowledged_writes_survive_a_kill`]: runs only in the child process,
    /// writing until killed and reporting each write the store acknowledged.
    #[tokio::test]
    #[ignore = "the child process of acknowledged_writes_survive_a_kill, run by it"]
    async fn kill_child_writer() {
        let Ok(path) = std::env::var("RSBUILDER_APISERVER_KILL_DB") else {
            return;
        };
        let s = RedbStore::open(Path::new(&path)).unwrap();
        for i in 0.. {
            s.create(&format!("/k/{i:06}"), json!({"i": i}))
                .await
                .unwrap();
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "ack {i}").unwrap();
            out.flush().unwrap();
        }
    }

    #[test]
    fn acknowledged_writes_survive_a_kill() {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "apiserver::storage::redb::tests::kill_child_writer",
                "--exact",
                "--nocapture",
                "--ignored",
            ])
            .env("RSBUILDER_APISERVER_KILL_DB", &path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut acked = None;
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("ack ") {
                let n: u64 = n.parse().unwrap();
                acked = Some(n);
                if n >= 30 {
                    break;
                }
            }
        }
        // SIGKILL: no destructor, no flush, no clean close of the database.
        child.kill().unwrap();
        child.wait().unwrap();
        let acked = acked.expect("the child acknowledged writes");
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let s = RedbStore::open(&path).unwrap();
            for i in 0..=acked {
                let got = s.get(&format!("/k/{i:06}")).await.unwrap();
                assert_eq!(
                    got.map(|v| v.value),
                    Some(json!({"i": i})),
                    "write {i} lost"
                );
            }
            assert!(s.revision().await.unwrap() > acked);
        });
    }
}
