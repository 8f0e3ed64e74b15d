// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! A limit on requests in flight, as kube-apiserver's `--max-requests-inflight` and
//! `--max-mutating-requests-inflight` set it, with a simple fairness rule per user.
//!
//! Each request takes a slot of one pool until its answer is complete: GET, HEAD and OPTIONS
//! of the read-only pool, POST, PUT, PATCH and DELETE of the mutating pool, and a watch
//! (`watch=true`) of the watch pool, which is counted apart as kube-apiserver does not count
//! long-running requests in the first two (a watch holds its slot until its stream ends). No
//! request waits: a full pool is answered at once with 429 TooManyRequests and `Retry-After:
//! 1`, as kube-apiserver's max-in-flight filter answers. Fairness: one user (the
//! authenticated `UserInfo` that [`super::auth`] puts on the request) may hold at most
//! [`Limits::user_share_percent`] of a pool's slots; past that, that user gets 429 while the
//! others still get in. Requests without a user (no delegated authentication) are counted
//! in the pools only. `/healthz`, `/livez` and `/readyz` are never limited, so a busy server
//! is not restarted by its probes. A limit of 0 turns that pool's limit off, as the flags do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use k8s_openapi::api::authentication::v1::UserInfo;

use super::auth::ALWAYS_ALLOW_PATHS;
use super::status::ApiError;

/// The limits. [`Limits::default`] has kube-apiserver's defaults (400 read-only, 200
/// mutating), no limit on watches, and a user share of 50%.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Read-only requests in flight at once (`--max-requests-inflight`; 0: no limit).
    pub max_requests_inflight: usize,
    /// Mutating requests in flight at once (`--max-mutating-requests-inflight`; 0: no limit).
    pub max_mutating_requests_inflight: usize,
    /// Watches open at once (0: no limit).
    pub max_watches_inflight: usize,
    /// The share, in percent (1..=100), of a pool's slots one user may hold; at least one
    /// slot. 100 turns the rule off.
    pub user_share_percent: u8,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            max_watches_inflight: 0,
            user_share_percent: 50,
        }
    }
}

/// The pool a request takes its slot from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pool {
    /// GET, HEAD, OPTIONS (not watches).
    ReadOnly,
    /// POST, PUT, PATCH, DELETE.
    Mutating,
    /// `watch=true` or `watch=1`.
    Watch,
}

impl Pool {
    /// The pool of a request with `method` and `query` (the raw query string).
    pub fn of(method: &Method, query: Option<&str>) -> Self {
        let watch = query.is_some_and(|q| {
            q.split('&')
                .any(|kv| matches!(kv, "watch=true" | "watch=1"))
        });
        match *method {
            Method::GET if watch => Pool::Watch,
            Method::GET | Method::HEAD | Method::OPTIONS => Pool::ReadOnly,
            _ => Pool::Mutating,
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    pools: HashMap<Pool, usize>,
    users: HashMap<(Pool, String), usize>,
}

/// The slots in use, shared by every request of one server.
#[derive(Debug, Default)]
pub struct InFlight {
    limits: Limits,
    counts: Mutex<Counts>,
}

/// A slot held; given back when dropped.
struct Slot {
    inflight: Arc<InFlight>,
    pool: Pool,
    user: Option<String>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self
            .inflight
            .counts
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = c.pools.get_mut(&self.pool) {
            *n = n.saturating_sub(1);
        }
        if let Some(user) = self.user.take() {
            let key = (self.pool, user);
            if let Some(n) = c.users.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    c.users.remove(&key);
                }
            }
        }
    }
}

impl InFlight {
    /// No slot in use yet, under `limits`.
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            counts: Mutex::default(),
        })
    }

    /// The requests of `pool` in flight now.
    pub fn in_use(&self, pool: Pool) -> usize {
        let c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.pools.get(&pool).copied().unwrap_or(0)
    }

    fn limit(&self, pool: Pool) -> usize {
        match pool {
            Pool::ReadOnly => self.limits.max_requests_inflight,
            Pool::Mutating => self.limits.max_mutating_requests_inflight,
            Pool::Watch => self.limits.max_watches_inflight,
        }
    }

    /// Takes a slot of `pool` for `user`, or `None` when the pool or the user's share is full.
    fn acquire(self: &Arc<Self>, pool: Pool, user: Option<&str>) -> Option<Slot> {
        let limit = self.limit(pool);
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let used = c.pools.get(&pool).copied().unwrap_or(0);
        if limit > 0 && used >= limit {
            return None;
        }
        let share = usize::from(self.limits.user_share_percent.clamp(1, 100));
        if let Some(u) = user
            && limit > 0
            && share < 100
        {
            let cap = (limit * share / 100).max(1);
            let held = c.users.get(&(pool, u.to_string())).copied().unwrap_or(0);
            if held >= cap {
                return None;
            }
            *c.users.entry((pool, u.to_string())).or_insert(0) += 1;
        }
        *c.pools.entry(pool).or_insert(0) += 1;
        Some(Slot {
            inflight: self.clone(),
            pool,
            user: user
                .filter(|_| limit > 0 && share < 100)
                .map(str::to_string),
        })
    }
}

/// 429 TooManyRequests with `Retry-After: 1`, the answer to a request over a limit.
fn too_many() -> Response {
    let mut r = ApiError::too_many_requests().into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The axum middleware (`from_fn_with_state(inflight, limits::middleware)`): takes a slot for
/// the request or answers 429; the slot is held until the response body has been sent.
pub async fn middleware(
    State(inflight): State<Arc<InFlight>>,
    request: Request,
    next: Next,
) -> Response {
    if ALWAYS_ALLOW_PATHS.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let pool = Pool::of(request.method(), request.uri().query());
    let user = request
        .extensions()
        .get::<UserInfo>()
        .and_then(|u| u.username.clone());
    let Some(slot) = inflight.acquire(pool, user.as_deref()) else {
        return too_many();
    };
    let response = next.run(request).await;
    if pool != Pool::Watch {
        return response;
    }
    // A watch answers at once and streams on: the slot goes with the body.
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _held = &slot;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}
