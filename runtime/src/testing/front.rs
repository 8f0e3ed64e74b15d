// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The in-process cluster's front door: every request of the test's `kube::Client` (or of
//! kubectl on the loopback socket) passes here on its way to the API server's router
//! ([`crate::apiserver::server`]), for what kube-apiserver does around its registry:
//!
//! - a resource the cluster does not serve is a 404 that names it (not an empty answer);
//! - an injected fault ([`super::Fault`]) answers instead of the registry;
//! - a create (or a server-side apply that creates) in a namespace that does not exist is
//!   refused as the `NamespaceLifecycle` admission plugin refuses it (404
//!   `namespaces "x" not found`; 403 while it terminates);
//! - a Namespace's delete puts the namespace finalizer on it first (a delete's
//!   `propagationPolicy` is the registry's: it marks the object with the `orphan` or
//!   `foregroundDeletion` finalizer), and every write is followed by a garbage-collector pass
//!   ([`super::gc`]);
//! - a new Namespace is `Active`, a deleted one `Terminating` until its content is gone.

use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use super::faults::{Faults, Verb};
use super::gc::{self, NAMESPACE_FINALIZER};
use crate::apiserver::kind::ApiKind;
use crate::apiserver::registry::{Part, PatchType, Registry};
use crate::apiserver::server::options::{RequestOptions, Verb as OptionsVerb};
use crate::apiserver::status::{ApiError, Subject};
use crate::apiserver::storage::RedbStore;

/// A resource request's target, from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) sub: Option<String>,
}

impl Target {
    /// The target of `path` (`/api/v1/...` or `/apis/<group>/<version>/...`); `None` for
    /// discovery, health and other paths.
    pub(crate) fn parse(path: &str) -> Option<Self> {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
            ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
            _ => return None,
        };
        let (namespace, rest) = match rest {
            // `namespaces/<n>` and `namespaces/<n>/status` are the Namespace object itself.
            ["namespaces", ns, p, rest @ ..] if !(group.is_empty() && *p == "status") => {
                (Some(ns.to_string()), (*p, rest))
            }
            [p, rest @ ..] => (None, (*p, rest)),
            [] => return None,
        };
        let (plural, tail) = rest;
        let (name, sub) = match tail {
            [] => (None, None),
            [n] => (Some(n.to_string()), None),
            [n, s] => (Some(n.to_string()), Some(s.to_string())),
            _ => return None,
        };
        Some(Self {
            group: group.into(),
            version: version.into(),
            namespace,
            plural: plural.into(),
            name,
            sub,
        })
    }

    /// `plural` or `plural/sub`, as faults name a resource.
    fn resource(&self) -> String {
        match &self.sub {
            Some(s) => format!("{}/{s}", self.plural),
            None => self.plural.clone(),
        }
    }
}

/// The front door's state: the API server's router and a registry over the same store.
pub(crate) struct Front {
    pub(crate) router: axum::Router,
    pub(crate) registry: Registry<RedbStore>,
    pub(crate) kinds: Vec<ApiKind>,
    pub(crate) faults: Faults,
    pub(crate) conversions: super::conversion::Conversions,
    /// One garbage-collector pass at a time.
    pub(crate) gc: tokio::sync::Mutex<()>,
}

fn status_response(code: u16, body: &Value) -> http::Response<Body> {
    http::Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("a valid response")
}

fn error_response(e: &ApiError) -> http::Response<Body> {
    status_response(e.code, &e.to_status())
}

fn verb(method: &Method, target: &Target, watch: bool) -> Option<Verb> {
    Some(match (method.clone(), target.name.is_some()) {
        (Method::GET, true) => Verb::Get,
        (Method::GET, false) if watch => Verb::Watch,
        (Method::GET, false) => Verb::List,
        (Method::POST, _) => Verb::Create,
        (Method::PUT, _) => Verb::Update,
        (Method::PATCH, _) => Verb::Patch,
        (Method::DELETE, true) => Verb::Delete,
        (Method::DELETE, false) => Verb::DeleteCollection,
        _ => return None,
    })
}

/// The request's options as the API server's router reads them: the query percent-decoded
/// by the same extractor, then [`RequestOptions::parse`]. The front door reads options only
/// this way, so it never sees a parameter other than the server does (`%64ryRun=All` is
/// `dryRun=All` to both). Errors: as the parse (the server answers the same 400).
fn request_options(uri: &http::Uri) -> Result<RequestOptions, ApiError> {
    let axum::extract::Query(pairs) =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
    RequestOptions::parse(&pairs)
}

impl Front {
    /// The served kind of `target`.
    pub(crate) fn kind(&self, group: &str, version: &str, plural: &str) -> Option<&ApiKind> {
        self.kinds
            .iter()
            .find(|k| k.group == group && k.version == version && k.plural == plural)
    }

    fn namespace_kind(&self) -> &ApiKind {
        self.kind("", "v1", "namespaces")
            .expect("the test cluster always serves namespaces")
    }

    /// Answers one request.
    pub(crate) async fn handle(
        self: &Arc<Self>,
        request: http::Request<Bytes>,
    ) -> http::Response<Body> {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_string();
        let Some(target) = Target::parse(&path) else {
            return self.forward(parts, body).await;
        };
        let Some(kind) = self
            .kind(&target.group, &target.version, &target.plural)
            .cloned()
        else {
            let gv = if target.group.is_empty() {
                target.version.clone()
            } else {
                format!("{}/{}", target.group, target.version)
            };
            return error_response(&ApiError {
                code: 404,
                reason: "NotFound",
                message: format!(
                    "the server could not find the requested resource: the test cluster does not serve {} in {gv} (it serves the project's CRDs and the built-in kinds docs/testing.md lists)",
                    target.plural
                ),
                details: None,
                continue_token: None,
            });
        };
        // Options that do not parse are the server's 400 to answer.
        let Ok(options) = request_options(&parts.uri) else {
            return self.forward(parts, body).await;
        };
        let Some(verb) = verb(&parts.method, &target, options.watch) else {
            return self.forward(parts, body).await;
        };
        let name = target.name.clone().unwrap_or_default();
        if let Some((code, status)) =
            self.faults
                .hit(verb, &target.resource(), &target.group, &name)
        {
            return status_response(code, &status);
        }
        // A server-side apply to a missing object creates it: the same namespace check.
        let apply = verb == Verb::Patch
            && parts
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.starts_with("application/apply-patch"));
        let apply_creates = apply
            && target.sub.is_none()
            && self
                .registry
                .get(&kind, target.namespace.as_deref(), &name)
                .await
                .is_err_and(|e| e.code == 404);
        if (verb == Verb::Create || apply_creates)
            && kind.namespaced
            && let Some(ns) = &target.namespace
            && let Err(e) = self.check_namespace(ns).await
        {
            return error_response(&e);
        }
        let (mut parts, mut body) = (parts, body);
        // A version other than a multi-version CRD's storage version: the request goes on as
        // one for the storage version, and its answer is converted back.
        let converting = self
            .conversions
            .needed(&kind.group, &kind.plural, &kind.version)
            .cloned();
        let kind = match &converting {
            None => kind,
            Some(versions) => {
                if verb == Verb::Patch {
                    return error_response(&ApiError::bad_request(format!(
                        "the test cluster patches {} only in its storage version {} (it does not apply a patch to a converted object)",
                        kind.qualified(),
                        versions.storage
                    )));
                }
                let Some(storage) = self
                    .kind(&kind.group, &versions.storage, &kind.plural)
                    .cloned()
                else {
                    return error_response(&ApiError::internal(
                        "the storage version is not served",
                    ));
                };
                if !body.is_empty() && matches!(verb, Verb::Create | Verb::Update) {
                    match self.to_storage(versions, &storage, &body).await {
                        Ok(b) => body = b,
                        Err(e) => return error_response(&e),
                    }
                }
                parts.uri = with_version(&parts.uri, &kind.version, &versions.storage);
                storage
            }
        };
        let mut added = None;
        if matches!(verb, Verb::Delete | Verb::DeleteCollection) && target.sub.is_none() {
            match self.prepare_delete(&kind, &target, &options, &body).await {
                Ok(finalizer) => added = finalizer,
                Err(e) => return error_response(&e),
            }
        }
        let response = self.forward(parts, body).await;
        if let Some(finalizer) = added
            && !response.status().is_success()
        {
            // The delete failed (a precondition, admission): the finalizer put on for it goes.
            let name = target.name.as_deref().unwrap_or("");
            if let Err(e) = remove_finalizer(
                &self.registry,
                &kind,
                target.namespace.as_deref(),
                name,
                finalizer,
            )
            .await
            {
                tracing::warn!(error = %e, "test cluster: taking back the finalizer of a failed delete");
            }
        }
        let response = match &converting {
            Some(versions) => {
                let desired = format!("{}/{}", kind.group, target.version);
                self.from_storage(versions, response, &desired, verb == Verb::Watch)
                    .await
            }
            None => response,
        };
        let written = !matches!(verb, Verb::Get | Verb::List | Verb::Watch);
        if !written || !response.status().is_success() {
            return response;
        }
        let created = verb == Verb::Create || (apply && response.status() == StatusCode::CREATED);
        if created && kind.group.is_empty() && kind.plural == "namespaces" {
            let dry_run = !options.dry_run.is_empty();
            return self.activate_namespace(response, dry_run).await;
        }
        self.collect_garbage().await;
        response
    }

    /// A request body in the storage version. Errors: 400 for a body that is not JSON; as
    /// the conversion.
    async fn to_storage(
        &self,
        versions: &super::conversion::Versions,
        storage: &ApiKind,
        body: &Bytes,
    ) -> Result<Bytes, ApiError> {
        let obj: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid JSON: {e}"))
        })?;
        let converted = self
            .conversions
            .convert_one(versions, obj, &storage.api_version())
            .await?;
        Ok(Bytes::from(converted.to_string()))
    }

    /// An answer of the storage version in `desired`: the object or list, or each watch
    /// event's object.
    async fn from_storage(
        self: &Arc<Self>,
        versions: &super::conversion::Versions,
        response: http::Response<Body>,
        desired: &str,
        watch: bool,
    ) -> http::Response<Body> {
        let (parts, body) = response.into_parts();
        if watch && parts.status.is_success() {
            use futures_util::StreamExt as _;
            let (front, versions, desired) = (self.clone(), versions.clone(), desired.to_string());
            let events = body.into_data_stream().then(move |chunk| {
                let (front, versions, desired) = (front.clone(), versions.clone(), desired.clone());
                async move {
                    let chunk = chunk?;
                    let mut out = Vec::new();
                    for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        let mut event: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
                        let object = event["object"].take();
                        event["object"] = match front
                            .conversions
                            .convert_answer(&versions, object, &desired)
                            .await
                        {
                            Ok(o) => o,
                            Err(e) => {
                                event["type"] = json!("ERROR");
                                e.to_status()
                            }
                        };
                        out.extend_from_slice(event.to_string().as_bytes());
                        out.push(b'\n');
                    }
                    Ok::<_, axum::Error>(Bytes::from(out))
                }
            });
            return http::Response::from_parts(parts, Body::from_stream(events));
        }
        let Ok(bytes) = body.collect().await.map(|b| b.to_bytes()) else {
            return error_response(&ApiError::internal("reading the answer to convert"));
        };
        let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
            return http::Response::from_parts(parts, Body::from(bytes));
        };
        match self
            .conversions
            .convert_answer(versions, value, desired)
            .await
        {
            Ok(v) => http::Response::from_parts(parts, Body::from(v.to_string())),
            Err(e) => error_response(&e),
        }
    }

    /// Passes a request to the API server's router.
    async fn forward(&self, parts: http::request::Parts, body: Bytes) -> http::Response<Body> {
        use tower::ServiceExt as _;
        let request = http::Request::from_parts(parts, Body::from(body));
        match self.router.clone().oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// The `NamespaceLifecycle` admission plugin's check of a create in `ns`. Errors: 404
    /// for a namespace that does not exist; 403 for one being deleted.
    async fn check_namespace(&self, ns: &str) -> Result<(), ApiError> {
        let namespace = self.registry.get(self.namespace_kind(), None, ns).await?;
        if namespace.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(ApiError {
                code: 403,
                reason: "Forbidden",
                message: format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
                details: Some(
                    json!({"causes": [{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]}),
                ),
                continue_token: None,
            });
        }
        Ok(())
    }

    /// A Namespace's delete puts the namespace finalizer on it first (the namespace
    /// controller's part, [`super::gc`]). The options are read as the server reads them (the
    /// query's, then the DeleteOptions body's, validated as `ValidateDeleteOptions`), and the
    /// request goes on unchanged: its `propagationPolicy` or `orphanDependents` is the
    /// registry's to carry out ([`crate::apiserver::registry::gc_finalizers`]). Out: the
    /// finalizer added. Errors: the server's 400 and 422 for the options, before anything is
    /// written; 400 for a dry-run delete of a Namespace (the finalizer would be put on for
    /// real).
    async fn prepare_delete(
        &self,
        kind: &ApiKind,
        target: &Target,
        options: &RequestOptions,
        body: &Bytes,
    ) -> Result<Option<&'static str>, ApiError> {
        let mut options = options.clone();
        options.merge_delete_body(&crate::apiserver::server::decode::delete_options(body)?)?;
        options.validate(if target.name.is_some() {
            OptionsVerb::Delete
        } else {
            OptionsVerb::DeleteCollection
        })?;
        let Some(name) = &target.name else {
            return Ok(None);
        };
        if !(kind.group.is_empty() && kind.plural == "namespaces") {
            return Ok(None);
        }
        if !options.dry_run.is_empty() {
            // The finalizer would be put on for real: refused rather than half carried out.
            return Err(ApiError::bad_request(format!(
                "the test cluster does not dry-run the delete of a Namespace (it needs the {NAMESPACE_FINALIZER:?} finalizer put on first); send it without dryRun"
            )));
        }
        Ok(
            add_finalizer(&self.registry, kind, None, name, NAMESPACE_FINALIZER)
                .await?
                .then_some(NAMESPACE_FINALIZER),
        )
    }

    /// A created Namespace's `status.phase: Active`, as the namespace's strategy sets it (for
    /// a dry run, in the answer only: nothing was stored).
    async fn activate_namespace(
        &self,
        response: http::Response<Body>,
        dry_run: bool,
    ) -> http::Response<Body> {
        let Ok(bytes) = response.into_body().collect().await.map(|b| b.to_bytes()) else {
            return error_response(&ApiError::internal("reading the created Namespace"));
        };
        let mut created: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if dry_run {
            created["status"] = json!({"phase": "Active"});
            return status_response(201, &created);
        }
        let name = created
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        match self
            .registry
            .patch(
                self.namespace_kind(),
                None,
                name,
                Part::Status,
                PatchType::Merge,
                br#"{"status":{"phase":"Active"}}"#,
                "kube-apiserver",
            )
            .await
        {
            Ok(active) => status_response(201, &active),
            Err(e) => error_response(&e),
        }
    }

    /// One kind per stored resource, in the version objects are stored in: the registry keys
    /// objects by group and plural, so every version of a CRD reads the same objects.
    fn stored_kinds(&self) -> Vec<&ApiKind> {
        let mut seen = std::collections::HashSet::new();
        self.kinds
            .iter()
            .filter(|k| {
                self.conversions
                    .storage_version(&k.group, &k.plural)
                    .is_none_or(|v| v == k.version)
            })
            .filter(|k| seen.insert((k.group.clone(), k.plural.clone())))
            .collect()
    }

    /// Runs the garbage collector until nothing changes ([`super::gc`]).
    pub(crate) async fn collect_garbage(&self) {
        let _one = self.gc.lock().await;
        for _ in 0..64 {
            match super::gc::pass(&self.registry, self.stored_kinds()).await {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "test cluster: garbage collection failed");
                    break;
                }
            }
        }
    }
}

/// Creates the Namespace `name`, `Active` (the namespaces every cluster starts with).
/// Errors: as the registry's create.
pub(crate) async fn create_namespace(front: &Front, name: &str) -> anyhow::Result<()> {
    let kind = front.namespace_kind();
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    front
        .registry
        .create(kind, None, namespace, "kube-apiserver")
        .await?;
    front
        .registry
        .patch(
            kind,
            None,
            name,
            Part::Status,
            PatchType::Merge,
            br#"{"status":{"phase":"Active"}}"#,
            "kube-apiserver",
        )
        .await?;
    Ok(())
}

/// Adds `finalizer` to object `name` unless it has it or is being deleted (where no
/// finalizer may be added). Out: whether it was added. Errors: as the registry's patch.
pub(crate) async fn add_finalizer(
    registry: &Registry<RedbStore>,
    kind: &ApiKind,
    namespace: Option<&str>,
    name: &str,
    finalizer: &str,
) -> Result<bool, ApiError> {
    let obj = registry.get(kind, namespace, name).await?;
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(false);
    }
    let mut finalizers = gc::finalizers(&obj);
    if finalizers.iter().any(|f| f == finalizer) {
        return Ok(false);
    }
    finalizers.push(finalizer.to_string());
    gc::set_finalizers(registry, kind, &obj, &finalizers).await?;
    Ok(true)
}

/// Removes `finalizer` from object `name` (if it is there). Errors: as the registry's patch.
async fn remove_finalizer(
    registry: &Registry<RedbStore>,
    kind: &ApiKind,
    namespace: Option<&str>,
    name: &str,
    finalizer: &str,
) -> Result<(), ApiError> {
    let obj = registry.get(kind, namespace, name).await?;
    let finalizers = gc::finalizers(&obj);
    if !finalizers.iter().any(|f| f == finalizer) {
        return Ok(());
    }
    let left: Vec<String> = finalizers.into_iter().filter(|f| f != finalizer).collect();
    gc::set_finalizers(registry, kind, &obj, &left).await
}

/// `uri` with the version segment after the group (`/apis/<group>/<from>/...`) set to `to`.
fn with_version(uri: &http::Uri, from: &str, to: &str) -> http::Uri {
    let path = uri.path();
    let mut segs: Vec<&str> = path.split('/').collect();
    // ["", "apis", group, version, ...]
    if segs.len() > 3 && segs[1] == "apis" && segs[3] == from {
        segs[3] = to;
    }
    let path = segs.join("/");
    let path_and_query = match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path,
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = path_and_query.parse().ok();
    http::Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(
        group: &str,
        ns: Option<&str>,
        plural: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Target {
        Target {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            plural: plural.into(),
            name: name.map(Into::into),
            sub: sub.map(Into::into),
        }
    }

    #[test]
    fn paths_name_their_target_in_the_core_group_and_in_api_groups() {
        assert_eq!(
            Target::parse("/api/v1/namespaces/a/pods/p"),
            Some(t("", Some("a"), "pods", Some("p"), None))
        );
        assert_eq!(
            Target::parse("/api/v1/pods"),
            Some(t("", None, "pods", None, None))
        );
        assert_eq!(
            Target::parse("/api/v1/namespaces/a"),
            Some(t("", None, "namespaces", Some("a"), None))
        );
        assert_eq!(
            Target::parse("/api/v1/namespaces/a/status"),
            Some(t("", None, "namespaces", Some("a"), Some("status")))
        );
        assert_eq!(
            Target::parse("/apis/example.com/v1/namespaces/a/databases/d/status"),
            Some(t(
                "example.com",
                Some("a"),
                "databases",
                Some("d"),
                Some("status")
            ))
        );
        assert_eq!(Target::parse("/api/v1"), None);
        assert_eq!(Target::parse("/apis/apps/v1"), None);
    }
}
