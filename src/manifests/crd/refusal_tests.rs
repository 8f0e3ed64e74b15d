use super::*;
use crate::manifests::diag::Cause;
use std::path::Path;

const HEADER: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";
const CR: &str = "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\")]\n";

fn run(files: &[(&str, &str)]) -> Result<Vec<GeneratedCrd>, Vec<Diagnostic>> {
    let set = SourceSet {
        files: files
            .iter()
            .map(|(p, t)| SourceSet::parse_text(Path::new(p), format!("{HEADER}{t}")).unwrap())
            .collect(),
    };
    crds_from_sources(&set)
}

/// linkerd's `K8sDuration`: a newtype with `impl JsonSchema` written by hand is code to
/// compile, not a type missing a derive.
#[test]
fn a_hand_written_json_schema_impl_needs_the_compiler() {
    let src = format!(
        "{CR}pub struct ThingSpec {{\n    pub timeout: K8sDuration,\n}}\n\n\
             #[derive(Serialize, Deserialize, Clone, Debug)]\npub struct K8sDuration(String);\n\n\
             impl schemars::JsonSchema for K8sDuration {{\n\
             \x20   fn schema_name() -> std::borrow::Cow<'static, str> {{ \"K8sDuration\".into() }}\n\
             \x20   fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{\"type\": \"string\"}}) }}\n\
             }}\n"
    );
    let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d.cause, Cause::NeedsCompile);
    assert_eq!((d.line, d.column), (11, 12), "{d}");
    assert_eq!(
        d.message,
        "hand-written schema: `K8sDuration` implements `JsonSchema` by hand (src/lib.rs:13), and rsbuilder does not run that code"
    );
    assert!(
        d.help.as_deref().unwrap().contains("--evaluate auto"),
        "{d}"
    );
    // Without the impl, the fix is the derive.
    let without = src.split("impl schemars").next().unwrap().to_string();
    let diags = run(&[("src/lib.rs", &without)]).unwrap_err();
    assert_eq!(diags[0].cause, Cause::Invalid);
    assert!(diags[0].message.contains("does not derive `JsonSchema`"));
}

fn described(src: &str) -> serde_json::Value {
    let crds = run(&[("src/lib.rs", src)]).unwrap_or_else(|d| panic!("{d:?}"));
    let v = serde_json::to_value(&crds[0].crd).unwrap();
    v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .clone()
}

/// schemars builds the doc as `concat!` of the lines and takes any expression for
/// `description`: those rsbuilder evaluates are read, the rest refused with the reason.
#[test]
fn doc_and_description_expressions_are_evaluated_where_they_can_be() {
    let src = format!(
        "const PORT_DOC: &str = \"The port.\";\n{CR}pub struct ThingSpec {{\n\
             \x20   #[doc = concat!(\"Listen \", \"address\")]\n    pub addr: String,\n\
             \x20   /// Two lines:\n    #[doc = concat!(\" kind \", stringify!(Thing), \" v\", 1)]\n    pub two: String,\n\
             \x20   #[schemars(description = PORT_DOC)]\n    pub port: i32,\n\
             \x20   #[schemars(description = concat!(\"a\", \"b\"))]\n    pub ab: i32,\n\
             }}\n"
    );
    let props = described(&src);
    assert_eq!(props["addr"]["description"], "Listen address");
    // A literal line loses one leading space; a macro line keeps what it expands to.
    assert_eq!(props["two"]["description"], "Two lines:\n kind Thing v1");
    assert_eq!(props["port"]["description"], "The port.");
    assert_eq!(props["ab"]["description"], "ab");
    // Refused with the reason: a function call, punctuation in stringify!.
    for (attr, reason) in [
        (
            "#[doc = concat!(\"a\", env!(\"HOME\"))]",
            "this macro is not evaluated",
        ),
        (
            "#[doc = stringify!(a + b)]",
            "identifiers and literals only",
        ),
        (
            "#[schemars(description = &format!(\"{:?}\", text()))]",
            "only `{}`, `{{` and `}}` are evaluated",
        ),
    ] {
        let src = format!(
            "fn text() -> &'static str {{ \"x\" }}\n{CR}pub struct ThingSpec {{\n    {attr}\n    pub a: i32,\n}}\n"
        );
        let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].cause, Cause::NeedsCompile, "{attr}");
        assert_eq!(diags[0].line, 8, "{}", diags[0]);
        assert!(diags[0].message.contains(reason), "{attr}: {}", diags[0]);
    }
}

#[test]
fn the_schemars_0_8_regex_form_names_the_new_one() {
    for (attr, fix) in [
        (
            "#[schemars(regex = \"NAME_RE\")]",
            "write `#[schemars(regex(pattern = NAME_RE))]`",
        ),
        (
            "#[validate(regex = \"NAME_RE\")]",
            "write `#[validate(regex(path = NAME_RE))]`",
        ),
    ] {
        let src = format!("{CR}pub struct ThingSpec {{\n    {attr}\n    pub a: String,\n}}\n");
        let diags = run(&[("src/lib.rs", &src)]).unwrap_err();
        assert_eq!(diags[0].line, 7, "{}", diags[0]);
        assert!(
            diags[0].message.contains("is the schemars 0.8 form") && diags[0].message.contains(fix),
            "{}",
            diags[0]
        );
    }
}

#[test]
fn several_json_objects_in_one_printcolumn_are_named() {
    let src = concat!(
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n",
        "#[kube(group = \"t.example.com\", version = \"v1\", kind = \"Thing\",\n",
        "    printcolumn = r#\"{\"name\":\"A\",\"type\":\"string\",\"jsonPath\":\".spec.a\"}, {\"name\":\"B\",\"type\":\"string\",\"jsonPath\":\".spec.b\"}\"#)]\n",
        "pub struct ThingSpec { pub a: String, pub b: String }\n"
    );
    let diags = run(&[("src/lib.rs", src)]).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].line, 6, "{}", diags[0]);
    assert!(
        diags[0]
            .message
            .contains("this `printcolumn` holds 2 JSON objects")
            && diags[0]
                .message
                .contains("one `printcolumn = r#\"{…}\"#` per column"),
        "{}",
        diags[0]
    );
}
