//! The API server's verdict on `crd()`'s output: rsbuilder's own `apiserver_rules`, run on the
//! JSON kube-derive produced. A kind whose `crd()` breaks a rule must be refused by rsbuilder;
//! a kind that rsbuilder turns into the same CRD is a silent acceptance, counted with the
//! mismatches.
//!
//! The rules live in the library (src/manifests/crd/apiserver_rules) so that `manifests`
//! refuses exactly what is counted here; their unit tests, written against the API server's
//! source, are the independent check.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion;
use rsbuilder::manifests::crd::apiserver_rules;
use serde_json::Value;

/// The first rule `crd` breaks, as `"<what> at <JSON path>: <rule>"`; `None` when none of the
/// checked rules is broken. Versions whose JSON is not a CRD version are named as such.
pub fn rejects(crd: &Value) -> Option<String> {
    let versions = crd["spec"]["versions"].as_array()?;
    for (i, v) in versions.iter().enumerate() {
        let mut v = v.clone();
        // Hand-written test CRDs may leave out what kube-derive always sets.
        if let Some(o) = v.as_object_mut() {
            o.entry("served").or_insert(Value::Bool(true));
            o.entry("storage").or_insert(Value::Bool(true));
        }
        let version: CustomResourceDefinitionVersion = match serde_json::from_value(v) {
            Ok(version) => version,
            Err(e) => return Some(format!("spec.versions[{i}]: not a CRD version: {e}")),
        };
        if let Some(first) = apiserver_rules::check_version(&version).first() {
            return Some(first.to_string());
        }
    }
    None
}
