
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

{%- if cluster %}
{%- if n.builtin || n.example_foo %}

    /// The API server's answer to a refused request: its code and message.
    fn refusal(err: kube::Error) -> (u16, String) {
        match err {
            kube::Error::Api(status) => (status.code, status.message.clone()),
            other => panic!("expected the API server to refuse the request, got {other}"),
        }
    }
{%- endif %}

{%- if n.builtin || n.example_foo %}

    /// The validating webhook as the API server calls it: what it denies is refused with its
    /// message (403) on create and on update, and not stored; what it admits is stored.
{%- else %}

    /// The validating webhook as the API server calls it: what it admits is stored, on create
    /// and on update.
{%- endif %}
    #[tokio::test]
{%- if n.builtin %}
    async fn the_api_server_refuses_what_the_validator_denies() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let mut empty = object();
        empty.metadata.labels = Some([("app.kubernetes.io/managed-by".to_string(), String::new())].into());
        let (code, message) = refusal(api.create(&PostParams::default(), &empty).await.unwrap_err());
        assert_eq!(code, 403);
        assert!(message.ends_with("denied the request: metadata.labels[app.kubernetes.io/managed-by]: must not be empty when set"), "{message}");
        assert!(api.get_opt("sample").await?.is_none(), "a denied object is not stored");

        let mut created = api.create(&PostParams::default(), &object()).await?;
        created.metadata.labels = empty.metadata.labels.clone();
        let (code, _) = refusal(api.replace("sample", &PostParams::default(), &created).await.unwrap_err());
        assert_eq!(code, 403);
        Ok(())
    }
{%- else if n.example_foo %}
    async fn the_api_server_refuses_what_the_validator_denies() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let empty = object(serde_json::json!({{ n.spec_with_foo("") }}));
        let (code, message) = refusal(api.create(&PostParams::default(), &empty).await.unwrap_err());
        assert_eq!(code, 403);
        assert_eq!(message, "admission webhook \"v{{ n.lower }}-{{ n.version }}.kb.io\" denied the request: spec.foo: must not be empty when set");
        assert!(api.get_opt("sample").await?.is_none(), "a denied object is not stored");

        let mut created = api.create(&PostParams::default(), &object(serde_json::json!({{ n.spec_with_foo("a") }}))).await?;
        created.spec.foo = Some(String::new());
        let (code, _) = refusal(api.replace("sample", &PostParams::default(), &created).await.unwrap_err());
        assert_eq!(code, 403);
        assert_eq!(api.get("sample").await?.spec.foo.as_deref(), Some("a"));
        Ok(())
    }
{%- else %}
    async fn the_api_server_stores_what_the_validator_admits() -> anyhow::Result<()> {
        let (_cluster, api) = cluster().await?;
        let sent = object(serde_json::json!({{ n.spec_json() }}));
        let created = api.create(&PostParams::default(), &sent).await?;
        api.replace("sample", &PostParams::default(), &created).await?;
        Ok(())
    }
{%- endif %}
{%- endif %}
