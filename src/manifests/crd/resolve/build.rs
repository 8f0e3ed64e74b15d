//! Building the module table of the sources: one [`Module`] per module of each crate (file or
//! inline), with its types, values, impls and `use` bindings, following `mod` items to their
//! files and keeping items a `cfg` leaves undecided aside with the predicate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Crate, Import, LocalItem, LocalValue, ModId, Module, Undecided};
use crate::manifests::cfg;
use crate::manifests::modtree::{is_mod_rs, mod_files, normalize, path_attribute};
use crate::manifests::source::{SourceFile, SourceSet};

impl<'a> Crate<'a> {
    /// Builds the module tree of every crate in `sources`.
    pub fn build(sources: &'a SourceSet) -> Self {
        let by_path: BTreeMap<PathBuf, &'a SourceFile> = sources
            .files
            .iter()
            .map(|f| (normalize(&f.path), f))
            .collect();
        // Files included by another file's `mod x;` are not roots.
        let mut included = std::collections::BTreeSet::new();
        for f in &sources.files {
            mod_files(&f.path, &f.ast.items, &cfg::left_out, &mut |p, _| {
                included.insert(p);
            });
        }
        let mut krate = Crate::default();
        for f in &sources.files {
            if included.contains(&normalize(&f.path)) {
                continue;
            }
            let id = krate.modules.len();
            krate.push_module(f, Vec::new(), None, id);
            if let Some(cfg::Mark::Undecided(predicate, span)) = cfg::mark(&f.ast.attrs) {
                krate.modules[id].undecided = Some(Undecided {
                    predicate,
                    file: f.path.clone(),
                    span,
                });
            }
            let dir = f.path.parent().unwrap_or(Path::new("")).to_path_buf();
            krate.fill(id, &f.ast.items, &dir, &by_path, 0);
        }
        krate
    }

    fn push_module(
        &mut self,
        file: &'a SourceFile,
        path: Vec<String>,
        parent: Option<ModId>,
        root: ModId,
    ) -> ModId {
        self.modules.push(Module {
            file,
            path,
            parent,
            root,
            children: BTreeMap::new(),
            types: BTreeMap::new(),
            type_order: Vec::new(),
            values: BTreeMap::new(),
            imports: Vec::new(),
            impls: Vec::new(),
            macros: Vec::new(),
            public: true,
            undecided: None,
            undecided_names: BTreeMap::new(),
            undecided_items: Vec::new(),
        });
        self.modules.len() - 1
    }

    /// Fills module `id` from `items`; `dir` is where its child module files live.
    fn fill(
        &mut self,
        id: ModId,
        items: &'a [syn::Item],
        dir: &Path,
        files: &BTreeMap<PathBuf, &'a SourceFile>,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        for item in items {
            match cfg::mark(cfg::item_attrs(item)) {
                Some(cfg::Mark::Excluded) => continue,
                Some(cfg::Mark::Undecided(predicate, span)) => {
                    let u = Undecided {
                        predicate,
                        file: self.modules[id].file.path.clone(),
                        span,
                    };
                    self.undecided_item(id, item, u, dir, files, depth);
                    continue;
                }
                None => {}
            }
            match item {
                syn::Item::Struct(s) => {
                    self.modules[id]
                        .types
                        .insert(s.ident.to_string(), LocalItem::Struct(s));
                    self.modules[id].type_order.push(s.ident.to_string());
                }
                syn::Item::Enum(e) => {
                    self.modules[id]
                        .types
                        .insert(e.ident.to_string(), LocalItem::Enum(e));
                    self.modules[id].type_order.push(e.ident.to_string());
                }
                syn::Item::Type(t) => {
                    self.modules[id]
                        .types
                        .insert(t.ident.to_string(), LocalItem::Alias(t));
                    self.modules[id].type_order.push(t.ident.to_string());
                }
                syn::Item::Fn(f) => {
                    self.modules[id]
                        .values
                        .insert(f.sig.ident.to_string(), LocalValue::Fn(f));
                }
                syn::Item::Const(c) => {
                    self.modules[id]
                        .values
                        .insert(c.ident.to_string(), LocalValue::Const(c));
                }
                syn::Item::Static(s) => {
                    self.modules[id]
                        .values
                        .insert(s.ident.to_string(), LocalValue::Static(s));
                }
                syn::Item::Impl(i) => self.modules[id].impls.push(i),
                syn::Item::Macro(mac) => self.modules[id].macros.push(mac),
                syn::Item::Use(u) => self.modules[id].imports.extend(use_imports(u)),
                syn::Item::Mod(m) => {
                    if let Some(child) = self.child_module(id, m, dir, files, depth) {
                        self.modules[id].children.insert(m.ident.to_string(), child);
                    }
                }
                _ => {}
            }
        }
    }

    /// Builds the module of a `mod` item of module `id` (inline, or from its file when the
    /// sources hold it) and returns its id; `None` when its file is not in the sources. A
    /// module file whose inner `#![cfg]` is undecided makes an undecided module.
    fn child_module(
        &mut self,
        id: ModId,
        m: &'a syn::ItemMod,
        dir: &Path,
        files: &BTreeMap<PathBuf, &'a SourceFile>,
        depth: usize,
    ) -> Option<ModId> {
        let name = m.ident.to_string();
        let mut path = self.modules[id].path.clone();
        path.push(name.clone());
        let root = self.modules[id].root;
        let path_attr = path_attribute(&m.attrs);
        let inherited = self.modules[id].undecided.clone();
        let public = matches!(m.vis, syn::Visibility::Public(_));
        if let Some((_, inline_items)) = &m.content {
            let file = self.modules[id].file;
            let child = self.push_module(file, path, Some(id), root);
            self.modules[child].public = public;
            self.modules[child].undecided = inherited;
            let child_dir = match &path_attr {
                Some(p) => dir.join(p),
                None => dir.join(&name),
            };
            self.fill(child, inline_items, &child_dir, files, depth + 1);
            return Some(child);
        }
        let candidates = match &path_attr {
            Some(p) => vec![dir.join(p)],
            None => vec![
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ],
        };
        let file = candidates
            .iter()
            .find_map(|c| files.get(&normalize(c)).copied())?;
        let child = self.push_module(file, path, Some(id), root);
        self.modules[child].public = public;
        self.modules[child].undecided = match cfg::mark(&file.ast.attrs) {
            Some(cfg::Mark::Undecided(predicate, span)) => inherited.or(Some(Undecided {
                predicate,
                file: file.path.clone(),
                span,
            })),
            _ => inherited,
        };
        let child_dir = if is_mod_rs(&file.path) || path_attr.is_some() {
            file.path.parent().unwrap_or(Path::new("")).to_path_buf()
        } else {
            file.path.with_extension("")
        };
        self.fill(child, &file.ast.items, &child_dir, files, depth + 1);
        Some(child)
    }

    /// Records an item of module `id` that depends on an undecided `cfg`: its names resolve
    /// to nothing, and a `mod` becomes a module of its own that no path reaches (its custom
    /// resources are reported, not derived).
    fn undecided_item(
        &mut self,
        id: ModId,
        item: &'a syn::Item,
        u: Undecided,
        dir: &Path,
        files: &BTreeMap<PathBuf, &'a SourceFile>,
        depth: usize,
    ) {
        let mut names = Vec::new();
        match item {
            syn::Item::Struct(i) => names.push(i.ident.to_string()),
            syn::Item::Enum(i) => names.push(i.ident.to_string()),
            syn::Item::Type(i) => names.push(i.ident.to_string()),
            syn::Item::Union(i) => names.push(i.ident.to_string()),
            syn::Item::Trait(i) => names.push(i.ident.to_string()),
            syn::Item::Fn(i) => names.push(i.sig.ident.to_string()),
            syn::Item::Const(i) => names.push(i.ident.to_string()),
            syn::Item::Static(i) => names.push(i.ident.to_string()),
            syn::Item::Use(i) => {
                names.extend(use_imports(i).into_iter().filter_map(|imp| imp.name));
            }
            syn::Item::Mod(m) => {
                names.push(m.ident.to_string());
                let saved = self.modules[id].undecided.replace(u.clone());
                self.child_module(id, m, dir, files, depth);
                self.modules[id].undecided = saved;
            }
            _ => {}
        }
        for n in names {
            self.modules[id]
                .undecided_names
                .entry(n)
                .or_insert_with(|| u.clone());
        }
        self.modules[id].undecided_items.push((item, u));
    }
}

/// The bindings of one `use` item.
fn use_imports(u: &syn::ItemUse) -> Vec<Import> {
    let mut out = Vec::new();
    flatten_use(
        &u.tree,
        &mut Vec::new(),
        u.leading_colon.is_some(),
        &mut out,
    );
    let public = matches!(u.vis, syn::Visibility::Public(_));
    for imp in &mut out {
        imp.public = public;
    }
    out
}

fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    leading: bool,
    out: &mut Vec<Import>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, leading, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            path.push(name.clone());
            let bound = if name == "self" {
                prefix.last().cloned().unwrap_or(name)
            } else {
                name
            };
            out.push(Import {
                name: Some(bound),
                path,
                leading_colon: leading,
                public: false,
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            let name = r.rename.to_string();
            if name == "_" {
                return;
            }
            out.push(Import {
                name: Some(name),
                path,
                leading_colon: leading,
                public: false,
            });
        }
        syn::UseTree::Glob(_) => out.push(Import {
            name: None,
            path: prefix.clone(),
            leading_colon: leading,
            public: false,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, leading, out);
            }
        }
    }
}
