// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The routing of the manager's HTTP servers (`/metrics`, the health probes, the webhooks):
//! a table of exact paths, each with one method and its handler, on plain hyper. A path that
//! is not in the table is answered `404 Not Found`; another method than the route's is
//! answered `405 Method Not Allowed` with an `Allow` header, as Go's `http.ServeMux` answers
//! for a controller-runtime manager's servers. A `GET` route also answers `HEAD` (hyper sends
//! no body then).
//!
//! Why not a framework: these servers have a handful of fixed paths, and a web framework was
//! about 3 % of a generated project's first build (docs/runtime.md).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Empty, Full};

/// The error type of a request body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// A request body as handlers receive it: hyper's, boxed, so that tests can call the routes
/// with a body of their own ([`body`]).
pub type Body = BoxBody<Bytes, BoxError>;
/// A request as handlers receive it.
pub type Request = http::Request<Body>;
/// A handler's answer: the whole body at once (every answer of these servers is small or,
/// for `/metrics`, encoded before it is sent).
pub type Response = http::Response<Full<Bytes>>;
/// The future a [`Handler`] returns.
pub type BoxFuture = Pin<Box<dyn Future<Output = Response> + Send>>;
/// A route's handler, as [`Routes::layer`] hands it to a layer.
pub type Handler = Arc<dyn Fn(Request) -> BoxFuture + Send + Sync>;

/// The routes of one server: exact paths, each with one method. Cheap to clone (the table is
/// shared). Build it with [`Routes::get`] and [`Routes::post`], wrap every route with
/// [`Routes::layer`], answer a request with [`Routes::call`].
#[derive(Clone, Default)]
pub struct Routes {
    table: Arc<BTreeMap<String, (Method, Handler)>>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.table.iter().map(|(path, (method, _))| (path, method)))
            .finish()
    }
}

impl Routes {
    /// No routes: every request is answered 404.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `GET` (and `HEAD`) requests for exactly `path` with `handler`. A route already
    /// at `path` is replaced.
    pub fn get<F, Fut>(self, path: &str, handler: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.route(Method::GET, path, handler)
    }

    /// Answers `POST` requests for exactly `path` with `handler`. A route already at `path`
    /// is replaced.
    pub fn post<F, Fut>(self, path: &str, handler: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.route(Method::POST, path, handler)
    }

    fn route<F, Fut>(mut self, method: Method, path: &str, handler: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |request| Box::pin(handler(request)));
        Arc::make_mut(&mut self.table).insert(path.to_owned(), (method, handler));
        self
    }

    /// Wraps the handler of every route registered so far in `layer`, which gets the request
    /// and the route's handler and decides whether and how to call it (authentication, for
    /// example). Requests for unknown paths or with another method never reach a layer: they
    /// are answered 404 and 405 first.
    pub fn layer<L, Fut>(mut self, layer: L) -> Self
    where
        L: Fn(Request, Handler) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        for (_, handler) in Arc::make_mut(&mut self.table).values_mut() {
            let inner = handler.clone();
            let layer = layer.clone();
            *handler = Arc::new(move |request| Box::pin(layer(request, inner.clone())));
        }
        self
    }

    /// The paths served, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.table.keys().map(String::as_str)
    }

    /// Answers `request`: its route's handler, or 404 for an unknown path, or 405 (with an
    /// `Allow` header naming the route's method) for another method.
    pub async fn call(&self, request: Request) -> Response {
        let Some((method, handler)) = self.table.get(request.uri().path()) else {
            return text(StatusCode::NOT_FOUND, "404 page not found\n");
        };
        let allowed = request.method() == method
            || (*method == Method::GET && request.method() == Method::HEAD);
        if !allowed {
            let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
            let allow = if *method == Method::GET {
                HeaderValue::from_static("GET, HEAD")
            } else {
                HeaderValue::from_str(method.as_str()).unwrap_or(HeaderValue::from_static("POST"))
            };
            response.headers_mut().insert(header::ALLOW, allow);
            return response;
        }
        handler(request).await
    }
}

/// A request body holding `bytes`, for calling [`Routes::call`] without a socket.
pub fn body(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// An empty request body, for calling [`Routes::call`] without a socket.
pub fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

/// A `text/plain; charset=utf-8` answer with `status`.
pub fn text(status: StatusCode, text: impl Into<String>) -> Response {
    answer(status, "text/plain; charset=utf-8", text.into())
}

/// An `application/json` answer with `status` holding `value` serialized; a value serde
/// cannot write (a map with non-string keys, say) is a `500` saying so.
pub fn json(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => answer(status, "application/json", bytes),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot serialize the answer: {e}"),
        ),
    }
}

/// An answer with `status`, the `content_type` header and `body`.
pub fn answer(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response {
    let mut response = http::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn send(
        routes: &Routes,
        method: Method,
        path: &str,
    ) -> (StatusCode, Option<String>, String) {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .body(empty())
            .unwrap();
        let response = routes.call(request).await;
        let status = response.status();
        let allow = response
            .headers()
            .get(header::ALLOW)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, allow, String::from_utf8(body.to_vec()).unwrap())
    }

    fn routes() -> Routes {
        Routes::new()
            .get("/a", |_| async { text(StatusCode::OK, "a") })
            .post("/b", |request: Request| async move {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                text(
                    StatusCode::CREATED,
                    String::from_utf8(body.to_vec()).unwrap(),
                )
            })
    }

    #[tokio::test]
    async fn a_route_answers_its_method_and_its_exact_path_only() {
        let routes = routes();
        assert_eq!(
            send(&routes, Method::GET, "/a").await,
            (StatusCode::OK, None, "a".into())
        );
        assert_eq!(send(&routes, Method::HEAD, "/a").await.0, StatusCode::OK);
        assert_eq!(
            send(&routes, Method::GET, "/a?x=1").await.0,
            StatusCode::OK,
            "the query is not part of the path"
        );
        for path in ["/", "/a/", "/ab", "/A"] {
            assert_eq!(
                send(&routes, Method::GET, path).await.0,
                StatusCode::NOT_FOUND,
                "{path}"
            );
        }
        assert_eq!(
            send(&routes, Method::POST, "/a").await,
            (
                StatusCode::METHOD_NOT_ALLOWED,
                Some("GET, HEAD".into()),
                "Method Not Allowed\n".into()
            )
        );
        assert_eq!(
            send(&routes, Method::GET, "/b").await.1.as_deref(),
            Some("POST")
        );
        let request = http::Request::post("/b").body(body("hello")).unwrap();
        let response = routes.call(request).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let got = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&got[..], b"hello");
    }

    #[tokio::test]
    async fn a_layer_wraps_every_route_but_not_unknown_paths() {
        let routes = routes().layer(|request: Request, next: Handler| async move {
            if request.headers().contains_key("x-pass") {
                next(request).await
            } else {
                text(StatusCode::UNAUTHORIZED, "no")
            }
        });
        assert_eq!(
            send(&routes, Method::GET, "/a").await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            send(&routes, Method::GET, "/nope").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            send(&routes, Method::DELETE, "/a").await.0,
            StatusCode::METHOD_NOT_ALLOWED
        );
        let request = http::Request::get("/a")
            .header("x-pass", "1")
            .body(empty())
            .unwrap();
        assert_eq!(routes.call(request).await.status(), StatusCode::OK);
        assert_eq!(routes.paths().collect::<Vec<_>>(), ["/a", "/b"]);
    }

    #[test]
    fn answers_carry_their_content_type() {
        let response = json(StatusCode::OK, &serde_json::json!({"a": 1}));
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let response = text(StatusCode::OK, "x");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        let mut unwritable = std::collections::HashMap::new();
        unwritable.insert((1, 2), 3);
        assert_eq!(
            json(StatusCode::OK, &unwritable).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }
}
