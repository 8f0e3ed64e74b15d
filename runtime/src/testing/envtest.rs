// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The envtest path: a real kube-apiserver and etcd, started from the binaries
//! `KUBEBUILDER_ASSETS` points at (as `setup-envtest use -p path` prints it), with the flags
//! controller-runtime's envtest gives them (`pkg/internal/testing/controlplane`): etcd on
//! loopback ports with its data in a fresh directory; kube-apiserver on a free secure port
//! with a serving certificate of its own CA, a client-certificate CA, a service-account
//! signing key, RBAC authorization, the `ServiceAccount` admission plugin off, and a client
//! certificate for a `system:masters` user. Like envtest, it runs no controller-manager and
//! no kubelet: no garbage collection, no Pods running.
//!
//! Also here: installing the project's CRDs on such a cluster (or on the kubeconfig's), as
//! envtest's `CRDDirectoryPaths` does, waiting until each is `Established`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::PostParams;

/// The environment variable naming the directory with `etcd` and `kube-apiserver`.
pub const ASSETS_VAR: &str = "KUBEBUILDER_ASSETS";

/// How long the control plane may take to answer (envtest's default start timeout is 20 s;
/// a loaded 2-core machine needs more).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The flags etcd is started with: data in `data_dir`, clients on `client_port`, peers on
/// `peer_port`, all on 127.0.0.1, without fsync (a test's data need not survive a crash).
pub fn etcd_args(data_dir: &Path, client_port: u16, peer_port: u16) -> Vec<String> {
    let client = format!("http://127.0.0.1:{client_port}");
    vec![
        format!("--data-dir={}", data_dir.display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
        "--unsafe-no-fsync=true".into(),
    ]
}

/// The flags kube-apiserver is started with: envtest's defaults for a server whose
/// certificates are in `cert_dir` (see [`ControlPlane::start`] for the files), with etcd at
/// `etcd_url`, serving on 127.0.0.1:`secure_port`.
pub fn apiserver_args(cert_dir: &Path, etcd_url: &str, secure_port: u16) -> Vec<String> {
    let file = |name: &str| cert_dir.join(name).display().to_string();
    vec![
        "--advertise-address=127.0.0.1".into(),
        format!("--etcd-servers={etcd_url}"),
        format!("--cert-dir={}", cert_dir.display()),
        format!("--secure-port={secure_port}"),
        "--bind-address=127.0.0.1".into(),
        "--service-cluster-ip-range=10.0.0.0/24".into(),
        "--allow-privileged=true".into(),
        "--disable-admission-plugins=ServiceAccount".into(),
        "--authorization-mode=RBAC".into(),
        format!("--client-ca-file={}", file("client-cert-auth-ca.crt")),
        format!("--service-account-issuer=https://127.0.0.1:{secure_port}/"),
        format!("--service-account-key-file={}", file("sa-signer.crt")),
        format!(
            "--service-account-signing-key-file={}",
            file("sa-signer.key")
        ),
    ]
}

/// A free loopback port (bound and released: another process may take it first, as with
/// envtest's own port suggestion).
fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A running etcd and kube-apiserver; dropping it kills both and removes their directory.
pub struct ControlPlane {
    dir: PathBuf,
    etcd: Child,
    apiserver: Child,
    kubeconfig: PathBuf,
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        for child in [&mut self.apiserver, &mut self.etcd] {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The certificates envtest writes, PEM: the server's, the client CA, the service-account
/// key, and the admin client's certificate and key.
struct Certs {
    ca: String,
    serving_cert: String,
    serving_key: String,
    sa_cert: String,
    sa_key: String,
    client_cert: String,
    client_key: String,
}

fn certs() -> anyhow::Result<Certs> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "rsbuilder-envtest-ca");
    let ca = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let serving_key = rcgen::KeyPair::generate()?;
    let mut serving = rcgen::CertificateParams::new(vec!["localhost".to_string()])?;
    serving
        .subject_alt_names
        .push(rcgen::SanType::IpAddress("127.0.0.1".parse()?));
    let serving_cert = serving.signed_by(&serving_key, &issuer)?;
    let client_key = rcgen::KeyPair::generate()?;
    let mut client = rcgen::CertificateParams::new(Vec::<String>::new())?;
    client
        .distinguished_name
        .push(rcgen::DnType::CommonName, "envtest-admin");
    client
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    client.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client.signed_by(&client_key, &issuer)?;
    let sa_key = rcgen::KeyPair::generate()?;
    let sa_cert =
        rcgen::CertificateParams::new(vec!["sa-signer".to_string()])?.self_signed(&sa_key)?;
    Ok(Certs {
        ca: ca.pem(),
        serving_cert: serving_cert.pem(),
        serving_key: serving_key.serialize_pem(),
        sa_cert: sa_cert.pem(),
        sa_key: sa_key.serialize_pem(),
        client_cert: client_cert.pem(),
        client_key: client_key.serialize_pem(),
    })
}

fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// Starts `binary` with `args`, its output in `log`. Errors: it cannot be started.
fn spawn(binary: &Path, args: &[String], log: &Path) -> anyhow::Result<Child> {
    let out = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))
}

/// The last lines of a log, for an error.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

impl ControlPlane {
    /// Starts the binaries of the directory [`ASSETS_VAR`] names. Errors: it is unset, or as
    /// [`ControlPlane::start`].
    pub async fn start_from_env() -> anyhow::Result<Self> {
        let assets = std::env::var_os(ASSETS_VAR).with_context(|| {
            format!("{ASSETS_VAR} is not set: point it at the directory of etcd and kube-apiserver (`setup-envtest use -p path`)")
        })?;
        Self::start(Path::new(&assets)).await
    }

    /// Starts `etcd` and `kube-apiserver` of `assets` (flags: [`etcd_args`],
    /// [`apiserver_args`]) in a new directory holding their data, certificates, logs and a
    /// kubeconfig of a `system:masters` client, and waits until the API answers. Errors: a
    /// binary is missing or does not start; the API does not answer within a minute (the
    /// error ends with the server's log).
    pub async fn start(assets: &Path) -> anyhow::Result<Self> {
        let etcd_bin = assets.join("etcd");
        let apiserver_bin = assets.join("kube-apiserver");
        for bin in [&etcd_bin, &apiserver_bin] {
            if !bin.is_file() {
                bail!(
                    "{} does not exist ({ASSETS_VAR}={})",
                    bin.display(),
                    assets.display()
                );
            }
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("rsbuilder-envtest-{}-{nanos}", std::process::id()));
        let cert_dir = dir.join("certs");
        std::fs::create_dir_all(&cert_dir)
            .with_context(|| format!("creating {}", cert_dir.display()))?;
        let certs = certs()?;
        for (name, text) in [
            ("apiserver.crt", &certs.serving_cert),
            ("apiserver.key", &certs.serving_key),
            ("client-cert-auth-ca.crt", &certs.ca),
            ("sa-signer.crt", &certs.sa_cert),
            ("sa-signer.key", &certs.sa_key),
        ] {
            std::fs::write(cert_dir.join(name), text)?;
        }
        let (client_port, peer_port, secure_port) = (free_port()?, free_port()?, free_port()?);
        let etcd = spawn(
            &etcd_bin,
            &etcd_args(&dir.join("etcd"), client_port, peer_port),
            &dir.join("etcd.log"),
        )?;
        let etcd_url = format!("http://127.0.0.1:{client_port}");
        let apiserver_log = dir.join("kube-apiserver.log");
        let apiserver = match spawn(
            &apiserver_bin,
            &apiserver_args(&cert_dir, &etcd_url, secure_port),
            &apiserver_log,
        ) {
            Ok(child) => child,
            Err(e) => {
                let mut etcd = etcd;
                let _ = etcd.kill();
                let _ = etcd.wait();
                return Err(e);
            }
        };
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: https://127.0.0.1:{secure_port}\n    certificate-authority-data: {}\ncontexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest-admin\n    namespace: default\ncurrent-context: envtest\nusers:\n- name: envtest-admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
                base64(&certs.ca),
                base64(&certs.client_cert),
                base64(&certs.client_key)
            ),
        )?;
        let mut plane = Self {
            dir,
            etcd,
            apiserver,
            kubeconfig,
        };
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = plane.apiserver.try_wait() {
                bail!(
                    "kube-apiserver exited ({status}):\n{}",
                    tail(&apiserver_log)
                );
            }
            if let Ok(client) = plane.client().await
                && client.apiserver_version().await.is_ok()
            {
                return Ok(plane);
            }
            if tokio::time::Instant::now() >= deadline {
                let log = tail(&apiserver_log);
                let _ = plane.apiserver.kill();
                bail!("kube-apiserver did not answer within {START_TIMEOUT:?}:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The kubeconfig of the admin client (`kubectl --kubeconfig ...`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A client of the API as the `system:masters` admin. Errors: the kubeconfig cannot be
    /// read.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        Ok(kube::Client::try_from(config)?)
    }
}

/// Creates `crds` on the cluster of `client` (one that exists already is left as it is) and
/// waits until each is `Established`, as envtest installs `CRDDirectoryPaths`. Errors: a
/// create is refused; a CRD is not established within a minute.
pub async fn install_crds(
    client: &kube::Client,
    crds: &[CustomResourceDefinition],
) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        match api.create(&PostParams::default(), crd).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e).with_context(|| format!("creating CRD {name}")),
        }
        super::wait::until(&api, &name, START_TIMEOUT, "be Established", |c| {
            c.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                })
        })
        .await?;
    }
    Ok(())
}
