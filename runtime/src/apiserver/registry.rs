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

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::admission::Op;
use super::kind::{ApiKind, ScalePaths};
use super::names;
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::storage::{ChangeKind, ListRange, Storage, StoreError, Versioned};

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
}

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

/// The registry over a store `S`.
pub struct Registry<S> {
    store: S,
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

/// The object as stored: `resourceVersion` is the store's, never part of the value.
fn stored(mut value: Value) -> Value {
    meta_mut(&mut value).remove("resourceVersion");
    value
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

fn parse_rv(rv: &str) -> Result<u64, ApiError> {
    rv.parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))
}

impl<S: Storage> Registry<S> {
    /// A registry over `store`.
    pub fn new(store: S) -> Self {
        Self { store }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
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
            Ok(Some(v)) => Ok(served(v.value, v.revision)),
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
    /// then pruning of what it set that the schema does not know (as kube-apiserver prunes a
    /// mutating webhook's result). Errors: 422 Invalid with the hook's causes.
    async fn admit_default(kind: &ApiKind, obj: &mut Value) -> Result<(), ApiError> {
        let Some(hook) = &kind.admission else {
            return Ok(());
        };
        hook.0
            .default(obj)
            .await
            .map_err(|e| ApiError::invalid(kind, meta_str(obj, "name"), &e.causes))?;
        kind.prune(obj);
        Ok(())
    }

    /// The kind's validation ([`super::admission`]) of `op` on object `name`, the validating
    /// step of admission, run after the schema and metadata checks and before storage.
    /// Errors: 422 Invalid with the hook's causes.
    async fn admit(kind: &ApiKind, name: &str, op: Op<'_>) -> Result<(), ApiError> {
        match &kind.admission {
            Some(hook) => hook
                .0
                .validate(op)
                .await
                .map_err(|e| ApiError::invalid(kind, name, &e.causes)),
            None => Ok(()),
        }
    }

    /// The metadata rules of `ValidateObjectMeta` that apply to a custom resource, then the
    /// kind's schema ([`ApiKind::validate`]). Errors: 422 Invalid with one cause per failure.
    fn validate_meta(kind: &ApiKind, obj: &Value) -> Result<(), ApiError> {
        let name = meta_str(obj, "name");
        let mut causes = kind.validate(obj);
        if !names::is_dns_subdomain(name) {
            causes.push((
                "metadata.name".to_string(),
                format!(
                    "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
                ),
            ));
        }
        if let Some(l) = meta(obj).get("labels") {
            match l.as_object() {
                Some(map) => {
                    for (k, v) in map {
                        if !super::selector::valid_label_key(k) {
                            causes.push((
                                "metadata.labels".into(),
                                format!("Invalid value: {k:?}: not a valid label key"),
                            ));
                        }
                        match v.as_str() {
                            Some(v) if super::selector::valid_label_value(v) => {}
                            _ => causes.push((
                                format!("metadata.labels.{k}"),
                                format!("Invalid value: {v}: not a valid label value"),
                            )),
                        }
                    }
                }
                None => causes.push((
                    "metadata.labels".into(),
                    "Invalid value: labels must be a map of strings".into(),
                )),
            }
        }
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(kind, name, &causes))
        }
    }

    /// Creates `obj` in `namespace`. Out: the stored object. Errors: 400 on a wrong type or
    /// namespace or a set resourceVersion, 422 on bad metadata, 409 when the name is taken.
    pub async fn create(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        mut obj: Value,
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
        kind.prune(&mut obj);
        Self::admit_default(kind, &mut obj).await?;
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
            m.insert("creationTimestamp".into(), Value::String(now()));
            m.insert("generation".into(), json!(1));
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
        }
        // A generated name that happens to be taken is drawn again, a few times.
        for _ in 0..4 {
            let name = if wanted.is_empty() {
                names::generate(&generate)
            } else {
                wanted.clone()
            };
            meta_mut(&mut obj).insert("name".into(), Value::String(name.clone()));
            Self::validate_meta(kind, &obj)?;
            Self::admit(kind, &name, Op::Create(&obj)).await?;
            let key = Self::key(kind, namespace, &name);
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
        kind.prune(&mut new);
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
            let before = finalizers(old);
            if finalizers(&new).iter().any(|f| !before.contains(f)) {
                return Err(ApiError::invalid(
                    kind,
                    &name,
                    &[(
                        "metadata.finalizers".into(),
                        "Forbidden: no new finalizers can be added if the object is being deleted"
                            .into(),
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
    ) -> Result<Value, ApiError> {
        let name = meta_str(&current.value, "name").to_string();
        let name = name.as_str();
        Self::validate_meta(kind, &new)?;
        if part == Part::Main {
            let old = served(current.value.clone(), current.revision);
            Self::admit(
                kind,
                name,
                Op::Update {
                    old: &old,
                    new: &new,
                },
            )
            .await?;
        }
        let new = stored(new);
        if new == current.value {
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

    /// Replaces object `name` (PUT) or its status. Errors: 400 on a wrong type, name or
    /// namespace; 404; 409 on a stale resourceVersion or uid; 422 without a resourceVersion.
    pub async fn update(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        mut obj: Value,
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
            Self::admit_default(kind, &mut obj).await?;
        }
        let new = Self::prepare_update(kind, part, &current.value, obj)?;
        self.commit(kind, part, &key, &current, new).await
    }

    /// Applies a merge or JSON patch to object `name` or its status, retrying on a concurrent
    /// write unless the patch itself names a resourceVersion. Errors: 400 for a patch that does
    /// not parse or apply, 404, 409, 422.
    pub async fn patch(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        part: Part,
        patch_type: PatchType,
        patch: &[u8],
    ) -> Result<Value, ApiError> {
        let key = Self::key(kind, namespace, name);
        let patch: Value = serde_json::from_slice(patch)
            .map_err(|e| ApiError::bad_request(format!("the patch is not JSON: {e}")))?;
        let json_patch = match patch_type {
            PatchType::Json => Some(
                serde_json::from_value::<json_patch::Patch>(patch.clone())
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?,
            ),
            PatchType::Merge => None,
        };
        for _ in 0..8 {
            let current = self
                .store
                .get(&key)
                .await
                .map_err(|e| storage_error(kind, name, e))?
                .ok_or_else(|| ApiError::not_found(kind, name))?;
            let mut obj = served(current.value.clone(), current.revision);
            match &json_patch {
                Some(p) => json_patch::patch(&mut obj, p)
                    .map_err(|e| ApiError::bad_request(format!("the patch does not apply: {e}")))?,
                None => json_patch::merge(&mut obj, &patch),
            }
            let asked = meta_str(&obj, "resourceVersion").to_string();
            if !asked.is_empty() && parse_rv(&asked)? != current.revision {
                return Err(ApiError::conflict(kind, name, ApiError::MODIFIED));
            }
            Self::check_type(kind, &obj)?;
            if meta_str(&obj, "name") != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    meta_str(&obj, "name")
                )));
            }
            if part == Part::Main {
                Self::admit_default(kind, &mut obj).await?;
            }
            let new = Self::prepare_update(kind, part, &current.value, obj)?;
            match self.commit(kind, part, &key, &current, new).await {
                Err(e) if e.reason == "Conflict" && asked.is_empty() => continue,
                done => return done,
            }
        }
        Err(ApiError::conflict(kind, name, ApiError::MODIFIED))
    }

    /// The `autoscaling/v1` Scale of object `name`, as the apiextensions server's `/scale`
    /// answers it for a kind with `subresources.scale` ([`scale_of`]). Errors: 404 for a missing
    /// object or a kind without scale; 500 when the object has no value at the spec replicas
    /// path, or a value of the wrong type at one of the paths.
    pub async fn get_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(kind, name)?;
        let obj = self.get(kind, namespace, name).await?;
        let (scale, found) = scale_of(paths, &obj)?;
        if !found {
            return Err(ApiError::internal(format!(
                "the spec replicas field {:?} does not exist",
                paths.spec_replicas
            )));
        }
        Ok(scale)
    }

    /// Replaces the Scale of object `name` (PUT on `/scale`): only `spec.replicas` is taken
    /// from `body`, and written to the kind's spec replicas path; a `resourceVersion` in it is
    /// a precondition. Out: the new Scale. Errors: as [`Self::patch_scale`].
    pub async fn update_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        self.write_scale(kind, namespace, name, |_| {
            let mut scale = body.clone();
            // A Scale decoded from a body without `spec.replicas` holds 0.
            if ScalePaths::lookup(&scale, "spec.replicas").is_none() {
                ScalePaths::set(&mut scale, "spec.replicas", json!(0))
                    .map_err(|e| ApiError::bad_request(format!("the Scale is not valid: {e}")))?;
            }
            Ok(scale)
        })
        .await
    }

    /// Applies a merge or JSON patch to the Scale of object `name` (PATCH on `/scale`), then
    /// writes the patched `spec.replicas` to the object as [`Self::update_scale`] does: the
    /// object's update rules apply (generation, schema, admission, the watch event), and a
    /// `resourceVersion` the patch sets is a precondition. Out: the new Scale. Errors: 400 for a
    /// bad patch, a Scale of another type or name, or replicas that are not an int32; 404; 409
    /// on a stale resourceVersion; 422 when the object refuses the new replicas.
    pub async fn patch_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &[u8],
    ) -> Result<Value, ApiError> {
        let patch: Value = serde_json::from_slice(patch)
            .map_err(|e| ApiError::bad_request(format!("the patch is not JSON: {e}")))?;
        let json_patch = match patch_type {
            PatchType::Json => Some(
                serde_json::from_value::<json_patch::Patch>(patch.clone())
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?,
            ),
            PatchType::Merge => None,
        };
        self.write_scale(kind, namespace, name, |old| {
            let mut scale = old.clone();
            match &json_patch {
                Some(p) => json_patch::patch(&mut scale, p)
                    .map_err(|e| ApiError::bad_request(format!("the patch does not apply: {e}")))?,
                None => json_patch::merge(&mut scale, &patch),
            }
            Ok(scale)
        })
        .await
    }

    /// The write of a Scale: `change` turns the current Scale (without `spec.replicas` when
    /// the object has none) into the new one, whose replicas go to the spec replicas path of
    /// the object, which is then updated as a PUT of it would be. Retries on a concurrent
    /// write unless the new Scale names a resourceVersion.
    async fn write_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        change: impl Fn(&Value) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(kind, name)?;
        let key = Self::key(kind, namespace, name);
        for _ in 0..8 {
            let current = self
                .store
                .get(&key)
                .await
                .map_err(|e| storage_error(kind, name, e))?
                .ok_or_else(|| ApiError::not_found(kind, name))?;
            let mut obj = served(current.value.clone(), current.revision);
            let (mut old_scale, found) = scale_of(paths, &obj)?;
            if found {
                let replicas = ScalePaths::lookup(&obj, &paths.spec_replicas).cloned();
                old_scale["spec"]["replicas"] = replicas.unwrap_or(json!(0));
            }
            let scale = change(&old_scale)?;
            let replicas = scale_replicas(paths, &scale, namespace, name)?;
            let asked = meta_str(&scale, "resourceVersion").to_string();
            if !asked.is_empty() && parse_rv(&asked)? != current.revision {
                return Err(ApiError::conflict(kind, name, ApiError::MODIFIED));
            }
            ScalePaths::set(&mut obj, &paths.spec_replicas, json!(replicas)).map_err(|e| {
                ApiError::internal(format!("the spec replicas path cannot be set: {e}"))
            })?;
            Self::admit_default(kind, &mut obj).await?;
            let new = Self::prepare_update(kind, Part::Main, &current.value, obj)?;
            match self.commit(kind, Part::Main, &key, &current, new).await {
                Err(e) if e.reason == "Conflict" && asked.is_empty() => continue,
                Err(e) => return Err(e),
                Ok(written) => return Ok(scale_of(paths, &written)?.0),
            }
        }
        Err(ApiError::conflict(kind, name, ApiError::MODIFIED))
    }

    /// Deletes object `name`, or marks it deleting while it has finalizers. `options` is a
    /// DeleteOptions body (its `preconditions` are checked). Out: the marked object, or a
    /// Success Status naming the deleted one. Errors: 404; 409 on a failed precondition.
    pub async fn delete(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let key = Self::key(kind, namespace, name);
        for _ in 0..8 {
            let current = self
                .store
                .get(&key)
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
            let served_now = served(current.value.clone(), current.revision);
            Self::admit(kind, name, Op::Delete(&served_now)).await?;
            if !finalizers(&current.value).is_empty() {
                if meta(&current.value).contains_key("deletionTimestamp") {
                    return Ok(served(current.value, current.revision));
                }
                let mut marked = current.value.clone();
                let generation = meta(&marked).get("generation").and_then(Value::as_i64);
                let m = meta_mut(&mut marked);
                m.insert("deletionTimestamp".into(), Value::String(now()));
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
                if let Some(g) = generation.filter(|g| *g > 0) {
                    m.insert("generation".into(), json!(g + 1));
                }
                match self
                    .store
                    .update(&key, marked.clone(), current.revision)
                    .await
                {
                    Ok(revision) => return Ok(served(marked, revision)),
                    Err(StoreError::Conflict { .. }) if want_rv.is_none() => continue,
                    Err(e) => return Err(storage_error(kind, name, e)),
                }
            }
            match self.store.delete(&key, Some(current.revision)).await {
                Ok(_) => {
                    return Ok(json!({
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Success",
                        "details": {"name": name, "group": kind.group, "kind": kind.plural, "uid": uid},
                    }));
                }
                Err(StoreError::Conflict { .. }) if want_rv.is_none() => continue,
                Err(e) => return Err(storage_error(kind, name, e)),
            }
        }
        Err(ApiError::conflict(kind, name, ApiError::MODIFIED))
    }

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
                    items.push(served(item.value, item.revision));
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

    /// Deletes (or marks deleting) every selected object. Out: a `<Kind>List` of them.
    pub async fn delete_collection(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        opts: &ListOptions,
        options: &Value,
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
            match self.delete(kind, ns, &name, options).await {
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
                opts: opts.clone(),
                progress: after,
            },
        ))
    }
}

/// The kind's scale paths. Errors: 404 for a kind without a scale subresource.
fn scale_paths<'a>(kind: &'a ApiKind, name: &str) -> Result<&'a ScalePaths, ApiError> {
    kind.scale
        .as_ref()
        .ok_or_else(|| ApiError::no_route(&format!("{}/{name}/scale", kind.plural)))
}

/// The integer at `path` of `obj` (`None` when absent). Errors: 500 for a value of another
/// type, as unstructured's `NestedInt64` refuses it.
fn nested_int(obj: &Value, path: &str) -> Result<Option<i64>, ApiError> {
    match ScalePaths::lookup(obj, path) {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| {
            ApiError::internal(format!(
                "{path} accessor error: {v} is of the type {}, expected int64",
                json_type(v)
            ))
        }),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The `autoscaling/v1` Scale of the served object `obj`, by the apiextensions server's
/// rules: metadata name, namespace, uid, resourceVersion and creationTimestamp of the object;
/// `spec.replicas` from the spec replicas path (omitted when 0, as Go's `omitempty` drops it);
/// `status.replicas` from the status replicas path, 0 when absent; `status.selector` from the
/// label selector path, omitted when empty. Out: the Scale, and whether the spec replicas path
/// holds a value. Errors: 500 for a value of the wrong type at a path.
pub fn scale_of(paths: &ScalePaths, obj: &Value) -> Result<(Value, bool), ApiError> {
    let spec = nested_int(obj, &paths.spec_replicas)?;
    let status = nested_int(obj, &paths.status_replicas)?.unwrap_or(0);
    let selector = match &paths.label_selector {
        None => String::new(),
        Some(p) => match ScalePaths::lookup(obj, p) {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(ApiError::internal(format!(
                    "{p} accessor error: {v} is of the type {}, expected string",
                    json_type(v)
                )));
            }
        },
    };
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta(obj).get(field).filter(|v| v.as_str() != Some("")) {
            metadata.insert(field.into(), v.clone());
        }
    }
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {},
        "status": {"replicas": status},
    });
    if let Some(n) = spec.filter(|n| *n != 0) {
        scale["spec"]["replicas"] = json!(n);
    }
    if !selector.is_empty() {
        scale["status"]["selector"] = Value::String(selector);
    }
    Ok((scale, spec.is_some()))
}

/// The replicas of a Scale a client wrote to object `name`. Errors: 400 for a body of another
/// kind or apiVersion, another name or namespace, replicas missing or not an int32.
fn scale_replicas(
    paths: &ScalePaths,
    scale: &Value,
    namespace: Option<&str>,
    name: &str,
) -> Result<i64, ApiError> {
    let api_version = scale
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = scale.get("kind").and_then(Value::as_str).unwrap_or("");
    if (!api_version.is_empty() && api_version != "autoscaling/v1")
        || (!kind.is_empty() && kind != "Scale")
    {
        return Err(ApiError::bad_request(format!(
            "the body is a {api_version}, Kind={kind}; this endpoint takes autoscaling/v1, Kind=Scale"
        )));
    }
    let body_name = meta_str(scale, "name");
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let body_ns = meta_str(scale, "namespace");
    if !body_ns.is_empty() && Some(body_ns) != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    match ScalePaths::lookup(scale, "spec.replicas") {
        None | Some(Value::Null) => Err(ApiError::bad_request(format!(
            "the spec replicas field {:?} cannot be empty",
            paths.spec_replicas
        ))),
        Some(v) => v
            .as_i64()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "the Scale's spec.replicas must be a 32-bit integer, not {v}"
                ))
            }),
    }
}

/// The changes of a watch, filtered by its selectors and turned into API events.
pub struct WatchStream {
    watch: Result<super::storage::Watch, Event>,
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

#[cfg(test)]
pub(crate) mod tests;
