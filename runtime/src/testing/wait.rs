// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Waiting in tests: poll an object until a condition holds or a deadline passes, and on
//! timeout fail with what was seen last (the object as JSON, or the error of the last read),
//! as controller-runtime's `Eventually` blocks are read when they fail.

use std::fmt::Debug;
use std::time::Duration;

use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// How often the helpers read the object.
const POLL: Duration = Duration::from_millis(50);

/// Reads object `name` through `api` until `condition` holds for it, at most `timeout`.
/// `what` describes the condition for the error (`"be Ready"`). Out: the object that
/// satisfied it. Errors: the deadline passed; the message names the object and the
/// condition, and prints the last object read (or the last read's error).
pub async fn until<K>(
    api: &Api<K>,
    name: &str,
    timeout: Duration,
    what: &str,
    condition: impl Fn(&K) -> bool,
) -> anyhow::Result<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match api.get(name).await {
            Ok(obj) if condition(&obj) => return Ok(obj),
            Ok(obj) => serde_json::to_string_pretty(&obj).unwrap_or_else(|e| e.to_string()),
            Err(e) => format!("the read failed: {e}"),
        };
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "timed out after {timeout:?} waiting for {} {name} to {what}; last seen:\n{last}",
                K::kind(&())
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until object `name` is gone (a read answers 404), at most `timeout`. Errors: the
/// deadline passed; the message prints the object as last read (its finalizers say why).
pub async fn until_gone<K>(api: &Api<K>, name: &str, timeout: Duration) -> anyhow::Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match api.get_opt(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(obj)) => serde_json::to_string_pretty(&obj).unwrap_or_else(|e| e.to_string()),
            Err(e) => format!("the read failed: {e}"),
        };
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "timed out after {timeout:?} waiting for {} {name} to be deleted; last seen:\n{last}",
                K::kind(&())
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether `obj` reports itself Ready for its current spec: a `Ready` condition with status
/// `True` in `status.conditions`, and `status.observedGeneration` equal to
/// `metadata.generation` (what the runtime's `Context::set_ready` writes).
pub fn is_ready<K: Serialize>(obj: &K) -> bool {
    let Ok(v) = serde_json::to_value(obj) else {
        return false;
    };
    let ready = v
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let generation = v.pointer("/metadata/generation");
    ready && generation.is_some() && v.pointer("/status/observedGeneration") == generation
}
