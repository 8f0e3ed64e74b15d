
{% if n.builtin -%}
/// Rejected by [`validate_spec`].
fn invalid_object() -> Value {
    object(json!({"app.kubernetes.io/managed-by": ""}))
}

/// The message of that rejection.
const INVALID_MESSAGE: &str =
    "metadata.labels[app.kubernetes.io/managed-by]: must not be empty when set";

/// A valid object whose checked value is `value`.
fn valid_object(value: &str) -> Value {
    object(json!({"app.kubernetes.io/managed-by": value}))
}

/// The warning [`validate_update`] gives for a change from `a` to `b`.
const CHANGE_WARNING: &str =
    "metadata.labels[app.kubernetes.io/managed-by] changed from Some(\"a\") to Some(\"b\")";
{%- else if n.example_foo -%}
/// Rejected by [`validate_spec`].
fn invalid_object() -> Value {
    object(json!({{ n.spec_with_foo("") }}))
}

/// The message of that rejection.
const INVALID_MESSAGE: &str = "spec.foo: must not be empty when set";

/// A valid object whose checked value is `value`.
fn valid_object(value: &str) -> Value {
    object(json!({{ n.spec_with_foo_expr("value") }}))
}

/// The warning [`validate_update`] gives for a change from `a` to `b`.
const CHANGE_WARNING: &str = "spec.foo changed from Some(\"a\") to Some(\"b\")";
{%- else -%}
/// An object with only the spec's required fields, set to empty values.
fn valid_object() -> Value {
    object(json!({{ n.spec_json() }}))
}
{%- endif %}

/// The validating handler's answer to `review`.
fn validation_answer(review: &Value) -> Value {
    let body = review.to_string();
    response(crate::webhook::validate(body.as_bytes(), &validator()))
}

{% if n.builtin || n.example_foo -%}
#[test]
fn validators_reject_on_create_and_update() {
    let ok = typed(valid_object("a"));
    assert_eq!(validate_create(&ok), Ok(vec![]));
    let bad = typed(invalid_object());
    let denied = validate_create(&bad).unwrap_err();
    assert_eq!(denied.message, INVALID_MESSAGE);
    assert_eq!(validate_update(&ok, &bad).unwrap_err(), denied);
    assert_eq!(validate_delete(&bad), Ok(vec![]));
}

#[test]
fn validate_answers_by_operation_with_warnings() {
    let resp = validation_answer(&review("CREATE", invalid_object(), Value::Null));
    assert_eq!(resp["allowed"], false);
    assert_eq!(resp["status"]["message"], INVALID_MESSAGE);
    let resp = validation_answer(&review("UPDATE", valid_object("b"), valid_object("a")));
    assert_eq!(resp["allowed"], true);
    assert_eq!(resp["warnings"], json!([CHANGE_WARNING]));
    let resp = validation_answer(&review("DELETE", Value::Null, invalid_object()));
    assert_eq!(resp["allowed"], true);
}

#[tokio::test]
async fn validating_webhook_answers_over_https() {
    let server = crate::webhook::testing::start(crate::webhook::router()).await;
    let body = review("CREATE", invalid_object(), Value::Null);
    let (status, answer) = server.post(VALIDATION_PATH, &body).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["message"], INVALID_MESSAGE);
}
{%- else -%}
#[test]
fn validators_admit_everything_yet() {
    let obj = typed(valid_object());
    assert_eq!(validate_create(&obj), Ok(vec![]));
    assert_eq!(validate_update(&obj, &obj), Ok(vec![]));
    assert_eq!(validate_delete(&obj), Ok(vec![]));
}

#[test]
fn validate_answers_every_operation() {
    for (operation, object, old_object) in [
        ("CREATE", valid_object(), Value::Null),
        ("UPDATE", valid_object(), valid_object()),
        ("DELETE", Value::Null, valid_object()),
    ] {
        let resp = validation_answer(&review(operation, object, old_object));
        assert_eq!(resp["uid"], "0b0a4b9e-0000-4000-8000-000000000002");
        assert_eq!(resp["allowed"], true, "{operation}: {resp}");
    }
}

#[tokio::test]
async fn validating_webhook_answers_over_https() {
    let server = crate::webhook::testing::start(crate::webhook::router()).await;
    let body = review("CREATE", valid_object(), Value::Null);
    let (status, answer) = server.post(VALIDATION_PATH, &body).await;
    assert_eq!(status, 200);
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["allowed"], true);
}
{%- endif %}
