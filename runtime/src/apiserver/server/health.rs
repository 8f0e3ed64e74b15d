// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! `/healthz`, `/livez`, `/readyz` and `/version`, as k8s.io/apiserver's `server/healthz`
//! and version endpoints answer them.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A health check's answer: `ok`, or the failed check (listed with `verbose`).
pub fn health(ok: bool, verbose: bool) -> Response {
    let (code, text) = match (ok, verbose) {
        (true, false) => (StatusCode::OK, "ok".to_string()),
        (true, true) => (StatusCode::OK, "[+]ping ok\nhealthz check passed\n".into()),
        (false, false) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]shutdown failed: reason withheld\nreadyz check failed\n".into(),
        ),
        (false, true) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[+]ping ok\n[-]shutdown failed: the server is shutting down\nreadyz check failed\n"
                .into(),
        ),
    };
    let mut r = (code, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The `/version` document for `git_version` (`v1.2.3`; major and minor are read from it).
pub fn version(git_version: &str) -> Value {
    let numbers: Vec<&str> = git_version.trim_start_matches('v').split('.').collect();
    json!({
        "major": numbers.first().copied().unwrap_or("0"),
        "minor": numbers.get(1).copied().unwrap_or("0"),
        "gitVersion": git_version,
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}
