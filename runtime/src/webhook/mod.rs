// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The webhook server: defaulting and validating admission webhooks and the CRD conversion
//! webhook, written once for every kind and served over HTTPS as kube-apiserver calls them.
//!
//! A project implements, per kind, the traits a Kubebuilder project implements against
//! controller-runtime (`CustomDefaulter`, `CustomValidator`, `Convertible`):
//!
//! - [`Defaulter`]: `default` sets absent fields before the object is stored;
//! - [`Validator`]: `validate_create`, `validate_update`, `validate_delete` admit or reject it;
//! - [`Convert`]: a spoke version converts to the hub version and back.
//!
//! [`Webhooks`] registers them at their paths, and [`serve`] serves them. What the server
//! does for every kind, so that no project writes it again (each point is a scenario of the
//! tests in `tests.rs`, sent over TLS as the API server sends it):
//!
//! - request bodies up to [`ADMISSION_BODY_LIMIT`] (7 MiB, controller-runtime's limit; an
//!   UPDATE carries the object twice) and [`CONVERSION_BODY_LIMIT`] (16 MiB, a
//!   ConversionReview of a whole list); a larger one is answered with a 413 that says the
//!   limit;
//! - ConversionReviews are converted one object at a time, and those handled at once hold at
//!   most [`CONVERSION_BYTES_IN_FLIGHT`] of bodies (others wait), so the memory they take is
//!   bounded (docs/benchmarks.md);
//! - a review whose `kind` or `resource` is not the webhook's kind is denied with a message
//!   naming both, and never patched (a misconfigured rule must not rewrite Pods);
//! - a defaulting patch holds only what `default` changed, applied to the object exactly as
//!   sent (see [`patch`]): what the Rust types re-encode differently (`status:
//!   {}`, fractional seconds, unknown fields) is left alone;
//! - a denial carries code 403 and reason `Forbidden`, as controller-runtime's does, so the
//!   client sees `403 Forbidden: admission webhook "…" denied the request: <message>`;
//! - the patch is a base64 string, as the API documents `[]byte` fields in JSON;
//! - a conversion keeps, byte for byte, everything it does not convert (`status`,
//!   `metadata`).
//!
//! The server runs on every replica of the manager, not only the leader: the API server
//! sends webhook requests to any ready pod behind the webhook Service.
//!
//! A kind's webhook file, in the shape `rsbuilder create webhook` scaffolds (here for a
//! built-in kind):
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use rsbuilder_runtime::webhook::prelude::*;
//!
//! // +kubebuilder:webhook:path=/mutate--v1-configmap,mutating=true,...
//! // +kubebuilder:webhook:path=/validate--v1-configmap,mutating=false,...
//!
//! pub struct ConfigMapWebhook;
//!
//! impl Defaulter<ConfigMap> for ConfigMapWebhook {
//!     async fn default(&self, config_map: &mut ConfigMap) -> Result<(), Denied> {
//!         let labels = config_map.metadata.labels.get_or_insert_default();
//!         labels.entry("app.kubernetes.io/managed-by".into()).or_insert("me".into());
//!         Ok(())
//!     }
//! }
//!
//! impl Validator<ConfigMap> for ConfigMapWebhook {
//!     async fn validate_create(&self, config_map: &ConfigMap) -> Validation {
//!         match config_map.data.as_ref().map_or(0, |d| d.len()) {
//!             n if n > 100 => Err(Denied::new(format!("data: at most 100 keys, got {n}"))),
//!             _ => Ok(Vec::new()),
//!         }
//!     }
//! }
//!
//! // In main: runner.serve_webhooks(certificates(&args)?, webhooks).
//! let webhooks = Webhooks::new()
//!     .defaulting::<ConfigMap, _>("/mutate--v1-configmap", ConfigMapWebhook)
//!     .validating::<ConfigMap, _>("/validate--v1-configmap", ConfigMapWebhook);
//! assert!(webhooks.routes().is_ok());
//! ```

use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::routes::Routes;
use crate::tls::Certificates;

mod admission;
mod conversion;
pub mod patch;
pub mod review;
#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod tests;

pub use conversion::{CONVERSION_PATH, Conversion, Convert, carry_over};

/// What a kind's webhook file uses, for one `use rsbuilder_runtime::webhook::prelude::*;`.
pub mod prelude {
    pub use super::{
        Conversion, Convert, Defaulter, Denied, Validation, Validator, Warnings, Webhooks,
        carry_over,
    };
}

/// Largest AdmissionReview body read: 7 MiB, controller-runtime's `maxRequestSize`. The API
/// server stores objects of at most about 1.5 MiB (etcd's limit), and an UPDATE review
/// carries the object and the old object.
pub const ADMISSION_BODY_LIMIT: usize = 7 * 1024 * 1024;

/// Largest ConversionReview body read by default: 16 MiB. The API server converts the
/// objects of a list in one review, so the body grows with the number of objects listed. A
/// review takes a few times its body's length in memory while it is converted
/// (docs/benchmarks.md), and the default keeps one review of this size within the memory
/// limit of the scaffolded manager (`config/manager/manager.yaml`); a project whose lists are
/// larger raises both, this one with [`Webhooks::conversion_body_limit`].
pub const CONVERSION_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Bytes of ConversionReview bodies handled at once by default: 8 MiB. A review holds
/// a few times its body's length while it is converted (the decoded objects, the answer), so
/// this bounds the memory that reviews arriving together take; change it with
/// [`Webhooks::conversion_bytes_in_flight`].
pub const CONVERSION_BYTES_IN_FLIGHT: usize = 8 * 1024 * 1024;

/// Warnings returned to the client with an admission answer (kubectl prints them).
pub type Warnings = Vec<String>;

/// A rejection: the message the API server shows the user, and warnings. The webhook answers
/// it with code 403 and reason `Forbidden`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Denied {
    /// Why the object is rejected; name the field and the rule (`spec.replicas: must be at
    /// most 100, got 200`).
    pub message: String,
    /// Warnings returned with the denial.
    pub warnings: Warnings,
}

impl Denied {
    /// A denial with `message` and no warnings.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            warnings: Vec::new(),
        }
    }
}

impl From<String> for Denied {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for Denied {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// The answer of a validating function: admitted with warnings, or [`Denied`].
pub type Validation = Result<Warnings, Denied>;

/// Sets default values on objects of kind `K` before the API server stores them (a mutating
/// admission webhook, controller-runtime's `CustomDefaulter`). Called on create and update
/// (as the webhook marker's `verbs` say), never on delete; on update it sees the object
/// as the user sent it, so it must set only what is absent.
///
/// The webhook answers with a JSON patch of exactly what `default` changed. An `Err` rejects
/// the request with its message (code 403).
///
/// `E` is the rejection: [`Denied`] for a webhook (the default). The aggregated API server
/// (feature `apiserver`) runs the same trait in process, with its `Invalid` (422, one cause
/// per field) as `E`.
pub trait Defaulter<K, E = Denied>: Send + Sync + 'static {
    /// Fills in the defaults of `object`.
    fn default(&self, object: &mut K) -> impl Future<Output = Result<(), E>> + Send;
}

/// What a validating function answers: admitted, or rejected. [`Verdict::admitted`] is the
/// answer of a [`Validator`] function left unimplemented.
pub trait Verdict: Send + 'static {
    /// Admitted, with nothing to add.
    fn admitted() -> Self;
}

/// A webhook's answer: admitted with no warnings.
impl Verdict for Validation {
    fn admitted() -> Self {
        Ok(Warnings::new())
    }
}

/// Admits or rejects objects of kind `K` (a validating admission webhook, controller-runtime's
/// `CustomValidator`). Each function admits by default; implement the ones the kind needs.
/// `Ok(warnings)` admits with warnings, `Err(Denied)` rejects with code 403.
///
/// `V` is the answer: [`Validation`] for a webhook (the default). The aggregated API server
/// (feature `apiserver`) runs the same trait in process, with its `Admitted` as `V`.
pub trait Validator<K, V: Verdict = Validation>: Send + Sync + 'static {
    /// Checks an object being created.
    fn validate_create(&self, object: &K) -> impl Future<Output = V> + Send {
        let _ = object;
        async { V::admitted() }
    }

    /// Checks an update from `old` to `new`.
    fn validate_update(&self, old: &K, new: &K) -> impl Future<Output = V> + Send {
        let _ = (old, new);
        async { V::admitted() }
    }

    /// Checks an object being deleted (called only when the marker's `verbs` include
    /// `delete`).
    fn validate_delete(&self, object: &K) -> impl Future<Output = V> + Send {
        let _ = object;
        async { V::admitted() }
    }
}

/// The bounds a kind needs to be served by a webhook: a static Kubernetes resource that
/// serde reads and writes. Every kube-derive `CustomResource` and k8s-openapi type has them.
pub trait WebhookKind:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> WebhookKind for K where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// The webhooks of a manager: each defaulter and validator at its path, and the conversions
/// at [`CONVERSION_PATH`]. Build it with the methods below, then [`serve`] it (or take its
/// [`Webhooks::routes`]).
pub struct Webhooks {
    routes: Routes,
    paths: BTreeSet<String>,
    conversions: Vec<Arc<dyn conversion::KindConversion>>,
    conversion_body_limit: usize,
    conversion_in_flight: usize,
    /// `conversion_in_flight` permits, shared by the routes built.
    conversion_permits: Arc<tokio::sync::Semaphore>,
    problems: Vec<String>,
}

impl Default for Webhooks {
    fn default() -> Self {
        Self::new()
    }
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Self {
            routes: Routes::new(),
            paths: BTreeSet::new(),
            conversions: Vec::new(),
            conversion_body_limit: CONVERSION_BODY_LIMIT,
            conversion_in_flight: CONVERSION_BYTES_IN_FLIGHT,
            conversion_permits: conversion::permits(CONVERSION_BYTES_IN_FLIGHT),
            problems: Vec::new(),
        }
    }

    /// Serves `defaulter` for kind `K` at `path`, the `path` of the kind's
    /// `+kubebuilder:webhook:...,mutating=true` marker. A path that does not start with `/`,
    /// or is registered twice, is reported by [`Webhooks::routes`].
    pub fn defaulting<K: WebhookKind, D: Defaulter<K>>(mut self, path: &str, defaulter: D) -> Self {
        if self.claim(path) {
            let defaulter = Arc::new(defaulter);
            self.routes = self.routes.post(path, move |request| {
                let defaulter = defaulter.clone();
                admission::serve(request, move |req| async move {
                    admission::default::<K, D>(&*defaulter, req).await
                })
            });
        }
        self
    }

    /// Serves `validator` for kind `K` at `path`, the `path` of the kind's
    /// `+kubebuilder:webhook:...,mutating=false` marker. Problems as for
    /// [`Webhooks::defaulting`].
    pub fn validating<K: WebhookKind, V: Validator<K>>(mut self, path: &str, validator: V) -> Self {
        if self.claim(path) {
            let validator = Arc::new(validator);
            self.routes = self.routes.post(path, move |request| {
                let validator = validator.clone();
                admission::serve(request, move |req| async move {
                    admission::validate::<K, V>(&*validator, req).await
                })
            });
        }
        self
    }

    /// Serves the conversions of one kind between its versions at [`CONVERSION_PATH`] (the
    /// path the CRD's `spec.conversion.webhook` names). A second conversion for the same
    /// group and kind is reported by [`Webhooks::routes`].
    pub fn conversion<H: WebhookKind>(mut self, conversion: Conversion<H>) -> Self {
        let (group, kind) = (H::group(&()).to_string(), H::kind(&()).to_string());
        if self
            .conversions
            .iter()
            .any(|c| c.group() == group && c.kind() == kind)
        {
            self.problems
                .push(format!("two conversions for {kind} ({group}) registered"));
        } else {
            self.problems.extend(conversion.problems());
            self.conversions.push(Arc::new(conversion));
        }
        self
    }

    /// Sets the largest ConversionReview body read (default [`CONVERSION_BODY_LIMIT`]).
    pub fn conversion_body_limit(mut self, bytes: usize) -> Self {
        self.conversion_body_limit = bytes;
        self
    }

    /// Sets the bytes of ConversionReview bodies handled at once (default
    /// [`CONVERSION_BYTES_IN_FLIGHT`]): a review waits until its body fits beside the ones
    /// being converted; one larger than `bytes` waits for all of them and runs alone.
    pub fn conversion_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.conversion_in_flight = bytes;
        self.conversion_permits = conversion::permits(bytes);
        self
    }

    /// The permits of the bytes in flight, for tests that hold some.
    #[cfg(test)]
    pub(super) fn conversion_permits(&self) -> Arc<tokio::sync::Semaphore> {
        self.conversion_permits.clone()
    }

    /// The routes. Errors: a path registered twice or not starting with `/`, two
    /// conversions of one kind, a spoke of another kind than its hub.
    pub fn routes(self) -> anyhow::Result<Routes> {
        if !self.problems.is_empty() {
            anyhow::bail!("webhooks: {}", self.problems.join("; "));
        }
        let mut routes = self.routes;
        if !self.conversions.is_empty() {
            let conversions = Arc::new(self.conversions);
            let limits = Arc::new(conversion::Limits {
                body: self.conversion_body_limit,
                in_flight: self
                    .conversion_in_flight
                    .clamp(1, conversion::MAX_IN_FLIGHT),
                permits: self.conversion_permits,
            });
            routes = routes.post(CONVERSION_PATH, move |request| {
                conversion::serve(request, conversions.clone(), limits.clone())
            });
        }
        Ok(routes)
    }

    /// The paths of the defaulting and validating webhooks registered so far, in order of
    /// path (the conversion path, [`CONVERSION_PATH`], is not among them). The test cluster
    /// checks each against the webhook configurations, which name the paths the API server
    /// calls.
    #[cfg(feature = "testing")]
    pub(crate) fn admission_paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(String::as_str)
    }

    /// Records `path` as taken; false (and a problem) when it cannot be served.
    fn claim(&mut self, path: &str) -> bool {
        if !path.starts_with('/') {
            self.problems
                .push(format!("webhook path {path:?} must start with '/'"));
            return false;
        }
        if path == CONVERSION_PATH || !self.paths.insert(path.to_string()) {
            self.problems
                .push(format!("webhook path {path:?} registered twice"));
            return false;
        }
        true
    }
}

/// The environment variable that, set to `false`, turns the webhook server off: for `cargo
/// run` (`make run ENABLE_WEBHOOKS=false`) outside the cluster, without a serving
/// certificate. Kubebuilder's scaffolded `main.go` reads the same variable.
pub const ENABLE_WEBHOOKS: &str = "ENABLE_WEBHOOKS";

/// The webhook serving certificate of the manager, loaded from `--webhook-cert-dir`
/// (`tls.crt`, `tls.key`: the Secret cert-manager fills in the cluster). Call it before
/// [`crate::manager::Runner::start`], so that a missing certificate is reported at once
/// rather than after connecting; hand the result to
/// [`crate::manager::Runner::serve_webhooks`]. Returns `None`, with a warning in the log,
/// when [`ENABLE_WEBHOOKS`] is `false`. Errors: the certificate cannot be loaded; the message
/// names the flag and its value, the file, and the `ENABLE_WEBHOOKS=false` way out.
pub fn certificates(args: &impl CertDir) -> anyhow::Result<Option<Certificates>> {
    let enable = std::env::var(ENABLE_WEBHOOKS).ok();
    certificates_from(args.webhook_cert_dir(), enable.as_deref())
}

/// Where [`certificates`] reads the webhook serving certificate from. The manager's flags
/// ([`crate::manager::Args`], `--webhook-cert-dir`) say it; a binary with flags of its own
/// implements it to call [`certificates`].
pub trait CertDir {
    /// The directory holding `tls.crt` and `tls.key`.
    fn webhook_cert_dir(&self) -> &std::path::Path;
}

/// A reference reads through, so `certificates(&args)` compiles whether `args` is the flags or
/// a reference to them.
impl<T: CertDir + ?Sized> CertDir for &T {
    fn webhook_cert_dir(&self) -> &std::path::Path {
        (**self).webhook_cert_dir()
    }
}

/// [`certificates`] with the value of [`ENABLE_WEBHOOKS`] given (`None`: unset), so that
/// tests need not change the process environment.
fn certificates_from(
    dir: &std::path::Path,
    enable_webhooks: Option<&str>,
) -> anyhow::Result<Option<Certificates>> {
    if enable_webhooks == Some("false") {
        tracing::warn!("{ENABLE_WEBHOOKS}=false: starting without the webhook server");
        return Ok(None);
    }
    let certs = Certificates::from_dir(dir).map_err(|e| {
        e.context(format!(
            "cannot load the webhook serving certificate (tls.crt, tls.key) from \
             --webhook-cert-dir {}. In the cluster, cert-manager writes it there; to run the \
             manager on this machine without its webhooks, set {ENABLE_WEBHOOKS}=false \
             (`make run {ENABLE_WEBHOOKS}=false`)",
            dir.display()
        ))
    })?;
    Ok(Some(certs))
}

/// Binds `addr` (see [`crate::tls::bind`]: `[::]` is dual stack) and serves `webhooks`
/// over TLS with `certs` until `shutdown` is cancelled; see [`serve_listener`]. `certs` is
/// usually [`certificates`] of `--webhook-cert-dir` (the Secret cert-manager fills), loaded
/// before connecting to the cluster so that a missing certificate is reported at once; a
/// manager serves them with [`crate::manager::Runner::serve_webhooks`]. Errors: the webhooks are misconfigured ([`Webhooks::routes`]), the address cannot
/// be bound, serving fails.
pub async fn serve(
    addr: SocketAddr,
    certs: Certificates,
    webhooks: Webhooks,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let listener = crate::tls::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("webhook server: cannot listen on {addr}: {e}"))?;
    serve_listener(listener, certs, webhooks, shutdown).await
}

/// As [`serve`], on an already bound listener (tests bind port 0).
pub async fn serve_listener(
    listener: TcpListener,
    certs: Certificates,
    webhooks: Webhooks,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    serve_listener_with(
        listener,
        certs,
        webhooks,
        shutdown,
        crate::tls::KEEP_ALIVE_IDLE_TIMEOUT,
    )
    .await
}

/// As [`serve_listener`], closing a kept-alive connection after `idle_timeout` without a
/// request (tests shorten it; the manager uses [`crate::tls::KEEP_ALIVE_IDLE_TIMEOUT`]).
/// hyper counts the idle time and the time to send a request's headers as one timeout, so
/// the webhook server gives both 90 seconds (the metrics server keeps 32 seconds).
pub async fn serve_listener_with(
    listener: TcpListener,
    certs: Certificates,
    webhooks: Webhooks,
    shutdown: CancellationToken,
    idle_timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let routes = webhooks.routes()?;
    crate::tls::serve_with(
        listener,
        Some(Arc::new(certs)),
        routes,
        shutdown,
        "webhook server",
        idle_timeout,
    )
    .await
}
