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
//! Lists and watches are in `registry/list.rs`, the scale subresource in `registry/scale.rs`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::admission::Op;
use super::fieldmanager::managed::{self, ApplyError, Writer};
use super::kind::ApiKind;
use super::names;
use super::status::ApiError;
use super::storage::{Storage, StoreError, Versioned};

mod list;
mod meta;
mod scale;

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

/// The garbage collector's finalizers that mark an object deleted with
/// `propagationPolicy: Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// ... and with `propagationPolicy: Foreground`.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// The finalizers an object deleted with DeleteOptions `options` gets, from its `current`
/// ones, as k8s.io/apiserver's registry computes them for the garbage collector
/// (`deletionFinalizersForGarbageCollection`): the `orphan` and `foregroundDeletion`
/// finalizers are taken off, then `orphan` is put back when `orphanDependents` is true, the
/// `propagationPolicy` is `Orphan`, or neither is given and the object had it;
/// `foregroundDeletion` when `orphanDependents` is not given and the policy is `Foreground`,
/// or no policy is given and the object had it. `Background`, the custom resources' default,
/// puts back neither. The cluster's garbage collector (kube-controller-manager, which
/// collects an aggregated API's objects too) orphans or deletes the dependents and then
/// removes the finalizer, and the object goes with its last finalizer.
pub fn gc_finalizers(current: &[String], options: &Value) -> Vec<String> {
    let orphan_dependents = options.get("orphanDependents").and_then(Value::as_bool);
    let policy = options.get("propagationPolicy").and_then(Value::as_str);
    let had = |f: &str| {
        current
            .iter()
            .find(|x| *x == ORPHAN_FINALIZER || *x == FOREGROUND_FINALIZER)
            .is_some_and(|x| x == f)
    };
    let orphan = match (orphan_dependents, policy) {
        (Some(o), _) => o,
        (None, Some(p)) => p == "Orphan",
        (None, None) => had(ORPHAN_FINALIZER),
    };
    let foreground = match (orphan_dependents, policy) {
        (Some(_), _) => false,
        (None, Some(p)) => p == "Foreground",
        (None, None) => had(FOREGROUND_FINALIZER),
    };
    let mut out: Vec<String> = current
        .iter()
        .filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER)
        .cloned()
        .collect();
    if orphan {
        out.push(ORPHAN_FINALIZER.to_string());
    }
    if foreground {
        out.push(FOREGROUND_FINALIZER.to_string());
    }
    // Unchanged as a set: the object keeps its own order.
    let same = out.len() == current.len() && out.iter().all(|f| current.contains(f));
    if same { current.to_vec() } else { out }
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

/// The answer to a failed apply: 409 with a `FieldManagerConflict` cause per conflict; for a
/// configuration that does not fit the schema (a list-map item without its key, a duplicate
/// item), 500 with no reason and the message `failed to create typed patch object
/// (ns/name; group/version, Kind=Kind): <why>`, as kube-apiserver answers the plain error its
/// field manager returns (`ErrorToAPIStatus`).
fn apply_error(kind: &ApiKind, namespace: Option<&str>, name: &str, e: ApplyError) -> ApiError {
    match e {
        ApplyError::Conflicts(conflicts) => ApiError::apply_conflict(&conflicts),
        ApplyError::Invalid(why) => ApiError::unknown(format!(
            "failed to create typed patch object ({}/{name}; {}, Kind={}): {why}",
            namespace.unwrap_or(""),
            kind.api_version(),
            kind.kind
        )),
    }
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

/// The most operations a JSON patch may hold, as k8s.io/apiserver's `maxJSONPatchOperations`.
pub(crate) const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes the `copy` operations of one JSON patch may add, counted as the JSON
/// encoding of each copied value: kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB), which it
/// sets as evanphx/json-patch's `AccumulatedCopySizeLimit`.
pub(crate) const JSON_PATCH_MAX_COPY_BYTES: u64 = 3 * 1024 * 1024;

/// Applies a JSON patch (RFC 6902) as kube-apiserver's (evanphx/json-patch) does: one
/// difference from the RFC, which clients rely on, is that a `test` of the value `null` at a
/// path that does not exist succeeds (kube-runtime's `finalizer` tests
/// `/metadata/finalizers` for `null` before adding the first finalizer). The limits are
/// kube-apiserver's: at most [`MAX_JSON_PATCH_OPERATIONS`] operations, checked before any
/// applies, and the values `copy` operations copy at most [`JSON_PATCH_MAX_COPY_BYTES`] in
/// all, checked before each copy (so a patch that doubles the object per operation stops
/// before it takes the memory). Errors: 413 RequestEntityTooLarge for too many operations
/// ("The allowed maximum operations in a JSON patch is 10000, got N"); 422 Invalid for the
/// first operation that fails, as json-patch words it, or for the copy limit ("Unable to
/// complete the copy, the accumulated size increase of copy is N, exceeding the limit M", as
/// json-patch's `AccumulatedCopySizeError`).
pub(crate) fn apply_json_patch(obj: &mut Value, patch: &json_patch::Patch) -> Result<(), ApiError> {
    if patch.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::entity_too_large(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            patch.0.len()
        )));
    }
    let mut copied: u64 = 0;
    for (index, op) in patch.0.iter().enumerate() {
        match op {
            json_patch::PatchOperation::Test(t)
                if t.value.is_null() && obj.pointer(t.path.as_str()).is_none() =>
            {
                continue;
            }
            json_patch::PatchOperation::Copy(c) => {
                if let Some(value) = obj.pointer(c.from.as_str()) {
                    copied = copied.saturating_add(json_size(value));
                    if copied > JSON_PATCH_MAX_COPY_BYTES {
                        return Err(ApiError::patch_rejected(format!(
                            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}"
                        )));
                    }
                }
            }
            _ => {}
        }
        json_patch::patch(obj, std::slice::from_ref(op)).map_err(|mut e| {
            // Applied one at a time, each operation is json-patch's operation 0.
            e.operation = index;
            ApiError::patch_rejected(e)
        })?;
    }
    Ok(())
}

/// The length of `value`'s compact JSON encoding, counted without building it.
fn json_size(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
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

    /// Creates `obj` in `namespace`, recording `manager`'s `Update` entry in `managedFields`
    /// (the body's entries kept under it unless it sends `[]`). Out: the stored object.
    /// Errors: 400 on a wrong type or namespace or a set resourceVersion, 422 on bad metadata,
    /// 409 when the name is taken.
    pub async fn create(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        self.create_with(kind, namespace, obj, manager, Write::default())
            .await
    }

    /// [`Self::create`], carried out as `w` says (a dry run answers the object as it would be
    /// created, without a resourceVersion, and stores nothing). Errors: as [`Self::create`].
    pub async fn create_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
        w: Write,
    ) -> Result<Value, ApiError> {
        let track = Track::Update {
            manager,
            scale: false,
        };
        self.create_tracked(kind, namespace, obj, track, w).await
    }

    async fn create_tracked(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        mut obj: Value,
        track: Track<'_>,
        w: Write,
    ) -> Result<Value, ApiError> {
        Self::check_type(kind, &obj)?;
        Self::check_namespace(kind, namespace, &mut obj)?;
        if !meta_str(&obj, "resourceVersion").is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let generate = meta_str(&obj, "generateName").to_string();
        let wanted = meta_str(&obj, "name").to_string();
        if wanted.is_empty() && generate.is_empty() {
            return Err(ApiError::invalid(
                kind,
                "",
                &[(
                    "metadata.name".into(),
                    "Required value: name or generateName is required".into(),
                )],
            ));
        }
        kind.normalize(&mut obj);
        Self::admit_default(kind, &mut obj, w).await?;
        if kind.status_subresource
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        {
            let m = meta_mut(&mut obj);
            m.insert(
                "uid".into(),
                Value::String(uuid::Uuid::new_v4().to_string()),
            );
            m.insert(
                "creationTimestamp".into(),
                Value::String(self.clock.stamp()),
            );
            m.insert("generation".into(), json!(1));
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
        }
        self.track(kind, Part::Main, &Value::Null, &mut obj, track);
        // A generated name that happens to be taken is drawn again, a few times.
        for _ in 0..4 {
            let name = if wanted.is_empty() {
                names::generate(&generate)
            } else {
                wanted.clone()
            };
            meta_mut(&mut obj).insert("name".into(), Value::String(name.clone()));
            Self::validate_meta(kind, &obj, None)?;
            Self::admit(kind, &name, Op::Create(&obj), w).await?;
            let key = Self::key(kind, namespace, &name);
            if w.dry_run {
                // As `DryRunnableStorage.Create`: the name-taken check, nothing stored.
                match self.store.get(&key).await {
                    Ok(None) => return Ok(stored(obj)),
                    Ok(Some(_)) if wanted.is_empty() => continue,
                    Ok(Some(_)) => return Err(ApiError::already_exists(kind, &name)),
                    Err(e) => return Err(storage_error(kind, &name, e)),
                }
            }
            match self.store.create(&key, stored(obj.clone())).await {
                Ok(revision) => return Ok(served(obj, revision)),
                Err(StoreError::AlreadyExists(_)) if wanted.is_empty() => continue,
                Err(e) => return Err(storage_error(kind, &name, e)),
            }
        }
        Err(ApiError::already_exists(kind, meta_str(&obj, "name")))
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

    /// Replaces object `name` (PUT) or its status, recording `manager`'s `Update` entry in
    /// `managedFields`. Errors: 400 on a wrong type, name or namespace; 404; 409 on a stale
    /// resourceVersion or uid; 422 without a resourceVersion.
    pub async fn update(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        self.update_with(kind, namespace, name, part, obj, manager, Write::default())
            .await
    }

    /// [`Self::update`], carried out as `w` says (a dry run answers the object as it would be
    /// stored, at the stored resourceVersion). Errors: as [`Self::update`].
    #[allow(clippy::too_many_arguments)]
    pub async fn update_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        mut obj: Value,
        manager: &str,
        w: Write,
    ) -> Result<Value, ApiError> {
        Self::check_type(kind, &obj)?;
        Self::check_namespace(kind, namespace, &mut obj)?;
        let body_name = meta_str(&obj, "name");
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let rv = meta_str(&obj, "resourceVersion").to_string();
        if rv.is_empty() {
            return Err(ApiError::invalid(
                kind,
                name,
                &[(
                    "metadata.resourceVersion".into(),
                    "Invalid value: 0x0: must be specified for an update".into(),
                )],
            ));
        }
        let rv = parse_rv(&rv)?;
        let key = Self::key(kind, namespace, name);
        let current = self
            .store
            .get(&key)
            .await
            .map_err(|e| storage_error(kind, name, e))?
            .ok_or_else(|| ApiError::not_found(kind, name))?;
        if current.revision != rv {
            return Err(ApiError::conflict(kind, name, ApiError::MODIFIED));
        }
        let uid = meta_str(&obj, "uid");
        if !uid.is_empty() && uid != meta_str(&current.value, "uid") {
            return Err(ApiError::conflict(
                kind,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta_str(&current.value, "uid")
                ),
            ));
        }
        if part == Part::Main {
            Self::admit_default(kind, &mut obj, w).await?;
        }
        let mut new = Self::prepare_update(kind, part, &current.value, obj)?;
        let track = Track::Update {
            manager,
            scale: false,
        };
        self.track(kind, part, &current.value, &mut new, track);
        self.commit(kind, part, &key, &current, new, w).await
    }

    /// Applies a merge or JSON patch to object `name` or its status, retrying on a concurrent
    /// write unless the patch itself names a resourceVersion, and records `manager`'s `Update`
    /// entry in `managedFields`; an apply patch is [`Self::apply`]'s. Errors: 400 for a patch
    /// that does not parse or apply, 404, 409, 422.
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        patch_type: PatchType,
        patch: &[u8],
        manager: &str,
    ) -> Result<Value, ApiError> {
        let w = Write::default();
        self.patch_with(kind, namespace, name, part, patch_type, patch, manager, w)
            .await
    }

    /// [`Self::patch`], carried out as `w` says (a dry run answers the patched object as it
    /// would be stored, at the stored resourceVersion). Errors: as [`Self::patch`].
    #[allow(clippy::too_many_arguments)]
    pub async fn patch_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        patch_type: PatchType,
        patch: &[u8],
        manager: &str,
        w: Write,
    ) -> Result<Value, ApiError> {
        if let PatchType::Apply { force } = patch_type {
            return self
                .apply_with(kind, namespace, name, part, patch, manager, force, w)
                .await
                .map(|(obj, _)| obj);
        }
        let patch: Value = serde_json::from_slice(patch)
            .map_err(|e| ApiError::bad_request(format!("the patch is not JSON: {e}")))?;
        let json_patch = match patch_type {
            PatchType::Json => Some(
                serde_json::from_value::<json_patch::Patch>(patch.clone())
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?,
            ),
            PatchType::Merge | PatchType::Strategic | PatchType::Apply { .. } => None,
        };
        let strategic = match (patch_type, &kind.merge_facts) {
            (PatchType::Strategic, Some(facts)) => Some(facts),
            (PatchType::Strategic, None) => {
                return Err(ApiError::unsupported_media_type(
                    super::strategic::NO_STRATEGIC_MERGE_PATCH,
                ));
            }
            _ => None,
        };
        let track = Track::Update {
            manager,
            scale: false,
        };
        self.update_retrying(
            kind,
            namespace,
            name,
            part,
            track,
            w,
            |current, revision| {
                let mut obj = current.clone();
                match (&json_patch, strategic) {
                    (Some(p), _) => apply_json_patch(&mut obj, p)?,
                    (None, Some(facts)) => {
                        obj = super::strategic::patch(&obj, &patch, facts).map_err(|e| {
                            ApiError::bad_request(format!(
                                "the strategic merge patch does not apply: {e}"
                            ))
                        })?;
                    }
                    (None, None) => json_patch::merge(&mut obj, &patch),
                }
                let preconditioned =
                    precondition(kind, name, meta_str(&obj, "resourceVersion"), revision)?;
                Self::check_type(kind, &obj)?;
                if meta_str(&obj, "name") != name {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({}) does not match the name on the URL ({name})",
                        meta_str(&obj, "name")
                    )));
                }
                // As the patch handler's `checkName`: a patched namespace must be the URL's.
                let patched_ns = meta_str(&obj, "namespace");
                if let Some(ns) = namespace
                    && !patched_ns.is_empty()
                    && patched_ns != ns
                {
                    return Err(ApiError::bad_request(format!(
                        "the namespace of the object ({patched_ns}) does not match the namespace on the URL ({ns})"
                    )));
                }
                Ok((obj, preconditioned))
            },
        )
        .await
    }

    /// The read-modify-write of object `name` (or its status), as k8s.io/apiserver's
    /// `GuaranteedUpdate` runs it: `change` turns the object as served now (and its revision)
    /// into the new one, and says whether the write named a resourceVersion; then the kind's
    /// defaulting (for the object itself), the update rules ([`Self::prepare_update`]),
    /// `managedFields` as `track` says ([`Self::track`]) and the commit. A conflict with a
    /// concurrent write reads again and retries until the write commits, unless it named a
    /// resourceVersion, as `GuaranteedUpdate` retries with no count: the bound is the
    /// request's deadline (the server's timeout drops the request between two tries), and
    /// without one [`RETRY_BUDGET`]. Out: the object as served. Errors: 404, `change`'s,
    /// 409 (a stale resourceVersion, or still contended after the budget), 422.
    #[allow(clippy::too_many_arguments)]
    async fn update_retrying(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        track: Track<'_>,
        w: Write,
        change: impl Fn(&Value, u64) -> Result<(Value, bool), ApiError>,
    ) -> Result<Value, ApiError> {
        let key = Self::key(kind, namespace, name);
        let (key, change) = (&key, &change);
        retry_on_conflict(|| async move {
            let current = self
                .store
                .get(key)
                .await
                .map_err(|e| storage_error(kind, name, e))?
                .ok_or_else(|| ApiError::not_found(kind, name))?;
            let (mut obj, preconditioned) = change(
                &read(kind, current.value.clone(), current.revision),
                current.revision,
            )?;
            if part == Part::Main {
                Self::admit_default(kind, &mut obj, w).await?;
            }
            let applied = obj.pointer("/metadata/managedFields").cloned();
            let mut new = Self::prepare_update(kind, part, &current.value, obj)?;
            if let Some(entries) = applied.filter(|_| matches!(track, Track::Applied)) {
                meta_mut(&mut new).insert("managedFields".into(), entries);
            }
            self.track(kind, part, &current.value, &mut new, track);
            match self.commit(kind, part, key, &current, new, w).await {
                Err(e) if e.reason == "Conflict" && !preconditioned => Ok(Attempt::Conflict(e)),
                done => done.map(Attempt::Done),
            }
        })
        .await
    }

    /// Server-side apply of `body` (the applied configuration, JSON) by `manager` to object
    /// `name` or its status, as k8s.io/apiserver's apply patcher runs it over
    /// structured-merge-diff ([`managed::apply`]): merged over the live object by the kind's
    /// schema, fields `manager` applied before and no longer applies removed unless another
    /// manager owns them, `manager`'s `Apply` entry set to the applied fields. A
    /// `resourceVersion` in the body is a precondition. A missing object is created (not
    /// through `/status`). Retried on a concurrent write unless preconditioned. Out: the object
    /// as served, and whether the apply created it. Errors: 400 for a body that is not an
    /// object of this kind, carries `managedFields`, names another object or does not fit the
    /// schema (a list-map item without its key); 404 (`/status` of a missing object); 409
    /// Conflict with a `FieldManagerConflict` cause per field another manager owns and the
    /// apply changes (unless `force`), or for a stale resourceVersion; 422 as an update.
    #[allow(clippy::too_many_arguments)]
    pub async fn apply(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        body: &[u8],
        manager: &str,
        force: bool,
    ) -> Result<(Value, bool), ApiError> {
        let w = Write::default();
        self.apply_with(kind, namespace, name, part, body, manager, force, w)
            .await
    }

    /// [`Self::apply`], carried out as `w` says (a dry run answers the object as the apply
    /// would leave or create it, and stores nothing). Errors: as [`Self::apply`].
    #[allow(clippy::too_many_arguments)]
    pub async fn apply_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        body: &[u8],
        manager: &str,
        force: bool,
        w: Write,
    ) -> Result<(Value, bool), ApiError> {
        let mut config: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the apply patch is not JSON: {e}")))?;
        Self::check_type(kind, &config)?;
        if meta(&config)
            .get("managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request(
                "metadata.managedFields must be nil in an apply patch",
            ));
        }
        match meta_str(&config, "name") {
            "" => {
                meta_mut(&mut config).insert("name".into(), Value::String(name.to_owned()));
            }
            n if n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        Self::check_namespace(kind, namespace, &mut config)?;
        kind.prune(&mut config);
        let schema = kind.merge_schema();
        let writer = self.writer(kind, part, manager, false);
        for _ in 0..8 {
            let applied = self
                .update_retrying(
                    kind,
                    namespace,
                    name,
                    part,
                    Track::Applied,
                    w,
                    |current, revision| {
                        let preconditioned = precondition(
                            kind,
                            name,
                            meta_str(&config, "resourceVersion"),
                            revision,
                        )?;
                        let entries = managed::decode(current).unwrap_or_default();
                        let (mut obj, entries) = managed::apply(
                            Some(current),
                            entries,
                            &config,
                            &schema,
                            &writer,
                            force,
                        )
                        .map_err(|e| apply_error(kind, namespace, name, e))?;
                        managed::encode(&mut obj, entries);
                        Ok((obj, preconditioned))
                    },
                )
                .await;
            match applied {
                Err(e) if e.reason == "NotFound" && part == Part::Main => {}
                done => return done.map(|obj| (obj, false)),
            }
            let (mut obj, entries) =
                managed::apply(None, Vec::new(), &config, &schema, &writer, force)
                    .map_err(|e| apply_error(kind, namespace, name, e))?;
            managed::encode(&mut obj, entries);
            match self
                .create_tracked(kind, namespace, obj, Track::Applied, w)
                .await
            {
                Err(e) if e.reason == "AlreadyExists" => continue,
                done => return done.map(|obj| (obj, true)),
            }
        }
        Err(ApiError::conflict(kind, name, ApiError::MODIFIED))
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

    /// Deletes object `name`, or marks it deleting while it has finalizers. `options` is the
    /// request's DeleteOptions (the body's, with the query's `propagationPolicy` and
    /// `orphanDependents`): its `preconditions` are checked, and its propagation sets the
    /// garbage collector's finalizers first ([`gc_finalizers`]: `Orphan` and `Foreground`
    /// leave the object marked deleting until the cluster's garbage collector is done). Out:
    /// the marked object, or a Success Status naming the deleted one. Errors: 404; 409 on a
    /// failed precondition.
    pub async fn delete(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        self.delete_with(kind, namespace, name, options, Write::default())
            .await
    }

    /// [`Self::delete`], carried out as `w` says (a dry run answers as the delete would, the
    /// marked object at the stored resourceVersion or the Success Status, and removes and
    /// marks nothing). Errors: as [`Self::delete`].
    pub async fn delete_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
        w: Write,
    ) -> Result<Value, ApiError> {
        let key = Self::key(kind, namespace, name);
        let key = &key;
        retry_on_conflict(|| async move {
            let current = self
                .store
                .get(key)
                .await
                .map_err(|e| storage_error(kind, name, e))?
                .ok_or_else(|| ApiError::not_found(kind, name))?;
            let pre = options.get("preconditions");
            let want_uid = pre.and_then(|p| p.get("uid")).and_then(Value::as_str);
            let uid = meta_str(&current.value, "uid").to_string();
            if let Some(u) = want_uid
                && u != uid
            {
                return Err(ApiError::conflict(
                    kind,
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {u}, UID in object meta: {uid}"
                    ),
                ));
            }
            let want_rv = pre
                .and_then(|p| p.get("resourceVersion"))
                .and_then(Value::as_str);
            if let Some(rv) = want_rv
                && parse_rv(rv)? != current.revision
            {
                return Err(ApiError::conflict(
                    kind,
                    name,
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        current.revision
                    ),
                ));
            }
            let served_now = read(kind, current.value.clone(), current.revision);
            Self::admit(kind, name, Op::Delete(&served_now), w).await?;
            let before = finalizers(&current.value);
            let after = gc_finalizers(&before, options);
            if !after.is_empty() {
                let deleting = meta(&current.value).contains_key("deletionTimestamp");
                if deleting && after == before {
                    return Ok(Attempt::Done(read(kind, current.value, current.revision)));
                }
                let mut marked = current.value.clone();
                let generation = meta(&marked).get("generation").and_then(Value::as_i64);
                let m = meta_mut(&mut marked);
                if after != before {
                    m.insert("finalizers".into(), json!(after));
                }
                if !deleting {
                    m.insert(
                        "deletionTimestamp".into(),
                        Value::String(self.clock.stamp()),
                    );
                    m.insert("deletionGracePeriodSeconds".into(), json!(0));
                    if let Some(g) = generation.filter(|g| *g > 0) {
                        m.insert("generation".into(), json!(g + 1));
                    }
                }
                if w.dry_run {
                    return Ok(Attempt::Done(served(marked, current.revision)));
                }
                return match self
                    .store
                    .update(key, marked.clone(), current.revision)
                    .await
                {
                    Ok(revision) => Ok(Attempt::Done(served(marked, revision))),
                    Err(e @ StoreError::Conflict { .. }) if want_rv.is_none() => {
                        Ok(Attempt::Conflict(storage_error(kind, name, e)))
                    }
                    Err(e) => Err(storage_error(kind, name, e)),
                };
            }
            let deleted = if w.dry_run {
                Ok(())
            } else {
                self.store
                    .delete(key, Some(current.revision))
                    .await
                    .map(drop)
            };
            match deleted {
                Ok(()) => Ok(Attempt::Done(json!({
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": {"name": name, "group": kind.group, "kind": kind.plural, "uid": uid},
                }))),
                Err(e @ StoreError::Conflict { .. }) if want_rv.is_none() => {
                    Ok(Attempt::Conflict(storage_error(kind, name, e)))
                }
                Err(e) => Err(storage_error(kind, name, e)),
            }
        })
        .await
    }

    /// Deletes (or marks deleting) every selected object. Out: a `<Kind>List` of them.
    pub async fn delete_collection(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        opts: &ListOptions,
        options: &Value,
    ) -> Result<Value, ApiError> {
        self.delete_collection_with(kind, namespace, opts, options, Write::default())
            .await
    }

    /// [`Self::delete_collection`], carried out as `w` says (a dry run answers the objects as
    /// they would be deleted or marked, and changes none). Errors: as
    /// [`Self::delete_collection`].
    pub async fn delete_collection_with(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        opts: &ListOptions,
        options: &Value,
        w: Write,
    ) -> Result<Value, ApiError> {
        let list = self
            .list(
                kind,
                namespace,
                &ListOptions {
                    limit: 0,
                    continue_token: None,
                    ..opts.clone()
                },
            )
            .await?;
        let mut items = Vec::new();
        for obj in list["items"].as_array().cloned().unwrap_or_default() {
            let name = meta_str(&obj, "name").to_string();
            let ns = meta_str(&obj, "namespace").to_string();
            let ns = (!ns.is_empty()).then_some(ns.as_str());
            match self.delete_with(kind, ns, &name, options, w).await {
                Ok(out) if out["kind"] == "Status" => items.push(obj),
                Ok(marked) => items.push(marked),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(json!({
            "apiVersion": kind.api_version(),
            "kind": kind.list_kind,
            "metadata": {"resourceVersion": list["metadata"]["resourceVersion"]},
            "items": items,
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests;
