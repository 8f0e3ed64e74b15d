//! Where in the source each part of a derived schema comes from, so that a rule broken deep
//! inside a CRD's schema is reported at the field that broke it, not at the spec type.
//!
//! While deriving, every struct field, enum variant and the root's `spec` and `status` open a
//! frame; the user types a frame's type mentions, and the fields and variants derived inside
//! it, are recorded there. A user type's own fields are kept once per type (a type used in
//! many places has one source). [`Deriver::locate`] then follows a schema path (`.spec.ports[*]
//! .name`) through these records.

use proc_macro2::Span;

use super::Deriver;
use crate::manifests::crd::apiserver_rules::{SchemaPath, Step};
use crate::manifests::crd::resolve::ModId;

/// A user type, as the deriver keys it: its module and name.
pub type TypeKey = (ModId, String);

/// A place in the source that contributes to a schema node.
#[derive(Debug, Clone)]
pub struct Member {
    /// The property it makes, as serde names it; `None` for a part that contributes its
    /// fields to the enclosing object (a flattened field, an untagged variant).
    pub name: Option<String>,
    /// The module whose file holds it.
    pub module: ModId,
    /// Its name in the source (the field's or variant's identifier).
    pub span: Span,
    /// The user types its type names (through `Option`, `Vec`, maps, generic arguments).
    pub types: Vec<TypeKey>,
    /// Fields and variants derived inline (a struct variant's fields).
    pub members: Vec<Member>,
}

/// One open record.
#[derive(Debug, Default)]
pub(super) struct Frame {
    members: Vec<Member>,
    types: Vec<TypeKey>,
}

/// How deep [`Deriver::locate`] follows transparent parts (flattened fields in flattened
/// types ...); beyond it, the nearest named place is reported.
const MAX_TRANSPARENT: usize = 16;

impl<'c, 'a> Deriver<'c, 'a> {
    /// Opens a record for a field, variant or root part.
    pub(super) fn site_open(&mut self) {
        self.rec.push(Frame::default());
    }

    /// Closes the innermost record as a member of the one around it.
    pub(super) fn site_close(&mut self, name: Option<String>, module: ModId, span: Span) {
        let Some(f) = self.rec.pop() else { return };
        let member = Member {
            name,
            module,
            span,
            types: f.types,
            members: f.members,
        };
        if let Some(top) = self.rec.last_mut() {
            top.members.push(member);
        } else {
            self.root_sites.push(member);
        }
    }

    /// Drops the innermost record (a part derived twice, as `#[x_kube]` does).
    pub(super) fn site_discard(&mut self) {
        self.rec.pop();
    }

    /// Notes that the open record's type names the user type `key`.
    pub(super) fn site_type(&mut self, key: &TypeKey) {
        if let Some(top) = self.rec.last_mut() {
            top.types.push(key.clone());
        }
    }

    /// Opens the record of the user type `key`'s own fields.
    pub(super) fn site_type_open(&mut self) {
        self.rec.push(Frame::default());
    }

    /// Closes the record of the user type `key`'s own fields.
    pub(super) fn site_type_close(&mut self, key: TypeKey) {
        if let Some(f) = self.rec.pop() {
            self.sites.entry(key).or_insert(f.members);
        }
    }

    /// Takes the members recorded at the top level since the last call: the root object's
    /// `spec` and `status` (or the flattened spec of `no_spec`).
    pub fn take_root_sites(&mut self) -> Vec<Member> {
        std::mem::take(&mut self.root_sites)
    }

    /// The source place of the schema node at `path` below a root with the members `root`:
    /// the field, variant or type the last step that can be followed names. `None` when not
    /// even the first step is found (the caller then reports at the spec type).
    pub fn locate(&self, root: &[Member], path: &SchemaPath) -> Option<(ModId, Span)> {
        let mut scope: Vec<&Member> = self.expand(root.iter().collect(), 0);
        let mut best = None;
        for step in &path.0 {
            match step {
                Step::Property(name) => {
                    let Some(m) = scope
                        .iter()
                        .find(|m| m.name.as_deref() == Some(name.as_str()))
                    else {
                        break;
                    };
                    best = Some((m.module, m.span));
                    scope = self.inside(m);
                }
                Step::AdditionalProperties => {
                    // Beside properties, map values come from a flattened map field.
                    if let Some(m) = scope.iter().find(|m| m.name.is_none()) {
                        best = Some((m.module, m.span));
                        scope = self.inside(m);
                    }
                }
                Step::Items | Step::AllOf(_) | Step::AnyOf(_) | Step::OneOf(_) | Step::Not => {}
            }
        }
        best
    }

    /// The members a member's schema is made of: its inline members and its types' fields,
    /// transparent parts opened.
    fn inside<'s>(&'s self, m: &'s Member) -> Vec<&'s Member> {
        let mut direct: Vec<&Member> = m.members.iter().collect();
        for t in &m.types {
            if let Some(fields) = self.sites.get(t) {
                direct.extend(fields.iter());
            }
        }
        self.expand(direct, 0)
    }

    /// `members` with every transparent member (no name) followed by what it is made of.
    fn expand<'s>(&'s self, members: Vec<&'s Member>, depth: usize) -> Vec<&'s Member> {
        let mut out = Vec::new();
        for m in members {
            out.push(m);
            if m.name.is_none() && depth < MAX_TRANSPARENT {
                let mut inner: Vec<&Member> = m.members.iter().collect();
                for t in &m.types {
                    if let Some(fields) = self.sites.get(t) {
                        inner.extend(fields.iter());
                    }
                }
                out.extend(self.expand(inner, depth + 1));
            }
        }
        out
    }
}
