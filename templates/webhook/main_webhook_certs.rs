// The webhook serving certificate is loaded before connecting, so that a missing or bad
// --webhook-cert-dir is reported at once. ENABLE_WEBHOOKS=false turns the webhook server off,
// for example for `cargo run` outside the cluster without a serving certificate.
let webhook_certs = if std::env::var("ENABLE_WEBHOOKS").as_deref() == Ok("false") {
    None
} else {
    Some(
        tls::Certificates::from_dir(&args.webhook_cert_dir)
            .context("--webhook-cert-dir: cannot load the webhook serving certificate")?,
    )
};
