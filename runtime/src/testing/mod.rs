// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! A Kubernetes API for a project's controller and webhook tests (docs/testing.md): what
//! envtest and controller-runtime's fake client give Go operators, for kube-rs.
//!
//! [`TestCluster::start`] gives a `kube::Client` on one of three clusters, chosen by the
//! `RSBUILDER_TEST_CLUSTER` environment variable ([`Mode`]):
//!
//! - `in-process` (the default): the runtime's API server machinery
//!   ([`crate::apiserver`]) in the test's own process, reached through a tower service, no
//!   socket. It serves the project's CRDs (`config/crd/bases`), the built-in kinds
//!   operators touch ([`builtin`]), namespaces, the garbage collector's effect on
//!   `ownerReferences`, and the project's webhooks in the admission chain; a test can act
//!   as a kubelet or controller-manager ([`TestCluster::make_pod_ready`], ...), inject
//!   errors ([`Fault`]) and move the clock ([`TestCluster::advance`]).
//! - `envtest`: a real kube-apiserver and etcd from `KUBEBUILDER_ASSETS` (as setup-envtest
//!   installs them), started as controller-runtime's envtest starts them ([`envtest`]).
//! - `kubeconfig`: the cluster of the current kubeconfig context.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use rsbuilder_runtime::testing::TestCluster;
//! let cluster = TestCluster::start().await?;
//! let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
//!     kube::Api::namespaced(cluster.client(), "default");
//! # Ok(()) }
//! ```

pub mod builtin;
mod builtin_merge;
mod conversion;
pub mod crds;
pub mod envtest;
mod faults;
mod front;
mod gc;
mod knobs;
mod loopback;
pub mod wait;
mod webhooks;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use tokio_util::sync::CancellationToken;

pub use faults::{Fault, Verb};
pub use loopback::Loopback;

use crate::apiserver::admission::Hook;
use crate::apiserver::clock::Clock;
use crate::apiserver::kind::ApiKind;
use crate::apiserver::registry::Registry;
use crate::apiserver::server::{ApiServer, Config};
use crate::apiserver::status::Subject;
use crate::apiserver::storage::RedbStore;
use crate::webhook::Webhooks;

/// The environment variable that picks the cluster: `in-process` (default), `envtest` or
/// `kubeconfig`.
pub const MODE_VAR: &str = "RSBUILDER_TEST_CLUSTER";

/// Where the CRDs are read from by default, relative to the package (the directory
/// `cargo test` runs a test in).
pub const CRD_DIR: &str = "config/crd/bases";

/// Where the webhook configurations are read from by default.
pub const WEBHOOK_MANIFESTS: &str = "config/webhook/manifests.yaml";

/// Which cluster a [`TestCluster`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The runtime's API machinery in the test's process.
    InProcess,
    /// kube-apiserver and etcd started from `KUBEBUILDER_ASSETS`.
    Envtest,
    /// The cluster of the current kubeconfig context (`KUBECONFIG`).
    Kubeconfig,
}

impl Mode {
    /// The mode [`MODE_VAR`] names (unset or empty: in-process). Errors: another value.
    pub fn from_env() -> anyhow::Result<Self> {
        match std::env::var(MODE_VAR).unwrap_or_default().as_str() {
            "" | "in-process" => Ok(Self::InProcess),
            "envtest" => Ok(Self::Envtest),
            "kubeconfig" => Ok(Self::Kubeconfig),
            other => {
                anyhow::bail!("{MODE_VAR}={other:?}: expected in-process, envtest or kubeconfig")
            }
        }
    }
}

/// How to start a [`TestCluster`]: which CRDs, which webhooks.
#[derive(Default)]
pub struct Builder {
    crd_dirs: Vec<PathBuf>,
    crds: Vec<CustomResourceDefinition>,
    webhooks: Option<Webhooks>,
    webhook_manifests: Option<PathBuf>,
    mode: Option<Mode>,
}

impl Builder {
    /// Reads CRDs from `dir` (instead of [`CRD_DIR`]; call again for more directories).
    pub fn crd_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crd_dirs.push(dir.into());
        self
    }

    /// Serves `crd` too (for example `MyKind::crd()`).
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// Calls the project's `webhooks` as the webhook configurations in [`WEBHOOK_MANIFESTS`]
    /// (or [`Builder::webhook_manifests`]) say: defaulting and validation in the admission
    /// chain, conversion between the versions of a CRD whose strategy is `Webhook`.
    /// [`Builder::start`] fails when a defaulting or validating webhook is registered at a path
    /// that no configuration names (the file not generated yet, or a marker's `path` that
    /// differs from the registered one): the API server would never call it.
    pub fn webhooks(mut self, webhooks: Webhooks) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// Reads the webhook configurations from `path` instead of [`WEBHOOK_MANIFESTS`].
    pub fn webhook_manifests(mut self, path: impl Into<PathBuf>) -> Self {
        self.webhook_manifests = Some(path.into());
        self
    }

    /// Runs on `mode` whatever [`MODE_VAR`] says (a test that needs the in-process knobs).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The CRDs given, and those of the directories (or of [`CRD_DIR`] when it exists and no
    /// directory was given). Errors: as [`crds::read_dir`].
    fn all_crds(&self) -> anyhow::Result<Vec<CustomResourceDefinition>> {
        let mut out = self.crds.clone();
        if self.crd_dirs.is_empty() {
            if Path::new(CRD_DIR).is_dir() {
                out.extend(crds::read_dir(Path::new(CRD_DIR))?);
            }
        } else {
            for dir in &self.crd_dirs {
                out.extend(crds::read_dir(dir)?);
            }
        }
        Ok(out)
    }

    /// Starts the cluster. Errors: [`MODE_VAR`] has an unknown value; a CRD or the webhook
    /// configuration cannot be read; the webhooks do not build ([`Webhooks::routes`]);
    /// envtest's binaries do not start; no kubeconfig.
    pub async fn start(self) -> anyhow::Result<TestCluster> {
        let mode = match self.mode {
            Some(m) => m,
            None => Mode::from_env()?,
        };
        let crds = self.all_crds()?;
        match mode {
            Mode::InProcess => self.start_in_process(crds).await,
            Mode::Envtest | Mode::Kubeconfig => {
                if self.webhooks.is_some() {
                    anyhow::bail!(
                        "the project's webhooks are called only by the in-process cluster; on {mode:?}, run the webhook server and register it yourself, or test webhooks in-process"
                    );
                }
                let (client, control_plane) = match mode {
                    Mode::Envtest => {
                        let plane = envtest::ControlPlane::start_from_env().await?;
                        (plane.client().await?, Some(plane))
                    }
                    _ => (
                        kube::Client::try_default()
                            .await
                            .context("connecting with the current kubeconfig")?,
                        None,
                    ),
                };
                envtest::install_crds(&client, &crds).await?;
                Ok(TestCluster {
                    client,
                    mode,
                    front: None,
                    _control_plane: control_plane,
                    shutdown: CancellationToken::new(),
                })
            }
        }
    }

    async fn start_in_process(
        self,
        crds: Vec<CustomResourceDefinition>,
    ) -> anyhow::Result<TestCluster> {
        let manifests = self
            .webhook_manifests
            .unwrap_or_else(|| PathBuf::from(WEBHOOK_MANIFESTS));
        let (routes, configs) = match self.webhooks {
            Some(w) => {
                let configs = webhooks::read_configs(&manifests)?;
                webhooks::check_registered(&w, &configs, &manifests)?;
                (Some(w.routes()?), configs)
            }
            None => (None, Vec::new()),
        };
        let conversions = conversion::Conversions::new(&crds, routes.as_ref())?;
        let routes = routes.unwrap_or_default();
        let mut kinds = Vec::new();
        for b in builtin::all() {
            let mut kind = b.kind;
            if let Some(chain) = webhooks::Chain::of(&kind, Some(b.decode), &configs, &routes) {
                kind.admission = Some(Hook(Arc::new(chain)));
            }
            kinds.push(kind);
        }
        for crd in &crds {
            for mut kind in crds::kinds(crd)? {
                if kinds.iter().any(|k: &ApiKind| {
                    k.group == kind.group && k.plural == kind.plural && k.version == kind.version
                }) {
                    anyhow::bail!("{} {} is served twice", kind.qualified(), kind.version);
                }
                if let Some(chain) = webhooks::Chain::of(&kind, None, &configs, &routes) {
                    kind.admission = Some(Hook(Arc::new(chain)));
                }
                kinds.push(kind);
            }
        }
        let store =
            RedbStore::in_memory().map_err(|e| anyhow::anyhow!("the in-memory store: {e}"))?;
        let clock = Clock::manual(jiff::Timestamp::now());
        let mut config = Config::new(kinds.clone());
        config.clock = clock.clone();
        config.version = "v1.37.0".into();
        let shutdown = CancellationToken::new();
        let server = ApiServer::new(config, store.clone(), shutdown.clone());
        let front = Arc::new(front::Front {
            router: server.router(),
            registry: Registry::with_clock(store, clock),
            kinds,
            faults: Default::default(),
            conversions,
            gc: Default::default(),
        });
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            front::create_namespace(&front, ns).await?;
        }
        let service = tower::service_fn({
            let front = front.clone();
            move |request: http::Request<kube::client::Body>| {
                let front = front.clone();
                async move {
                    use http_body_util::BodyExt as _;
                    let (parts, body) = request.into_parts();
                    let bytes = match body.collect().await {
                        Ok(b) => b.to_bytes(),
                        Err(e) => {
                            return Ok::<_, Infallible>(
                                http::Response::builder()
                                    .status(400)
                                    .body(axum::body::Body::from(format!(
                                        "reading the request body: {e}"
                                    )))
                                    .expect("a valid response"),
                            );
                        }
                    };
                    Ok(front.handle(http::Request::from_parts(parts, bytes)).await)
                }
            }
        });
        Ok(TestCluster {
            client: kube::Client::new(service, "default"),
            mode: Mode::InProcess,
            front: Some(front),
            _control_plane: None,
            shutdown,
        })
    }
}

/// A Kubernetes API for a test: in-process, envtest, or a real cluster ([`Mode`]). Dropping
/// it stops what it started (the in-process server's watches, envtest's processes).
pub struct TestCluster {
    client: kube::Client,
    mode: Mode,
    front: Option<Arc<front::Front>>,
    _control_plane: Option<envtest::ControlPlane>,
    shutdown: CancellationToken,
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl TestCluster {
    /// Starts the cluster [`MODE_VAR`] picks, with the CRDs of [`CRD_DIR`]. Errors: as
    /// [`Builder::start`].
    pub async fn start() -> anyhow::Result<Self> {
        Self::builder().start().await
    }

    /// A builder: CRDs from elsewhere, the project's webhooks.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A client of the cluster (default namespace `default`).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A manager handle over [`TestCluster::client`], for [`crate::controller::run`].
    pub fn manager(&self) -> crate::Manager {
        crate::Manager::for_tests(self.client())
    }

    /// The cluster this runs on.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    fn in_process(&self, what: &str) -> anyhow::Result<&Arc<front::Front>> {
        self.front.as_ref().with_context(|| {
            format!(
                "{what} needs the in-process cluster; this test runs on {:?}",
                self.mode
            )
        })
    }

    /// Makes requests fail as `fault` says. Errors: not the in-process cluster.
    pub fn inject(&self, fault: Fault) -> anyhow::Result<()> {
        self.in_process("injecting a fault")?.faults.add(fault);
        Ok(())
    }

    /// Moves the cluster's clock forward by `by`: later `creationTimestamp`s and
    /// `deletionTimestamp`s are stamped from it. Clients keep their own clocks (a Lease
    /// holder judges expiry by its own time). Errors: not the in-process cluster.
    pub fn advance(&self, by: Duration) -> anyhow::Result<()> {
        self.in_process("advancing the clock")?
            .registry
            .clock()
            .advance(by)
            .map_err(anyhow::Error::msg)
    }

    /// The cluster's current time (in-process: its manual clock; elsewhere: the system's).
    pub fn now(&self) -> jiff::Timestamp {
        match &self.front {
            Some(f) => f.registry.clock().now(),
            None => jiff::Timestamp::now(),
        }
    }

    /// Serves the in-process cluster on a loopback port too, and writes a kubeconfig for it,
    /// so `kubectl --kubeconfig <path> get pods` can look while a test runs (plain HTTP, no
    /// authentication: only for debugging). Errors: not the in-process cluster; the port or
    /// the file cannot be had.
    pub async fn serve_loopback(&self) -> anyhow::Result<Loopback> {
        let front = self.in_process("serving on loopback")?.clone();
        loopback::serve(front, self.shutdown.clone()).await
    }
}
