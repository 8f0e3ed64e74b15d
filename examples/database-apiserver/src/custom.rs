//! The extra endpoint of the specification (section 4.1, step 5): `GET /custom` answers
//! `{"message": "This is a custom endpoint", "time": "<RFC 3339>"}`.
//!
//! The Go server this example is ported from adds it to `GenericAPIServer.Handler.NonGoRestfulMux`.
//! Here a route of your own is an axum [`Router`] handed to `ApiServer::serve` (in
//! `src/bin/apiserver.rs`): the server merges it beside its own endpoints and puts the same
//! authentication and authorization in front of it (with `--delegated-auth`, a caller needs RBAC on
//! the non-resource URL `/custom`). Add routes, not a fallback: the API server's fallback serves
//! `/apis/...`, and axum refuses a second one.
//!
//! In a cluster, kube-apiserver proxies only `/apis/db.example.com/...` to this server, so
//! `/custom` is reached on the server's own address (`kubectl --server https://... get --raw
//! /custom`), not through the cluster's API. Put such a route under the group's path to reach
//! it through kube-apiserver.

use rsbuilder_runtime::axum::routing::get;
use rsbuilder_runtime::axum::{Json, Router};
use serde::Serialize;

/// What `GET /custom` answers.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct CustomAnswer {
    /// Always `This is a custom endpoint`, as in the Go server.
    pub message: String,
    /// The server's clock when it answered, RFC 3339 in UTC, to the second (Go's
    /// `time.RFC3339`).
    pub time: String,
}

/// The answer at `now`.
pub fn answer(now: jiff::Timestamp) -> CustomAnswer {
    CustomAnswer {
        message: "This is a custom endpoint".to_owned(),
        time: now.round(jiff::Unit::Second).unwrap_or(now).to_string(),
    }
}

/// The routes this project serves beside the API: `GET /custom`. Any other method on it is
/// 405, as axum answers.
pub fn routes() -> Router {
    Router::new().route(
        "/custom",
        get(|| async { Json(answer(jiff::Timestamp::now())) }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_seeds_message_and_the_time_to_the_second() {
        let now: jiff::Timestamp = "2026-12-02T22:30:15.75Z".parse().unwrap();
        assert_eq!(
            answer(now),
            CustomAnswer {
                message: "This is a custom endpoint".into(),
                time: "2026-12-02T22:30:16Z".into(),
            }
        );
    }
}
