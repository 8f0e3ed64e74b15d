// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The registry: the rules the API server applies to an object between the HTTP handler and
//! the store, as k8s.io/apiserver's generic registry (`pkg/registry/generic/registry`,
//! `pkg/registry/rest`) and the apiextensions server's custom-resource strategy apply them.
//!
//! - create: `generateName`, name and namespace checks, `uid`, `creationTimestamp`,
//!   `generation: 1`; with a status subresource, the status sent is dropped; a
//!   `resourceVersion` in the body is refused.
//! - update: the body's `resourceVersion` must be the current one (409 Conflict otherwise;
//!   an update without one is 422, as custom resources do not allow unconditional updates);
//!   `generation` rises when anything outside `metadata` changes; the system fields are kept
//!   from the stored object; a write that changes nothing writes nothing.
//! - status subresource: a write to `/status` changes only `status`, a write to the object
//!   keeps the stored `status`.
//! - scale subresource (the apiextensions server's `ScaleREST`): the `autoscaling/v1` Scale is
//!   read from the kind's scale paths; a write to it changes only the spec replicas path of the
//!   object, which is then updated by the rules above.
//! - delete: an object with finalizers gets `deletionTimestamp` (and a generation bump) and
//!   stays; it goes when an update removes its last finalizer. Preconditions on uid and
//!   resourceVersion are checked.
//! - `resourceVersion` is the store revision of the object's last write.
//! - `metadata.managedFields`: every write records its field manager's entry, and server-side
//!   apply ([`Registry::apply`]) merges an applied configuration by the kind's schema, as
//!   k8s.io/apiserver's field manager does ([`super::fieldmanager::managed`]).
//!
//! - metadata: every create and update is checked as apimachinery's `ValidateObjectMeta`
//!   checks it (name, generateName, labels, annotations, ownerReferences, finalizers, and on
//!   update the server's fields), in `registry/meta.rs`.
//!
//! One file per verb under `registry/`: `create.rs`, `update.rs` (update and patch),
//! `apply.rs`, `delete.rs`, `list.rs` (lists and watches), `scale.rs` (the scale subresource);
//! `jsonpatch.rs` applies JSON patches, `meta.rs` checks metadata. This file holds what they
//! share: the object's metadata helpers, admission, the update rules ([`Registry`]'s
//! `prepare_update` and `commit`), `managedFields` tracking and the retry on conflict.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::admission::Op;
use super::fieldmanager::managed::{self, Writer};
use super::kind::ApiKind;
use super::status::ApiError;
use super::storage::{Storage, StoreError, Versioned};

mod apply;
mod create;
mod delete;
mod jsonpatch;
mod list;
mod meta;
mod scale;
mod update;

pub use delete::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER, gc_finalizers};
pub use list::{Event, ListOptions, WatchStream};
pub use scale::scale_of;

/// Which part of the object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The object (`/databases/x`): everything but `status` when there is a status subresource.
    Main,
    /// `/databases/x/status`: `status` only.
    Status,
}

/// How a PATCH body is to be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386, `application/merge-patch+json`.
    Merge,
    /// RFC 6902, `application/json-patch+json`.
    Json,
    /// Strategic merge patch, `application/strategic-merge-patch+json` ([`super::strategic`]),
    /// for kinds with merge facts ([`ApiKind::merge_facts`]: built-in kinds) only.
    Strategic,
    /// Server-side apply, `application/apply-patch+yaml` ([`Registry::apply`]); `force` takes
    /// the fields that conflict from their managers.
    Apply {
        /// The `force` option.
        force: bool,
    },
}

/// How a write keeps `metadata.managedFields` ([`managed`]).
#[derive(Debug, Clone, Copy)]
enum Track<'a> {
    /// An update by this field manager; `scale` for a write through `/scale`.
    Update { manager: &'a str, scale: bool },
    /// An apply: the change already set the entries on the object.
    Applied,
}

/// The registry over a store `S`.
pub struct Registry<S> {
    store: S,
    clock: super::clock::Clock,
}

/// The current time as the API server writes timestamps: RFC 3339, UTC, whole seconds.
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn storage_error(kind: &ApiKind, name: &str, e: StoreError) -> ApiError {
    match e {
        StoreError::NotFound(_) => ApiError::not_found(kind, name),
        StoreError::AlreadyExists(_) => ApiError::already_exists(kind, name),
        StoreError::Conflict { .. } => ApiError::conflict(kind, name, ApiError::MODIFIED),
        StoreError::Expired { requested, oldest } => {
            ApiError::expired(format!("too old resource version: {requested} ({oldest})"))
        }
        StoreError::Future { requested, current } => {
            ApiError::too_large_resource_version(requested, current)
        }
        StoreError::Backend(m) => ApiError::internal(m),
    }
}

fn meta(obj: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    obj.get("metadata")
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj).get(field).and_then(Value::as_str).unwrap_or("")
}

/// The object's labels (non-string values are ignored; validation refuses them on write).
pub fn labels(obj: &Value) -> BTreeMap<String, String> {
    meta(obj)
        .get("labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Everything outside `metadata`: what `generation` tracks.
fn non_metadata(obj: &Value) -> Map<String, Value> {
    obj.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != "metadata")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The object as served: the stored value with `resourceVersion` set to its revision.
fn served(mut value: Value, revision: u64) -> Value {
    meta_mut(&mut value).insert(
        "resourceVersion".into(),
        Value::String(revision.to_string()),
    );
    value
}

/// An object read from storage, as served: normalized by the kind's schema (pruned and
/// defaulted, [`ApiKind::normalize`], as the apiextensions server decodes what it reads from
/// etcd, so an object stored before a default was added reads with it), then [`served`].
pub(crate) fn read(kind: &ApiKind, mut value: Value, revision: u64) -> Value {
    kind.normalize(&mut value);
    served(value, revision)
}

/// The object as stored: `resourceVersion` is the store's, never part of the value.
fn stored(mut value: Value) -> Value {
    meta_mut(&mut value).remove("resourceVersion");
    value
}

/// How a write is carried out: for real (the default), or as a dry run.
///
/// `dry_run` is `dryRun=All`: every step of the write runs as for a real one (defaulting,
/// pruning, the schema and metadata checks, admission, name generation, `managedFields`, the
/// resourceVersion and precondition checks, apply conflicts, the name-taken check) and the
/// answer is the object as it would be stored, but storage is not written and no watcher sees
/// a change, as k8s.io/apiserver's `DryRunnableStorage` carries out a dry run. A dry-run
/// create answers the object without a resourceVersion (nothing was stored); a dry-run
/// update, patch, apply or delete answers it at the stored object's resourceVersion.
/// Admission is told ([`super::admission`]), so that the test cluster's webhooks get
/// `dryRun: true`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Write {
    /// Run every step, store nothing.
    pub dry_run: bool,
}

impl Write {
    /// A dry run (`dryRun=All`).
    pub const DRY_RUN: Write = Write { dry_run: true };
}

/// A resourceVersion a write names (`asked`, empty when none) checked against the object's
/// `revision`. Out: whether the write named one. Errors: 400 when it does not parse, 409
/// Conflict when it is stale, as k8s.io/apiserver answers a stale write.
fn precondition(kind: &ApiKind, name: &str, asked: &str, revision: u64) -> Result<bool, ApiError> {
    if asked.is_empty() {
        return Ok(false);
    }
    if parse_rv(asked)? != revision {
        return Err(ApiError::conflict(kind, name, ApiError::MODIFIED));
    }
    Ok(true)
}

/// `obj` without `resourceVersion` and `managedFields`: what a write changes besides them.
fn without_managed_fields(obj: &Value) -> Value {
    let mut out = stored(obj.clone());
    meta_mut(&mut out).remove("managedFields");
    out
}

/// How long a write without a resourceVersion keeps retrying on conflicts with concurrent
/// writes when nothing cuts it short before: the server's default request timeout (60 s),
/// which bounds the retries of a request served over HTTP first.
pub const RETRY_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// How one try of a read-modify-write ended: written (the answer), or in a conflict with a
/// concurrent write that the write may retry.
enum Attempt<T> {
    Done(T),
    Conflict(ApiError),
}

/// Runs `attempt` until it ends in something else than [`Attempt::Conflict`], as
/// k8s.io/apiserver's `GuaranteedUpdate` retries a write that named no resourceVersion: with
/// no count, bounded by the request's deadline (the server's timeout drops the request between
/// two tries) and without one by [`RETRY_BUDGET`], after which the conflict is the answer.
/// Errors: `attempt`'s, which end the retries; the last conflict past the budget.
async fn retry_on_conflict<T, F, Fut>(mut attempt: F) -> Result<T, ApiError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Attempt<T>, ApiError>>,
{
    let started = std::time::Instant::now();
    loop {
        match attempt().await? {
            Attempt::Done(answer) => return Ok(answer),
            Attempt::Conflict(e) if started.elapsed() > RETRY_BUDGET => return Err(e),
            // Lets the other writers (and the request's timeout) run before the next try.
            Attempt::Conflict(_) => tokio::task::yield_now().await,
        }
    }
}

fn parse_rv(rv: &str) -> Result<u64, ApiError> {
    rv.parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))
}

impl<S: Storage> Registry<S> {
    /// A registry over `store`.
    pub fn new(store: S) -> Self {
        Self::with_clock(store, super::clock::Clock::system())
    }

    /// A registry over `store` that stamps `creationTimestamp` and `deletionTimestamp` from
    /// `clock` (the test cluster's manual clock).
    pub fn with_clock(store: S, clock: super::clock::Clock) -> Self {
        Self { store, clock }
    }

    /// The clock the registry stamps objects with.
    pub fn clock(&self) -> &super::clock::Clock {
        &self.clock
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// How many objects of `kind` the store holds now (every namespace), as
    /// k8s.io/apiserver's storage counts them for `apiserver_storage_objects`: one page of one
    /// item, whose remaining count the store gives without reading the rest. Errors: the
    /// store's.
    pub async fn count(&self, kind: &ApiKind) -> Result<u64, StoreError> {
        let page = self
            .store
            .list(
                &Self::prefix(kind, None),
                super::storage::ListRange {
                    start: None,
                    revision: None,
                    limit: 1,
                },
            )
            .await?;
        Ok(page.items.len() as u64 + page.remaining)
    }

    fn prefix(kind: &ApiKind, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if kind.namespaced => format!("/{}/{}/{ns}/", kind.group, kind.plural),
            _ => format!("/{}/{}/", kind.group, kind.plural),
        }
    }

    fn key(kind: &ApiKind, namespace: Option<&str>, name: &str) -> String {
        format!("{}{name}", Self::prefix(kind, namespace))
    }

    /// The object `name` (in `namespace` for a namespaced kind). Errors: 404.
    pub async fn get(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let key = Self::key(kind, namespace, name);
        match self.store.get(&key).await {
            Ok(Some(v)) => Ok(read(kind, v.value, v.revision)),
            Ok(None) => Err(ApiError::not_found(kind, name)),
            Err(e) => Err(storage_error(kind, name, e)),
        }
    }

    /// Checks the body's `apiVersion` and `kind` against the endpoint's.
    fn check_type(kind: &ApiKind, obj: &Value) -> Result<(), ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let k = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        if k.is_empty() {
            return Err(ApiError::bad_request(
                "Object 'Kind' is missing in the request body",
            ));
        }
        if k != kind.kind || api_version != kind.api_version() {
            return Err(ApiError::bad_request(format!(
                "the body is a {api_version}, Kind={k}; this endpoint takes {}, Kind={}",
                kind.api_version(),
                kind.kind
            )));
        }
        Ok(())
    }

    /// Checks (and fills) `metadata.namespace` against the URL's.
    fn check_namespace(
        kind: &ApiKind,
        namespace: Option<&str>,
        obj: &mut Value,
    ) -> Result<(), ApiError> {
        let m = meta_mut(obj);
        let given = m.get("namespace").and_then(Value::as_str).unwrap_or("");
        match (kind.namespaced, namespace) {
            (true, Some(ns)) => {
                if !given.is_empty() && given != ns {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                m.insert("namespace".into(), Value::String(ns.to_string()));
            }
            (true, None) => {
                return Err(ApiError::bad_request(
                    "a namespaced object needs a namespace in the path",
                ));
            }
            (false, _) => {
                m.remove("namespace");
            }
        }
        Ok(())
    }

    /// The kind's defaulting ([`super::admission`]) on `obj`, the mutating step of admission,
    /// then pruning and schema defaulting of what it set ([`ApiKind::normalize`], as
    /// kube-apiserver decodes a mutating webhook's result). Errors: 422 Invalid with the hook's causes.
    async fn admit_default(kind: &ApiKind, obj: &mut Value, w: Write) -> Result<(), ApiError> {
        let Some(hook) = &kind.admission else {
            return Ok(());
        };
        hook.0
            .default(obj, w.dry_run)
            .await
            .map_err(|e| e.into_api_error(kind, meta_str(obj, "name")))?;
        kind.normalize(obj);
        Ok(())
    }

    /// The kind's validation ([`super::admission`]) of `op` on object `name`, the validating
    /// step of admission, run after the schema and metadata checks and before storage.
    /// Errors: 422 Invalid with the hook's causes.
    async fn admit(kind: &ApiKind, name: &str, op: Op<'_>, w: Write) -> Result<(), ApiError> {
        match &kind.admission {
            Some(hook) => hook
                .0
                .validate(op, w.dry_run)
                .await
                .map_err(|e| e.into_api_error(kind, name)),
            None => Ok(()),
        }
    }

    /// The metadata rules of `ValidateObjectMeta` ([`meta::validate`]), then the kind's
    /// schema ([`ApiKind::validate`]) and its `x-kubernetes-validations` rules
    /// ([`super::cel`]; `old`, the stored object on an update, for transition rules).
    /// Errors: 422 Invalid with one cause per failure.
    fn validate_meta(kind: &ApiKind, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
        let name = meta_str(obj, "name");
        let mut causes = kind.validate(obj);
        causes.extend(meta::validate(meta(obj)));
        causes.extend(super::cel::after_schema(
            kind.schema.as_ref(),
            obj,
            old,
            &causes,
        ));
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(kind, name, &causes))
        }
    }

    /// The new stored object for a write of `new` over `old` to `part`, by the custom-resource
    /// strategy's rules. Errors: 422 for finalizers added during deletion.
    fn prepare_update(
        kind: &ApiKind,
        part: Part,
        old: &Value,
        mut new: Value,
    ) -> Result<Value, ApiError> {
        let name = meta_str(old, "name").to_string();
        kind.normalize(&mut new);
        if part == Part::Status {
            let status = new.get("status").cloned();
            new = old.clone();
            match status {
                Some(s) => new["status"] = s,
                None => {
                    if let Some(o) = new.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
            return Ok(new);
        }
        if kind.status_subresource
            && let Some(o) = new.as_object_mut()
        {
            match old.get("status") {
                Some(s) => {
                    o.insert("status".into(), s.clone());
                }
                None => {
                    o.remove("status");
                }
            }
        }
        let old_meta = meta(old).clone();
        let refused = meta::validate_update(&old_meta, meta(&new));
        if !refused.is_empty() {
            return Err(ApiError::invalid(kind, &name, &refused));
        }
        {
            let m = meta_mut(&mut new);
            for field in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "name",
                "namespace",
            ] {
                match old_meta.get(field) {
                    Some(v) => m.insert(field.into(), v.clone()),
                    None => m.remove(field),
                };
            }
            m.remove("generateName")
                .into_iter()
                .chain(old_meta.get("generateName").cloned())
                .last()
                .map(|g| m.insert("generateName".into(), g));
        }
        if non_metadata(&new) != non_metadata(old) {
            let generation = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(generation + 1));
        }
        if old_meta.contains_key("deletionTimestamp") {
            let before: std::collections::HashSet<String> = finalizers(old).into_iter().collect();
            let mut added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                added.sort();
                added.dedup();
                let list: Vec<String> = added.iter().map(|f| super::quote::go_quote(f)).collect();
                return Err(ApiError::invalid(
                    kind,
                    &name,
                    &[(
                        "metadata.finalizers".into(),
                        format!(
                            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                            list.join(", ")
                        ),
                    )],
                ));
            }
        }
        Ok(new)
    }

    /// Writes `new` (already prepared) over the stored `current` after the metadata checks
    /// and, for the object itself (not `/status`), the kind's update validation; deletes the
    /// object when it is being deleted and has no finalizers left. Out: the object as served.
    async fn commit(
        &self,
        kind: &ApiKind,
        part: Part,
        key: &str,
        current: &Versioned,
        new: Value,
        w: Write,
    ) -> Result<Value, ApiError> {
        let name = meta_str(&current.value, "name").to_string();
        let name = name.as_str();
        Self::validate_meta(kind, &new, Some(&current.value))?;
        if part == Part::Main {
            let old = read(kind, current.value.clone(), current.revision);
            Self::admit(
                kind,
                name,
                Op::Update {
                    old: &old,
                    new: &new,
                },
                w,
            )
            .await?;
        }
        let new = stored(new);
        if new == current.value || w.dry_run {
            // A dry run answers the object as the write would leave it (also when the write
            // would remove it: its last finalizer gone during deletion), at the stored
            // revision, as `DryRunnableStorage.GuaranteedUpdate` answers.
            return Ok(served(new, current.revision));
        }
        let revision = self
            .store
            .update(key, new.clone(), current.revision)
            .await
            .map_err(|e| storage_error(kind, name, e))?;
        if meta(&new).contains_key("deletionTimestamp") && finalizers(&new).is_empty() {
            match self.store.delete(key, Some(revision)).await {
                Ok(gone) => return Ok(served(new, gone.revision)),
                Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(storage_error(kind, name, e)),
            }
        }
        Ok(served(new, revision))
    }

    /// Who writes `part` of `kind` as `manager` now (`scale`: through `/scale`).
    fn writer<'a>(&self, kind: &ApiKind, part: Part, manager: &'a str, scale: bool) -> Writer<'a> {
        Writer {
            manager,
            api_version: kind.api_version(),
            subresource: match (part, scale) {
                (Part::Status, _) => "status",
                (Part::Main, true) => "scale",
                (Part::Main, false) => "",
            },
            reset: managed::reset_fields(kind.status_subresource, part == Part::Status),
            now: self.clock.stamp(),
        }
    }

    /// Sets `new`'s `managedFields` for a write over `old` (the stored object, `Value::Null`
    /// for a create), as k8s.io/apiserver's field manager does: for an update, from the
    /// entries `new` carries (the live ones when it carries none, or when it is written
    /// through `/status`; none when it sends `[]`), with `manager`'s `Update` entry
    /// ([`managed::record_update`]); for an apply, the entries it set, with the old times kept
    /// when nothing else changed. Entries that do not decode are dropped, as `UpdateNoErrors`
    /// drops them rather than fail the write.
    fn track(&self, kind: &ApiKind, part: Part, old: &Value, new: &mut Value, track: Track<'_>) {
        let live = managed::decode(old).unwrap_or_default();
        let entries = match track {
            Track::Applied => {
                let Ok(entries) = managed::decode(new) else {
                    return managed::encode(new, Vec::new());
                };
                if without_managed_fields(old) == without_managed_fields(new) {
                    managed::keep_times(&live, entries)
                } else {
                    entries
                }
            }
            Track::Update { manager, scale } => {
                let sent = managed::decode(new).ok().filter(|e| !e.is_empty());
                let base = if part == Part::Status {
                    live
                } else if managed::is_reset(new) {
                    Vec::new()
                } else {
                    sent.unwrap_or(live)
                };
                let schema = kind.merge_schema();
                let writer = self.writer(kind, part, manager, scale);
                managed::record_update(base, old, new, &schema, &writer).unwrap_or_default()
            }
        };
        managed::encode(new, entries);
    }
}

#[cfg(test)]
pub(crate) mod tests;
