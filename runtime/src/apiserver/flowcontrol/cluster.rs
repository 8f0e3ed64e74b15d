// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The priority and fairness configuration read from the cluster, as k8s.io/apiserver's
//! config controller (`util/flowcontrol/apf_controller.go`) reads it in an aggregated server:
//! the FlowSchema and PriorityLevelConfiguration objects of `flowcontrol.apiserver.k8s.io/v1`
//! are listed and watched (kube-rs reflectors), and each change turns them into a
//! [`Configuration`] that [`FlowControl::reconfigure`] swaps in while requests run.
//!
//! - A FlowSchema naming a PriorityLevelConfiguration that does not exist is left out (with a
//!   warning), as kube leaves out a dangling schema; kube also marks it with a `Dangling`
//!   status condition, which this server does not write.
//! - An object this server finds invalid (see [`Configuration::from_objects`]) keeps the
//!   configuration running as it is, with a warning naming the object and the field, until
//!   the objects are valid again. kube instead ignores the one broken level and goes on.
//! - The mandatory `exempt` and `catch-all` objects are added when the cluster has none, as
//!   kube imagines them.
//! - Until both lists have been read, the configuration the server started with (the file's
//!   or the built-in one) runs.

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client};
use tokio_util::sync::CancellationToken;

use super::config::ConfigError;
use super::{Configuration, FlowControl};

/// The mandatory levels, which exist even when the cluster has no object of their name.
const MANDATORY: [&str; 2] = ["exempt", "catch-all"];

/// What [`apply_objects`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The configuration changed (`false`: the objects give the one already running).
    pub changed: bool,
    /// The FlowSchemas left out because their level does not exist.
    pub dangling: Vec<ConfigError>,
}

/// Turns the cluster's `schemas` and `levels` into a configuration and runs it in `fc`.
/// Schemas naming a level that does not exist are left out and reported in
/// [`Applied::dangling`]. Errors: the first invalid object, named with its field
/// ([`Configuration::from_objects`]); the configuration running is then kept.
pub fn apply_objects(
    fc: &FlowControl,
    mut schemas: Vec<FlowSchema>,
    mut levels: Vec<PriorityLevelConfiguration>,
) -> Result<Applied, ConfigError> {
    // The stores have no order; the configuration is compared with the running one.
    schemas.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    levels.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let names: HashSet<&str> = levels
        .iter()
        .filter_map(|l| l.metadata.name.as_deref())
        .chain(MANDATORY)
        .collect();
    let mut dangling = Vec::new();
    let mut kept = Vec::with_capacity(schemas.len());
    for s in schemas {
        let level = s.spec.priority_level_configuration.name.clone();
        if names.contains(level.as_str()) {
            kept.push(s);
        } else {
            dangling.push(ConfigError {
                object: format!(
                    "FlowSchema {:?}",
                    s.metadata.name.as_deref().unwrap_or_default()
                ),
                field: "spec.priorityLevelConfiguration.name".into(),
                message: format!(
                    "no PriorityLevelConfiguration {level:?} exists; the schema is ignored until it does"
                ),
            });
        }
    }
    let config = Configuration::from_objects(kept, levels)?;
    Ok(Applied {
        changed: fc.reconfigure(&config),
        dangling,
    })
}

/// What one watch event means here.
enum Note {
    /// A change after the list: the configuration is rebuilt.
    Changed,
    /// The list of one kind (0: FlowSchemas, 1: levels) has been read whole.
    Listed(usize),
    /// An object of a list still being read.
    Listing,
}

fn owned<K: Clone>(objects: Vec<Arc<K>>) -> Vec<K> {
    objects.into_iter().map(|o| (*o).clone()).collect()
}

fn note<K>(kind: usize, event: watcher::Event<K>) -> Note {
    match event {
        watcher::Event::Apply(_) | watcher::Event::Delete(_) => Note::Changed,
        watcher::Event::InitDone => Note::Listed(kind),
        watcher::Event::Init | watcher::Event::InitApply(_) => Note::Listing,
    }
}

/// Lists and watches the cluster's FlowSchemas and PriorityLevelConfigurations through
/// `client` and runs them in `fc` ([`apply_objects`]) once both lists are read and after each
/// change, until `shutdown`. Watch errors (no RBAC, the cluster unreachable) are logged and
/// retried with kube-rs's default backoff; invalid objects are logged (object and field) and
/// the configuration running is kept. The server needs `get`, `list` and `watch` on
/// `flowschemas` and `prioritylevelconfigurations` in `flowcontrol.apiserver.k8s.io`.
pub async fn run(client: Client, fc: Arc<FlowControl>, shutdown: CancellationToken) {
    let (schemas, schema_writer) = reflector::store::<FlowSchema>();
    let (levels, level_writer) = reflector::store::<PriorityLevelConfiguration>();
    let schema_events = reflector(
        schema_writer,
        watcher(
            Api::<FlowSchema>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .map(|e| e.map(|e| note(0, e)));
    let level_events = reflector(
        level_writer,
        watcher(
            Api::<PriorityLevelConfiguration>::all(client),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .map(|e| e.map(|e| note(1, e)));
    let mut events = std::pin::pin!(futures::stream::select(schema_events, level_events));
    let mut listed = [false, false];
    let mut last_error: Option<String> = None;
    loop {
        let event = tokio::select! {
            _ = shutdown.cancelled() => return,
            event = events.next() => event,
        };
        match event {
            None => return,
            Some(Err(e)) => {
                tracing::warn!(
                    error = %e,
                    "priority and fairness: watching FlowSchemas and PriorityLevelConfigurations"
                );
                continue;
            }
            Some(Ok(Note::Listing)) => continue,
            Some(Ok(Note::Listed(kind))) => listed[kind] = true,
            Some(Ok(Note::Changed)) => {}
        }
        if !listed.iter().all(|l| *l) {
            continue;
        }
        match apply_objects(&fc, owned(schemas.state()), owned(levels.state())) {
            Ok(applied) => {
                last_error = None;
                for d in &applied.dangling {
                    tracing::warn!("priority and fairness: {d}");
                }
                if applied.changed {
                    let running = fc.current();
                    let config = running.configuration();
                    tracing::info!(
                        flow_schemas = config.schemas().len(),
                        priority_levels = config.levels().len(),
                        "priority and fairness: running the cluster's configuration"
                    );
                }
            }
            Err(e) => {
                let message = e.to_string();
                if last_error.as_ref() != Some(&message) {
                    tracing::warn!(
                        "priority and fairness: {message}; keeping the configuration running"
                    );
                }
                last_error = Some(message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use axum::Router;
    use axum::body::Body;
    use axum::extract::{RawQuery, State};
    use axum::http::Request;
    use axum::routing::get;
    use bytes::Bytes;
    use serde_json::{Value, json};
    use tokio::sync::{Mutex, mpsc};
    use tower::ServiceExt;

    use super::*;
    use crate::apiserver::flowcontrol::filter::{self, FLOW_SCHEMA_UID, PRIORITY_LEVEL_UID};

    fn level(name: &str, uid: &str, shares: u32) -> Value {
        json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name, "uid": uid, "resourceVersion": "1"},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": shares,
                "limitResponse": {"type": "Reject"}
            }}
        })
    }

    /// A FlowSchema sending every `get` of `url` (`*`: every path) by anyone to `level`.
    fn schema(name: &str, uid: &str, precedence: i32, level: &str, url: &str) -> Value {
        json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": name, "uid": uid, "resourceVersion": "1"},
            "spec": {
                "matchingPrecedence": precedence,
                "priorityLevelConfiguration": {"name": level},
                "rules": [{
                    "subjects": [
                        {"kind": "Group", "group": {"name": "system:authenticated"}},
                        {"kind": "Group", "group": {"name": "system:unauthenticated"}}
                    ],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": [url]}]
                }]
            }
        })
    }

    fn object<K: serde::de::DeserializeOwned>(v: Value) -> K {
        serde_json::from_value(v).unwrap()
    }

    fn bootstrap() -> Arc<FlowControl> {
        FlowControl::new(&Configuration::bootstrap(), 600, Duration::from_secs(15))
    }

    #[test]
    fn an_invalid_object_keeps_the_configuration_running() {
        let fc = bootstrap();
        let err = apply_objects(
            &fc,
            vec![object(schema("bad", "u1", 20000, "global-default", "/x"))],
            vec![object(level("global-default", "u2", 20))],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "FlowSchema \"bad\": spec.matchingPrecedence: must be between 1 and 10000, got 20000"
        );
        assert_eq!(
            *fc.current().configuration(),
            Configuration::bootstrap(),
            "the bootstrap configuration still runs"
        );
    }

    #[test]
    fn a_dangling_schema_is_left_out_and_reported() {
        let fc = bootstrap();
        let applied = apply_objects(
            &fc,
            vec![
                object(schema("lost", "u1", 100, "nope", "/x")),
                object(schema("kept", "u3", 200, "global-default", "/y")),
            ],
            vec![object(level("global-default", "u2", 20))],
        )
        .unwrap();
        assert!(applied.changed);
        assert_eq!(
            applied.dangling,
            vec![ConfigError {
                object: "FlowSchema \"lost\"".into(),
                field: "spec.priorityLevelConfiguration.name".into(),
                message: "no PriorityLevelConfiguration \"nope\" exists; the schema is ignored until it does".into(),
            }]
        );
        let running = fc.current();
        let names: Vec<&str> = running
            .configuration()
            .schemas()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        // The mandatory exempt and catch-all schemas are added, in their places.
        assert_eq!(names, ["exempt", "kept", "catch-all"]);
    }

    /// A cluster serving FlowSchemas and PriorityLevelConfigurations: the lists are fixed, the
    /// FlowSchemas' first watch streams the lines sent to it, every other watch stays open
    /// with nothing.
    struct Cluster {
        schemas: Vec<Value>,
        levels: Vec<Value>,
        schema_events: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    }

    fn list(kind: &str, items: &[Value]) -> axum::response::Response {
        let body = json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": kind,
            "metadata": {"resourceVersion": "1"},
            "items": items,
        });
        axum::response::IntoResponse::into_response(axum::Json(body))
    }

    fn is_watch(query: &Option<String>) -> bool {
        query.as_deref().is_some_and(|q| q.contains("watch=true"))
    }

    async fn flowschemas(
        State(c): State<Arc<Cluster>>,
        RawQuery(query): RawQuery,
    ) -> axum::response::Response {
        if !is_watch(&query) {
            return list("FlowSchemaList", &c.schemas);
        }
        match c.schema_events.lock().await.take() {
            Some(rx) => axum::response::Response::new(Body::from_stream(futures::stream::unfold(
                rx,
                |mut rx| async move {
                    let line = rx.recv().await?;
                    Some((Ok::<_, Infallible>(Bytes::from(line)), rx))
                },
            ))),
            None => quiet(),
        }
    }

    fn quiet() -> axum::response::Response {
        axum::response::Response::new(Body::from_stream(futures::stream::pending::<
            Result<Bytes, Infallible>,
        >()))
    }

    async fn levels(
        State(c): State<Arc<Cluster>>,
        RawQuery(query): RawQuery,
    ) -> axum::response::Response {
        if is_watch(&query) {
            return quiet();
        }
        list("PriorityLevelConfigurationList", &c.levels)
    }

    async fn uids(app: &Router) -> (String, String) {
        let response = app
            .clone()
            .oneshot(Request::get("/version").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let header = |name: &str| response.headers()[name].to_str().unwrap().to_string();
        (header(FLOW_SCHEMA_UID), header(PRIORITY_LEVEL_UID))
    }

    #[tokio::test]
    async fn a_flowschema_created_in_the_cluster_classifies_later_requests() {
        let (events, rx) = mpsc::unbounded_channel();
        let cluster = Arc::new(Cluster {
            schemas: vec![schema("catch-all", "fs-catch-all", 10000, "catch-all", "*")],
            levels: vec![
                level("catch-all", "pl-catch-all", 5),
                level("global-default", "pl-global-default", 20),
            ],
            schema_events: Mutex::new(Some(rx)),
        });
        let api = Router::new()
            .route(
                "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
                get(flowschemas),
            )
            .route(
                "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
                get(levels),
            )
            .with_state(cluster);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, api)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await
        });
        let client = Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap();

        let fc = bootstrap();
        let app = Router::new()
            .route("/version", get(|| async { "{}" }))
            .layer(axum::middleware::from_fn_with_state(
                fc.clone(),
                filter::middleware,
            ));
        let before = uids(&app).await;
        assert_ne!(before.0, "fs-catch-all");
        let mut applied = fc.applied();
        tokio::spawn(run(client, fc.clone(), shutdown.clone()));

        // Both lists read: the cluster's catch-all takes the request.
        applied.changed().await.unwrap();
        assert_eq!(
            uids(&app).await,
            ("fs-catch-all".to_string(), "pl-catch-all".to_string())
        );

        // A FlowSchema for /version is created in the cluster.
        let added = json!({
            "type": "ADDED",
            "object": schema("version", "fs-version", 500, "global-default", "/version"),
        });
        events.send(format!("{added}\n")).unwrap();
        applied.changed().await.unwrap();
        assert_eq!(
            uids(&app).await,
            ("fs-version".to_string(), "pl-global-default".to_string())
        );
        shutdown.cancel();
    }
}
