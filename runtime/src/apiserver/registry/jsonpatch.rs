// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! JSON patch (RFC 6902, `application/json-patch+json`) as kube-apiserver applies it, with its
//! limits on operations and copied bytes.

use serde_json::Value;

use crate::apiserver::status::ApiError;

/// The most operations a JSON patch may hold, as k8s.io/apiserver's `maxJSONPatchOperations`.
pub(crate) const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes the `copy` operations of one JSON patch may add, counted as the JSON
/// encoding of each copied value: kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB), which it
/// sets as evanphx/json-patch's `AccumulatedCopySizeLimit`.
pub(crate) const JSON_PATCH_MAX_COPY_BYTES: u64 = 3 * 1024 * 1024;

/// Applies a JSON patch (RFC 6902) as kube-apiserver's (evanphx/json-patch) does: one
/// difference from the RFC, which clients rely on, is that a `test` of the value `null` at a
/// path that does not exist succeeds (kube-runtime's `finalizer` tests
/// `/metadata/finalizers` for `null` before adding the first finalizer). The limits are
/// kube-apiserver's: at most [`MAX_JSON_PATCH_OPERATIONS`] operations, checked before any
/// applies, and the values `copy` operations copy at most [`JSON_PATCH_MAX_COPY_BYTES`] in
/// all, checked before each copy (so a patch that doubles the object per operation stops
/// before it takes the memory). Errors: 413 RequestEntityTooLarge for too many operations
/// ("The allowed maximum operations in a JSON patch is 10000, got N"); 422 Invalid for the
/// first operation that fails, as json-patch words it, or for the copy limit ("Unable to
/// complete the copy, the accumulated size increase of copy is N, exceeding the limit M", as
/// json-patch's `AccumulatedCopySizeError`).
pub(crate) fn apply_json_patch(obj: &mut Value, patch: &json_patch::Patch) -> Result<(), ApiError> {
    if patch.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::entity_too_large(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            patch.0.len()
        )));
    }
    let mut copied: u64 = 0;
    for (index, op) in patch.0.iter().enumerate() {
        match op {
            json_patch::PatchOperation::Test(t)
                if t.value.is_null() && obj.pointer(t.path.as_str()).is_none() =>
            {
                continue;
            }
            json_patch::PatchOperation::Copy(c) => {
                if let Some(value) = obj.pointer(c.from.as_str()) {
                    copied = copied.saturating_add(json_size(value));
                    if copied > JSON_PATCH_MAX_COPY_BYTES {
                        return Err(ApiError::patch_rejected(format!(
                            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}"
                        )));
                    }
                }
            }
            _ => {}
        }
        json_patch::patch(obj, std::slice::from_ref(op)).map_err(|mut e| {
            // Applied one at a time, each operation is json-patch's operation 0.
            e.operation = index;
            ApiError::patch_rejected(e)
        })?;
    }
    Ok(())
}

/// The length of `value`'s compact JSON encoding, counted without building it.
fn json_size(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
