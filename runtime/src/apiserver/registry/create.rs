// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Create: `generateName`, name and namespace checks, `uid`, `creationTimestamp`,
//! `generation: 1`, the status dropped when the kind has a status subresource.

use super::*;
use crate::apiserver::names;

impl<S: Storage> Registry<S> {
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

    pub(super) async fn create_tracked(
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
}
