//! The example's server as `src/bin/apiserver.rs` builds it (the example's Database kind, the
//! redb store, the `/custom` route merged beside the API), driven through its router without
//! a socket. kubectl against the built binary is rsbuilder's `tests/e2e/apiserver.rs` and the
//! runtime's `tests/apiserver/kubectl.rs`; the README shows the same calls by hand.

use database_apiserver::apiserver::v1::Database;
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use rsbuilder_runtime::axum::Router;
use rsbuilder_runtime::axum::body::{Body, to_bytes};
use rsbuilder_runtime::axum::http::{Method, Request, StatusCode};
use rsbuilder_runtime::tokio_util::sync::CancellationToken;
use serde_json::{Value, json};
use tower::ServiceExt as _;

const COLLECTION: &str = "/apis/db.example.com/v1/namespaces/default/databases";

/// The app the binary serves (without TLS and without `--delegated-auth`), on a store in
/// `dir`.
fn app(dir: &tempfile::TempDir) -> Router {
    let kind = ApiKind::of::<Database>().unwrap();
    let store = RedbStore::open(&dir.path().join("store.redb")).unwrap();
    let server = ApiServer::new(Config::new(vec![kind]), store, CancellationToken::new());
    database_apiserver::custom::routes().merge(server.router())
}

/// Sends one request; out: the status and the body as JSON.
async fn call(
    app: &Router,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(path);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let response = app
        .clone()
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = to_bytes(response.into_body(), 1 << 20).await.unwrap();
    // axum's own answers (a 405) have no body.
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, body)
}

/// The specification's `production-db` (section 1.2, without its status), with `spec` changed by
/// `edit`.
fn database(edit: impl FnOnce(&mut Value)) -> Value {
    let mut object = json!({
        "apiVersion": "db.example.com/v1",
        "kind": "Database",
        "metadata": {"name": "production-db"},
        "spec": {"engine": "mysql", "version": "8.0.26", "replicas": 3},
    });
    edit(&mut object["spec"]);
    object
}

#[test]
fn the_kind_is_the_seeds_database() {
    let kind = ApiKind::of::<Database>().unwrap();
    assert_eq!(
        (
            kind.group.as_str(),
            kind.version.as_str(),
            kind.plural.as_str()
        ),
        ("db.example.com", "v1", "databases")
    );
    assert_eq!(kind.short_names, ["db"]);
    assert!(kind.namespaced);
    assert!(kind.status_subresource);
    let columns: Vec<&str> = kind.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["Engine", "Version", "Replicas", "Phase", "Age"]);
    // schemars writes the range as numbers (`1.0`), as in the CRD kube-derive writes.
    let spec = &kind.schema.unwrap()["properties"]["spec"];
    assert_eq!(
        spec["properties"]["engine"]["enum"],
        json!(["mysql", "postgresql", "mongodb"])
    );
    assert_eq!(
        spec["properties"]["version"]["pattern"],
        json!(r"^[0-9]+\.[0-9]+\.[0-9]+$")
    );
    assert_eq!(spec["properties"]["replicas"]["minimum"], json!(1.0));
    assert_eq!(spec["properties"]["replicas"]["maximum"], json!(10.0));
    assert_eq!(spec["required"], json!(["engine", "replicas", "version"]));
}

#[test]
fn the_crd_form_of_the_kind_has_the_seeds_scale_subresource() {
    use kube::CustomResourceExt as _;
    let crd = serde_json::to_value(Database::crd()).unwrap();
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"]["scale"],
        json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"})
    );
}

#[tokio::test]
async fn the_custom_route_answers_beside_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir);
    let (status, body) = call(&app, Method::GET, "/custom", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["message"], "This is a custom endpoint");
    let time: jiff::Timestamp = body["time"].as_str().unwrap().parse().unwrap();
    assert!((jiff::Timestamp::now() - time).get_seconds().abs() < 3600);

    // The API's own endpoints are still the API's.
    let (status, body) = call(&app, Method::GET, "/apis/db.example.com/v1", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["kind"], "APIResourceList");
    assert_eq!(body["resources"][0]["name"], "databases");
    assert_eq!(body["resources"][0]["shortNames"], json!(["db"]));

    let (status, _) = call(&app, Method::POST, "/custom", None).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn the_seeds_database_is_created_read_and_scaled_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir);
    let (status, created) = call(&app, Method::POST, COLLECTION, Some(database(|_| {}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["metadata"]["namespace"], "default");

    let (status, read) = call(
        &app,
        Method::GET,
        &format!("{COLLECTION}/production-db"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        read["spec"],
        json!({"engine": "mysql", "version": "8.0.26", "replicas": 3})
    );

    let mut scaled = read.clone();
    scaled["spec"]["replicas"] = json!(10);
    let (status, updated) = call(
        &app,
        Method::PUT,
        &format!("{COLLECTION}/production-db"),
        Some(scaled),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["metadata"]["generation"], 2);
}

#[tokio::test]
async fn writes_outside_the_seeds_schema_are_422_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir);
    let cases = [
        (database(|s| s["replicas"] = json!(11)), "spec.replicas"),
        (database(|s| s["replicas"] = json!(0)), "spec.replicas"),
        (database(|s| s["engine"] = json!("oracle")), "spec.engine"),
        (database(|s| s["version"] = json!("8.0")), "spec.version"),
    ];
    for (object, field) in cases {
        let (status, body) = call(&app, Method::POST, COLLECTION, Some(object.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{object}: {body}");
        assert_eq!(body["reason"], "Invalid");
        let causes: Vec<&str> = body["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["field"].as_str())
            .collect();
        assert_eq!(causes, [field], "{body}");
    }
    // Nothing was stored.
    let (status, list) = call(&app, Method::GET, COLLECTION, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["items"], json!([]));
}
