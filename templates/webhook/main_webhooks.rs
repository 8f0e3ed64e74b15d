{% if early_certs -%}
// The webhook server (its certificate was loaded before connecting).
if let Some(certs) = webhook_certs {
{%- else -%}
// The webhook server; ENABLE_WEBHOOKS=false turns it off, for example for `cargo run`
// outside the cluster without a serving certificate.
if std::env::var("ENABLE_WEBHOOKS").as_deref() != Ok("false") {
    let certs = rsbuilder_runtime::tls::Certificates::from_dir(&runner.args().webhook_cert_dir)
        .with_context(|| {
            format!(
                "cannot load the webhook serving certificate \
                 (tls.crt, tls.key) from --webhook-cert-dir {}. \
                 In the cluster, cert-manager writes it there; \
                 to run the manager on this machine without its \
                 webhooks, set ENABLE_WEBHOOKS=false \
                 (`make run ENABLE_WEBHOOKS=false`)",
                runner.args().webhook_cert_dir.display()
            )
        })?;
{%- endif %}
    let webhooks = rsbuilder_runtime::webhook::Webhooks::new();
    // +kubebuilder:scaffold:webhook-registrations
    runner.spawn(rsbuilder_runtime::webhook::serve(
        std::net::SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, runner.args().webhook_port)),
        certs,
        webhooks,
        runner.manager().shutdown,
    ));
}
