//! What the generated webhook code may assume about a kind's `spec`, read statically from the
//! project's sources: whether the scaffolded example field `foo: Option<String>` is still
//! there (the webhook demo uses it), and the smallest JSON `spec` that deserializes into the
//! kind (the generated tests build their objects from it).
//!
//! The minimal spec comes from the CRD schema that `rsbuilder manifests` derives (the schema
//! kube-derive's `crd()` returns): the required properties get an empty value of their type,
//! optional ones are left out, exactly as serde needs them to decode the object.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::{Map, Value};

use crate::manifests::crd::crds_from_sources;
use crate::manifests::source::SourceSet;

/// Nesting deeper than this is cut short with `{}` (a schema is a tree, but a hand-written
/// `schema = "manual"` could be anything).
const MAX_DEPTH: usize = 32;

/// The smallest JSON value that a type with this (structural) schema accepts: a string is
/// `""`, an integer `0` (or its `minimum`), a number `0.0`, a boolean `false`, an array `[]`
/// (or `minItems` copies of its item), a map or `x-kubernetes-preserve-unknown-fields` object
/// `{}`, an object its required properties (recursively), an enum its first allowed value,
/// an int-or-string `0`. Only required properties appear: optional and nullable ones are what
/// serde fills in itself (`None`, `#[serde(default)]`). A `oneOf`/`anyOf` (a data-carrying
/// enum after kube's structural transforms) takes its first alternative.
pub fn minimal_value(schema: &JSONSchemaProps) -> Value {
    minimal_at(schema, 0)
}

fn minimal_at(schema: &JSONSchemaProps, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    if let Some(first) = schema.enum_.as_ref().and_then(|e| e.first()) {
        return first.0.clone();
    }
    if schema.x_kubernetes_int_or_string == Some(true) {
        // A string: `Quantity` and `IntOrString` read "0" and write it back unchanged (a
        // number would come back as "0" for a Quantity, which the tests would see as a change).
        return Value::from("0");
    }
    // kube's structural transform leaves `oneOf: [{required: [variant]}, ...]` next to the
    // hoisted properties; other alternatives carry their own schema.
    let alternatives = schema.one_of.as_ref().or(schema.any_of.as_ref());
    let first_alternative = alternatives.and_then(|a| a.first());
    match schema.type_.as_deref() {
        Some("string") => minimal_string(schema),
        Some("integer") => {
            let min = schema.minimum.map_or(0, |m| m.ceil().max(0.0) as i64);
            Value::from(min)
        }
        Some("number") => Value::from(schema.minimum.map_or(0.0, |m| m.max(0.0))),
        Some("boolean") => Value::Bool(false),
        Some("array") => {
            let count = schema.min_items.unwrap_or(0).clamp(0, 16) as usize;
            let item = match &schema.items {
                Some(JSONSchemaPropsOrArray::Schema(s)) => minimal_at(s, depth + 1),
                Some(JSONSchemaPropsOrArray::Schemas(s)) => {
                    // A tuple: one value per position.
                    return Value::Array(s.iter().map(|s| minimal_at(s, depth + 1)).collect());
                }
                None => Value::Object(Map::new()),
            };
            Value::Array(vec![item; count])
        }
        Some("object") | None => {
            let mut required: Vec<&String> = schema.required.iter().flatten().collect();
            if let Some(alt) = first_alternative {
                required.extend(alt.required.iter().flatten());
                if schema.properties.is_none() && alt.type_.is_some() {
                    return minimal_at(alt, depth + 1);
                }
            }
            let has_shape = schema.properties.is_some()
                || schema.additional_properties.is_some()
                || schema.x_kubernetes_preserve_unknown_fields == Some(true)
                || schema.type_.is_some();
            if !has_shape && required.is_empty() {
                // A schema that says nothing (`serde_json::Value`): any JSON, `{}` included.
                return Value::Object(Map::new());
            }
            let mut object = Map::new();
            // Properties with a default value are filled in by serde when absent and written
            // back on serialization; carrying the default keeps a round trip unchanged.
            for (name, p) in schema.properties.iter().flatten() {
                if let Some(default) = p.default.as_ref().filter(|d| !d.0.is_null()) {
                    object.insert(name.clone(), default.0.clone());
                }
            }
            for name in required {
                let property = schema.properties.as_ref().and_then(|p| p.get(name));
                let value = match property {
                    Some(p) => minimal_at(p, depth + 1),
                    None => match &schema.additional_properties {
                        Some(JSONSchemaPropsOrBool::Schema(s)) => minimal_at(s, depth + 1),
                        _ => Value::Object(Map::new()),
                    },
                };
                object.insert(name.clone(), value);
            }
            Value::Object(object)
        }
        Some(_) => Value::Object(Map::new()),
    }
}

/// The smallest string a field with this schema reads: a value of its `format` where serde's
/// type checks one (`date-time` for `Time`, `ip` for `IpAddr`, `uuid`, ...), else the shortest
/// match of its `pattern` ([`pattern_sample`]; the tests run on the test cluster, which checks
/// patterns as the API server does), padded to `minLength` where the pattern allows, else
/// `minLength` letters (`char` needs exactly one), else `""`.
fn minimal_string(schema: &JSONSchemaProps) -> Value {
    let by_format = match schema.format.as_deref() {
        Some("date-time") => Some("1970-01-01T00:00:00Z"),
        Some("date") => Some("1970-01-01"),
        Some("time") => Some("00:00:00"),
        Some("ip" | "ipv4") => Some("0.0.0.0"),
        Some("ipv6") => Some("::"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("email") => Some("user@example.com"),
        Some("uri" | "url") => Some("https://example.com"),
        Some("hostname") => Some("example.com"),
        Some("duration") => Some("0s"),
        _ => None,
    };
    if let Some(value) = by_format {
        return Value::from(value);
    }
    let length = schema.min_length.unwrap_or(0).clamp(0, 64) as usize;
    if let Some(pattern) = &schema.pattern
        && let Some(sample) = pattern_sample(pattern, length)
    {
        return Value::String(sample);
    }
    Value::String("a".repeat(length))
}

/// A short string that the regular expression `pattern` matches, at least `min_len`
/// characters long where padding with letters keeps it matching: the shortest string its
/// syntax tree spells (each repetition its minimum count, each alternation its first
/// branch, each class a letter or digit it holds, anchors nothing). Checked with the regex
/// crate, whose syntax is RE2's, as Go's regexp reads a CRD's `pattern` in the API server.
/// `None` when the pattern does not parse, or the string is not a match (word boundaries,
/// for example).
pub fn pattern_sample(pattern: &str, min_len: usize) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let regex = regex::Regex::new(pattern).ok()?;
    let mut out = String::new();
    spell(&hir, &mut out, 0)?;
    if !regex.is_match(&out) {
        return None;
    }
    if out.chars().count() < min_len {
        let need = min_len - out.chars().count();
        let padded = [
            format!("{out}{}", "a".repeat(need)),
            format!("{}{out}", "a".repeat(need)),
        ]
        .into_iter()
        .find(|p| regex.is_match(p));
        if let Some(padded) = padded {
            return Some(padded);
        }
    }
    Some(out)
}

/// Appends to `out` the shortest text `hir` matches; `None` past 32 levels of nesting or
/// 256 characters, or on a class with no character.
fn spell(hir: &regex_syntax::hir::Hir, out: &mut String, depth: usize) -> Option<()> {
    use regex_syntax::hir::{Class, HirKind};
    if depth > MAX_DEPTH || out.len() > 256 {
        return None;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => out.push_str(std::str::from_utf8(&lit.0).ok()?),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges();
            let holds = |c: char| ranges.iter().any(|r| r.start() <= c && c <= r.end());
            let pick = "a0A-_.".chars().find(|c| holds(*c));
            out.push(pick.or_else(|| ranges.first().map(|r| r.start()))?);
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges = class.ranges();
            let holds = |b: u8| ranges.iter().any(|r| r.start() <= b && b <= r.end());
            let pick = b"a0A-_.".iter().copied().find(|b| holds(*b));
            let byte = pick.or_else(|| ranges.first().map(|r| r.start()))?;
            out.push(char::from(byte).is_ascii().then_some(char::from(byte))?);
        }
        HirKind::Repetition(rep) => {
            for _ in 0..rep.min.min(64) {
                spell(&rep.sub, out, depth + 1)?;
            }
        }
        HirKind::Capture(cap) => spell(&cap.sub, out, depth + 1)?,
        HirKind::Concat(parts) => {
            for part in parts {
                spell(part, out, depth + 1)?;
            }
        }
        HirKind::Alternation(branches) => spell(branches.first()?, out, depth + 1)?,
    }
    Some(())
}

/// The minimal `spec` of every version of `kind` in API group `group` (`ai.example.com`), by
/// version name, from the CRD derived from `sources` (the `(path, text)` of the project's
/// `.rs` files under `src/`, as [`crate::engine::Plan::read_tree`] reads them) as
/// `rsbuilder manifests` derives it, with the default features of the `Cargo.toml` of the
/// project at `root` (read through the project's rooted handle). A version without a `spec`
/// property maps to `{}`.
///
/// Errors (a message for a note, never a panic): the sources do not parse or the CRD cannot
/// be derived (the first diagnostic, `file:line:col`), or no CRD of that group and kind.
pub fn minimal_specs(
    root: &Path,
    sources: Vec<(std::path::PathBuf, String)>,
    group: &str,
    kind: &str,
) -> Result<BTreeMap<String, Value>, String> {
    let first = |d: Vec<crate::manifests::diag::Diagnostic>| {
        d.first()
            .map_or_else(|| "unknown error".to_string(), ToString::to_string)
    };
    // The crate's default features, as `manifests` sees them.
    let manifest_rel = Path::new(crate::model::layout::CARGO_TOML);
    let manifest = crate::engine::read(root, manifest_rel).map_err(|e| e.to_string())?;
    let manifest_path = root.join(manifest_rel);
    let cfg = crate::manifests::cfg::Cfg::for_manifest(
        manifest
            .as_deref()
            .map(|text| (manifest_path.as_path(), text)),
        &Default::default(),
    )
    .map_err(|e| e.to_string())?;
    let sources = SourceSet::parse_all_with(sources, &cfg).map_err(first)?;
    let crds = crds_from_sources(&sources).map_err(first)?;
    let crd = crds
        .iter()
        .find(|c| c.crd.spec.group == group && c.crd.spec.names.kind == kind)
        .ok_or_else(|| format!("no #[derive(CustomResource)] of kind {kind} in group {group}"))?;
    Ok(crd
        .crd
        .spec
        .versions
        .iter()
        .map(|v| {
            let spec = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .and_then(|s| s.properties.as_ref())
                .and_then(|p| p.get("spec"))
                .map_or_else(|| Value::Object(Map::new()), minimal_value);
            (v.name.clone(), spec)
        })
        .collect())
}

/// `true` when the Rust source `types_rs` still has the field that `create api` scaffolds in
/// the spec of `kind`: `pub foo: Option<String>` in `struct <kind>Spec` (or, when no struct
/// has that name, in the struct deriving `CustomResource`), not renamed by serde. A source
/// that does not parse has no such field.
pub fn has_example_foo(types_rs: &str, kind: &str) -> bool {
    let Ok(file) = crate::syntax::parse_file(types_rs) else {
        return false;
    };
    let structs: Vec<&syn::ItemStruct> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Struct(s) => Some(s),
            _ => None,
        })
        .collect();
    let spec_name = format!("{kind}Spec");
    let spec = structs.iter().find(|s| s.ident == spec_name).or_else(|| {
        structs.iter().find(|s| {
            crate::manifests::crd::attrs::derives(&s.attrs)
                .iter()
                .any(|d| d == "CustomResource")
        })
    });
    let Some(spec) = spec else { return false };
    spec.fields.iter().any(|f| {
        f.ident.as_ref().is_some_and(|i| i == "foo")
            && !matches!(f.vis, syn::Visibility::Inherited)
            && is_option_string(&f.ty)
            && !f.attrs.iter().any(|a| {
                a.path().is_ident("serde")
                    && quote::ToTokens::to_token_stream(a)
                        .to_string()
                        .contains("rename")
            })
    })
}

/// `Option<String>` (any path ending so: `std::option::Option<std::string::String>`).
fn is_option_string(ty: &syn::Type) -> bool {
    let last = |ty: &syn::Type| match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last().cloned(),
        _ => None,
    };
    let Some(option) = last(ty).filter(|s| s.ident == "Option") else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &option.arguments else {
        return false;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => {
            last(inner).is_some_and(|s| {
                s.ident == "String" && matches!(s.arguments, syn::PathArguments::None)
            })
        }
        _ => false,
    }
}

/// `true` when `from`, a minimal object of one type, has what `to`, the minimal object of
/// another, requires: every property of `to` present (recursively) with a value of the same
/// JSON kind (an integer where `to` has an integer). This is what carrying the fields of one
/// API version over to another by JSON name needs.
pub fn carries_over(from: &Value, to: &Value) -> bool {
    match (from, to) {
        (Value::Object(f), Value::Object(t)) => t
            .iter()
            .all(|(k, tv)| f.get(k).is_some_and(|fv| carries_over(fv, tv))),
        (Value::Array(_), Value::Array(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => true,
        (Value::Number(f), Value::Number(t)) => f.is_f64() == t.is_f64() || t.is_f64(),
        _ => false,
    }
}

/// `value` as the text of a `serde_json::json!` argument in generated code: JSON with a space
/// after `:` and `,` (`{"hostname": "", "port": 0}`), keys in the value's order.
pub fn json_macro_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), json_macro_text(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(json_macro_text).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const HEAD: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"edge.example.com\", version = \"v1\", kind = \"EdgeSite\", namespaced)]\n#[serde(rename_all = \"camelCase\")]\n";

    /// The minimal spec of `EdgeSite` v1 whose spec struct has `body` and whose file has `more`.
    fn spec_of(body: &str, more: &str) -> Value {
        let tmp = tempfile::tempdir().unwrap();
        let lib = (
            tmp.path().join("src/lib.rs"),
            format!("{HEAD}pub struct EdgeSiteSpec {{\n{body}\n}}\n{more}"),
        );
        let specs = minimal_specs(tmp.path(), vec![lib], "edge.example.com", "EdgeSite").unwrap();
        assert_eq!(specs.keys().collect::<Vec<_>>(), ["v1"]);
        specs["v1"].clone()
    }

    #[test]
    fn required_scalars_get_empty_values_options_are_left_out_and_defaults_kept() {
        let spec = spec_of(
            "pub hostname: String, pub port: i32, pub weight: f64, pub enabled: bool,\n\
             pub note: Option<String>, #[serde(default)] pub retries: u32, pub big: u64",
            "",
        );
        assert_eq!(
            spec,
            json!({"hostname": "", "port": 0, "weight": 0.0, "enabled": false, "big": 0, "retries": 0})
        );
        assert_eq!(
            json_macro_text(&spec),
            r#"{"big": 0, "enabled": false, "hostname": "", "port": 0, "retries": 0, "weight": 0.0}"#
        );
    }

    #[test]
    fn collections_maps_and_nested_structs() {
        let spec = spec_of(
            "pub tags: Vec<String>, pub labels: std::collections::BTreeMap<String, String>,\n\
             pub location: Location, pub backup: Option<Location>, pub pair: [i32; 2]",
            "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             pub struct Location { pub region: String, pub zone: Option<String>, pub racks: Vec<u8> }\n",
        );
        assert_eq!(
            spec,
            json!({
                "tags": [],
                "labels": {},
                "location": {"region": "", "racks": []},
                "pair": [0, 0],
            })
        );
    }

    #[test]
    fn enums_take_their_first_value() {
        let spec = spec_of(
            "pub tier: Tier, pub mode: Option<Tier>, pub shape: Shape",
            "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             pub enum Tier { Gold, Silver }\n\
             #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[serde(rename_all = \"camelCase\")]\n\
             pub enum Shape { Circle { radius: f64 }, Square { side: i32 } }\n",
        );
        assert_eq!(
            spec,
            json!({"tier": "Gold", "shape": {"circle": {"radius": 0.0}}})
        );
    }

    #[test]
    fn an_empty_or_all_optional_spec_is_an_empty_object() {
        let spec = spec_of(
            "pub foo: Option<String>,\n\
             #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\n\
             pub any: Option<serde_json::Value>",
            "",
        );
        assert_eq!(spec, json!({}));
        let spec = spec_of(
            "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\n\
             pub any: serde_json::Value",
            "",
        );
        assert_eq!(spec, json!({"any": {}}));
    }

    #[test]
    fn carrying_over_needs_every_required_field_of_the_target() {
        let hub = json!({"hostname": "", "port": 0, "location": {"region": ""}});
        assert!(carries_over(&hub, &json!({})));
        assert!(carries_over(&hub, &json!({"port": 0.0})));
        assert!(carries_over(&hub, &hub));
        assert!(!carries_over(&json!({}), &hub));
        assert!(!carries_over(
            &json!({"hostname": "", "port": 0, "location": {}}),
            &hub
        ));
        assert!(!carries_over(&json!({"port": 0.0}), &json!({"port": 0})));
        assert!(!carries_over(&json!({"port": ""}), &json!({"port": 0})));
    }

    /// Strings serde checks: a `Time`, an `IpAddr`, a `char`, a UUID; a `Quantity` as a
    /// string so that it is written back unchanged.
    #[test]
    fn strings_with_a_format_or_a_length_get_a_value_serde_reads() {
        let spec = spec_of(
            "pub deadline: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,\n\
             pub addr: std::net::IpAddr, pub sep: char,\n\
             pub cpu: k8s_openapi::apimachinery::pkg::api::resource::Quantity",
            "",
        );
        assert_eq!(
            spec,
            json!({"deadline": "1970-01-01T00:00:00Z", "addr": "0.0.0.0", "sep": "a", "cpu": "0"})
        );
        // Each value deserializes into its Rust type.
        let _: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time =
            serde_json::from_value(spec["deadline"].clone()).unwrap();
        let _: std::net::IpAddr = serde_json::from_value(spec["addr"].clone()).unwrap();
        let _: char = serde_json::from_value(spec["sep"].clone()).unwrap();
        let q: k8s_openapi::apimachinery::pkg::api::resource::Quantity =
            serde_json::from_value(spec["cpu"].clone()).unwrap();
        assert_eq!(serde_json::to_value(q).unwrap(), json!("0"));
    }

    /// A required string with a `pattern` gets a value the pattern matches: the generated
    /// webhook tests create their object on the test cluster, which checks patterns as the API
    /// server does. Before, they sent `""` and the Database example's `version` was refused.
    #[test]
    fn strings_with_a_pattern_get_a_value_it_matches() {
        for (pattern, min, want) in [
            (r"^[0-9]+\.[0-9]+(\.[0-9]+)?$", 0, "0.0"),
            (r"^[0-9]+\.[0-9]+\.[0-9]+$", 0, "0.0.0"),
            (r"^(mysql|postgres)$", 0, "mysql"),
            (r"^[a-z]([-a-z0-9]*[a-z0-9])?$", 3, "aaa"),
            (r"[^/]+", 0, "a"),
            (r"^v\d+$", 0, "v0"),
            (r"x{2,}", 0, "xx"),
        ] {
            let got = pattern_sample(pattern, min).unwrap();
            assert_eq!(got, want, "{pattern}");
            assert!(regex::Regex::new(pattern).unwrap().is_match(&got));
        }
        // Not spelled: a pattern the regex crate does not read (a look-ahead), or a word
        // boundary the shortest text misses; the field falls back to its length rule.
        assert_eq!(pattern_sample(r"^(?=a)a$", 0), None);
        assert_eq!(pattern_sample(r"^\b$", 0), None);
        let spec = spec_of(
            "#[schemars(regex(pattern = r\"^[0-9]+\\.[0-9]+$\"))] pub version: String,\n\
             #[schemars(length(min = 2))] pub name: String",
            "",
        );
        assert_eq!(spec, json!({"version": "0.0", "name": "aa"}));
    }

    #[test]
    fn schema_shapes_without_sources() {
        let schema: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "required": ["port", "count"],
            "properties": {
                "port": {"x-kubernetes-int-or-string": true},
                "count": {"type": "integer", "minimum": 1},
                "name": {"type": "string"},
            },
        }))
        .unwrap();
        assert_eq!(minimal_value(&schema), json!({"port": "0", "count": 1}));
    }

    #[test]
    fn derivation_errors_are_reported_not_panicked() {
        let tmp = tempfile::tempdir().unwrap();
        let lib = |text: &str| vec![(tmp.path().join("lib.rs"), text.to_string())];
        let e = minimal_specs(
            tmp.path(),
            lib("pub struct {"),
            "edge.example.com",
            "EdgeSite",
        )
        .unwrap_err();
        assert!(e.contains("lib.rs:1:"), "{e}");
        let e = minimal_specs(
            tmp.path(),
            lib("pub struct A;"),
            "edge.example.com",
            "EdgeSite",
        )
        .unwrap_err();
        assert!(
            e.contains("no #[derive(CustomResource)] of kind EdgeSite"),
            "{e}"
        );
    }

    #[test]
    fn the_example_field_is_found_only_as_scaffolded() {
        let scaffolded = "pub struct EdgeSiteSpec {\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,\n}\n";
        assert!(has_example_foo(scaffolded, "EdgeSite"));
        assert!(has_example_foo(
            "pub struct EdgeSiteSpec { pub hostname: String, pub foo: std::option::Option<std::string::String> }",
            "EdgeSite"
        ));
        for other in [
            "pub struct EdgeSiteSpec { pub hostname: String }",
            "pub struct EdgeSiteSpec { pub foo: String }",
            "pub struct EdgeSiteSpec { pub foo: Option<i32> }",
            "pub struct EdgeSiteSpec { foo: Option<String> }",
            "pub struct EdgeSiteSpec { #[serde(rename = \"bar\")] pub foo: Option<String> }",
            "pub struct OtherSpec { pub foo: Option<String> }",
            "pub struct EdgeSiteSpec {",
        ] {
            assert!(!has_example_foo(other, "EdgeSite"), "{other}");
        }
        assert!(has_example_foo(
            "#[derive(CustomResource)]\npub struct SiteSpec { pub foo: Option<String> }",
            "EdgeSite"
        ));
    }
}
