// The webhook serving certificate (--webhook-cert-dir); none with ENABLE_WEBHOOKS=false.
let webhook_certs = rsbuilder_runtime::webhook::certificates(&args)?;
