//! Structured input for the CRD path: a valid kube-rs custom resource whose spec fields,
//! attributes and helper types come from the fuzzer, so most inputs parse and reach the
//! schema code instead of stopping at the syntax check.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rsbuilder::manifests::{SourceSet, crds_from_sources};

const TYPES: &[&str] = &[
    "String", "i32", "i64", "u8", "u16", "u64", "f32", "f64", "bool", "char",
    "Option<String>", "Vec<String>", "Vec<i32>", "BTreeMap<String, String>",
    "HashMap<String, i64>", "Option<Vec<Helper>>", "Helper", "Mode", "Option<Mode>", "Box<Helper>",
    "serde_json::Value", "std::num::NonZeroU32", "(i32, String)", "[u8; 4]", "Node",
    "k8s_openapi::apimachinery::pkg::api::resource::Quantity",
    "Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>",
    "Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>", "Untagged", "Tagged",
];
const FIELD_ATTRS: &[&str] = &[
    "", "#[serde(default)]", "#[serde(rename = \"x\")]", "#[serde(flatten)]", "#[serde(skip)]",
    "#[schemars(range(min = 1, max = 10))]", "#[schemars(length(max = 5))]",
    "#[schemars(regex(pattern = r\"^a$\"))]", "#[x_kube(validation = \"self > 0\")]",
    "#[serde(skip_serializing_if = \"Option::is_none\")]", "#[schemars(skip)]",
    "#[x_kube(merge_strategy = ListMerge::Set)]", "/// doc\n/// # Title", "#[serde(default = \"dflt\")]",
];
const CONTAINER_ATTRS: &[&str] = &[
    "", "#[serde(rename_all = \"camelCase\")]", "#[serde(rename_all = \"SCREAMING-KEBAB-CASE\")]",
    "#[serde(deny_unknown_fields)]", "#[serde(transparent)]", "#[serde(untagged)]",
    "#[serde(tag = \"t\")]", "#[serde(tag = \"t\", content = \"c\")]",
];

#[derive(Debug, Arbitrary)]
struct Field {
    name: u8,
    ty: u8,
    attr: u8,
    attr2: u8,
}

#[derive(Debug, Arbitrary)]
struct Input {
    spec_attr: u8,
    helper_attr: u8,
    enum_attr: u8,
    namespaced: bool,
    status: bool,
    fields: Vec<Field>,
}

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

fuzz_target!(|input: Input| {
    let mut src = String::from(
        "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\
         use std::collections::{BTreeMap, HashMap};\n\
         fn dflt() -> String { \"d\".into() }\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n",
    );
    src.push_str(pick(CONTAINER_ATTRS, input.helper_attr));
    src.push_str("\npub struct Helper { pub a: Option<String>, pub b: i32 }\n");
    src.push_str("#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n");
    src.push_str(pick(CONTAINER_ATTRS, input.enum_attr));
    src.push_str("\npub enum Mode { A, B }\n");
    src.push_str("#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(untagged)]\npub enum Untagged { S(String), H(Helper) }\n");
    src.push_str("#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[serde(tag = \"k\")]\npub enum Tagged { X { a: i32 }, Y { b: String } }\n");
    src.push_str("#[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\npub struct Node { pub children: Vec<Node> }\n");
    src.push_str("#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]\npub struct FuzzStatus { pub phase: Option<String> }\n");
    src.push_str("#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n");
    src.push_str("#[kube(group = \"fuzz.example.com\", version = \"v1\", kind = \"Fuzz\"");
    if input.namespaced {
        src.push_str(", namespaced");
    }
    if input.status {
        src.push_str(", status = \"FuzzStatus\"");
    }
    src.push_str(")]\n");
    src.push_str(pick(CONTAINER_ATTRS, input.spec_attr));
    src.push_str("\npub struct FuzzSpec {\n");
    for (i, f) in input.fields.iter().take(12).enumerate() {
        src.push_str(pick(FIELD_ATTRS, f.attr));
        src.push('\n');
        src.push_str(pick(FIELD_ATTRS, f.attr2));
        src.push_str(&format!("\n    pub f{}_{}: {},\n", i, f.name % 4, pick(TYPES, f.ty)));
    }
    src.push_str("}\n");
    if let Ok(file) = SourceSet::parse_text(std::path::Path::new("fuzz.rs"), src) {
        let set = SourceSet { files: vec![file] };
        let _ = crds_from_sources(&set);
    }
});
