// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Delegated authentication and authorization for the aggregated API server, following the
//! behaviour of k8s.io/apiserver's delegating options (docs/apiserver.md):
//!
//! - the trust settings come from the `kube-system/extension-apiserver-authentication`
//!   ConfigMap ([`AuthConfig::from_configmap`]), re-read periodically ([`Delegated::refresh`]);
//! - a request is authenticated ([`Delegated::authenticate`]) by, in order: a front-proxy
//!   client certificate (signed by the requestheader CA, CN in the allowed names; the user
//!   from the `X-Remote-*` headers), a client certificate signed by the client CA (user = CN,
//!   groups = O), or a bearer token (TokenReview); anything else is 401;
//! - the user's request is authorized ([`Delegated::authorize`]) by a SubjectAccessReview with
//!   the request's resource or non-resource attributes ([`super::request::attributes`]); a denial is 403;
//! - `/healthz`, `/readyz`, `/livez` skip both ([`ALWAYS_ALLOW_PATHS`]).
//!
//! Review answers are cached for [`CACHE_TTL`] in bounded caches. Admission and limits are
//! [`super::admission`] and [`super::limits`]. Not done: anonymous requests (always 401 here).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{SubjectAccessReview, SubjectAccessReviewSpec};
use k8s_openapi::api::core::v1::ConfigMap;
use tokio_rustls::rustls::pki_types::CertificateDer;

use super::request::{Attributes, attributes};
use super::status::ApiError;
use crate::tls::PeerCertificates;

mod config;

pub use config::{AuthConfig, CaPool};

/// Namespace of the authentication ConfigMap kube-apiserver publishes.
pub const CONFIGMAP_NAMESPACE: &str = "kube-system";
/// Name of the authentication ConfigMap kube-apiserver publishes.
pub const CONFIGMAP_NAME: &str = "extension-apiserver-authentication";
/// Paths served without authentication or authorization (the probes), as the real server's
/// default always-allow paths.
pub const ALWAYS_ALLOW_PATHS: &[&str] = &["/healthz", "/readyz", "/livez"];
/// How long a TokenReview or SubjectAccessReview answer is reused (allowed or not), the
/// delegating options' default.
pub const CACHE_TTL: Duration = Duration::from_secs(10);
/// Most answers each cache holds; a full cache drops its expired entries, then everything.
pub const CACHE_SIZE: usize = 4096;
/// How often [`Delegated::spawn_refresh`] re-reads the ConfigMap.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);
/// How long each review or ConfigMap read may wait for the cluster.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// A small cache of answers that expire after a time-to-live.
#[derive(Debug)]
struct TtlCache<V> {
    entries: HashMap<String, (Instant, V)>,
    ttl: Duration,
    size: usize,
}

impl<V: Clone> TtlCache<V> {
    fn new(ttl: Duration, size: usize) -> Self {
        Self {
            entries: HashMap::new(),
            ttl,
            size,
        }
    }

    fn get(&self, key: &str) -> Option<V> {
        let (at, v) = self.entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| v.clone())
    }

    fn put(&mut self, key: String, value: V) {
        if self.entries.len() >= self.size {
            let ttl = self.ttl;
            self.entries.retain(|_, (at, _)| at.elapsed() < ttl);
            if self.entries.len() >= self.size {
                self.entries.clear();
            }
        }
        self.entries.insert(key, (Instant::now(), value));
    }
}

/// Delegated authentication and authorization: the cluster client, the current
/// [`AuthConfig`] and the review caches. Put it in `Config::auth`.
pub struct Delegated {
    client: kube::Client,
    config: RwLock<Arc<AuthConfig>>,
    tokens: Mutex<TtlCache<Option<UserInfo>>>,
    decisions: Mutex<TtlCache<(bool, String)>>,
}

impl std::fmt::Debug for Delegated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegated")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The 401 answer.
fn unauthorized() -> ApiError {
    ApiError {
        code: 401,
        reason: "Unauthorized",
        message: "Unauthorized".into(),
        details: None,
        continue_token: None,
    }
}

impl Delegated {
    /// Uses `config` as given, with `client` for the reviews (and for [`Self::refresh`]).
    pub fn new(client: kube::Client, config: AuthConfig) -> Arc<Self> {
        Arc::new(Self {
            client,
            config: RwLock::new(Arc::new(config)),
            tokens: Mutex::new(TtlCache::new(CACHE_TTL, CACHE_SIZE)),
            decisions: Mutex::new(TtlCache::new(CACHE_TTL, CACHE_SIZE)),
        })
    }

    /// Reads the ConfigMap through `client` and returns the authenticator. Errors: the
    /// ConfigMap cannot be read (the ServiceAccount needs the
    /// `extension-apiserver-authentication-reader` Role in kube-system) or does not parse.
    pub async fn from_cluster(client: kube::Client) -> anyhow::Result<Arc<Self>> {
        let config = read_configmap(&client).await?;
        Ok(Self::new(client, config))
    }

    /// Re-reads the ConfigMap and installs it (a CA rotation). Errors: as
    /// [`Self::from_cluster`]; the previous settings stay.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let config = read_configmap(&self.client).await?;
        if let Ok(mut current) = self.config.write() {
            *current = Arc::new(config);
        }
        Ok(())
    }

    /// Calls [`Self::refresh`] every `interval` until `shutdown`, logging failures.
    pub fn spawn_refresh(
        self: &Arc<Self>,
        interval: Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Err(e) = this.refresh().await {
                    tracing::warn!("keeping the previous authentication settings: {e:#}");
                }
            }
        })
    }

    fn current(&self) -> Arc<AuthConfig> {
        match self.config.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The user making a request: front proxy, then client certificate, then bearer token
    /// (see the module docs). `chain` is the client's certificate chain from the TLS layer.
    /// Errors: 401 Unauthorized when nothing authenticates the request (a failed
    /// TokenReview counts as not authenticated, and is logged).
    pub async fn authenticate(
        &self,
        chain: Option<&[CertificateDer<'static>]>,
        headers: &HeaderMap,
    ) -> Result<UserInfo, ApiError> {
        let config = self.current();
        if let Some(chain) = chain.filter(|c| !c.is_empty()) {
            match config.front_proxy_user(chain, headers) {
                Ok(Some(user)) => return Ok(user),
                Ok(None) => {}
                Err(why) => tracing::debug!("front-proxy certificate refused: {why}"),
            }
            if let Some(user) = config.client_cert_user(chain) {
                return Ok(user);
            }
        }
        let Some(token) = bearer_token(headers) else {
            return Err(unauthorized());
        };
        if let Ok(cache) = self.tokens.lock()
            && let Some(answer) = cache.get(&token)
        {
            return answer.ok_or_else(unauthorized);
        }
        let answer = match self.token_review(&token).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!("TokenReview failed: {e:#}");
                return Err(unauthorized());
            }
        };
        if let Ok(mut cache) = self.tokens.lock() {
            cache.put(token, answer.clone());
        }
        answer.ok_or_else(unauthorized)
    }

    async fn token_review(&self, token: &str) -> anyhow::Result<Option<UserInfo>> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                ..Default::default()
            },
            ..Default::default()
        };
        let api = kube::Api::<TokenReview>::all(self.client.clone());
        let reviewed = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {}s", REVIEW_TIMEOUT.as_secs()))??;
        let status = reviewed.status.unwrap_or_default();
        Ok(match (status.authenticated, status.user) {
            (Some(true), Some(user)) if user.username.is_some() => Some(user),
            _ => None,
        })
    }

    /// Asks a SubjectAccessReview whether `user` may do `attrs`. Errors: 403 Forbidden with
    /// the authorizer's reason; 500 when the review fails.
    pub async fn authorize(&self, user: &UserInfo, attrs: &Attributes) -> Result<(), ApiError> {
        let mut spec = SubjectAccessReviewSpec {
            user: user.username.clone(),
            groups: user.groups.clone(),
            uid: user.uid.clone(),
            extra: user.extra.clone(),
            ..Default::default()
        };
        match attrs {
            Attributes::Resource(r) => spec.resource_attributes = Some((**r).clone()),
            Attributes::NonResource(n) => spec.non_resource_attributes = Some(n.clone()),
        }
        let key = serde_json::to_string(&spec).unwrap_or_default();
        let cached = self.decisions.lock().ok().and_then(|c| c.get(&key));
        let (allowed, reason) = match cached {
            Some(answer) => answer,
            None => {
                let answer = self.access_review(spec).await.map_err(|e| {
                    tracing::error!("SubjectAccessReview failed: {e:#}");
                    ApiError {
                        code: 500,
                        reason: "InternalError",
                        message: "Internal error occurred: authorization failed".into(),
                        details: None,
                        continue_token: None,
                    }
                })?;
                if let Ok(mut cache) = self.decisions.lock() {
                    cache.put(key, answer.clone());
                }
                answer
            }
        };
        if allowed {
            return Ok(());
        }
        Err(forbidden(user, attrs, &reason))
    }

    async fn access_review(&self, spec: SubjectAccessReviewSpec) -> anyhow::Result<(bool, String)> {
        let review = SubjectAccessReview {
            spec,
            ..Default::default()
        };
        let api = kube::Api::<SubjectAccessReview>::all(self.client.clone());
        let reviewed = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {}s", REVIEW_TIMEOUT.as_secs()))??;
        let status = reviewed.status.unwrap_or_default();
        Ok((
            status.allowed && !status.denied.unwrap_or(false),
            status.reason.unwrap_or_default(),
        ))
    }
}

/// The 403 answer, worded like the real server's: who, what, where, and the reason.
fn forbidden(user: &UserInfo, attrs: &Attributes, reason: &str) -> ApiError {
    let who = user.username.clone().unwrap_or_default();
    let mut message = match attrs {
        Attributes::Resource(r) => {
            let resource = r.resource.clone().unwrap_or_default();
            let qualified = match r.group.as_deref() {
                Some("") | None => resource.clone(),
                Some(g) => format!("{resource}.{g}"),
            };
            let target = match &r.name {
                Some(n) => format!("{qualified} \"{n}\" is forbidden"),
                None => format!("{qualified} is forbidden"),
            };
            let mut m = format!(
                "{target}: User \"{who}\" cannot {} resource \"{resource}",
                r.verb.clone().unwrap_or_default()
            );
            if let Some(sub) = &r.subresource {
                m.push('/');
                m.push_str(sub);
            }
            m.push_str(&format!(
                "\" in API group \"{}\"",
                r.group.clone().unwrap_or_default()
            ));
            match &r.namespace {
                Some(ns) => m.push_str(&format!(" in the namespace \"{ns}\"")),
                None => m.push_str(" at the cluster scope"),
            }
            m
        }
        Attributes::NonResource(n) => format!(
            "forbidden: User \"{who}\" cannot {} path \"{}\"",
            n.verb.clone().unwrap_or_default(),
            n.path.clone().unwrap_or_default()
        ),
    };
    if !reason.is_empty() {
        message.push_str(": ");
        message.push_str(reason);
    }
    let details = match attrs {
        Attributes::Resource(r) => Some(serde_json::json!({
            "name": r.name.clone().unwrap_or_default(),
            "group": r.group.clone().unwrap_or_default(),
            "kind": r.resource.clone().unwrap_or_default(),
        })),
        Attributes::NonResource(_) => None,
    };
    ApiError {
        code: 403,
        reason: "Forbidden",
        message,
        details,
        continue_token: None,
    }
}

async fn read_configmap(client: &kube::Client) -> anyhow::Result<AuthConfig> {
    let api = kube::Api::<ConfigMap>::namespaced(client.clone(), CONFIGMAP_NAMESPACE);
    let cm = tokio::time::timeout(REVIEW_TIMEOUT, api.get(CONFIGMAP_NAME))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "reading {CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}: no answer within {}s",
                REVIEW_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "reading ConfigMap {CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}"
            ))
        })?;
    AuthConfig::from_configmap(&cm.data.unwrap_or_default())
        .map_err(|e| anyhow::anyhow!("ConfigMap {CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}: {e}"))
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let mut parts = value.split_whitespace();
    let scheme = parts.next()?;
    let token = parts.next()?;
    if !scheme.eq_ignore_ascii_case("bearer") || parts.next().is_some() {
        return None;
    }
    Some(token.to_owned())
}

/// The middleware [`super::server::ApiServer`] puts in front of its routes when
/// `Config::auth` is set: the always-allow paths pass; every other request is
/// authenticated, then authorized; failures answer their `metav1.Status`. The user reaches
/// the handler as a [`UserInfo`] request extension.
pub async fn middleware(
    State(auth): State<Arc<Delegated>>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    if ALWAYS_ALLOW_PATHS.contains(&path.as_str()) {
        return next.run(request).await;
    }
    let chain = request
        .extensions()
        .get::<PeerCertificates>()
        .map(|p| p.0.clone());
    let user = match auth
        .authenticate(chain.as_deref().map(Vec::as_slice), request.headers())
        .await
    {
        Ok(user) => user,
        Err(e) => return e.into_response(),
    };
    let attrs = attributes(request.method(), &path, request.uri().query());
    if let Err(e) = auth.authorize(&user, &attrs).await {
        return e.into_response();
    }
    request.extensions_mut().insert(user);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;
    use std::collections::BTreeMap;

    fn ca(name: &str) -> (rcgen::Certificate, rcgen::Issuer<'static, rcgen::KeyPair>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        (cert, rcgen::Issuer::new(params, key))
    }

    fn client(
        issuer: &rcgen::Issuer<'static, rcgen::KeyPair>,
        cn: &str,
        orgs: &[&str],
    ) -> Vec<CertificateDer<'static>> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        for o in orgs {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, *o);
        }
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        vec![params.signed_by(&key, issuer).unwrap().der().clone()]
    }

    fn configmap(client_ca: &str, proxy_ca: &str) -> BTreeMap<String, String> {
        [
            ("client-ca-file", client_ca),
            ("requestheader-client-ca-file", proxy_ca),
            ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
            ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
            (
                "requestheader-extra-headers-prefix",
                r#"["X-Remote-Extra-"]"#,
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn the_configmap_is_read_as_kube_apiserver_writes_it() {
        let (client_ca, _) = ca("client-ca");
        let (proxy_ca, _) = ca("front-proxy-ca");
        let config =
            AuthConfig::from_configmap(&configmap(&client_ca.pem(), &proxy_ca.pem())).unwrap();
        assert_eq!(config.allowed_names, ["front-proxy-client"]);
        assert_eq!(config.username_headers, ["X-Remote-User"]);
        assert_eq!(config.group_headers, ["X-Remote-Group"]);
        assert_eq!(config.extra_prefixes, ["X-Remote-Extra-"]);
        assert!(!config.client_ca.is_empty() && !config.requestheader_ca.is_empty());

        let mut bad = configmap("", "");
        bad.insert(
            "requestheader-allowed-names".into(),
            "front-proxy-client".into(),
        );
        let err = AuthConfig::from_configmap(&bad).unwrap_err();
        assert!(err.starts_with("requestheader-allowed-names:"), "{err}");
        let err = AuthConfig::from_configmap(&configmap("-----BEGIN CERTIFICATE-----\nzz", ""))
            .unwrap_err();
        assert!(err.starts_with("client-ca-file:"), "{err}");
        let mut no_user = configmap("", &proxy_ca.pem());
        no_user.remove("requestheader-username-headers");
        let err = AuthConfig::from_configmap(&no_user).unwrap_err();
        assert!(err.starts_with("requestheader-username-headers:"), "{err}");
        let empty = AuthConfig::from_configmap(&BTreeMap::new()).unwrap();
        assert!(empty.client_ca.is_empty() && empty.allowed_names.is_empty());
    }

    #[test]
    fn users_come_from_the_certificate_or_the_front_proxy_headers() {
        let (client_pem, client_issuer) = ca("client-ca");
        let (proxy_pem, proxy_issuer) = ca("front-proxy-ca");
        let (_, stranger) = ca("stranger");
        let config =
            AuthConfig::from_configmap(&configmap(&client_pem.pem(), &proxy_pem.pem())).unwrap();

        let alice = client(&client_issuer, "alice", &["dev"]);
        let user = config.client_cert_user(&alice).unwrap();
        assert_eq!(user.username.as_deref(), Some("alice"));
        assert_eq!(user.groups.unwrap(), ["dev"]);
        assert!(
            config
                .client_cert_user(&client(&stranger, "eve", &[]))
                .is_none()
        );

        let mut headers = HeaderMap::new();
        headers.insert("x-remote-user", "bob".parse().unwrap());
        headers.append("x-remote-group", "system:authenticated".parse().unwrap());
        headers.append("x-remote-group", "team".parse().unwrap());
        headers.insert("x-remote-extra-scopes%2fa", "s1".parse().unwrap());
        let proxy = client(&proxy_issuer, "front-proxy-client", &[]);
        let user = config.front_proxy_user(&proxy, &headers).unwrap().unwrap();
        assert_eq!(user.username.as_deref(), Some("bob"));
        assert_eq!(user.groups.unwrap(), ["system:authenticated", "team"]);
        assert_eq!(user.extra.unwrap()["scopes/a"], ["s1"]);

        let other = client(&proxy_issuer, "someone-else", &[]);
        let err = config.front_proxy_user(&other, &headers).unwrap_err();
        assert!(err.contains("cn=someone-else"), "{err}");
        // A client certificate is not a front-proxy one, whatever its CN.
        let forged = client(&client_issuer, "front-proxy-client", &[]);
        assert_eq!(config.front_proxy_user(&forged, &headers), Ok(None));
        // A front-proxy certificate alone, without a user header, names no user.
        assert_eq!(config.front_proxy_user(&proxy, &HeaderMap::new()), Ok(None));
    }

    #[test]
    fn a_denial_names_the_user_the_request_and_the_reason() {
        let user = UserInfo {
            username: Some("bob".into()),
            ..Default::default()
        };
        let attrs = attributes(
            &Method::GET,
            "/apis/db.example.com/v1/namespaces/ns1/databases/main",
            None,
        );
        let e = forbidden(&user, &attrs, "no RBAC policy matched");
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "databases.db.example.com \"main\" is forbidden: User \"bob\" cannot get resource \
             \"databases\" in API group \"db.example.com\" in the namespace \"ns1\": no RBAC \
             policy matched"
        );
    }

    #[test]
    fn the_cache_forgets_after_its_ttl_and_stays_bounded() {
        let mut cache = TtlCache::new(Duration::from_secs(60), 2);
        cache.put("a".into(), 1);
        cache.put("b".into(), 2);
        assert_eq!((cache.get("a"), cache.get("b")), (Some(1), Some(2)));
        cache.put("c".into(), 3);
        assert!(cache.entries.len() <= 2);
        assert_eq!(cache.get("c"), Some(3));
        let mut expired = TtlCache::new(Duration::ZERO, 2);
        expired.put("a".into(), 1);
        assert_eq!(expired.get("a"), None);
    }
}
