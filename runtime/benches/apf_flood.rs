//! The quiet user's latency while another user floods the server: API
//! priority and fairness against the max-in-flight pools, on plain HTTP over loopback.
//!
//!   cargo bench -p rsbuilder-runtime --features apiserver --bench apf_flood
//!
//! A `/work` route of the server's guard takes 2 ms (a stand-in for a request's work). alice
//! runs `FLOOD` connections sending back to back; bob sends `QUIET` requests one after the
//! other. Both are in the same priority level (`global-default`, one flow each) with 12 seats,
//! and the max-in-flight pool has 12 slots, so the runs compare like with like. Printed: bob's
//! p50 and p99 latency of answered requests, his 429s, alice's answered and 429 counts. Wall
//! clock figures: note the machine's load (`uptime`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::routing::get;
use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::UserInfo;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use tokio_util::sync::CancellationToken;

const FLOOD: usize = 64;
const QUIET: usize = 200;

async fn user_from_header(mut req: Request) -> Request {
    let name = req
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(name) = name {
        req.extensions_mut().insert(UserInfo {
            username: Some(name),
            ..Default::default()
        });
    }
    req
}

async fn serve(config: Config, shutdown: CancellationToken) -> (SocketAddr, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let server = ApiServer::new(config, store, shutdown.clone());
    let work = Router::new().route(
        "/work",
        get(|| async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            "done"
        }),
    );
    let app = server
        .guard(work)
        .layer(axum::middleware::map_request(user_from_header));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .unwrap();
    });
    (addr, dir)
}

/// One keep-alive connection sending as `user`; each call returns the status code.
async fn connect(addr: SocketAddr) -> hyper::client::conn::http1::SendRequest<Empty<Bytes>> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

async fn call(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    user: &str,
) -> u16 {
    sender.ready().await.unwrap();
    let req = hyper::Request::get("/work")
        .header("host", "localhost")
        .header("x-user", user)
        .body(Empty::new())
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let code = resp.status().as_u16();
    let _ = resp.into_body().collect().await;
    code
}

async fn run(name: &str, config: Config) {
    let shutdown = CancellationToken::new();
    let (addr, _dir) = serve(config, shutdown.clone()).await;
    let stop = Arc::new(AtomicBool::new(false));
    let (alice_ok, alice_429) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut flood = Vec::new();
    for _ in 0..FLOOD {
        let (stop, ok, refused) = (stop.clone(), alice_ok.clone(), alice_429.clone());
        flood.push(tokio::spawn(async move {
            let mut sender = connect(addr).await;
            while !stop.load(Ordering::Relaxed) {
                match call(&mut sender, "alice").await {
                    200 => ok.fetch_add(1, Ordering::Relaxed),
                    _ => refused.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    // Let the flood fill the seats and queues.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut sender = connect(addr).await;
    let (mut latencies, mut bob_429) = (Vec::new(), 0);
    for _ in 0..QUIET {
        let start = Instant::now();
        if call(&mut sender, "bob").await == 200 {
            latencies.push(start.elapsed());
        } else {
            bob_429 += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for f in flood {
        let _ = f.await;
    }
    shutdown.cancel();
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .map(|d| format!("{:.1} ms", d.as_secs_f64() * 1000.0))
            .unwrap_or_else(|| "-".into())
    };
    println!(
        "| {name} | {} | {} | {} of {QUIET} | {} | {} |",
        pct(0.5),
        pct(0.99),
        bob_429,
        alice_ok.load(Ordering::Relaxed),
        alice_429.load(Ordering::Relaxed),
    );
}

#[tokio::main]
async fn main() {
    println!("| server | bob p50 | bob p99 | bob 429 | alice answered | alice 429 |");
    println!("|---|---|---|---|---|---|");
    // Priority and fairness: 105 seats give global-default ceil(105 * 20 / 175) = 12.
    let mut apf = Config::new(vec![]);
    apf.limits.max_requests_inflight = 105;
    apf.limits.max_mutating_requests_inflight = 0;
    run("priority and fairness (12 seats)", apf).await;
    for share in [50, 100] {
        let mut mif = Config::new(vec![]);
        mif.flowcontrol = None;
        mif.limits.max_requests_inflight = 12;
        mif.limits.user_share_percent = share;
        run(
            &format!("max-in-flight, 12 slots, user share {share}%"),
            mif,
        )
        .await;
    }
}
