//! Scalars from macros: `format!`, `concat!`, `stringify!` and `include_str!`.

use super::context::Ctx;
use super::scalar::{Scalar, Want};
use super::{Res, scalar};
use crate::manifests::crd::MAX_CRD_BYTES;
use crate::manifests::crd::resolve::MAX_INCLUDED_BYTES;

fn comma_args(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<Vec<syn::Expr>> {
    mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .map(|p| p.into_iter().collect())
        .map_err(|_| cx.refuse(mac, "cannot read the macro's arguments"))
}

pub(super) fn macro_scalar(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<Scalar> {
    let name = mac
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    match name.as_str() {
        "format" => {
            let args = comma_args(cx, mac)?;
            let Some((fmt, rest)) = args.split_first() else {
                return Err(cx.refuse(mac, "`format!` without a format string"));
            };
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(fmt),
                ..
            }) = fmt
            else {
                return Err(cx.refuse(mac, "the format string is not a literal"));
            };
            let fmt = fmt.value();
            let mut out = String::new();
            let mut args = rest.iter();
            let mut chars = fmt.chars().peekable();
            while let Some(ch) = chars.next() {
                match ch {
                    '{' if chars.peek() == Some(&'{') => {
                        chars.next();
                        out.push('{');
                    }
                    '}' if chars.peek() == Some(&'}') => {
                        chars.next();
                        out.push('}');
                    }
                    '{' if chars.peek() == Some(&'}') => {
                        chars.next();
                        let Some(a) = args.next() else {
                            return Err(cx.invalid(mac, "more `{}` than arguments"));
                        };
                        if matches!(a, syn::Expr::Assign(_)) {
                            return Err(
                                cx.refuse(mac, "named `format!` arguments are not evaluated")
                            );
                        }
                        out.push_str(&scalar(cx, a, Want::Any)?.display(cx, a)?);
                    }
                    '{' | '}' => {
                        return Err(cx.refuse(
                            mac,
                            "only `{}`, `{{` and `}}` are evaluated in a format string",
                        ));
                    }
                    c => out.push(c),
                }
            }
            if args.next().is_some() {
                return Err(cx.invalid(mac, "more arguments than `{}`"));
            }
            Ok(Scalar::Str(out))
        }
        "concat" => {
            let mut out = String::new();
            for e in comma_args(cx, mac)? {
                if let syn::Expr::Macro(inner) = &e {
                    // `concat!(include_str!("a.md"), stringify!(X))`: macros expanding to
                    // literals are expanded first, as rustc does.
                    match macro_scalar(cx, &inner.mac)? {
                        Scalar::Str(text) => out.push_str(&text),
                        _ => return Err(cx.refuse(&e, "this macro in `concat!` is not evaluated")),
                    }
                    continue;
                }
                let syn::Expr::Lit(l) = &e else {
                    return Err(cx.invalid(&e, "`concat!` takes literals"));
                };
                match &l.lit {
                    syn::Lit::Str(s) => out.push_str(&s.value()),
                    syn::Lit::Char(c) => out.push(c.value()),
                    syn::Lit::Bool(b) => out.push_str(&b.value.to_string()),
                    syn::Lit::Int(i)
                        if i.suffix().is_empty() && i.to_string() == i.base10_digits() =>
                    {
                        out.push_str(i.base10_digits())
                    }
                    _ => return Err(cx.refuse(&e, "this `concat!` literal is not evaluated")),
                }
            }
            Ok(Scalar::Str(out))
        }
        "stringify" => stringify(cx, mac).map(Scalar::Str),
        "include_str" => include_str(cx, mac).map(Scalar::Str),
        _ => Err(cx.refuse(mac, "this macro is not evaluated")),
    }
}

/// `stringify!(...)` of identifiers and literals, which rustc writes separated by one space;
/// punctuation is refused (rustc's spacing around it is its own).
fn stringify(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<String> {
    let mut parts = Vec::new();
    for t in mac.tokens.clone() {
        match t {
            proc_macro2::TokenTree::Ident(i) => parts.push(i.to_string()),
            proc_macro2::TokenTree::Literal(l) => parts.push(l.to_string()),
            _ => {
                return Err(cx.refuse(
                    mac,
                    "`stringify!` is evaluated for identifiers and literals only (rustc spaces punctuation its own way)",
                ));
            }
        }
    }
    Ok(parts.join(" "))
}

/// `include_str!("path")`: the file's text, the path taken relative to the source file as
/// rustc takes it; only a file inside the crate (under the directory of the nearest
/// Cargo.toml above the source file, or the source file's directory without one) is read.
fn include_str(cx: &Ctx<'_, '_>, mac: &syn::Macro) -> Res<String> {
    use crate::manifests::modtree::normalize;
    let args = comma_args(cx, mac)?;
    let [
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(path),
            ..
        }),
    ] = &args[..]
    else {
        return Err(cx.refuse(
            mac,
            "`include_str!` is evaluated with a string literal path",
        ));
    };
    let source = &cx.krate.modules[cx.m].file.path;
    let dir = source.parent().unwrap_or(std::path::Path::new(""));
    let absolute = |p: &std::path::Path| normalize(&std::path::absolute(p).unwrap_or(p.into()));
    let target = absolute(&dir.join(path.value()));
    let root = crate::manifests::cfg::features::find_manifest(dir)
        .and_then(|m| m.parent().map(absolute))
        .unwrap_or_else(|| absolute(dir));
    if !target.starts_with(&root) {
        return Err(cx.refuse(
            mac,
            &format!(
                "`include_str!` of a file outside the crate ({}) is not read",
                root.display()
            ),
        ));
    }
    read_inside(cx, mac, &root, &target)
}

/// The text of `target`, a path lexically under `root`, read only when it resolves inside
/// `root` to a regular file. A symbolic link on the way whose target leads out of the crate
/// (`/proc/self/environ`, a file next to the crate) is an error that names the link and never
/// the target's contents; it is [`Cause::Invalid`](crate::manifests::diag::Cause), so
/// `--evaluate auto` does not hand it to rustc, which would follow the link. The file is opened
/// beneath a handle on `root` (cap-std), so a link swapped in after the check cannot lead out
/// either.
fn read_inside(
    cx: &Ctx<'_, '_>,
    mac: &syn::Macro,
    root: &std::path::Path,
    target: &std::path::Path,
) -> Res<String> {
    let out_of_crate = |link: &std::path::Path| {
        cx.invalid(
            mac,
            &format!(
                "`include_str!` goes through the symbolic link {}, which leads outside the crate ({}); rsbuilder does not read it",
                link.display(),
                root.display()
            ),
        )
    };
    // The first link on the way whose resolved target is outside the crate.
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let rel = target.strip_prefix(root).unwrap_or(target);
    let mut walked = root.to_path_buf();
    for part in rel.components() {
        walked.push(part);
        if walked.is_symlink() {
            match std::fs::canonicalize(&walked) {
                Ok(real) if real.starts_with(&real_root) => {}
                // A dangling link, or one that leads out.
                _ => return Err(out_of_crate(&walked)),
            }
        }
    }
    // A description longer than a CRD can hold is refused unread, and so is a file past the
    // run's budget, so hostile input costs no more memory than CRDs that can be written.
    let cannot = |why: &dyn std::fmt::Display| {
        cx.invalid(
            mac,
            &format!("`include_str!` cannot read {}: {why}", target.display()),
        )
    };
    let dir = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())
        .map_err(|e| cannot(&e))?;
    let size = dir.metadata(rel).map_err(|e| cannot(&e))?;
    let limit = MAX_CRD_BYTES as u64;
    if size.is_file() && size.len() > limit {
        return Err(cannot(&format!(
            "it is larger than {} KiB, more than one CRD holds (etcd's request limit), so no CRD with it as a description can be written",
            MAX_CRD_BYTES >> 10
        )));
    }
    // The file's size is taken from the run's budget before it is read, so threads deriving
    // other kinds at the same time cannot pass the budget together.
    if let Some(counter) = cx.krate.included
        && counter.fetch_add(size.len(), std::sync::atomic::Ordering::Relaxed) + size.len()
            > MAX_INCLUDED_BYTES
    {
        return Err(cannot(&format!(
            "with it, the files `include_str!` reads in this run pass {} MiB, more than the descriptions of CRDs that can be written hold",
            MAX_INCLUDED_BYTES >> 20
        )));
    }
    let text = crate::engine::regular::read_in_at_most(&dir, rel, limit).map_err(|e| cannot(&e))?;
    Ok(text)
}
