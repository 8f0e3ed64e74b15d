use super::*;
use crate::manifests::cfg::Cfg;
use serde_json::{Value, json};
use std::path::Path;

const HEADER: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

fn run(files: &[(&str, &str)]) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
    let set = SourceSet {
        files: files
            .iter()
            .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
            .collect(),
    };
    crds_from_sources(&set)
}

fn errors(files: &[(&str, &str)]) -> String {
    run(files)
        .unwrap_err()
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn spec_schema(c: &GeneratedCrd) -> Value {
    let v = serde_json::to_value(&c.crd).unwrap();
    v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

const CR: &str = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

#[test]
fn resolves_types_across_modules_aliases_and_globs() {
    let crds = run(&[
            ("src/lib.rs", "pub mod api;\npub mod shared;\n"),
            ("src/shared.rs", "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Port { pub number: u16 }\npub type Ports = Vec<Port>;\n"),
            ("src/api/mod.rs", "pub mod v1;\n"),
            (
                "src/api/v1.rs",
                &format!("use crate::shared::*;\nuse k8s_openapi::apimachinery::pkg::util::intstr::IntOrString as IOS;\n{CR}pub struct ThingSpec {{ pub ports: Ports, pub target: super::super::shared::Port, pub port: Option<IOS> }}\n"),
            ),
        ])
        .unwrap();
    assert_eq!(crds.len(), 1);
    assert_eq!(crds[0].file_name, "t.example.com_things.yaml");
    let spec = spec_schema(&crds[0]);
    assert_eq!(
        spec["properties"]["ports"]["items"]["properties"]["number"]["format"],
        "uint16"
    );
    assert_eq!(spec["properties"]["target"]["required"], json!(["number"]));
    let port = &spec["properties"]["port"];
    assert_eq!(port["nullable"], true);
    assert_eq!(port["x-kubernetes-int-or-string"], true);
    assert!(port.get("type").is_none() && port.get("anyOf").is_none());
}

#[test]
fn defaults_are_evaluated_or_named() {
    let crds = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{\n  #[serde(default = \"three\")] pub n: i32,\n  #[serde(default)] pub mode: Mode,\n  #[serde(default)] pub names: Vec<String>,\n}}\nfn three() -> i32 {{ 3 }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, Default)]\npub enum Mode {{ #[default] Fast, Slow }}\n"),
        )])
        .unwrap();
    let spec = spec_schema(&crds[0]);
    assert_eq!(spec["properties"]["n"]["default"], 3);
    assert_eq!(spec["properties"]["mode"]["default"], "Fast");
    assert_eq!(spec["properties"]["names"]["default"], json!([]));
    assert!(spec.get("required").is_none());
    let err = errors(&[(
        "x.rs",
        &format!(
            "{CR}pub struct ThingSpec {{ #[serde(default = \"computed\")] pub n: i32 }}\nfn computed() -> i32 {{ std::process::id() as i32 }}\n"
        ),
    )]);
    assert!(
        err.contains("x.rs:6:") && err.contains("`std::process::id()` (x.rs:7)"),
        "{err}"
    );
}

#[test]
fn unsupported_shapes_are_errors_with_positions() {
    let err = errors(&[(
        "x.rs",
        &format!(
            "{CR}pub struct ThingSpec {{ pub v: Value }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(untagged)]\npub enum Value {{ Int(i64), Text(String) }}\n"
        ),
    )]);
    assert!(
        err.contains("x.rs:9:10: the untagged enum `Value` has no object variant"),
        "{err}"
    );
    assert!(err.contains("without `type`"), "{err}");

    let err = errors(&[(
        "x.rs",
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec<T> { pub t: T }\n",
    )]);
    assert!(
        err.contains("x.rs:6:12: `ThingSpec` is a generic spec type"),
        "{err}"
    );
    // Generic helper types with concrete arguments are fine, as with kube-derive.
    let ok = run(&[(
            "x.rs",
            &format!("{CR}pub struct ThingSpec {{ pub w: Wrap<String> }}\n#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Wrap<T> {{ pub t: T }}\n"),
        )])
        .unwrap();
    assert_eq!(
        spec_schema(&ok[0])["properties"]["w"]["properties"]["t"]["type"],
        "string"
    );

    let err = errors(&[(
        "x.rs",
        &format!("{CR}pub struct ThingSpec {{ #[schemars(ranged(min = 1))] pub n: i32 }}\n"),
    )]);
    assert!(err.contains("unknown schemars attribute `ranged`"), "{err}");

    let diags = run(&[(
        "x.rs",
        &format!("{CR}pub struct ThingSpec {{ pub n: time::OffsetDateTime }}\n"),
    )])
    .unwrap_err();
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0]
            .message
            .contains("has no schema rsbuilder can compute statically"),
        "{diags:?}"
    );
    assert!(
        diags[0]
            .help
            .as_deref()
            .unwrap_or_default()
            .contains("#[schemars(with = "),
        "{diags:?}"
    );
    assert_eq!(diags[0].cause, crate::manifests::diag::Cause::NeedsCompile);
}

#[test]
fn third_party_types_resolve_through_use_and_ask_schemars() {
    let crds = run(&[(
            "x.rs",
            &format!(
                "use chrono::prelude::*;\nuse indexmap::IndexMap as Ordered;\nuse uuid::Uuid;\n{CR}pub struct ThingSpec {{\n  pub at: DateTime<Utc>,\n  pub day: chrono::naive::NaiveDate,\n  pub id: Option<Uuid>,\n  pub labels: Ordered<String, i32>,\n  pub few: arrayvec::ArrayVec<String, 3>,\n  pub small: smallvec::SmallVec<[u8; 8]>,\n  #[serde(default)] pub zero: Uuid,\n}}\n"
            ),
        )])
        .unwrap();
    let props = &spec_schema(&crds[0])["properties"];
    assert_eq!(
        props["at"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(props["day"], json!({"type": "string", "format": "date"}));
    assert_eq!(
        props["id"],
        json!({"type": "string", "format": "uuid", "nullable": true})
    );
    assert_eq!(
        props["labels"],
        json!({"type": "object", "additionalProperties": {"type": "integer", "format": "int32"}})
    );
    assert_eq!(props["few"]["maxItems"], 3);
    assert_eq!(props["few"]["items"], json!({"type": "string"}));
    assert_eq!(props["small"]["items"]["format"], "uint8");
    assert_eq!(
        props["zero"]["default"],
        "00000000-0000-0000-0000-000000000000"
    );
    let err = errors(&[(
        "x.rs",
        &format!(
            "const N: usize = 3;\n{CR}pub struct ThingSpec {{ pub few: arrayvec::ArrayVec<String, N> }}\n"
        ),
    )]);
    assert!(
        err.contains("the capacity of `arrayvec::ArrayVec<String,N>`"),
        "{err}"
    );
}

#[test]
fn api_server_rules_point_at_the_field_through_flatten_variants_and_maps() {
    let err = errors(&[(
        "x.rs",
        &format!(
            "{CR}pub struct ThingSpec {{
    #[serde(flatten)]
    pub base: Base,
    pub mode: Mode,
    pub map: std::collections::BTreeMap<String, Vec<Item>>,
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Base {{
    pub raw: serde_json::Value,
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub enum Mode {{
    Fast {{
        blob: serde_json::Value,
    }},
}}
#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]
pub struct Item {{
    pub unit: (),
}}
"
        ),
    )]);
    let at: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("x.rs:"))
        .map(|l| l.split(": ").next().unwrap())
        .collect();
    assert_eq!(at, ["x.rs:14:9", "x.rs:19:9", "x.rs:24:9"], "{err}");
    assert!(err.contains("at .spec.raw"), "{err}");
    assert!(err.contains("at .spec.mode.Fast.blob"), "{err}");
    assert!(err.contains("at .spec.map.*[*].unit"), "{err}");
}

#[test]
fn schema_modes_and_scale_without_status() {
    let crds = run(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", scale = r#\"{\"specReplicasPath\":\".spec.r\",\"statusReplicasPath\":\".status.r\"}\"#)]\npub struct ThingSpec { pub r: i32 }\n",
        )])
        .unwrap();
    let v = serde_json::to_value(&crds[0].crd).unwrap();
    assert!(v["spec"]["versions"][0].get("subresources").is_none());
    // Without a schema, crd()'s CRD is one the API server refuses.
    let err = errors(&[(
        "x.rs",
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"disabled\")]\npub struct ThingSpec { pub r: i32 }\n",
    )]);
    assert!(
        err.starts_with("x.rs:6:12: version v1 of `ThingSpec`: there is no openAPIV3Schema"),
        "{err}"
    );
    let err = errors(&[(
        "x.rs",
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\", schema = \"manual\")]\npub struct ThingSpec { pub r: i32 }\n",
    )]);
    assert!(
        err.contains("schema = \"manual\"") && err.contains("hand-written"),
        "{err}"
    );
}

#[test]
fn the_external_module_of_other_projects_types_gets_no_crd() {
    let thing = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub r: i32 }\n";
    let certificate = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]\n#[kube(group = \"cert-manager.io\", version = \"v1\", kind = \"Certificate\", plural = \"certificates\")]\n#[kube(namespaced)]\n#[kube(schema = \"disabled\")]\npub struct CertificateSpec { pub secret_name: String }\n";
    let crds = run(&[
        ("src/lib.rs", "pub mod api;\n"),
        ("src/api/mod.rs", "pub mod external;\npub mod v1;\n"),
        ("src/api/v1.rs", thing),
        ("src/api/external/mod.rs", "pub mod cert_manager_io;\n"),
        ("src/api/external/cert_manager_io/mod.rs", "pub mod v1;\n"),
        ("src/api/external/cert_manager_io/v1.rs", certificate),
    ])
    .unwrap();
    let names: Vec<String> = crds
        .iter()
        .map(|c| c.crd.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["things.t.example.com"]);
    // The same type anywhere else is the crate's own kind, and its missing schema an error.
    let err = errors(&[
        ("src/lib.rs", "pub mod api;\n"),
        ("src/api/mod.rs", "pub mod v1;\n"),
        ("src/api/v1.rs", certificate),
    ]);
    assert!(err.contains("there is no openAPIV3Schema"), "{err}");
}

fn yaml(crd: &CustomResourceDefinition) -> Result<String, String> {
    serde_json::to_string_pretty(crd).map_err(|e| e.to_string())
}

/// 40 kinds over 4 groups, the kinds of group 0 in two versions (one per module).
fn many_kinds(extra: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..40 {
        let (g, multi) = (i % 4, i % 4 == 0);
        let kind = |ver: &str, storage: bool| {
            format!(
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"g{g}.example.com\", version = \"{ver}\", kind = \"K{i}\", storage = {storage})]\npub struct K{i}Spec {{ pub n{i}: Option<u32> }}\n"
            )
        };
        let mut text = format!("pub mod v1 {{ use super::*;\n{} }}\n", kind("v1", true));
        if multi {
            text.push_str(&format!(
                "pub mod v2 {{ use super::*;\n{} }}\n",
                kind("v2", false)
            ));
        }
        files.push((format!("src/k{i}.rs"), text));
    }
    files.push(("src/zz.rs".into(), extra.to_string()));
    files
}

fn load(files: &[(String, String)]) -> SourceSet {
    SourceSet {
        files: files
            .iter()
            .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
            .collect(),
    }
}

#[test]
fn threads_share_kinds_without_changing_the_output() {
    let set = load(&many_kinds(""));
    let single: Vec<(String, String)> = crds_from_sources(&set)
        .unwrap()
        .iter()
        .map(|c| (c.file_name.clone(), yaml(&c.crd).unwrap()))
        .collect();
    assert_eq!(single.len(), 40);
    let two_versions = single
        .iter()
        .find(|(f, _)| f == "g0.example.com_k0s.yaml")
        .unwrap();
    assert!(two_versions.1.contains("\"v2\""), "{}", two_versions.1);
    for threads in [1, 2, 3, 7] {
        assert_eq!(
            all_or_nothing(crd_yaml_files(
                &set,
                &Cfg::default(),
                threads,
                yaml,
                &Settings::default()
            ))
            .unwrap(),
            single,
            "{threads} threads"
        );
    }
}

#[test]
fn threads_report_the_same_diagnostics() {
    let bad = format!(
        "{CR}pub struct ThingSpec {{ pub n: time::OffsetDateTime }}\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\")]\npub struct OtherSpec {{ pub a: String }}\n"
    );
    let set = load(&many_kinds(&bad));
    let single = crds_from_sources(&set).unwrap_err();
    assert_eq!(single.len(), 2, "{single:?}");
    let one = crd_yaml_files(&set, &Cfg::default(), 1, yaml, &Settings::default());
    let three = crd_yaml_files(&set, &Cfg::default(), 3, yaml, &Settings::default());
    assert_eq!(all_or_nothing(three.clone()).unwrap_err(), single);
    type Files = Result<(String, String), Vec<Diagnostic>>;
    let outcome = |kinds: &[KindOutcome<(String, String)>]| -> Vec<(String, Files)> {
        kinds.iter().map(|k| (k.name(), k.result.clone())).collect()
    };
    assert_eq!(outcome(&one), outcome(&three));
    // The 40 good kinds are derived; the two bad ones are not.
    assert_eq!(three.iter().filter(|k| k.result.is_ok()).count(), 40);
    let failed: Vec<String> = three
        .iter()
        .filter(|k| k.result.is_err())
        .map(|k| k.name())
        .collect();
    assert_eq!(failed, ["OtherSpec.t.example.com", "Thing.t.example.com"]);
}

#[test]
fn a_failing_kind_leaves_the_others_derived_and_a_shared_error_is_reported_once() {
    let shared = "#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct When { pub at: widgets::Gadget }\n";
    let kind = |k: &str, field: &str| {
        format!(
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"{k}\")]\npub struct {k}Spec {{ {field} }}\n"
        )
    };
    let set = load(&[
        (
            "src/a.rs".into(),
            format!("{shared}{}", kind("Alpha", "pub when: When")),
        ),
        (
            "src/b.rs".into(),
            format!("use crate::a::When;\n{}", kind("Beta", "pub n: i32")),
        ),
        (
            "src/c.rs".into(),
            kind("Gamma", "pub w: Vec<super::a::When>"),
        ),
        (
            "src/lib.rs".into(),
            "pub mod a; pub mod b; pub mod c;\n".into(),
        ),
    ]);
    // Every order of derivation gives each failing kind the shared type's diagnostic.
    let kinds = derive_kinds(&set, &Settings::default());
    let names: Vec<(String, bool)> = kinds.iter().map(|k| (k.name(), k.result.is_ok())).collect();
    assert_eq!(
        names,
        [
            ("Alpha.t.example.com".to_string(), false),
            ("Beta.t.example.com".to_string(), true),
            ("Gamma.t.example.com".to_string(), false),
        ]
    );
    let refused = refusals(&kinds);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].0.message.contains("widgets::Gadget"),
        "{}",
        refused[0].0
    );
    assert_eq!(refused[0].1, ["Alpha.t.example.com", "Gamma.t.example.com"]);
    assert_eq!(
        kinds[1].file_name.as_deref(),
        Some("t.example.com_betas.yaml")
    );
    assert_eq!(
        kinds[0].file_name.as_deref(),
        Some("t.example.com_alphas.yaml")
    );
    assert_eq!(kinds[0].versions[0].rust_path, ["a", "Alpha"]);
    assert_eq!(kinds[0].versions[0].private, None);
}

#[test]
fn a_kind_in_a_private_module_is_named_by_its_pub_use_re_export() {
    let kind = |k: &str| {
        format!(
            "use serde::{{Deserialize, Serialize}};\nuse schemars::JsonSchema;\nuse kube::CustomResource;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"{k}\")]\npub struct {k}Spec {{ pub a: String }}\n"
        )
    };
    let set = load(&[
            ("src/gateway.rs".into(), kind("Gateway")),
            ("src/route.rs".into(), kind("Route")),
            ("src/hidden.rs".into(), kind("Hidden")),
            (
                "src/lib.rs".into(),
                "mod gateway;\nmod route;\nmod hidden;\npub use self::gateway::*;\npub use route::Route as HttpRoute;\n".into(),
            ),
        ]);
    let kinds = derive_kinds(&set, &Settings::default());
    let site = |name: &str| {
        let k = kinds.iter().find(|k| k.kind == name).unwrap();
        (
            k.versions[0].rust_path.clone(),
            k.versions[0].private.clone(),
        )
    };
    // A glob re-export of the module, a renamed re-export of the root type.
    assert_eq!(site("Gateway"), (vec!["Gateway".to_string()], None));
    assert_eq!(site("Route"), (vec!["HttpRoute".to_string()], None));
    assert_eq!(
        site("Hidden"),
        (
            vec!["hidden".to_string(), "Hidden".to_string()],
            Some("module `hidden` is not `pub`".to_string())
        )
    );
}

#[test]
fn kinds_making_the_same_crd_name_are_errors() {
    let two = |second: &str| {
        errors(&[
            (
                "a.rs",
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Foo\", plural = \"bars\")]\npub struct FooSpec { pub a: String }\n",
            ),
            (
                "b.rs",
                &format!(
                    "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube({second})]\npub struct OtherSpec {{ pub a: String }}\n"
                ),
            ),
        ])
    };
    assert_eq!(
        two(r#"group = "t.example.com", version = "v1", kind = "Bar""#),
        "b.rs:6:12: kind `Bar` and kind `Foo` (a.rs:6) both make the CRD `bars.t.example.com` (file t.example.com_bars.yaml): the API server keeps one CRD per name\n  help: give one of them another plural, #[kube(plural = \"...\")], or another kind name"
    );
    // Kinds differing only in case have the same default plural.
    let err = two(r#"group = "t.example.com", version = "v2", kind = "BARS", plural = "bars""#);
    assert!(err.contains("kind `BARS` and kind `Foo` (a.rs:6)"), "{err}");
    // Another group, or the same kind in another version, is fine.
    assert!(run(&[
            ("a.rs", &format!("{CR}pub struct ThingSpec {{ pub a: String }}\n")),
            (
                "b.rs",
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"u.example.com\", version = \"v1\", kind = \"Thing\")]\npub struct ThingSpec { pub a: String }\n",
            ),
        ])
        .is_ok());
}

#[test]
fn names_the_api_server_rejects_are_errors() {
    let with = |attrs: &str| {
        errors(&[(
            "x.rs",
            &format!(
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube({attrs})]\npub struct ThingSpec {{ pub a: String }}\n"
            ),
        )])
    };
    let err = with(r#"group = "t.example.com", version = "v1", kind = "Kind 5""#);
    assert!(
        err.contains("x.rs:6:12: #[kube(kind = \"Kind 5\")]"),
        "{err}"
    );
    assert!(err.contains("must be a DNS-1035 label"), "{err}");
    let err = with(r#"group = "t.example.com", version = "v1", kind = "kind-5""#);
    assert!(err.contains("not a Rust identifier"), "{err}");
    let err = with(r#"group = "t.example.com", version = "v1", kind = """#);
    assert!(
        err.contains("the kind lower-cased must not be empty"),
        "{err}"
    );
    let err = with(r#"group = "Bad_Group!", version = "v1", kind = "Thing""#);
    assert!(err.contains("#[kube(group = \"Bad_Group!\")]"), "{err}");
    let err = with(r#"group = "local", version = "v1", kind = "Thing""#);
    assert!(err.contains("must contain at least one dot"), "{err}");
    let err = with(r#"group = "t.example.com", version = "V 1", kind = "Thing""#);
    assert!(err.contains("#[kube(version = \"V 1\")]"), "{err}");
    let err =
        with(r#"group = "t.example.com", version = "v1", kind = "Thing", plural = "../../x""#);
    assert!(err.contains("#[kube(plural = \"../../x\")]"), "{err}");
    let err = with(r#"group = "t.example.com", version = "v1", kind = "Thing", shortname = "T""#);
    assert!(err.contains("#[kube(shortname = \"T\")]"), "{err}");
    // The list kind the API server derives must fit a label too.
    let err = with(&format!(
        "group = \"t.example.com\", version = \"v1\", kind = \"{}\"",
        "K".repeat(60)
    ));
    assert!(
        err.contains("the list kind") && err.contains("no more than 63 characters"),
        "{err}"
    );
    // With `root`, the kind needs no identifier shape, only the API server's.
    let ok = run(&[(
            "x.rs",
            "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"thing-x\", root = \"ThingX\")]\npub struct ThingSpec { pub a: String }\n",
        )])
        .unwrap();
    assert_eq!(ok[0].crd.spec.names.kind, "thing-x");
}

#[test]
fn versions_of_a_kind_must_share_names_and_duplicates_name_both_places() {
    let v = |ver: &str, extra: &str| {
        format!(
            "pub mod {ver} {{ use super::*;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{ver}\", kind = \"Thing\"{extra})]\npub struct ThingSpec {{ pub a: String }} }}\n"
        )
    };
    let err = errors(&[(
        "x.rs",
        &format!(
            "{}{}",
            v("v1alpha1", ", storage = false, shortname = \"th\""),
            v("v1", "")
        ),
    )]);
    assert!(
        err.contains("version v1alpha1 of Thing.t.example.com has plural"),
        "{err}"
    );
    assert!(err.contains("shortnames [\"th\"]"), "{err}");
    let err = errors(&[
        ("a.rs", &v("v1", "")),
        ("b.rs", &v("v1", ", storage = false")),
    ]);
    assert!(
        err.contains("version v1 is declared twice (also by `ThingSpec` at a.rs:7:12)"),
        "{err}"
    );
}

#[test]
fn deep_generic_fields_stay_within_the_limits() {
    let depth = crate::manifests::parse::MAX_ANGLE_DEPTH - 2;
    let ty = format!(
        "{}i32{}",
        "Option<Vec<".repeat(depth / 2),
        ">>".repeat(depth / 2)
    );
    let crds = run(&[(
        "x.rs",
        &format!("{CR}pub struct ThingSpec {{ pub f: {ty} }}\n"),
    )])
    .unwrap();
    let mut s = spec_schema(&crds[0])["properties"]["f"].clone();
    for _ in 0..depth / 2 {
        s = s["items"].clone();
    }
    assert_eq!(s["format"], "int32", "{s}");
}

#[test]
fn versions_merge_with_exactly_one_storage_version() {
    let v = |ver: &str, storage: &str| {
        format!(
            "pub mod {ver} {{ use super::*;\n#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"{ver}\", kind = \"Thing\"{storage})]\npub struct ThingSpec {{ pub a: String }} }}\n"
        )
    };
    let crds = run(&[(
        "x.rs",
        &format!("{}{}", v("v1alpha1", ", storage = false"), v("v1", "")),
    )])
    .unwrap();
    assert_eq!(crds.len(), 1);
    let names: Vec<_> = crds[0]
        .crd
        .spec
        .versions
        .iter()
        .map(|x| (x.name.clone(), x.storage))
        .collect();
    assert_eq!(
        names,
        [("v1".to_string(), true), ("v1alpha1".to_string(), false)]
    );
    let err = errors(&[("x.rs", &format!("{}{}", v("v1alpha1", ""), v("v1", "")))]);
    assert!(
        err.contains("2 versions of Thing.t.example.com are marked as storage versions"),
        "{err}"
    );
    assert!(err.contains("storage = false"), "{err}");
}
