// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Reads of a collection: list (selectors, paging with continue tokens, resourceVersion
//! semantics) and watch (initial events, then the store's changes filtered by the selectors),
//! as k8s.io/apiserver's generic registry and storage cacher serve them.

use serde_json::{Value, json};

use super::super::kind::ApiKind;
use super::super::selector::{FieldSelector, LabelSelector};
use super::super::status::ApiError;
use super::super::storage::{ChangeKind, ListRange, Storage, StoreError};
use super::{Registry, labels, parse_rv, read, storage_error};

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

/// How many objects the registry asks the store for at once when a list has no `limit` (a
/// list without a limit, a watch's initial list, deletecollection): such a list is read in
/// pages at one revision, so no single store read holds the whole prefix.
const STORE_PAGE: usize = 1000;

/// How long a list waits for the store to reach a `resourceVersion` it has not reached yet,
/// as k8s.io/apiserver's watch cache waits (`blockTimeout`), before answering 504.
const RESOURCE_VERSION_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The revision a continue token stands for when its own was compacted: the latest, as the
/// token in a 410's Status continues an inconsistent list (k8s.io/apiserver's `-1`).
const LATEST: i64 = -1;

/// The answer to a list whose resourceVersion was compacted, in k8s.io/apiserver's words.
const EXPIRED_LIST: &str = "The resourceVersion for the provided list is too old.";

/// The answer to a continue token whose revision was compacted, in k8s.io/apiserver's words.
const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// The continue token, in k8s.io/apiserver's shape (base64 of `{"v": "meta.k8s.io/v1",
/// "rv": <revision>, "start": <key relative to the list's prefix>}`): the list's revision and
/// the key the next page starts at (the last key read with a zero byte appended).
fn encode_continue(revision: i64, prefix: &str, start: &str) -> String {
    use base64::Engine;
    let relative = start.strip_prefix(prefix).unwrap_or(start);
    let doc = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": relative});
    base64::engine::general_purpose::URL_SAFE.encode(doc.to_string())
}

/// The revision (`None` for the latest) and the start key of a continue token for a list
/// under `prefix`. Errors: 400 for a token that is not one, or whose start key would leave
/// the prefix (`..`, a leading `/`), as k8s.io/apiserver refuses it.
fn decode_continue(token: &str, prefix: &str) -> Result<(Option<u64>, String), ApiError> {
    use base64::Engine;
    let bad = |why: &str| {
        ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid: {why}"
        ))
    };
    let bytes = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token))
        .map_err(|_| bad("not base64"))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|_| bad("not JSON"))?;
    if doc.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(bad("server does not recognize this encoded key"));
    }
    let rv = doc.get("rv").and_then(Value::as_i64).unwrap_or(0);
    let revision = match rv {
        LATEST => None,
        rv if rv > 0 => Some(rv as u64),
        _ => {
            return Err(bad(
                "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            ));
        }
    };
    let start = doc.get("start").and_then(Value::as_str).unwrap_or("");
    if start.is_empty() {
        return Err(bad("encoded start key empty (version meta.k8s.io/v1)"));
    }
    if start.starts_with('/') || start.split('/').any(|segment| segment == "..") {
        return Err(bad("encoded start key is not a relative key"));
    }
    Ok((revision, format!("{prefix}{start}")))
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
        let (at, mut start) = self.list_from(&prefix, opts).await?;
        let mut revision = at;
        let mut items = Vec::new();
        let mut next = None;
        loop {
            let want = match opts.limit {
                0 => STORE_PAGE,
                limit => limit - items.len(),
            };
            let range = ListRange {
                start: start.as_deref(),
                revision,
                limit: want,
            };
            let page = self.store.list(&prefix, range).await.map_err(|e| match e {
                StoreError::Expired { .. } if opts.continue_token.is_some() => ApiError {
                    continue_token: Some(encode_continue(
                        LATEST,
                        &prefix,
                        start.as_deref().unwrap_or(&prefix),
                    )),
                    ..ApiError::expired(EXPIRED_CONTINUE)
                },
                StoreError::Expired { .. } => ApiError::expired(EXPIRED_LIST),
                e => storage_error(kind, "", e),
            })?;
            revision = Some(page.revision);
            let last = page.items.last().map(|i| format!("{}\0", i.key));
            for item in page.items {
                if selected(opts, &item.value) {
                    items.push(read(kind, item.value, item.revision));
                }
            }
            if page.remaining == 0 {
                break;
            }
            start = last;
            if opts.limit > 0 && items.len() >= opts.limit {
                next = Some((start.clone().unwrap_or_default(), page.remaining));
                break;
            }
        }
        let revision = revision.unwrap_or_default();
        let mut list_meta = json!({"resourceVersion": revision.to_string()});
        if let Some((start, remaining)) = next {
            list_meta["continue"] =
                Value::String(encode_continue(revision as i64, &prefix, &start));
            if opts.labels.is_empty() && opts.fields.is_empty() {
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(json!({
            "apiVersion": kind.api_version(),
            "kind": kind.list_kind,
            "metadata": list_meta,
            "items": items,
        }))
    }

    /// The revision a list reads at (`None`: the latest) and the key it starts from, from its
    /// `continue`, `resourceVersion` and `resourceVersionMatch`, as k8s.io/apiserver's storage
    /// decides them:
    /// - a continue token: its revision (the latest for a token from a 410), its start key;
    /// - no resourceVersion: the latest;
    /// - `Exact` (and, as the API server reads a paged list, a resourceVersion other than `0`
    ///   with a `limit` and no match): that revision;
    /// - `NotOlderThan` (or no match): the latest, once the store has reached it; waits up to
    ///   3 s for it, then 504. `0` is any revision: the latest.
    ///
    /// Errors: 400 for a resourceVersion with a continue token, a bad token or revision, a
    /// match without a resourceVersion or an unknown one, `Exact` at `0`; 504 as above.
    async fn list_from(
        &self,
        prefix: &str,
        opts: &ListOptions,
    ) -> Result<(Option<u64>, Option<String>), ApiError> {
        let rv = opts.resource_version.as_deref().filter(|rv| !rv.is_empty());
        let rv_match = opts
            .resource_version_match
            .as_deref()
            .filter(|m| !m.is_empty());
        if let Some(token) = &opts.continue_token {
            if rv.is_some_and(|rv| rv != "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            if rv_match.is_some() {
                return Err(ApiError::bad_request(
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            let (revision, start) = decode_continue(token, prefix)?;
            return Ok((revision, Some(start)));
        }
        let Some(rv) = rv else {
            if rv_match.is_some() {
                return Err(ApiError::bad_request(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            return Ok((None, None));
        };
        let want = parse_rv(rv)?;
        match rv_match {
            Some("Exact") if want == 0 => Err(ApiError::bad_request(
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            )),
            Some("Exact") => Ok((Some(want), None)),
            None if opts.limit > 0 && want > 0 => Ok((Some(want), None)),
            None | Some("NotOlderThan") => {
                self.wait_for_revision(want).await?;
                Ok((None, None))
            }
            Some(other) => Err(ApiError::bad_request(format!(
                "resourceVersionMatch: Unsupported value: {other:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
            ))),
        }
    }

    /// Waits until the store's revision reaches `want`, at most [`RESOURCE_VERSION_WAIT`].
    /// Errors: 504 "Too large resource version" after it.
    async fn wait_for_revision(&self, want: u64) -> Result<(), ApiError> {
        let deadline = tokio::time::Instant::now() + RESOURCE_VERSION_WAIT;
        loop {
            let current = self.store.revision().await.map_err(ApiError::internal)?;
            if current >= want {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ApiError::too_large_resource_version(want, current));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
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
                // The current objects, read as a list without a limit (in pages at one
                // revision).
                let all = ListOptions {
                    limit: 0,
                    continue_token: None,
                    resource_version: None,
                    resource_version_match: None,
                    ..opts.clone()
                };
                let mut list = self.list(kind, namespace, &all).await?;
                let revision = list["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|rv| rv.parse().ok())
                    .unwrap_or_default();
                let events = match list["items"].take() {
                    Value::Array(items) => items
                        .into_iter()
                        .map(|object| Event {
                            kind: "ADDED",
                            object,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                (events, revision)
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
                kind: kind.clone(),
                opts: opts.clone(),
                progress: after,
            },
        ))
    }
}

/// The changes of a watch, filtered by its selectors and turned into API events.
pub struct WatchStream {
    watch: Result<super::super::storage::Watch, Event>,
    /// The watched kind: each object is read through its schema ([`read`]).
    kind: ApiKind,
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
                object: read(&self.kind, change.value, change.revision),
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
    opts.labels.matches(&labels(obj)) && opts.fields.matches(obj)
}
