{% if !early_certs -%}
// The webhook serving certificate (--webhook-cert-dir); none with ENABLE_WEBHOOKS=false.
let webhook_certs = rsbuilder_runtime::webhook::certificates(runner.args())?;
{% endif -%}
let webhooks = rsbuilder_runtime::webhook::Webhooks::new();
// +kubebuilder:scaffold:webhook-registrations
runner.serve_webhooks(webhook_certs, webhooks);
