//! `crd()`'s schema transforms (schemars' `AddNullable`, kube-core's structural rewriter and
//! its optional-enum and int-or-string passes), run in order with panics caught.

use schemars::Schema;
use serde_json::Value;

use super::structural::StructuralRewriter;
use crate::manifests::crd::known;
use crate::manifests::crd::quiet::quietly;

/// Runs the transforms on `schema` used as a property of an object; the transformed schema,
/// or the panic message of kube-core's rewriter.
pub(super) fn probe_transforms(schema: &Schema) -> Result<Value, String> {
    let mut probe = schemars::json_schema!({"type": "object", "properties": {"probe": schema}});
    run_transforms(&mut probe)?;
    Ok(probe
        .get("properties")
        .and_then(|p| p.get("probe"))
        .cloned()
        .unwrap_or(Value::Null))
}

/// Runs `crd()`'s transforms in order; a panic in kube-core's rewriter becomes its message
/// (and leaves `schema` empty).
///
/// The rewriter reports a non-structural schema by panicking. Its panic message is the
/// answer here, not a crash, so it must not be printed: a process-wide hook, installed once,
/// stays quiet on the threads that are inside this function and hands every other panic to
/// the hook that was there before. Swapping the hook per call instead would race between
/// worker threads and could leave the quiet hook installed for good.
pub fn run_transforms(schema: &mut Schema) -> Result<(), String> {
    // kube-core's rewriter is quadratic in the schema's depth; `StructuralRewriter` gives its
    // output in one pass and hands it every case it is not sure of.
    let mut settings = known::crd_settings_with(StructuralRewriter);
    let mut work = std::mem::take(schema);
    *schema = quietly(|| {
        for t in settings.transforms.iter_mut() {
            t.transform(&mut work);
        }
        work
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::crd::quiet::QUIET;

    /// A schema kube-core's structural rewriter panics on: two `oneOf` branches giving one
    /// property different types.
    fn conflicting() -> Schema {
        schemars::json_schema!({"type": "object", "properties": {"p": {"oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "integer"}}}
        ]}}})
    }

    #[test]
    fn a_rewriter_panic_is_returned_and_the_thread_is_loud_again() {
        let mut s = conflicting();
        let err = run_transforms(&mut s).unwrap_err();
        assert!(!err.is_empty());
        assert!(!QUIET.get(), "the quiet flag must be reset after the call");
    }

    #[test]
    fn threads_running_transforms_at_once_all_get_their_answers() {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        if i % 2 == 0 {
                            let mut s = conflicting();
                            assert!(run_transforms(&mut s).is_err());
                        } else {
                            let mut s = schemars::json_schema!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}});
                            run_transforms(&mut s).unwrap();
                            assert_eq!(s.get("properties").unwrap()["n"]["nullable"], true);
                        }
                    }
                    QUIET.get()
                })
            })
            .collect();
        for h in handles {
            assert!(!h.join().unwrap());
        }
    }
}
