//! schemars_derive's mutators: metadata (title, description, deprecated, examples), the
//! validation attributes (length, range, pattern, contains, inner) and extensions.

use schemars::Schema;
use serde_json::Value;

use super::{Deriver, R};
use crate::manifests::crd::attrs::{Common, Validation};
use crate::manifests::crd::defaults;
use crate::manifests::crd::eval;
use crate::manifests::crd::resolve::ModId;
use crate::manifests::crd::statics::{RegexStatic, regex_static};

impl<'c, 'a> Deriver<'c, 'a> {
    pub(super) fn common_mutators(
        &mut self,
        m: ModId,
        c: &Common,
        schema: &mut Schema,
        at: &dyn quote::ToTokens,
    ) -> R<()> {
        let _ = at;
        self.metadata_mutators(m, c, schema)?;
        self.post_mutators(m, c, schema)
    }

    /// title, description, deprecated, examples.
    pub(super) fn metadata_mutators(&mut self, m: ModId, c: &Common, schema: &mut Schema) -> R<()> {
        use syn::spanned::Spanned;
        let computed_doc = match &c.doc_expr {
            Some(e) => Some(self.doc_expr(m, e)?),
            None => None,
        };
        let (doc_title, doc_desc) = match c.doc.as_ref().or(computed_doc.as_ref()) {
            Some(doc) => {
                let (t, d) = schemars::_private::get_title_and_description(doc);
                (Some(t.to_string()), Some(d.to_string()))
            }
            None => (None, None),
        };
        let title = match &c.title {
            Some(e) => Some(self.string_expr(m, e)?),
            None => doc_title,
        };
        let description = match &c.description {
            Some(e) => Some(self.string_expr(m, e)?),
            None => doc_desc,
        };
        if let Some(t) = title {
            schemars::_private::insert_metadata_property_if_nonempty(schema, "title", t);
        }
        if let Some(d) = description {
            schemars::_private::insert_metadata_property_if_nonempty(schema, "description", d);
        }
        if c.deprecated {
            schema.insert("deprecated".into(), true.into());
        }
        if !c.examples.is_empty() {
            let mut values = Vec::new();
            for e in &c.examples {
                match defaults::eval_untyped(self.krate, m, e) {
                    Ok(v) => values.push(v),
                    Err(msg) => {
                        return Err(self.undecidable(
                            m,
                            e.span(),
                            format!("cannot evaluate this example: {msg}"),
                            Some("write the example as a literal".into()),
                        ));
                    }
                }
            }
            schema.insert("examples".into(), Value::Array(values));
        }
        Ok(())
    }

    /// extensions, transforms.
    pub(super) fn post_mutators(&mut self, m: ModId, c: &Common, schema: &mut Schema) -> R<()> {
        use syn::spanned::Spanned;
        for (k, v) in &c.extensions {
            match eval::json_tokens(v) {
                Ok(value) => {
                    schema.insert(k.clone(), value);
                }
                Err(msg) => {
                    return Err(self.error(
                        m,
                        v.span(),
                        msg,
                        Some("write the extension value as JSON literal tokens".into()),
                    ));
                }
            }
        }
        if let Some(t) = c.transforms.first() {
            return Err(self.undecidable(
                m,
                t.span(),
                "`#[schemars(transform = ...)]` runs a function at compile time that rsbuilder cannot evaluate statically",
                Some("express the change with `extend(...)`, `with = \"Type\"` or the validation attributes".into()),
            ));
        }
        Ok(())
    }

    pub(super) fn validation_mutators(
        &mut self,
        m: ModId,
        v: &Validation,
        schema: &mut Schema,
    ) -> R<()> {
        use schemars::_private::insert_validation_property as put;
        if let Some(l) = &v.length {
            if let Some(min) = l.min.as_ref().or(l.equal.as_ref()) {
                let val = self.number_expr(m, min)?;
                put(schema, "string", "minLength", val.clone());
                put(schema, "array", "minItems", val);
            }
            if let Some(max) = l.max.as_ref().or(l.equal.as_ref()) {
                let val = self.number_expr(m, max)?;
                put(schema, "string", "maxLength", val.clone());
                put(schema, "array", "maxItems", val);
            }
        }
        if let Some(r) = &v.range {
            if let Some(min) = r.min.as_ref().or(r.equal.as_ref()) {
                let val = self.number_expr(m, min)?;
                put(schema, "number", "minimum", val);
            }
            if let Some(max) = r.max.as_ref().or(r.equal.as_ref()) {
                let val = self.number_expr(m, max)?;
                put(schema, "number", "maximum", val);
            }
        }
        if let Some(p) = &v.pattern {
            let s = self.pattern_expr(m, p)?;
            put(schema, "string", "pattern", s);
        }
        if let Some(c) = &v.contains {
            let s = self.pattern_expr(m, c)?;
            schemars::_private::must_contain(schema, &s);
        }
        if let Some(f) = v.format {
            schema.insert("format".into(), f.into());
        }
        if let Some(inner) = &v.inner
            && let Some(items) = schema.get_mut("items")
            && let Ok(inner_schema) = <&mut Schema>::try_from(items)
        {
            let mut s = inner_schema.clone();
            self.validation_mutators(m, inner, &mut s)?;
            *inner_schema = s;
        }
        Ok(())
    }

    /// A `pattern` or `contains` value, which schemars turns into text with `.to_string()`:
    /// a regex static gives its pattern ([`regex_static`]), anything else is evaluated as
    /// a string.
    pub(super) fn pattern_expr(&mut self, m: ModId, e: &syn::Expr) -> R<String> {
        use syn::spanned::Spanned;
        match regex_static(self.krate, m, e) {
            RegexStatic::Pattern(p) => Ok(p),
            RegexStatic::Invalid(msg) => Err(self.error(m, e.span(), msg, None)),
            RegexStatic::NotOne => self.string_expr(m, e),
        }
    }

    pub(super) fn string_expr(&mut self, m: ModId, e: &syn::Expr) -> R<String> {
        use syn::spanned::Spanned;
        match defaults::eval_untyped(self.krate, m, e) {
            Ok(Value::String(s)) => Ok(s),
            Ok(other) => Ok(other.to_string()),
            Err(msg) => Err(self.undecidable(
                m,
                e.span(),
                msg,
                Some("use a string literal or a const".into()),
            )),
        }
    }

    /// The text of a doc written with macros (see [`crate::manifests::crd::attrs::doc_expr`]); refused with the
    /// reason when a part is not `concat!`, `stringify!`, `include_str!` of a file in the crate
    /// or a literal.
    fn doc_expr(&mut self, m: ModId, e: &syn::Expr) -> R<String> {
        use syn::spanned::Spanned;
        match defaults::eval_untyped_with_cause(self.krate, m, e) {
            Ok(Value::String(s)) => Ok(s),
            Ok(other) => Ok(other.to_string()),
            // Refused whatever rustc would do (a file outside the crate, larger than a CRD
            // holds): no compile fallback, which would read it.
            Err(err) if err.cause == crate::manifests::diag::Cause::Invalid => {
                Err(self.error(m, e.span(), err.message, None))
            }
            Err(crate::manifests::crd::eval::EvalError { message: msg, .. }) => Err(self.undecidable(
                m,
                e.span(),
                format!("cannot read this doc statically: {msg}"),
                Some("write the doc with literals, `concat!`, `stringify!` or `include_str!` of a file in the crate".into()),
            )),
        }
    }

    pub(super) fn number_expr(&mut self, m: ModId, e: &syn::Expr) -> R<Value> {
        use syn::spanned::Spanned;
        match defaults::eval_untyped(self.krate, m, e) {
            Ok(v @ Value::Number(_)) => Ok(v),
            Ok(other) => Err(self.error(
                m,
                e.span(),
                format!("expected a number, found {other}"),
                None,
            )),
            Err(msg) => Err(self.undecidable(
                m,
                e.span(),
                msg,
                Some("use a number literal or a const".into()),
            )),
        }
    }
}
