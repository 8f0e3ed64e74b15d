// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Server-side apply: an applied configuration merged over the live object by the kind's
//! schema, with field ownership ([`super::managed`]).

use super::*;
use crate::apiserver::fieldmanager::managed::ApplyError;

/// The answer to a failed apply: 409 with a `FieldManagerConflict` cause per conflict; for a
/// configuration that does not fit the schema (a list-map item without its key, a duplicate
/// item), 500 with no reason and the message `failed to create typed patch object
/// (ns/name; group/version, Kind=Kind): <why>`, as kube-apiserver answers the plain error its
/// field manager returns (`ErrorToAPIStatus`).
pub(super) fn apply_error(
    kind: &ApiKind,
    namespace: Option<&str>,
    name: &str,
    e: ApplyError,
) -> ApiError {
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

impl<S: Storage> Registry<S> {
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
}
