// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The scale subresource (the apiextensions server's `ScaleREST`): the `autoscaling/v1` Scale
//! of an object, read from its kind's scale paths, and writes to it, which change only the
//! spec replicas path of the object and are then updated by the object's rules.

use serde_json::{Map, Value, json};

use super::super::fieldmanager::fieldset::{self, FieldSet};
use super::super::fieldmanager::managed::{self, Entry, Writer};
use super::super::kind::{ApiKind, ScalePaths};
use super::super::status::ApiError;
use super::super::storage::Storage;
use super::apply::apply_error;
use super::jsonpatch::apply_json_patch;
use super::{Part, PatchType, Registry, Track, Write, meta, meta_mut, meta_str, precondition};

impl<S: Storage> Registry<S> {
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
    /// a precondition; `manager`'s `Update` entry (subresource `scale`) is recorded. `w` as for
    /// any write ([`Write`]: a dry run stores nothing). Out: the new Scale. Errors: as
    /// [`Self::patch_scale`].
    pub async fn update_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        manager: &str,
        w: Write,
    ) -> Result<Value, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        self.write_scale(kind, namespace, name, manager, w, |_| {
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
    /// on a stale resourceVersion; 415 for an apply patch (not served on `/scale` yet); 422
    /// when the object refuses the new replicas. An apply patch goes to [`Self::apply_scale`].
    #[allow(clippy::too_many_arguments)]
    pub async fn patch_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &[u8],
        manager: &str,
        w: Write,
    ) -> Result<Value, ApiError> {
        if let PatchType::Apply { force } = patch_type {
            return self
                .apply_scale(kind, namespace, name, patch, manager, force, w)
                .await;
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
        if patch_type == PatchType::Strategic && kind.merge_facts.is_none() {
            return Err(ApiError::unsupported_media_type(
                crate::apiserver::strategic::NO_STRATEGIC_MERGE_PATCH,
            ));
        }
        self.write_scale(kind, namespace, name, manager, w, |old| {
            let mut scale = old.clone();
            match &json_patch {
                Some(p) => apply_json_patch(&mut scale, p)?,
                // A Scale has no list to merge: its strategic merge patch is read without facts.
                None if patch_type == PatchType::Strategic => {
                    scale = crate::apiserver::strategic::patch(&scale, &patch, &Value::Null)
                        .map_err(|e| {
                            ApiError::bad_request(format!(
                                "the strategic merge patch does not apply: {e}"
                            ))
                        })?;
                }
                None => json_patch::merge(&mut scale, &patch),
            }
            Ok(scale)
        })
        .await
    }

    /// Server-side apply of `body` (the applied Scale, JSON) by `manager` to the Scale of
    /// object `name`, as the apiextensions server's scale subresource runs an apply patch: the
    /// object's `managedFields` are turned into the Scale's ([`to_scale_entries`]), the
    /// configuration is applied to the current Scale by structured-merge-diff's rules
    /// ([`managed::apply`]: conflicts with the other owners of `.spec.replicas` unless
    /// `force`, the manager's `Apply` entry with subresource `scale`), the merged
    /// `spec.replicas` goes to the kind's spec replicas path (0 when the apply removed it) and
    /// the Scale's entries back to the object's ([`to_parent_entries`]); the object is then
    /// updated as by a PUT (its rules, admission, the watch event). A `resourceVersion` in the
    /// body is a precondition. Out: the new Scale. Errors: 400 for a body that is not an
    /// `autoscaling/v1` Scale (`invalid object type: ...`), that carries `managedFields`, names
    /// another object, or leaves no replicas where the object has none; 404 (an apply does not
    /// create through `/scale`); 409 Conflict with a `FieldManagerConflict` cause per field
    /// another manager owns (`.spec.replicas`, the Scale's path), or for a stale
    /// resourceVersion; 422 when the object refuses the new replicas.
    #[allow(clippy::too_many_arguments)]
    pub async fn apply_scale(
        &self,
        kind: &ApiKind,
        namespace: Option<&str>,
        name: &str,
        body: &[u8],
        manager: &str,
        force: bool,
        w: Write,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(kind, name)?;
        let config: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the apply patch is not JSON: {e}")))?;
        if !config.is_object() {
            return Err(ApiError::bad_request("the apply patch must be an object"));
        }
        let gvk = gvk_string(&config);
        if gvk != "autoscaling/v1, Kind=Scale" {
            return Err(ApiError::bad_request(format!("invalid object type: {gvk}")));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request(
                "metadata.managedFields must be nil in an apply patch",
            ));
        }
        let schema = scale_schema();
        let replicas_path = replicas_field(paths);
        let api_version = kind.api_version();
        let writer = Writer {
            manager,
            api_version: api_version.clone(),
            subresource: "scale",
            reset: &[],
            now: self.clock.stamp(),
        };
        let written = self
            .update_retrying(
                kind,
                namespace,
                name,
                Part::Main,
                Track::Applied,
                w,
                |current, revision| {
                    let mut obj = current.clone();
                    let (mut old_scale, found) = scale_of(paths, &obj)?;
                    if !found {
                        old_scale["spec"]["replicas"] = json!(INVALID_SPEC_REPLICAS);
                    }
                    let parent = managed::decode(current).unwrap_or_default();
                    let entries = to_scale_entries(&parent, &replicas_path);
                    let (mut scale, entries) =
                        managed::apply(Some(&old_scale), entries, &config, &schema, &writer, force)
                            .map_err(|e| apply_error(kind, namespace, name, e))?;
                    // A Scale decoded without `spec.replicas` holds 0.
                    if ScalePaths::lookup(&scale, "spec.replicas").is_none() {
                        scale["spec"]["replicas"] = json!(0);
                    }
                    if ScalePaths::lookup(&scale, "spec.replicas")
                        == Some(&json!(INVALID_SPEC_REPLICAS))
                    {
                        return Err(ApiError::bad_request(format!(
                            "the spec replicas field {:?} cannot be empty",
                            paths.spec_replicas
                        )));
                    }
                    let preconditioned =
                        put_replicas(kind, paths, &scale, &mut obj, (namespace, name), revision)?;
                    let entries = to_parent_entries(&parent, entries, &replicas_path, &api_version);
                    meta_mut(&mut obj).remove("managedFields");
                    managed::encode(&mut obj, entries);
                    Ok((obj, preconditioned))
                },
            )
            .await?;
        Ok(scale_of(paths, &written)?.0)
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
        manager: &str,
        w: Write,
        change: impl Fn(&Value) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(kind, name)?;
        let track = Track::Update {
            manager,
            scale: true,
        };
        let written = self
            .update_retrying(
                kind,
                namespace,
                name,
                Part::Main,
                track,
                w,
                |current, revision| {
                    let mut obj = current.clone();
                    let (mut old_scale, found) = scale_of(paths, &obj)?;
                    if found {
                        let replicas = ScalePaths::lookup(&obj, &paths.spec_replicas).cloned();
                        old_scale["spec"]["replicas"] = replicas.unwrap_or(json!(0));
                    }
                    let scale = change(&old_scale)?;
                    let preconditioned =
                        put_replicas(kind, paths, &scale, &mut obj, (namespace, name), revision)?;
                    Ok((obj, preconditioned))
                },
            )
            .await?;
        Ok(scale_of(paths, &written)?.0)
    }
}

/// The schema of `autoscaling/v1` Scale that an apply to `/scale` is read against (its
/// `spec` and `status` are structs, as in the built-in OpenAPI definition kube-apiserver types
/// it with).
fn scale_schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "selector": {"type": "string"}}},
    }})
}

/// The Scale's replicas field, as a field path (`.spec.replicas`).
const SCALE_REPLICAS: [&str; 2] = ["f:spec", "f:replicas"];

/// What the apiextensions server puts in a Scale's `spec.replicas` when the object has no
/// value at its spec replicas path (the smallest int32), so that a write leaving it there is
/// refused.
const INVALID_SPEC_REPLICAS: i64 = i32::MIN as i64;

/// The set holding only `path`.
fn only(path: &[String]) -> FieldSet {
    let mut set = FieldSet::default();
    set.insert(&path.iter().map(String::as_str).collect::<Vec<_>>());
    set
}

/// The field path of the kind's spec replicas path (`.spec.replicas` → `f:spec`, `f:replicas`).
fn replicas_field(paths: &ScalePaths) -> Vec<String> {
    ScalePaths::segments(&paths.spec_replicas)
        .into_iter()
        .map(fieldset::field)
        .collect()
}

/// The Scale's entries made from the object's (`parent`), as k8s.io/apimachinery's
/// `ScaleHandler.ToSubresource` makes them: only the entries that own the spec replicas
/// field (`replicas`), each then owning the Scale's `.spec.replicas`, with the same manager,
/// operation, subresource and API version (the version names the manager in a conflict).
pub(crate) fn to_scale_entries(parent: &[Entry], replicas: &[String]) -> Vec<Entry> {
    let refs: Vec<&str> = replicas.iter().map(String::as_str).collect();
    let scale_replicas: Vec<String> = SCALE_REPLICAS.iter().map(|s| s.to_string()).collect();
    parent
        .iter()
        .filter(|e| e.fields.contains(&refs))
        .map(|e| Entry {
            fields: only(&scale_replicas),
            ..e.clone()
        })
        .collect()
}

/// The object's entries after a write to its Scale, as `ScaleHandler.ToParent` merges them:
/// an entry of `parent` that does not own the spec replicas field is kept; one that does is
/// kept whole when its manager still has an entry in `scale`, else loses that field (and is
/// dropped when left empty); a manager of `scale` not matched so, that owns the Scale's
/// `.spec.replicas`, gets an entry owning the spec replicas field at `api_version`, with the
/// time of the object's entry of that manager, none when there is none (the Scale's time is
/// not carried over, as in kube).
pub(crate) fn to_parent_entries(
    parent: &[Entry],
    mut scale: Vec<Entry>,
    replicas: &[String],
    api_version: &str,
) -> Vec<Entry> {
    let refs: Vec<&str> = replicas.iter().map(String::as_str).collect();
    let replicas_set = only(replicas);
    let mut out = Vec::new();
    for entry in parent {
        if !entry.fields.contains(&refs) {
            out.push(entry.clone());
            continue;
        }
        match scale.iter().position(|s| s.same_manager(entry)) {
            Some(i) => {
                scale.remove(i);
                out.push(entry.clone());
            }
            None => {
                let fields = entry.fields.difference(&replicas_set);
                if !fields.is_empty() {
                    out.push(Entry {
                        fields,
                        ..entry.clone()
                    });
                }
            }
        }
    }
    for entry in scale {
        if !entry.fields.contains(&SCALE_REPLICAS) {
            continue;
        }
        let time = parent
            .iter()
            .find(|p| p.same_manager(&entry))
            .and_then(|p| p.time.clone());
        out.push(Entry {
            fields: replicas_set.clone(),
            api_version: api_version.to_owned(),
            time,
            ..entry
        });
    }
    out
}

/// `apiVersion` and `kind` as Go's `GroupVersionKind.String` prints them
/// (`autoscaling/v1, Kind=Scale`, `/v1, Kind=Pod`).
fn gvk_string(obj: &Value) -> String {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
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

/// Puts the replicas of the Scale a client wrote into `obj` at the spec replicas path, after
/// checking the Scale ([`scale_replicas`]) and its resourceVersion against `revision`
/// (`precondition`). Out: whether the Scale named a resourceVersion (the write then does not
/// retry). Errors: those two checks' (400, 409); 500 when the path cannot be set.
fn put_replicas(
    kind: &ApiKind,
    paths: &ScalePaths,
    scale: &Value,
    obj: &mut Value,
    (namespace, name): (Option<&str>, &str),
    revision: u64,
) -> Result<bool, ApiError> {
    let replicas = scale_replicas(paths, scale, namespace, name)?;
    let preconditioned = precondition(kind, name, meta_str(scale, "resourceVersion"), revision)?;
    ScalePaths::set(obj, &paths.spec_replicas, json!(replicas))
        .map_err(|e| ApiError::internal(format!("the spec replicas path cannot be set: {e}")))?;
    Ok(preconditioned)
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
