//! The marker parser and the RBAC / webhook generators must never panic: arbitrary text is
//! read as a Rust file's comments, and every `+kubebuilder:` line is parsed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbuilder::manifests::{markers, rbac, webhook};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Feed both the raw text and the text as marker comments.
    let commented: String = text.lines().map(|l| format!("// +kubebuilder:{l}\n")).collect();
    for t in [text, commented.as_str()] {
        let (found, _errors) = markers::collect_text(std::path::Path::new("fuzz.rs"), t);
        let _ = rbac::generate(&found, false);
        let _ = rbac::generate(&found, true);
        let _ = webhook::generate(&found);
    }
});
