// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
use super::*;
use crate::apiserver::selector::{FieldSelector, LabelSelector};
use crate::apiserver::storage::RedbStore;
use serde_json::json;

pub(crate) fn database_kind() -> ApiKind {
    ApiKind {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Database".into(),
        list_kind: "DatabaseList".into(),
        plural: "databases".into(),
        singular: "database".into(),
        short_names: vec!["db".into()],
        categories: vec!["all".into()],
        namespaced: true,
        columns: vec![],
        status_subresource: true,
        scale: Some(crate::apiserver::kind::ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }),
        schema: None,
        merge_facts: None,
        admission: None,
    }
}

fn db(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Database",
        "metadata": {"name": name},
        "spec": {"engine": "postgres", "version": "16", "replicas": replicas},
    })
}

fn registry(dir: &tempfile::TempDir) -> Registry<RedbStore> {
    Registry::new(RedbStore::open(&dir.path().join("db")).unwrap())
}

#[tokio::test]
async fn create_sets_the_system_metadata_and_drops_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let mut body = db("a", 1);
    body["status"] = json!({"phase": "Ready"});
    let out = r.create(&k, Some("ns"), body, "test").await.unwrap();
    let m = &out["metadata"];
    assert_eq!(m["namespace"], "ns");
    assert_eq!(m["generation"], 1);
    assert_eq!(m["resourceVersion"], "1");
    assert_eq!(m["uid"].as_str().unwrap().len(), 36);
    assert!(m["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert!(out.get("status").is_none());
    assert_eq!(r.get(&k, Some("ns"), "a").await.unwrap(), out);
}

#[tokio::test]
async fn create_refuses_what_the_api_server_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let taken = r
        .create(&k, Some("ns"), db("a", 1), "test")
        .await
        .unwrap_err();
    assert_eq!((taken.code, taken.reason), (409, "AlreadyExists"));
    assert_eq!(taken.message, "databases.example.com \"a\" already exists");
    let bad_name = r
        .create(&k, Some("ns"), db("Not_Valid", 1), "test")
        .await
        .unwrap_err();
    assert_eq!((bad_name.code, bad_name.reason), (422, "Invalid"));
    assert_eq!(
        bad_name.details.unwrap()["causes"][0]["field"],
        "metadata.name"
    );
    let mut other_ns = db("b", 1);
    other_ns["metadata"]["namespace"] = json!("elsewhere");
    assert_eq!(
        r.create(&k, Some("ns"), other_ns, "test")
            .await
            .unwrap_err()
            .code,
        400
    );
    let mut with_rv = db("c", 1);
    with_rv["metadata"]["resourceVersion"] = json!("5");
    assert_eq!(
        r.create(&k, Some("ns"), with_rv, "test")
            .await
            .unwrap_err()
            .code,
        400
    );
    let mut wrong_kind = db("d", 1);
    wrong_kind["kind"] = json!("Cache");
    assert_eq!(
        r.create(&k, Some("ns"), wrong_kind, "test")
            .await
            .unwrap_err()
            .code,
        400
    );
}

#[tokio::test]
async fn generate_name_gives_a_fresh_name() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let body = json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"generateName": "db-"}, "spec": {}});
    let a = r
        .create(&k, Some("ns"), body.clone(), "test")
        .await
        .unwrap();
    let b = r.create(&k, Some("ns"), body, "test").await.unwrap();
    let (a, b) = (meta_str(&a, "name"), meta_str(&b, "name"));
    assert!(a.starts_with("db-") && a.len() == 8, "{a}");
    assert_ne!(a, b);
}

#[tokio::test]
async fn a_stale_update_is_a_conflict_and_generation_follows_the_spec_only() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let v1 = r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    // A label change: new resourceVersion, same generation.
    let mut labelled = v1.clone();
    labelled["metadata"]["labels"] = json!({"env": "prod"});
    let v2 = r
        .update(&k, Some("ns"), "a", Part::Main, labelled, "test")
        .await
        .unwrap();
    assert_eq!(v2["metadata"]["generation"], 1);
    assert_eq!(v2["metadata"]["resourceVersion"], "2");
    // A spec change: generation 2.
    let mut scaled = v2.clone();
    scaled["spec"]["replicas"] = json!(3);
    let v3 = r
        .update(&k, Some("ns"), "a", Part::Main, scaled, "test")
        .await
        .unwrap();
    assert_eq!(v3["metadata"]["generation"], 2);
    // Writing over v1 again: 409 Conflict with the API server's reason.
    let mut stale = v1.clone();
    stale["spec"]["replicas"] = json!(9);
    let err = r
        .update(&k, Some("ns"), "a", Part::Main, stale, "test")
        .await
        .unwrap_err();
    assert_eq!((err.code, err.reason), (409, "Conflict"));
    assert!(
        err.message.contains("the object has been modified"),
        "{}",
        err.message
    );
    // Without a resourceVersion: 422 (custom resources allow no unconditional update).
    let mut unconditional = v3.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        r.update(&k, Some("ns"), "a", Part::Main, unconditional, "test")
            .await
            .unwrap_err()
            .code,
        422
    );
    // A write that changes nothing writes nothing.
    let same = r
        .update(&k, Some("ns"), "a", Part::Main, v3.clone(), "test")
        .await
        .unwrap();
    assert_eq!(
        same["metadata"]["resourceVersion"],
        v3["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn status_and_spec_are_written_through_their_own_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let v1 = r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let mut both = v1.clone();
    both["spec"]["replicas"] = json!(5);
    both["status"] = json!({"phase": "Ready", "nodes": ["n1"]});
    let via_status = r
        .update(&k, Some("ns"), "a", Part::Status, both.clone(), "test")
        .await
        .unwrap();
    assert_eq!(via_status["spec"]["replicas"], 1);
    assert_eq!(via_status["status"]["phase"], "Ready");
    assert_eq!(via_status["metadata"]["generation"], 1);
    let mut both = via_status.clone();
    both["spec"]["replicas"] = json!(5);
    both["status"] = json!({"phase": "Gone"});
    let via_main = r
        .update(&k, Some("ns"), "a", Part::Main, both, "test")
        .await
        .unwrap();
    assert_eq!(via_main["spec"]["replicas"], 5);
    assert_eq!(via_main["status"]["phase"], "Ready");
    assert_eq!(via_main["metadata"]["generation"], 2);
}

#[tokio::test]
async fn merge_and_json_patches_apply_to_the_current_object() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let merged = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"replicas":4}}"#,
            "test",
        )
        .await
        .unwrap();
    assert_eq!(merged["spec"]["replicas"], 4);
    assert_eq!(merged["spec"]["engine"], "postgres");
    let patched = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Json,
            br#"[{"op":"replace","path":"/spec/engine","value":"mysql"}]"#,
            "test",
        )
        .await
        .unwrap();
    assert_eq!(patched["spec"]["engine"], "mysql");
    assert_eq!(patched["metadata"]["generation"], 3);
    let stale = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"metadata":{"resourceVersion":"1"},"spec":{"replicas":2}}"#,
            "test",
        )
        .await
        .unwrap_err();
    assert_eq!(stale.code, 409);
    let bad = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Json,
            br#"[{"op":"remove","path":"/nope"}]"#,
            "test",
        )
        .await
        .unwrap_err();
    assert_eq!((bad.code, bad.reason), (422, "Invalid"));
    assert_eq!(
        bad.message,
        "the server rejected our request due to an error in our request: operation '/0' failed at path '/nope': path is invalid"
    );
    assert_eq!(
        r.patch(
            &k,
            Some("ns"),
            "zz",
            Part::Main,
            PatchType::Merge,
            b"{}",
            "test"
        )
        .await
        .unwrap_err()
        .code,
        404
    );
}

#[tokio::test]
async fn json_patches_are_held_to_the_operation_and_copy_limits() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let mut body = db("a", 1);
    body["spec"]["blob"] = json!("b".repeat(1_000_000));
    r.create(&k, Some("ns"), body, "test").await.unwrap();
    let json_patch = |ops: Vec<Value>| serde_json::to_vec(&ops).unwrap();
    let patch = |body: Vec<u8>| {
        let r = &r;
        let k = &k;
        async move {
            r.patch(
                k,
                Some("ns"),
                "a",
                Part::Main,
                PatchType::Json,
                &body,
                "test",
            )
            .await
        }
    };
    // Each copy adds the 1,000,002 bytes of the quoted string: three fit in 3 MiB, the
    // fourth does not, and nothing is written.
    let copy =
        |i: usize| json!({"op": "copy", "from": "/spec/blob", "path": format!("/spec/c{i}")});
    let three = patch(json_patch((0..3).map(copy).collect())).await.unwrap();
    assert_eq!(three["spec"]["c2"].as_str().map(str::len), Some(1_000_000));
    let four = patch(json_patch((0..4).map(copy).collect()))
        .await
        .unwrap_err();
    assert_eq!((four.code, four.reason), (422, "Invalid"));
    assert_eq!(
        four.message,
        "the server rejected our request due to an error in our request: Unable to complete the copy, the accumulated size increase of copy is 4000008, exceeding the limit 3145728"
    );
    // A patch doubling the object with each copy stops at the limit.
    let doubling = (0..20)
        .map(|i| json!({"op": "copy", "from": "/spec", "path": format!("/spec/x{i}")}))
        .collect();
    let err = patch(json_patch(doubling)).await.unwrap_err();
    assert_eq!(err.code, 422);
    assert!(
        err.message.contains("exceeding the limit 3145728"),
        "{}",
        err.message
    );
    let stored = r.get(&k, Some("ns"), "a").await.unwrap();
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        three["metadata"]["resourceVersion"]
    );
    assert!(stored["spec"].get("c3").is_none() && stored["spec"].get("x0").is_none());
    // At most 10,000 operations, counted before any applies.
    let ops = |n: usize| {
        json_patch(vec![
            json!({"op": "replace", "path": "/spec/replicas", "value": 2});
            n
        ])
    };
    let many = patch(ops(10_000)).await.unwrap();
    assert_eq!(many["spec"]["replicas"], 2);
    let too_many = patch(ops(10_001)).await.unwrap_err();
    assert_eq!(
        (too_many.code, too_many.reason),
        (413, "RequestEntityTooLarge")
    );
    assert_eq!(
        too_many.message,
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
}

#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_the_last_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let mut body = db("a", 1);
    body["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
    r.create(&k, Some("ns"), body, "test").await.unwrap();
    let marked = r.delete(&k, Some("ns"), "a", &json!({})).await.unwrap();
    assert_eq!(marked["kind"], "Database");
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(marked["metadata"]["generation"], 2);
    assert!(r.get(&k, Some("ns"), "a").await.is_ok());
    // No new finalizer while deleting.
    let add = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"metadata":{"finalizers":["example.com/cleanup","x/y"]}}"#,
            "test",
        )
        .await
        .unwrap_err();
    assert_eq!((add.code, add.reason), (422, "Invalid"));
    r.patch(
        &k,
        Some("ns"),
        "a",
        Part::Main,
        PatchType::Merge,
        br#"{"metadata":{"finalizers":null}}"#,
        "test",
    )
    .await
    .unwrap();
    assert_eq!(r.get(&k, Some("ns"), "a").await.unwrap_err().code, 404);
}

#[tokio::test]
async fn delete_answers_a_success_status_and_checks_preconditions() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let a = r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let wrong = r
        .delete(
            &k,
            Some("ns"),
            "a",
            &json!({"preconditions": {"uid": "other"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code, 409);
    let out = r
        .delete(
            &k,
            Some("ns"),
            "a",
            &json!({"preconditions": {"resourceVersion": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(out["status"], "Success");
    assert_eq!(out["details"]["uid"], a["metadata"]["uid"]);
    assert_eq!(out["details"]["kind"], "databases");
    assert_eq!(
        r.delete(&k, Some("ns"), "a", &json!({}))
            .await
            .unwrap_err()
            .reason,
        "NotFound"
    );
}

#[tokio::test]
async fn list_selects_pages_and_continues_consistently() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    for (i, env) in ["prod", "dev", "prod", "prod"].iter().enumerate() {
        let mut body = db(&format!("d{i}"), 1);
        body["metadata"]["labels"] = json!({"env": env});
        r.create(&k, Some(if i == 3 { "other" } else { "ns" }), body, "test")
            .await
            .unwrap();
    }
    let names = |l: &Value| -> Vec<String> {
        l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| meta_str(i, "name").to_string())
            .collect()
    };
    let prod = ListOptions {
        labels: LabelSelector::parse("env=prod").unwrap(),
        ..Default::default()
    };
    assert_eq!(
        names(&r.list(&k, Some("ns"), &prod).await.unwrap()),
        ["d0", "d2"]
    );
    assert_eq!(
        names(&r.list(&k, None, &prod).await.unwrap()),
        ["d0", "d2", "d3"]
    );
    let by_name = ListOptions {
        fields: FieldSelector::parse("metadata.name=d1")
            .unwrap()
            .for_kind("", "configmaps")
            .unwrap(),
        ..Default::default()
    };
    assert_eq!(names(&r.list(&k, None, &by_name).await.unwrap()), ["d1"]);
    // Pages of two over everything.
    let first = r
        .list(
            &k,
            None,
            &ListOptions {
                limit: 2,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(names(&first), ["d0", "d1"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 2);
    assert_eq!(first["metadata"]["resourceVersion"], "4");
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let page = ListOptions {
        limit: 2,
        continue_token: Some(token.clone()),
        ..Default::default()
    };
    let second = r.list(&k, None, &page).await.unwrap();
    assert_eq!(names(&second), ["d2", "d3"]);
    assert!(second["metadata"].get("continue").is_none());
    // After writes, the token still reads the list's revision: the same second page.
    r.create(&k, Some("ns"), db("d25", 1), "test")
        .await
        .unwrap();
    r.delete(&k, Some("ns"), "d2", &json!({})).await.unwrap();
    let again = r.list(&k, None, &page).await.unwrap();
    assert_eq!(names(&again), ["d2", "d3"]);
    assert_eq!(again["metadata"]["resourceVersion"], "4");
    // Once compacted past the list's revision: 410 with a token for the rest at the latest
    // revision, as k8s.io/apiserver answers; that token reads the current state.
    r.store().compact(6).await.unwrap();
    let err = r.list(&k, None, &page).await.unwrap_err();
    assert_eq!((err.code, err.reason), (410, "Expired"));
    assert!(
        err.message
            .starts_with("The provided continue parameter is too old")
    );
    let status = err.to_status();
    let rest = status["metadata"]["continue"].as_str().unwrap().to_string();
    let inconsistent = r
        .list(
            &k,
            None,
            &ListOptions {
                limit: 2,
                continue_token: Some(rest),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(names(&inconsistent), ["d25", "d3"]);
    assert_eq!(inconsistent["metadata"]["resourceVersion"], "6");
    for token in [
        "%%",
        "e30=",
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Miwic3RhcnQiOiIuLi94In0=",
    ] {
        let bad = ListOptions {
            continue_token: Some(token.into()),
            ..Default::default()
        };
        let err = r.list(&k, None, &bad).await.unwrap_err();
        assert_eq!(err.code, 400, "{token}: {err}");
    }
    // A resourceVersion beside a continue token is refused.
    let both = ListOptions {
        resource_version: Some("4".into()),
        ..page.clone()
    };
    assert_eq!(r.list(&k, None, &both).await.unwrap_err().code, 400);
}

#[tokio::test]
async fn a_watch_from_a_list_revision_sees_exactly_the_later_changes() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let list = r
        .list(&k, Some("ns"), &ListOptions::default())
        .await
        .unwrap();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    r.create(&k, Some("ns"), db("b", 1), "test").await.unwrap();
    let opts = ListOptions {
        resource_version: Some(rv),
        ..Default::default()
    };
    let (initial, mut w) = r.watch(&k, Some("ns"), &opts).await.unwrap();
    assert!(initial.is_empty());
    r.patch(
        &k,
        Some("ns"),
        "a",
        Part::Main,
        PatchType::Merge,
        br#"{"spec":{"replicas":2}}"#,
        "test",
    )
    .await
    .unwrap();
    r.delete(&k, Some("ns"), "b", &json!({})).await.unwrap();
    let seen: Vec<(&str, String, String)> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            let e = w.next().await.unwrap();
            v.push((
                e.kind,
                meta_str(&e.object, "name").to_string(),
                meta_str(&e.object, "resourceVersion").to_string(),
            ));
        }
        v
    };
    assert_eq!(
        seen,
        [
            ("ADDED", "b".into(), "2".into()),
            ("MODIFIED", "a".into(), "3".into()),
            ("DELETED", "b".into(), "4".into())
        ]
    );
}

#[tokio::test]
async fn a_watch_with_a_selector_reports_objects_leaving_it_as_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let mut body = db("a", 1);
    body["metadata"]["labels"] = json!({"env": "prod"});
    r.create(&k, Some("ns"), body, "test").await.unwrap();
    let opts = ListOptions {
        labels: LabelSelector::parse("env=prod").unwrap(),
        ..Default::default()
    };
    let (initial, mut w) = r.watch(&k, Some("ns"), &opts).await.unwrap();
    assert_eq!(initial.len(), 1);
    assert_eq!(initial[0].kind, "ADDED");
    r.patch(
        &k,
        Some("ns"),
        "a",
        Part::Main,
        PatchType::Merge,
        br#"{"metadata":{"labels":{"env":"dev"}}}"#,
        "test",
    )
    .await
    .unwrap();
    r.patch(
        &k,
        Some("ns"),
        "a",
        Part::Main,
        PatchType::Merge,
        br#"{"metadata":{"labels":{"env":"prod"}}}"#,
        "test",
    )
    .await
    .unwrap();
    assert_eq!(w.next().await.unwrap().kind, "DELETED");
    assert_eq!(w.next().await.unwrap().kind, "ADDED");
}

#[tokio::test]
async fn resource_version_match_reads_as_the_api_server_does() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    r.create(&k, Some("ns"), db("a", 1), "test").await.unwrap();
    let at = |rv: &str, m: Option<&str>| ListOptions {
        resource_version: Some(rv.into()),
        resource_version_match: m.map(str::to_string),
        ..Default::default()
    };
    // NotOlderThan an old revision: the latest state.
    r.create(&k, Some("ns"), db("b", 1), "test").await.unwrap();
    let l = r.list(&k, Some("ns"), &at("1", None)).await.unwrap();
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    assert_eq!(l["metadata"]["resourceVersion"], "2");
    let l = r
        .list(&k, Some("ns"), &at("1", Some("NotOlderThan")))
        .await
        .unwrap();
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    // Exact: the state at that revision, also after later writes.
    r.delete(&k, Some("ns"), "a", &json!({})).await.unwrap();
    let l = r
        .list(&k, Some("ns"), &at("1", Some("Exact")))
        .await
        .unwrap();
    assert_eq!(l["metadata"]["resourceVersion"], "1");
    let items = l["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], "a");
    assert_eq!(items[0]["metadata"]["resourceVersion"], "1");
    // A resourceVersion with a limit and no match is Exact too, as the API server pages.
    let paged = ListOptions {
        limit: 10,
        ..at("2", None)
    };
    let l = r.list(&k, Some("ns"), &paged).await.unwrap();
    assert_eq!(l["metadata"]["resourceVersion"], "2");
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    // 0 is any revision: the latest.
    let l = r.list(&k, Some("ns"), &at("0", None)).await.unwrap();
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    // A revision the store has not reached: 504 with the ResourceVersionTooLarge cause,
    // after waiting for it; Exact the same.
    for m in [None, Some("NotOlderThan"), Some("Exact")] {
        let e = r.list(&k, Some("ns"), &at("99", m)).await.unwrap_err();
        assert_eq!((e.code, e.reason), (504, "Timeout"), "{m:?}");
        assert_eq!(
            e.message,
            "Timeout: Too large resource version: 99, current: 3"
        );
        assert_eq!(
            e.details.unwrap()["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
    }
    // A revision reached while the list waits is served.
    let four = at("4", None);
    let waiting = r.list(&k, Some("ns"), &four);
    let writer = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        r.create(&k, Some("ns"), db("c", 1), "test").await.unwrap();
    };
    let (l, ()) = tokio::join!(waiting, writer);
    assert_eq!(l.unwrap()["metadata"]["resourceVersion"], "4");
    // Compacted: Exact is 410 in the API server's words.
    r.store().compact(3).await.unwrap();
    let e = r
        .list(&k, Some("ns"), &at("2", Some("Exact")))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (410, "The resourceVersion for the provided list is too old.")
    );
    // Refused combinations and values.
    for (rv, m) in [("x", None), ("0", Some("Exact")), ("1", Some("Newest"))] {
        let e = r.list(&k, Some("ns"), &at(rv, m)).await.unwrap_err();
        assert_eq!(e.code, 400, "{rv} {m:?}: {e}");
    }
    let no_rv = ListOptions {
        resource_version_match: Some("Exact".into()),
        ..Default::default()
    };
    assert_eq!(r.list(&k, Some("ns"), &no_rv).await.unwrap_err().code, 400);
}

fn with_status(mut obj: Value, status: Value) -> Value {
    obj["status"] = status;
    obj
}

#[tokio::test]
async fn the_scale_of_an_object_carries_its_metadata_and_replica_paths() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let created = r.create(&k, Some("ns"), db("a", 2), "test").await.unwrap();
    let scale = r.get_scale(&k, Some("ns"), "a").await.unwrap();
    let m = &created["metadata"];
    assert_eq!(
        scale,
        json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": "a",
                "namespace": "ns",
                "uid": m["uid"],
                "resourceVersion": "1",
                "creationTimestamp": m["creationTimestamp"],
            },
            "spec": {"replicas": 2},
            // No status yet: status.replicas is 0 and the selector is left out.
            "status": {"replicas": 0},
        })
    );
    let mut current = r.get(&k, Some("ns"), "a").await.unwrap();
    current = with_status(current, json!({"replicas": 1, "selector": "app=a"}));
    r.update(&k, Some("ns"), "a", Part::Status, current, "test")
        .await
        .unwrap();
    let scale = r.get_scale(&k, Some("ns"), "a").await.unwrap();
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=a"}));
    assert_eq!(scale["metadata"]["resourceVersion"], "2");

    let gone = r.get_scale(&k, Some("ns"), "nope").await.unwrap_err();
    assert_eq!((gone.code, gone.reason), (404, "NotFound"));
    let mut plain = database_kind();
    plain.scale = None;
    let none = r.get_scale(&plain, Some("ns"), "a").await.unwrap_err();
    assert_eq!(none.code, 404);
    // No value at the spec replicas path: the API server's 500.
    let mut missing = db("b", 1);
    missing["spec"].as_object_mut().unwrap().remove("replicas");
    r.create(&k, Some("ns"), missing, "test").await.unwrap();
    let e = r.get_scale(&k, Some("ns"), "b").await.unwrap_err();
    assert_eq!(e.code, 500);
    assert!(
        e.message.contains("\".spec.replicas\" does not exist"),
        "{e}"
    );
}

#[tokio::test]
async fn writes_to_the_scale_change_only_the_spec_replicas_of_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    r.create(&k, Some("ns"), db("a", 2), "test").await.unwrap();
    let current = r.get(&k, Some("ns"), "a").await.unwrap();
    r.update(
        &k,
        Some("ns"),
        "a",
        Part::Status,
        with_status(current, json!({"replicas": 2})),
        "test",
    )
    .await
    .unwrap();
    let opts = ListOptions {
        resource_version: Some("2".into()),
        ..Default::default()
    };
    let (_, mut w) = r.watch(&k, Some("ns"), &opts).await.unwrap();

    // Merge patch, as `kubectl scale` sends it.
    let scale = r
        .patch_scale(
            &k,
            Some("ns"),
            "a",
            PatchType::Merge,
            br#"{"spec":{"replicas":3}}"#,
            "test",
            Write::default(),
        )
        .await
        .unwrap();
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"]["replicas"], 2);
    assert_eq!(scale["metadata"]["resourceVersion"], "3");
    let obj = r.get(&k, Some("ns"), "a").await.unwrap();
    assert_eq!(
        (&obj["spec"], &obj["status"], &obj["metadata"]["generation"]),
        (
            &json!({"engine": "postgres", "version": "16", "replicas": 3}),
            &json!({"replicas": 2}),
            &json!(2)
        )
    );
    let e = w.next().await.unwrap();
    assert_eq!(
        (e.kind, &e.object["spec"]["replicas"]),
        ("MODIFIED", &json!(3))
    );

    // JSON patch; the status and metadata of a Scale are not written back.
    let scale = r
        .patch_scale(
            &k,
            Some("ns"),
            "a",
            PatchType::Json,
            br#"[{"op":"replace","path":"/spec/replicas","value":4},{"op":"replace","path":"/status/replicas","value":9}]"#,
            "test",
            Write::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        (&scale["spec"]["replicas"], &scale["status"]["replicas"]),
        (&json!(4), &json!(2))
    );

    // PUT with the current resourceVersion, then with a stale one: 409.
    let mut put = r.get_scale(&k, Some("ns"), "a").await.unwrap();
    put["spec"]["replicas"] = json!(5);
    let stale = put.clone();
    let scale = r
        .update_scale(&k, Some("ns"), "a", put, "test", Write::default())
        .await
        .unwrap();
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(
        r.get(&k, Some("ns"), "a").await.unwrap()["metadata"]["generation"],
        4
    );
    let e = r
        .update_scale(&k, Some("ns"), "a", stale, "test", Write::default())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason), (409, "Conflict"));
    let e = r
        .patch_scale(
            &k,
            Some("ns"),
            "a",
            PatchType::Merge,
            br#"{"metadata":{"resourceVersion":"1"},"spec":{"replicas":6}}"#,
            "test",
            Write::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 409);

    // A Scale of another object, or with no or non-integer replicas: 400.
    for (body, want) in [
        (
            json!({"metadata": {"name": "b"}, "spec": {"replicas": 1}}),
            "does not match the name",
        ),
        (
            json!({"kind": "Database", "spec": {"replicas": 1}}),
            "takes autoscaling/v1, Kind=Scale",
        ),
        (
            json!({"spec": {"replicas": "two"}}),
            "must be a 32-bit integer",
        ),
        (
            json!({"spec": {"replicas": 4_294_967_296u64}}),
            "must be a 32-bit integer",
        ),
    ] {
        let e = r
            .update_scale(&k, Some("ns"), "a", body, "test", Write::default())
            .await
            .unwrap_err();
        assert_eq!(e.code, 400, "{e}");
        assert!(e.message.contains(want), "{want} not in {e}");
    }
    assert_eq!(
        r.get(&k, Some("ns"), "a").await.unwrap()["spec"]["replicas"],
        5
    );
    let e = r
        .patch_scale(
            &k,
            Some("ns"),
            "nope",
            PatchType::Merge,
            br#"{"spec":{"replicas":1}}"#,
            "test",
            Write::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 404);
}

#[tokio::test]
async fn a_scale_write_is_validated_as_an_update_of_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let mut k = database_kind();
    k.schema = Some(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}),
    );
    r.create(&k, Some("ns"), db("a", 2), "test").await.unwrap();
    let e = r
        .patch_scale(
            &k,
            Some("ns"),
            "a",
            PatchType::Merge,
            br#"{"spec":{"replicas":11}}"#,
            "test",
            Write::default(),
        )
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason), (422, "Invalid"));
    assert_eq!(
        e.message,
        "Database.example.com \"a\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    // PUT without replicas decodes as 0, under the minimum.
    let e = r
        .update_scale(
            &k,
            Some("ns"),
            "a",
            json!({"spec": {}}),
            "test",
            Write::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 422, "{e}");
    let obj = r.get(&k, Some("ns"), "a").await.unwrap();
    assert_eq!(
        (
            &obj["spec"]["replicas"],
            &obj["metadata"]["resourceVersion"]
        ),
        (&json!(2), &json!("1"))
    );
}

fn clocked(dir: &tempfile::TempDir) -> Registry<RedbStore> {
    let start: jiff::Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
    Registry::with_clock(
        RedbStore::open(&dir.path().join("db")).unwrap(),
        crate::apiserver::clock::Clock::manual(start),
    )
}

fn managers(obj: &Value) -> Vec<(String, String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let text = |f: &str| e[f].as_str().unwrap_or("").to_string();
            (text("manager"), text("operation"), text("subresource"))
        })
        .collect()
}

#[tokio::test]
async fn every_write_records_its_manager_in_managed_fields() {
    let dir = tempfile::tempdir().unwrap();
    let r = clocked(&dir);
    let k = database_kind();
    let created = r
        .create(&k, Some("ns"), db("a", 1), "kubectl-create")
        .await
        .unwrap();
    assert_eq!(
        created["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "example.com/v1",
            "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {".": {}, "f:engine": {}, "f:replicas": {}, "f:version": {}}}
        }])
    );
    assert_eq!(
        r.get(&k, Some("ns"), "a").await.unwrap()["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );

    r.clock()
        .advance(std::time::Duration::from_secs(60))
        .unwrap();
    let patched = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"replicas":3}}"#,
            "kubectl-patch",
        )
        .await
        .unwrap();
    let entries = &patched["metadata"]["managedFields"];
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:engine": {}, "f:version": {}}})
    );
    assert_eq!(entries[1]["manager"], json!("kubectl-patch"));
    assert_eq!(entries[1]["time"], json!("2026-01-02T03:05:05Z"));
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );

    let status = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Status,
            PatchType::Merge,
            br#"{"status":{"phase":"Ready"}}"#,
            "ctl",
        )
        .await
        .unwrap();
    assert_eq!(
        managers(&status),
        vec![
            ("kubectl-create".into(), "Update".into(), "".into()),
            // Sorted by operation, time, then manager.
            ("ctl".into(), "Update".into(), "status".into()),
            ("kubectl-patch".into(), "Update".into(), "".into()),
        ]
    );
    assert_eq!(
        status["metadata"]["managedFields"][1]["fieldsV1"],
        json!({"f:status": {".": {}, "f:phase": {}}})
    );

    // A write that changes nothing writes nothing; one that omits managedFields keeps them.
    let same = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"replicas":3}}"#,
            "other",
        )
        .await
        .unwrap();
    assert_eq!(
        same["metadata"]["resourceVersion"],
        status["metadata"]["resourceVersion"]
    );
    let mut put = same.clone();
    meta_mut(&mut put).remove("managedFields");
    put["spec"]["engine"] = json!("mysql");
    let updated = r
        .update(&k, Some("ns"), "a", Part::Main, put, "kubectl-edit")
        .await
        .unwrap();
    assert_eq!(managers(&updated).len(), 4, "{updated}");

    // `managedFields: []` clears them: only this write's own change is then recorded.
    let cleared = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"metadata":{"managedFields":[]},"spec":{"version":"17"}}"#,
            "resetter",
        )
        .await
        .unwrap();
    assert_eq!(
        managers(&cleared),
        vec![("resetter".into(), "Update".into(), "".into())]
    );
    assert_eq!(
        cleared["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:version": {}}})
    );
    let emptied = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"metadata":{"managedFields":[{}]}}"#,
            "x",
        )
        .await
        .unwrap();
    assert!(
        emptied["metadata"].get("managedFields").is_none(),
        "{emptied}"
    );
}

const APPLY_A: &[u8] = br#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","labels":{"team":"x"}},"spec":{"engine":"postgres","replicas":1}}"#;
const APPLY_B: &[u8] = br#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"replicas":2}}"#;

#[tokio::test]
async fn apply_creates_merges_and_reports_conflicts_with_other_managers() {
    let dir = tempfile::tempdir().unwrap();
    let r = clocked(&dir);
    let k = database_kind();
    let (created, was_created) = r
        .apply(&k, Some("ns"), "a", Part::Main, APPLY_A, "alice", false)
        .await
        .unwrap();
    assert!(was_created);
    assert_eq!(created["metadata"]["generation"], json!(1));
    assert_eq!(
        created["metadata"]["managedFields"],
        json!([{
            "manager": "alice", "operation": "Apply", "apiVersion": "example.com/v1",
            "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}, "f:spec": {".": {}, "f:engine": {}, "f:replicas": {}}}
        }])
    );
    // The same apply again is no write.
    r.clock()
        .advance(std::time::Duration::from_secs(60))
        .unwrap();
    let (again, was_created) = r
        .apply(&k, Some("ns"), "a", Part::Main, APPLY_A, "alice", false)
        .await
        .unwrap();
    assert!(!was_created);
    assert_eq!(
        again["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(
        again["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );

    let conflict = r
        .apply(&k, Some("ns"), "a", Part::Main, APPLY_B, "bob", false)
        .await
        .unwrap_err();
    assert_eq!((conflict.code, conflict.reason), (409, "Conflict"));
    assert_eq!(
        conflict.message,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    assert_eq!(
        conflict.details,
        Some(
            json!({"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.replicas"}]})
        )
    );

    let (forced, _) = r
        .apply(&k, Some("ns"), "a", Part::Main, APPLY_B, "bob", true)
        .await
        .unwrap();
    assert_eq!(forced["spec"], json!({"engine": "postgres", "replicas": 2}));
    assert_eq!(forced["metadata"]["generation"], json!(2));
    assert_eq!(
        forced["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"],
        json!({".": {}, "f:engine": {}})
    );
    assert_eq!(
        forced["metadata"]["managedFields"][1]["manager"],
        json!("bob")
    );

    // alice stops applying the label and engine: both go (nobody else owns them).
    let smaller = br#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"version":"16"}}"#;
    let (pruned, _) = r
        .apply(&k, Some("ns"), "a", Part::Main, smaller, "alice", false)
        .await
        .unwrap();
    assert_eq!(pruned["spec"], json!({"replicas": 2, "version": "16"}));
    assert!(pruned["metadata"].get("labels").is_none(), "{pruned}");
}

#[tokio::test]
async fn apply_checks_its_resource_version_and_status_applies_need_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let r = clocked(&dir);
    let k = database_kind();
    let status = br#"{"apiVersion":"example.com/v1","kind":"Database","status":{"phase":"Ready"}}"#;
    let missing = r
        .apply(&k, Some("ns"), "a", Part::Status, status, "ctl", true)
        .await
        .unwrap_err();
    assert_eq!(missing.code, 404);
    let (created, _) = r
        .apply(&k, Some("ns"), "a", Part::Main, APPLY_A, "alice", false)
        .await
        .unwrap();
    let (with_status, _) = r
        .apply(&k, Some("ns"), "a", Part::Status, status, "ctl", true)
        .await
        .unwrap();
    assert_eq!(with_status["status"], json!({"phase": "Ready"}));
    assert_eq!(with_status["spec"], created["spec"]);
    assert_eq!(
        managers(&with_status)[1],
        ("ctl".into(), "Apply".into(), "status".into())
    );

    let mut stale: Value = serde_json::from_slice(APPLY_A).unwrap();
    stale["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let stale = r
        .apply(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            stale.to_string().as_bytes(),
            "alice",
            false,
        )
        .await
        .unwrap_err();
    assert_eq!((stale.code, stale.reason), (409, "Conflict"));
    let wrong_name =
        br#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"b"}}"#;
    assert_eq!(
        r.apply(&k, Some("ns"), "a", Part::Main, wrong_name, "alice", false)
            .await
            .unwrap_err()
            .code,
        400
    );
    let managed = br#"{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","managedFields":[]}}"#;
    assert_eq!(
        r.apply(&k, Some("ns"), "a", Part::Main, managed, "alice", false)
            .await
            .unwrap_err()
            .code,
        400
    );
}

/// `deletionFinalizersForGarbageCollection`'s table, as k8s.io/apiserver's registry computes
/// the finalizers of a delete: (the object's finalizers, DeleteOptions, the result).
#[test]
fn a_deletes_propagation_sets_the_garbage_collectors_finalizers() {
    let cases: &[(&[&str], Value, &[&str])] = &[
        (&[], json!({}), &[]),
        (&[], json!({"propagationPolicy": "Background"}), &[]),
        (&[], json!({"propagationPolicy": "Orphan"}), &["orphan"]),
        (
            &[],
            json!({"propagationPolicy": "Foreground"}),
            &["foregroundDeletion"],
        ),
        (&[], json!({"orphanDependents": true}), &["orphan"]),
        (&[], json!({"orphanDependents": false}), &[]),
        (&["orphan"], json!({}), &["orphan"]),
        (&["orphan"], json!({"propagationPolicy": "Background"}), &[]),
        (
            &["orphan"],
            json!({"propagationPolicy": "Foreground"}),
            &["foregroundDeletion"],
        ),
        (
            &["x", "foregroundDeletion"],
            json!({"orphanDependents": true}),
            &["x", "orphan"],
        ),
        (
            &["x", "foregroundDeletion"],
            json!({}),
            &["x", "foregroundDeletion"],
        ),
        // The first of the two the object has decides, when the delete names no policy.
        (
            &["foregroundDeletion", "orphan"],
            json!({}),
            &["foregroundDeletion"],
        ),
        // Unchanged as a set: the object's own order is kept.
        (
            &["orphan", "x"],
            json!({"propagationPolicy": "Orphan"}),
            &["orphan", "x"],
        ),
    ];
    for (current, options, want) in cases {
        let current: Vec<String> = current.iter().map(|f| f.to_string()).collect();
        assert_eq!(
            gc_finalizers(&current, options),
            want.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            "{current:?} {options}"
        );
    }
}

#[tokio::test]
async fn an_object_stored_before_its_default_existed_reads_with_it_and_patches_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let plain = ApiKind {
        schema: Some(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"engine": {"type": "string"}, "version": {"type": "string"},
                           "replicas": {"type": "integer"}}}}}),
        ),
        ..database_kind()
    };
    r.create(&plain, Some("ns"), db("a", 1), "test")
        .await
        .unwrap();
    let mut defaulted = plain.clone();
    defaulted.schema.as_mut().unwrap()["properties"]["spec"]["properties"]["tier"] =
        json!({"type": "string", "default": "standard"});
    // As the apiextensions server defaults what it reads from etcd: get, list and watch.
    let got = r.get(&defaulted, Some("ns"), "a").await.unwrap();
    assert_eq!(got["spec"]["tier"], "standard");
    let listed = r
        .list(&defaulted, Some("ns"), &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(listed["items"][0]["spec"]["tier"], "standard");
    let (initial, _) = r
        .watch(&defaulted, Some("ns"), &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(initial[0].object["spec"]["tier"], "standard");
    // A merge patch that nulls the field gets the default back.
    let patched = r
        .patch(
            &defaulted,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"tier":null,"replicas":3}}"#,
            "test",
        )
        .await
        .unwrap();
    assert_eq!(patched["spec"]["tier"], "standard");
    assert_eq!(patched["spec"]["replicas"], 3);
}

/// The `fieldsV1` of `manager`'s entry on `obj`.
fn owned_by<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == manager)
        .map(|e| &e["fieldsV1"])
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn apply_and_update_of_large_set_and_map_lists_keep_every_item_and_owner() {
    // 5,000 finalizers and owner references per manager: the merge, the comparison and the
    // pruning index lists by item (docs/benchmarks.md has the time this takes).
    const N: usize = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let config = |who: &str, n: usize| {
        let finalizers: Vec<String> = (0..n).map(|i| format!("example.com/{who}{i}")).collect();
        let owners: Vec<Value> = (0..n)
            .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": format!("{who}{i}"), "uid": format!("{who}-{i}")}))
            .collect();
        serde_json::to_vec(&json!({"apiVersion": "example.com/v1", "kind": "Database",
            "metadata": {"name": "a", "finalizers": finalizers, "ownerReferences": owners}}))
        .unwrap()
    };
    let apply = |who: &'static str, n: usize| {
        let (r, k, body) = (&r, &k, config(who, n));
        async move {
            r.apply(k, Some("ns"), "a", Part::Main, &body, who, false)
                .await
                .unwrap()
                .0
        }
    };
    apply("a", N).await;
    let both = apply("b", N).await;
    let finalizers = both["metadata"]["finalizers"].as_array().unwrap();
    assert_eq!(finalizers.len(), 2 * N);
    assert_eq!(finalizers[N - 1], format!("example.com/a{}", N - 1));
    assert_eq!(finalizers[N], "example.com/b0");
    let owners = both["metadata"]["ownerReferences"].as_array().unwrap();
    assert_eq!(owners.len(), 2 * N);
    assert_eq!(owners[N]["uid"], "b-0");
    let count = |obj: &Value, who: &str, field: &str| {
        owned_by(obj, who)["f:metadata"][field]
            .as_object()
            .map_or(0, |m| m.keys().filter(|k| *k != ".").count())
    };
    for who in ["a", "b"] {
        assert_eq!(count(&both, who, "f:finalizers"), N, "{who}");
        assert_eq!(count(&both, who, "f:ownerReferences"), N, "{who}");
    }
    // a applies half its items: the other half is pruned, b's stay.
    let half = apply("a", N / 2).await;
    let finalizers = half["metadata"]["finalizers"].as_array().unwrap();
    assert_eq!(finalizers.len(), N + N / 2);
    assert_eq!(finalizers[N / 2], "example.com/b0");
    assert!(!finalizers.contains(&json!(format!("example.com/a{}", N / 2))));
    assert_eq!(
        half["metadata"]["ownerReferences"]
            .as_array()
            .unwrap()
            .len(),
        N + N / 2
    );
    assert_eq!(count(&half, "a", "f:ownerReferences"), N / 2);
    assert_eq!(count(&half, "b", "f:finalizers"), N);
    // A merge patch of another field leaves the lists and their owners as they are.
    let patched = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"replicas":3}}"#,
            "c",
        )
        .await
        .unwrap();
    assert_eq!(
        patched["metadata"]["finalizers"],
        half["metadata"]["finalizers"]
    );
    assert_eq!(owned_by(&patched, "a"), owned_by(&half, "a"));
    assert_eq!(owned_by(&patched, "b"), owned_by(&half, "b"));
    assert_eq!(
        owned_by(&patched, "c"),
        &json!({"f:spec": {".": {}, "f:replicas": {}}})
    );
}

#[tokio::test]
async fn apply_refuses_duplicate_items_as_structured_merge_diff_does() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let apply = |meta: Value| {
        let (r, k) = (&r, &k);
        async move {
            let mut body = json!({"apiVersion": "example.com/v1", "kind": "Database"});
            body["metadata"] = meta;
            let body = serde_json::to_vec(&body).unwrap();
            r.apply(k, Some("ns"), "a", Part::Main, &body, "m", false)
                .await
        }
    };
    let err = apply(json!({"name": "a", "finalizers": ["example.com/f", "example.com/f"]}))
        .await
        .unwrap_err();
    assert_eq!((err.code, err.reason), (500, ""));
    assert_eq!(
        err.message,
        r#"failed to create typed patch object (ns/a; example.com/v1, Kind=Database): .metadata.finalizers: duplicate entries for key [="example.com/f"]"#
    );
    assert!(err.to_status().get("reason").is_none());
    let owner = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "p", "uid": "1"});
    let err = apply(json!({"name": "a", "ownerReferences": [owner, owner]}))
        .await
        .unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        r#"failed to create typed patch object (ns/a; example.com/v1, Kind=Database): .metadata.ownerReferences: duplicate entries for key [uid="1"]"#
    );
    assert_eq!(r.get(&k, Some("ns"), "a").await.unwrap_err().code, 404);
    // Distinct items apply.
    let (ok, _) = apply(json!({"name": "a", "finalizers": ["example.com/f", "example.com/g"]}))
        .await
        .unwrap();
    assert_eq!(
        ok["metadata"]["finalizers"],
        json!(["example.com/f", "example.com/g"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_applies_without_a_resource_version_all_commit() {
    // As kube-apiserver's update loop, a write that names no resourceVersion retries its
    // conflicts with concurrent writes until it commits: only field-manager conflicts would
    // reach the client, and these managers own distinct fields.
    const MANAGERS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let r = std::sync::Arc::new(registry(&dir));
    let k = std::sync::Arc::new(database_kind());
    r.create(&k, Some("ns"), db("a", 1), "base").await.unwrap();
    for round in 0..3 {
        let tasks: Vec<_> = (0..MANAGERS)
            .map(|i| {
                let (r, k) = (r.clone(), k.clone());
                tokio::spawn(async move {
                    let body = json!({"apiVersion": "example.com/v1", "kind": "Database",
                        "metadata": {"name": "a", "labels": {format!("m{i}"): format!("r{round}")}}});
                    let body = serde_json::to_vec(&body).unwrap();
                    r.apply(&k, Some("ns"), "a", Part::Main, &body, &format!("m{i}"), false)
                        .await
                        .map(|_| ())
                })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            let answer = task.await.unwrap();
            assert!(answer.is_ok(), "round {round}, m{i}: {answer:?}");
        }
    }
    let stored = r.get(&k, Some("ns"), "a").await.unwrap();
    let labels = stored["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels.len(), MANAGERS);
    assert!(labels.values().all(|v| v == "r2"));
    for i in 0..MANAGERS {
        let label = format!("f:m{i}");
        assert_eq!(
            owned_by(&stored, &format!("m{i}")),
            &json!({"f:metadata": {"f:labels": {".": {}, label: {}}}}),
        );
    }
}
