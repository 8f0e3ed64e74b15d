// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The trust settings of delegated authentication, as the
//! `kube-system/extension-apiserver-authentication` ConfigMap holds them: the client and
//! front-proxy CAs, the front proxy's allowed names and headers, and the users a client or
//! front-proxy certificate names (the certificate subject read from its DER encoding).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::HeaderMap;
use k8s_openapi::api::authentication::v1::UserInfo;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, UnixTime};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::server::danger::ClientCertVerifier;

use crate::apiserver::request::percent_decode;

/// A set of trusted CAs and the verifier built from them.
#[derive(Clone)]
pub struct CaPool {
    verifier: Option<Arc<dyn ClientCertVerifier>>,
    count: usize,
}

impl std::fmt::Debug for CaPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CaPool({} certificates)", self.count)
    }
}

impl CaPool {
    /// A pool of the certificates in `pem` (a bundle; empty text = a pool that trusts
    /// nothing). Errors: the PEM cannot be parsed, or a certificate is not a usable CA.
    pub fn from_pem(pem: &str) -> Result<Self, String> {
        let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("cannot parse the PEM bundle: {e}"))?;
        if certs.is_empty() {
            return Ok(Self {
                verifier: None,
                count: 0,
            });
        }
        let mut roots = rustls::RootCertStore::empty();
        let count = certs.len();
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| format!("cannot use a CA certificate: {e}"))?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            crate::tls::crypto_provider(),
        )
        .build()
        .map_err(|e| format!("cannot build a verifier: {e}"))?;
        Ok(Self {
            verifier: Some(verifier),
            count,
        })
    }

    /// Whether the pool holds no certificate.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether `chain` (leaf first) chains to a CA of the pool, is valid now and is meant for
    /// client authentication (extended key usage).
    pub fn verifies(&self, chain: &[CertificateDer<'static>]) -> bool {
        let (Some(verifier), Some((leaf, intermediates))) = (&self.verifier, chain.split_first())
        else {
            return false;
        };
        verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .is_ok()
    }
}

/// The delegated authentication settings, as the ConfigMap holds them.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// CAs of client certificates (`client-ca-file`): user = CN, groups = O.
    pub client_ca: CaPool,
    /// CAs of the front proxy's certificate (`requestheader-client-ca-file`).
    pub requestheader_ca: CaPool,
    /// CNs a front-proxy certificate may carry (`requestheader-allowed-names`; empty = any).
    pub allowed_names: Vec<String>,
    /// Headers naming the user, first non-empty wins (`requestheader-username-headers`).
    pub username_headers: Vec<String>,
    /// Headers carrying groups, every value counts (`requestheader-group-headers`).
    pub group_headers: Vec<String>,
    /// Prefixes of headers carrying extra values (`requestheader-extra-headers-prefix`).
    pub extra_prefixes: Vec<String>,
}

/// A JSON string array (`["X-Remote-User"]`) as the ConfigMap holds lists; absent or empty
/// text is an empty list. Errors name the key.
fn string_list(data: &BTreeMap<String, String>, key: &str) -> Result<Vec<String>, String> {
    match data.get(key).map(|v| v.trim()) {
        None | Some("") => Ok(Vec::new()),
        Some(raw) => serde_json::from_str::<Vec<String>>(raw)
            .map_err(|e| format!("{key}: not a JSON array of strings: {e}")),
    }
}

impl AuthConfig {
    /// Reads the ConfigMap's `data`: `client-ca-file` and `requestheader-client-ca-file`
    /// (PEM bundles), `requestheader-allowed-names`, `requestheader-username-headers`,
    /// `requestheader-group-headers` and `requestheader-extra-headers-prefix` (JSON string
    /// arrays). A missing key is empty (that way of authenticating is off). A requestheader
    /// CA without username headers is an error, as the real server refuses it. Errors name
    /// the key.
    pub fn from_configmap(data: &BTreeMap<String, String>) -> Result<Self, String> {
        let pem = |key: &str| {
            CaPool::from_pem(data.get(key).map_or("", String::as_str))
                .map_err(|e| format!("{key}: {e}"))
        };
        let config = Self {
            client_ca: pem("client-ca-file")?,
            requestheader_ca: pem("requestheader-client-ca-file")?,
            allowed_names: string_list(data, "requestheader-allowed-names")?,
            username_headers: string_list(data, "requestheader-username-headers")?,
            group_headers: string_list(data, "requestheader-group-headers")?,
            extra_prefixes: string_list(data, "requestheader-extra-headers-prefix")?,
        };
        if !config.requestheader_ca.is_empty() && config.username_headers.is_empty() {
            return Err(
                "requestheader-username-headers: empty while requestheader-client-ca-file is set"
                    .into(),
            );
        }
        Ok(config)
    }

    /// The user a front proxy names in the headers, if `chain` is a front-proxy certificate
    /// with an allowed CN and a user header is set. `Err` is the reason a front-proxy-signed
    /// certificate is refused (its CN).
    pub(super) fn front_proxy_user(
        &self,
        chain: &[CertificateDer<'static>],
        headers: &HeaderMap,
    ) -> Result<Option<UserInfo>, String> {
        if !self.requestheader_ca.verifies(chain) {
            return Ok(None);
        }
        let subject = chain.first().and_then(|c| subject(c)).unwrap_or_default();
        let cn = subject.common_name.unwrap_or_default();
        if !self.allowed_names.is_empty() && !self.allowed_names.contains(&cn) {
            return Err(format!(
                "x509: subject with cn={cn} is not in the allowed list"
            ));
        }
        let value = |h: &str| -> Vec<String> {
            headers
                .get_all(h)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .map(str::to_owned)
                .collect()
        };
        let Some(name) = self
            .username_headers
            .iter()
            .flat_map(|h| value(h))
            .find(|v| !v.is_empty())
        else {
            return Ok(None);
        };
        let groups: Vec<String> = self.group_headers.iter().flat_map(|h| value(h)).collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (key, v) in headers {
            let key = key.as_str();
            for prefix in &self.extra_prefixes {
                let prefix = prefix.to_ascii_lowercase();
                if let Some(rest) = key.strip_prefix(&prefix)
                    && !rest.is_empty()
                    && let Ok(v) = v.to_str()
                {
                    extra
                        .entry(percent_decode(rest).to_ascii_lowercase())
                        .or_default()
                        .push(v.to_owned());
                }
            }
        }
        Ok(Some(UserInfo {
            username: Some(name),
            groups: Some(groups),
            extra: (!extra.is_empty()).then_some(extra),
            uid: None,
        }))
    }

    /// The user of a client certificate signed by the client CA: CN and O.
    pub(super) fn client_cert_user(&self, chain: &[CertificateDer<'static>]) -> Option<UserInfo> {
        if !self.client_ca.verifies(chain) {
            return None;
        }
        let subject = subject(chain.first()?)?;
        Some(UserInfo {
            username: Some(subject.common_name.filter(|cn| !cn.is_empty())?),
            groups: Some(subject.organizations),
            ..Default::default()
        })
    }
}

/// A certificate subject's common name and organizations.
#[derive(Debug, Default, PartialEq)]
struct Subject {
    common_name: Option<String>,
    organizations: Vec<String>,
}

/// One DER element: (tag, contents, rest).
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The subject of an X.509 certificate (DER): its CN and O attributes.
fn subject(cert: &[u8]) -> Option<Subject> {
    const SEQUENCE: u8 = 0x30;
    let (SEQUENCE, cert, _) = der(cert)? else {
        return None;
    };
    let (SEQUENCE, mut tbs, _) = der(cert)? else {
        return None;
    };
    if tbs.first() == Some(&0xa0) {
        tbs = der(tbs)?.2; // version
    }
    for _ in 0..4 {
        tbs = der(tbs)?.2; // serial, signature algorithm, issuer, validity
    }
    let (SEQUENCE, mut rdns, _) = der(tbs)? else {
        return None;
    };
    let mut subject = Subject::default();
    while !rdns.is_empty() {
        let (_, mut set, rest) = der(rdns)?;
        rdns = rest;
        while !set.is_empty() {
            let (_, attr, rest) = der(set)?;
            set = rest;
            let (0x06, oid, value) = der(attr)? else {
                continue;
            };
            let (tag, value, _) = der(value)?;
            // UTF8String, PrintableString, T61String, IA5String.
            if !matches!(tag, 0x0c | 0x13 | 0x14 | 0x16) {
                continue;
            }
            let text = String::from_utf8_lossy(value).into_owned();
            match oid {
                [0x55, 0x04, 0x03] => subject.common_name = Some(text),
                [0x55, 0x04, 0x0a] => subject.organizations.push(text),
                _ => {}
            }
        }
    }
    Some(subject)
}
