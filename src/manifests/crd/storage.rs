//! The storage version of a kind whose versions the crate merges at run time.
//!
//! A crate with several versions of one kind usually writes them out with
//! `kube::core::crd::merge_crds(vec![v1::Foo::crd(), v2::Foo::crd()], "v1")` (in a crdgen
//! binary, `main`, or `build.rs`). `merge_crds` marks the named version as stored and every
//! other as not, whatever their `#[kube(storage)]` says, and orders them: the stored one
//! first, then the rest of the list from its end. rsbuilder finds such calls in the sources
//! and follows them; where the crate has none, the choice comes from
//! `[package.metadata.rsbuilder] storage-versions = { "Foo.example.com" = "v1" }` or the
//! `--storage-version Foo.example.com=v1` flag ([`StorageChoice::source`] says which), and
//! else from the attributes (exactly one version with `storage` left true).

use std::path::{Path, PathBuf};

use syn::visit::Visit;

use super::VersionSite;
use super::resolve::{Crate, LocalValue, ModId, Resolved};
use crate::manifests::diag::Diagnostic;
use crate::manifests::source::SourceSet;

/// The stored version of one kind, and what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageChoice {
    /// The version `merge_crds` is given (`v1`).
    pub version: String,
    /// Who decided, for messages: `merge_crds at src/bin/crdgen.rs:12`,
    /// `[package.metadata.rsbuilder] storage-versions in Cargo.toml`, `--storage-version`.
    pub source: String,
    /// The versions in the order the `merge_crds` call lists them, when a call decided.
    pub order: Option<Vec<String>>,
}

/// One `merge_crds(<list>, "vN")` call found in the sources.
#[derive(Debug, Clone)]
pub struct MergeCall {
    /// Where the call is.
    pub file: PathBuf,
    /// 1-based line of the call.
    pub line: usize,
    /// The version literal.
    pub version: String,
    /// The root types whose `crd()` the list holds, in list order.
    pub targets: Vec<Target>,
}

/// A root type named in a `merge_crds` list: the crate root whose module tree declares it
/// (`None`: the library, named from a binary or build script by its crate name) and its
/// path from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The crate root file, or `None` for "the library".
    pub crate_root: Option<PathBuf>,
    /// Module path and type name.
    pub path: Vec<String>,
}

impl Target {
    fn matches(&self, site: &VersionSite) -> bool {
        if self.path != site.rust_path {
            return false;
        }
        match &self.crate_root {
            Some(root) => *root == site.crate_root,
            None => site.crate_root.file_name().is_some_and(|n| n == "lib.rs"),
        }
    }
}

/// Every `merge_crds(<list>, "<version>")` call in the functions of `krate` and of `extra`
/// (`build.rs`): the version and the `X::crd()` calls of the list, followed through a local
/// variable (`let mut crds = vec![…]; crds.push(…); merge_crds(crds, "v1")`). Functions marked
/// `#[test]` are not part of it. A call whose version is not a string literal is left out.
pub fn merge_calls(krate: &Crate<'_>, extra: &[(PathBuf, String)]) -> Vec<MergeCall> {
    let mut out = Vec::new();
    scan_crate(krate, &mut out);
    for (path, text) in extra {
        let Ok(file) = SourceSet::parse_text(path, text.clone()) else {
            continue;
        };
        let set = SourceSet { files: vec![file] };
        let other = Crate::build(&set);
        scan_crate(&other, &mut out);
    }
    out
}

fn scan_crate(krate: &Crate<'_>, out: &mut Vec<MergeCall>) {
    for (m, module) in krate.modules.iter().enumerate() {
        let mut bodies: Vec<(&syn::Block, &[syn::Attribute])> = Vec::new();
        for v in module.values.values() {
            if let LocalValue::Fn(f) = v {
                bodies.push((&f.block, &f.attrs));
            }
        }
        for imp in &module.impls {
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item {
                    bodies.push((&f.block, &f.attrs));
                }
            }
        }
        for (block, attrs) in bodies {
            if attrs
                .iter()
                .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "test"))
            {
                continue;
            }
            let mut calls = Calls::default();
            calls.visit_block(block);
            for call in calls.merges {
                if let Some(mc) = follow(krate, m, block, call) {
                    out.push(mc);
                }
            }
        }
    }
}

/// `merge_crds(…)` calls of one function body.
#[derive(Default)]
struct Calls<'b> {
    merges: Vec<&'b syn::ExprCall>,
}

impl<'b> Visit<'b> for Calls<'b> {
    fn visit_expr_call(&mut self, call: &'b syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && p.path
                .segments
                .last()
                .is_some_and(|s| s.ident == "merge_crds")
            && call.args.len() == 2
        {
            self.merges.push(call);
        }
        syn::visit::visit_expr_call(self, call);
    }
}

/// The `X::crd()` (and `<X as CustomResourceExt>::crd()`) type paths in an expression, in
/// order, looking into `vec![…]`.
#[derive(Default)]
struct CrdCalls {
    paths: Vec<syn::Path>,
    /// Single-identifier paths used as values (a local variable holding the list).
    locals: Vec<String>,
}

impl<'e> Visit<'e> for CrdCalls {
    fn visit_expr_call(&mut self, call: &'e syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && call.args.is_empty()
            && p.path.segments.last().is_some_and(|s| s.ident == "crd")
        {
            if let Some(q) = &p.qself {
                if let syn::Type::Path(tp) = &*q.ty {
                    self.paths.push(tp.path.clone());
                }
            } else if p.path.segments.len() >= 2 {
                let mut ty = p.path.clone();
                ty.segments.pop();
                let last = ty.segments.pop().expect("two segments").into_value();
                ty.segments.push(last);
                self.paths.push(ty);
            }
            return;
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_path(&mut self, p: &'e syn::ExprPath) {
        if p.qself.is_none() && p.path.segments.len() == 1 && p.path.leading_colon.is_none() {
            self.locals.push(p.path.segments[0].ident.to_string());
        }
    }

    fn visit_macro(&mut self, mac: &'e syn::Macro) {
        if mac.path.is_ident("vec") {
            use syn::parse::Parser;
            let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
            if let Ok(items) = parser.parse2(mac.tokens.clone()) {
                for e in &items {
                    self.visit_expr(e);
                }
            }
        }
    }
}

/// Follows one `merge_crds` call of module `m`'s function `block`: its version literal and its
/// list, through a local variable when the list is one.
fn follow(
    krate: &Crate<'_>,
    m: ModId,
    block: &syn::Block,
    call: &syn::ExprCall,
) -> Option<MergeCall> {
    let version = match &call.args[1] {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.value(),
        syn::Expr::Reference(r) => match &*r.expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s.value(),
            _ => return None,
        },
        _ => return None,
    };
    let mut found = CrdCalls::default();
    found.visit_expr(&call.args[0]);
    let mut paths = found.paths;
    for local in found.locals {
        paths.extend(local_list(block, &local));
    }
    let targets = paths
        .iter()
        .flat_map(|p| targets(krate, m, p))
        .collect::<Vec<_>>();
    let start = syn::spanned::Spanned::span(call).start();
    Some(MergeCall {
        file: krate.modules[m].file.path.clone(),
        line: start.line.max(1),
        version,
        targets,
    })
}

/// The `X::crd()` paths that reach the local variable `name` of `block`: its `let`
/// initializer and the arguments of `name.push(…)`, `name.extend(…)` and `name.append(…)`.
fn local_list(block: &syn::Block, name: &str) -> Vec<syn::Path> {
    struct Uses<'n> {
        name: &'n str,
        found: CrdCalls,
    }
    impl<'e> Visit<'e> for Uses<'_> {
        fn visit_local(&mut self, l: &'e syn::Local) {
            let binds = match &l.pat {
                syn::Pat::Ident(i) => i.ident == self.name,
                syn::Pat::Type(t) => matches!(&*t.pat, syn::Pat::Ident(i) if i.ident == self.name),
                _ => false,
            };
            if binds && let Some(init) = &l.init {
                self.found.visit_expr(&init.expr);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_method_call(&mut self, c: &'e syn::ExprMethodCall) {
            let on_name = matches!(&*c.receiver, syn::Expr::Path(p) if p.path.is_ident(self.name));
            if on_name && matches!(c.method.to_string().as_str(), "push" | "extend" | "append") {
                for a in &c.args {
                    self.found.visit_expr(a);
                }
            }
            syn::visit::visit_expr_method_call(self, c);
        }
    }
    let mut uses = Uses {
        name,
        found: CrdCalls::default(),
    };
    uses.visit_block(block);
    uses.found.paths
}

/// Where a root type path written in module `m` may lead (several candidates through glob
/// imports).
fn targets(krate: &Crate<'_>, m: ModId, path: &syn::Path) -> Vec<Target> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let Some((name, prefix)) = segs.split_last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let from_prefix = |prefix: &[String], leading: bool, out: &mut Vec<Target>| {
        match krate.resolve_prefix(m, prefix, leading) {
            Some(Resolved::Module(id)) => {
                let mut p = krate.modules[id].path.clone();
                p.push(name.clone());
                out.push(Target {
                    crate_root: Some(krate.modules[krate.modules[id].root].file.path.clone()),
                    path: p,
                });
            }
            Some(Resolved::External(ext)) => {
                // `my_operator::v1::Foo` from a binary or build script: the library.
                let mut p: Vec<String> = ext.split("::").skip(1).map(String::from).collect();
                p.push(name.clone());
                out.push(Target {
                    crate_root: None,
                    path: p,
                });
            }
            _ => {}
        }
    };
    if !prefix.is_empty() {
        from_prefix(prefix, path.leading_colon.is_some(), &mut out);
        return out;
    }
    // A bare name: declared here, imported by name, or through a glob.
    from_prefix(&[], false, &mut out);
    for imp in &krate.modules[m].imports {
        match &imp.name {
            Some(n) if n == name => {
                if let Some((_, p)) = imp.path.split_last() {
                    let imported_name = imp.path.last().cloned().unwrap_or_default();
                    let before = out.len();
                    from_prefix(p, imp.leading_colon, &mut out);
                    for t in &mut out[before..] {
                        if let Some(last) = t.path.last_mut() {
                            *last = imported_name.clone();
                        }
                    }
                }
            }
            None => from_prefix(&imp.path, imp.leading_colon, &mut out),
            _ => {}
        }
    }
    out
}

/// The storage version of the kind `name` (`Kind.group`) with these versions: from a
/// `merge_crds` call that lists one of them, or from `settings` (metadata or flag), `None`
/// when neither (the attributes decide). Errors, at the call: calls that name different
/// versions, or a call that disagrees with the metadata or flag.
pub fn decide(
    name: &str,
    sites: &[VersionSite],
    calls: &[MergeCall],
    settings: &super::Settings,
) -> Result<Option<StorageChoice>, Diagnostic> {
    let mine: Vec<&MergeCall> = calls
        .iter()
        .filter(|c| c.targets.iter().any(|t| sites.iter().any(|s| t.matches(s))))
        .collect();
    let configured = settings.storage.get(name);
    let Some(first) = mine.first() else {
        return Ok(configured.cloned());
    };
    let at = |c: &MergeCall| format!("{}:{}", c.file.display(), c.line);
    if let Some(other) = mine.iter().find(|c| c.version != first.version) {
        return Err(Diagnostic::new(
            &other.file,
            other.line,
            1,
            format!(
                "merge_crds stores {name} as {} here but as {} at {}: rsbuilder cannot tell which CRD the crate writes",
                other.version,
                first.version,
                at(first)
            ),
        )
        .with_help("merge the versions of a kind in one place, or make the calls agree"));
    }
    if let Some(c) = configured
        && c.version != first.version
    {
        return Err(Diagnostic::new(
            &first.file,
            first.line,
            1,
            format!(
                "merge_crds stores {name} as {} here, but {} says {}",
                first.version, c.source, c.version
            ),
        )
        .with_help("make them agree, or drop the setting: rsbuilder follows the merge_crds call"));
    }
    let order: Vec<String> = first
        .targets
        .iter()
        .filter_map(|t| sites.iter().find(|s| t.matches(s)))
        .map(|s| s.version.clone())
        .collect();
    Ok(Some(StorageChoice {
        version: first.version.clone(),
        source: format!("merge_crds at {}", at(first)),
        order: Some(order),
    }))
}

/// Reads `[package.metadata.rsbuilder] storage-versions` of the crate's `Cargo.toml`:
/// `{ "Kind.group" = "vN" }`. A missing file or table gives nothing; a value that is not a
/// string is an error naming the file.
pub fn from_metadata(cargo_toml: &Path) -> Result<Vec<(String, StorageChoice)>, String> {
    let text = match crate::engine::regular::read_path(cargo_toml) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: cannot read: {e}", cargo_toml.display())),
    };
    let doc: toml::Table = toml::from_str(&text).map_err(|e| {
        format!(
            "{}: not valid TOML: {}",
            cargo_toml.display(),
            crate::engine::cargo_dep::toml_error(&text, &e)
        )
    })?;
    let Some(table) = doc
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("rsbuilder"))
        .and_then(|r| r.get("storage-versions"))
    else {
        return Ok(Vec::new());
    };
    let Some(table) = table.as_table() else {
        return Err(format!(
            "{}: [package.metadata.rsbuilder] storage-versions must be a table like {{ \"Foo.example.com\" = \"v1\" }}",
            cargo_toml.display()
        ));
    };
    let mut out = Vec::new();
    for (kind, v) in table {
        let Some(version) = v.as_str() else {
            return Err(format!(
                "{}: [package.metadata.rsbuilder] storage-versions.\"{kind}\" must be a version string like \"v1\"",
                cargo_toml.display()
            ));
        };
        out.push((
            kind.clone(),
            StorageChoice {
                version: version.to_string(),
                source: format!(
                    "[package.metadata.rsbuilder] storage-versions in {}",
                    cargo_toml.display()
                ),
                order: None,
            },
        ));
    }
    Ok(out)
}

/// Parses one `--storage-version Kind.group=vN` flag value.
pub fn from_flag(value: &str) -> Result<(String, StorageChoice), String> {
    let Some((kind, version)) = value.split_once('=') else {
        return Err(format!(
            "--storage-version {value}: expected Kind.group=version, like Foo.example.com=v1"
        ));
    };
    let (kind, version) = (kind.trim(), version.trim());
    if kind.is_empty() || version.is_empty() || !kind.contains('.') {
        return Err(format!(
            "--storage-version {value}: expected Kind.group=version, like Foo.example.com=v1"
        ));
    }
    Ok((
        kind.to_string(),
        StorageChoice {
            version: version.to_string(),
            source: "--storage-version".into(),
            order: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{KindOutcome, Settings, derive_kinds};
    use super::*;

    const HEADER: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

    /// `Thing` in versions v1 and v2, neither marked `storage = false`.
    fn lib() -> String {
        let v = |ver: &str| {
            format!(
                "pub mod {ver} {{ use super::*;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{ver}\", kind = \"Thing\")]\npub struct ThingSpec {{ pub a: String }} }}\n"
            )
        };
        format!("{HEADER}{}{}", v("v1"), v("v2"))
    }

    fn kinds(files: &[(&str, String)], settings: &Settings) -> Vec<KindOutcome> {
        let set = SourceSet {
            files: files
                .iter()
                .map(|(p, t)| SourceSet::parse_text(Path::new(p), t.clone()).unwrap())
                .collect(),
        };
        derive_kinds(&set, settings)
    }

    fn versions(k: &KindOutcome) -> Vec<(String, bool)> {
        let crd = &k.result.as_ref().unwrap_or_else(|e| panic!("{e:?}")).crd;
        crd.spec
            .versions
            .iter()
            .map(|v| (v.name.clone(), v.storage))
            .collect()
    }

    #[test]
    fn a_merge_crds_call_in_a_binary_decides_the_storage_version() {
        let bin = "use kube::CustomResourceExt;\nuse my_op::{v1, v2};\nfn main() {\n    let crd = kube::core::crd::merge_crds(vec![v1::Thing::crd(), v2::Thing::crd()], \"v1\").unwrap();\n    println!(\"{crd:?}\");\n}\n";
        let k = kinds(
            &[("src/lib.rs", lib()), ("src/bin/crdgen.rs", bin.into())],
            &Settings::default(),
        );
        assert_eq!(k.len(), 1);
        assert_eq!(
            versions(&k[0]),
            [("v1".to_string(), true), ("v2".to_string(), false)]
        );
        let choice = k[0].storage.as_ref().unwrap();
        assert_eq!(choice.source, "merge_crds at src/bin/crdgen.rs:4");
        assert_eq!(
            choice.order.as_deref(),
            Some(&["v1".to_string(), "v2".to_string()][..])
        );
    }

    #[test]
    fn a_merge_crds_call_through_a_local_list_is_followed_in_its_order() {
        let lib = format!(
            "{}\npub fn all() -> kube::core::crd::v1::CustomResourceDefinition {{\n    let mut crds = vec![v2::Thing::crd()];\n    crds.push(<v1::Thing as kube::CustomResourceExt>::crd());\n    kube::core::crd::merge_crds(crds, \"v2\").unwrap()\n}}\n#[test]\nfn t() {{ kube::core::crd::merge_crds(vec![v1::Thing::crd()], \"v1\").unwrap(); }}\n",
            lib()
        );
        let k = kinds(&[("src/lib.rs", lib)], &Settings::default());
        // merge_crds puts the stored version first, then the rest of the list from its end;
        // the #[test] function is not part of the crate's output.
        assert_eq!(
            versions(&k[0]),
            [("v2".to_string(), true), ("v1".to_string(), false)]
        );
        assert!(
            k[0].storage
                .as_ref()
                .unwrap()
                .source
                .starts_with("merge_crds at src/lib.rs:")
        );
    }

    #[test]
    fn metadata_or_a_flag_decides_without_a_call_and_must_agree_with_one() {
        let mut settings = Settings::default();
        let (name, choice) = from_flag("Thing.t.example.com=v2").unwrap();
        settings.storage.insert(name, choice);
        let k = kinds(&[("src/lib.rs", lib())], &settings);
        assert_eq!(
            versions(&k[0]),
            [("v2".to_string(), true), ("v1".to_string(), false)]
        );
        assert_eq!(k[0].storage.as_ref().unwrap().source, "--storage-version");

        let bin = "fn main() { kube::core::crd::merge_crds(vec![my_op::v1::Thing::crd(), my_op::v2::Thing::crd()], \"v1\").unwrap(); }\n";
        let k = kinds(
            &[("src/lib.rs", lib()), ("src/bin/gen.rs", bin.into())],
            &settings,
        );
        let err = k[0].result.as_ref().unwrap_err();
        assert_eq!(
            err[0].to_string(),
            "src/bin/gen.rs:1:1: merge_crds stores Thing.t.example.com as v1 here, but --storage-version says v2\n  help: make them agree, or drop the setting: rsbuilder follows the merge_crds call"
        );

        let (name, choice) = from_flag("Thing.t.example.com=v3").unwrap();
        settings.storage.insert(name, choice);
        let k = kinds(&[("src/lib.rs", lib())], &settings);
        let err = k[0].result.as_ref().unwrap_err();
        assert!(
            err[0].message.contains("--storage-version makes v3 the storage version of Thing.t.example.com, which has no such version (v1, v2)"),
            "{err:?}"
        );
        assert!(from_flag("Thing=v1").is_err());
        assert!(from_flag("Thing.t.example.com").is_err());
    }

    #[test]
    fn without_a_decision_two_storage_versions_name_every_way_out() {
        let k = kinds(&[("src/lib.rs", lib())], &Settings::default());
        let err = k[0].result.as_ref().unwrap_err();
        assert!(
            err[0]
                .message
                .contains("2 versions of Thing.t.example.com are marked as storage versions"),
            "{err:?}"
        );
        let help = err[0].help.as_deref().unwrap();
        assert!(
            help.contains("storage = false")
                && help.contains("[package.metadata.rsbuilder]")
                && help.contains("--storage-version Thing.t.example.com=v1"),
            "{help}"
        );
    }

    #[test]
    fn storage_versions_are_read_from_the_package_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let toml = dir.path().join("Cargo.toml");
        std::fs::write(&toml, "[package]\nname = \"x\"\n\n[package.metadata.rsbuilder]\nstorage-versions = { \"Thing.t.example.com\" = \"v2\" }\n").unwrap();
        let found = from_metadata(&toml).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "Thing.t.example.com");
        assert_eq!(found[0].1.version, "v2");
        assert!(
            found[0]
                .1
                .source
                .starts_with("[package.metadata.rsbuilder] storage-versions in ")
        );
        std::fs::write(
            &toml,
            "[package.metadata.rsbuilder]\nstorage-versions = { \"Thing.t.example.com\" = 2 }\n",
        )
        .unwrap();
        assert!(
            from_metadata(&toml)
                .unwrap_err()
                .contains("must be a version string")
        );
        assert!(
            from_metadata(&dir.path().join("none.toml"))
                .unwrap()
                .is_empty()
        );
    }
}
