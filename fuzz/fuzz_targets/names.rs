//! Name validators and the resource name model must never panic, whatever the flags hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbuilder::model::{Resource, gvk, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(5, '\n');
    let group = parts.next().unwrap_or("");
    let domain = parts.next().unwrap_or("");
    let version = parts.next().unwrap_or("");
    let kind = parts.next().unwrap_or("");
    let plural = parts.next();
    let _ = validate::dns1123_label(text);
    let _ = validate::dns1123_subdomain(text);
    let _ = validate::dns1035_label(text);
    let _ = gvk::validate_project_name(text);
    let _ = gvk::kube_derive_plural(text);
    if let Ok(r) = Resource::custom(group, domain, version, kind, plural, true) {
        let _ = (r.crd_file_name(), r.webhook_path_suffix(), r.module(), r.snake(), r.kebab());
    }
    let _ = Resource::builtin(group, version, kind);
});
