//! What the integration tests share: the rule for a missing outside tool.

/// A test whose outside need (a tool, a file, the network) is missing: it skips with a
/// message locally, and fails under `CI=true`, where `.ci/run` installs what the tests need,
/// so a green CI never hides a check that did not run.
pub fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} (CI must run this test)");
    }
    eprintln!("skipped: {what}");
}
