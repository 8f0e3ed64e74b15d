// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The garbage collector's and the namespace controller's effect, as kube-controller-manager
//! has them (envtest runs neither): one pass looks at every stored object and
//!
//! - deletes an object whose owners (`ownerReferences`, by uid) are all gone (background
//!   deletion), and removes the references to gone owners from an object that still has a
//!   live one;
//! - for an owner being deleted with the `orphan` finalizer, removes the references to it
//!   from its dependents, then the finalizer;
//! - for an owner being deleted with the `foregroundDeletion` finalizer, deletes its
//!   dependents, and removes the finalizer once no dependent with `blockOwnerDeletion: true`
//!   is left;
//! - for a Namespace being deleted, deletes what is in it, then lets it go.
//!
//! Passes run after every write, until one changes nothing ([`super::front::Front`]).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::apiserver::kind::ApiKind;
use crate::apiserver::registry::{ListOptions, Part, PatchType, Registry};
use crate::apiserver::status::ApiError;
use crate::apiserver::storage::RedbStore;

/// The finalizer the namespace lifecycle keeps on a Namespace until its content is deleted.
/// kube-apiserver keeps it in `spec.finalizers`; here it is a metadata finalizer, which the
/// registry's deletion rules already honour (docs/testing.md).
pub(crate) const NAMESPACE_FINALIZER: &str = "kubernetes";

/// The object's finalizers.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn owner_refs(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn ref_uid(r: &Value) -> &str {
    r.get("uid").and_then(Value::as_str).unwrap_or("")
}

fn deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
}

/// One stored object and the kind it is stored as.
struct Stored<'a> {
    kind: &'a ApiKind,
    obj: Value,
}

impl Stored<'_> {
    fn namespace(&self) -> Option<&str> {
        self.obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
    }

    fn name(&self) -> &str {
        self.obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// A write the collector makes that may lose a race with a client: a conflict or a
/// not-found only means the next pass sees the newer state.
fn tolerate(result: Result<(), ApiError>) -> Result<(), ApiError> {
    match result {
        Err(e) if e.code == 409 || e.code == 404 => Ok(()),
        other => other,
    }
}

/// One pass. Out: whether it changed anything (then another pass follows). Errors: the
/// store failed.
pub(crate) async fn pass(
    reg: &Registry<RedbStore>,
    kinds: Vec<&ApiKind>,
) -> Result<bool, ApiError> {
    let mut all = Vec::new();
    for kind in kinds {
        let list = reg.list(kind, None, &ListOptions::default()).await?;
        for obj in list["items"].as_array().cloned().unwrap_or_default() {
            all.push(Stored { kind, obj });
        }
    }
    let by_uid: HashMap<&str, &Stored> = all.iter().map(|s| (uid(&s.obj), s)).collect();
    let mut changed = false;
    // The namespace controller.
    for ns in all
        .iter()
        .filter(|s| s.kind.group.is_empty() && s.kind.plural == "namespaces" && deleting(&s.obj))
    {
        let inside: Vec<&Stored> = all
            .iter()
            .filter(|s| s.kind.namespaced && s.namespace() == Some(ns.name()))
            .collect();
        if ns.obj.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating") {
            tolerate(
                reg.patch(
                    ns.kind,
                    None,
                    ns.name(),
                    Part::Status,
                    PatchType::Merge,
                    br#"{"status":{"phase":"Terminating"}}"#,
                    "kube-controller-manager",
                )
                .await
                .map(|_| ()),
            )?;
            changed = true;
        }
        for s in inside.iter().filter(|s| !deleting(&s.obj)) {
            tolerate(
                reg.delete(s.kind, s.namespace(), s.name(), &json!({}))
                    .await
                    .map(|_| ()),
            )?;
            changed = true;
        }
        if inside.is_empty() && finalizers(&ns.obj).iter().any(|f| f == NAMESPACE_FINALIZER) {
            let ns_now = reg.get(ns.kind, None, ns.name()).await?;
            let left: Vec<String> = finalizers(&ns_now)
                .into_iter()
                .filter(|f| f != NAMESPACE_FINALIZER)
                .collect();
            tolerate(set_finalizers(reg, ns.kind, &ns_now, &left).await)?;
            changed = true;
        }
    }
    // Owners being deleted in the orphan and foreground modes.
    for owner in all.iter().filter(|s| deleting(&s.obj)) {
        let owner_uid = uid(&owner.obj);
        let fins = finalizers(&owner.obj);
        let dependents: Vec<&Stored> = all
            .iter()
            .filter(|s| owner_refs(&s.obj).iter().any(|r| ref_uid(r) == owner_uid))
            .collect();
        if fins.iter().any(|f| f == "orphan") {
            for d in &dependents {
                tolerate(remove_refs(reg, d, &[owner_uid]).await)?;
            }
            let left: Vec<String> = fins.iter().filter(|f| *f != "orphan").cloned().collect();
            tolerate(set_finalizers(reg, owner.kind, &owner.obj, &left).await)?;
            changed = true;
        } else if fins.iter().any(|f| f == "foregroundDeletion") {
            for d in dependents.iter().filter(|d| !deleting(&d.obj)) {
                tolerate(
                    reg.delete(d.kind, d.namespace(), d.name(), &json!({}))
                        .await
                        .map(|_| ()),
                )?;
                changed = true;
            }
            let blocked = dependents.iter().any(|d| {
                owner_refs(&d.obj).iter().any(|r| {
                    ref_uid(r) == owner_uid
                        && r.get("blockOwnerDeletion") == Some(&Value::Bool(true))
                })
            });
            if !blocked {
                let left: Vec<String> = fins
                    .iter()
                    .filter(|f| *f != "foregroundDeletion")
                    .cloned()
                    .collect();
                tolerate(set_finalizers(reg, owner.kind, &owner.obj, &left).await)?;
                changed = true;
            }
        }
    }
    // Dependents whose owners are gone.
    for d in all.iter().filter(|s| !deleting(&s.obj)) {
        let refs = owner_refs(&d.obj);
        if refs.is_empty() {
            continue;
        }
        let gone: Vec<&str> = refs
            .iter()
            .map(ref_uid)
            .filter(|u| !by_uid.contains_key(u))
            .collect();
        if gone.is_empty() {
            continue;
        }
        if gone.len() == refs.len() {
            tolerate(
                reg.delete(d.kind, d.namespace(), d.name(), &json!({}))
                    .await
                    .map(|_| ()),
            )?;
        } else {
            tolerate(remove_refs(reg, d, &gone).await)?;
        }
        changed = true;
    }
    Ok(changed)
}

/// Removes the owner references with `uids` from `dependent`.
async fn remove_refs(
    registry: &Registry<RedbStore>,
    dependent: &Stored<'_>,
    uids: &[&str],
) -> Result<(), ApiError> {
    let refs: Vec<Value> = owner_refs(&dependent.obj)
        .into_iter()
        .filter(|r| !uids.contains(&ref_uid(r)))
        .collect();
    let refs = if refs.is_empty() {
        Value::Null
    } else {
        Value::Array(refs)
    };
    let patch = json!({"metadata": {
        "ownerReferences": refs,
        "resourceVersion": dependent.obj["metadata"]["resourceVersion"],
    }});
    registry
        .patch(
            dependent.kind,
            dependent.namespace(),
            dependent.name(),
            Part::Main,
            PatchType::Merge,
            patch.to_string().as_bytes(),
            "kube-controller-manager",
        )
        .await
        .map(|_| ())
}

/// Writes `finalizers` to `obj` (as read, its resourceVersion a precondition). Errors: as
/// the registry's patch (409 when `obj` changed meanwhile).
pub(crate) async fn set_finalizers(
    registry: &Registry<RedbStore>,
    kind: &ApiKind,
    obj: &Value,
    finalizers: &[String],
) -> Result<(), ApiError> {
    let meta = &obj["metadata"];
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": meta["resourceVersion"],
    }});
    registry
        .patch(
            kind,
            meta["namespace"].as_str(),
            meta["name"].as_str().unwrap_or(""),
            Part::Main,
            PatchType::Merge,
            patch.to_string().as_bytes(),
            "kube-apiserver",
        )
        .await
        .map(|_| ())
}
