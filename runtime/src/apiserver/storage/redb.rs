// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! [`RedbStore`]: the embedded, persistent default [`Storage`], one redb database file.

use std::path::Path;
use std::sync::{Arc, Mutex};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::broadcast;

use super::{Change, ChangeKind, ListResult, Storage, StoreError, Versioned, Watch, WatchSource};

/// Key → (mod revision, JSON value).
const OBJECTS: TableDefinition<&str, (u64, &[u8])> = TableDefinition::new("objects");
/// Revision → the change it made (JSON of [`Change`]), the retained history watches replay.
const CHANGES: TableDefinition<u64, &[u8]> = TableDefinition::new("changes");
/// "revision" → the current revision.
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// How many changes [`RedbStore`] keeps for watches to replay unless told otherwise
/// ([`RedbStore::open_with_history`]); a watch from an older revision gets `Expired`.
pub const DEFAULT_HISTORY: u64 = 10_000;

/// The embedded default [`Storage`]: one redb database file.
///
/// redb commits with fsync by default (`Durability::Immediate`) and its copy-on-write B-trees
/// keep the last committed state intact if the process dies mid-write, so an acknowledged
/// write survives a restart or a kill (docs/apiserver.md says why redb). The objects, the
/// revision and the recent changes are all in the file, so a reopened store serves
/// watches from revisions written before the restart.
#[derive(Clone)]
pub struct RedbStore {
    inner: Arc<Inner>,
}

struct Inner {
    db: redb::Database,
    history: u64,
    /// Held for the whole of a write and its broadcast, so watchers see changes in revision
    /// order and a watch being set up cannot miss one.
    write: Mutex<()>,
    events: broadcast::Sender<Arc<Change>>,
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl RedbStore {
    /// Opens (or creates) the database file at `path`, keeping [`DEFAULT_HISTORY`] changes.
    /// Errors: the file cannot be opened or created, is locked by another process, or is not
    /// a redb database.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_history(path, DEFAULT_HISTORY)
    }

    /// As [`RedbStore::open`], keeping the last `history` changes (at least 1) for watches.
    pub fn open_with_history(path: &Path, history: u64) -> Result<Self, StoreError> {
        let db = redb::Database::create(path)
            .map_err(|e| StoreError::Backend(format!("{}: {e}", path.display())))?;
        let txn = db.begin_write().map_err(backend)?;
        {
            txn.open_table(OBJECTS).map_err(backend)?;
            txn.open_table(CHANGES).map_err(backend)?;
            txn.open_table(META).map_err(backend)?;
        }
        txn.commit().map_err(backend)?;
        let (events, _) = broadcast::channel(4096);
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                history: history.max(1),
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
        let meta = txn.open_table(META).map_err(backend)?;
        Ok(meta
            .get("revision")
            .map_err(backend)?
            .map_or(0, |v| v.value()))
    }

    /// The oldest revision a watch can start after: changes after it are all retained.
    fn oldest(&self, txn: &redb::ReadTransaction) -> Result<u64, StoreError> {
        let changes = txn.open_table(CHANGES).map_err(backend)?;
        let first = changes.first().map_err(backend)?;
        let meta = txn.open_table(META).map_err(backend)?;
        let current = meta
            .get("revision")
            .map_err(backend)?
            .map_or(0, |v| v.value());
        Ok(match first {
            Some((rev, _)) => rev.value() - 1,
            None => current,
        })
    }

    /// One write: checks `precondition` against the key's current entry, stores `value`
    /// (or removes the key when `None`), records the change and broadcasts it.
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
            let mut meta = txn.open_table(META).map_err(backend)?;
            let mut changes = txn.open_table(CHANGES).map_err(backend)?;
            let existing = match objects.get(key).map_err(backend)? {
                Some(entry) => {
                    let (rev, bytes) = entry.value();
                    Some((rev, serde_json::from_slice(bytes).map_err(backend)?))
                }
                None => None,
            };
            let prev = precondition(existing)?.map(|(_, v)| v);
            let revision = meta
                .get("revision")
                .map_err(backend)?
                .map_or(0, |v| v.value())
                + 1;
            meta.insert("revision", revision).map_err(backend)?;
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
            if revision > self.history {
                let drop_to = revision - self.history;
                changes
                    .retain_in(..=drop_to, |_, _| false)
                    .map_err(backend)?;
            }
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

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        at_revision: Option<u64>,
    ) -> Result<ListResult, StoreError> {
        let prefix = prefix.to_string();
        let start_after = start_after.map(str::to_string);
        self.blocking(move |inner| {
            // One read transaction: a consistent snapshot of objects and changes.
            let txn = inner.db.begin_read().map_err(backend)?;
            let meta = txn.open_table(META).map_err(backend)?;
            let revision = meta
                .get("revision")
                .map_err(backend)?
                .map_or(0, |v| v.value());
            if let Some(at) = at_revision {
                // No multi-version history of objects is kept: the state at `at` is the
                // current one exactly when nothing under the prefix changed since.
                let oldest = inner.oldest(&txn)?;
                let expired = StoreError::Expired {
                    requested: at,
                    oldest: revision,
                };
                if at < oldest || at > revision {
                    return Err(expired);
                }
                let changes = txn.open_table(CHANGES).map_err(backend)?;
                for entry in changes.range(at + 1..).map_err(backend)? {
                    let (_, bytes) = entry.map_err(backend)?;
                    let change: Change = serde_json::from_slice(bytes.value()).map_err(backend)?;
                    if change.key.starts_with(&prefix) {
                        return Err(expired);
                    }
                }
            }
            let objects = txn.open_table(OBJECTS).map_err(backend)?;
            let start = match &start_after {
                Some(after) if after.as_str() >= prefix.as_str() => after.clone(),
                _ => prefix.clone(),
            };
            let mut items = Vec::new();
            for entry in objects.range(start.as_str()..).map_err(backend)? {
                let (key, entry) = entry.map_err(backend)?;
                let key = key.value();
                if !key.starts_with(&prefix) {
                    break;
                }
                if start_after.as_deref() == Some(key) {
                    continue;
                }
                let (rev, bytes) = entry.value();
                items.push(Versioned {
                    key: key.to_string(),
                    value: serde_json::from_slice(bytes).map_err(backend)?,
                    revision: rev,
                });
            }
            Ok(ListResult { items, revision })
        })
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
            let oldest = inner.oldest(&txn)?;
            let current = inner.current_revision()?;
            if after < oldest {
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
    async fn a_continued_list_after_a_change_under_its_prefix_is_expired() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir);
        s.create("/a/x", json!(1)).await.unwrap();
        s.create("/b/x", json!(1)).await.unwrap();
        // A change elsewhere keeps revision 1's view of /a/ valid.
        assert!(s.list("/a/", None, Some(1)).await.is_ok());
        s.create("/a/y", json!(1)).await.unwrap();
        assert!(matches!(
            s.list("/a/", None, Some(1)).await.unwrap_err(),
            StoreError::Expired { requested: 1, .. }
        ));
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
    async fn a_watch_from_before_the_retained_history_is_expired() {
        let dir = tempfile::tempdir().unwrap();
        let s = RedbStore::open_with_history(&dir.path().join("db"), 2).unwrap();
        for i in 0..5 {
            s.create(&format!("/a/{i}"), json!(i)).await.unwrap();
        }
        assert!(matches!(
            s.watch("/a/", 1).await.err().unwrap(),
            StoreError::Expired {
                requested: 1,
                oldest: 3
            }
        ));
        let mut w = s.watch("/a/", 3).await.unwrap();
        assert_eq!(w.next().await.unwrap().unwrap().revision, 4);
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
