// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! cel-rust's parser and interpreter behind `catch_unwind`: an odd rule or object that makes
//! either panic is answered with an error instead of crashing the loader or a request's task.

use cel::{ExecutionError, Program, Value as Cel};

use super::library::ENV;

/// `source` compiled in [`ENV`]. Errors: the parser's, or its panic (which an odd input must
/// not turn into a crash of the loader).
pub(super) fn compile(source: &str) -> Result<Program, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ENV.compile(source))) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("the CEL parser failed on this expression".into()),
    }
}

/// An evaluation, its panic (an interpreter bug an odd object could reach) turned into an
/// internal error, so that a request is answered instead of its task aborted.
pub(super) fn guarded(
    f: impl FnOnce() -> Result<Cel, ExecutionError>,
) -> Result<Cel, ExecutionError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ExecutionError::InternalError(
            "the CEL interpreter failed".into(),
        ))
    })
}
