// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Storage of the API server's objects: one trait ([`Storage`]) and its embedded, persistent
//! default on redb ([`RedbStore`]).
//!
//! The model is etcd's, which k8s.io/apiserver's storage layer (`pkg/storage/etcd3`) is built
//! on: one global revision counter raised by every write; each key remembers the revision of
//! its last write (its "mod revision"), which the registry serves as `metadata.resourceVersion`;
//! writes can be made conditional on that revision (compare-and-swap); a list reports the
//! revision it was read at; a watch replays every change after a given revision and then
//! follows new ones. Because the list's revision and the watch's starting point are the same
//! counter, list-then-watch neither misses nor repeats a change.
//!
//! Values are JSON documents. The store never looks inside them.

use std::future::Future;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

/// What a storage operation can fail with. The registry maps each to the API server's Status
/// (`NotFound` → 404, `AlreadyExists` / `Conflict` → 409, `Expired` → 410).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// No object under the key.
    #[error("key {0} not found")]
    NotFound(String),
    /// A create found the key taken.
    #[error("key {0} already exists")]
    AlreadyExists(String),
    /// A conditional write or delete found another revision than the one expected.
    #[error("key {key}: expected revision {expected}, found {actual}")]
    Conflict {
        /// The key written.
        key: String,
        /// The revision the caller expected.
        expected: u64,
        /// The key's current revision.
        actual: u64,
    },
    /// The revision asked for is older than the retained history (etcd's "compacted"); the
    /// client must list again.
    #[error("revision {requested} is too old (oldest available: {oldest})")]
    Expired {
        /// The revision asked for.
        requested: u64,
        /// The oldest revision a watch or list can still start from.
        oldest: u64,
    },
    /// The revision asked for has not been written yet (etcd's "future revision").
    #[error("revision {requested} is newer than the store's ({current})")]
    Future {
        /// The revision asked for.
        requested: u64,
        /// The store's current revision.
        current: u64,
    },
    /// The database failed (I/O, corruption) or a value could not be decoded.
    #[error("storage backend: {0}")]
    Backend(String),
}

/// One stored object and the revision of its last write.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned {
    /// The object's key.
    pub key: String,
    /// The object as stored.
    pub value: Value,
    /// The revision of the write that produced this value.
    pub revision: u64,
}

/// Which part of a prefix [`Storage::list`] reads, and at which revision: one page of a list,
/// as etcd's range request reads it (start key, `limit`, `revision`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListRange<'a> {
    /// Only keys from this one on (inclusive); `None` for the start of the prefix. A page
    /// continues after key `k` with `start` = `k` followed by a zero byte, as k8s.io/apiserver
    /// continues an etcd range.
    pub start: Option<&'a str>,
    /// Read the state at this past revision; `None` for the latest.
    pub revision: Option<u64>,
    /// At most this many items (0: no limit).
    pub limit: usize,
}

/// The answer to [`Storage::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct ListResult {
    /// The objects under the prefix from the start key, in key order, at most `limit`.
    pub items: Vec<Versioned>,
    /// The revision the list was read at.
    pub revision: u64,
    /// How many more objects the range holds after the last item (0: the list is complete).
    pub remaining: u64,
}

/// Whether a change wrote or removed the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeKind {
    /// The key was created or updated.
    Put,
    /// The key was deleted.
    Delete,
}

/// One change, as a watch delivers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The revision of the write.
    pub revision: u64,
    /// Put or delete.
    pub kind: ChangeKind,
    /// The key changed.
    pub key: String,
    /// After a put, the new value; after a delete, the last value the key had.
    pub value: Value,
    /// The value before the change (none for a create). A watch with a selector needs it: an
    /// object that stops matching is reported to that watcher as deleted.
    pub prev: Option<Value>,
}

/// Operations an API server needs from its store, as k8s.io/apiserver's `storage.Interface`
/// needs them from etcd. Every write raises the store's revision by one. Keys are strings;
/// listing and watching select them by prefix.
pub trait Storage: Send + Sync + 'static {
    /// The value under `key`, or `None`.
    fn get(&self, key: &str) -> impl Future<Output = Result<Option<Versioned>, StoreError>> + Send;

    /// One page of the objects whose keys start with `prefix` ([`ListRange`]: from a start
    /// key, at most `limit`), with the revision it was read at. With `range.revision`, the
    /// page shows the state at that revision, as etcd's read at a revision does. Errors:
    /// `Expired` for a revision before the last compaction, `Future` for one not yet written.
    fn list(
        &self,
        prefix: &str,
        range: ListRange<'_>,
    ) -> impl Future<Output = Result<ListResult, StoreError>> + Send;

    /// Stores `value` under a free `key`. Out: the new revision. Errors: `AlreadyExists`.
    fn create(
        &self,
        key: &str,
        value: Value,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Replaces the value under an existing `key`, if its revision is still `expected`.
    /// Out: the new revision. Errors: `NotFound`, `Conflict`.
    fn update(
        &self,
        key: &str,
        value: Value,
        expected: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Removes `key`, if its revision is still `expected` (when given). Out: the last value,
    /// with the revision of the delete. Errors: `NotFound`, `Conflict`.
    fn delete(
        &self,
        key: &str,
        expected: Option<u64>,
    ) -> impl Future<Output = Result<Versioned, StoreError>> + Send;

    /// The changes under `prefix` after revision `after`, then the new ones as they happen.
    /// Errors: `Expired` when `after` is older than the retained history.
    fn watch(
        &self,
        prefix: &str,
        after: u64,
    ) -> impl Future<Output = Result<Watch, StoreError>> + Send;

    /// The store's current revision.
    fn revision(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Forgets the history before `revision`, as etcd's compaction does: afterwards a list at
    /// an older revision, and a watch from before `revision - 1`, are `Expired`. Compacting to
    /// a revision at or before the last compaction changes nothing. Errors: `Future` for a
    /// revision not yet written.
    fn compact(&self, revision: u64) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// How long the API server keeps the history of its store by default: five minutes, as
/// kube-apiserver's `--etcd-compaction-interval`. A continue token, or a list or watch at a
/// past resourceVersion, stays valid at least this long (at most twice this long).
pub const DEFAULT_COMPACTION_INTERVAL: std::time::Duration = std::time::Duration::from_secs(300);

/// Compacts `store` every `interval` until `shutdown`, as kube-apiserver's compactor does:
/// each round compacts to the revision the previous round saw, so at least one interval of
/// history is always kept. Failures are logged and retried at the next round.
pub async fn compact_periodically<S: Storage>(
    store: S,
    interval: std::time::Duration,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut seen: Option<u64> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
        }
        if let Some(revision) = seen
            && let Err(e) = store.compact(revision).await
        {
            tracing::warn!(revision, error = %e, "compacting the store");
        }
        match store.revision().await {
            Ok(now) => seen = Some(now),
            Err(e) => tracing::warn!(error = %e, "reading the store's revision"),
        }
    }
}

/// A running watch: first the retained changes after the starting revision, then live ones.
/// Dropping it ends the watch.
pub struct Watch {
    source: WatchSource,
}

enum WatchSource {
    /// [`RedbStore`]'s: a replayed backlog, then the store's broadcast.
    Local {
        prefix: String,
        backlog: std::vec::IntoIter<Change>,
        live: broadcast::Receiver<Arc<Change>>,
        last: u64,
    },
    /// A task forwarding another store's changes (the etcd store's watch stream); dropping the
    /// receiver ends the task.
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    Channel(tokio::sync::mpsc::Receiver<Result<Change, StoreError>>),
}

impl Watch {
    /// A watch fed by a channel: each item is delivered as is, and a closed channel ends the
    /// watch (`None`). For stores whose backend pushes changes (the etcd store).
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    pub(crate) fn from_channel(
        rx: tokio::sync::mpsc::Receiver<Result<Change, StoreError>>,
    ) -> Self {
        Watch {
            source: WatchSource::Channel(rx),
        }
    }
}

impl Watch {
    /// The next change under the prefix. Out: `None` when the store is gone. Errors:
    /// `Expired` when this watcher fell so far behind that changes were dropped for it (the
    /// client must list and watch again, as with a compacted etcd revision).
    pub async fn next(&mut self) -> Option<Result<Change, StoreError>> {
        let (prefix, backlog, live, last) = match &mut self.source {
            WatchSource::Channel(rx) => return rx.recv().await,
            WatchSource::Local {
                prefix,
                backlog,
                live,
                last,
            } => (prefix, backlog, live, last),
        };
        if let Some(change) = backlog.next() {
            *last = change.revision;
            return Some(Ok(change));
        }
        loop {
            match live.recv().await {
                Ok(change) => {
                    if change.revision <= *last || !change.key.starts_with(prefix.as_str()) {
                        continue;
                    }
                    *last = change.revision;
                    return Some(Ok((*change).clone()));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    return Some(Err(StoreError::Expired {
                        requested: *last,
                        oldest: *last + 1,
                    }));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod contract;
mod redb;

pub use self::redb::RedbStore;
