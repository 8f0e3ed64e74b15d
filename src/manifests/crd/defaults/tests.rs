//! Defaults through the whole static engine: one small type file per behaviour, the
//! `default` each property gets compared with what `crd()` gives (serde_json of the Rust
//! value), or the refusal.

use serde_json::{Value, json};
use std::path::Path;

use crate::manifests::diag::{Cause, Diagnostic};
use crate::manifests::{SourceSet, crds_from_sources};

const HEADER: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\nuse std::collections::{BTreeMap, BTreeSet};\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

fn run(body: &str) -> Result<Value, Vec<Diagnostic>> {
    let set = SourceSet {
        files: vec![SourceSet::parse_text(Path::new("x.rs"), format!("{HEADER}{body}")).unwrap()],
    };
    let crds = crds_from_sources(&set)?;
    let v = serde_json::to_value(&crds[0].crd).unwrap();
    Ok(
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            .clone(),
    )
}

/// The `default` of each property of the spec.
fn defaults(body: &str) -> Value {
    let props = run(body).unwrap_or_else(|d| panic!("{d:?}"));
    let mut out = serde_json::Map::new();
    for (k, v) in props.as_object().unwrap() {
        out.insert(k.clone(), v.get("default").cloned().unwrap_or(Value::Null));
    }
    Value::Object(out)
}

fn refusal(body: &str) -> Diagnostic {
    let d = run(body).expect_err("must be refused");
    assert_eq!(d.len(), 1, "{d:?}");
    d.into_iter().next().unwrap()
}

const PROBE: &str = "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(rename_all = \"camelCase\")]\npub struct Probe { pub period_seconds: i32, pub timeout_seconds: i32, pub path: String }\nimpl Default for Probe {\n    fn default() -> Self { Probe { period_seconds: 10, timeout_seconds: 3, path: \"/healthz\".into() } }\n}\n";

#[test]
fn struct_update_takes_the_missing_fields_from_the_hand_written_default() {
    let d = defaults(&format!(
        "pub struct ThingSpec {{\n  #[serde(default = \"fast\")] pub a: Probe,\n  #[serde(default = \"Probe::slow\")] pub b: Probe,\n  #[serde(default)] pub c: Probe,\n  #[serde(default = \"outer\")] pub d: Outer,\n}}\n{PROBE}\
         fn fast() -> Probe {{ Probe {{ period_seconds: 5, ..Default::default() }} }}\n\
         impl Probe {{ fn slow() -> Self {{ Self {{ timeout_seconds: 30, ..Self::default() }} }} }}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, Default)]\npub struct Outer {{ pub n: i32, pub probe: Probe }}\n\
         fn outer() -> Outer {{ Outer {{ n: 1, ..Default::default() }} }}\n"
    ));
    assert_eq!(
        d["a"],
        json!({"periodSeconds": 5, "timeoutSeconds": 3, "path": "/healthz"})
    );
    assert_eq!(
        d["b"],
        json!({"periodSeconds": 10, "timeoutSeconds": 30, "path": "/healthz"})
    );
    assert_eq!(
        d["c"],
        json!({"periodSeconds": 10, "timeoutSeconds": 3, "path": "/healthz"})
    );
    // A derived Default takes each field type's own Default, the hand-written one included.
    assert_eq!(
        d["d"],
        json!({"n": 1, "probe": {"periodSeconds": 10, "timeoutSeconds": 3, "path": "/healthz"}})
    );
}

#[test]
fn struct_update_over_a_container_default_and_a_base_value() {
    let d = defaults(&format!(
        "#[serde(default)]\npub struct ThingSpec {{ pub x: i32, pub probe: Probe }}\nimpl Default for ThingSpec {{\n  fn default() -> Self {{ let base = Probe {{ path: \"/ready\".to_string(), ..Probe::default() }}; ThingSpec {{ x: 7, probe: Probe {{ period_seconds: 1, ..base }} }} }}\n}}\n{PROBE}"
    ));
    assert_eq!(d["x"], json!(7));
    assert_eq!(
        d["probe"],
        json!({"periodSeconds": 1, "timeoutSeconds": 3, "path": "/ready"})
    );
}

#[test]
fn struct_update_over_a_default_that_cannot_be_evaluated_is_refused() {
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"fast\")] pub a: Probe }\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Probe { pub period: i32, pub pid: u32 }\nimpl Default for Probe { fn default() -> Self { Probe { period: 10, pid: std::process::id() } } }\nfn fast() -> Probe { Probe { period: 5, ..Default::default() } }\n",
    );
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert_eq!(d.line, 7);
    assert!(
        d.message.contains("`impl Default for Probe`"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains("`std::process::id()` (x.rs:10)"),
        "{}",
        d.message
    );
    assert!(d.help.unwrap().contains("--evaluate auto"));
}

#[test]
fn a_default_impl_updating_from_itself_is_refused() {
    // `..Default::default()` inside `impl Default` recurses forever at run time.
    let d = refusal(
        "pub struct ThingSpec { #[serde(default)] pub a: Probe }\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Probe { pub period: i32, pub path: String }\nimpl Default for Probe { fn default() -> Self { Probe { period: 10, ..Default::default() } } }\n",
    );
    assert!(d.message.contains("recurses too deeply"), "{}", d.message);
}

#[test]
fn to_string_of_numbers_bools_and_chars_gives_strings() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"a\")] pub a: String,\n  #[serde(default = \"b\")] pub b: String,\n  #[serde(default = \"c\")] pub c: String,\n  #[serde(default = \"d\")] pub d: String,\n  #[serde(default = \"e\")] pub e: String,\n  #[serde(default = \"f\")] pub f: String,\n  #[serde(default = \"g\")] pub g: Vec<String>,\n  #[serde(default = \"h\")] pub h: Option<String>,\n}\nconst PORT: u16 = 8080;\nconst ON: bool = true;\nconst RATIO: f32 = 0.1;\n\
         fn a() -> String { PORT.to_string() }\nfn b() -> String { ON.to_string() }\nfn c() -> String { 'x'.to_string() }\nfn d() -> String { String::from('y') }\nfn e() -> String { RATIO.to_string() }\nfn f() -> String { 1.0f64.to_string() }\n\
         fn g() -> Vec<String> { vec![u64::MAX.to_string(), (-3i8).to_string(), 7.to_string(), \"s\".to_owned(), \"t\".into()] }\nfn h() -> Option<String> { Some(2.5.to_string()) }\n",
    );
    assert_eq!(d["a"], json!("8080"));
    assert_eq!(d["b"], json!("true"));
    assert_eq!(d["c"], json!("x"));
    assert_eq!(d["d"], json!("y"));
    // Display of an f32 is its shortest round-trip text, of 1.0f64 is "1".
    assert_eq!(d["e"], json!("0.1"));
    assert_eq!(d["f"], json!("1"));
    assert_eq!(d["g"], json!(["18446744073709551615", "-3", "7", "s", "t"]));
    assert_eq!(d["h"], json!("2.5"));
}

#[test]
fn a_number_where_a_string_is_expected_is_refused() {
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"a\")] pub a: String }\nconst PORT: u16 = 8080;\nfn a() -> String { PORT.into() }\n",
    );
    assert!(d.message.contains("`PORT.into()`"), "{}", d.message);
}

#[test]
fn f32_values_widen_in_every_position() {
    let w = |x: f32| json!(x as f64);
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"v\")] pub v: Vec<f32>,\n  #[serde(default = \"arr\")] pub arr: [f32; 2],\n  #[serde(default = \"opt\")] pub opt: Option<f32>,\n  #[serde(default = \"s\")] pub s: Inner,\n  #[serde(default = \"m\")] pub m: BTreeMap<String, f32>,\n  #[serde(default = \"sum\")] pub sum: f32,\n  #[serde(default = \"wide\")] pub wide: f64,\n}\nconst F: f32 = 0.1;\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Inner { pub x: f32, pub xs: Vec<f32> }\n\
         fn v() -> Vec<f32> { vec![0.1, F, 1e-3, -2.7] }\nfn arr() -> [f32; 2] { [0.2, 0.3] }\nfn opt() -> Option<f32> { Some(0.7) }\nfn s() -> Inner { Inner { x: 0.1, xs: vec![0.9] } }\n\
         fn m() -> BTreeMap<String, f32> { BTreeMap::from([(\"a\".to_string(), 0.1)]) }\nfn sum() -> f32 { 0.1 + 0.2 }\nfn wide() -> f64 { F as f64 }\n",
    );
    assert_eq!(
        d["v"],
        json!([0.1f32 as f64, 0.1f32 as f64, 1e-3f32 as f64, -2.7f32 as f64])
    );
    assert_eq!(d["v"][0], json!(0.10000000149011612));
    assert_eq!(d["arr"], json!([w(0.2), w(0.3)]));
    assert_eq!(d["opt"], w(0.7));
    assert_eq!(d["s"], json!({"x": w(0.1), "xs": [w(0.9)]}));
    assert_eq!(d["m"], json!({"a": w(0.1)}));
    // f32 arithmetic is done in f32.
    assert_eq!(d["sum"], w(0.1f32 + 0.2f32));
    assert_eq!(d["wide"], w(0.1));
}

#[test]
fn constants_lets_and_std_constructors_are_evaluated() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"ThingSpec::port\")] pub port: u16,\n  #[serde(default = \"max\")] pub max: u64,\n  #[serde(default = \"min\")] pub min: i32,\n  #[serde(default = \"day\")] pub day: u32,\n  #[serde(default = \"name\")] pub name: String,\n  #[serde(default = \"list\")] pub list: Vec<u8>,\n  #[serde(default = \"map\")] pub map: BTreeMap<String, i64>,\n  #[serde(default = \"set\")] pub set: BTreeSet<String>,\n  #[serde(default = \"none\")] pub none: Option<i32>,\n  #[serde(default = \"empty\")] pub empty: BTreeMap<String, String>,\n  #[serde(default = \"pi\")] pub pi: f64,\n  #[serde(default = \"shifted\")] pub shifted: u64,\n}\n\
         impl ThingSpec { const PORT: u16 = 8000 + 443; fn port() -> u16 { Self::PORT } }\n\
         const DAY: u32 = 60 * 60 * 24;\nconst APP: &str = \"web\";\n\
         fn max() -> u64 { u64::MAX }\nfn min() -> i32 { i32::MIN }\nfn day() -> u32 { let d = DAY; d / 2 + 1 }\n\
         fn name() -> String { let port: u16 = 80; format!(\"{}-{}:{{{}}}\", APP, port, 1.5f32) }\n\
         fn list() -> Vec<u8> { let n = 3; vec![n, 0x1F, b'a' as u8, 255] }\n\
         fn map() -> BTreeMap<String, i64> { BTreeMap::from([(\"b\".to_string(), 2), (\"a\".into(), -1), (\"b\".into(), 3)]) }\n\
         fn set() -> BTreeSet<String> { BTreeSet::from([\"z\".to_string(), \"a\".to_string(), \"z\".to_string()]) }\n\
         fn none() -> Option<i32> { None }\nfn empty() -> BTreeMap<String, String> { Default::default() }\nfn pi() -> f64 { std::f64::consts::PI }\nfn shifted() -> u64 { 1 << 40 }\n",
    );
    assert_eq!(d["port"], json!(8443));
    assert_eq!(d["max"], json!(u64::MAX));
    assert_eq!(d["min"], json!(i32::MIN));
    assert_eq!(d["day"], json!(43201));
    assert_eq!(d["name"], json!("web-80:{1.5}"));
    assert_eq!(d["list"], json!([3, 31, 97, 255]));
    assert_eq!(d["map"], json!({"a": -1, "b": 3}));
    assert_eq!(d["set"], json!(["a", "z"]));
    assert_eq!(d["none"], Value::Null);
    assert_eq!(d["empty"], json!({}));
    assert_eq!(d["pi"], json!(std::f64::consts::PI));
    assert_eq!(d["shifted"], json!(1u64 << 40));
}

#[test]
fn overflowing_constants_are_invalid() {
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"b\")] pub b: u8 }\nconst B: u8 = 200 + 100;\nfn b() -> u8 { B }\n",
    );
    assert_eq!(d.cause, Cause::Invalid);
    assert!(d.message.contains("`200 + 100` (x.rs:8)"), "{}", d.message);
    assert!(d.message.contains("overflows u8"), "{}", d.message);
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"b\")] pub b: i8 }\nfn b() -> i8 { 128 }\n",
    );
    assert_eq!(d.cause, Cause::Invalid);
    assert!(d.message.contains("does not fit in i8"), "{}", d.message);
}

#[test]
fn what_the_evaluator_does_not_know_is_refused_with_the_expression() {
    for (body, expr) in [
        ("format!(\"{:>5}\", 1)", "format!(\"{:>5}\", 1)"),
        (
            "std::env::var(\"X\").unwrap()",
            "std::env::var(\"X\").unwrap()",
        ),
        ("\"a\".repeat(3)", "\"a\".repeat(3)"),
    ] {
        let d = refusal(&format!(
            "pub struct ThingSpec {{ #[serde(default = \"s\")] pub s: String }}\nfn s() -> String {{ {body} }}\n"
        ));
        assert_eq!(d.cause, Cause::NeedsCompile, "{body}");
        assert!(
            d.message.contains(&format!("`{expr}` (x.rs:8)")),
            "{body}: {}",
            d.message
        );
    }
    // A function of another crate named `default` is not the type's Default.
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"presets::default\")] pub s: String }\n",
    );
    assert!(
        d.message.contains("not defined in the given sources"),
        "{}",
        d.message
    );
    // A HashSet of several elements serializes in an order only the run knows.
    let d = refusal(
        "pub struct ThingSpec { #[serde(default = \"s\")] pub s: std::collections::HashSet<i32> }\nfn s() -> std::collections::HashSet<i32> { std::collections::HashSet::from([1, 2]) }\n",
    );
    assert!(d.message.contains("order"), "{}", d.message);
}

#[test]
fn enum_values_with_data_serialize_with_their_representation() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"b\")] pub b: Mode,\n  #[serde(default = \"c\")] pub c: Mode,\n}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(rename_all = \"camelCase\")]\npub enum Mode { Fixed(u16), Range { lo: f32, hi: u8 } }\n\
         fn b() -> Mode { Mode::Fixed(3) }\nfn c() -> Mode { Mode::Range { lo: 0.1, hi: 2 } }\n",
    );
    assert_eq!(d["b"], json!({"fixed": 3}));
    assert_eq!(d["c"], json!({"range": {"lo": 0.1f32 as f64, "hi": 2}}));
}

#[test]
fn nonzero_bounds_and_negative_attribute_literals_are_evaluated() {
    let props = run(
        "pub struct ThingSpec {\n  #[serde(default = \"lo\")] pub lo: std::num::NonZeroU8,\n  #[serde(default = \"hi\")] pub hi: std::num::NonZeroI64,\n  #[schemars(range(min = -79))] pub r: i64,\n}\nfn lo() -> std::num::NonZeroU8 { std::num::NonZeroU8::MIN }\nfn hi() -> std::num::NonZeroI64 { std::num::NonZeroI64::MAX }\n",
    )
    .unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(props["lo"]["default"], json!(1));
    assert_eq!(props["hi"]["default"], json!(i64::MAX));
    // schemars writes range bounds as f64.
    assert_eq!(props["r"]["minimum"], json!(-79.0));
}

#[test]
fn a_struct_with_a_serde_tag_writes_the_tag_in_its_default() {
    // schemars leaves the tag out of a struct's schema, so the API server would prune it from
    // the default and refuses the CRD: the refusal shows the default serde writes.
    let d = refusal(
        "pub struct ThingSpec { #[serde(default)] pub p: Tagged }\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, Default)]\n#[serde(tag = \"kind\", rename = \"tagged\")]\npub struct Tagged { pub n: u8 }\n",
    );
    assert_eq!(d.cause, Cause::Invalid);
    assert!(
        d.message
            .contains(r#"the default {"kind":"tagged","n":0} has the field .kind"#),
        "{}",
        d.message
    );
}

#[test]
fn addresses_times_and_durations_serialize_as_serde_writes_them() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"a\")] pub a: std::net::Ipv4Addr,\n  #[serde(default = \"b\")] pub b: std::net::Ipv6Addr,\n  #[serde(default = \"c\")] pub c: std::net::IpAddr,\n  #[serde(default = \"t\")] pub t: std::time::SystemTime,\n  #[serde(default)] pub zero: std::time::Duration,\n  #[serde(default = \"dur\")] pub dur: std::time::Duration,\n}\n\
         fn a() -> std::net::Ipv4Addr { std::net::Ipv4Addr::new(10, 0, 0, 1) }\nfn b() -> std::net::Ipv6Addr { std::net::Ipv6Addr::LOCALHOST }\nfn c() -> std::net::IpAddr { std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST) }\n\
         fn t() -> std::time::SystemTime { std::time::SystemTime::UNIX_EPOCH }\nfn dur() -> std::time::Duration { std::time::Duration::from_millis(1500) }\n",
    );
    assert_eq!(d["a"], json!("10.0.0.1"));
    assert_eq!(d["b"], json!("::1"));
    assert_eq!(d["c"], json!("127.0.0.1"));
    assert_eq!(
        d["t"],
        json!({"secs_since_epoch": 0, "nanos_since_epoch": 0})
    );
    assert_eq!(d["zero"], json!({"secs": 0, "nanos": 0}));
    assert_eq!(d["dur"], json!({"secs": 1, "nanos": 500_000_000}));
}

#[test]
fn tagged_enum_variants_with_data_carry_their_tag() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"a\")] pub a: Inner,\n  #[serde(default = \"b\")] pub b: Adj,\n}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(tag = \"type\")]\npub enum Inner { Web { port: u16 } }\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(tag = \"t\", content = \"c\")]\npub enum Adj { Size(u8) }\n\
         fn a() -> Inner { Inner::Web { port: 80 } }\nfn b() -> Adj { Adj::Size(3) }\n",
    );
    assert_eq!(d["a"], json!({"type": "Web", "port": 80}));
    assert_eq!(d["b"], json!({"t": "Size", "c": 3}));
}

const IS_DEFAULT: &str = "fn is_default<T: Default + PartialEq>(v: &T) -> bool { *v == T::default() }\nfn is_default_ref<T>(v: &T) -> bool where T: Default + PartialEq { v == &T::default() }\nfn is_default_rev<T: Default + PartialEq>(t: &T) -> bool { (<T as Default>::default() == *t) }\nfn is_default_plain<T: Default + PartialEq>(t: &T) -> bool { &Default::default() == t }\n";

#[test]
fn a_generic_is_default_predicate_compares_with_the_types_default() {
    let d = defaults(&format!(
        "#[serde(default)]\npub struct ThingSpec {{ pub inner: Inner }}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(default)]\npub struct Inner {{\n\
           #[serde(skip_serializing_if = \"is_default\")] pub a: u32,\n\
           #[serde(skip_serializing_if = \"is_default\")] pub b: u32,\n\
           #[serde(skip_serializing_if = \"is_default_ref\")] pub c: String,\n\
           #[serde(skip_serializing_if = \"is_default_ref\")] pub d: String,\n\
           #[serde(skip_serializing_if = \"is_default_rev\")] pub e: bool,\n\
           #[serde(skip_serializing_if = \"is_default_rev\")] pub f: Vec<i32>,\n\
           #[serde(skip_serializing_if = \"is_default_plain\")] pub g: Option<String>,\n\
           #[serde(skip_serializing_if = \"is_default_plain\")] pub h: [f64; 2],\n\
           #[serde(skip_serializing_if = \"is_default\")] pub i: [f64; 2],\n\
           #[serde(skip_serializing_if = \"is_default\")] pub j: BTreeMap<String, u8>,\n\
           #[serde(skip_serializing_if = \"is_default\")] pub k: f32,\n\
         }}\n\
         impl Default for Inner {{ fn default() -> Self {{ Inner {{ a: 0, b: 3, c: String::new(), d: \"x\".into(), e: false, f: vec![], g: None, h: [-0.0, 0.0], i: [0.5, 0.0], j: BTreeMap::new(), k: 0.0 }} }} }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ inner: Inner::default() }} }} }}\n{IS_DEFAULT}"
    ));
    assert_eq!(d["inner"], json!({"b": 3, "d": "x", "i": [0.5, 0.0]}));
}

#[test]
fn a_generic_is_default_predicate_on_a_field_default() {
    let d = defaults(&format!(
        "pub struct ThingSpec {{\n\
           #[serde(default, skip_serializing_if = \"is_default\")] pub a: i64,\n\
           #[serde(default = \"seven\", skip_serializing_if = \"is_default\")] pub b: i64,\n\
         }}\nfn seven() -> i64 {{ 7 }}\n{IS_DEFAULT}"
    ));
    assert_eq!(d, json!({"a": null, "b": 7}));
}

#[test]
fn an_is_default_predicate_on_a_user_type_is_refused() {
    // A struct's `PartialEq` may be hand-written, or compare what serde skips.
    let d = refusal(&format!(
        "#[serde(default)]\npub struct ThingSpec {{ #[serde(skip_serializing_if = \"is_default\")] pub p: P }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ p: P {{ n: 1 }} }} }} }}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, Default, PartialEq)]\npub struct P {{ pub n: i32 }}\n{IS_DEFAULT}"
    ));
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert!(
        d.message
            .contains("comparing a `P` value with its Default is not evaluated"),
        "{}",
        d.message
    );
}

#[test]
fn a_local_predicate_with_another_body_is_refused_with_its_line() {
    let d = refusal(
        "#[serde(default)]\npub struct ThingSpec {\n  #[serde(skip_serializing_if = \"is_zero\")] pub n: u32,\n}\n\
         impl Default for ThingSpec { fn default() -> Self { ThingSpec { n: 1 } } }\n\
         fn is_zero<T: Default + PartialEq>(v: &T) -> bool { *v != T::default() }\n",
    );
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert!(
        d.message.contains("`\"is_zero\"` (x.rs:9)"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains("not a generic `*v == T::default()`"),
        "{}",
        d.message
    );
}

#[test]
fn an_is_default_predicate_on_an_option_of_a_nullable_is_refused() {
    let d = refusal(&format!(
        "#[serde(default)]\npub struct ThingSpec {{ #[serde(skip_serializing_if = \"is_default\")] pub o: Option<Option<u8>> }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ o: Some(None) }} }} }}\n{IS_DEFAULT}"
    ));
    assert_eq!(d.cause, Cause::NeedsCompile);
}

const SER_WITH: &str = "fn as_text<S: serde::Serializer>(v: &Option<u32>, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(&format!(\"{v:?}\")) }\n";

#[test]
fn serialize_with_is_accepted_where_the_skip_predicate_skips_the_default() {
    let d = defaults(&format!(
        "#[serde(default)]\npub struct ThingSpec {{\n\
           #[serde(skip_serializing_if = \"Option::is_none\", serialize_with = \"as_text\")] pub a: Option<u32>,\n\
           pub inner: Inner,\n\
         }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ a: None, inner: Inner {{ n: 2, t: None }} }} }} }}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Inner {{ pub n: i32, #[serde(skip_serializing_if = \"Option::is_none\", serialize_with = \"as_text\")] pub t: Option<u32> }}\n{SER_WITH}"
    ));
    assert_eq!(d["a"], Value::Null);
    assert_eq!(d["inner"], json!({"n": 2}));
}

#[test]
fn serialize_with_is_refused_where_the_skip_predicate_keeps_the_default() {
    let d = refusal(&format!(
        "#[serde(default)]\npub struct ThingSpec {{\n\
           #[serde(skip_serializing_if = \"Option::is_none\", serialize_with = \"as_text\")] pub a: Option<u32>,\n\
         }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ a: Some(1) }} }} }}\n{SER_WITH}"
    ));
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert!(d.message.contains("`serialize_with`"), "{}", d.message);
    let d = refusal(&format!(
        "#[serde(default)]\npub struct ThingSpec {{ pub inner: Inner }}\n\
         impl Default for ThingSpec {{ fn default() -> Self {{ ThingSpec {{ inner: Inner {{ n: 2, t: Some(3) }} }} }} }}\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Inner {{ pub n: i32, #[serde(skip_serializing_if = \"Option::is_none\", serialize_with = \"as_text\")] pub t: Option<u32> }}\n{SER_WITH}"
    ));
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert!(
        d.message
            .contains("field `t` is serialized with `serialize_with`"),
        "{}",
        d.message
    );
}

#[test]
fn unwrap_and_expect_of_some_and_ok_are_the_value_itself() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"a\")] pub a: i32,\n  #[serde(default = \"b\")] pub b: String,\n  #[serde(default = \"c\")] pub c: Vec<u8>,\n}\n\
         fn a() -> i32 { Some(7).unwrap() }\n\
         fn b() -> String { Ok::<_, ()>(\"x\".to_string()).expect(\"infallible\") }\n\
         fn c() -> Vec<u8> { Option::Some(vec![1, 2]).unwrap() }\n",
    );
    assert_eq!(d, json!({"a": 7, "b": "x", "c": [1, 2]}));
    // Anything else unwrapped stays refused.
    let r = refusal(
        "pub struct ThingSpec { #[serde(default = \"a\")] pub a: i32 }\nfn a() -> i32 { std::env::var(\"A\").unwrap().parse().unwrap() }\n",
    );
    assert_eq!(r.cause, Cause::NeedsCompile, "{r:?}");
}

#[test]
fn unwrapped_conversions_of_literals_are_computed_as_std_computes_them() {
    let d = defaults(
        "pub struct ThingSpec {\n  #[serde(default = \"port\")] pub port: u16,\n  #[serde(default = \"plus\")] pub plus: i32,\n  #[serde(default = \"w\")] pub w: u8,\n  #[serde(default = \"off\")] pub off: i64,\n  #[serde(default = \"ratio\")] pub ratio: f32,\n  #[serde(default = \"on\")] pub on: bool,\n  #[serde(default = \"c\")] pub c: char,\n  #[serde(default = \"n\")] pub n: std::num::NonZeroU32,\n  #[serde(default = \"k\")] pub k: std::num::NonZeroU32,\n  #[serde(default = \"opt\")] pub opt: Option<u16>,\n  #[serde(default = \"s\")] pub s: String,\n  #[serde(default = \"fit\")] pub fit: i8,\n}\n\
         const K: std::num::NonZeroU32 = std::num::NonZeroU32::new(7).unwrap();\n\
         fn port() -> u16 { \"8080\".parse::<u16>().unwrap() }\n\
         fn plus() -> i32 { \"+12\".parse().expect(\"a number\") }\n\
         fn w() -> u8 { u8::try_from(200u32).unwrap() }\n\
         fn off() -> i64 { i64::from_str(\"-42\").unwrap() }\n\
         fn ratio() -> f32 { \"0.1\".parse().unwrap() }\n\
         fn on() -> bool { (\"true\").parse().unwrap() }\n\
         fn c() -> char { \"x\".parse().unwrap() }\n\
         fn n() -> std::num::NonZeroU32 { std::num::NonZeroU32::new(3).expect(\"non-zero\") }\n\
         fn k() -> std::num::NonZeroU32 { K }\n\
         fn opt() -> Option<u16> { let wide: u32 = 9090; Some(wide.try_into().unwrap()) }\n\
         fn s() -> String { \"x\".parse().unwrap() }\n\
         fn fit() -> i8 { i8::try_from(-128).unwrap() }\n",
    );
    assert_eq!(
        d,
        json!({"port": 8080, "plus": 12, "w": 200, "off": -42, "ratio": 0.1f32 as f64, "on": true,
               "c": "x", "n": 3, "k": 7, "opt": 9090, "s": "x", "fit": -128})
    );
}

#[test]
fn a_conversion_that_fails_on_its_literals_is_refused_as_a_panic_of_crd() {
    for (ty, body, why) in [
        (
            "u16",
            "\"80000\".parse::<u16>().unwrap()",
            "does not parse as u16",
        ),
        ("i32", "\" 1\".parse().unwrap()", "does not parse as i32"),
        (
            "u32",
            "\"-1\".parse::<u32>().expect(\"n\")",
            "does not parse as u32",
        ),
        ("bool", "\"yes\".parse().unwrap()", "does not parse as bool"),
        ("u8", "u8::try_from(300u32).unwrap()", "out of range"),
        (
            "u16",
            "let x: i64 = -1; x.try_into().unwrap()",
            "out of range",
        ),
        (
            "std::num::NonZeroU32",
            "std::num::NonZeroU32::new(0).unwrap()",
            "is `None`",
        ),
    ] {
        let d = refusal(&format!(
            "pub struct ThingSpec {{ #[serde(default = \"a\")] pub a: {ty} }}\nfn a() -> {ty} {{ {body} }}\n"
        ));
        assert_eq!(d.cause, Cause::Invalid, "{body}: {d:?}");
        assert!(d.message.contains(why), "{body}: {}", d.message);
        assert!(d.message.contains("would panic"), "{body}: {}", d.message);
        assert!(d.message.contains("(x.rs:8)"), "{body}: {}", d.message);
    }
    // Undecidable targets and receivers stay refused for the compile fallback.
    for (ty, body) in [
        (
            "u16",
            "std::env::var(\"P\").unwrap().parse::<u16>().unwrap()",
        ),
        (
            "k8s_openapi::apimachinery::pkg::api::resource::Quantity",
            "\"1Gi\".parse::<k8s_openapi::apimachinery::pkg::api::resource::Quantity>().unwrap()",
        ),
        ("f64", "f64::try_from(1u8).unwrap()"),
    ] {
        let d = refusal(&format!(
            "pub struct ThingSpec {{ #[serde(default = \"a\")] pub a: {ty} }}\nfn a() -> {ty} {{ {body} }}\n"
        ));
        assert_eq!(d.cause, Cause::NeedsCompile, "{body}: {d:?}");
    }
}
