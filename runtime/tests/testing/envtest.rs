//! The envtest path's process handling, with stand-in executables: no kube-apiserver binary
//! is installed here, so `etcd` and `kube-apiserver` are shell scripts that record the
//! arguments they were started with. What a real control plane does is not run here
//! (docs/testing.md); what is checked is that the helper starts both binaries with envtest's
//! flags and the files those flags name, reports a server that exits with its log, and
//! refuses a missing binary.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use rsbuilder_runtime::testing::envtest::{self, ControlPlane};

/// Writes an executable script `name` into `dir` that records its arguments, one per line,
/// in `<name>.args` beside it, prints a line, and exits with `status`. With `after`, it exits
/// only once the stand-in `after` has recorded its arguments: the helper stops every binary
/// when one exits, and on a loaded machine the other's shell may not have run yet.
fn stand_in(dir: &Path, name: &str, status: u8, after: Option<&str>) {
    let wait = after.map_or(String::new(), |other| {
        format!(
            "for _ in $(seq 200); do [ -s \"{dir}/{other}.args\" ] && break; sleep 0.05; done\n",
            dir = dir.display()
        )
    });
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > \"{dir}/{name}.args\"\n{wait}echo \"{name} stand-in refusing to serve\"\nexit {status}\n",
        dir = dir.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn recorded(dir: &Path, name: &str) -> Vec<String> {
    let file = dir.join(format!("{name}.args"));
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&file)
            && !text.is_empty()
        {
            return text.lines().map(str::to_string).collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{} was not written", file.display());
}

fn flag<'a>(args: &'a [String], name: &str) -> &'a str {
    let prefix = format!("--{name}=");
    args.iter()
        .find_map(|a| a.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no --{name} in {args:?}"))
}

#[tokio::test]
async fn both_binaries_start_with_envtests_flags_and_an_exiting_server_is_reported_with_its_log() {
    let assets = tempfile::tempdir().unwrap();
    stand_in(assets.path(), "etcd", 0, None);
    stand_in(assets.path(), "kube-apiserver", 3, Some("etcd"));
    let err = match ControlPlane::start(assets.path()).await {
        Ok(_) => panic!("a server that exits cannot be a control plane"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.starts_with("kube-apiserver exited (exit status: 3)"),
        "{err}"
    );
    assert!(
        err.contains("kube-apiserver stand-in refusing to serve"),
        "{err}"
    );

    let etcd = recorded(assets.path(), "etcd");
    let client_url = flag(&etcd, "listen-client-urls");
    assert!(client_url.starts_with("http://127.0.0.1:"), "{client_url}");
    assert_eq!(flag(&etcd, "advertise-client-urls"), client_url);
    assert!(flag(&etcd, "listen-peer-urls").starts_with("http://127.0.0.1:"));
    assert_eq!(flag(&etcd, "unsafe-no-fsync"), "true");

    let api = recorded(assets.path(), "kube-apiserver");
    assert_eq!(flag(&api, "etcd-servers"), client_url);
    for (name, value) in [
        ("advertise-address", "127.0.0.1"),
        ("bind-address", "127.0.0.1"),
        ("service-cluster-ip-range", "10.0.0.0/24"),
        ("allow-privileged", "true"),
        ("disable-admission-plugins", "ServiceAccount"),
        ("authorization-mode", "RBAC"),
    ] {
        assert_eq!(flag(&api, name), value, "--{name}");
    }
    let port = flag(&api, "secure-port");
    assert_eq!(
        flag(&api, "service-account-issuer"),
        format!("https://127.0.0.1:{port}/")
    );
    // The files the flags name were written before the server started (the directory is
    // removed with the failed start, so their paths are checked against the cert dir).
    let cert_dir = flag(&api, "cert-dir");
    for (name, file) in [
        ("client-ca-file", "client-cert-auth-ca.crt"),
        ("service-account-key-file", "sa-signer.crt"),
        ("service-account-signing-key-file", "sa-signer.key"),
    ] {
        assert_eq!(flag(&api, name), format!("{cert_dir}/{file}"), "--{name}");
    }
    assert!(
        !Path::new(cert_dir).exists(),
        "the failed start cleaned up after itself"
    );
}

#[tokio::test]
async fn a_missing_binary_is_named() {
    let assets = tempfile::tempdir().unwrap();
    stand_in(assets.path(), "etcd", 0, None);
    let err = match ControlPlane::start(assets.path()).await {
        Ok(_) => panic!("kube-apiserver is missing"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err,
        format!(
            "{}/kube-apiserver does not exist (KUBEBUILDER_ASSETS={})",
            assets.path().display(),
            assets.path().display()
        )
    );
}

#[test]
fn the_flags_are_envtests() {
    let args = envtest::apiserver_args(Path::new("/certs"), "http://127.0.0.1:1", 2);
    assert!(args.contains(&"--client-ca-file=/certs/client-cert-auth-ca.crt".to_string()));
    assert!(args.contains(&"--secure-port=2".to_string()));
}
