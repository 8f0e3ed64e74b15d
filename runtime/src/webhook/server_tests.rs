// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The webhook server's connection handling against controller-runtime's: a shutdown refuses
//! new connections at once while in-flight requests finish, kept-alive connections stay open
//! for the idle timeout, and `CONNECT` reviews reach the validator's default answer. And the
//! bounds of the conversion webhook's memory: the body limit, the bytes in flight.

use std::time::Duration;

use serde_json::{Value, json};

use super::tests::{VALIDATE, review, review_of, send, start, start_with, webhooks, widget};
use super::{CONVERSION_BODY_LIMIT, CONVERSION_PATH};

#[test]
fn the_keep_alive_idle_timeout_is_go_s_idle_conn_timeout() {
    assert_eq!(crate::tls::KEEP_ALIVE_IDLE_TIMEOUT, Duration::from_secs(90));
}

#[tokio::test]
async fn a_connection_after_shutdown_starts_is_refused_while_an_in_flight_request_finishes() {
    let server = start(webhooks()).await;
    let slow = review("CREATE", widget(json!({"color": "slow"})), Value::Null);
    let in_flight = {
        let mut sender = server.connect().await;
        let body = slow.to_string().into_bytes();
        tokio::spawn(async move { send(&mut sender, VALIDATE, "application/json", body).await })
    };
    // The validator sleeps 1.5 s on `slow`; shut down while it runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.shutdown.cancel();
    let mut refused = false;
    for _ in 0..100 {
        match tokio::net::TcpStream::connect(server.addr).await {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                refused = true;
                break;
            }
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    assert!(
        refused,
        "a new connection is still accepted after shutdown started"
    );
    let (status, answer) = in_flight
        .await
        .expect("the request task")
        .expect("the in-flight request is answered");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
}

#[tokio::test]
async fn a_kept_alive_connection_closes_only_after_the_idle_timeout() {
    let server = start_with(webhooks(), Duration::from_millis(1200)).await;
    let body = || {
        review("CREATE", widget(json!({"color": "red"})), Value::Null)
            .to_string()
            .into_bytes()
    };
    let mut sender = server.connect().await;
    let (status, _) = send(&mut sender, VALIDATE, "application/json", body())
        .await
        .expect("first request");
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (status, _) = send(&mut sender, VALIDATE, "application/json", body())
        .await
        .expect("the connection is still open within the idle timeout");
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        send(&mut sender, VALIDATE, "application/json", body())
            .await
            .is_err(),
        "an idle connection stays open past the idle timeout"
    );
}

#[tokio::test]
async fn a_connect_review_is_admitted_as_controller_runtime_admits_it() {
    let server = start(webhooks()).await;
    let connect = review_of(
        json!({"group": "", "version": "v1", "kind": "PodExecOptions"}),
        json!({"group": "example.com", "version": "v1", "resource": "widgets"}),
        "CONNECT",
        json!({"apiVersion": "v1", "kind": "PodExecOptions", "command": ["sh"]}),
        Value::Null,
    );
    let response = server.admit(VALIDATE, &connect).await;
    assert_eq!(response["allowed"], true, "{response}");
    // Another resource is still refused, CONNECT or not.
    let mut elsewhere = connect.clone();
    elsewhere["request"]["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
    let response = server.admit(VALIDATE, &elsewhere).await;
    assert_eq!(response["allowed"], false, "{response}");
    assert_eq!(response["status"]["code"], 400, "{response}");
}

/// A ConversionReview of one v2 Widget to v1 whose annotation holds `bytes` bytes.
fn conversion_of(bytes: usize) -> Value {
    let mut object = widget(json!({"color": "red", "size": 2}));
    object["apiVersion"] = json!("example.com/v2");
    object["metadata"]["annotations"] = json!({"example.com/blob": "x".repeat(bytes)});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c0a1b2c3-0000-4000-8000-000000000004",
            "desiredAPIVersion": "example.com/v1",
            "objects": [object],
        },
    })
}

#[tokio::test]
async fn a_conversion_review_over_the_body_limit_is_answered_413_with_the_limit() {
    let server = start(webhooks()).await;
    assert_eq!(CONVERSION_BODY_LIMIT, 16 * 1024 * 1024);
    let (status, answer) = server
        .post(CONVERSION_PATH, &conversion_of(CONVERSION_BODY_LIMIT))
        .await;
    assert_eq!(status, 413, "{}", answer["response"]["result"]);
    assert_eq!(
        answer["response"]["result"],
        json!({
            "status": "Failure",
            "message": "request entity is too large; limit is 16777216 bytes",
        })
    );
    // The server goes on answering, a review just under the limit included.
    let (status, answer) = server
        .post(
            CONVERSION_PATH,
            &conversion_of(CONVERSION_BODY_LIMIT - 4096),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["result"], json!({"status": "Success"}));
    let converted = &answer["response"]["convertedObjects"][0];
    assert_eq!(converted["spec"], json!({"color": "red", "replicas": 2}));
}

#[tokio::test]
async fn a_conversion_review_waits_until_its_body_fits_in_the_bytes_in_flight() {
    let budget = 64 * 1024;
    let webhooks = webhooks().conversion_bytes_in_flight(budget);
    let permits = webhooks.conversion_permits();
    let server = start(webhooks).await;
    // Another review in flight holds one byte of the budget; this one, larger than the whole
    // budget, needs all of it.
    let held = permits
        .clone()
        .acquire_many_owned(1)
        .await
        .expect("permits");
    let review = conversion_of(100 * 1024);
    let waiting = {
        let mut sender = server.connect().await;
        let body = review.to_string().into_bytes();
        tokio::spawn(
            async move { send(&mut sender, CONVERSION_PATH, "application/json", body).await },
        )
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !waiting.is_finished(),
        "the review was answered while the bytes in flight had no room for it"
    );
    drop(held);
    let (status, answer) = waiting
        .await
        .expect("the request task")
        .expect("the review is answered once the other one is done");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["response"]["result"], json!({"status": "Success"}));
    // Answered, it gave its share back.
    assert_eq!(permits.available_permits(), budget);
}
