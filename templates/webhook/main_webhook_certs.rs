// The webhook serving certificate is loaded before connecting, so that a missing or bad
// --webhook-cert-dir is reported at once. ENABLE_WEBHOOKS=false turns the webhook server off,
// for example for `cargo run` outside the cluster without a serving certificate.
let webhook_certs = if std::env::var("ENABLE_WEBHOOKS").as_deref() == Ok("false") {
    tracing::warn!("ENABLE_WEBHOOKS=false: starting without the webhook server");
    None
} else {
    Some(
        rsbuilder_runtime::tls::Certificates::from_dir(&args.webhook_cert_dir)
            .with_context(|| {
                format!(
                    "cannot load the webhook serving certificate \
                     (tls.crt, tls.key) from --webhook-cert-dir {}. \
                     In the cluster, cert-manager writes it there; \
                     to run the manager on this machine without its \
                     webhooks, set ENABLE_WEBHOOKS=false \
                     (`make run ENABLE_WEBHOOKS=false`)",
                    args.webhook_cert_dir.display()
                )
            })?,
    )
};
