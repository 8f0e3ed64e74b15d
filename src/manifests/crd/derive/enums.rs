//! Enums in serde's four representations (`expr_for_enum`), and the checks for the shapes
//! kube-derive's `crd()` panics on.

use schemars::Schema;
use serde_derive_internals::ast::{self as serde_ast, Style};
use serde_derive_internals::attr::{Default as SerdeDefault, TagType};
use serde_json::Value;

use super::transforms::probe_transforms;
use super::{Deriver, R};
use crate::manifests::crd::attrs;
use crate::manifests::crd::known;
use crate::manifests::crd::resolve::ModId;

impl<'c, 'a> Deriver<'c, 'a> {
    /// `expr_for_enum`.
    pub(super) fn enum_schema(
        &mut self,
        m: ModId,
        cont: &serde_ast::Container,
        variants: &[serde_ast::Variant],
        input: &syn::DeriveInput,
    ) -> R<Schema> {
        // Taken at once, so that the enums of its variants are not taken for flattened ones.
        let flattened = std::mem::take(&mut self.flattened_enum);
        if variants.is_empty() {
            return Ok(Schema::from(false));
        }
        let deny = cont.attrs.deny_unknown_fields();
        let ident = &input.ident;
        let variants: Vec<&serde_ast::Variant> = variants
            .iter()
            .filter(|v| !v.attrs.skip_deserializing())
            .collect();
        let mut vattrs = Vec::new();
        for v in &variants {
            vattrs.push(attrs::variant_attrs(&v.original.attrs).map_err(|e| self.syn_error(m, e))?);
        }
        match cont.attrs.tag() {
            TagType::Internal { tag } => {
                let mut one_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let mut s = if let Some(w) = &va.with {
                            self.with_schema(m, w, v.original)?.schema
                        } else {
                            match v.style {
                                Style::Unit => self.leaf("()").schema,
                                Style::Newtype => {
                                    let fa = attrs::field_attrs(&v.fields[0].original.attrs)
                                        .map_err(|e| self.syn_error(m, e))?;
                                    let eval = match &fa.with {
                                        Some(w) => self.with_schema(m, w, v.original)?,
                                        None => self.ty(m, v.fields[0].ty)?,
                                    };
                                    let mut s = known::internal_newtype(&mut self.generator, eval);
                                    let post = self.field_mutators(m, &v.fields[0], &fa, &mut s)?;
                                    self.post_mutators(m, &post, &mut s)?;
                                    s
                                }
                                Style::Tuple => self.tuple_struct(m, &v.fields)?,
                                Style::Struct => {
                                    let dummy: syn::DeriveInput = syn::parse_quote!(
                                        struct __Variant;
                                    );
                                    self.struct_schema(
                                        m,
                                        &v.fields,
                                        &SerdeDefault::None,
                                        deny,
                                        &dummy,
                                    )?
                                }
                            }
                        };
                        let name = v.attrs.name().deserialize_name().to_string();
                        schemars::_private::apply_internal_enum_variant_tag(
                            &mut s, tag, &name, deny,
                        );
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                if let Err(panic) = probe_transforms(&schema) {
                    self.transform_hint(
                        m,
                        ident.span(),
                        panic,
                        format!("enum `{ident}` is internally tagged (#[serde(tag = \"{tag}\")]): kube-derive's crd() panics on it, because its variants give the property `{tag}` different constant values and a structural schema cannot express that"),
                        Some(format!("use an externally tagged enum (remove `tag`; each variant becomes an optional property), or a struct with a `{tag}` field holding a unit enum plus one optional field per variant")),
                    );
                }
                Ok(schema)
            }
            TagType::Adjacent { tag, content } => {
                let mut one_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let name = v.attrs.name().deserialize_name().to_string();
                        let mut props = serde_json::Map::new();
                        props.insert(
                            tag.clone(),
                            serde_json::json!({"type": "string", "const": name}),
                        );
                        let mut required = vec![Value::String(tag.clone())];
                        if !(matches!(v.style, Style::Unit) && va.with.is_none()) {
                            let c = self.untagged_variant(m, v, va, deny, false)?;
                            props.insert(content.clone(), c.to_value());
                            required.push(Value::String(content.clone()));
                        }
                        let mut obj = serde_json::Map::new();
                        obj.insert("type".into(), "object".into());
                        obj.insert("properties".into(), Value::Object(props));
                        obj.insert("required".into(), Value::Array(required));
                        if deny {
                            obj.insert("additionalProperties".into(), false.into());
                        }
                        let mut s = Schema::from(obj);
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                if probe_transforms(&schema).is_err() {
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!("enum `{ident}` is adjacently tagged (#[serde(tag = \"{tag}\", content = \"{content}\")]): kube-derive's crd() panics on it, because its variants give `{tag}` and `{content}` conflicting schemas"),
                        Some(format!("use an externally tagged enum (remove `tag` and `content`), or a struct with a `{tag}` field holding a unit enum plus one optional field per variant")),
                    ));
                }
                Ok(schema)
            }
            TagType::External => {
                let (unit, complex): (Vec<_>, Vec<_>) =
                    variants.iter().zip(&vattrs).partition(|(v, a)| {
                        matches!(v.style, Style::Unit) && a.is_default() && !v.attrs.untagged()
                    });
                let unit_schema = {
                    let names: Vec<Value> = unit
                        .iter()
                        .map(|(v, _)| Value::String(v.attrs.name().deserialize_name().to_string()))
                        .collect();
                    schemars::json_schema!({"type": "string", "enum": names})
                };
                if complex.is_empty() {
                    return Ok(unit_schema);
                }
                let data_variants = complex
                    .iter()
                    .filter(|(v, _)| !matches!(v.style, Style::Unit) && !v.attrs.untagged())
                    .count();
                let unit_like = unit.len()
                    + complex
                        .iter()
                        .filter(|(v, _)| matches!(v.style, Style::Unit) && !v.attrs.untagged())
                        .count();
                if data_variants > 0 && unit_like > 0 {
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!("enum `{ident}` mixes unit variants and variants with data: kube-derive's crd() panics on it, because the unit variants are strings and the others objects, and a structural schema has one type"),
                        Some("give every variant data (e.g. `Variant {}` or `Variant(EmptyStruct)`), or move the data into a separate optional field next to a unit enum".into()),
                    ));
                }
                let mut one_of = Vec::new();
                if !unit.is_empty() {
                    one_of.push(unit_schema.to_value());
                }
                for (v, va) in complex {
                    let name = v.attrs.name().deserialize_name().to_string();
                    let s = if v.attrs.untagged() {
                        self.untagged_variant(m, v, va, deny, true)?
                    } else {
                        let mut s = if matches!(v.style, Style::Unit) && va.with.is_none() {
                            schemars::_private::new_unit_enum_variant(&name)
                        } else {
                            let sub = self.untagged_variant(m, v, va, deny, false)?;
                            schemars::_private::new_externally_tagged_enum_variant(&name, sub)
                        };
                        self.common_mutators(m, &va.common, &mut s, &v.ident)?;
                        s
                    };
                    one_of.push(s.to_value());
                }
                let keyword = if variants.iter().any(|v| v.attrs.untagged()) {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let schema = Schema::from(serde_json::Map::from_iter([(
                    keyword.to_string(),
                    Value::Array(one_of),
                )]));
                self.check_transforms(m, ident, &schema);
                Ok(schema)
            }
            TagType::None => {
                let mut any_of = Vec::new();
                for (v, va) in variants.iter().zip(&vattrs) {
                    let s = self.untagged_variant(m, v, va, deny, true)?;
                    any_of.push(s.to_value());
                }
                let schema = Schema::from(serde_json::Map::from_iter([(
                    "anyOf".to_string(),
                    Value::Array(any_of),
                )]));
                let Some(done) = self.check_transforms(m, ident, &schema) else {
                    return Ok(schema);
                };
                let typed = [
                    "type",
                    "x-kubernetes-int-or-string",
                    "x-kubernetes-preserve-unknown-fields",
                ]
                .iter()
                .any(|k| done.get(*k).is_some());
                // Flattened, its schema merges into an object that has a type: whether the
                // API server accepts the result is for its rules on the whole CRD to say.
                if !typed && !flattened {
                    let scalars: Vec<String> = variants
                        .iter()
                        .filter(|v| !matches!(v.style, Style::Struct))
                        .map(|v| format!("`{}`", v.ident))
                        .collect();
                    let why = if scalars.is_empty() {
                        "its variants are structs without fields".to_string()
                    } else {
                        format!("{} are not structs", scalars.join(", "))
                    };
                    return Err(self.error(
                        m,
                        ident.span(),
                        format!(
                            "the untagged enum `{ident}` has no object variant ({why}): kube-derive's crd() then emits a schema without `type`, which the API server rejects as not structural"
                        ),
                        Some("make the variants structs with named fields, or replace the enum with one scalar type (e.g. `IntOrString`, or `String` with a pattern)".into()),
                    ));
                }
                Ok(schema)
            }
        }
    }

    /// `expr_for_untagged_enum_variant`, its source place recorded: a tagged variant is the
    /// property of its name, an untagged one adds to the enclosing object.
    pub(super) fn untagged_variant(
        &mut self,
        m: ModId,
        v: &serde_ast::Variant,
        va: &attrs::VariantAttrs,
        deny: bool,
        actually_untagged: bool,
    ) -> R<Schema> {
        self.site_open();
        let s = self.variant_schema(m, v, va, deny, actually_untagged);
        let name = (!actually_untagged).then(|| v.attrs.name().deserialize_name().to_string());
        self.site_close(name, m, v.ident.span());
        s
    }

    fn variant_schema(
        &mut self,
        m: ModId,
        v: &serde_ast::Variant,
        va: &attrs::VariantAttrs,
        deny: bool,
        actually_untagged: bool,
    ) -> R<Schema> {
        let mut s = if let Some(w) = &va.with {
            self.with_schema(m, w, v.original)?.schema
        } else {
            match v.style {
                Style::Unit => self.leaf("()").schema,
                Style::Newtype => self.field_schema(m, &v.fields[0], false)?,
                Style::Tuple => self.tuple_struct(m, &v.fields)?,
                Style::Struct => {
                    let dummy: syn::DeriveInput = syn::parse_quote!(
                        struct __Variant;
                    );
                    self.struct_schema(m, &v.fields, &SerdeDefault::None, deny, &dummy)?
                }
            }
        };
        if actually_untagged {
            self.common_mutators(m, &va.common, &mut s, &v.ident)?;
        }
        Ok(s)
    }

    /// Runs `crd()`'s transforms on an enum's schema alone (as a property of an object), so
    /// that a panic of kube-core's rewriter can be reported at the enum rather than for the
    /// whole CRD: it is kept as a hint ([`Deriver::transform_hint`]), reported only if the
    /// kind's own transforms panic the same way. Returns the transformed enum schema, `None`
    /// when the transforms panicked.
    pub(super) fn check_transforms(
        &mut self,
        m: ModId,
        ident: &syn::Ident,
        schema: &Schema,
    ) -> Option<Value> {
        match probe_transforms(schema) {
            Ok(v) => Some(v),
            Err(panic) => {
                let msg = format!("kube-derive's crd() panics on enum `{ident}`: {panic}");
                self.transform_hint(
                    m,
                    ident.span(),
                    panic,
                    msg,
                    Some("give the variants' common properties identical types, or use an externally tagged enum".into()),
                );
                None
            }
        }
    }
}
