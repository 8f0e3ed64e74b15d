// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Reads of a collection: list (selectors, paging with continue tokens, resourceVersion
//! semantics) and watch (initial events, then the store's changes filtered by the selectors),
//! as k8s.io/apiserver's generic registry and storage cacher serve them.

use serde_json::{Value, json};

use super::super::kind::ApiKind;
use super::super::selector::{FieldSelector, LabelSelector};
use super::super::status::ApiError;
use super::super::storage::{ChangeKind, Storage, StoreError};
use super::{Registry, labels, meta_str, parse_rv, served, storage_error};

/// The query of a list, watch or deletecollection.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
    /// `limit` (0: no limit).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
}

/// One event of a watch, before encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: &'static str,
    /// The object (a Status for `ERROR`).
    pub object: Value,
}

/// The continue token: which list it continues (its revision) and the last key returned, in
/// the shape the API server uses (base64 of a small JSON document).
fn encode_continue(revision: u64, last_key: &str) -> String {
    use base64::Engine;
    let doc = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": last_key});
    base64::engine::general_purpose::URL_SAFE.encode(doc.to_string())
}

fn decode_continue(token: &str) -> Result<(u64, String), ApiError> {
    use base64::Engine;
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let bytes = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .map_err(|_| bad())?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let rv = doc.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let start = doc.get("start").and_then(Value::as_str).ok_or_else(bad)?;
    Ok((rv, start.to_string()))
}

impl<S: Storage> Registry<S> {
    /// Lists the kind (in `namespace`, or everywhere) with selectors and paging. Out: a
    /// `<Kind>List` whose `metadata.resourceVersion` is the revision it was read at, with
    /// `continue` when `limit` cut it. Errors: 400 on a bad continue token or
    /// resourceVersion; 410 when a continued list can no longer be read consistently.
    pub async fn list(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> Result<Value, ApiError> {
        let prefix = Self::prefix(kind, namespace);
        let (at, start) = match &opts.continue_token {
            Some(t) => {
                let (rv, start) = decode_continue(t)?;
                (Some(rv), Some(start))
            }
            None => (None, None),
        };
        let at = match (
            at,
            opts.resource_version.as_deref(),
            opts.resource_version_match.as_deref(),
        ) {
            (Some(rv), _, _) => Some(rv),
            (None, Some(rv), Some("Exact")) => Some(parse_rv(rv)?),
            (None, Some(rv), _) if !rv.is_empty() && rv != "0" => {
                // NotOlderThan (the default for a set resourceVersion): the latest state
                // serves it, unless the store has not reached that revision yet.
                let want = parse_rv(rv)?;
                let current = self
                    .store
                    .revision()
                    .await
                    .map_err(|e| storage_error(kind, "", e))?;
                if want > current {
                    return Err(ApiError {
                        code: 504,
                        reason: "Timeout",
                        message: format!(
                            "Too large resource version: {want}, current resource version: {current}"
                        ),
                        details: Some(
                            json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}),
                        ),
                    });
                }
                None
            }
            _ => None,
        };
        let result = self
            .store
            .list(&prefix, start.as_deref(), at)
            .await
            .map_err(|e| match e {
                StoreError::Expired { .. } if opts.continue_token.is_some() => ApiError::expired(
                    "the list this continue token belongs to changed since; list again without it",
                ),
                e => storage_error(kind, "", e),
            })?;
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0i64;
        for item in result.items {
            if !selected(opts, &item.value) {
                continue;
            }
            if opts.limit > 0 && items.len() == opts.limit {
                if next.is_none() {
                    next = Some(encode_continue(result.revision, &last_key(&items)));
                }
                remaining += 1;
                continue;
            }
            items.push((item.key, served(item.value, item.revision)));
        }
        let mut list_meta = json!({"resourceVersion": result.revision.to_string()});
        if let Some(token) = next {
            list_meta["continue"] = Value::String(token);
            if opts.labels.is_empty() && opts.fields.is_empty() {
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(json!({
            "apiVersion": kind.api_version(),
            "kind": kind.list_kind,
            "metadata": list_meta,
            "items": items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        }))
    }

    /// Starts a watch. With no resourceVersion (or `0`) the current objects come first as
    /// ADDED events, then the changes after the revision they were read at; with a
    /// resourceVersion, the changes after it. Out: the initial events, and the stream.
    /// Errors: 400 on a bad resourceVersion. A resourceVersion older than the retained
    /// history is not an error here: the stream then yields one 410 ERROR event, as the API
    /// server's watch does.
    pub async fn watch(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> Result<(Vec<Event>, WatchStream), ApiError> {
        let prefix = Self::prefix(kind, namespace);
        let (initial, after) = match opts.resource_version.as_deref() {
            None | Some("") | Some("0") => {
                let list = self
                    .store
                    .list(&prefix, None, None)
                    .await
                    .map_err(|e| storage_error(kind, "", e))?;
                let events = list
                    .items
                    .into_iter()
                    .filter(|i| selected(opts, &i.value))
                    .map(|i| Event {
                        kind: "ADDED",
                        object: served(i.value, i.revision),
                    })
                    .collect();
                (events, list.revision)
            }
            Some(rv) => (Vec::new(), parse_rv(rv)?),
        };
        let watch = match self.store.watch(&prefix, after).await {
            Ok(w) => Ok(w),
            Err(StoreError::Expired { requested, oldest }) => Err(Event {
                kind: "ERROR",
                object: ApiError::expired(format!(
                    "too old resource version: {requested} ({oldest})"
                ))
                .to_status(),
            }),
            Err(e) => return Err(storage_error(kind, "", e)),
        };
        Ok((
            initial,
            WatchStream {
                watch,
                opts: opts.clone(),
                progress: after,
            },
        ))
    }
}

fn last_key(items: &[(String, Value)]) -> String {
    items.last().map(|(k, _)| k.clone()).unwrap_or_default()
}

/// The changes of a watch, filtered by its selectors and turned into API events.
pub struct WatchStream {
    watch: Result<super::super::storage::Watch, Event>,
    opts: ListOptions,
    progress: u64,
}

impl WatchStream {
    /// The next event. An object that starts matching the selectors is ADDED, one that stops
    /// matching is DELETED, as the API server's filtered watch reports them. Out: `None` when
    /// the watch ended (the store closed, or after an ERROR event).
    pub async fn next(&mut self) -> Option<Event> {
        let watch = match &mut self.watch {
            Ok(w) => w,
            Err(e) => {
                let e = e.clone();
                self.watch = Err(Event {
                    kind: "",
                    object: Value::Null,
                });
                return (!e.kind.is_empty()).then_some(e);
            }
        };
        loop {
            let change = match watch.next().await? {
                Ok(c) => c,
                Err(e) => {
                    let status = match e {
                        StoreError::Expired { requested, oldest } => ApiError::expired(format!(
                            "too old resource version: {requested} ({oldest})"
                        )),
                        e => ApiError::internal(e),
                    };
                    self.watch = Err(Event {
                        kind: "",
                        object: Value::Null,
                    });
                    return Some(Event {
                        kind: "ERROR",
                        object: status.to_status(),
                    });
                }
            };
            self.progress = change.revision;
            let now_in = change.kind == ChangeKind::Put && selected(&self.opts, &change.value);
            let before_in = change
                .prev
                .as_ref()
                .is_some_and(|p| selected(&self.opts, p));
            let kind = match (change.kind, before_in, now_in) {
                (ChangeKind::Delete, true, _) => "DELETED",
                (ChangeKind::Put, false, true) => "ADDED",
                (ChangeKind::Put, true, true) => "MODIFIED",
                (ChangeKind::Put, true, false) => "DELETED",
                _ => continue,
            };
            return Some(Event {
                kind,
                object: served(change.value, change.revision),
            });
        }
    }

    /// The revision up to which every change has been delivered (or filtered out): what a
    /// BOOKMARK event may carry.
    pub fn progress(&self) -> u64 {
        self.progress
    }
}

/// Whether `obj` passes the label and field selectors of `opts`.
fn selected(opts: &ListOptions, obj: &Value) -> bool {
    opts.labels.matches(&labels(obj))
        && opts
            .fields
            .matches(meta_str(obj, "name"), meta_str(obj, "namespace"))
}
