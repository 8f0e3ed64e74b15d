
/// Decodes the base64 JSON patch of an admission response.
fn patch_of(response: &Value) -> Value {
    let bytes: Vec<u8> = serde_json::from_value(response["patch"].clone()).unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

{% if n.builtin -%}
#[test]
fn default_sets_the_label_only_when_absent() {
    let mut obj = typed(bare_object());
    default(&mut obj);
    let labels = obj.metadata.labels.unwrap_or_default();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "{{ n.project_name }}");
    let mut obj = typed(defaulted_object());
    default(&mut obj);
    let labels = obj.metadata.labels.unwrap_or_default();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "me");
}

/// The patch that [`default`] gives for an object without labels.
fn expected_patch() -> Value {
    let labels = json!({"app.kubernetes.io/managed-by": "{{ n.project_name }}"});
    json!([{"op": "add", "path": "/metadata/labels", "value": labels}])
}

/// An object that [`default`] leaves alone.
fn defaulted_object() -> Value {
    object(json!({"app.kubernetes.io/managed-by": "me"}))
}

/// An object that [`default`] changes.
fn bare_object() -> Value {
    object(Value::Null)
}
{%- else if n.example_foo -%}
#[test]
fn default_fills_only_absent_fields() {
    let mut obj = typed(bare_object());
    default(&mut obj);
    assert_eq!(obj.spec.foo.as_deref(), Some("default"));
    let mut obj = typed(defaulted_object());
    default(&mut obj);
    assert_eq!(obj.spec.foo.as_deref(), Some("mine"));
}

/// The patch that [`default`] gives for an object without `spec.foo`.
fn expected_patch() -> Value {
    json!([{"op": "add", "path": "/spec/foo", "value": "default"}])
}

/// An object that [`default`] leaves alone.
fn defaulted_object() -> Value {
    object(json!({{ n.spec_with_foo("mine") }}))
}

/// An object that [`default`] changes.
fn bare_object() -> Value {
    object(json!({{ n.spec_json() }}))
}
{%- else -%}
#[test]
fn default_changes_nothing_yet() {
    let mut obj = typed(bare_object());
    default(&mut obj);
    let after = serde_json::to_value(&obj).expect("the object serializes");
    assert_eq!(after, serde_json::to_value(typed(bare_object())).unwrap());
}

/// An object with only the spec's required fields, set to empty values.
fn bare_object() -> Value {
    object(json!({{ n.spec_json() }}))
}
{%- endif %}

/// The defaulting handler's answer to `review`.
fn defaulting_answer(review: &Value) -> Value {
    let body = review.to_string();
    response(crate::webhook::mutate::<{{ n.kind }}>(body.as_bytes(), default))
}

{% if n.builtin || n.example_foo -%}
#[test]
fn mutate_answers_with_a_json_patch() {
    let resp = defaulting_answer(&review("CREATE", bare_object(), Value::Null));
    assert_eq!(resp["uid"], "0b0a4b9e-0000-4000-8000-000000000002");
    assert_eq!(resp["allowed"], true);
    assert_eq!(resp["patchType"], "JSONPatch");
    assert_eq!(patch_of(&resp), expected_patch());
    let resp = defaulting_answer(&review("UPDATE", defaulted_object(), defaulted_object()));
    assert_eq!(resp["allowed"], true);
    assert!(resp.get("patch").is_none(), "{resp}");
}

#[tokio::test]
async fn defaulting_webhook_answers_over_https() {
    let server = crate::webhook::testing::start(crate::webhook::router()).await;
    let body = review("CREATE", bare_object(), Value::Null);
    let (status, answer) = server.post(DEFAULTING_PATH, &body).await;
    assert_eq!(status, 200);
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["allowed"], true);
    assert_eq!(patch_of(&answer["response"]), expected_patch());
}
{%- else -%}
#[test]
fn mutate_allows_without_a_patch_yet() {
    let resp = defaulting_answer(&review("CREATE", bare_object(), Value::Null));
    assert_eq!(resp["uid"], "0b0a4b9e-0000-4000-8000-000000000002");
    assert_eq!(resp["allowed"], true);
    assert!(resp.get("patch").is_none(), "{resp}");
    assert_eq!(patch_of(&resp), Value::Null);
}

#[tokio::test]
async fn defaulting_webhook_answers_over_https() {
    let server = crate::webhook::testing::start(crate::webhook::router()).await;
    let body = review("CREATE", bare_object(), Value::Null);
    let (status, answer) = server.post(DEFAULTING_PATH, &body).await;
    assert_eq!(status, 200);
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], "0b0a4b9e-0000-4000-8000-000000000002");
    assert_eq!(answer["response"]["allowed"], true);
    assert!(answer["response"].get("patch").is_none(), "{answer}");
}
{%- endif %}
