//! The askama templates of `create webhook`, one struct each: the module files, the kind's
//! webhook file and its sections (defaulting, validation, their tests), the conversion file
//! and its CRD patch, the manager's server start, and the kustomize files of
//! `config/webhook`, `config/certmanager` and the network policy. The template text is in
//! `templates/webhook/`.

use askama::Template;

use super::names::Names;

/// `src/webhook/mod.rs`: the module tree of the webhooks (the server is the runtime's).
#[derive(Template)]
#[template(path = "webhook/webhook_mod.rs")]
pub(super) struct WebhookModFile;

#[derive(Template)]
#[template(path = "webhook/version_mod.rs")]
pub(super) struct VersionMod<'a> {
    pub(super) version: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/kind_webhook.rs")]
pub(super) struct KindFile<'a> {
    pub(super) n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/defaulting.rs")]
pub(super) struct Defaulting<'a> {
    pub(super) n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/defaulting_tests.rs")]
pub(super) struct DefaultingTests<'a> {
    pub(super) n: &'a Names,
    /// With the test through the test cluster (the kind file has its registrations marker).
    pub(super) cluster: bool,
}

#[derive(Template)]
#[template(path = "webhook/validation.rs")]
pub(super) struct Validation<'a> {
    pub(super) n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/validation_tests.rs")]
pub(super) struct ValidationTests<'a> {
    pub(super) n: &'a Names,
    /// With the test through the test cluster (the kind file has its registrations marker).
    pub(super) cluster: bool,
}

/// A spoke version of a conversion webhook.
#[derive(Debug, Clone)]
pub(super) struct Spoke {
    pub(super) version: String,
    pub(super) ident: String,
    pub(super) api_version: String,
    pub(super) type_path: String,
    /// The `spec` of the spoke objects in the conversion tests (`json!` text): the spoke's
    /// minimal spec.
    pub(super) spec: String,
    /// The required fields of the spoke and the hub differ, so carrying fields over by name
    /// cannot convert the minimal objects: the round-trip tests are generated `#[ignore]`d
    /// until the conversion functions are written (a comment says so, and a note is printed),
    /// so the project's tests pass as scaffolded.
    pub(super) differs: bool,
}

#[derive(Template)]
#[template(path = "webhook/kind_conversion.rs")]
pub(super) struct KindConversion<'a> {
    pub(super) n: &'a Names,
    pub(super) spokes: &'a [Spoke],
}

#[derive(Template)]
#[template(path = "webhook/config/crd_conversion_patch.yaml")]
pub(super) struct CrdConversionPatch<'a> {
    pub(super) crd_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/crd_conversion_replacements.yaml")]
pub(super) struct CrdConversionReplacements<'a> {
    pub(super) crd_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/main_webhooks.rs")]
pub(super) struct MainWebhooks {
    /// `main.rs` has the `certificates` marker, where [`MainWebhookCerts`] loads the
    /// certificate before connecting; without it (a project from an earlier rsbuilder) the
    /// server start loads it itself, after connecting.
    pub(super) early_certs: bool,
}

/// Loads the webhook serving certificate in `main` before it connects to the cluster.
#[derive(Template)]
#[template(path = "webhook/main_webhook_certs.rs")]
pub(super) struct MainWebhookCerts;

#[derive(Template)]
#[template(path = "webhook/config/service.yaml")]
pub(super) struct ServiceYaml<'a> {
    pub(super) project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/issuer.yaml")]
pub(super) struct IssuerYaml<'a> {
    pub(super) project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/certificate.yaml")]
pub(super) struct CertificateYaml<'a> {
    pub(super) project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/allow-webhook-traffic.yaml")]
pub(super) struct NetworkPolicyYaml<'a> {
    pub(super) project_name: &'a str,
}
