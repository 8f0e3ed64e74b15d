// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The storage contract every [`Storage`] must keep, as tests generic over the store: the
//! redb store's tests and the etcd store's tests run the same functions. Revisions are read
//! relative to the store's revision at the start, since a shared etcd cluster does not start
//! at 0.

use serde_json::json;

use super::{ChangeKind, ListResult, Storage, StoreError};

/// Each write raises the revision by one and becomes the key's revision.
pub(crate) async fn every_write_raises_the_revision<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    assert_eq!(s.create("/a/x", json!({"n": 1})).await.unwrap(), r0 + 1);
    assert_eq!(s.create("/a/y", json!({"n": 2})).await.unwrap(), r0 + 2);
    assert_eq!(
        s.update("/a/x", json!({"n": 3}), r0 + 1).await.unwrap(),
        r0 + 3
    );
    let got = s.get("/a/x").await.unwrap().unwrap();
    assert_eq!((got.value, got.revision), (json!({"n": 3}), r0 + 3));
    assert_eq!(s.revision().await.unwrap(), r0 + 3);
    let gone = s.delete("/a/y", None).await.unwrap();
    assert_eq!((gone.value, gone.revision), (json!({"n": 2}), r0 + 4));
    assert!(s.get("/a/y").await.unwrap().is_none());
    assert_eq!(
        s.delete("/a/y", None).await.unwrap_err(),
        StoreError::NotFound("/a/y".into())
    );
    assert_eq!(
        s.update("/a/y", json!(0), r0 + 2).await.unwrap_err(),
        StoreError::NotFound("/a/y".into())
    );
}

/// A stale expected revision is a conflict naming the current one, and writes nothing.
pub(crate) async fn a_stale_write_is_a_conflict<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    s.create("/a/x", json!(1)).await.unwrap();
    s.update("/a/x", json!(2), r0 + 1).await.unwrap();
    let err = s.update("/a/x", json!(3), r0 + 1).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict {
            key: "/a/x".into(),
            expected: r0 + 1,
            actual: r0 + 2
        }
    );
    assert_eq!(s.get("/a/x").await.unwrap().unwrap().value, json!(2));
    assert_eq!(
        s.create("/a/x", json!(9)).await.unwrap_err(),
        StoreError::AlreadyExists("/a/x".into())
    );
    assert!(matches!(
        s.delete("/a/x", Some(r0 + 1)).await.unwrap_err(),
        StoreError::Conflict { actual, .. } if actual == r0 + 2
    ));
    assert_eq!(s.revision().await.unwrap(), r0 + 2);
}

/// A list selects by prefix (not by string start: `/ab/` is not under `/a/`), in key order,
/// after the start key, and reports its revision.
pub(crate) async fn list_selects_by_prefix_in_key_order<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    for key in ["/a/ns2/b", "/a/ns1/b", "/a/ns1/a", "/ab/x", "/b/y"] {
        s.create(key, json!(key)).await.unwrap();
    }
    let keys = |r: ListResult| r.items.into_iter().map(|i| i.key).collect::<Vec<_>>();
    let all = s.list("/a/", None, None).await.unwrap();
    assert_eq!(all.revision, r0 + 5);
    assert_eq!(all.items[0].value, json!("/a/ns1/a"));
    assert_eq!(all.items[0].revision, r0 + 3);
    assert_eq!(keys(all), ["/a/ns1/a", "/a/ns1/b", "/a/ns2/b"]);
    let rest = s.list("/a/", Some("/a/ns1/a"), Some(r0 + 5)).await.unwrap();
    assert_eq!(rest.revision, r0 + 5);
    assert_eq!(keys(rest), ["/a/ns1/b", "/a/ns2/b"]);
}

/// A watch replays the changes under its prefix after its revision, then follows live ones,
/// with the previous value of an update and the last value of a delete.
pub(crate) async fn a_watch_replays_then_follows<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    s.create("/a/x", json!(1)).await.unwrap();
    s.create("/a/y", json!(2)).await.unwrap();
    let mut w = s.watch("/a/", r0 + 1).await.unwrap();
    s.create("/b/z", json!(3)).await.unwrap();
    s.create("/ab/z", json!(3)).await.unwrap();
    s.update("/a/x", json!(4), r0 + 1).await.unwrap();
    s.delete("/a/y", None).await.unwrap();
    let first = w.next().await.unwrap().unwrap();
    assert_eq!(
        (first.revision, first.kind, first.key.as_str(), first.prev),
        (r0 + 2, ChangeKind::Put, "/a/y", None)
    );
    let second = w.next().await.unwrap().unwrap();
    assert_eq!(
        (second.revision, second.value, second.prev),
        (r0 + 5, json!(4), Some(json!(1)))
    );
    let third = w.next().await.unwrap().unwrap();
    assert_eq!(
        (third.revision, third.kind, third.key.as_str(), third.value),
        (r0 + 6, ChangeKind::Delete, "/a/y", json!(2))
    );
}

/// Runs every contract function, each on a fresh store from `fresh`.
pub(crate) async fn run_all<S: Storage, F: std::future::Future<Output = S>>(
    mut fresh: impl FnMut() -> F,
) {
    every_write_raises_the_revision(&fresh().await).await;
    a_stale_write_is_a_conflict(&fresh().await).await;
    list_selects_by_prefix_in_key_order(&fresh().await).await;
    a_watch_replays_then_follows(&fresh().await).await;
}
