//! The rule for a test whose outside need (a tool, a file, the network) is missing, shared by
//! rsbuilder's tests (through `common`) and the runtime's (runtime/tests include this file
//! alone, having neither rsbuilder's binary nor its dev-dependencies).

/// A test whose outside need (a tool, a file, the network) is missing: it skips with a
/// message locally, and fails under `CI=true`, where `.ci/run` installs what the tests need,
/// so a green CI never hides a check that did not run.
pub fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} (CI must run this test)");
    }
    eprintln!("skipped: {what}");
}

/// Whether the user opted out of the end-to-end builds (`RSBUILDER_SKIP_E2E` set): `true` with
/// a message locally, so the caller returns; a failure under `CI=true`, where every check must
/// run.
#[allow(dead_code)]
pub fn e2e_opted_out() -> bool {
    if std::env::var_os("RSBUILDER_SKIP_E2E").is_none() {
        return false;
    }
    missing("RSBUILDER_SKIP_E2E is set: the end-to-end build is skipped");
    true
}
