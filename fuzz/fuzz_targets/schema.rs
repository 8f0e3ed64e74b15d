//! Arbitrary bytes as a Rust source file through the whole CRD path must give CRDs or
//! diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbuilder::manifests::{SourceSet, crds_from_sources};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = SourceSet::parse_text(std::path::Path::new("fuzz.rs"), text.to_string()) {
        let set = SourceSet { files: vec![file] };
        let _ = crds_from_sources(&set);
    }
});
