// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The storage contract every [`Storage`] must keep, as tests generic over the store: the
//! redb store's tests and the etcd store's tests run the same functions. Revisions are read
//! relative to the store's revision at the start, since a shared etcd cluster does not start
//! at 0.

use serde_json::json;

use super::{ChangeKind, ListRange, ListResult, Storage, StoreError};

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
/// from the start key, and reports its revision.
pub(crate) async fn list_selects_by_prefix_in_key_order<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    for key in ["/a/ns2/b", "/a/ns1/b", "/a/ns1/a", "/ab/x", "/b/y"] {
        s.create(key, json!(key)).await.unwrap();
    }
    let keys = |r: ListResult| r.items.into_iter().map(|i| i.key).collect::<Vec<_>>();
    let all = s.list("/a/", ListRange::default()).await.unwrap();
    assert_eq!((all.revision, all.remaining), (r0 + 5, 0));
    assert_eq!(all.items[0].value, json!("/a/ns1/a"));
    assert_eq!(all.items[0].revision, r0 + 3);
    assert_eq!(keys(all), ["/a/ns1/a", "/a/ns1/b", "/a/ns2/b"]);
    let rest = s
        .list("/a/", range(Some("/a/ns1/a\0"), Some(r0 + 5), 0))
        .await
        .unwrap();
    assert_eq!(rest.revision, r0 + 5);
    assert_eq!(keys(rest), ["/a/ns1/b", "/a/ns2/b"]);
    let first = s.list("/a/", range(None, None, 1)).await.unwrap();
    assert_eq!(first.remaining, 2);
    assert_eq!(keys(first), ["/a/ns1/a"]);
}

fn range(start: Option<&str>, revision: Option<u64>, limit: usize) -> ListRange<'_> {
    ListRange {
        start,
        revision,
        limit,
    }
}

fn values(r: &ListResult) -> Vec<(String, serde_json::Value)> {
    r.items
        .iter()
        .map(|i| (i.key.clone(), i.value.clone()))
        .collect()
}

/// A list at a past revision shows the state then: old values of updated keys, deleted keys,
/// and not the keys created since, each with the revision of the version shown.
pub(crate) async fn a_list_at_a_past_revision_sees_that_state<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    s.create("/a/1", json!(1)).await.unwrap();
    s.create("/a/2", json!(2)).await.unwrap();
    s.create("/a/3", json!(3)).await.unwrap();
    let then = r0 + 3;
    s.update("/a/1", json!(10), r0 + 1).await.unwrap();
    s.delete("/a/2", None).await.unwrap();
    s.create("/a/4", json!(4)).await.unwrap();
    s.update("/a/1", json!(100), r0 + 4).await.unwrap();
    s.delete("/a/3", None).await.unwrap();
    s.create("/a/3", json!(30)).await.unwrap();
    let old = s.list("/a/", range(None, Some(then), 0)).await.unwrap();
    assert_eq!(old.revision, then);
    assert_eq!(
        values(&old),
        [
            ("/a/1".into(), json!(1)),
            ("/a/2".into(), json!(2)),
            ("/a/3".into(), json!(3))
        ]
    );
    assert_eq!(
        old.items.iter().map(|i| i.revision).collect::<Vec<_>>(),
        [r0 + 1, r0 + 2, r0 + 3]
    );
    let mid = s.list("/a/", range(None, Some(r0 + 6), 0)).await.unwrap();
    assert_eq!(
        values(&mid),
        [
            ("/a/1".into(), json!(10)),
            ("/a/3".into(), json!(3)),
            ("/a/4".into(), json!(4))
        ]
    );
    let now = s.list("/a/", ListRange::default()).await.unwrap();
    assert_eq!(now.revision, r0 + 9);
    assert_eq!(
        values(&now),
        [
            ("/a/1".into(), json!(100)),
            ("/a/3".into(), json!(30)),
            ("/a/4".into(), json!(4))
        ]
    );
    // A page of the past state: the limit and the count of the rest are at that revision.
    let page = s.list("/a/", range(None, Some(then), 2)).await.unwrap();
    assert_eq!(page.remaining, 1);
    assert_eq!(page.items.len(), 2);
    assert!(matches!(
        s.list("/a/", range(None, Some(r0 + 100), 0)).await.unwrap_err(),
        StoreError::Future { requested, .. } if requested == r0 + 100
    ));
}

/// A paged list read page by page at its first page's revision gives the state of that
/// revision, whatever is written between the pages.
pub(crate) async fn a_paged_list_survives_writes_between_pages<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    for i in 0..10 {
        s.create(&format!("/p/{i}"), json!(i)).await.unwrap();
    }
    let first = s.list("/p/", range(None, None, 4)).await.unwrap();
    assert_eq!((first.revision, first.remaining), (r0 + 10, 6));
    // Writes under and beside the prefix between the pages.
    s.update("/p/5", json!(50), r0 + 6).await.unwrap();
    s.delete("/p/6", None).await.unwrap();
    s.create("/p/55", json!(55)).await.unwrap();
    s.create("/q/0", json!(0)).await.unwrap();
    let mut got: Vec<_> = values(&first);
    let mut start = format!("{}\0", first.items.last().unwrap().key);
    loop {
        let page = s
            .list("/p/", range(Some(&start), Some(first.revision), 4))
            .await
            .unwrap();
        assert_eq!(page.revision, first.revision);
        got.extend(values(&page));
        if page.remaining == 0 {
            break;
        }
        start = format!("{}\0", page.items.last().unwrap().key);
    }
    let want: Vec<_> = (0..10).map(|i| (format!("/p/{i}"), json!(i))).collect();
    assert_eq!(got, want);
}

/// Compaction forgets the history before its revision: a list at an older revision and a
/// watch from before it are Expired; at the compacted revision both still work.
pub(crate) async fn compaction_expires_older_revisions<S: Storage>(s: &S) {
    let r0 = s.revision().await.unwrap();
    s.create("/c/x", json!(1)).await.unwrap();
    s.update("/c/x", json!(2), r0 + 1).await.unwrap();
    s.update("/c/x", json!(3), r0 + 2).await.unwrap();
    s.create("/c/y", json!(4)).await.unwrap();
    s.compact(r0 + 3).await.unwrap();
    assert!(matches!(
        s.list("/c/", range(None, Some(r0 + 2), 0)).await.unwrap_err(),
        StoreError::Expired { requested, .. } if requested == r0 + 2
    ));
    let at = s.list("/c/", range(None, Some(r0 + 3), 0)).await.unwrap();
    assert_eq!(values(&at), [("/c/x".into(), json!(3))]);
    match s.watch("/c/", r0 + 1).await {
        Err(StoreError::Expired { requested, oldest }) => {
            assert_eq!((requested, oldest), (r0 + 1, r0 + 3));
        }
        Err(e) => panic!("expected Expired, got {e}"),
        Ok(_) => panic!("expected Expired, got a watch"),
    }
    let mut w = s.watch("/c/", r0 + 2).await.unwrap();
    let c = w.next().await.unwrap().unwrap();
    assert_eq!((c.revision, c.value), (r0 + 3, json!(3)));
    // Compacting to an older revision changes nothing; a future one is refused.
    s.compact(r0 + 1).await.unwrap();
    assert!(s.list("/c/", range(None, Some(r0 + 3), 0)).await.is_ok());
    assert!(matches!(
        s.compact(r0 + 100).await.unwrap_err(),
        StoreError::Future { .. }
    ));
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
    a_list_at_a_past_revision_sees_that_state(&fresh().await).await;
    a_paged_list_survives_writes_between_pages(&fresh().await).await;
    compaction_expires_older_revisions(&fresh().await).await;
}
