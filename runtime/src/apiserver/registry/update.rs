// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Update (PUT) and patch (merge, JSON and strategic merge patches): the read-modify-write
//! retried on a conflict with a concurrent write.

use super::jsonpatch::apply_json_patch;
use super::*;

impl<S: Storage> Registry<S> {
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
                    crate::apiserver::strategic::NO_STRATEGIC_MERGE_PATCH,
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
                        obj = crate::apiserver::strategic::patch(&obj, &patch, facts).map_err(|e| {
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
    pub(super) async fn update_retrying(
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
}
