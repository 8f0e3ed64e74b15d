// The webhook server; ENABLE_WEBHOOKS=false turns it off, for example for `cargo run`
// outside the cluster without a serving certificate.
if std::env::var("ENABLE_WEBHOOKS").as_deref() != Ok("false") {
    controllers.spawn({{ crate_name }}::webhook::serve(
        std::net::SocketAddr::from(([0, 0, 0, 0], args.webhook_port)),
        std::path::PathBuf::from(&args.webhook_cert_dir),
        {{ crate_name }}::webhook::router(),
        mgr.shutdown.clone(),
    ));
}
