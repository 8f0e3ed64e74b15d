// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The command line of an API server binary (`src/bin/apiserver.rs`), parsed with clap, and
//! [`ApiServerArgs::run`], which opens the store it names, the certificate, the delegated
//! authentication, and serves until SIGTERM, so that the binary only lists its kinds.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use super::auth::Delegated;
use super::kind::ApiKind;
use super::limits::Limits;
use super::server::{ApiServer, Config};
use super::storage::{RedbStore, Storage};
use crate::tls;

/// clap's trait, for `ApiServerArgs::parse()` in a binary that does not depend on clap.
pub use clap::Parser;

/// Where priority and fairness takes its configuration from (`--flowcontrol-source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FlowControlSource {
    /// The `--flowcontrol-config` file, or the built-in configuration; read once at start.
    Local,
    /// The cluster's FlowSchemas and PriorityLevelConfigurations, watched
    /// ([`super::flowcontrol::cluster`]).
    Cluster,
}

/// The flags of the API server. Defaults are kube-apiserver's where it has the flag.
#[derive(Debug, Clone, PartialEq, clap::Parser)]
#[command(about = "The aggregated API server of this project")]
pub struct ApiServerArgs {
    /// HTTPS address to serve on.
    #[arg(long, default_value = "[::]:8443")]
    pub bind_address: SocketAddr,
    /// The redb file that holds the objects (created when missing); not used with
    /// --etcd-servers.
    #[arg(long, default_value = "/var/lib/apiserver/store.redb")]
    pub store_path: PathBuf,
    /// Store the objects in etcd at these URLs (comma-separated, `http://127.0.0.1:2379`)
    /// instead of redb. Needs the runtime's `etcd` feature: build with
    /// `--features rsbuilder-runtime/etcd`.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// The key prefix of every object in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// A directory with `tls.crt` and `tls.key` to serve, reloaded on change (default: a
    /// self-signed certificate, for local runs).
    #[arg(long)]
    pub cert_dir: Option<PathBuf>,
    /// Authenticate every caller as k8s.io/apiserver's delegated authentication does
    /// (front-proxy certificate, client certificates, TokenReview) and authorize through a
    /// SubjectAccessReview; needs a cluster. Without it every request is answered: for local
    /// runs only.
    #[arg(long)]
    pub delegated_auth: bool,
    /// API priority and fairness (FlowSchemas, priority levels, fair queues), as
    /// kube-apiserver's flag of this name; `false` runs the max-in-flight pools instead.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// A YAML file of FlowSchema and PriorityLevelConfiguration objects
    /// (flowcontrol.apiserver.k8s.io/v1) to use instead of the built-in configuration (kube's
    /// bootstrap one, reduced); `exempt` and `catch-all` are added when missing.
    #[arg(long)]
    pub flowcontrol_config: Option<PathBuf>,
    /// Where the FlowSchemas and PriorityLevelConfigurations come from: `local` (the
    /// --flowcontrol-config file, or the built-in configuration) or `cluster` (the cluster's
    /// objects, listed and watched, as kube's aggregated servers read them; needs
    /// --delegated-auth and RBAC to get, list and watch them). With `cluster`, the local
    /// configuration runs until the cluster's objects are read.
    #[arg(long, value_enum, default_value_t = FlowControlSource::Local)]
    pub flowcontrol_source: FlowControlSource,
    /// Read-only requests in flight at once; with priority and fairness, this plus
    /// --max-mutating-requests-inflight is the server's seats, split between the priority
    /// levels. Without it, over it is 429 (0: no limit).
    #[arg(long, default_value_t = Limits::default().max_requests_inflight)]
    pub max_requests_inflight: usize,
    /// Mutating requests in flight at once (see --max-requests-inflight).
    #[arg(long, default_value_t = Limits::default().max_mutating_requests_inflight)]
    pub max_mutating_requests_inflight: usize,
    /// Watches open at once (0: no limit); over it, 429. Only with
    /// --enable-priority-and-fairness=false.
    #[arg(long)]
    pub max_watches_inflight: Option<usize>,
    /// The share of each limit, in percent, one authenticated user may hold (default 50).
    /// Only with --enable-priority-and-fairness=false (flows share fairly otherwise).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub max_user_share_percent: Option<u8>,
    /// Longest a non-watch request may run, in seconds (504 after it).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_seconds: u64,
    /// Largest request body accepted, in bytes (413 above it).
    #[arg(long, default_value_t = 3 * 1024 * 1024)]
    pub max_request_body_bytes: usize,
    /// The slowest a request body may arrive, in bytes per second (0: no floor): a body
    /// must be in within --request-body-grace-seconds plus one second per this many bytes
    /// received, else 408. This server's own limit (kube-apiserver has none).
    #[arg(long, default_value_t = super::server::DEFAULT_BODY_MIN_BYTES_PER_SECOND)]
    pub request_body_min_bytes_per_second: u64,
    /// The seconds every request body gets before --request-body-min-bytes-per-second counts.
    #[arg(long, default_value_t = super::server::DEFAULT_BODY_READ_GRACE.as_secs())]
    pub request_body_grace_seconds: u64,
    /// How often the store's history is compacted, in seconds (0: never), as
    /// kube-apiserver's `--etcd-compaction-interval` (5 minutes): continue tokens and lists or
    /// watches at a past resourceVersion stay valid at least this long.
    #[arg(long, default_value_t = super::storage::DEFAULT_COMPACTION_INTERVAL.as_secs())]
    pub compaction_interval_seconds: u64,
}

impl ApiServerArgs {
    /// The server's configuration for `kinds` with these flags' limits (authentication is
    /// set by [`Self::run`]). Errors, naming the flag: `--flowcontrol-config` cannot be read
    /// or holds an invalid object (named with its field), or is given with priority and
    /// fairness off; `--flowcontrol-source=cluster` without `--delegated-auth` or with
    /// priority and fairness off; `--max-watches-inflight` or `--max-user-share-percent` given with it on;
    /// no seats at all (both max-in-flight flags 0) with it on.
    pub fn config(&self, kinds: Vec<ApiKind>) -> anyhow::Result<Config> {
        let mut config = Config::new(kinds);
        let defaults = Limits::default();
        config.limits = Limits {
            max_requests_inflight: self.max_requests_inflight,
            max_mutating_requests_inflight: self.max_mutating_requests_inflight,
            max_watches_inflight: self
                .max_watches_inflight
                .unwrap_or(defaults.max_watches_inflight),
            user_share_percent: self
                .max_user_share_percent
                .unwrap_or(defaults.user_share_percent),
        };
        config.request_timeout = Duration::from_secs(self.request_timeout_seconds);
        config.max_body_bytes = self.max_request_body_bytes;
        config.body_min_bytes_per_second = self.request_body_min_bytes_per_second;
        config.body_read_grace = Duration::from_secs(self.request_body_grace_seconds);
        if self.flowcontrol_source == FlowControlSource::Cluster {
            if !self.enable_priority_and_fairness {
                anyhow::bail!(
                    "--flowcontrol-source=cluster: needs --enable-priority-and-fairness=true"
                );
            }
            if !self.delegated_auth {
                anyhow::bail!(
                    "--flowcontrol-source=cluster: needs --delegated-auth (the server reaches the cluster through it)"
                );
            }
        }
        if !self.enable_priority_and_fairness {
            if let Some(path) = &self.flowcontrol_config {
                anyhow::bail!(
                    "--flowcontrol-config {}: needs --enable-priority-and-fairness=true",
                    path.display()
                );
            }
            config.flowcontrol = None;
            return Ok(config);
        }
        for (given, flag) in [
            (
                self.max_watches_inflight.is_some(),
                "--max-watches-inflight",
            ),
            (
                self.max_user_share_percent.is_some(),
                "--max-user-share-percent",
            ),
        ] {
            if given {
                anyhow::bail!(
                    "{flag}: applies to the max-in-flight limits only; priority and fairness replaces them (give --enable-priority-and-fairness=false to use it)"
                );
            }
        }
        if self.max_requests_inflight + self.max_mutating_requests_inflight == 0 {
            anyhow::bail!(
                "--max-requests-inflight, --max-mutating-requests-inflight: with priority and fairness their sum is the server's seats and must be positive"
            );
        }
        if let Some(path) = &self.flowcontrol_config {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--flowcontrol-config {}", path.display()))?;
            let fc = super::flowcontrol::Configuration::from_yaml(&text)
                .map_err(|e| anyhow::anyhow!("--flowcontrol-config {}: {e}", path.display()))?;
            config.flowcontrol = Some(fc);
        }
        Ok(config)
    }

    /// Serves `kinds` (and the `extra` routes, guarded as the API) as these flags say until
    /// SIGTERM or Ctrl-C, then shuts down gracefully. Errors, each naming its flag: the store
    /// cannot be opened (`--store-path`, `--etcd-servers`, the latter also when the `etcd`
    /// feature is off), the certificate cannot be read (`--cert-dir`), the address cannot be
    /// bound (`--bind-address`), the cluster cannot be reached (`--delegated-auth`).
    pub async fn run(self, kinds: Vec<ApiKind>, extra: axum::Router) -> anyhow::Result<()> {
        // The flags that need no I/O but a file are checked before anything is opened.
        self.config(vec![])?;
        if !self.etcd_servers.is_empty() {
            #[cfg(feature = "etcd")]
            {
                let store =
                    super::etcd::EtcdStorage::connect(&self.etcd_servers, &self.etcd_prefix)
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!("--etcd-servers {}: {e}", self.etcd_servers.join(","))
                        })?;
                return self.serve(kinds, extra, store).await;
            }
            #[cfg(not(feature = "etcd"))]
            anyhow::bail!(
                "--etcd-servers: this binary is built without etcd support; build it with `--features rsbuilder-runtime/etcd`"
            );
        }
        if let Some(parent) = self
            .store_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("--store-path: creating {}", parent.display()))?;
        }
        let store = RedbStore::open(&self.store_path).map_err(|e| {
            anyhow::anyhow!(
                "--store-path {}: opening the store: {e}",
                self.store_path.display()
            )
        })?;
        self.serve(kinds, extra, store).await
    }

    async fn serve<S: Storage + Clone>(
        &self,
        kinds: Vec<ApiKind>,
        extra: axum::Router,
        store: S,
    ) -> anyhow::Result<()> {
        let certs = match &self.cert_dir {
            Some(dir) => tls::Certificates::from_dir(dir)
                .with_context(|| format!("--cert-dir {}", dir.display()))?,
            None => tls::Certificates::self_signed(&["localhost", "127.0.0.1"])?,
        };
        let shutdown = CancellationToken::new();
        tokio::spawn(signals(shutdown.clone()));
        if self.compaction_interval_seconds > 0 {
            tokio::spawn(super::storage::compact_periodically(
                store.clone(),
                Duration::from_secs(self.compaction_interval_seconds),
                shutdown.clone(),
            ));
        }
        let listener = tls::bind(self.bind_address)
            .await
            .with_context(|| format!("--bind-address {}", self.bind_address))?;
        tracing::info!(address = %listener.local_addr()?, "serving the API");
        let mut config = self.config(kinds)?;
        let mut cluster = None;
        if self.delegated_auth {
            let client = kube::Client::try_default()
                .await
                .context("--delegated-auth: connecting to the cluster")?;
            cluster = Some(client.clone());
            let auth = Delegated::from_cluster(client).await.context(
                "--delegated-auth: reading kube-system/extension-apiserver-authentication",
            )?;
            // Picks up a rotation of the cluster's client and front-proxy CAs.
            auth.spawn_refresh(Duration::from_secs(60), shutdown.clone());
            config.auth = Some(auth);
        }
        let server = ApiServer::new(config, store, shutdown.clone());
        if self.flowcontrol_source == FlowControlSource::Cluster
            && let (Some(client), Some(fc)) = (cluster, server.flow_control())
        {
            tokio::spawn(super::flowcontrol::cluster::run(
                client,
                fc.clone(),
                shutdown,
            ));
        }
        server.serve(listener, Arc::new(certs), extra).await
    }
}

/// Ends `shutdown` on SIGTERM (what the kubelet sends) or Ctrl-C.
async fn signals(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            shutdown.cancel();
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_servers_and_every_flag_parses() {
        let args = ApiServerArgs::try_parse_from(["apiserver"]).unwrap();
        assert_eq!(args.bind_address, "[::]:8443".parse().unwrap());
        assert_eq!(
            args.store_path,
            PathBuf::from("/var/lib/apiserver/store.redb")
        );
        assert!(args.etcd_servers.is_empty() && args.cert_dir.is_none() && !args.delegated_auth);
        let config = args.config(vec![]).unwrap();
        assert_eq!(config.limits, Limits::default());
        assert_eq!(
            config.flowcontrol,
            Some(crate::apiserver::flowcontrol::Configuration::bootstrap())
        );
        assert_eq!(config.request_timeout, Duration::from_secs(60));
        assert_eq!(config.max_body_bytes, 3 * 1024 * 1024);
        assert_eq!(
            (config.body_min_bytes_per_second, config.body_read_grace),
            (1024, Duration::from_secs(10))
        );
        assert_eq!(args.compaction_interval_seconds, 300);

        let args = ApiServerArgs::try_parse_from([
            "apiserver",
            "--bind-address=127.0.0.1:9443",
            "--store-path",
            "/tmp/s.redb",
            "--etcd-servers=http://a:2379,http://b:2379",
            "--cert-dir",
            "/certs",
            "--delegated-auth",
            "--enable-priority-and-fairness=false",
            "--max-requests-inflight=10",
            "--max-mutating-requests-inflight=5",
            "--max-watches-inflight=7",
            "--max-user-share-percent=25",
            "--request-timeout-seconds=9",
            "--max-request-body-bytes=1000",
            "--request-body-min-bytes-per-second=0",
            "--request-body-grace-seconds=3",
        ])
        .unwrap();
        assert_eq!(args.etcd_servers, ["http://a:2379", "http://b:2379"]);
        assert_eq!(args.cert_dir, Some(PathBuf::from("/certs")));
        assert!(args.delegated_auth);
        let config = args.config(vec![]).unwrap();
        assert!(config.flowcontrol.is_none());
        assert_eq!(
            config.limits,
            Limits {
                max_requests_inflight: 10,
                max_mutating_requests_inflight: 5,
                max_watches_inflight: 7,
                user_share_percent: 25,
            }
        );
        assert_eq!(config.request_timeout, Duration::from_secs(9));
        assert_eq!(config.max_body_bytes, 1000);
        assert_eq!(
            (config.body_min_bytes_per_second, config.body_read_grace),
            (0, Duration::from_secs(3))
        );
    }

    #[test]
    fn bad_flags_are_refused_naming_the_flag() {
        for (flag, named) in [
            ("--bind-address=nowhere", "--bind-address"),
            ("--max-user-share-percent=0", "--max-user-share-percent"),
            ("--max-user-share-percent=101", "--max-user-share-percent"),
            ("--request-timeout-seconds=0", "--request-timeout-seconds"),
            ("--max-requests-inflight=-1", "--max-requests-inflight"),
            (
                "--request-body-min-bytes-per-second=x",
                "--request-body-min-bytes-per-second",
            ),
            ("--no-such-flag", "--no-such-flag"),
        ] {
            let err = ApiServerArgs::try_parse_from(["apiserver", flag])
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{flag}: {err}");
        }
    }

    #[test]
    fn flow_control_flags_are_checked_naming_the_flag_and_the_object() {
        let err = |flags: &[&str]| {
            let mut argv = vec!["apiserver"];
            argv.extend(flags);
            ApiServerArgs::try_parse_from(argv)
                .unwrap()
                .config(vec![])
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(&["--max-user-share-percent=20"])
                .starts_with("--max-user-share-percent: applies to the max-in-flight limits only")
        );
        assert!(err(&["--max-watches-inflight=3"]).starts_with("--max-watches-inflight: "));
        assert!(
            err(&[
                "--enable-priority-and-fairness=false",
                "--flowcontrol-config=/x.yaml"
            ])
            .contains("needs --enable-priority-and-fairness=true")
        );
        assert!(
            err(&[
                "--max-requests-inflight=0",
                "--max-mutating-requests-inflight=0"
            ])
            .contains("must be positive")
        );
        assert_eq!(
            err(&["--flowcontrol-source=cluster"]),
            "--flowcontrol-source=cluster: needs --delegated-auth (the server reaches the cluster through it)"
        );
        assert_eq!(
            err(&[
                "--flowcontrol-source=cluster",
                "--delegated-auth",
                "--enable-priority-and-fairness=false"
            ]),
            "--flowcontrol-source=cluster: needs --enable-priority-and-fairness=true"
        );
        let cluster = ApiServerArgs::try_parse_from([
            "apiserver",
            "--flowcontrol-source=cluster",
            "--delegated-auth",
        ])
        .unwrap();
        assert_eq!(cluster.flowcontrol_source, FlowControlSource::Cluster);
        assert!(cluster.config(vec![]).unwrap().flowcontrol.is_some());
        assert_eq!(
            ApiServerArgs::try_parse_from(["apiserver"])
                .unwrap()
                .flowcontrol_source,
            FlowControlSource::Local
        );
        assert!(
            ApiServerArgs::try_parse_from(["apiserver", "--flowcontrol-source=etcd"])
                .unwrap_err()
                .to_string()
                .contains("--flowcontrol-source")
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fc.yaml");
        std::fs::write(
            &file,
            "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: mine}\nspec: {matchingPrecedence: 20000, priorityLevelConfiguration: {name: catch-all}}\n",
        )
        .unwrap();
        let flag = format!("--flowcontrol-config={}", file.display());
        assert_eq!(
            err(&[&flag]),
            format!(
                "--flowcontrol-config {}: FlowSchema \"mine\": spec.matchingPrecedence: must be between 1 and 10000, got 20000",
                file.display()
            )
        );
        std::fs::write(
            &file,
            "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: mine}\nspec: {matchingPrecedence: 20, priorityLevelConfiguration: {name: catch-all}, rules: [{subjects: [{kind: Group, group: {name: g}}], nonResourceRules: [{verbs: [get], nonResourceURLs: [/x]}]}]}\n",
        )
        .unwrap();
        let config = ApiServerArgs::try_parse_from(["apiserver", &flag])
            .unwrap()
            .config(vec![])
            .unwrap();
        let names: Vec<String> = config
            .flowcontrol
            .unwrap()
            .schemas()
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(names, ["exempt", "mine", "catch-all"]);
    }

    #[cfg(not(feature = "etcd"))]
    #[tokio::test]
    async fn etcd_servers_without_the_feature_is_an_error_naming_it() {
        let args =
            ApiServerArgs::try_parse_from(["apiserver", "--etcd-servers=http://127.0.0.1:1"])
                .unwrap();
        let err = args.run(vec![], axum::Router::new()).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("--features rsbuilder-runtime/etcd"),
            "{err}"
        );
    }
}
