
    #[tokio::test]
{%- if n.builtin %}
    async fn validators_reject_on_create_and_update() {
        let ok = object();
        assert_eq!({{ n.kind }}Webhook.validate_create(&ok).await, Ok(Vec::new()));
        let mut empty = object();
        empty.metadata.labels = Some([("app.kubernetes.io/managed-by".to_string(), String::new())].into());
        let denied = {{ n.kind }}Webhook.validate_create(&empty).await.unwrap_err();
        assert!(denied.message.contains("managed-by"), "{denied}");
        assert!({{ n.kind }}Webhook.validate_update(&ok, &empty).await.is_err());
        assert_eq!({{ n.kind }}Webhook.validate_delete(&empty).await, Ok(Vec::new()));
    }
{%- else if n.example_foo %}
    async fn validators_reject_on_create_and_update() {
        let ok = object(serde_json::json!({{ n.spec_with_foo("a") }}));
        assert_eq!({{ n.kind }}Webhook.validate_create(&ok).await, Ok(Vec::new()));
        let empty = object(serde_json::json!({{ n.spec_with_foo("") }}));
        let denied = {{ n.kind }}Webhook.validate_create(&empty).await.unwrap_err();
        assert_eq!(denied.message, "spec.foo: must not be empty when set");
        assert!({{ n.kind }}Webhook.validate_update(&ok, &empty).await.is_err());
        let changed = object(serde_json::json!({{ n.spec_with_foo("b") }}));
        let warnings = {{ n.kind }}Webhook.validate_update(&ok, &changed).await.unwrap();
        assert_eq!(warnings, [r#"spec.foo changed from Some("a") to Some("b")"#]);
        assert_eq!({{ n.kind }}Webhook.validate_delete(&empty).await, Ok(Vec::new()));
    }
{%- else %}
    async fn validators_admit_everything_yet() {
        let obj = object(serde_json::json!({{ n.spec_json() }}));
        assert_eq!({{ n.kind }}Webhook.validate_create(&obj).await, Ok(Vec::new()));
        assert_eq!({{ n.kind }}Webhook.validate_update(&obj, &obj).await, Ok(Vec::new()));
        assert_eq!({{ n.kind }}Webhook.validate_delete(&obj).await, Ok(Vec::new()));
    }
{%- endif %}
