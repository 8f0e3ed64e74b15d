use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;
use crate::manifests::crd::crds_from_sources;
use crate::manifests::diag::Cause;
use crate::manifests::source::SourceSet;

fn cfg(features: &[&str]) -> Cfg {
    Cfg::new(
        features
            .iter()
            .map(|f| f.to_string())
            .collect::<BTreeSet<_>>(),
        FeatureSource::Manifest(PathBuf::from("Cargo.toml")),
    )
}

fn truth(c: &Cfg, pred: &str) -> Truth {
    c.eval(&Pred::parse_tokens(pred.parse().unwrap()).unwrap())
}

fn undecided(t: Truth) -> String {
    match t {
        Truth::Undecided(a) => a.text,
        other => panic!("expected undecided, got {other:?}"),
    }
}

#[test]
fn predicates_are_decided_as_cargo_build_of_the_library_sees_them() {
    let c = cfg(&["a", "b-c"]);
    assert_eq!(truth(&c, "test"), Truth::False);
    assert_eq!(truth(&c, "doc"), Truth::False);
    assert_eq!(truth(&c, r#"feature = "a""#), Truth::True);
    assert_eq!(truth(&c, r#"feature = "b-c""#), Truth::True);
    assert_eq!(truth(&c, r#"feature = "z""#), Truth::False);
    assert_eq!(truth(&c, "feature"), Truth::False);
    assert_eq!(truth(&c, "true"), Truth::True);
    assert_eq!(truth(&c, "false"), Truth::False);
    assert_eq!(truth(&c, r#"all(feature = "a", not(test))"#), Truth::True);
    assert_eq!(truth(&c, "all()"), Truth::True);
    assert_eq!(truth(&c, "any()"), Truth::False);
    assert_eq!(truth(&c, r#"any(test, feature = "z")"#), Truth::False);
    assert_eq!(undecided(truth(&c, "unix")), "unix");
    assert_eq!(
        undecided(truth(&c, r#"target_os = "linux""#)),
        r#"target_os = "linux""#
    );
    assert_eq!(undecided(truth(&c, "debug_assertions")), "debug_assertions");
    assert_eq!(undecided(truth(&c, "docsrs")), "docsrs");
    // Decided parts decide what they can: false wins in all, true in any.
    assert_eq!(truth(&c, "all(unix, test)"), Truth::False);
    assert_eq!(truth(&c, r#"any(windows, feature = "a")"#), Truth::True);
    assert_eq!(
        undecided(truth(&c, r#"all(feature = "a", not(windows))"#)),
        "windows"
    );
    assert!(c.features_were_read());
    assert!(!cfg(&[]).features_were_read());
}

#[test]
fn malformed_predicates_are_errors() {
    let err = |p: &str| {
        Pred::parse_tokens(p.parse().unwrap())
            .unwrap_err()
            .to_string()
    };
    assert!(err("").contains("not specified"), "{}", err(""));
    assert!(err("a, b").contains("several"));
    assert!(err("feature = 1").contains("string literal"));
    assert!(err("not(a, b)").contains("exactly one"));
    assert!(err("either(a)").contains("expected all, any or not"));
    assert!(err("a::b").contains("identifier"));
}

fn stripped(text: &str, features: &[&str]) -> String {
    let mut file = syn::parse_file(text).unwrap();
    let errors = strip(&mut file, &cfg(features));
    assert!(errors.is_empty(), "{errors:?}");
    quote::ToTokens::to_token_stream(&file).to_string()
}

fn norm(text: &str) -> String {
    quote::ToTokens::to_token_stream(&syn::parse_file(text).unwrap()).to_string()
}

#[test]
fn left_out_nodes_go_in_every_position_that_matters() {
    let text = r#"
        #[cfg(test)] struct Gone;
        #[cfg(not(test))] struct Kept { #[cfg(feature = "x")] a: i32, #[cfg(not(feature = "x"))] b: i32 }
        enum E { #[cfg(feature = "x")] A, B }
        #[cfg(feature = "x")] use a::X;
        impl Kept { #[cfg(test)] fn t() {} fn d() -> i32 { #[cfg(feature = "x")] let v = 1; Kept { #[cfg(test)] a: 1, b: 2 }.b } }
        fn m(x: i32) -> i32 { match x { #[cfg(test)] 0 => 1, _ => 2 } }
    "#;
    assert_eq!(
        stripped(text, &[]),
        norm(
            "struct Kept { b: i32 }
             enum E { B }
             impl Kept { fn d() -> i32 { Kept { b: 2 }.b } }
             fn m(x: i32) -> i32 { match x { _ => 2 } }"
        )
    );
}

#[test]
fn cfg_attr_is_expanded_nested_and_in_order() {
    let text = r#"
        #[cfg_attr(feature = "schemars", derive(JsonSchema), schemars(rename = "T"))]
        #[cfg_attr(all(), cfg_attr(feature = "serde", serde(rename_all = "camelCase")))]
        #[cfg_attr(test, derive(Default))]
        struct T { #[cfg_attr(feature = "serde", serde(default))] a: i32 }
    "#;
    assert_eq!(
        stripped(text, &["schemars", "serde"]),
        norm(
            r#"#[derive(JsonSchema)] #[schemars(rename = "T")] #[serde(rename_all = "camelCase")]
               struct T { #[serde(default)] a: i32 }"#
        )
    );
    assert_eq!(stripped(text, &[]), norm("struct T { a: i32 }"));
}

#[test]
fn an_undecided_cfg_attr_that_cannot_change_a_schema_is_dropped() {
    let text = r#"
        #![cfg_attr(docsrs, feature(doc_cfg))]
        #[cfg_attr(docsrs, doc(cfg(feature = "x")))]
        #[cfg_attr(unix, derive(Debug, Clone), allow(dead_code))]
        struct T { a: i32 }
    "#;
    assert_eq!(stripped(text, &[]), norm("struct T { a: i32 }"));
    // One that could: the item is marked with the predicate.
    let text = "#[cfg_attr(unix, serde(rename = \"x\"))] struct T { a: i32 }";
    let out = stripped(text, &[]);
    assert!(out.starts_with("# [cfg (unix)]"), "{out}");
}

#[test]
fn undecided_nodes_mark_their_module_level_item() {
    let mut file = syn::parse_file(
        r#"
        struct A { #[cfg(unix)] a: i32 }
        fn f() -> i32 { #[cfg(target_os = "linux")] let x = 1; 2 }
        impl A { #[cfg(windows)] fn w() {} }
        #[cfg(any(unix, feature = "on"))] struct B;
        struct C;
        mod inner { #[cfg(unix)] struct D; struct E; }
        "#,
    )
    .unwrap();
    assert!(strip(&mut file, &cfg(&[])).is_empty());
    let marks: Vec<Option<String>> = file
        .items
        .iter()
        .map(|i| match mark(item_attrs(i)) {
            Some(Mark::Undecided(t, _)) => Some(t),
            Some(Mark::Excluded) => Some("excluded".into()),
            None => None,
        })
        .collect();
    assert_eq!(
        marks,
        [
            Some("unix".to_string()),
            Some(r#"target_os = "linux""#.to_string()),
            Some("windows".to_string()),
            Some("unix".to_string()),
            None,
            None,
        ]
    );
    // With the feature on, `any(unix, feature = "on")` is decided.
    let mut file = syn::parse_file(r#"#[cfg(any(unix, feature = "on"))] struct B;"#).unwrap();
    strip(&mut file, &cfg(&["on"]));
    assert!(mark(item_attrs(&file.items[0])).is_none());
}

#[test]
fn malformed_cfg_attributes_are_reported_with_positions() {
    let errors = SourceSet::parse_all(vec![(
        PathBuf::from("src/x.rs"),
        "#[cfg(feature = 1)]\nstruct A;\n#[cfg_attr(unix)]\nstruct B;\n".into(),
    )])
    .unwrap_err();
    let shown: Vec<String> = errors.iter().map(|d| d.to_string()).collect();
    assert_eq!(errors.len(), 2, "{shown:?}");
    assert!(shown[0].starts_with("src/x.rs:1:17:"), "{shown:?}");
    assert!(shown[0].contains("string literal"), "{shown:?}");
    assert!(
        shown[1].starts_with("src/x.rs:3:12: `cfg_attr` needs `,`"),
        "{shown:?}"
    );
}

fn texts(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect()
}

#[test]
fn files_of_left_out_modules_are_not_read() {
    let set = SourceSet::parse_all(texts(&[
        ("src/lib.rs", "pub mod api;\n#[cfg(test)]\nmod tests;\n"),
        ("src/api.rs", "pub struct A;\n"),
        ("src/tests.rs", "mod helpers;\nstruct T;\n"),
        // Never compiled by cargo build: its syntax error is not reported.
        ("src/tests/helpers.rs", "struct H {\n"),
        ("src/gated.rs", "#![cfg(feature = \"gated\")]\nstruct G;\n"),
        ("src/bin.rs", "#[cfg(test)] mod t { mod deep; }\n"),
        ("src/bin/t/deep.rs", "struct Deep;\n"),
    ]))
    .unwrap();
    let kept: Vec<&Path> = set.files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(
        kept,
        [
            Path::new("src/lib.rs"),
            Path::new("src/api.rs"),
            Path::new("src/bin.rs")
        ]
    );
}

const HEADER: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

fn kind(version: &str, fields: &str) -> String {
    format!(
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{version}\", kind = \"Thing\")]\npub struct ThingSpec {{ {fields} }}\n"
    )
}

fn crds(files: &[(&str, &str)], features: &[&str]) -> Result<Vec<serde_json::Value>, String> {
    let texts = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), format!("{HEADER}{t}")))
        .collect();
    let set = SourceSet::parse_all_with(texts, &cfg(features)).map_err(|d| format!("{d:?}"))?;
    crds_from_sources(&set)
        .map(|c| {
            c.iter()
                .map(|g| serde_json::to_value(&g.crd).unwrap())
                .collect()
        })
        .map_err(|d| {
            d.iter()
                .map(|d| format!("{d} [{:?}]", d.cause))
                .collect::<Vec<_>>()
                .join("\n")
        })
}

fn spec(crd: &serde_json::Value) -> &serde_json::Value {
    &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
}

#[test]
fn a_kind_under_cfg_test_makes_no_crd() {
    let out = crds(
        &[(
            "src/lib.rs",
            &format!(
                "{}#[cfg(test)]\nmod tests {{ use super::*;\n{} }}\n",
                kind("v1", "pub a: String"),
                kind("v2", "pub b: String").replace("Thing\"", "TestThing\"")
            ),
        )],
        &[],
    )
    .unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["spec"]["names"]["kind"], "Thing");
}

#[test]
fn two_definitions_of_a_kind_behind_features_are_not_a_duplicate() {
    let files = format!(
        "#[cfg(feature = \"v2\")]\n{}#[cfg(not(feature = \"v2\"))]\n{}",
        kind("v1", "pub new: String"),
        kind("v1", "pub old: String")
    );
    let with = crds(&[("src/lib.rs", &files)], &["v2"]).unwrap();
    assert_eq!(spec(&with[0])["required"], serde_json::json!(["new"]));
    let without = crds(&[("src/lib.rs", &files)], &[]).unwrap();
    assert_eq!(spec(&without[0])["required"], serde_json::json!(["old"]));
}

#[test]
fn cfg_attr_on_derives_and_attributes_follows_the_features() {
    let text = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n\
        #[cfg_attr(feature = \"schemars\", derive(JsonSchema))]\n\
        #[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n\
        #[cfg_attr(feature = \"short\", kube(shortname = \"th\"))]\n\
        #[cfg_attr(feature = \"camel\", serde(rename_all = \"camelCase\"))]\n\
        pub struct ThingSpec {\n\
          #[cfg_attr(feature = \"camel\", schemars(length(max = 3)))]\n\
          pub the_name: String,\n\
        }\n";
    let on = crds(&[("src/lib.rs", text)], &["schemars", "short", "camel"]).unwrap();
    assert_eq!(
        on[0]["spec"]["names"]["shortNames"],
        serde_json::json!(["th"])
    );
    assert_eq!(spec(&on[0])["properties"]["theName"]["maxLength"], 3);
    let plain = crds(&[("src/lib.rs", text)], &["schemars"]).unwrap();
    assert!(plain[0]["spec"]["names"].get("shortNames").is_none());
    assert!(
        spec(&plain[0])["properties"]["the_name"]
            .get("maxLength")
            .is_none()
    );
    // Without JsonSchema the kind has no schema kube-derive could build.
    let err = crds(&[("src/lib.rs", text)], &[]).unwrap_err();
    assert!(err.contains("JsonSchema"), "{err}");
}

#[test]
fn an_undecided_predicate_is_named_where_a_kind_needs_it() {
    // A field of the spec.
    let err = crds(
        &[("src/lib.rs", &kind("v1", "#[cfg(unix)] pub a: String"))],
        &[],
    )
    .unwrap_err();
    assert!(
        err.starts_with("src/lib.rs:6:30: the custom resource `ThingSpec` depends on `cfg(unix)`"),
        "{err}"
    );
    assert!(err.ends_with("[NeedsCompile]"), "{err}");
    // A type the spec uses.
    let err = crds(
        &[(
            "src/lib.rs",
            &format!(
                "{}#[cfg(target_os = \"linux\")]\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Inner {{ pub x: i32 }}\n",
                kind("v1", "pub inner: Inner")
            ),
        )],
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains("the type `Inner` depends on `cfg(target_os = \"linux\")`"),
        "{err}"
    );
    assert!(err.starts_with("src/lib.rs:7:7:"), "{err}");
    // A module file that holds a kind.
    let err = crds(
        &[
            ("src/lib.rs", "#[cfg(windows)]\nmod win;\n"),
            ("src/win.rs", &kind("v1", "pub a: String")),
        ],
        &[],
    )
    .unwrap_err();
    assert!(
        err.starts_with(
            "src/lib.rs:4:7: the custom resource `ThingSpec` depends on `cfg(windows)`"
        ),
        "{err}"
    );
}

#[test]
fn undecided_code_no_kind_uses_stops_nothing() {
    let out = crds(
        &[
            ("src/lib.rs", &kind("v1", "pub a: String")),
            (
                "src/main.rs",
                "#[cfg(not(target_env = \"msvc\"))]\n#[global_allocator]\nstatic GLOBAL: u8 = 0;\n#[cfg(unix)]\nfn signals() {}\nfn main() {}\n",
            ),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(out.len(), 1);
}

#[test]
fn an_undecided_import_does_not_fall_back_to_a_glob() {
    let err = crds(
        &[(
            "src/lib.rs",
            &format!(
                "mod a {{ #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)] pub struct Inner {{ pub x: i32 }} }}\n\
                 mod b {{ #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)] pub struct Inner {{ pub y: i32 }} }}\n\
                 use a::*;\n#[cfg(unix)]\nuse b::Inner;\n{}",
                kind("v1", "pub inner: Inner")
            ),
        )],
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains("the type `Inner` depends on `cfg(unix)`"),
        "{err}"
    );
}

#[test]
fn an_undecided_kind_is_reported_even_inside_cfg_attr() {
    let err = crds(
        &[(
            "src/lib.rs",
            "#[cfg_attr(unix, derive(CustomResource))]\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub a: String }\n",
        )],
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains("the custom resource `ThingSpec` depends on `cfg(unix)`"),
        "{err}"
    );
    assert_eq!(
        crate::manifests::diag::Diagnostic::new(Path::new("x"), 1, 1, "m")
            .needs_compile()
            .cause,
        Cause::NeedsCompile
    );
}
