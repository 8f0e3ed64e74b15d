// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Cases from apimachinery's `TestIsQualifiedName`, `TestIsValidLabelValue`,
//! `TestValidateObjectMetaOwnerReferences`, `TestValidateFinalizersUpdate` and friends
//! (inputs and answers), run through the registry where the answer is a status.
use super::super::tests::database_kind;
use super::super::{Part, PatchType, Registry};
use super::*;
use crate::apiserver::status::ApiError;
use crate::apiserver::storage::RedbStore;
use serde_json::json;

const QUALIFIED: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

#[test]
fn qualified_names_follow_apimachinery() {
    let good = [
        "simple".to_string(),
        "now-with-dashes".into(),
        "1-starts-with-num".into(),
        "1234".into(),
        "simple/simple".into(),
        "now-with-dashes/simple".into(),
        "now-with-dashes/now-with-dashes".into(),
        "now.with.dots/simple".into(),
        "now-with.dashes-and.dots/simple".into(),
        "1-num.2-num/3-num".into(),
        "1234/5678".into(),
        "1.2.3.4/5678".into(),
        "Uppercase_Is_OK_123".into(),
        "example.com/Uppercase_Is_OK_123".into(),
        "requests.storage-foo".into(),
        "a".repeat(63),
        format!("{}/{}", "a".repeat(253), "b".repeat(63)),
    ];
    for g in &good {
        assert_eq!(qualified_name_errors(g), Vec::<String>::new(), "{g}");
    }
    let bad = [
        "nospecialchars%^=@".to_string(),
        "cantendwithadash-".into(),
        "-cantstartwithadash-".into(),
        "only/one/slash".into(),
        "Example.com/abc".into(),
        "example_com/abc".into(),
        "example.com/".into(),
        "/simple".into(),
        "a".repeat(64),
        format!("{}/abc", "a".repeat(254)),
    ];
    for b in &bad {
        assert!(!qualified_name_errors(b).is_empty(), "{b}");
    }
    assert_eq!(
        qualified_name_errors("a/b/c"),
        [format!(
            "a qualified name {QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )]
    );
    assert_eq!(
        qualified_name_errors("example.com/"),
        [
            "name part must be non-empty".to_string(),
            format!("name part {QUALIFIED}")
        ]
    );
    assert_eq!(
        qualified_name_errors("/simple"),
        ["prefix part must be non-empty"]
    );
    assert_eq!(
        qualified_name_errors("Example.com/abc"),
        [format!("prefix part {}", SUBDOMAIN)]
    );
    assert_eq!(
        qualified_name_errors(&"a".repeat(64)),
        ["name part must be no more than 63 characters"]
    );
    assert_eq!(
        qualified_name_errors(&format!("{}/abc", "a".repeat(254))),
        ["prefix part must be no more than 253 characters"]
    );
}

#[test]
fn label_values_may_be_empty_and_are_at_most_63_characters() {
    for g in [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "end-with-num-1",
        "1234",
        "",
        &"a".repeat(63),
    ] {
        assert_eq!(label_value_errors(g), Vec::<String>::new(), "{g}");
    }
    for b in [
        "nospecialchars%^=@",
        "Tama-nui-te-rā",
        "\u{2014}",
        "cantendwithadash-",
        "-cantstartwithadash",
        "cant/contain/slashes",
    ] {
        assert_eq!(label_value_errors(b), [LABEL_VALUE], "{b}");
    }
    assert_eq!(
        label_value_errors(&"a".repeat(64)),
        ["must be no more than 63 characters"]
    );
}

#[test]
fn strings_are_quoted_as_go_quotes_them() {
    assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(go_quote("tab\there\n"), r#""tab\there\n""#);
    assert_eq!(go_quote("\u{1}rā"), r#""\x01rā""#);
}

fn registry(dir: &tempfile::TempDir) -> Registry<RedbStore> {
    Registry::new(RedbStore::open(&dir.path().join("db")).unwrap())
}

/// A Database created with `metadata` merged into `{"name": "a"}`.
async fn create_with(metadata: Value) -> Result<Value, ApiError> {
    let dir = tempfile::tempdir().unwrap();
    let mut body = json!({
        "apiVersion": "example.com/v1", "kind": "Database",
        "metadata": {"name": "a"}, "spec": {"replicas": 1},
    });
    json_patch::merge(&mut body["metadata"], &metadata);
    registry(&dir)
        .create(&database_kind(), Some("ns"), body, "test")
        .await
}

/// The 422's causes as `(field, message)`, after checking the code, reason and kind.
fn causes(e: &ApiError) -> Vec<(String, String)> {
    assert_eq!((e.code, e.reason), (422, "Invalid"), "{e}");
    let d = e.details.as_ref().unwrap();
    assert_eq!(
        (d["kind"].as_str(), d["group"].as_str()),
        (Some("Database"), Some("example.com"))
    );
    d["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn cause(field: &str, message: impl Into<String>) -> (String, String) {
    (field.to_string(), message.into())
}

#[tokio::test]
async fn labels_need_qualified_keys_and_label_values() {
    let e = create_with(json!({"labels": {"example.com/ok": "", "bad key": "ok", "ok": "-bad"}}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [
            cause(
                "metadata.labels",
                format!("Invalid value: \"bad key\": name part {QUALIFIED}")
            ),
            cause(
                "metadata.labels",
                format!("Invalid value: \"-bad\": {LABEL_VALUE}")
            ),
        ]
    );
    assert_eq!(
        e.message,
        format!(
            "Database.example.com \"a\" is invalid: [metadata.labels: Invalid value: \"bad key\": name part {QUALIFIED}, metadata.labels: Invalid value: \"-bad\": {LABEL_VALUE}]"
        )
    );
    let long = "v".repeat(64);
    let e = create_with(json!({"labels": {"k": long}}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.labels",
            format!("Invalid value: \"{long}\": must be no more than 63 characters")
        )]
    );
    assert_eq!(
        e.details.unwrap()["causes"][0]["reason"],
        "FieldValueInvalid"
    );
    let e = create_with(json!({"labels": {"k": 1}})).await.unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.labels",
            "Invalid value: 1: labels must be a map of strings"
        )]
    );
    let ok = create_with(json!({"labels": {"app.kubernetes.io/name": "db", "Empty": ""}})).await;
    assert!(ok.is_ok(), "{ok:?}");
}

#[tokio::test]
async fn annotation_keys_are_qualified_names_in_any_case_and_256_kib_in_all() {
    // Upper case passes in the prefix too: the key is checked lower-cased.
    let ok =
        create_with(json!({"annotations": {"Example.COM/Note": "anything at all: / \n"}})).await;
    assert!(ok.is_ok(), "{ok:?}");
    let e = create_with(json!({"annotations": {"a/b/c": "x"}}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.annotations",
            format!(
                "Invalid value: \"a/b/c\": a qualified name {QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )
        )]
    );
    // 262144 bytes of keys and values pass; one more byte is refused.
    let at_limit = "x".repeat(ANNOTATIONS_MAX_BYTES - 2);
    assert!(
        create_with(json!({"annotations": {"k1": at_limit}}))
            .await
            .is_ok()
    );
    let over = "x".repeat(ANNOTATIONS_MAX_BYTES - 1);
    let e = create_with(json!({"annotations": {"k1": over}}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.annotations",
            "Too long: must have at most 262144 bytes"
        )]
    );
    assert_eq!(
        e.details.unwrap()["causes"][0]["reason"],
        "FieldValueTooLong"
    );
}

#[tokio::test]
async fn finalizers_are_qualified_names_and_not_both_gc_policies() {
    let ok = create_with(json!({"finalizers": ["example.com/cleanup", "orphan"]})).await;
    assert!(ok.is_ok(), "{ok:?}");
    let e = create_with(json!({"finalizers": ["example.com/", "a/b/c"]}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [
            cause(
                "metadata.finalizers",
                "Invalid value: \"example.com/\": name part must be non-empty"
            ),
            cause(
                "metadata.finalizers",
                format!("Invalid value: \"example.com/\": name part {QUALIFIED}")
            ),
            cause(
                "metadata.finalizers",
                format!(
                    "Invalid value: \"a/b/c\": a qualified name {QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
                )
            ),
        ]
    );
    let e = create_with(json!({"finalizers": ["orphan", "foregroundDeletion"]}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.finalizers",
            r#"Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set"#
        )]
    );
}

#[tokio::test]
async fn owner_references_need_version_kind_name_uid_and_one_controller() {
    let owner = |name: &str, controller: bool| json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": "1", "controller": controller});
    let ok = create_with(json!({"ownerReferences": [owner("x", true), owner("y", false)]})).await;
    assert!(ok.is_ok(), "{ok:?}");
    let e = create_with(json!({"ownerReferences": [{"apiVersion": "apps/"}]}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [
            cause(
                "metadata.ownerReferences.apiVersion",
                "Invalid value: \"apps/\": version must not be empty"
            ),
            cause(
                "metadata.ownerReferences.kind",
                "Invalid value: \"\": kind must not be empty"
            ),
            cause(
                "metadata.ownerReferences.name",
                "Invalid value: \"\": name must not be empty"
            ),
            cause(
                "metadata.ownerReferences.uid",
                "Invalid value: \"\": uid must not be empty"
            ),
        ]
    );
    let refs = json!([owner("x", true), owner("y", true)]);
    let e = create_with(json!({"ownerReferences": refs}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.ownerReferences",
            format!(
                "Invalid value: {refs}: Only one reference can have Controller set to true. Found \"true\" in references for Deployment/x and Deployment/y"
            )
        )]
    );
    let event = json!({"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "2"});
    let e = create_with(json!({"ownerReferences": [event]}))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.ownerReferences",
            format!("Invalid value: {event}: /v1, Kind=Event is disallowed from being an owner")
        )]
    );
}

#[tokio::test]
async fn names_and_generate_name_prefixes_are_dns_subdomains() {
    let e = create_with(json!({"name": "Not_Valid"})).await.unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.name",
            format!("Invalid value: \"Not_Valid\": {}", SUBDOMAIN)
        )]
    );
    // A prefix may end in '-' (the suffix follows); a bad prefix makes a bad name too.
    assert!(
        create_with(json!({"name": null, "generateName": "db-"}))
            .await
            .is_ok()
    );
    let e = create_with(json!({"name": null, "generateName": "DB-"}))
        .await
        .unwrap_err();
    let c = causes(&e);
    assert_eq!(
        c[0],
        cause(
            "metadata.generateName",
            format!("Invalid value: \"DB-\": {}", SUBDOMAIN)
        )
    );
    assert_eq!(c[1].0, "metadata.name");
    assert_eq!(c.len(), 2);
}

#[tokio::test]
async fn an_update_keeps_or_refuses_the_servers_fields_as_kube_does() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let body = json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": "a"}, "spec": {"replicas": 1}});
    let created = r.create(&k, Some("ns"), body, "test").await.unwrap();
    let patch = |p: &'static str| {
        let r = &r;
        let k = &k;
        async move {
            r.patch(
                k,
                Some("ns"),
                "a",
                Part::Main,
                PatchType::Merge,
                p.as_bytes(),
                "test",
            )
            .await
        }
    };
    // Kept silently: creationTimestamp.
    let kept = patch(r#"{"metadata":{"creationTimestamp":"2000-01-01T00:00:00Z"}}"#)
        .await
        .unwrap();
    assert_eq!(
        kept["metadata"]["creationTimestamp"],
        created["metadata"]["creationTimestamp"]
    );
    // Refused: a changed uid, a deletionTimestamp on an object not being deleted, a grace period.
    let e = patch(r#"{"metadata":{"uid":"other"}}"#).await.unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.uid",
            "Invalid value: \"other\": field is immutable"
        )]
    );
    let e = patch(r#"{"metadata":{"deletionTimestamp":"2030-01-02T03:04:05Z"}}"#)
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.deletionTimestamp",
            "Invalid value: 2030-01-02 03:04:05 +0000 UTC: field is immutable"
        )]
    );
    let e = patch(r#"{"metadata":{"deletionGracePeriodSeconds":30}}"#)
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.deletionGracePeriodSeconds",
            "Invalid value: 30: field is immutable"
        )]
    );
    // A patched name or namespace is the patch handler's 400, before any of this.
    let e = patch(r#"{"metadata":{"namespace":"other"}}"#)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            400,
            "the namespace of the object (other) does not match the namespace on the URL (ns)"
        )
    );
    let e = patch(r#"{"metadata":{"name":"b"}}"#).await.unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            400,
            "the name of the object (b) does not match the name on the URL (a)"
        )
    );
    // The metadata rules apply to updates too.
    let e = patch(r#"{"metadata":{"finalizers":["orphan","foregroundDeletion"]}}"#)
        .await
        .unwrap_err();
    assert_eq!(causes(&e)[0].0, "metadata.finalizers");
    let e = patch(r#"{"metadata":{"labels":{"k":"-v"}}}"#)
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.labels",
            format!("Invalid value: \"-v\": {LABEL_VALUE}")
        )]
    );
}

#[tokio::test]
async fn a_finalizer_added_during_deletion_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(&dir);
    let k = database_kind();
    let body = json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": "a", "finalizers": ["example.com/a"]}, "spec": {}});
    r.create(&k, Some("ns"), body, "test").await.unwrap();
    r.delete(&k, Some("ns"), "a", &json!({})).await.unwrap();
    let e = r
        .patch(
            &k,
            Some("ns"),
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"metadata":{"finalizers":["example.com/a","z/z","b/b"]}}"#,
            "test",
        )
        .await
        .unwrap_err();
    assert_eq!(
        causes(&e),
        [cause(
            "metadata.finalizers",
            r#"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b/b", "z/z"}"#
        )]
    );
}
