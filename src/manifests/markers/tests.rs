//! Marker grammar and collection, in rsbuilder's own words.

use std::path::Path;

use super::grammar::{self, Value};
use super::registry::{self, ArgDef, ArgType, Form, MarkerDef};
use super::*;

const FILE: &str = "src/controller/aijob_controller.rs";

/// Parses one marker line and returns the marker or the diagnostic's text.
fn one(line: &str) -> Result<Marker, String> {
    let (mut markers, errors) = collect_text(Path::new(FILE), line);
    if let Some(e) = errors.first() {
        return Err(e.to_string());
    }
    assert_eq!(markers.len(), 1, "no marker read from {line:?}");
    Ok(markers.remove(0))
}

fn err(line: &str) -> String {
    one(line).expect_err("expected an error")
}

const TEST_ARGS: &[ArgDef] = &[
    ArgDef {
        name: "s",
        ty: ArgType::String,
        optional: true,
        help: "",
    },
    ArgDef {
        name: "n",
        ty: ArgType::Int,
        optional: true,
        help: "",
    },
    ArgDef {
        name: "b",
        ty: ArgType::Bool,
        optional: true,
        help: "",
    },
    ArgDef {
        name: "l",
        ty: ArgType::StringList,
        optional: true,
        help: "",
    },
];
const TEST_DEF: MarkerDef = MarkerDef {
    name: "test:m",
    form: Form::Args(TEST_ARGS),
    help: "",
    example: "",
};

fn args(text: &str) -> Vec<(&'static str, Value)> {
    grammar::parse(&TEST_DEF, text)
        .unwrap_or_else(|e| panic!("{text}: {e:?}"))
        .into_iter()
        .map(|a| (a.name, a.value))
        .collect()
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn l(v: &[&str]) -> Value {
    Value::List(v.iter().map(|x| x.to_string()).collect())
}

#[test]
fn split_takes_the_first_argument_name_off_the_marker_name() {
    assert_eq!(
        grammar::split_marker("kubebuilder:rbac:groups=apps,verbs=get"),
        (
            "kubebuilder:rbac",
            "kubebuilder:rbac:groups",
            Some("apps,verbs=get")
        )
    );
    assert_eq!(
        grammar::split_marker("kubebuilder:scaffold:imports"),
        (
            "kubebuilder:scaffold:imports",
            "kubebuilder:scaffold:imports",
            None
        )
    );
    assert_eq!(
        grammar::split_marker("kubebuilder:validation:Maximum=100"),
        (
            "kubebuilder:validation",
            "kubebuilder:validation:Maximum",
            Some("100")
        )
    );
}

#[test]
fn bare_strings_are_trimmed_and_keep_inner_punctuation() {
    assert_eq!(
        args("test:m:s= a b/c.d:e ,n=1"),
        vec![("s", s("a b/c.d:e")), ("n", Value::Int(1))]
    );
}

#[test]
fn quoted_strings_hold_commas_semicolons_and_go_escapes() {
    assert_eq!(
        args(r#"test:m:s="a,b;c}\"\t\u00e9""#),
        vec![("s", s("a,b;c}\"\t\u{e9}"))]
    );
    assert_eq!(args(r#"test:m:s="""#), vec![("s", s(""))]);
}

#[test]
fn raw_strings_in_backticks_are_taken_verbatim() {
    assert_eq!(
        args(r#"test:m:s=`{"a":"b\n"}`,b=true"#),
        vec![("s", s(r#"{"a":"b\n"}"#)), ("b", Value::Bool(true))]
    );
}

#[test]
fn lists_in_semicolon_and_brace_forms() {
    assert_eq!(args("test:m:l=a;b;c"), vec![("l", l(&["a", "b", "c"]))]);
    assert_eq!(args("test:m:l={a, b,c}"), vec![("l", l(&["a", "b", "c"]))]);
    assert_eq!(args("test:m:l=only"), vec![("l", l(&["only"]))]);
    assert_eq!(args("test:m:l={}"), vec![("l", l(&[]))]);
    assert_eq!(args(r#"test:m:l="";apps"#), vec![("l", l(&["", "apps"]))]);
    assert_eq!(
        args(r#"test:m:l={"a,b",`c`}"#),
        vec![("l", l(&["a,b", "c"]))]
    );
    // A trailing `;` adds no item.
    assert_eq!(
        args("test:m:l=a;,b=false"),
        vec![("l", l(&["a"])), ("b", Value::Bool(false))]
    );
}

#[test]
fn integers_and_bools() {
    assert_eq!(args("test:m:n=-12"), vec![("n", Value::Int(-12))]);
    assert_eq!(
        args("test:m:b=false, n=7"),
        vec![("b", Value::Bool(false)), ("n", Value::Int(7))]
    );
}

#[test]
fn value_and_flag_forms() {
    let value = MarkerDef {
        name: "test:v",
        form: Form::Value(ArgType::Int),
        help: "",
        example: "",
    };
    let parsed = grammar::parse(&value, "test:v=42").unwrap();
    assert_eq!(parsed[0].value, Value::Int(42));
    assert_eq!(parsed[0].offset, 7);
    assert_eq!(
        grammar::parse(&value, "test:v=x").unwrap_err().offset,
        Some(7)
    );
    assert!(
        grammar::parse(&value, "test:v")
            .unwrap_err()
            .message
            .contains("needs a value")
    );

    let flag = MarkerDef {
        name: "test:f",
        form: Form::Flag,
        help: "",
        example: "",
    };
    assert!(grammar::parse(&flag, "test:f").unwrap().is_empty());
    assert!(
        grammar::parse(&flag, "test:f=1")
            .unwrap_err()
            .message
            .contains("takes no arguments")
    );
}

#[test]
fn grammar_errors_point_at_the_offending_place() {
    let e = |t: &str| grammar::parse(&TEST_DEF, t).unwrap_err();
    let x = e("test:m:n=ten");
    assert_eq!(
        (x.offset, x.message.as_str()),
        (Some(9), "`n` must be an integer, found `ten`")
    );
    assert!(e("test:m:b=yes").message.contains("must be true or false"));
    assert!(e(r#"test:m:s="open"#).message.contains("not closed"));
    assert!(e("test:m:l={a,b").message.contains("not closed with `}`"));
    assert!(
        e("test:m:s=a;b")
            .message
            .contains("single value, not a list")
    );
    assert!(e("test:m:s").message.contains("expected `=`"));
    assert!(e("test:m:s=x,s=y").message.contains("given twice"));
    assert!(e("test:m:s=\"a\"b").message.contains("expected `,`"));
    assert!(e(r#"test:m:s="\q""#).message.contains("unknown escape"));
    let x = e("test:m:s=");
    assert!(x.message.contains("`s` has no value"), "{x:?}");
}

#[test]
fn rbac_marker_is_read_with_typed_arguments_and_columns() {
    let m = one("    // +kubebuilder:rbac:groups=apps,resources=deployments;deployments/status,verbs={get,list}").unwrap();
    assert_eq!(m.name(), "kubebuilder:rbac");
    assert_eq!((m.line, m.column), (1, 8));
    let r = super::typed::RbacRule::try_from(&m).unwrap();
    assert_eq!(r.groups, ["apps"]);
    assert_eq!(r.resources, ["deployments", "deployments/status"]);
    assert_eq!(r.verbs.unwrap(), ["get", "list"]);
    // `groups` starts right after "+kubebuilder:rbac:" (column 8 + 18).
    assert_eq!(m.args[0].column, 26);
    assert_eq!(m.diag_at("verbs", "x").column, m.args[2].column);
}

#[test]
fn webhook_marker_reads_bools_ints_and_strings() {
    let m = one("// +kubebuilder:webhook:path=/mutate-x,mutating=true,failurePolicy=fail,sideEffects=None,groups=g.example.com,resources=xs,verbs=create;update,versions=v1,name=mx.kb.io,admissionReviewVersions=v1,timeoutSeconds=5").unwrap();
    let w = super::typed::WebhookMarker::try_from(&m).unwrap();
    assert!(w.mutating);
    assert_eq!(w.timeout_seconds, Some(5));
    assert_eq!(w.path, Some("/mutate-x"));
    assert_eq!(w.url, None);
}

/// Case D: `// +kubebuilder:rbac:groups=apps,resources=deployments` (no verbs).
#[test]
fn missing_verbs_is_an_error_at_the_marker() {
    let e = err("fn a() {}\n\n// +kubebuilder:rbac:groups=apps,resources=deployments\n");
    assert!(
        e.starts_with(&format!(
            "{FILE}:3:4: +kubebuilder:rbac is missing the required argument `verbs`"
        )),
        "{e}"
    );
    assert!(e.contains("add verbs=<list of strings>"), "{e}");
}

#[test]
fn several_missing_arguments_are_named_together() {
    let e = err("// +kubebuilder:webhook:path=/x,mutating=true");
    assert!(
        e.contains("missing the required arguments `failurePolicy`, `groups`, `resources`, `verbs`, `versions`, `name`, `admissionReviewVersions`"),
        "{e}"
    );
}

/// Case D: `// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get`.
#[test]
fn misspelled_marker_names_the_near_miss() {
    let e = err("// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get");
    assert!(
        e.starts_with(&format!("{FILE}:1:4: unknown marker +kubebuilder:rbca")),
        "{e}"
    );
    assert!(e.contains("did you mean +kubebuilder:rbac?"), "{e}");
    let e = err("// +kubebuilder:webhookconfig:mutating=true");
    assert!(
        e.contains("did you mean +kubebuilder:webhookconfiguration?"),
        "{e}"
    );
    let e = err("// +kubebuilder:scafold:imports");
    assert!(e.contains("did you mean +kubebuilder:scaffold?"), "{e}");
}

#[test]
fn misspelled_prefix_is_an_error_too() {
    let e = err("// +kubebuider:rbac:groups=apps,resources=pods,verbs=get");
    assert!(e.contains("unknown marker +kubebuider:rbac"), "{e}");
    assert!(e.contains("did you mean +kubebuilder:rbac?"), "{e}");
}

#[test]
fn unknown_marker_without_near_miss_lists_the_known_ones() {
    let e = err("// +kubebuilder:frobnicate");
    assert!(e.contains("unknown marker +kubebuilder:frobnicate"), "{e}");
    assert!(
        e.contains("rsbuilder knows +kubebuilder:rbac, +kubebuilder:webhook"),
        "{e}"
    );
}

#[test]
fn unknown_argument_suggests_the_nearest() {
    let e = err("// +kubebuilder:rbac:groups=apps,resources=pods,verb=get");
    assert!(
        e.starts_with(&format!(
            "{FILE}:1:49: +kubebuilder:rbac has no argument `verb`"
        )),
        "{e}"
    );
    assert!(e.contains("did you mean `verbs`?"), "{e}");
    let e = err("// +kubebuilder:rbac:groups=apps,resources=pods,resourcenames=a,verbs=get");
    assert!(e.contains("did you mean `resourceNames`?"), "{e}");
}

#[test]
fn bad_value_is_an_error() {
    let e = err("// +kubebuilder:webhook:mutating=yes");
    assert!(
        e.contains("`mutating` must be true or false, found `yes`"),
        "{e}"
    );
    let e = err("// +kubebuilder:rbac:groups=,resources=pods,verbs=get");
    assert!(e.contains("`groups` has no value"), "{e}");
    assert!(e.contains("groups=\"\""), "{e}");
}

#[test]
fn crd_markers_of_go_types_point_to_the_rust_attribute() {
    let e = err("    // +kubebuilder:validation:Maximum=100");
    assert!(e.contains("controller-gen marker for Go types"), "{e}");
    assert!(e.contains("#[schemars(range("), "{e}");
    let e = err("// +kubebuilder:subresource:status");
    assert!(e.contains("#[kube(status"), "{e}");
    // Each validation marker names its own replacement, not one list for all.
    let e = err("    // +kubebuilder:validation:Enum=mysql;postgres");
    assert!(e.contains("a Rust enum of unit variants"), "{e}");
    assert!(!e.contains("range("), "{e}");
    let e = err("    // +kubebuilder:validation:Pattern=`^[0-9]+$`");
    assert!(e.contains("#[schemars(regex(pattern"), "{e}");
    let e = err("    // +kubebuilder:validation:MaxItems=3");
    assert!(e.contains("on the `Vec` field"), "{e}");
    let e = err("    // +kubebuilder:validation:Required");
    assert!(e.contains("required unless its type is an `Option`"), "{e}");
    // A validation marker without its own entry keeps the general list.
    let e = err("    // +kubebuilder:validation:Format=date-time");
    assert!(
        e.contains("#[schemars(range(min = 1, max = 100))]`, `#[schemars(length"),
        "{e}"
    );
}

#[test]
fn scaffold_markers_and_foreign_markers_are_ignored() {
    let text = "\
// +kubebuilder:scaffold:imports
    // +kubebuilder:scaffold:controllers
// +optional
// +k8s:deepcopy-gen=true
// + just a plus
//+kubebuilder:rbac:groups=apps,resources=pods,verbs=get
";
    let (markers, errors) = collect_text(Path::new(FILE), text);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(markers.len(), 1);
    assert_eq!((markers[0].line, markers[0].column), (6, 3));
}

#[test]
fn only_whole_line_plain_comments_are_read() {
    let text = r##"
let x = 1; // +kubebuilder:rbac:groups=apps,resources=pods
/// Docs: +kubebuilder:rbca is fine in prose.
//// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get
const S: &str = "
// +kubebuilder:rbca:not-a-comment \" still in the string
";
const R: &str = r#"a "quoted" part
// +kubebuilder:rbca:in-a-raw-string
"#;
const Q: char = '"';
/* a block comment
// +kubebuilder:rbca:in-a-block-comment
   /* nested */
// +kubebuilder:rbca:still-in-the-block-comment
*/
fn f<'a>(s: &'a str) -> &'a str { s }
// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get
"##;
    let (markers, errors) = collect_text(Path::new(FILE), text);
    assert!(errors.is_empty(), "{errors:?}");
    // `//// +...` is a commented-out marker; the lines inside literals and the block comment
    // are not comments; only line 18 is read.
    assert_eq!(markers.iter().map(|m| m.line).collect::<Vec<_>>(), vec![18]);
}

#[test]
fn rbac_marker_in_a_doc_comment_is_an_error() {
    let e = err("/// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get\nstruct A;");
    assert!(
        e.starts_with(&format!(
            "{FILE}:1:5: +kubebuilder:rbac is in a doc comment"
        )),
        "{e}"
    );
    let (m, e) = collect_text(
        Path::new(FILE),
        "//! +kubebuilder:scaffold:x\n/// +kubebuilder:validation:Minimum=1\n",
    );
    assert!(m.is_empty() && e.is_empty(), "{e:?}");
}

#[test]
fn every_error_of_every_line_is_reported() {
    let text = "// +kubebuilder:rbca:verbs=get\n// +kubebuilder:rbac:groups=apps,resources=pods\n";
    let (_, errors) = collect_text(Path::new(FILE), text);
    assert_eq!(
        errors.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

#[test]
fn collect_reads_every_file_of_a_source_set() {
    let a = crate::manifests::SourceSet::parse_text(
        Path::new("src/a.rs"),
        "// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get\nfn a() {}\n".into(),
    )
    .unwrap();
    let b = crate::manifests::SourceSet::parse_text(
        Path::new("src/b.rs"),
        "fn b() {}\n// +kubebuilder:rbca:verbs=get\n".into(),
    )
    .unwrap();
    let set = crate::manifests::SourceSet {
        files: vec![a.clone()],
    };
    assert_eq!(collect(&set).unwrap().len(), 1);
    let set = crate::manifests::SourceSet { files: vec![a, b] };
    let errs = collect(&set).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(
        (errs[0].file.to_str().unwrap(), errs[0].line),
        ("src/b.rs", 2)
    );
}

#[test]
fn registry_lookup_and_suggestions() {
    assert_eq!(
        registry::lookup("kubebuilder:rbac").unwrap().name,
        "kubebuilder:rbac"
    );
    assert_eq!(
        registry::lookup("kubebuilder:scaffold:imports")
            .unwrap()
            .name,
        "kubebuilder:scaffold"
    );
    assert!(registry::lookup("kubebuilder:scaffoldx").is_none());
    assert_eq!(
        registry::suggest("kubebuilder:rbca"),
        Some("kubebuilder:rbac")
    );
    assert_eq!(registry::suggest("kubebuilder:zzzzzzzzzz"), None);
}

/// docs/markers.md embeds the reference rendered from the registry; regenerate it with
/// `RSBUILDER_BLESS_DOCS=1 cargo test --lib markers::tests::docs`.
#[test]
fn docs_list_every_registered_marker_and_argument() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/markers.md");
    let doc = std::fs::read_to_string(&path).expect("docs/markers.md exists");
    let (begin, end) = ("<!-- markers:begin -->\n", "<!-- markers:end -->");
    let start = doc.find(begin).expect("begin marker") + begin.len();
    let stop = doc.find(end).expect("end marker");
    let rendered = registry::reference_markdown();
    if std::env::var_os("RSBUILDER_BLESS_DOCS").is_some() {
        let updated = format!("{}{}{}", &doc[..start], rendered, &doc[stop..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..stop],
        rendered,
        "docs/markers.md is stale; run RSBUILDER_BLESS_DOCS=1 cargo test --lib markers::tests::docs"
    );
    for def in registry::MARKERS {
        assert!(
            doc.contains(&format!("### `+{}`", def.name)),
            "{} undocumented",
            def.name
        );
        for a in def.args() {
            assert!(
                doc.contains(&format!("| `{}` |", a.name)),
                "{}.{} undocumented",
                def.name,
                a.name
            );
        }
    }
}

/// Every prefix and every one-character deletion of a set of markers is read without a
/// panic; each either parses or yields a diagnostic on its own line.
#[test]
fn truncated_and_damaged_markers_never_panic() {
    let samples = [
        "// +kubebuilder:rbac:groups=\"\",resources=pods;pods/status,resourceNames={a,\"b,c\"},verbs=*",
        "// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create,versions=v1,name=a.b.c,admissionReviewVersions={v1},timeoutSeconds=-3,patch=`{\"x\":\"\\u00e9\"}`",
        "// +kubebuilder:webhookconfiguration:mutating=false,name=\"\\x41\\U0001F600\"",
        "/// +kubebuilder:rbac:verbs=get é",
    ];
    for sample in samples {
        let chars: Vec<char> = sample.chars().collect();
        let mut variants: Vec<String> = (0..=chars.len())
            .map(|n| chars[..n].iter().collect())
            .collect();
        variants.extend(
            (0..chars.len()).map(|i| chars[..i].iter().chain(&chars[i + 1..]).collect::<String>()),
        );
        for v in variants {
            let text = format!("fn a() {{}}\n{v}\n");
            let (markers, errors) = collect_text(Path::new(FILE), &text);
            assert!(markers.len() + errors.len() <= 1, "{v}");
            assert!(
                errors.iter().all(|e| e.line == 2 && e.column >= 1),
                "{v}: {errors:?}"
            );
            // Generators must not panic on whatever parsed.
            let _ = crate::manifests::rbac::generate(&markers, false);
            let _ = crate::manifests::webhook::generate(&markers);
        }
    }
}

#[test]
fn suggestions_cover_transpositions_truncations_and_prefixes() {
    assert_eq!(
        registry::suggest("kubebuilder:wbehook"),
        Some("kubebuilder:webhook")
    );
    assert_eq!(
        registry::suggest("kubebuilder:scafold:imports"),
        Some("kubebuilder:scaffold")
    );
    assert_eq!(
        registry::suggest("kubebuilder:webhookconfig"),
        Some("kubebuilder:webhookconfiguration")
    );
    let long = format!("kubebuilder:{}", "a:".repeat(5000));
    assert_eq!(registry::suggest(&long), None);
}

/// More markers than [`MAX_MARKERS`] stop the run at the first one past the limit, and the
/// scan of a file stops there too, so memory stays bounded. Before, 720,000 rbac lines took
/// 2.3 GB.
#[test]
fn markers_past_the_limit_are_refused_at_the_first_one_over() {
    let line = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
    let text = line.repeat(MAX_MARKERS + 5);
    let (markers, _) = collect_text(Path::new("src/lib.rs"), &text);
    assert_eq!(markers.len(), MAX_MARKERS + 1);
    let sources = crate::manifests::source::SourceSet::parse_all(vec![(
        "src/lib.rs".into(),
        format!("{text}fn f() {{}}\n"),
    )])
    .unwrap();
    let err = collect(&sources).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].line, MAX_MARKERS + 1);
    assert!(
        err[0].message.contains("more than 10000 markers"),
        "{}",
        err[0].message
    );
    // At the limit, all are read.
    let sources = crate::manifests::source::SourceSet::parse_all(vec![(
        "src/lib.rs".into(),
        line.repeat(MAX_MARKERS),
    )])
    .unwrap();
    assert_eq!(collect(&sources).unwrap().len(), MAX_MARKERS);
}
