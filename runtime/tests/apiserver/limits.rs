//! The limits on requests in flight under load on loopback, with API priority and fairness
//! ([`rsbuilder_runtime::apiserver::flowcontrol`], the default) and with the max-in-flight
//! pools it replaces ([`rsbuilder_runtime::apiserver::limits`]): many concurrent requests from tokio tasks against a served API, whose extra
//! `/hold` route keeps its slot until the test opens a gate, so the counts are exact without
//! any timing. Asserts status codes and counts only.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::routing::get;
use http_body_util::{BodyExt as _, Empty};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::UserInfo;
use kube_derive::CustomResource;
use rsbuilder_runtime::apiserver::flowcontrol;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::limits::{Limits, Pool};
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// A served kind, for the API's own paths.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    crates(kube_core = "::kube_core")
)]
pub struct DatabaseSpec {
    /// How many replicas to run.
    pub replicas: i32,
}

const DBS: &str = "/apis/example.com/v1/namespaces/ns/databases";

struct Fixture {
    _dir: tempfile::TempDir,
    addr: SocketAddr,
    server: Arc<ApiServer<RedbStore>>,
    /// `/hold` waits for a permit of this gate (it starts closed).
    gate: Arc<Semaphore>,
    /// One message each time a request enters `/hold` (it then holds its slot).
    /// The `x-user` of each request entering `/hold`, in the order they enter.
    entered: mpsc::UnboundedReceiver<String>,
    shutdown: CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

type Hold = (Arc<Semaphore>, mpsc::UnboundedSender<String>);

async fn hold(State((gate, entered)): State<Hold>, headers: HeaderMap) -> &'static str {
    let user = headers
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let _ = entered.send(user.to_string());
    if let Ok(p) = gate.acquire().await {
        p.forget();
    }
    "held"
}

/// The test's stand-in for authentication: the `x-user` header (`name` or `name@group`)
/// becomes the request's `UserInfo`, where delegated authentication puts it.
async fn user_from_header(mut req: Request) -> Request {
    let name = req
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(name) = name {
        // `name@group` puts the user in a group.
        let (name, groups) = match name.split_once('@') {
            Some((n, g)) => (n.to_string(), vec![g.to_string()]),
            None => (name, vec![]),
        };
        req.extensions_mut().insert(UserInfo {
            username: Some(name),
            groups: Some(groups),
            ..Default::default()
        });
    }
    req
}

/// A server with the max-in-flight `limits` (priority and fairness off, as
/// `--enable-priority-and-fairness=false`).
async fn fixture(limits: Limits) -> Fixture {
    let mut config = Config::new(vec![ApiKind::of::<Database>().unwrap()]);
    config.limits = limits;
    config.flowcontrol = None;
    fixture_with(config).await
}

async fn fixture_with(config: Config) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let shutdown = CancellationToken::new();
    let server = ApiServer::new(config, store, shutdown.clone());
    let gate = Arc::new(Semaphore::new(0));
    let (entered_tx, entered) = mpsc::unbounded_channel();
    let extra = Router::new()
        .route("/hold", get(hold).post(hold))
        .with_state((gate.clone(), entered_tx));
    // Both routers are guarded by the same server, so they share its slots.
    let app = server
        .guard(extra)
        .merge(server.router())
        .layer(axum::middleware::map_request(user_from_header));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .unwrap();
    });
    Fixture {
        _dir: dir,
        addr,
        server,
        gate,
        entered,
        shutdown,
    }
}

/// Sends one request on its own connection; the answer's head, with its body still open.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    user: Option<&str>,
) -> hyper::Response<Incoming> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost");
    if let Some(u) = user {
        req = req.header("x-user", u);
    }
    sender
        .send_request(req.body(Empty::<Bytes>::new()).unwrap())
        .await
        .unwrap()
}

/// What a finished request answered: code, `Retry-After`, body.
#[derive(Debug)]
struct Answer {
    user: String,
    code: u16,
    retry_after: Option<String>,
    body: String,
}

/// Starts `n` requests as `user` in tokio tasks; each sends its [`Answer`] on `tx`.
fn spawn_many(
    f: &Fixture,
    n: usize,
    method: &'static str,
    path: &'static str,
    user: Option<&'static str>,
    tx: &mpsc::UnboundedSender<Answer>,
) {
    for _ in 0..n {
        let (addr, tx) = (f.addr, tx.clone());
        tokio::spawn(async move {
            let resp = send(addr, method, path, user).await;
            let code = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            let _ = tx.send(Answer {
                user: user.unwrap_or("").into(),
                code,
                retry_after,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        });
    }
}

async fn receive(rx: &mut mpsc::UnboundedReceiver<Answer>, n: usize) -> Vec<Answer> {
    let mut out = Vec::new();
    while out.len() < n {
        out.push(
            rx.recv()
                .await
                .expect("a request task ended without answering"),
        );
    }
    out
}

/// Waits until `n` more requests have entered `/hold`; their users, in order.
async fn entered(f: &mut Fixture, n: usize) -> Vec<String> {
    let mut users = Vec::new();
    for _ in 0..n {
        users.push(f.entered.recv().await.expect("the server stopped"));
    }
    users
}

fn assert_too_many(a: &Answer) {
    assert_eq!(a.code, 429, "{a:?}");
    assert_eq!(a.retry_after.as_deref(), Some("1"), "{a:?}");
    let status: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["code"], 429);
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_pool_admits_its_limit_and_answers_429_past_it_watches_apart() {
    let mut f = fixture(Limits {
        max_requests_inflight: 4,
        max_mutating_requests_inflight: 2,
        max_watches_inflight: 3,
        user_share_percent: 100,
    })
    .await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    spawn_many(&f, 30, "GET", "/hold", None, &tx);
    spawn_many(&f, 20, "POST", "/hold", None, &tx);
    // Held requests cannot answer before the gate opens: the first 26 + 18 answers are the
    // rejections, and exactly 4 + 2 slots are held meanwhile.
    let rejected = receive(&mut rx, 26 + 18).await;
    rejected.iter().for_each(assert_too_many);
    entered(&mut f, 6).await;
    assert_eq!(f.server.inflight().in_use(Pool::ReadOnly), 4);
    assert_eq!(f.server.inflight().in_use(Pool::Mutating), 2);
    // With both pools full: health is never limited, an API read is 429, and watches are
    // counted apart (3 open at once, the 4th is 429).
    assert_eq!(send(f.addr, "GET", "/healthz", None).await.status(), 200);
    assert_eq!(send(f.addr, "GET", "/readyz", None).await.status(), 200);
    assert_eq!(send(f.addr, "GET", DBS, None).await.status(), 429);
    assert_eq!(send(f.addr, "DELETE", DBS, None).await.status(), 429);
    let watch = "/apis/example.com/v1/namespaces/ns/databases?watch=true";
    let mut watches = Vec::new();
    for _ in 0..3 {
        let w = send(f.addr, "GET", watch, None).await;
        assert_eq!(w.status(), 200);
        watches.push(w);
    }
    assert_eq!(f.server.inflight().in_use(Pool::Watch), 3);
    assert_eq!(send(f.addr, "GET", watch, None).await.status(), 429);
    // The gate opens: every held request completes.
    f.gate.add_permits(1000);
    let admitted = receive(&mut rx, 6).await;
    assert!(
        admitted.iter().all(|a| a.code == 200 && a.body == "held"),
        "{admitted:?}"
    );
    // The slots are free again: a read goes through.
    assert_eq!(send(f.addr, "GET", DBS, None).await.status(), 200);
    drop(watches);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_user_holds_at_most_its_share_and_others_still_get_in() {
    let mut f = fixture(Limits {
        max_requests_inflight: 10,
        max_mutating_requests_inflight: 10,
        max_watches_inflight: 0,
        user_share_percent: 30,
    })
    .await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // alice floods; 30% of 10 slots is 3.
    spawn_many(&f, 40, "GET", "/hold", Some("alice"), &tx);
    let rejected = receive(&mut rx, 37).await;
    rejected.iter().for_each(assert_too_many);
    assert!(rejected.iter().all(|a| a.user == "alice"));
    entered(&mut f, 3).await;
    assert_eq!(f.server.inflight().in_use(Pool::ReadOnly), 3);
    // bob and carol get their share each (nobody else is turned away for alice); the pool
    // then has 1 slot left, taken by dave.
    spawn_many(&f, 3, "GET", "/hold", Some("bob"), &tx);
    spawn_many(&f, 3, "GET", "/hold", Some("carol"), &tx);
    entered(&mut f, 6).await;
    assert_eq!(f.server.inflight().in_use(Pool::ReadOnly), 9);
    spawn_many(&f, 2, "GET", "/hold", Some("dave"), &tx);
    // 3 + 3 + 3 = 9 held, dave takes the 10th; dave's second request is over the pool.
    let rejected = receive(&mut rx, 1).await;
    assert_too_many(&rejected[0]);
    assert_eq!(rejected[0].user, "dave");
    entered(&mut f, 1).await;
    assert_eq!(f.server.inflight().in_use(Pool::ReadOnly), 10);
    // A user's share is per pool: alice can still write.
    spawn_many(&f, 1, "POST", "/hold", Some("alice"), &tx);
    f.gate.add_permits(1000);
    let admitted = receive(&mut rx, 11).await;
    assert!(admitted.iter().all(|a| a.code == 200), "{admitted:?}");
    let count = |u: &str| admitted.iter().filter(|a| a.user == u).count();
    assert_eq!(
        (count("alice"), count("bob"), count("carol"), count("dave")),
        (4, 3, 3, 1)
    );
}

/// The bootstrap configuration and a `work` level (`queues`, hands of `hand_size`) that every
/// authenticated user's request goes to, one flow per user, ahead of `global-default`.
fn work_config(queues: u32, hand_size: u32, queue_length_limit: u32) -> Config {
    let yaml = format!(
        "{}---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: work, uid: level-uid-work}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse: {{type: Queue, queuing: {{queues: {queues}, handSize: {hand_size}, queueLengthLimit: {queue_length_limit}}}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: users, uid: schema-uid-users}}
spec:
  matchingPrecedence: 500
  priorityLevelConfiguration: {{name: work}}
  distinguisherMethod: {{type: ByUser}}
  rules:
  - subjects: [{{kind: Group, group: {{name: \"system:authenticated\"}}}}]
    resourceRules: [{{verbs: [\"*\"], apiGroups: [\"*\"], resources: [\"*\"], clusterScope: true, namespaces: [\"*\"]}}]
    nonResourceRules: [{{verbs: [\"*\"], nonResourceURLs: [\"*\"]}}]
",
        flowcontrol::config::BOOTSTRAP_YAML
    );
    let mut config = Config::new(vec![ApiKind::of::<Database>().unwrap()]);
    config.flowcontrol = Some(flowcontrol::Configuration::from_yaml(&yaml).unwrap());
    // One seat in all: every limited level gets ceil(1 * shares / total) = 1.
    config.limits.max_requests_inflight = 1;
    config.limits.max_mutating_requests_inflight = 0;
    config
}

/// Waits (yielding, no deadline of its own: the test harness's) until the `work` level has
/// `waiting` requests queued and `executing` running.
async fn work_counts(f: &Fixture, waiting: usize, executing: usize) {
    let fc = f.server.flow_control().expect("flow control runs").clone();
    let queues = fc.level("work").unwrap().queues.clone().unwrap();
    let mut seen = (usize::MAX, usize::MAX);
    for _ in 0..100_000 {
        seen = queues.counts();
        if seen == (waiting, executing) {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the work level never had {waiting} waiting, {executing} executing; last {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flooding_user_cannot_starve_a_quiet_one() {
    let mut f = fixture_with(work_config(8, 2, 100)).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // alice takes the level's one seat, then floods: 30 more wait in her hand's queues.
    spawn_many(&f, 1, "GET", "/hold", Some("alice"), &tx);
    assert_eq!(entered(&mut f, 1).await, ["alice"]);
    spawn_many(&f, 30, "GET", "/hold", Some("alice"), &tx);
    work_counts(&f, 30, 1).await;
    // bob asks 3 times after all of alice's requests.
    spawn_many(&f, 3, "POST", "/hold", Some("bob"), &tx);
    work_counts(&f, 33, 1).await;
    // The seat is freed one request at a time; record who gets it.
    let mut order = Vec::new();
    for _ in 0..33 {
        f.gate.add_permits(1);
        order.extend(entered(&mut f, 1).await);
    }
    let bob: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, u)| *u == "bob")
        .map(|(i, _)| i + 1)
        .collect();
    // alice's flood is in (at most) 2 queues, bob in a third: the busy queues take turns, so
    // bob's 3 requests go within the first 3 turns of 3 dispatches each.
    assert_eq!(bob.len(), 3, "{order:?}");
    assert!(bob[2] <= 9, "bob dispatched at turns {bob:?} of {order:?}");
    // Under FIFO (the max-in-flight pools' order) bob would come 31st to 33rd.
    f.gate.add_permits(1000);
    let answers = receive(&mut rx, 34).await;
    assert!(answers.iter().all(|a| a.code == 200), "{answers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_queue_is_429_with_the_pf_headers_and_exempt_requests_still_pass() {
    // One queue of at most 2 waiting.
    let mut f = fixture_with(work_config(1, 1, 2)).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // One runs, two wait; the next 5 find the queue full.
    spawn_many(&f, 8, "GET", "/hold", Some("alice"), &tx);
    entered(&mut f, 1).await;
    let rejected = receive(&mut rx, 5).await;
    rejected.iter().for_each(assert_too_many);
    work_counts(&f, 2, 1).await;
    let resp = send(f.addr, "GET", "/hold", Some("alice")).await;
    assert_eq!(resp.status(), 429);
    let header = |r: &hyper::Response<Incoming>, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(
        header(&resp, "x-kubernetes-pf-flowschema-uid").as_deref(),
        Some("schema-uid-users")
    );
    assert_eq!(
        header(&resp, "x-kubernetes-pf-prioritylevel-uid").as_deref(),
        Some("level-uid-work")
    );
    assert_eq!(header(&resp, "retry-after").as_deref(), Some("1"));
    // Probes and system:masters are exempt (kube's `probes` and `exempt` schemas); an
    // anonymous read goes to global-default, whose seat is free.
    let health = send(f.addr, "GET", "/healthz", None).await;
    assert_eq!(health.status(), 200);
    let exempt_uid = header(&health, "x-kubernetes-pf-prioritylevel-uid");
    let root = send(f.addr, "GET", DBS, Some("root@system:masters")).await;
    assert_eq!(root.status(), 200);
    assert_eq!(
        header(&root, "x-kubernetes-pf-prioritylevel-uid"),
        exempt_uid
    );
    assert_ne!(exempt_uid.as_deref(), Some("level-uid-work"));
    let anonymous = send(f.addr, "GET", DBS, None).await;
    assert_eq!(anonymous.status(), 200);
    // The rejections are counted under kube's metric names.
    let metrics = send(f.addr, "GET", "/metrics", Some("root@system:masters")).await;
    let text = metrics.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains(
            "apiserver_flowcontrol_rejected_requests_total{priority_level=\"work\",flow_schema=\"users\",reason=\"queue-full\"} 6"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "apiserver_flowcontrol_current_inqueue_requests{priority_level=\"work\",flow_schema=\"users\"} 2"
        ),
        "{text}"
    );
    f.gate.add_permits(1000);
    let admitted = receive(&mut rx, 3).await;
    assert!(admitted.iter().all(|a| a.code == 200), "{admitted:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_gives_its_seat_back_once_it_is_open() {
    let mut f = fixture_with(work_config(8, 2, 10)).await;
    let watch = "/apis/example.com/v1/namespaces/ns/databases?watch=true";
    // The level has one seat: open watches do not keep it.
    let mut watches = Vec::new();
    for _ in 0..3 {
        let w = send(f.addr, "GET", watch, Some("alice")).await;
        assert_eq!(w.status(), 200);
        watches.push(w);
    }
    work_counts(&f, 0, 0).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    spawn_many(&f, 1, "GET", "/hold", Some("alice"), &tx);
    assert_eq!(entered(&mut f, 1).await, ["alice"]);
    f.gate.add_permits(1);
    assert_eq!(receive(&mut rx, 1).await[0].code, 200);
    drop(watches);
}
