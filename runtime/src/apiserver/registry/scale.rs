// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The scale subresource (the apiextensions server's `ScaleREST`): the `autoscaling/v1` Scale
//! of an object, read from its kind's scale paths, and writes to it, which change only the
//! spec replicas path of the object and are then updated by the object's rules.

use serde_json::{Map, Value, json};

use super::super::kind::{ApiKind, ScalePaths};
use super::super::status::ApiError;
use super::super::storage::Storage;
use super::apply_json_patch;
use super::{Part, PatchType, Registry, Track, Write, meta, meta_str, precondition};

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
    /// when the object refuses the new replicas.
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
        if let PatchType::Apply { .. } = patch_type {
            return Err(ApiError::unsupported_media_type(
                "server-side apply to the scale subresource is not supported by this server; use a merge or JSON patch",
            ));
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
                crate::apiserver::server::decode::NO_STRATEGIC_MERGE_PATCH,
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
                    let replicas = scale_replicas(paths, &scale, namespace, name)?;
                    let preconditioned =
                        precondition(kind, name, meta_str(&scale, "resourceVersion"), revision)?;
                    ScalePaths::set(&mut obj, &paths.spec_replicas, json!(replicas)).map_err(
                        |e| {
                            ApiError::internal(format!("the spec replicas path cannot be set: {e}"))
                        },
                    )?;
                    Ok((obj, preconditioned))
                },
            )
            .await?;
        Ok(scale_of(paths, &written)?.0)
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
