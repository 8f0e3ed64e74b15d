// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The request options through the HTTP layer: each validation's code, reason and message
//! (kube-apiserver's, from apimachinery's `ValidateListOptions`, `ValidatePatchOptions`,
//! `ValidateDeleteOptions`, `ValidateDryRun`, `ValidateFieldManager`), the refusals of what
//! this server does not carry out (nothing written), and what kubectl 1.32 sends.

use serde_json::{Value, json};

use super::super::tests::{BODY, DBS, Fixture, call, fixture, json_of};
use super::*;

/// `(code, reason, message)` of an answer.
fn status(answer: &(u16, String)) -> (u16, String, String) {
    let s = json_of(&answer.1);
    (
        answer.0,
        s["reason"].as_str().unwrap_or("").to_string(),
        s["message"].as_str().unwrap_or("").to_string(),
    )
}

fn expect(code: u16, reason: &str, message: &str) -> (u16, String, String) {
    (code, reason.to_string(), message.to_string())
}

async fn with_a(f: &Fixture) -> Value {
    let (code, body) = call(f, "POST", DBS, &[], BODY).await;
    assert_eq!(code, 201, "{body}");
    json_of(&body)
}

async fn exists(f: &Fixture) -> bool {
    call(f, "GET", &format!("{DBS}/a"), &[], "").await.0 == 200
}

const MERGE: (&str, &str) = ("content-type", "application/merge-patch+json");

/// The collection's resourceVersion: the store's revision, raised by every write (so a dry
/// run that leaves it unchanged wrote nothing, and no watcher saw an event).
async fn revision(f: &Fixture) -> String {
    let (code, body) = call(f, "GET", DBS, &[], "").await;
    assert_eq!(code, 200, "{body}");
    json_of(&body)["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_dry_run_create_answers_the_object_it_would_create_and_stores_nothing() {
    let f = fixture(|_| {});
    let before = revision(&f).await;
    let (code, body) = call(&f, "POST", &format!("{DBS}?dryRun=All"), &[], BODY).await;
    assert_eq!(code, 201, "{body}");
    let created = json_of(&body);
    // As kube-apiserver answers `kubectl create --dry-run=server -o yaml`: the object as the
    // create would store it (uid, creationTimestamp, generation), without a resourceVersion.
    assert_eq!(created["metadata"]["name"], json!("a"));
    assert_eq!(created["metadata"]["namespace"], json!("ns"));
    assert_eq!(created["metadata"]["generation"], json!(1));
    assert_eq!(created["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(created["metadata"]["creationTimestamp"].is_string());
    assert_eq!(created["metadata"].get("resourceVersion"), None);
    assert_eq!(created["spec"]["replicas"], json!(2));
    assert!(!exists(&f).await, "a dry-run create wrote the object");
    assert_eq!(revision(&f).await, before);

    // generateName draws a name; the checks run (an invalid object is still 422).
    let generated = r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"generateName":"db-"},"spec":{"replicas":2}}"#;
    let (code, body) = call(&f, "POST", &format!("{DBS}?dryRun=All"), &[], generated).await;
    assert_eq!(code, 201, "{body}");
    let name = json_of(&body)["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(name.starts_with("db-") && name.len() == 8, "{name}");
    let invalid = BODY.replace(r#""name":"a""#, r#""name":"Not_Valid""#);
    let (code, _) = call(&f, "POST", &format!("{DBS}?dryRun=All"), &[], &invalid).await;
    assert_eq!(code, 422);

    // A taken name is 409, as the real create would answer.
    with_a(&f).await;
    let taken = call(&f, "POST", &format!("{DBS}?dryRun=All"), &[], BODY).await;
    assert_eq!(
        status(&taken),
        expect(
            409,
            "AlreadyExists",
            r#"databases.example.com "a" already exists"#
        )
    );
}

#[tokio::test]
async fn dry_run_updates_patches_and_scales_answer_the_new_object_and_store_nothing() {
    let f = fixture(|_| {});
    let a = with_a(&f).await;
    let rv = a["metadata"]["resourceVersion"].clone();
    let before = revision(&f).await;

    let mut put = a.clone();
    put["spec"]["replicas"] = json!(7);
    let path = format!("{DBS}/a?dryRun=All");
    let (code, body) = call(&f, "PUT", &path, &[], &put.to_string()).await;
    assert_eq!(code, 200, "{body}");
    let updated = json_of(&body);
    assert_eq!(updated["spec"]["replicas"], json!(7));
    assert_eq!(updated["metadata"]["generation"], json!(2));
    assert_eq!(updated["metadata"]["resourceVersion"], rv);

    // A stale resourceVersion is still a conflict.
    let mut stale = put.clone();
    stale["metadata"]["resourceVersion"] = json!("12345");
    let (code, _) = call(&f, "PUT", &path, &[], &stale.to_string()).await;
    assert_eq!(code, 409);

    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?dryRun=All&fieldManager=kubectl-patch"),
        &[MERGE],
        r#"{"spec":{"replicas":9}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(json_of(&body)["spec"]["replicas"], json!(9));

    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a/scale?dryRun=All"),
        &[MERGE],
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(json_of(&body)["spec"]["replicas"], json!(5));

    let (_, now) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    let now = json_of(&now);
    assert_eq!(now["spec"]["replicas"], json!(2));
    assert_eq!(now["metadata"]["generation"], json!(1));
    assert_eq!(now["metadata"]["resourceVersion"], rv);
    assert_eq!(revision(&f).await, before);
}

#[tokio::test]
async fn a_dry_run_apply_answers_the_merged_object_and_stores_nothing() {
    let f = fixture(|_| {});
    let apply = ("content-type", "application/apply-patch+yaml");
    let before = revision(&f).await;
    // An apply that would create the object: 201, nothing stored.
    let body =
        "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: b\nspec:\n  replicas: 3\n";
    let (code, out) = call(
        &f,
        "PATCH",
        &format!("{DBS}/b?dryRun=All&fieldManager=alice"),
        &[apply],
        body,
    )
    .await;
    assert_eq!(code, 201, "{out}");
    let would = json_of(&out);
    assert_eq!(would["spec"]["replicas"], json!(3));
    assert_eq!(
        would["metadata"]["managedFields"][0]["manager"],
        json!("alice")
    );
    assert_eq!(would["metadata"].get("resourceVersion"), None);
    let (code, _) = call(&f, "GET", &format!("{DBS}/b"), &[], "").await;
    assert_eq!(code, 404, "a dry-run apply created the object");
    assert_eq!(revision(&f).await, before);

    // An apply over a live object: the merged object, the stored one unchanged.
    let a = with_a(&f).await;
    let body =
        "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: a\nspec:\n  replicas: 4\n";
    let (code, out) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?dryRun=All&fieldManager=alice&force=true"),
        &[apply],
        body,
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(json_of(&out)["spec"]["replicas"], json!(4));
    let (_, now) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    let now = json_of(&now);
    assert_eq!(now["spec"]["replicas"], json!(2));
    assert_eq!(
        now["metadata"]["resourceVersion"],
        a["metadata"]["resourceVersion"]
    );
    assert_eq!(
        now["metadata"]["managedFields"],
        a["metadata"]["managedFields"]
    );
}

#[tokio::test]
async fn dry_run_deletes_answer_as_the_delete_would_and_remove_nothing() {
    let f = fixture(|_| {});
    with_a(&f).await;
    let before = revision(&f).await;

    // kubectl delete --dry-run=server sends it in the DeleteOptions body.
    let body = r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","dryRun":["All"]}"#;
    let (code, out) = call(&f, "DELETE", &format!("{DBS}/a"), &[], body).await;
    assert_eq!(code, 200, "{out}");
    let out = json_of(&out);
    assert_eq!(
        (&out["kind"], &out["status"], &out["details"]["name"]),
        (&json!("Status"), &json!("Success"), &json!("a"))
    );
    let (code, _) = call(&f, "DELETE", &format!("{DBS}/a?dryRun=All"), &[], "").await;
    assert_eq!(code, 200);
    let (code, all) = call(&f, "DELETE", &format!("{DBS}?dryRun=All"), &[], "").await;
    assert_eq!(code, 200, "{all}");
    assert_eq!(json_of(&all)["items"].as_array().unwrap().len(), 1);
    assert!(exists(&f).await, "a dry-run delete removed the object");
    assert_eq!(revision(&f).await, before);

    // With a finalizer, the answer is the object marked deleting; the stored one is not.
    let (code, _) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &[MERGE],
        r#"{"metadata":{"finalizers":["example.com/keep"]}}"#,
    )
    .await;
    assert_eq!(code, 200);
    let before = revision(&f).await;
    let (code, out) = call(&f, "DELETE", &format!("{DBS}/a?dryRun=All"), &[], "").await;
    assert_eq!(code, 200, "{out}");
    let marked = json_of(&out);
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    assert_eq!(marked["metadata"]["resourceVersion"], json!(before));
    let (_, now) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    assert_eq!(json_of(&now)["metadata"].get("deletionTimestamp"), None);
    assert_eq!(revision(&f).await, before);
}

#[tokio::test]
async fn dry_run_values_other_than_all_are_invalid() {
    let f = fixture(|_| {});
    let created = call(
        &f,
        "POST",
        &format!("{DBS}?dryRun=All&dryRun=Some"),
        &[],
        BODY,
    )
    .await;
    assert_eq!(
        status(&created),
        expect(
            422,
            "Invalid",
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Some"}: supported values: "All""#
        )
    );
    let s = json_of(&created.1);
    assert_eq!(
        (
            &s["details"]["group"],
            &s["details"]["kind"],
            &s["details"]["causes"][0]["reason"]
        ),
        (
            &json!("meta.k8s.io"),
            &json!("CreateOptions"),
            &json!("FieldValueNotSupported")
        )
    );
    assert!(!exists(&f).await);
    with_a(&f).await;
    let deleted = call(
        &f,
        "DELETE",
        &format!("{DBS}/a"),
        &[],
        r#"{"dryRun":["Yes"]}"#,
    )
    .await;
    assert_eq!(
        status(&deleted),
        expect(
            422,
            "Invalid",
            r#"DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All""#
        )
    );
    assert!(exists(&f).await);
}

#[tokio::test]
async fn kubectl_delete_with_background_propagation_deletes() {
    let f = fixture(|_| {});
    // What kubectl 1.32 sends for `kubectl delete database a`.
    with_a(&f).await;
    let body = r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}"#;
    let (code, out) = call(&f, "DELETE", &format!("{DBS}/a"), &[], body).await;
    assert_eq!(
        (code, json_of(&out)["status"].as_str()),
        (200, Some("Success"))
    );
    assert!(!exists(&f).await);
    // `--grace-period=30`, `--now` (1) and `--force` (0): a custom resource has no graceful
    // deletion, it goes at once, as in kube-apiserver.
    for grace in ["30", "1", "0"] {
        with_a(&f).await;
        let body = format!(
            r#"{{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":{grace},"propagationPolicy":"Background"}}"#
        );
        let (code, out) = call(&f, "DELETE", &format!("{DBS}/a"), &[], &body).await;
        assert_eq!(code, 200, "gracePeriodSeconds {grace}: {out}");
        assert!(!exists(&f).await, "gracePeriodSeconds {grace}");
    }
    // The query form, and orphanDependents=false (not orphaning: background).
    for query in ["propagationPolicy=Background", "orphanDependents=false"] {
        with_a(&f).await;
        let (code, out) = call(&f, "DELETE", &format!("{DBS}/a?{query}"), &[], "").await;
        assert_eq!(code, 200, "{query}: {out}");
        assert!(!exists(&f).await, "{query}");
    }
    with_a(&f).await;
    let (code, out) = call(
        &f,
        "DELETE",
        &format!("{DBS}?propagationPolicy=Background"),
        &[],
        "",
    )
    .await;
    assert_eq!(
        (code, json_of(&out)["items"].as_array().map(Vec::len)),
        (200, Some(1))
    );
    assert!(!exists(&f).await);
}

/// `DELETE {DBS}/{name}{query}` with `body`: the answer's code and JSON.
async fn delete(f: &Fixture, name: &str, query: &str, body: &str) -> (u16, Value) {
    let (code, out) = call(f, "DELETE", &format!("{DBS}/{name}{query}"), &[], body).await;
    (code, json_of(&out))
}

#[tokio::test]
async fn orphan_and_foreground_deletes_leave_the_object_to_the_garbage_collector() {
    let f = fixture(|_| {});
    with_a(&f).await;
    // As kube-apiserver: the object is marked deleting with the garbage collector's finalizer
    // for the policy, and stays until the collector removes it.
    let (code, marked) = delete(&f, "a", "?propagationPolicy=Orphan", "").await;
    assert_eq!(code, 200, "{marked}");
    assert_eq!(marked["metadata"]["finalizers"], json!(["orphan"]));
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], json!(0));
    assert!(exists(&f).await);
    let stamp = marked["metadata"]["deletionTimestamp"].clone();
    // A second delete with another policy swaps the finalizer; the mark stays as it was.
    let (code, swapped) = delete(&f, "a", "", r#"{"propagationPolicy":"Foreground"}"#).await;
    assert_eq!(code, 200, "{swapped}");
    assert_eq!(
        swapped["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert_eq!(swapped["metadata"]["deletionTimestamp"], stamp);
    assert_eq!(
        swapped["metadata"]["generation"],
        marked["metadata"]["generation"]
    );
    // Background takes the last finalizer off, and the object goes.
    let (code, gone) = delete(&f, "a", "?propagationPolicy=Background", "").await;
    assert_eq!((code, &gone["status"]), (200, &json!("Success")), "{gone}");
    assert!(!exists(&f).await);

    // orphanDependents=true (deprecated) is Orphan; the object's own finalizers stay first.
    let with_keep = BODY.replace(
        r#""name":"a""#,
        r#""name":"a","finalizers":["example.com/keep"]"#,
    );
    let (code, _) = call(&f, "POST", DBS, &[], &with_keep).await;
    assert_eq!(code, 201);
    let (code, marked) = delete(&f, "a", "?orphanDependents=true", "").await;
    assert_eq!(code, 200, "{marked}");
    assert_eq!(
        marked["metadata"]["finalizers"],
        json!(["example.com/keep", "orphan"])
    );
    // The collector's part, played here: the finalizers taken off, the object goes.
    let (code, _) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a"),
        &[MERGE],
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;
    assert_eq!(code, 200);
    assert!(!exists(&f).await);

    // A collection: every object marked with the finalizer.
    with_a(&f).await;
    let (code, all) = call(
        &f,
        "DELETE",
        &format!("{DBS}?propagationPolicy=Foreground"),
        &[],
        "",
    )
    .await;
    assert_eq!(code, 200, "{all}");
    assert_eq!(
        json_of(&all)["items"][0]["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert!(exists(&f).await);
}

#[tokio::test]
async fn delete_options_are_validated_as_kube_apiserver_does() {
    let f = fixture(|_| {});
    with_a(&f).await;
    let both = call(
        &f,
        "DELETE",
        &format!("{DBS}/a"),
        &[],
        r#"{"orphanDependents":false,"propagationPolicy":"Background"}"#,
    )
    .await;
    assert_eq!(
        status(&both),
        expect(
            422,
            "Invalid",
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set"#
        )
    );
    let unknown = call(
        &f,
        "DELETE",
        &format!("{DBS}/a?propagationPolicy=Sideways"),
        &[],
        "",
    )
    .await;
    assert_eq!(
        status(&unknown),
        expect(
            422,
            "Invalid",
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#
        )
    );
    let wrong_type = call(
        &f,
        "DELETE",
        &format!("{DBS}/a"),
        &[],
        r#"{"gracePeriodSeconds":"soon"}"#,
    )
    .await;
    assert_eq!(
        status(&wrong_type),
        expect(
            400,
            "BadRequest",
            r#"DeleteOptions.gracePeriodSeconds: invalid value "soon""#
        )
    );
    assert!(exists(&f).await);
}

#[tokio::test]
async fn list_and_watch_options_are_validated_as_kube_apiserver_does() {
    let f = fixture(|_| {});
    let forbidden = |m: &str| {
        expect(
            422,
            "Invalid",
            &format!(
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: {m}"#
            ),
        )
    };
    let cases = [
        (
            "resourceVersionMatch=NotOlderThan",
            forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ),
        (
            "resourceVersionMatch=Exact&resourceVersion=0",
            forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
        ),
        (
            "resourceVersionMatch=Exact&resourceVersion=5&continue=abc",
            forbidden("resourceVersionMatch is forbidden when continue is provided"),
        ),
        (
            "resourceVersionMatch=Latest&resourceVersion=5",
            expect(
                422,
                "Invalid",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Latest": supported values: "Exact", "NotOlderThan", """#,
            ),
        ),
        (
            "sendInitialEvents=true",
            expect(
                422,
                "Invalid",
                r#"ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"#,
            ),
        ),
        (
            "watch=true&sendInitialEvents=true",
            forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ),
        (
            "watch=true&resourceVersionMatch=NotOlderThan",
            forbidden(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ),
        ),
        (
            "watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan",
            expect(
                400,
                "BadRequest",
                "sendInitialEvents=false is not supported yet by this server; leave it unset or send true",
            ),
        ),
        (
            "limit=ten",
            expect(
                400,
                "BadRequest",
                r#"limit: invalid value "ten": expected an integer"#,
            ),
        ),
        // Any `watch` value but `0` and `false` watches (the parameter codec's booleans):
        // validated as a watch, not refused as a bad boolean.
        (
            "watch=maybe&resourceVersionMatch=NotOlderThan",
            forbidden(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ),
        ),
    ];
    for (query, want) in cases {
        let answer = call(&f, "GET", &format!("{DBS}?{query}"), &[], "").await;
        assert_eq!(status(&answer), want, "{query}");
    }
}

#[tokio::test]
async fn a_watch_list_sends_the_initial_events_then_their_end() {
    let f = fixture(|_| {});
    with_a(&f).await;
    // What client-go's watch-list (and kube-rs's `streaming_lists`) sends.
    let (code, body) = call(
        &f,
        "GET",
        &format!(
            "{DBS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
        ),
        &[],
        "",
    )
    .await;
    let events: Vec<Value> = body.lines().map(json_of).collect();
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        events
            .iter()
            .map(|e| (e["type"].clone(), e["object"]["metadata"]["name"].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("ADDED"), json!("a")),
            (json!("BOOKMARK"), Value::Null)
        ]
    );
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        json!("true")
    );
}

#[tokio::test]
async fn write_options_are_validated_as_kube_apiserver_does() {
    let f = fixture(|_| {});
    let bad_validation = call(
        &f,
        "POST",
        &format!("{DBS}?fieldValidation=Loose"),
        &[],
        BODY,
    )
    .await;
    assert_eq!(
        status(&bad_validation),
        expect(
            422,
            "Invalid",
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn""#
        )
    );
    let long = "m".repeat(129);
    let too_long = call(&f, "POST", &format!("{DBS}?fieldManager={long}"), &[], BODY).await;
    assert_eq!(
        status(&too_long),
        expect(
            422,
            "Invalid",
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes"#
        )
    );
    assert_eq!(
        json_of(&too_long.1)["details"]["causes"][0]["reason"],
        json!("FieldValueTooLong")
    );
    let control = call(&f, "POST", &format!("{DBS}?fieldManager=a%09b"), &[], BODY).await;
    assert_eq!(
        status(&control),
        expect(
            422,
            "Invalid",
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\tb": invalid character U+0009 (at position 1)"#
        )
    );
    // `force` is no option of a create or an update: an unknown parameter, ignored as the API
    // server's parameter codec ignores it.
    let forced = call(&f, "POST", &format!("{DBS}?force=true"), &[], BODY).await;
    assert_eq!(forced.0, 201, "{}", forced.1);
    let (code, body) = call(&f, "DELETE", &format!("{DBS}/a"), &[], "").await;
    assert_eq!(code, 200, "{body}");
    assert!(!exists(&f).await);

    // What kubectl 1.32 sends for `kubectl create -f`, then `kubectl patch --type merge`.
    let (code, body) = call(
        &f,
        "POST",
        &format!("{DBS}?fieldManager=kubectl-create&fieldValidation=Strict"),
        &[],
        BODY,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let forced = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?force=true&fieldManager=kubectl-patch"),
        &[MERGE],
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(
        status(&forced),
        expect(
            422,
            "Invalid",
            r#"PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch"#
        )
    );
    let apply = ("content-type", "application/apply-patch+yaml");
    let unnamed = call(&f, "PATCH", &format!("{DBS}/a"), &[apply], BODY).await;
    assert_eq!(
        status(&unnamed),
        expect(
            422,
            "Invalid",
            r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
        )
    );
    let cbor = ("content-type", "application/apply-patch+cbor");
    let cbor = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=m"),
        &[cbor],
        BODY,
    )
    .await;
    assert_eq!(cbor.0, 415, "{}", cbor.1);
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=kubectl-patch&fieldValidation=Strict"),
        &[MERGE],
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(
        (code, &json_of(&body)["spec"]["replicas"]),
        (200, &json!(5))
    );
    let mut put = json_of(&body);
    put["spec"]["replicas"] = json!(6);
    let bad = call(
        &f,
        "PUT",
        &format!("{DBS}/a?fieldValidation=Lax"),
        &[],
        &put.to_string(),
    )
    .await;
    assert_eq!(status(&bad).1, "Invalid");
    assert!(
        status(&bad)
            .2
            .starts_with("UpdateOptions.meta.k8s.io \"\" is invalid: fieldValidation")
    );
}

#[tokio::test]
async fn pretty_indents_the_answer() {
    let f = fixture(|_| {});
    with_a(&f).await;
    let (code, body) = call(&f, "GET", &format!("{DBS}/a?pretty=true"), &[], "").await;
    assert_eq!(code, 200);
    assert!(body.starts_with("{\n  \""), "{body}");
    let (_, body) = call(&f, "GET", &format!("{DBS}/a"), &[], "").await;
    assert!(!body.contains('\n'), "{body}");
}

#[test]
fn parse_keeps_every_dry_run_value_and_reads_empty_values_as_unset() {
    let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let o = RequestOptions::parse(&q(&[
        ("dryRun", "All"),
        ("dryRun", "All"),
        ("resourceVersion", ""),
        ("continue", ""),
        ("limit", "-3"),
        ("timeoutSeconds", "9"),
        ("unknownParameter", "x"),
    ]))
    .unwrap();
    assert_eq!(
        (
            o.dry_run.clone(),
            o.resource_version.clone(),
            o.continue_token.clone(),
            o.limit,
            o.timeout_seconds
        ),
        (
            vec!["All".to_string(), "All".to_string()],
            None,
            None,
            0,
            Some(9)
        )
    );
    let o = RequestOptions::parse(&q(&[("watch", "1"), ("sendInitialEvents", "true")])).unwrap();
    assert_eq!((o.watch, o.send_initial_events), (true, Some(true)));
    assert_eq!(
        RequestOptions::parse(&q(&[("includeObject", "All")]))
            .unwrap_err()
            .code,
        400
    );
}

/// Go's `time.ParseDuration` cases, as kube-apiserver reads the `timeout` parameter.
#[test]
fn go_durations_parse_as_go_parses_them() {
    use std::time::Duration;
    let ok: &[(&str, Duration)] = &[
        ("0", Duration::ZERO),
        ("32s", Duration::from_secs(32)),
        ("1m30s", Duration::from_secs(90)),
        ("1.5h", Duration::from_secs(5400)),
        ("250ms", Duration::from_millis(250)),
        ("10us", Duration::from_micros(10)),
        ("10µs", Duration::from_micros(10)),
        ("7ns", Duration::from_nanos(7)),
        ("+5s", Duration::from_secs(5)),
        (".5s", Duration::from_millis(500)),
    ];
    for (text, want) in ok {
        assert_eq!(go_duration(text), Ok(Some(*want)), "{text}");
    }
    assert_eq!(go_duration("-5s"), Ok(None));
    assert_eq!(go_duration("-0"), Ok(Some(Duration::ZERO)));
    let errors = [
        ("", r#"time: invalid duration """#),
        ("bogus", r#"time: invalid duration "bogus""#),
        ("1", r#"time: missing unit in duration "1""#),
        ("1d", r#"time: unknown unit "d" in duration "1d""#),
        ("1..2s", r#"time: invalid duration "1..2s""#),
        ("s", r#"time: invalid duration "s""#),
    ];
    for (text, want) in errors {
        assert_eq!(go_duration(text), Err(want.to_string()), "{text}");
    }
}

#[tokio::test]
async fn the_timeout_parameter_shortens_a_request_and_a_bad_one_is_refused() {
    use std::time::Duration;
    let default = Duration::from_secs(60);
    let with = |t: &str| RequestOptions {
        timeout: Some(t.to_string()),
        ..RequestOptions::default()
    };
    assert_eq!(
        with("32s").request_timeout(default),
        Ok(Duration::from_secs(32))
    );
    // Zero, negative and longer than the server's limit: the server's limit.
    for t in ["0s", "-1s", "2m"] {
        assert_eq!(with(t).request_timeout(default), Ok(default), "{t}");
    }
    assert_eq!(
        RequestOptions::default().request_timeout(default),
        Ok(default)
    );

    let f = fixture(|_| {});
    let answer = call(&f, "GET", &format!("{DBS}?timeout=bogus"), &[], "").await;
    assert_eq!(
        status(&answer),
        expect(
            400,
            "BadRequest",
            r#"invalid timeout specified in the request URL - time: invalid duration "bogus""#
        )
    );
    // kubectl sends one on every request.
    let (code, _) = call(&f, "GET", &format!("{DBS}?timeout=32s"), &[], "").await;
    assert_eq!(code, 200);
}

/// `Convert_Slice_string_To_bool`'s cases: only `0` and `false` (any case) are false, every
/// other value is true; a repeated parameter counts once, with its first value.
#[test]
fn query_booleans_and_repeated_parameters_read_as_the_parameter_codec_reads_them() {
    let q = |pairs: &[(&str, &str)]| -> RequestOptions {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RequestOptions::parse(&pairs).unwrap()
    };
    let force = |v: &str| q(&[("force", v)]).force;
    for v in ["true", "1", "maybe", "", "f", "F", "no", "off"] {
        assert_eq!(force(v), Some(true), "force={v}");
    }
    for v in ["0", "false", "FALSE", "fAlSe", "fal\u{017F}e"] {
        assert_eq!(force(v), Some(false), "force={v}");
    }
    assert!(q(&[("watch", "maybe")]).watch);
    assert!(!q(&[("watch", "False")]).watch);
    assert_eq!(q(&[("orphanDependents", "")]).orphan_dependents, Some(true));
    // `pretty` is Go's `strconv.ParseBool`, false for a value it refuses.
    assert!(!q(&[("pretty", "yes")]).pretty);
    assert!(q(&[("pretty", "T")]).pretty);
    let o = q(&[
        ("fieldManager", "a"),
        ("fieldManager", "b"),
        ("force", "false"),
        ("force", "true"),
        ("dryRun", "All"),
        ("dryRun", "All"),
    ]);
    assert_eq!(
        (o.field_manager.as_deref(), o.force, o.dry_run.len()),
        (Some("a"), Some(false), 2)
    );
}

#[tokio::test]
async fn booleans_never_fail_a_request_and_a_named_get_ignores_watch() {
    let f = fixture(|_| {});
    let created = with_a(&f).await;
    // A named GET decodes GetOptions, which has no `watch`: the object, not a 405.
    let (code, body) = call(&f, "GET", &format!("{DBS}/a?watch=true"), &[], "").await;
    assert_eq!(
        (code, json_of(&body)["metadata"]["name"].clone()),
        (200, json!("a"))
    );
    let (code, body) = call(&f, "GET", &format!("{DBS}/a?pretty=yes"), &[], "").await;
    assert_eq!((code, body.contains('\n')), (200, false), "{body}");
    // `force` is no option of an update: ignored whatever its value.
    let (code, body) = call(
        &f,
        "PUT",
        &format!("{DBS}/a?force=maybe"),
        &[],
        &created.to_string(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    // `force=f` on an apply forces (only `0` and `false` do not): the conflicting field is
    // taken from the manager that set it.
    let apply = ("content-type", "application/apply-patch+yaml");
    let (code, body) = call(
        &f,
        "PATCH",
        &format!("{DBS}/a?fieldManager=other&force=f"),
        &[apply],
        r#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":7}}"#,
    )
    .await;
    assert_eq!(
        (code, json_of(&body)["spec"]["replicas"].clone()),
        (200, json!(7)),
        "{body}"
    );
}
