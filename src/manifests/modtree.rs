//! The module tree of a crate as rustc finds its files: the file a `mod x;` item includes
//! (`x.rs`, `x/mod.rs`, or its `#[path]`), and paths normalized lexically. Knows nothing of
//! `cfg` or of the items inside the modules: callers say which `mod` items are left out.

use std::path::{Path, PathBuf};

/// Whether `p` is a file whose `mod x;` items are looked up beside it (`mod.rs`, `lib.rs`,
/// `main.rs`) rather than in a directory named after it.
pub fn is_mod_rs(p: &Path) -> bool {
    matches!(
        p.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs" | "main.rs")
    )
}

/// The file a `#[path = "..."]` attribute names, if the attributes have one.
pub fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        let nv = a.meta.require_name_value().ok()?;
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

/// Calls `found(file, excluded)` for every file that the `mod x;` items of `file` (and of its
/// inline modules) include: `foo.rs` and `foo/mod.rs` for a plain `mod foo;`, the `#[path]`
/// for one with the attribute. The flag `found` gets is true under a `mod` whose attributes
/// `left_out` says cargo leaves out (the mark [`crate::manifests::cfg::strip`] puts there).
pub fn mod_files(
    file: &Path,
    items: &[syn::Item],
    left_out: &dyn Fn(&[syn::Attribute]) -> bool,
    found: &mut dyn FnMut(PathBuf, bool),
) {
    let dir = if is_mod_rs(file) {
        file.parent().unwrap_or(Path::new("")).to_path_buf()
    } else {
        file.with_extension("")
    };
    mod_files_in(&dir, items, false, left_out, found);
}

fn mod_files_in(
    dir: &Path,
    items: &[syn::Item],
    inside_left_out: bool,
    left_out: &dyn Fn(&[syn::Attribute]) -> bool,
    found: &mut dyn FnMut(PathBuf, bool),
) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let out = inside_left_out || left_out(&m.attrs);
            let name = m.ident.to_string();
            let path_attr = path_attribute(&m.attrs);
            match &m.content {
                Some((_, inner)) => {
                    let d = match &path_attr {
                        Some(p) => dir.join(p),
                        None => dir.join(&name),
                    };
                    mod_files_in(&d, inner, out, left_out, found);
                }
                None => match &path_attr {
                    Some(p) => found(normalize(&dir.join(p)), out),
                    None => {
                        found(normalize(&dir.join(format!("{name}.rs"))), out);
                        found(normalize(&dir.join(&name).join("mod.rs")), out);
                    }
                },
            }
        }
    }
}

/// Lexically normalises `a/./b/../c` to `a/c`.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}
