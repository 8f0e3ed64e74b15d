// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
use super::*;
use crate::apiserver::storage::RedbStore;
use axum::http::Request;
use serde_json::{Value, json};
use tower::ServiceExt;

pub(crate) fn kind() -> ApiKind {
    let mut k = crate::apiserver::registry::tests::database_kind();
    k.columns = vec![
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition {
            name: "Replicas".into(),
            type_: "integer".into(),
            json_path: ".spec.replicas".into(),
            ..Default::default()
        },
    ];
    k
}

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    router: Router,
    shutdown: CancellationToken,
}

pub(crate) fn fixture(tweak: impl FnOnce(&mut Config)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let mut config = Config::new(vec![kind()]);
    tweak(&mut config);
    let shutdown = CancellationToken::new();
    let server = ApiServer::new(config, store, shutdown.clone());
    Fixture {
        _dir: dir,
        router: server.router(),
        shutdown,
    }
}

pub(crate) async fn call(
    f: &Fixture,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = f
        .router
        .clone()
        .oneshot(req.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let code = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

pub(crate) fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

pub(crate) const DBS: &str = "/apis/example.com/v1/namespaces/ns/databases";
pub(crate) const BODY: &str = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":2}}"#;

#[tokio::test]
async fn errors_are_status_objects_with_the_api_servers_codes() {
    let f = fixture(|c| c.max_body_bytes = 200);
    let (code, body) = call(&f, "GET", &format!("{DBS}/nope"), &[], "").await;
    let s = json_of(&body);
    assert_eq!(
        (
            code,
            s["kind"].as_str(),
            s["reason"].as_str(),
            s["code"].as_u64()
        ),
        (404, Some("Status"), Some("NotFound"), Some(404))
    );
    assert_eq!(
        s["details"],
        json!({"name": "nope", "group": "example.com", "kind": "databases"})
    );
    assert_eq!(
        call(&f, "GET", "/apis/other.io/v1/things", &[], "").await.0,
        404
    );
    assert_eq!(
        call(&f, "POST", &format!("{DBS}/a"), &[], BODY).await.0,
        405
    );
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(300));
    let (code, body) = call(&f, "POST", DBS, &[], &big).await;
    assert_eq!(
        (code, json_of(&body)["reason"].as_str()),
        (413, Some("RequestEntityTooLarge"))
    );
    let (code, _) = call(
        &f,
        "GET",
        DBS,
        &[("accept", "application/json;as=Widget;v=v1;g=x")],
        "",
    )
    .await;
    assert_eq!(code, 406);
    assert_eq!(call(&f, "POST", DBS, &[], "{not json").await.0, 400);
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &[("content-type", "application/strategic-merge-patch+json")],
        "{}",
    )
    .await;
    assert_eq!(
        (code, json_of(&body)["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
}

#[tokio::test]
async fn create_answers_201_and_a_table_when_asked() {
    let f = fixture(|_| {});
    let (code, body) = call(&f, "POST", DBS, &[], BODY).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(json_of(&body)["metadata"]["resourceVersion"], "1");
    let accept = [(
        "accept",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )];
    let (code, body) = call(&f, "GET", DBS, &accept, "").await;
    assert_eq!(code, 200);
    let t = json_of(&body);
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Replicas"]);
    assert_eq!(t["rows"][0]["cells"], json!(["a", 2]));
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(t["metadata"]["resourceVersion"], "1");
}

#[tokio::test]
async fn discovery_lists_the_group_its_versions_and_resources() {
    let f = fixture(|_| {});
    let groups = json_of(&call(&f, "GET", "/apis", &[], "").await.1);
    assert_eq!(groups["kind"], "APIGroupList");
    assert_eq!(groups["groups"][0]["name"], "example.com");
    assert_eq!(
        groups["groups"][0]["preferredVersion"],
        json!({"groupVersion": "example.com/v1", "version": "v1"})
    );
    let group = json_of(&call(&f, "GET", "/apis/example.com", &[], "").await.1);
    assert_eq!(group["kind"], "APIGroup");
    let rl = json_of(&call(&f, "GET", "/apis/example.com/v1", &[], "").await.1);
    assert_eq!(
        rl["resources"][0]["verbs"],
        json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
    assert_eq!(rl["resources"][0]["shortNames"], json!(["db"]));
    assert_eq!(
        rl["resources"][1]["verbs"],
        json!(["get", "patch", "update"])
    );
    let version = json_of(&call(&f, "GET", "/version", &[], "").await.1);
    assert_eq!(
        version["gitVersion"],
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(call(&f, "GET", "/livez", &[], "").await, (200, "ok".into()));
}

#[tokio::test]
async fn readyz_fails_once_shutdown_begins_and_watches_end() {
    let f = fixture(|_| {});
    assert_eq!(call(&f, "GET", "/readyz", &[], "").await.0, 200);
    // A watch open at shutdown ends, so the connection can close.
    let watch = tokio::spawn({
        let router = f.router.clone();
        async move {
            let req = Request::get(format!("{DBS}?watch=true"))
                .body(Body::empty())
                .unwrap();
            let resp = router.oneshot(req).await.unwrap();
            axum::body::to_bytes(resp.into_body(), usize::MAX)
                .await
                .unwrap()
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    f.shutdown.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(5), watch).await;
    assert!(ended.is_ok(), "the watch did not end at shutdown");
    assert_eq!(call(&f, "GET", "/readyz", &[], "").await.0, 500);
    assert_eq!(call(&f, "GET", "/livez", &[], "").await.0, 200);
}

#[tokio::test]
async fn a_watch_streams_events_and_bookmarks_from_a_resource_version() {
    let f = fixture(|c| c.bookmark_interval = Duration::from_millis(200));
    call(&f, "POST", DBS, &[], BODY).await;
    let uri =
        format!("{DBS}?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=1");
    let writer = {
        let router = f.router.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let req = Request::patch(format!("{DBS}/a"))
                .header("content-type", "application/merge-patch+json")
                .body(Body::from(r#"{"spec":{"replicas":3}}"#))
                .unwrap();
            router.oneshot(req).await.unwrap().status()
        })
    };
    let (code, body) = call(&f, "GET", &uri, &[], "").await;
    assert_eq!(writer.await.unwrap(), 200);
    assert_eq!(code, 200);
    let events: Vec<Value> = body.lines().map(json_of).collect();
    assert_eq!(events[0]["type"], "MODIFIED");
    assert_eq!(events[0]["object"]["spec"]["replicas"], 3);
    assert_eq!(events[0]["object"]["metadata"]["resourceVersion"], "2");
    let bookmark = events
        .iter()
        .find(|e| e["type"] == "BOOKMARK")
        .expect("a bookmark within the second");
    assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], "2");
    assert_eq!(bookmark["object"]["kind"], "Database");
}

/// A store whose creates take 10 s: a request that outlives the time limit.
struct SlowStore(RedbStore);

impl Storage for SlowStore {
    async fn get(
        &self,
        key: &str,
    ) -> Result<Option<crate::apiserver::storage::Versioned>, crate::apiserver::storage::StoreError>
    {
        self.0.get(key).await
    }
    async fn list(
        &self,
        prefix: &str,
        range: crate::apiserver::storage::ListRange<'_>,
    ) -> Result<crate::apiserver::storage::ListResult, crate::apiserver::storage::StoreError> {
        self.0.list(prefix, range).await
    }
    async fn create(
        &self,
        key: &str,
        value: Value,
    ) -> Result<u64, crate::apiserver::storage::StoreError> {
        tokio::time::sleep(Duration::from_secs(10)).await;
        self.0.create(key, value).await
    }
    async fn update(
        &self,
        key: &str,
        value: Value,
        expected: u64,
    ) -> Result<u64, crate::apiserver::storage::StoreError> {
        self.0.update(key, value, expected).await
    }
    async fn delete(
        &self,
        key: &str,
        expected: Option<u64>,
    ) -> Result<crate::apiserver::storage::Versioned, crate::apiserver::storage::StoreError> {
        self.0.delete(key, expected).await
    }
    async fn watch(
        &self,
        prefix: &str,
        after: u64,
    ) -> Result<crate::apiserver::storage::Watch, crate::apiserver::storage::StoreError> {
        self.0.watch(prefix, after).await
    }
    async fn revision(&self) -> Result<u64, crate::apiserver::storage::StoreError> {
        self.0.revision().await
    }
    async fn compact(&self, revision: u64) -> Result<(), crate::apiserver::storage::StoreError> {
        self.0.compact(revision).await
    }
}

#[tokio::test]
async fn a_request_past_the_time_limit_is_a_504_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(vec![kind()]);
    config.request_timeout = Duration::from_millis(50);
    let store = SlowStore(RedbStore::open(&dir.path().join("db")).unwrap());
    let router = ApiServer::new(config, store, CancellationToken::new()).router();
    let req = Request::post(DBS).body(Body::from(BODY)).unwrap();
    let resp = router.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 504);
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(
        json_of(&String::from_utf8_lossy(&bytes))["reason"],
        "Timeout"
    );
}

/// Sends `request` on `stream` and reads the answer until the server closes the connection
/// (failing when it does not within 30 s: the request was never cut).
async fn exchange(stream: &mut tokio::net::TcpStream, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let closed = tokio::time::timeout(Duration::from_secs(30), read).await;
    assert!(closed.is_ok(), "no answer, the request was never cut");
    String::from_utf8_lossy(&answer).into_owned()
}

/// A POST of `body` to the databases, on its own connection.
async fn post_over_tcp(addr: std::net::SocketAddr, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {DBS} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(&mut stream, request.as_bytes()).await
}

/// A server for the databases with `tweak`ed config, served over plain TCP on a free port.
/// Out: the server, its address, and what keeps it running (its store's directory, and the
/// shutdown when dropped).
async fn serve_over_tcp(
    tweak: impl FnOnce(&mut Config),
) -> (
    Arc<ApiServer<RedbStore>>,
    std::net::SocketAddr,
    (tempfile::TempDir, tokio_util::sync::DropGuard),
) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(vec![kind()]);
    tweak(&mut config);
    let shutdown = CancellationToken::new();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let server = ApiServer::new(config, store, shutdown.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(crate::tls::serve_with(
        listener,
        None,
        server.router(),
        shutdown.clone(),
        "test API server",
        crate::tls::HEADER_READ_TIMEOUT,
    ));
    (server, addr, (dir, shutdown.drop_guard()))
}

#[tokio::test]
async fn a_body_that_stalls_is_cut_at_the_deadline_and_gives_its_slot_back() {
    use crate::apiserver::limits::Pool;
    use tokio::io::AsyncWriteExt as _;
    let (server, addr, _running) = serve_over_tcp(|c| {
        c.request_timeout = Duration::from_secs(1);
        c.limits.max_mutating_requests_inflight = 1;
        // The max-in-flight pools, whose slots are counted per pool.
        c.flowcontrol = None;
    })
    .await;

    // A write whose headers announce the whole body but only part of it is sent; the client
    // then waits, holding its connection open.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {DBS} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        BODY.len()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(&BODY.as_bytes()[..20]).await.unwrap();
    while server.inflight().in_use(Pool::Mutating) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // It holds the only mutating slot while its body is read.
    let refused = post_over_tcp(addr, &BODY.replace(r#""a""#, r#""b""#)).await;
    assert!(refused.starts_with("HTTP/1.1 429 "), "{refused}");

    // At the deadline it is answered 504 Timeout, and the slot is free again.
    let cut = exchange(&mut slow, b"").await;
    assert!(cut.starts_with("HTTP/1.1 504 "), "{cut}");
    assert!(cut.contains(r#""reason":"Timeout""#), "{cut}");
    assert_eq!(server.inflight().in_use(Pool::Mutating), 0);

    // A normal write right after is served.
    let created = post_over_tcp(addr, BODY).await;
    assert!(created.starts_with("HTTP/1.1 201 "), "{created}");
    assert!(created.contains(r#""name":"a""#), "{created}");
}

/// Sends `head` then `body` in pieces of `piece` bytes, one every `every`, and reads the
/// answer (the server may answer before the last piece: the rest is then not sent).
async fn trickle(
    addr: std::net::SocketAddr,
    head: &str,
    body: &[u8],
    piece: usize,
    every: Duration,
) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    for chunk in body.chunks(piece) {
        if s.write_all(chunk).await.is_err() {
            break;
        }
        // Stops sending once the server has answered.
        match tokio::time::timeout(every, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => {}
        }
    }
    // The rest of the answer (`connection: close`: the server closes after it).
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut rest)).await;
    answer.extend_from_slice(&rest);
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_body_slower_than_the_floor_rate_is_cut_with_408_and_a_steady_one_is_served() {
    use crate::apiserver::limits::Pool;
    let (server, addr, _running) = serve_over_tcp(|c| {
        // Far from the request timeout: only the floor can cut the body.
        c.request_timeout = Duration::from_secs(120);
        c.body_read_grace = Duration::from_secs(1);
        c.body_min_bytes_per_second = 10;
        c.flowcontrol = None;
    })
    .await;
    let head = |body: &str| {
        format!(
            "POST {DBS} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
    };
    // One byte every 400 ms (2.5 bytes/s): past the grace second it is below the floor.
    let slow = trickle(
        addr,
        &head(BODY),
        BODY.as_bytes(),
        1,
        Duration::from_millis(400),
    )
    .await;
    assert!(slow.starts_with("HTTP/1.1 408 "), "{slow}");
    assert!(slow.contains(r#""reason":"Timeout""#), "{slow}");
    assert!(
        slow.contains("the request body arrived slower than 10 bytes per second"),
        "{slow}"
    );
    assert_eq!(server.inflight().in_use(Pool::Mutating), 0);

    // Ten bytes every 200 ms (50 bytes/s) takes longer than the grace, but keeps above the
    // floor: served.
    let body = BODY.replace(r#""a""#, r#""steady""#);
    let steady = trickle(
        addr,
        &head(&body),
        body.as_bytes(),
        10,
        Duration::from_millis(200),
    )
    .await;
    assert!(steady.starts_with("HTTP/1.1 201 "), "{steady}");
    assert!(steady.contains(r#""name":"steady""#), "{steady}");
}

#[test]
fn the_body_deadline_grows_by_a_second_per_floor_rate_of_bytes() {
    use super::body_deadline;
    let grace = Duration::from_secs(10);
    assert_eq!(body_deadline(grace, 1024, 0), grace);
    assert_eq!(body_deadline(grace, 1024, 2048), Duration::from_secs(12));
    assert_eq!(body_deadline(grace, 100, 50), Duration::from_millis(10_500));
}

#[tokio::test]
async fn a_body_announced_over_the_limit_is_refused_before_it_is_sent() {
    use tokio::io::AsyncWriteExt as _;
    // Long enough that a server waiting for the body would not answer within the test.
    let (_server, addr, _running) =
        serve_over_tcp(|c| c.request_timeout = Duration::from_secs(600)).await;
    // Headers that announce 100 MiB, and not one byte of body.
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {DBS} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        100 << 20
    );
    client.write_all(head.as_bytes()).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(30), exchange(&mut client, b""))
        .await
        .expect("no answer: the server waited for the body");
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    assert!(
        answer.contains(r#""reason":"RequestEntityTooLarge""#),
        "{answer}"
    );
}

#[tokio::test]
async fn aggregated_discovery_is_served_when_the_client_asks_for_it() {
    let f = fixture(|_| {});
    let accept = [(
        "accept",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    )];
    let (code, body) = call(&f, "GET", "/apis", &accept, "").await;
    assert_eq!(code, 200);
    let d = json_of(&body);
    assert_eq!(d["kind"], "APIGroupDiscoveryList");
    let r = &d["items"][0]["versions"][0]["resources"][0];
    assert_eq!(d["items"][0]["metadata"]["name"], "example.com");
    assert_eq!(r["resource"], "databases");
    assert_eq!(r["scope"], "Namespaced");
    assert_eq!(
        r["responseKind"],
        json!({"group": "example.com", "version": "v1", "kind": "Database"})
    );
    assert_eq!(r["subresources"][0]["subresource"], "status");
    let core = json_of(&call(&f, "GET", "/api", &accept, "").await.1);
    assert_eq!(core["items"], json!([]));
    // Without it: the legacy APIGroupList.
    assert_eq!(
        json_of(&call(&f, "GET", "/apis", &[], "").await.1)["kind"],
        "APIGroupList"
    );
}

#[tokio::test]
async fn unknown_fields_are_dropped_with_a_warning_unless_strict() {
    let f = fixture(|_| {});
    let mut k = kind();
    k.schema = Some(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}),
    );
    let f = Fixture {
        router: ApiServer::new(
            Config::new(vec![k]),
            RedbStore::open(&f._dir.path().join("db2")).unwrap(),
            CancellationToken::new(),
        )
        .router(),
        ..f
    };
    let body = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":2,"colour":"blue"}}"#;
    let req = Request::post(DBS).body(Body::from(body)).unwrap();
    let resp = f.router.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 201);
    let warnings: Vec<&str> = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.colour\"""#]);
    let stored = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(
        json_of(&String::from_utf8_lossy(&stored))["spec"],
        json!({"replicas": 2})
    );
    let strict = body.replace("\"a\"", "\"b\"");
    let (code, body) = call(
        &f,
        "POST",
        &format!("{DBS}?fieldValidation=Strict"),
        &[],
        &strict,
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        json_of(&body)["message"],
        r#"strict decoding error: unknown field "spec.colour""#
    );
}

#[tokio::test]
async fn schema_defaults_are_filled_and_set_duplicates_are_refused_over_http() {
    let f = fixture(|_| {});
    let mut k = kind();
    k.schema = Some(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "replicas": {"type": "integer", "default": 1},
            "hosts": {"type": "array", "x-kubernetes-list-type": "set",
                      "items": {"type": "string"}},
        }}}}),
    );
    let f = Fixture {
        router: ApiServer::new(
            Config::new(vec![k]),
            RedbStore::open(&f._dir.path().join("db2")).unwrap(),
            CancellationToken::new(),
        )
        .router(),
        ..f
    };
    let body = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"hosts":["x"]}}"#;
    let (code, created) = call(&f, "POST", DBS, &[], body).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        json_of(&created)["spec"],
        json!({"hosts": ["x"], "replicas": 1})
    );
    let (code, read) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    assert_eq!(
        (code, &json_of(&read)["spec"]["replicas"]),
        (200, &json!(1))
    );
    // A dry run answers the defaulted object too.
    let dry = body.replace("\"a\"", "\"c\"");
    let (code, answered) = call(&f, "POST", &format!("{DBS}?dryRun=All"), &[], &dry).await;
    assert_eq!(
        (code, &json_of(&answered)["spec"]["replicas"]),
        (201, &json!(1))
    );
    let dup = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"b"},"spec":{"hosts":["x","y","x"]}}"#;
    let (code, refused) = call(&f, "POST", DBS, &[], dup).await;
    let s = json_of(&refused);
    assert_eq!((code, s["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        s["details"]["causes"],
        json!([{"reason": "FieldValueDuplicate", "field": "spec.hosts[2]",
                "message": "Duplicate value: \"x\""}])
    );
    assert_eq!(
        s["message"],
        "Database.example.com \"b\" is invalid: spec.hosts[2]: Duplicate value: \"x\""
    );
}

#[tokio::test]
async fn the_scale_subresource_is_served_and_discovered() {
    let f = fixture(|_| {});
    assert_eq!(call(&f, "POST", DBS, &[], BODY).await.0, 201);
    let (code, body) = call(&f, "GET", &format!("{DBS}/a/scale"), &[], "").await;
    assert_eq!(code, 200, "{body}");
    let scale = json_of(&body);
    assert_eq!(
        (
            &scale["kind"],
            &scale["apiVersion"],
            &scale["metadata"]["name"],
            &scale["spec"]
        ),
        (
            &json!("Scale"),
            &json!("autoscaling/v1"),
            &json!("a"),
            &json!({"replicas": 2})
        )
    );
    let merge = [("content-type", "application/merge-patch+json")];
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a/scale"),
        &merge,
        r#"{"spec":{"replicas":3}}"#,
    )
    .await;
    assert_eq!(
        (code, json_of(&body)["spec"]["replicas"].clone()),
        (200, json!(3))
    );
    let mut put = json_of(&body);
    put["spec"]["replicas"] = json!(4);
    let (code, body) = call(&f, "PUT", &format!("{DBS}/a/scale"), &[], &put.to_string()).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = call(&f, "PUT", &format!("{DBS}/a/scale"), &[], &put.to_string()).await;
    assert_eq!(
        (code, json_of(&body)["reason"].clone()),
        (409, json!("Conflict"))
    );
    let obj = json_of(&call(&f, "GET", &format!("{DBS}/a"), &[], "").await.1);
    assert_eq!(
        (&obj["spec"]["replicas"], &obj["metadata"]["generation"]),
        (&json!(4), &json!(3))
    );
    // A Scale body is not checked against the kind's schema: no unknown-field warnings.
    let req = Request::patch(format!("{DBS}/a/scale"))
        .header("content-type", "application/merge-patch+json")
        .body(Body::from(r#"{"spec":{"replicas":5}}"#))
        .unwrap();
    let resp = f.router.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("warning").is_none());
    let (code, _) = call(&f, "PATCH", &format!("{DBS}/a/scale"), &[], "{}").await;
    assert_eq!(code, 415);
    let (code, _) = call(&f, "DELETE", &format!("{DBS}/a/scale"), &[], "").await;
    assert_eq!(code, 405);

    let rl = json_of(&call(&f, "GET", "/apis/example.com/v1", &[], "").await.1);
    assert_eq!(
        rl["resources"][2],
        json!({"name": "databases/scale", "singularName": "", "namespaced": true,
               "group": "autoscaling", "version": "v1", "kind": "Scale",
               "verbs": ["get", "patch", "update"]})
    );
    let accept = [(
        "accept",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    )];
    let d = json_of(&call(&f, "GET", "/apis", &accept, "").await.1);
    assert_eq!(
        d["items"][0]["versions"][0]["resources"][0]["subresources"][1],
        json!({"subresource": "scale", "verbs": ["get", "patch", "update"],
               "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}})
    );
    let v3 = json_of(
        &call(&f, "GET", "/openapi/v3/apis/example.com/v1", &[], "")
            .await
            .1,
    );
    let op =
        &v3["paths"]["/apis/example.com/v1/namespaces/{namespace}/databases/{name}/scale"]["patch"];
    assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "Scale");
    assert_eq!(
        v3["components"]["schemas"]["io.k8s.api.autoscaling.v1.Scale"]["properties"]["spec"]["properties"]
            ["replicas"]["format"],
        "int32"
    );
}

#[tokio::test]
async fn a_kind_without_scale_answers_404_on_scale() {
    let dir = tempfile::tempdir().unwrap();
    let mut k = kind();
    k.scale = None;
    let router = ApiServer::new(
        Config::new(vec![k]),
        RedbStore::open(&dir.path().join("db")).unwrap(),
        CancellationToken::new(),
    )
    .router();
    let f = Fixture {
        _dir: dir,
        router,
        shutdown: CancellationToken::new(),
    };
    assert_eq!(call(&f, "POST", DBS, &[], BODY).await.0, 201);
    for method in ["GET", "PUT", "PATCH"] {
        let (code, body) = call(&f, method, &format!("{DBS}/a/scale"), &[], "{}").await;
        assert_eq!(
            (code, json_of(&body)["reason"].clone()),
            (404, json!("NotFound")),
            "{method}"
        );
    }
    let rl = json_of(&call(&f, "GET", "/apis/example.com/v1", &[], "").await.1);
    assert_eq!(rl["resources"].as_array().unwrap().len(), 2);
    let v3 = json_of(
        &call(&f, "GET", "/openapi/v3/apis/example.com/v1", &[], "")
            .await
            .1,
    );
    assert!(
        v3["components"]["schemas"]
            .get("io.k8s.api.autoscaling.v1.Scale")
            .is_none()
    );
}

#[tokio::test]
async fn impersonation_headers_are_refused_not_ignored() {
    let f = fixture(|_| {});
    for header in [
        "Impersonate-User",
        "Impersonate-Group",
        "Impersonate-Uid",
        "Impersonate-Extra-Scopes",
    ] {
        let (code, body) = call(&f, "GET", DBS, &[(header, "admin")], "").await;
        let s = json_of(&body);
        assert_eq!(
            (code, s["reason"].as_str()),
            (403, Some("Forbidden")),
            "{header}: {body}"
        );
        assert!(
            s["message"].as_str().unwrap().contains(&format!(
                "impersonation is not supported by this server ({} header)",
                header.to_lowercase()
            )),
            "{body}"
        );
    }
    // A create with the header writes nothing.
    let (code, _) = call(&f, "POST", DBS, &[("Impersonate-User", "admin")], BODY).await;
    assert_eq!(code, 403);
    let (code, body) = call(&f, "GET", DBS, &[], "").await;
    assert_eq!(code, 200);
    assert_eq!(json_of(&body)["items"], json!([]));
    // Health stays open.
    assert_eq!(
        call(&f, "GET", "/livez", &[("Impersonate-User", "x")], "")
            .await
            .0,
        200
    );
}

#[tokio::test]
async fn impersonation_is_refused_on_routes_of_your_own_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let server = ApiServer::new(Config::new(vec![kind()]), store, CancellationToken::new());
    let extra = Router::new().route("/custom", axum::routing::get(|| async { "custom" }));
    let f = Fixture {
        _dir: dir,
        router: server.guard(extra.merge(server.routes())),
        shutdown: CancellationToken::new(),
    };
    assert_eq!(
        call(&f, "GET", "/custom", &[], "").await,
        (200, "custom".into())
    );
    for path in ["/custom", "/version", "/metrics", "/apis"] {
        let (code, body) = call(&f, "GET", path, &[("Impersonate-User", "admin")], "").await;
        assert_eq!(
            (code, json_of(&body)["reason"].as_str()),
            (403, Some("Forbidden")),
            "{path}: {body}"
        );
    }
}

#[tokio::test]
async fn server_side_apply_is_served_with_yaml_bodies_conflicts_and_user_agent_managers() {
    let f = fixture(|_| {});
    let apply = ("content-type", "application/apply-patch+yaml");
    let yaml =
        "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: a\nspec:\n  replicas: 2\n";
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=alice"),
        &[apply],
        yaml,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        json_of(&body)["metadata"]["managedFields"][0]["operation"],
        json!("Apply")
    );
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=alice"),
        &[apply],
        yaml,
    )
    .await;
    assert_eq!(code, 200, "{body}");

    let other = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":5}}"#;
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=bob"),
        &[apply],
        other,
    )
    .await;
    assert_eq!(code, 409, "{body}");
    let status = json_of(&body);
    assert_eq!(status["reason"], json!("Conflict"));
    assert_eq!(
        status["message"],
        json!("Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas")
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.replicas"}])
    );
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=bob&force=true"),
        &[apply],
        other,
    )
    .await;
    assert_eq!(
        (code, &json_of(&body)["spec"]["replicas"]),
        (200, &json!(5))
    );

    // A merge patch without fieldManager is recorded under the User-Agent's prefix. (Without
    // a schema `spec` is a map, which alice and bob keep owning.)
    let merge = ("content-type", "application/merge-patch+json");
    let agent = ("user-agent", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc");
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &[merge, agent],
        r#"{"spec":{"replicas":6}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let managers: Vec<Value> = json_of(&body)["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!([e["manager"], e["operation"]]))
        .collect();
    assert_eq!(
        managers,
        vec![
            json!(["alice", "Apply"]),
            json!(["bob", "Apply"]),
            json!(["kubectl", "Update"])
        ]
    );

    // /status of a missing object is 404, not a create.
    let status_apply =
        r#"{"apiVersion":"example.com/v1","kind":"Database","status":{"phase":"x"}}"#;
    let (code, _) = call(
        &f,
        "PATCH",
        &format!("{DBS}/zz/status?fieldManager=c"),
        &[apply],
        status_apply,
    )
    .await;
    assert_eq!(code, 404);
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a/status?fieldManager=c"),
        &[apply],
        status_apply,
    )
    .await;
    assert_eq!(
        (code, &json_of(&body)["status"]["phase"]),
        (200, &json!("x")),
        "{body}"
    );
}

#[tokio::test]
async fn metrics_count_requests_in_kube_apiservers_names() {
    let f = fixture(|_| {});
    let (code, _) = call(&f, "POST", DBS, &[], BODY).await;
    assert_eq!(code, 201);
    let (code, _) = call(&f, "POST", DBS, &[], BODY).await;
    assert_eq!(code, 409);
    let (code, _) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    assert_eq!(code, 200);
    let (code, text) = call(&f, "GET", "/metrics", &[], "").await;
    assert_eq!(code, 200, "{text}");
    let series = |verb: &str, scope: &str, code: u16| {
        format!(
            r#"apiserver_request_total{{verb="{verb}",dry_run="",group="example.com",version="v1",resource="databases",subresource="",scope="{scope}",component="apiserver",code="{code}"}} 1"#
        )
    };
    for want in [
        series("POST", "namespace", 201),
        series("POST", "namespace", 409),
        series("GET", "resource", 200),
    ] {
        assert!(text.contains(&want), "{want}\n{text}");
    }
    assert!(
        text.contains(r#"apiserver_request_duration_seconds_bucket{le="0.005",verb="GET""#)
            || text.contains(r#"apiserver_request_duration_seconds_bucket{verb="GET""#),
        "{text}"
    );
    // The scrape itself is not a resource request.
    assert!(!text.contains("/metrics"), "{text}");
}

#[tokio::test]
async fn metrics_count_only_what_the_server_serves() {
    let f = fixture(|_| {});
    let (_, before) = call(&f, "GET", "/metrics", &[], "").await;
    for i in 0..50 {
        let (code, _) = call(&f, "GET", &format!("/apis/g{i}.example/v1/r{i}"), &[], "").await;
        assert_eq!(code, 404);
    }
    for path in [
        format!("{DBS}/a/madeup"),
        "/apis/example.com/v2/namespaces/ns/databases".to_string(),
        "/apis/example.com/v1/namespaces/ns/widgets".to_string(),
    ] {
        let (code, _) = call(&f, "GET", &path, &[], "").await;
        assert_eq!(code, 404, "{path}");
    }
    let (_, after) = call(&f, "GET", "/metrics", &[], "").await;
    for absent in ["g0.example", "madeup", "v2", "widgets"] {
        assert!(!after.contains(absent), "{absent}\n{after}");
    }
    // The same series (their values move: flow control dispatched the 404s too).
    let series = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s.to_owned()))
            .collect()
    };
    assert_eq!(series(&after), series(&before), "{after}");
    // A 404 on a served resource is counted under it.
    let (code, _) = call(&f, "GET", &format!("{DBS}/nope"), &[], "").await;
    assert_eq!(code, 404);
    let (_, after) = call(&f, "GET", "/metrics", &[], "").await;
    assert!(after.contains(r#"resource="databases",subresource="",scope="resource",component="apiserver",code="404"} 1"#), "{after}");
}

#[tokio::test]
async fn unknown_metadata_fields_are_pruned_and_reported_and_wrong_types_refused() {
    let f = fixture(|_| {});
    let body = |meta: &str| {
        format!(
            r#"{{"apiVersion":"example.com/v1","kind":"Database","metadata":{meta},"spec":{{"replicas":2}}}}"#
        )
    };
    let bogus = body(r#"{"name":"meta1","bogusField":{"deep":[1,2,3]}}"#);
    let (code, answer) = call(
        &f,
        "POST",
        &format!("{DBS}?fieldValidation=Strict"),
        &[],
        &bogus,
    )
    .await;
    assert_eq!(
        (code, json_of(&answer)["message"].as_str()),
        (
            400,
            Some(r#"strict decoding error: unknown field "metadata.bogusField""#)
        ),
        "{answer}"
    );
    let req = Request::post(DBS).body(Body::from(bogus)).unwrap();
    let resp = f.router.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 201);
    let warnings: Vec<&str> = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        [r#"299 - "unknown field \"metadata.bogusField\"""#]
    );
    let (code, stored) = call(&f, "GET", &format!("{DBS}/meta1"), &[], "").await;
    assert_eq!(code, 200);
    assert!(!stored.contains("bogusField"), "{stored}");
    // An apply's unknown metadata field is neither stored nor recorded in managedFields.
    let apply = ("content-type", "application/apply-patch+yaml");
    let (code, applied) = call(
        &f,
        "PATCH",
        &format!("{DBS}/meta2?fieldManager=m"),
        &[apply],
        &body(r#"{"name":"meta2","bogusField":1}"#),
    )
    .await;
    assert_eq!(code, 201, "{applied}");
    assert!(!applied.contains("ogusField"), "{applied}");

    let cannot = |e: &str| {
        format!(
            r#"Database in version "v1" cannot be handled as a Database: json: cannot unmarshal {e}"#
        )
    };
    for (meta, want) in [
        (
            r#""x""#,
            cannot("string into Go value of type v1.ObjectMeta"),
        ),
        (
            r#"{"name":5}"#,
            cannot("number into Go struct field ObjectMeta.name of type string"),
        ),
        (
            r#"{"name":"o","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":5}]}"#,
            cannot(
                "number into Go struct field OwnerReference.ownerReferences.uid of type types.UID",
            ),
        ),
    ] {
        for (method, uri, headers) in [
            ("POST", DBS.to_string(), vec![]),
            ("PATCH", format!("{DBS}/o?fieldManager=m"), vec![apply]),
        ] {
            let (code, answer) = call(&f, method, &uri, &headers, &body(meta)).await;
            assert_eq!(
                (code, json_of(&answer)["message"].as_str()),
                (400, Some(want.as_str())),
                "{method} {meta}: {answer}"
            );
        }
    }
}

#[tokio::test]
async fn duplicate_keys_are_refused_when_strict_and_warned_of_otherwise() {
    let f = fixture(|_| {});
    let body = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":1,"replicas":3}}"#;
    let (code, answer) = call(
        &f,
        "POST",
        &format!("{DBS}?fieldValidation=Strict"),
        &[],
        body,
    )
    .await;
    assert_eq!(
        (code, json_of(&answer)["message"].as_str()),
        (
            400,
            Some(r#"strict decoding error: duplicate field "spec.replicas""#)
        ),
        "{answer}"
    );
    let req = Request::post(DBS).body(Body::from(body)).unwrap();
    let resp = f.router.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 201);
    let warnings: Vec<&str> = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(warnings, [r#"299 - "duplicate field \"spec.replicas\"""#]);
    let stored = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    // The last value counts, as in kube.
    assert_eq!(
        json_of(&String::from_utf8_lossy(&stored))["spec"]["replicas"],
        json!(3)
    );
}

#[tokio::test]
async fn metadata_is_validated_as_kube_validates_object_meta() {
    let f = fixture(|_| {});
    let body = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","labels":{"ok":"-bad"},"finalizers":["orphan","foregroundDeletion"]},"spec":{"replicas":2}}"#;
    let (code, body) = call(&f, "POST", DBS, &[], body).await;
    let s = json_of(&body);
    assert_eq!((code, s["reason"].as_str()), (422, Some("Invalid")));
    let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    assert_eq!(
        s["details"]["causes"],
        json!([
            {"reason": "FieldValueInvalid", "field": "metadata.labels",
             "message": format!("Invalid value: \"-bad\": {value}")},
            {"reason": "FieldValueInvalid", "field": "metadata.finalizers",
             "message": "Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set"},
        ])
    );
    assert_eq!(call(&f, "GET", &format!("{DBS}/a"), &[], "").await.0, 404);
}

#[tokio::test]
async fn x_kubernetes_validations_rules_answer_422_with_kubectl_visible_causes() {
    let f = fixture(|c| {
        c.kinds[0].schema = Some(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "engine": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "engine is immutable"}]}},
              "x-kubernetes-validations": [
                {"rule": "self.replicas <= 5", "messageExpression": "'replicas ' + string(self.replicas) + ' is above 5'"},
                {"rule": "self.replicas % 2 == 1", "fieldPath": ".replicas", "reason": "FieldValueForbidden", "message": "an odd number is needed"}]}}}));
    });
    let body = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":6,"engine":"pg"}}"#;
    let (code, body) = call(&f, "POST", DBS, &[], body).await;
    let s = json_of(&body);
    assert_eq!(
        (code, s["reason"].as_str()),
        (422, Some("Invalid")),
        "{body}"
    );
    assert_eq!(
        s["message"],
        json!(
            "Database.example.com \"a\" is invalid: [spec: Invalid value: \"object\": replicas 6 is above 5, spec.replicas: Forbidden: an odd number is needed]"
        )
    );
    assert_eq!(
        s["details"]["causes"],
        json!([
            {"reason": "FieldValueInvalid", "field": "spec", "message": "Invalid value: \"object\": replicas 6 is above 5"},
            {"reason": "FieldValueForbidden", "field": "spec.replicas", "message": "Forbidden: an odd number is needed"},
        ])
    );
    assert_eq!(call(&f, "GET", &format!("{DBS}/a"), &[], "").await.0, 404);
    let ok = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":3,"engine":"pg"}}"#;
    assert_eq!(call(&f, "POST", DBS, &[], ok).await.0, 201);
    // The transition rule runs on the update, against the stored object.
    let merge = [("content-type", "application/merge-patch+json")];
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &merge,
        r#"{"spec":{"engine":"mysql"}}"#,
    )
    .await;
    assert_eq!(
        (code, json_of(&body)["details"]["causes"].clone()),
        (
            422,
            json!([{"reason": "FieldValueInvalid", "field": "spec.engine", "message": "Invalid value: \"string\": engine is immutable"}])
        )
    );
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &merge,
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
}

#[tokio::test]
async fn field_managers_and_duplicate_applied_items_are_answered_as_kube_apiserver_answers() {
    let f = fixture(|_| {});
    assert_eq!(call(&f, "POST", DBS, &[], BODY).await.0, 201);
    let merge = ("content-type", "application/merge-patch+json");
    // A non-ASCII User-Agent names the manager by its printable prefix.
    let agent = ("user-agent", "outil-été/1.0");
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &[merge, agent],
        r#"{"spec":{"replicas":3}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entries = json_of(&body)["metadata"]["managedFields"].clone();
    assert!(
        entries
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["manager"] == "outil-été"),
        "{entries}"
    );
    // A zero-width space in fieldManager is 422.
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=a%E2%80%8Bb"),
        &[merge],
        r#"{"spec":{"replicas":4}}"#,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        json_of(&body)["message"].as_str().unwrap().contains(
            r#"fieldManager: Invalid value: "a\u200bb": invalid character U+200B (at position 1)"#
        ),
        "{body}"
    );
    // Duplicate finalizers in an applied configuration: 500 without a reason.
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=m"),
        &[("content-type", "application/apply-patch+yaml")],
        r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","finalizers":["example.com/f","example.com/f"]}}"#,
    )
    .await;
    let status = json_of(&body);
    assert_eq!(code, 500, "{body}");
    assert_eq!(status["code"], 500);
    assert!(status.get("reason").is_none(), "{body}");
    assert_eq!(
        status["message"],
        r#"failed to create typed patch object (ns/a; example.com/v1, Kind=Database): .metadata.finalizers: duplicate entries for key [="example.com/f"]"#
    );
}

/// The managers owning `spec.replicas` in the object's `managedFields`, as kube's
/// `assertReplicasOwnership` reads them.
async fn replicas_owners(f: &Fixture) -> (Value, Vec<String>) {
    let obj = json_of(&call(f, "GET", &format!("{DBS}/a"), &[], "").await.1);
    let owners = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["fieldsV1"]["f:spec"].get("f:replicas").is_some())
        .map(|e| e["manager"].as_str().unwrap().to_owned())
        .collect();
    (obj["spec"]["replicas"].clone(), owners)
}

// The steps of k8s.io/kubernetes' TestScaleAllResources (test/integration/apiserver/apply),
// on the Database example's kind: ownership of the replicas moves between the object's
// appliers and the Scale's writers and appliers, conflicts included.
#[tokio::test]
async fn server_side_apply_to_scale_shares_the_replicas_ownership_with_the_object() {
    let f = fixture(|_| {});
    let apply = ("content-type", "application/apply-patch+yaml");
    let merge = ("content-type", "application/merge-patch+json");
    let object = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":1}}"#;
    let scale = |n: i64| {
        format!(
            r#"{{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{{"name":"a","namespace":"ns"}},"spec":{{"replicas":{n}}}}}"#
        )
    };
    let scale_url = |q: &str| format!("{DBS}/a/scale?{q}");
    let code = |r: (u16, String)| r.0;

    let r = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=apply_test"),
        &[apply],
        object,
    )
    .await;
    assert_eq!(r.0, 201, "{}", r.1);
    assert_eq!(
        replicas_owners(&f).await,
        (json!(1), vec!["apply_test".into()])
    );

    let r = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=scale_test"),
        &[merge],
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(
        replicas_owners(&f).await,
        (json!(5), vec!["scale_test".into()])
    );

    let url = format!("{DBS}/a?fieldManager=apply_test");
    assert_eq!(code(call(&f, "PATCH", &url, &[apply], object).await), 409);
    let url = format!("{DBS}/a?fieldManager=apply_test&force=true");
    assert_eq!(code(call(&f, "PATCH", &url, &[apply], object).await), 200);
    assert_eq!(
        replicas_owners(&f).await,
        (json!(1), vec!["apply_test".into()])
    );

    // An apply to the Scale conflicts with the object's applier, on the Scale's path.
    let (c, body) = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=apply_scale"),
        &[apply],
        &scale(17),
    )
    .await;
    assert_eq!(c, 409, "{body}");
    let status = json_of(&body);
    assert_eq!(
        (
            &status["reason"],
            &status["message"],
            &status["details"]["causes"]
        ),
        (
            &json!("Conflict"),
            &json!("Apply failed with 1 conflict: conflict with \"apply_test\": .spec.replicas"),
            &json!([{"reason": "FieldManagerConflict", "message": "conflict with \"apply_test\"", "field": ".spec.replicas"}])
        )
    );
    assert_eq!(
        replicas_owners(&f).await,
        (json!(1), vec!["apply_test".into()])
    );

    // Forced, the Scale's applier alone owns the replicas; the answer is the Scale.
    let (c, body) = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=apply_scale&force=true"),
        &[apply],
        &scale(17),
    )
    .await;
    assert_eq!(c, 200, "{body}");
    let answer = json_of(&body);
    assert_eq!(
        (&answer["kind"], &answer["spec"]),
        (&json!("Scale"), &json!({"replicas": 17}))
    );
    assert_eq!(
        replicas_owners(&f).await,
        (json!(17), vec!["apply_scale".into()])
    );
    let obj = json_of(&call(&f, "GET", &format!("{DBS}/a"), &[], "").await.1);
    let entry = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "apply_scale")
        .unwrap()
        .clone();
    // Recorded on the object at its own version and path; no time, as kube's ScaleHandler
    // carries over only the object's entry's time.
    assert_eq!(
        entry,
        json!({"manager": "apply_scale", "operation": "Apply", "apiVersion": "example.com/v1",
               "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
               "subresource": "scale"})
    );

    let r = call(
        &f,
        "PUT",
        &scale_url("fieldManager=replace_test"),
        &[],
        &scale(7),
    )
    .await;
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(
        replicas_owners(&f).await,
        (json!(7), vec!["replace_test".into()])
    );

    // The same replicas: both own them.
    let r = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=co_owning_test"),
        &[apply],
        &scale(7),
    )
    .await;
    assert_eq!(r.0, 200, "{}", r.1);
    let (replicas, mut owners) = replicas_owners(&f).await;
    owners.sort();
    assert_eq!(
        (replicas, owners),
        (
            json!(7),
            vec!["co_owning_test".to_string(), "replace_test".into()]
        )
    );

    let r = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=scale_test"),
        &[merge],
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(
        replicas_owners(&f).await,
        (json!(5), vec!["scale_test".into()])
    );

    // What kube refuses: another type, no field manager, managedFields, a missing object.
    let wrong = r#"{"kind":"Scale","apiVersion":"autoscaling/v2","spec":{"replicas":3}}"#;
    let (c, body) = call(&f, "PATCH", &scale_url("fieldManager=m"), &[apply], wrong).await;
    assert_eq!(
        (c, &json_of(&body)["message"]),
        (
            400,
            &json!("invalid object type: autoscaling/v2, Kind=Scale")
        )
    );
    assert_eq!(
        code(call(&f, "PATCH", &scale_url(""), &[apply], &scale(3)).await),
        422
    );
    let with_fields = r#"{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"managedFields":[{"manager":"x"}]},"spec":{"replicas":3}}"#;
    assert_eq!(
        code(
            call(
                &f,
                "PATCH",
                &scale_url("fieldManager=m"),
                &[apply],
                with_fields
            )
            .await
        ),
        400
    );
    let missing = format!("{DBS}/zz/scale?fieldManager=m");
    assert_eq!(
        code(call(&f, "PATCH", &missing, &[apply], &scale(3)).await),
        404
    );
    // A YAML body, and a dry run that stores nothing.
    let yaml = "kind: Scale\napiVersion: autoscaling/v1\nspec:\n  replicas: 9\n";
    let (c, body) = call(
        &f,
        "PATCH",
        &scale_url("fieldManager=m&force=true&dryRun=All"),
        &[apply],
        yaml,
    )
    .await;
    assert_eq!(
        (c, &json_of(&body)["spec"]["replicas"]),
        (200, &json!(9)),
        "{body}"
    );
    assert_eq!(
        replicas_owners(&f).await,
        (json!(5), vec!["scale_test".into()])
    );
}

/// The value of the series `series` (name and labels, as written) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_stored_objects_and_flow_control_dispatches_and_waits() {
    let f = fixture(|_| {});
    for (ns, name) in [("ns", "a"), ("ns", "b"), ("other", "c")] {
        let url = format!("/apis/example.com/v1/namespaces/{ns}/databases");
        let body = BODY.replace(r#""a""#, &format!("{name:?}"));
        assert_eq!(call(&f, "POST", &url, &[], &body).await.0, 201);
    }
    let text = call(&f, "GET", "/metrics", &[], "").await.1;
    let storage = r#"apiserver_storage_objects{resource="databases.example.com"}"#;
    let resource = r#"apiserver_resource_objects{group="example.com",resource="databases"}"#;
    assert_eq!(
        (sample(&text, storage), sample(&text, resource)),
        (Some(3.0), Some(3.0)),
        "{text}"
    );
    assert_eq!(
        call(&f, "DELETE", &format!("{DBS}/b"), &[], "").await.0,
        200
    );
    let text = call(&f, "GET", "/metrics", &[], "").await.1;
    assert_eq!(sample(&text, storage), Some(2.0), "{text}");

    // Without authentication every request is the anonymous user's: kube's `global-default`
    // schema and level. Three creates, a scrape, a delete, and this scrape were dispatched,
    // each with its wait observed.
    let fc = r#"{priority_level="global-default",flow_schema="global-default"}"#;
    let wait = r#"{priority_level="global-default",flow_schema="global-default",execute="true"}"#;
    assert_eq!(
        (
            sample(
                &text,
                &format!("apiserver_flowcontrol_dispatched_requests_total{fc}")
            ),
            sample(
                &text,
                &format!("apiserver_flowcontrol_request_wait_duration_seconds_count{wait}")
            ),
            sample(
                &text,
                &format!("apiserver_flowcontrol_current_executing_requests{fc}")
            ),
            sample(
                &text,
                &format!("apiserver_flowcontrol_current_inqueue_requests{fc}")
            ),
        ),
        // This scrape is running; none waited in a queue, so that gauge has no series yet.
        (Some(6.0), Some(6.0), Some(1.0), None),
        "{text}"
    );
}
