//! Admission written in Rust for a served kind ([`rsbuilder_runtime::apiserver::admission`]):
//! defaulting then validation on create, update, patch and delete, answered as
//! k8s.io/apiserver answers a failed validation (422 Invalid with `details.causes`), with
//! nothing stored on a rejection. Requests go to the server's router as HTTP requests.

use axum::body::Body;
use http::Request;
use kube_derive::CustomResource;
use rsbuilder_runtime::apiserver::admission::{Admitted, Invalid};
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::server::{ApiServer, Config};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use rsbuilder_runtime::webhook::{Defaulter, Validator};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The Database API server example's kind, with a version the server defaults.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    crates(kube_core = "::kube_core")
)]
pub struct DatabaseSpec {
    /// `postgres` or `mysql`.
    pub engine: String,
    /// The engine version; defaulted per engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many replicas to run.
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
}

/// What the operator observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct DatabaseStatus {
    /// The lifecycle phase.
    pub phase: String,
}

/// Rules the schema cannot say: a default per engine, at most 3 MySQL replicas, an
/// immutable engine, and no deleting a Database labelled `protected=true`.
struct DatabaseAdmission;

impl Defaulter<Database, Invalid> for DatabaseAdmission {
    async fn default(&self, db: &mut Database) -> Admitted {
        if db.spec.version.is_none() {
            let version = if db.spec.engine == "mysql" {
                "8.4"
            } else {
                "16"
            };
            db.spec.version = Some(version.into());
        }
        Ok(())
    }
}

impl Validator<Database, Admitted> for DatabaseAdmission {
    async fn validate_create(&self, db: &Database) -> Admitted {
        if db.spec.engine == "mysql" && db.spec.replicas > 3 {
            return Err(Invalid::field(
                "spec.replicas",
                format!("Invalid value: {}: mysql runs at most 3", db.spec.replicas),
            ));
        }
        Ok(())
    }

    async fn validate_update(&self, old: &Database, new: &Database) -> Admitted {
        let mut causes = Invalid::default();
        if old.spec.engine != new.spec.engine {
            causes = causes.and(
                "spec.engine",
                format!("Invalid value: {:?}: field is immutable", new.spec.engine),
            );
        }
        if new.spec.version.as_deref() == Some("0") {
            causes = causes.and("spec.version", "Unsupported value: \"0\"");
        }
        match causes.causes.is_empty() {
            true => Ok(()),
            false => Err(causes),
        }
    }

    async fn validate_delete(&self, db: &Database) -> Admitted {
        let protected = db
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("protected"))
            .is_some_and(|v| v == "true");
        match protected {
            true => Err(Invalid::field(
                "metadata.labels.protected",
                "Forbidden: a protected Database cannot be deleted",
            )),
            false => Ok(()),
        }
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    router: axum::Router,
}

fn fixture() -> Fixture {
    fixture_of(
        ApiKind::of::<Database>()
            .unwrap()
            .admission(DatabaseAdmission),
    )
}

fn fixture_of(kind: ApiKind) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("db")).unwrap();
    let server = ApiServer::new(Config::new(vec![kind]), store, CancellationToken::new());
    Fixture {
        _dir: dir,
        router: server.router(),
    }
}

async fn call(
    f: &Fixture,
    method: &str,
    uri: &str,
    content_type: &str,
    body: Value,
) -> (u16, Value) {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap();
    let resp = f.router.clone().oneshot(req).await.unwrap();
    let code = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    (code, value)
}

const DBS: &str = "/apis/example.com/v1/namespaces/ns/databases";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

fn db(name: &str, engine: &str, replicas: i32) -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Database",
        "metadata": {"name": name},
        "spec": {"engine": engine, "replicas": replicas},
    })
}

#[tokio::test]
async fn create_fills_in_the_default_and_keeps_it() {
    let f = fixture();
    let (code, made) = call(&f, "POST", DBS, JSON, db("a", "mysql", 1)).await;
    assert_eq!(code, 201, "{made}");
    assert_eq!(made["spec"]["version"], "8.4");
    let (code, got) = call(&f, "GET", &format!("{DBS}/a"), JSON, Value::Null).await;
    assert_eq!((code, &got["spec"]["version"]), (200, &json!("8.4")));
    // A version the user sets is kept; a PUT that drops it gets the default again.
    let mut body = db("b", "postgres", 2);
    body["spec"]["version"] = json!("15");
    let (_, made) = call(&f, "POST", DBS, JSON, body).await;
    assert_eq!(made["spec"]["version"], "15");
    let mut put = made.clone();
    put["spec"].as_object_mut().unwrap().remove("version");
    let (code, put) = call(&f, "PUT", &format!("{DBS}/b"), JSON, put).await;
    assert_eq!((code, &put["spec"]["version"]), (200, &json!("16")));
}

#[tokio::test]
async fn an_invalid_create_is_a_422_with_its_causes_and_stores_nothing() {
    let f = fixture();
    let (code, status) = call(&f, "POST", DBS, JSON, db("a", "mysql", 5)).await;
    assert_eq!(code, 422);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["code"], 422);
    assert_eq!(
        status["message"],
        "Database.example.com \"a\" is invalid: spec.replicas: Invalid value: 5: mysql runs at most 3"
    );
    assert_eq!(
        status["details"],
        json!({
            "name": "a", "group": "example.com", "kind": "Database",
            "causes": [{
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 5: mysql runs at most 3",
                "field": "spec.replicas",
            }],
        })
    );
    let (code, _) = call(&f, "GET", &format!("{DBS}/a"), JSON, Value::Null).await;
    assert_eq!(code, 404);
    // The schema is checked before the kind's validation: 11 replicas is the schema's cause.
    let (code, status) = call(&f, "POST", DBS, JSON, db("b", "mysql", 11)).await;
    assert_eq!(code, 422);
    assert_eq!(status["details"]["causes"][0]["field"], "spec.replicas");
    assert!(
        !status["message"].as_str().unwrap().contains("mysql runs"),
        "{status}"
    );
}

#[tokio::test]
async fn an_update_or_patch_that_violates_is_a_422_and_storage_is_unchanged() {
    let f = fixture();
    let (_, made) = call(&f, "POST", DBS, JSON, db("a", "postgres", 1)).await;
    let url = format!("{DBS}/a");
    let mut put = made.clone();
    put["spec"]["engine"] = json!("mysql");
    put["spec"]["version"] = json!("0");
    let (code, status) = call(&f, "PUT", &url, JSON, put).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        status["details"]["causes"],
        json!([
            {"reason": "FieldValueInvalid", "message": "Invalid value: \"mysql\": field is immutable", "field": "spec.engine"},
            {"reason": "FieldValueNotSupported", "message": "Unsupported value: \"0\"", "field": "spec.version"},
        ])
    );
    let (code, status) = call(
        &f,
        "PATCH",
        &url,
        MERGE,
        json!({"spec": {"engine": "mysql"}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(status["details"]["causes"][0]["field"], "spec.engine");
    let (_, got) = call(&f, "GET", &url, JSON, Value::Null).await;
    assert_eq!(
        got, made,
        "a rejected write leaves the stored object as it was"
    );
    // An admitted patch is stored.
    let (code, patched) = call(&f, "PATCH", &url, MERGE, json!({"spec": {"replicas": 3}})).await;
    assert_eq!((code, &patched["spec"]["replicas"]), (200, &json!(3)));
    assert_ne!(
        patched["metadata"]["resourceVersion"],
        made["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn a_rejected_delete_is_a_4xx_and_the_object_stays() {
    let f = fixture();
    let mut body = db("a", "postgres", 1);
    body["metadata"]["labels"] = json!({"protected": "true"});
    let (_, made) = call(&f, "POST", DBS, JSON, body).await;
    let url = format!("{DBS}/a");
    let (code, status) = call(&f, "DELETE", &url, JSON, Value::Null).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        status["details"]["causes"][0],
        json!({
            "reason": "FieldValueForbidden",
            "message": "Forbidden: a protected Database cannot be deleted",
            "field": "metadata.labels.protected",
        })
    );
    // deletecollection goes through the same check.
    let (code, _) = call(&f, "DELETE", DBS, JSON, Value::Null).await;
    assert_eq!(code, 422);
    let (code, got) = call(&f, "GET", &url, JSON, Value::Null).await;
    assert_eq!((code, got), (200, made));
    let (code, _) = call(
        &f,
        "PATCH",
        &url,
        MERGE,
        json!({"metadata": {"labels": {"protected": null}}}),
    )
    .await;
    assert_eq!(code, 200);
    let (code, status) = call(&f, "DELETE", &url, JSON, Value::Null).await;
    assert_eq!((code, status["status"].as_str()), (200, Some("Success")));
    let (code, _) = call(&f, "GET", &url, JSON, Value::Null).await;
    assert_eq!(code, 404);
}

/// The validation of [`DatabaseAdmission`] alone: a kind registered with `validating` runs
/// no defaulting.
struct OnlyValidation;

impl Validator<Database, Admitted> for OnlyValidation {
    async fn validate_create(&self, db: &Database) -> Admitted {
        DatabaseAdmission.validate_create(db).await
    }
}

/// The defaulting of [`DatabaseAdmission`] alone: a kind registered with `defaulting` runs no
/// validation in Rust.
struct OnlyDefaulting;

impl Defaulter<Database, Invalid> for OnlyDefaulting {
    async fn default(&self, db: &mut Database) -> Admitted {
        DatabaseAdmission.default(db).await
    }
}

#[tokio::test]
async fn a_kind_can_register_validation_or_defaulting_alone() {
    let validating = fixture_of(
        ApiKind::of::<Database>()
            .unwrap()
            .validating(OnlyValidation),
    );
    let (code, status) = call(&validating, "POST", DBS, JSON, db("a", "mysql", 5)).await;
    assert_eq!(
        (code, &status["reason"]),
        (422, &json!("Invalid")),
        "{status}"
    );
    let (code, made) = call(&validating, "POST", DBS, JSON, db("b", "mysql", 1)).await;
    assert_eq!(code, 201, "{made}");
    assert_eq!(made["spec"].get("version"), None, "{made}");

    let defaulting = fixture_of(
        ApiKind::of::<Database>()
            .unwrap()
            .defaulting(OnlyDefaulting),
    );
    let (code, made) = call(&defaulting, "POST", DBS, JSON, db("a", "mysql", 5)).await;
    assert_eq!(code, 201, "{made}");
    assert_eq!(made["spec"]["version"], "8.4");
}
