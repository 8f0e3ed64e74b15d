
    #[tokio::test]
{%- if n.builtin %}
    async fn default_fills_only_absent_fields() {
        let mut obj = object();
        {{ n.kind }}Webhook.default(&mut obj).await.unwrap();
        let labels = obj.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["app.kubernetes.io/managed-by"], "{{ n.project_name }}");
        // A value the user set stays.
        obj.metadata.labels = Some([("app.kubernetes.io/managed-by".to_string(), "me".to_string())].into());
        {{ n.kind }}Webhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.metadata.labels.unwrap()["app.kubernetes.io/managed-by"], "me");
    }
{%- else if n.example_foo %}
    async fn default_fills_only_absent_fields() {
        let mut obj = object(serde_json::json!({{ n.spec_json() }}));
        {{ n.kind }}Webhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.foo.as_deref(), Some("default"));
        // A value the user set stays.
        let mut obj = object(serde_json::json!({{ n.spec_with_foo("mine") }}));
        {{ n.kind }}Webhook.default(&mut obj).await.unwrap();
        assert_eq!(obj.spec.foo.as_deref(), Some("mine"));
    }
{%- else %}
    async fn default_changes_nothing_yet() {
        let mut obj = object(serde_json::json!({{ n.spec_json() }}));
        let before = serde_json::to_value(&obj).unwrap();
        {{ n.kind }}Webhook.default(&mut obj).await.unwrap();
        assert_eq!(serde_json::to_value(&obj).unwrap(), before);
    }
{%- endif %}
