
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

{%- if cluster %}

{%- if n.builtin || n.example_foo %}

    /// The defaulting webhook as the API server calls it on a create: what it sets is stored.
{%- else %}

    /// The defaulting webhook as the API server calls it on a create: the object is stored as
    /// sent, since it sets nothing yet.
{%- endif %}
    #[tokio::test]
{%- if n.builtin %}
    async fn the_api_server_stores_what_the_defaulter_sets() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let created = api.create(&PostParams::default(), &object()).await?;
        let labels = created.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get("app.kubernetes.io/managed-by").map(String::as_str), Some("{{ n.project_name }}"));
        Ok(())
    }
{%- else if n.example_foo %}
    async fn the_api_server_stores_what_the_defaulter_sets() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let sent = object(serde_json::json!({{ n.spec_json() }}));
        let created = api.create(&PostParams::default(), &sent).await?;
        assert_eq!(created.spec.foo.as_deref(), Some("default"));
        Ok(())
    }
{%- else %}
    async fn the_api_server_stores_the_object_the_defaulter_leaves() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let sent = object(serde_json::json!({{ n.spec_json() }}));
        let created = api.create(&PostParams::default(), &sent).await?;
        assert_eq!(serde_json::to_value(&created.spec)?, serde_json::to_value(&sent.spec)?);
        Ok(())
    }
{%- endif %}
{%- endif %}
