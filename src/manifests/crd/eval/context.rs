//! Where an expression is evaluated: the module it is written in, the type `Self` names, the
//! `let` bindings in scope and the recursion depth; and how names in it (constants, functions,
//! local types) are looked up in the sources.

use std::rc::Rc;

use super::{EvalError, Res};
use crate::manifests::crd::resolve::Crate;
use crate::manifests::crd::resolve::LocalValue;
use crate::manifests::crd::resolve::ModId;
use crate::manifests::crd::resolve::Resolved;
use crate::manifests::diag::Cause;

/// Recursion bound: deeper evaluations are refused rather than followed.
const MAX_DEPTH: usize = 48;

/// A `let` binding in scope: evaluated where it is used, in the scope it was written in
/// (bodies are pure: no statement but `let` is accepted, so inlining is exact).
struct Binding {
    name: String,
    expr: syn::Expr,
    ty: Option<syn::Type>,
    prev: Option<Rc<Binding>>,
}

/// Where an expression is evaluated: its module, the type `Self` names, the `let` bindings
/// in scope, and the recursion depth.
#[derive(Clone)]
pub struct Ctx<'k, 'a> {
    /// The sources.
    pub krate: &'k Crate<'a>,
    /// The module the expression is written in.
    pub m: ModId,
    /// `Self` (module and name of a local type) inside an `impl` block.
    pub self_ty: Option<(ModId, String)>,
    env: Option<Rc<Binding>>,
    depth: usize,
}

impl<'k, 'a> Ctx<'k, 'a> {
    /// A context for an expression written in module `m`, outside any function.
    pub fn new(krate: &'k Crate<'a>, m: ModId) -> Self {
        Self {
            krate,
            m,
            self_ty: None,
            env: None,
            depth: 0,
        }
    }

    /// One level deeper (the same scope); refused past [`MAX_DEPTH`].
    pub fn deeper(&self) -> Res<Self> {
        if self.depth > MAX_DEPTH {
            return Err("the evaluation recurses too deeply".into());
        }
        let mut c = self.clone();
        c.depth += 1;
        Ok(c)
    }

    /// The scope of an item's body in module `m` (no bindings), one level deeper.
    pub fn item_scope(&self, m: ModId, self_ty: Option<(ModId, String)>) -> Res<Self> {
        let mut c = self.deeper()?;
        c.m = m;
        c.self_ty = self_ty;
        c.env = None;
        Ok(c)
    }

    /// An error naming `expr`, its `file:line`, and `reason`.
    pub fn refuse(&self, expr: &dyn quote::ToTokens, reason: &str) -> EvalError {
        EvalError::beyond(self.located(expr, reason))
    }

    /// Like [`Ctx::refuse`], for input rustc rejects.
    pub fn invalid(&self, expr: &dyn quote::ToTokens, reason: &str) -> EvalError {
        EvalError {
            message: self.located(expr, reason),
            cause: Cause::Invalid,
        }
    }

    pub(super) fn located(&self, expr: &dyn quote::ToTokens, reason: &str) -> String {
        let tokens = expr.to_token_stream();
        let span = tokens
            .clone()
            .into_iter()
            .next()
            .map(|t| t.span())
            .unwrap_or_else(proc_macro2::Span::call_site);
        // The source text as written when the span knows it, else the tokens.
        let mut text = syn::spanned::Spanned::span(&tokens)
            .source_text()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| tokens.to_string());
        text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > 80 {
            text = text.chars().take(77).collect::<String>() + "...";
        }
        let file = self
            .krate
            .modules
            .get(self.m)
            .map(|m| m.file.path.display().to_string())
            .unwrap_or_default();
        let line = span.start().line;
        if file.is_empty() || line == 0 {
            format!("`{text}`: {reason}")
        } else {
            format!("`{text}` ({file}:{line}): {reason}")
        }
    }

    /// The `let` binding `name` in scope, as the context to evaluate it in, its expression
    /// and its declared type.
    pub(super) fn binding(&self, name: &str) -> Option<(Self, syn::Expr, Option<syn::Type>)> {
        let mut cur = self.env.clone();
        while let Some(b) = cur {
            if b.name == name {
                let mut c = self.clone();
                c.env = b.prev.clone();
                c.depth += 1;
                return Some((c, b.expr.clone(), b.ty.clone()));
            }
            cur = b.prev.clone();
        }
        None
    }

    /// Enters `block`: binds its `let` statements and returns the scope of its tail
    /// expression with that expression. Refuses any other statement.
    pub fn enter_block<'b>(&self, block: &'b syn::Block) -> Res<(Self, &'b syn::Expr)> {
        let mut c = self.deeper()?;
        let Some((last, lets)) = block.stmts.split_last() else {
            return Err(self.refuse(block, "an empty body gives `()`"));
        };
        for stmt in lets {
            let syn::Stmt::Local(local) = stmt else {
                return Err(self.refuse(
                    stmt,
                    "only `let` statements and a final expression are evaluated",
                ));
            };
            let (name, ty) = match &local.pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    (p.ident.to_string(), None)
                }
                syn::Pat::Type(t) => match &*t.pat {
                    syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        (p.ident.to_string(), Some((*t.ty).clone()))
                    }
                    _ => return Err(self.refuse(local, "only `let name = …;` is evaluated")),
                },
                _ => return Err(self.refuse(local, "only `let name = …;` is evaluated")),
            };
            let Some(init) = &local.init else {
                return Err(self.refuse(local, "a `let` without a value"));
            };
            if init.diverge.is_some() {
                return Err(self.refuse(local, "`let … else` is not evaluated"));
            }
            c.env = Some(Rc::new(Binding {
                name,
                expr: (*init.expr).clone(),
                ty,
                prev: c.env.take(),
            }));
        }
        match last {
            syn::Stmt::Expr(e, None) => Ok((c, e)),
            syn::Stmt::Expr(syn::Expr::Return(syn::ExprReturn { expr: Some(e), .. }), _) => {
                Ok((c, e))
            }
            other => Err(self.refuse(other, "the body does not end in a value")),
        }
    }

    /// The `let` binding a single-identifier path names, if any.
    pub fn let_binding(&self, path: &syn::Path) -> Option<(Self, syn::Expr, Option<syn::Type>)> {
        self.env.as_ref()?;
        path.get_ident().and_then(|i| self.binding(&i.to_string()))
    }

    /// A value path (`CONST`, `Self::PORT`, `Type::PORT`, `module::CONST`, `STATIC`) as the
    /// scope of its defining item, its expression and its declared type.
    pub fn constant(&self, path: &syn::Path) -> Option<(Self, &'a syn::Expr, &'a syn::Type)> {
        let (im, self_ty, expr, ty) = self.lookup_const(path)?;
        let mut c = self.item_scope(im, self_ty).ok()?;
        c.depth = self.depth + 1;
        Some((c, expr, ty))
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn lookup_const(
        &self,
        path: &syn::Path,
    ) -> Option<(ModId, Option<(ModId, String)>, &'a syn::Expr, &'a syn::Type)> {
        if path.segments.len() == 2 && path.leading_colon.is_none() {
            let ty = syn::Path::from(path.segments[0].ident.clone());
            if let Some(found) = self.assoc_const(&ty, &path.segments[1].ident.to_string()) {
                return Some(found);
            }
        }
        match self.krate.resolve_value(self.m, path)? {
            (cm, LocalValue::Const(c)) => Some((cm, None, &c.expr, &c.ty)),
            (cm, LocalValue::Static(s)) if matches!(s.mutability, syn::StaticMutability::None) => {
                Some((cm, None, &s.expr, &s.ty))
            }
            _ => None,
        }
    }

    /// The local type a path to a type names (`Self`, `Probe`, `crate::x::Probe`).
    pub fn local_type(&self, path: &syn::Path) -> Option<(ModId, String)> {
        if path.is_ident("Self") {
            return self.self_ty.clone();
        }
        match self.krate.resolve_type(self.m, path)? {
            Resolved::Local(tm, name) => Some((tm, name)),
            _ => None,
        }
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn assoc_const(
        &self,
        ty: &syn::Path,
        name: &str,
    ) -> Option<(ModId, Option<(ModId, String)>, &'a syn::Expr, &'a syn::Type)> {
        let (tm, tname) = self.local_type(ty)?;
        for (im, imp) in self.krate.impls() {
            let syn::Type::Path(tp) = &*imp.self_ty else {
                continue;
            };
            if self.krate.resolve_type(im, &tp.path) != Some(Resolved::Local(tm, tname.clone())) {
                continue;
            }
            for item in &imp.items {
                if let syn::ImplItem::Const(c) = item
                    && c.ident == name
                {
                    return Some((im, Some((tm, tname.clone())), &c.expr, &c.ty));
                }
            }
        }
        None
    }

    /// A zero-argument function a call path names (`f`, `module::f`, `Type::f`, `Self::f`):
    /// the scope of its body (with `Self` of its `impl`), the body and its return type.
    pub fn function(
        &self,
        path: &syn::Path,
    ) -> Option<(Self, &'a syn::Block, Option<&'a syn::Type>)> {
        let found = if path.segments.len() == 2 && path.segments[0].ident == "Self" {
            let (tm, name) = self.self_ty.clone()?;
            self.krate
                .associated_fn(tm, &name, &path.segments[1].ident.to_string())
        } else {
            self.krate.resolve_value(self.m, path)
        };
        let (fm, v) = found?;
        let (block, inputs, output) = match v {
            LocalValue::Fn(f) => (&*f.block, &f.sig.inputs, &f.sig.output),
            LocalValue::Method(f) => (&f.block, &f.sig.inputs, &f.sig.output),
            _ => return None,
        };
        if !inputs.is_empty() {
            return None;
        }
        let self_ty = match v {
            LocalValue::Method(f) => impl_self(self.krate, f),
            _ => None,
        };
        let ret = match output {
            syn::ReturnType::Type(_, t) => Some(&**t as &syn::Type),
            syn::ReturnType::Default => None,
        };
        let mut c = self.item_scope(fm, self_ty).ok()?;
        c.depth = self.depth + 1;
        Some((c, block, ret))
    }
}

/// The local type whose `impl` block holds the function `f`.
pub fn impl_self(krate: &Crate<'_>, f: &syn::ImplItemFn) -> Option<(ModId, String)> {
    for (im, imp) in krate.impls() {
        let holds = imp
            .items
            .iter()
            .any(|i| matches!(i, syn::ImplItem::Fn(g) if std::ptr::eq(g, f)));
        if !holds {
            continue;
        }
        let syn::Type::Path(tp) = &*imp.self_ty else {
            return None;
        };
        return match krate.resolve_type(im, &tp.path)? {
            Resolved::Local(tm, name) => Some((tm, name)),
            _ => None,
        };
    }
    None
}
