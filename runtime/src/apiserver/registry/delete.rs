// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Delete and deletecollection: preconditions, the kind's delete validation, and the
//! finalizers that keep an object marked deleting (the garbage collector's, from the
//! propagation policy) until they are gone.

use super::*;

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

impl<S: Storage> Registry<S> {
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
