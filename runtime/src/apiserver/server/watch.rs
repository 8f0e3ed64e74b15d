// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! GET of a collection with `watch=true`, as k8s.io/apiserver's `handlers/watch.go` streams
//! it: options (the watch half of `ValidateListOptions`), the registry's watch, then
//! newline-separated JSON events (or Table rows), with bookmarks when asked and the initial
//! events' end marked for `sendInitialEvents=true`, until `timeoutSeconds`, the server's
//! longest watch or shutdown.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::super::kind::ApiKind;
use super::super::registry::{Event, WatchStream};
use super::super::status::ApiError;
use super::super::storage::Storage;
use super::super::table::{self, IncludeObject};
use super::Scope;
use super::options::Verb;

/// The watch of the collection `s` names. Errors: the options' (400, 422), the registry's
/// (400 on a bad resourceVersion).
pub async fn watch<S: Storage>(s: &Scope<'_, S>) -> Result<Response, ApiError> {
    s.opts.validate(Verb::Watch)?;
    let srv = s.srv;
    let mut opts = s.opts.list_options(s.kind)?;
    let send_initial = s.opts.send_initial_events == Some(true);
    if send_initial {
        opts.resource_version = None;
    }
    let bookmarks = s.opts.allow_watch_bookmarks;
    let timeout = s
        .opts
        .timeout_seconds
        .map_or(srv.config.max_watch, Duration::from_secs)
        .min(srv.config.max_watch);
    let (initial, stream) = srv.registry.watch(s.kind, s.namespace, &opts).await?;
    let state = WatchState {
        kind: s.kind.clone(),
        initial: initial.into(),
        initial_end: send_initial && bookmarks,
        stream,
        bookmarks,
        interval: tokio::time::interval_at(
            tokio::time::Instant::now() + srv.config.bookmark_interval,
            srv.config.bookmark_interval,
        ),
        deadline: tokio::time::Instant::now() + timeout,
        shutdown: srv.shutdown.clone(),
        table: s.accepts.table,
        metadata: s.accepts.metadata,
        include: s.opts.include_object,
        headers_sent: false,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        let event = s.next().await?;
        let line = s.encode(event);
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(line)), s))
    });
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;stream=watch"),
    );
    Ok(r)
}

/// An open watch: the initial events still to send, the store's stream, bookmarks and the
/// deadline.
struct WatchState {
    kind: ApiKind,
    initial: std::collections::VecDeque<Event>,
    initial_end: bool,
    stream: WatchStream,
    bookmarks: bool,
    interval: tokio::time::Interval,
    deadline: tokio::time::Instant,
    shutdown: CancellationToken,
    table: bool,
    /// PartialObjectMetadata events ([`super::encode::partial`]).
    metadata: bool,
    include: IncludeObject,
    headers_sent: bool,
}

impl WatchState {
    fn bookmark(&self, initial_end: bool) -> Event {
        let mut metadata = json!({"resourceVersion": self.stream.progress().to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        Event {
            kind: "BOOKMARK",
            object: json!({"kind": self.kind.kind, "apiVersion": self.kind.api_version(), "metadata": metadata}),
        }
    }

    async fn next(&mut self) -> Option<Event> {
        if let Some(e) = self.initial.pop_front() {
            return Some(e);
        }
        if self.initial_end {
            self.initial_end = false;
            return Some(self.bookmark(true));
        }
        let bookmarks = self.bookmarks;
        tokio::select! {
            _ = self.shutdown.cancelled() => None,
            _ = tokio::time::sleep_until(self.deadline) => None,
            _ = self.interval.tick(), if bookmarks => Some(self.bookmark(false)),
            e = self.stream.next() => e,
        }
    }

    fn encode(&mut self, mut event: Event) -> String {
        if self.metadata && event.kind != "ERROR" {
            event.object = super::encode::partial(&event.object);
        }
        if self.table && matches!(event.kind, "ADDED" | "MODIFIED" | "DELETED") {
            let rv = event.object["metadata"]["resourceVersion"].clone();
            event.object = table::table(
                &self.kind,
                &[event.object],
                json!({"resourceVersion": rv}),
                self.include,
                !self.headers_sent,
            );
            self.headers_sent = true;
        }
        let mut line = json!({"type": event.kind, "object": event.object}).to_string();
        line.push('\n');
        line
    }
}
