// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Cases after structured-merge-diff's `merge` tests (apply, update, conflicts, pruning) and
//! k8s.io/apiserver's field manager tests, with the Database example's shape.

use serde_json::{Value, json};

use super::*;

const V1: &str = "example.com/v1";

fn schema() -> Value {
    json!({"properties": {
        "spec": {"properties": {
            "replicas": {"type": "integer"},
            "image": {"type": "string"},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port"],
                      "items": {"properties": {"port": {}, "name": {}}}}
        }},
        "status": {"properties": {"phase": {"type": "string"}}}
    }})
}

fn writer(manager: &str) -> Writer<'_> {
    Writer {
        manager,
        api_version: V1.to_owned(),
        subresource: "",
        reset: reset_fields(true, false),
        now: "2026-01-02T03:04:05Z".to_owned(),
    }
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": V1, "kind": "Database", "metadata": {"name": "a"}, "spec": spec})
}

fn fields(entries: &[Entry], manager: &str, operation: Operation) -> Value {
    entries
        .iter()
        .find(|e| e.manager == manager && e.operation == operation)
        .map(|e| e.fields.to_fields_v1())
        .unwrap_or(Value::Null)
}

fn applied(
    live: Option<&Value>,
    entries: Vec<Entry>,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<(Value, Vec<Entry>), ApplyError> {
    apply(live, entries, config, &schema(), &writer(manager), force)
}

#[test]
fn a_create_gives_the_writer_every_field_it_set_in_an_update_entry() {
    let created = obj(json!({"replicas": 1, "ports": [{"port": 80, "name": "http"}]}));
    let entries = record_update(
        Vec::new(),
        &Value::Null,
        &created,
        &schema(),
        &writer("kubectl-create"),
    )
    .unwrap();
    let mut out = created.clone();
    encode(&mut out, entries);
    assert_eq!(
        out["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": V1,
            "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:ports": {".": {}, "k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}}}, "f:replicas": {}}}
        }])
    );
    assert_eq!(decode(&out).unwrap().len(), 1);
}

#[test]
fn appliers_of_the_same_value_share_the_field_and_a_different_value_conflicts() {
    let config = obj(json!({"replicas": 1}));
    let (live, entries) = applied(None, Vec::new(), &config, "a", false).unwrap();
    let (live, entries) = applied(Some(&live), entries, &config, "b", false).unwrap();
    assert_eq!(
        fields(&entries, "a", Operation::Apply),
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert_eq!(
        fields(&entries, "b", Operation::Apply),
        json!({"f:spec": {"f:replicas": {}}})
    );

    let other = obj(json!({"replicas": 2}));
    let err = applied(Some(&live), entries.clone(), &other, "c", false).unwrap_err();
    let ApplyError::Conflicts(found) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        conflict_message(&found),
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.replicas\nconflicts with \"b\":\n- .spec.replicas"
    );

    let (forced, entries) = applied(Some(&live), entries, &other, "c", true).unwrap();
    assert_eq!(forced["spec"]["replicas"], json!(2));
    assert_eq!(fields(&entries, "a", Operation::Apply), Value::Null);
    assert_eq!(
        fields(&entries, "c", Operation::Apply),
        json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn an_update_takes_the_fields_it_changes_and_an_apply_of_the_old_value_then_conflicts() {
    let (live, entries) = applied(
        None,
        Vec::new(),
        &obj(json!({"replicas": 1, "image": "a"})),
        "applier",
        false,
    )
    .unwrap();
    let edited = obj(json!({"replicas": 5, "image": "a"}));
    let entries =
        record_update(entries, &live, &edited, &schema(), &writer("kubectl-edit")).unwrap();
    assert_eq!(
        fields(&entries, "applier", Operation::Apply),
        json!({"f:spec": {"f:image": {}}})
    );
    assert_eq!(
        fields(&entries, "kubectl-edit", Operation::Update),
        json!({"f:spec": {"f:replicas": {}}})
    );

    let err = applied(
        Some(&edited),
        entries,
        &obj(json!({"replicas": 1, "image": "a"})),
        "applier",
        false,
    )
    .unwrap_err();
    let ApplyError::Conflicts(found) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        conflict_message(&found),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using example.com/v1: .spec.replicas"
    );
}

#[test]
fn a_field_no_longer_applied_is_removed_unless_another_manager_owns_it() {
    let first = obj(
        json!({"replicas": 1, "image": "a", "ports": [{"port": 80, "name": "http"}, {"port": 81}]}),
    );
    let (live, entries) = applied(None, Vec::new(), &first, "a", false).unwrap();
    // b applies the same port 81: it shares the item.
    let (live, entries) = applied(
        Some(&live),
        entries,
        &obj(json!({"ports": [{"port": 81}]})),
        "b",
        false,
    )
    .unwrap();
    let (live, entries) = applied(
        Some(&live),
        entries,
        &obj(json!({"replicas": 1})),
        "a",
        false,
    )
    .unwrap();
    assert_eq!(
        live["spec"],
        json!({"replicas": 1, "ports": [{"port": 81}]})
    );
    assert_eq!(
        fields(&entries, "a", Operation::Apply),
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert_eq!(
        fields(&entries, "b", Operation::Apply),
        json!({"f:spec": {"f:ports": {".": {}, "k:{\"port\":81}": {".": {}, "f:port": {}}}}})
    );
}

#[test]
fn an_update_that_changes_nothing_keeps_the_entries_and_their_times() {
    let created = obj(json!({"replicas": 1}));
    let entries =
        record_update(Vec::new(), &Value::Null, &created, &schema(), &writer("m")).unwrap();
    let later = Writer {
        now: "2030-01-01T00:00:00Z".to_owned(),
        ..writer("m")
    };
    let again = record_update(entries.clone(), &created, &created, &schema(), &later).unwrap();
    assert_eq!(again, entries);
    let (_, reapplied) = apply(
        Some(&created),
        entries.clone(),
        &created,
        &schema(),
        &later,
        false,
    )
    .unwrap();
    assert_ne!(reapplied, entries, "a first apply adds an Apply entry");
    let (_, twice) = apply(
        Some(&created),
        reapplied.clone(),
        &created,
        &schema(),
        &later,
        false,
    )
    .unwrap();
    assert_eq!(keep_times(&reapplied, twice), reapplied);
}

#[test]
fn a_status_write_owns_only_status() {
    let status_writer = Writer {
        subresource: "status",
        reset: reset_fields(true, true),
        ..writer("ctl")
    };
    let live = obj(json!({"replicas": 1}));
    let config = json!({"apiVersion": V1, "kind": "Database", "metadata": {"name": "a", "labels": {"x": "1"}},
                        "spec": {"replicas": 9}, "status": {"phase": "Ready"}});
    let (_, entries) = apply(
        Some(&live),
        Vec::new(),
        &config,
        &schema(),
        &status_writer,
        false,
    )
    .unwrap();
    let mut out = live.clone();
    encode(&mut out, entries.clone());
    assert_eq!(
        out["metadata"]["managedFields"][0]["subresource"],
        json!("status")
    );
    assert_eq!(
        entries[0].fields.to_fields_v1(),
        json!({"f:status": {"f:phase": {}}})
    );
    assert_eq!(entries[0].describe(), "\"ctl\" with subresource \"status\"");
    // The object's writer does not own status.
    let with_status = json!({"apiVersion": V1, "kind": "Database", "metadata": {"name": "a"}, "status": {"phase": "x"}});
    let entries = record_update(
        Vec::new(),
        &Value::Null,
        &with_status,
        &schema(),
        &writer("m"),
    )
    .unwrap();
    assert!(entries.is_empty(), "{entries:?}");
}

#[test]
fn managed_fields_are_reset_by_an_empty_list_and_checked_when_decoded() {
    assert!(is_reset(&json!({"metadata": {"managedFields": []}})));
    assert!(is_reset(&json!({"metadata": {"managedFields": [{}]}})));
    assert!(!is_reset(&json!({"metadata": {}})));
    let bad = json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Patch", "fieldsType": "FieldsV1"}]}});
    assert_eq!(
        decode(&bad).unwrap_err(),
        "metadata.managedFields[0].operation: unknown operation \"Patch\""
    );
}

#[test]
fn several_conflicts_with_one_manager_are_listed_under_it_in_path_order() {
    let live = obj(json!({"replicas": 1, "image": "a"}));
    let entries = record_update(
        Vec::new(),
        &Value::Null,
        &live,
        &schema(),
        &writer("kubectl-edit"),
    )
    .unwrap();
    let config = obj(json!({"replicas": 2, "image": "b"}));
    let err = applied(Some(&live), entries, &config, "applier", false).unwrap_err();
    let ApplyError::Conflicts(found) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        conflict_message(&found),
        "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using example.com/v1:\n- .spec.image\n- .spec.replicas"
    );
}

#[test]
fn set_items_stay_while_any_applier_applies_them() {
    let (live, entries) = applied(
        None,
        Vec::new(),
        &obj(json!({"tags": ["a", "b"]})),
        "alice",
        false,
    )
    .unwrap();
    let (live, entries) = applied(
        Some(&live),
        entries,
        &obj(json!({"tags": ["b", "c"]})),
        "bob",
        false,
    )
    .unwrap();
    assert_eq!(live["spec"]["tags"], json!(["a", "b", "c"]));
    let (live, entries) = applied(
        Some(&live),
        entries,
        &obj(json!({"tags": ["a"]})),
        "alice",
        false,
    )
    .unwrap();
    assert_eq!(
        live["spec"]["tags"],
        json!(["a", "b", "c"]),
        "bob still applies b"
    );
    let (live, _) = applied(
        Some(&live),
        entries,
        &obj(json!({"tags": ["c"]})),
        "bob",
        false,
    )
    .unwrap();
    assert_eq!(live["spec"]["tags"], json!(["a", "c"]));
}

/// `n` Update entries `m00`, `m01`, … at times one second apart (oldest first), each owning
/// its own `spec.f<i>`, at `version`; plus one Apply entry.
fn many_updates(n: usize, version: impl Fn(usize) -> &'static str) -> Vec<Entry> {
    let mut managed: Vec<Value> = (0..n)
        .map(|i| {
            json!({"manager": format!("m{i:02}"), "operation": "Update",
                   "apiVersion": version(i), "time": format!("2026-01-02T03:04:{i:02}Z"),
                   "fieldsType": "FieldsV1",
                   "fieldsV1": {"f:spec": {format!("f:f{i}"): {}}}})
        })
        .collect();
    managed.push(
        json!({"manager": "kubectl", "operation": "Apply", "apiVersion": V1,
        "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}}}}),
    );
    decode(&json!({"metadata": {"managedFields": managed}})).unwrap()
}

fn summary(entries: &[Entry]) -> Vec<(String, String, Option<String>, Value)> {
    let mut out: Vec<_> = entries
        .iter()
        .map(|e| {
            (
                e.manager.clone(),
                e.api_version.clone(),
                e.time.clone(),
                e.fields.to_fields_v1(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// As k8s.io/apiserver's capManagersManager: past ten Update entries, the oldest of an API
/// version are merged into its `ancient-changes` bucket (fields united, the time of the last
/// one merged) until ten are left; the Apply entry is untouched, and ten or fewer stay as
/// they are.
#[test]
fn update_entries_past_ten_are_merged_into_ancient_changes_per_version() {
    let mut entries = many_updates(10, |_| V1);
    let before = entries.clone();
    cap_updates(&mut entries);
    assert_eq!(entries, before);

    let mut entries = many_updates(12, |_| V1);
    cap_updates(&mut entries);
    let got = summary(&entries);
    assert_eq!(got.len(), 11, "{got:?}");
    assert_eq!(
        got[0],
        (
            ANCIENT_CHANGES.to_owned(),
            V1.to_owned(),
            Some("2026-01-02T03:04:02Z".to_owned()),
            json!({"f:spec": {"f:f0": {}, "f:f1": {}, "f:f2": {}}})
        )
    );
    let names: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            ANCIENT_CHANGES,
            "kubectl",
            "m03",
            "m04",
            "m05",
            "m06",
            "m07",
            "m08",
            "m09",
            "m10",
            "m11"
        ]
    );

    // Two versions: the oldest of each version is remembered, later ones of the same version
    // merge into that version's bucket.
    let mut entries = many_updates(12, |i| if i % 2 == 0 { V1 } else { "example.com/v2" });
    cap_updates(&mut entries);
    let got = summary(&entries);
    let updates: Vec<_> = got.iter().filter(|e| e.0 != "kubectl").collect();
    assert_eq!(updates.len(), 10, "{got:?}");
    // m00 (v1) and m01 (v2) are remembered; m02 (v1) makes the v1 bucket from m00; m03 (v2)
    // the v2 bucket from m01: twelve became ten.
    let buckets: Vec<_> = got.iter().filter(|e| e.0 == ANCIENT_CHANGES).collect();
    assert_eq!(buckets.len(), 2, "{got:?}");
    assert!(
        buckets
            .iter()
            .any(|b| b.1 == V1 && b.3 == json!({"f:spec": {"f:f0": {}, "f:f2": {}}}))
    );
    assert!(
        buckets
            .iter()
            .any(|b| b.1 == "example.com/v2" && b.3 == json!({"f:spec": {"f:f1": {}, "f:f3": {}}}))
    );
}
