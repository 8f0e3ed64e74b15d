// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Cases ported from apiextensions-apiserver's `pkg/apiserver/schema/cel` tests (rule, object,
//! expected causes).

use super::guard::guarded;
use super::*;
use cel::ExecutionError;
use serde_json::json;

/// A root object schema with `props`, and `rules` on the root.
fn object(props: Value, rules: Value) -> Value {
    json!({"type": "object", "properties": props, "x-kubernetes-validations": rules})
}

fn causes(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    Rules::compile(schema)
        .expect("compiles")
        .expect("has rules")
        .validate(obj, old)
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn rules_that_hold_give_no_cause() {
    let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "val1": {"type": "string"}, "n": {"type": "integer"}, "f": {"type": "number"},
        "list": {"type": "array", "items": {"type": "integer"}},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "a": {"type": "object", "properties": {"b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer", "nullable": true}}},
        "b": {"type": "string", "format": "byte"},
    }}}});
    let obj = json!({"spec": {"val1": "Rook takes 👑", "n": 3, "f": 1, "list": [1, 2, 3],
        "m": {"b": 1, "d": 2}, "a": {"b": 1, "d": null}, "b": "QUI="}});
    for rule in [
        "self.val1.startsWith('Rook')",
        "!self.val1.startsWith('knight')",
        "self.val1.contains('takes')",
        "self.val1.endsWith('👑')",
        "self.val1.matches('^[^0-9]*$')",
        "size(self.val1) == 12",
        "self.val1.charAt(3) == 'k'",
        "self.val1.indexOf('o') == 1",
        "self.val1.split(' ') == ['Rook', 'takes', '👑']",
        "self.val1.substring(0, 4) == 'Rook'",
        "self.val1.upperAscii() == 'ROOK TAKES 👑'",
        "type(self.f) == double",
        "self.f == 1.0",
        "type(self.n) == int",
        "1 in self.list",
        "self.list + [4, 5] == [1, 2, 3, 4, 5]",
        "self.list.all(x, x > 0)",
        "self.list.exists(x, x == 2)",
        "self.list.exists_one(x, x == 2)",
        "self.list.map(x, x * 2) == [2, 4, 6]",
        "self.list.filter(x, x > 1) == [2, 3]",
        "self.list.isSorted()",
        "self.list.sum() == 6",
        "self.list.min() == 1",
        "self.list.max() == 3",
        "'b' in self.m",
        "!('c' in self.m)",
        "self.m.all(k, self.m[k] > 0)",
        "self.m.exists_one(k, self.m[k] == 2)",
        "has(self.a.b)",
        "!has(self.a.c)",
        "!has(self.a.d)",
        "self.b == b'AB'",
        "'abc 123 def 456'.find('[0-9]+') == '123'",
        "'abc 123 def 456'.findAll('[0-9]+') == ['123', '456']",
        "'abc 123 def 456'.findAll('[0-9]+', 1) == ['123']",
        "self.list.sortBy(x, -x) == [3, 2, 1]",
        "self.list.slice(0, 1) == [1]",
        "[1, 1, 2].distinct() == [1, 2]",
        "lists.range(3) == [0, 1, 2]",
        "self.val1.reverse().startsWith('👑')",
        "strings.quote('a') == '\"a\"'",
        "optional.of(1).hasValue() && !optional.none().hasValue()",
        "duration('1h') > duration('59m')",
        "timestamp('2011-08-18T00:00:00Z').getFullYear() == 2011",
        "[self.n, 1].max() == 3 && [1.5, 0.5].sum() == 2.0",
        "self.list.indexOf(2) == 1 && self.list.indexOf(9) == -1",
        "[1, 2, 1].lastIndexOf(1) == 2 && self.val1.indexOf('o') == 1",
        "cel.bind(xs, self.list.filter(x, x > 1), size(xs) == 2 && xs[0] == 2)",
    ] {
        let mut s = s.clone();
        s["properties"]["spec"]["x-kubernetes-validations"] = json!([{"rule": rule}]);
        assert_eq!(causes(&s, &obj, None), vec![], "{rule}");
    }
}

#[test]
fn date_date_time_and_duration_formats_are_timestamps_and_durations() {
    // TestValidationExpressions: "duration format", "date format", "date-time format".
    let s = json!({"type": "object", "properties": {
        "d": {"type": "string", "format": "duration"},
        "day": {"type": "string", "format": "date"},
        "t": {"type": "string", "format": "date-time"}}});
    let obj =
        json!({"d": "1h2m3s4ms", "day": "1997-07-16", "t": "2011-08-18T19:03:37.010000000+01:00"});
    for rule in [
        "self.d == duration('1h2m3s4ms')",
        "self.d == duration('1h2m') + duration('3s4ms')",
        "self.d.getHours() == 1",
        "self.d.getMinutes() == 62",
        "self.d.getSeconds() == 3723",
        "self.d.getMilliseconds() == 3723004",
        "self.day == timestamp('1997-07-16T00:00:00.000Z')",
        "self.day.getDate() == 16",
        "self.day.getMonth() == 06",
        "self.day.getFullYear() == 1997",
        "self.t == timestamp('2011-08-18T19:03:37.010+01:00')",
        "self.t == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
        "self.t.getDate('01:00') == 18",
        "self.t.getMonth('01:00') == 7",
        "self.t.getHours('01:00') == 19",
        "self.t.getHours('UTC') == 18",
        "self.t.getMilliseconds('01:00') == 10",
    ] {
        let mut s = s.clone();
        s["x-kubernetes-validations"] = json!([{"rule": rule}]);
        assert_eq!(causes(&s, &obj, None), vec![], "{rule}");
    }
}

#[test]
fn a_failing_rule_is_an_invalid_cause_at_its_node_with_the_default_message() {
    // TestValidationExpressionsAtSchemaLevels: "failing rule under escaped field name".
    let s = object(
        json!({"f/2": {"type": "object", "properties": {"m": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.m == 2"}]}}),
        json!([]),
    );
    assert_eq!(
        causes(&s, &json!({"f/2": {"m": 1}}), None),
        pairs(&[("f/2", "Invalid value: \"object\": failed rule: self.m == 2")])
    );
    // A root rule is reported at the root, which the API server prints as `<nil>`.
    let s = object(
        json!({"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}),
        json!([{"rule": "self.spec.replicas <= 5", "message": "  at most 5 replicas "}]),
    );
    assert_eq!(
        causes(&s, &json!({"spec": {"replicas": 6}}), None),
        pairs(&[("<nil>", "Invalid value: \"object\": at most 5 replicas")])
    );
    assert_eq!(causes(&s, &json!({"spec": {"replicas": 5}}), None), vec![]);
}

#[test]
fn runtime_errors_are_causes_naming_the_rule() {
    let s = json!({"type": "object", "properties": {"val": {"type": "object",
        "additionalProperties": {"type": "integer"}, "x-kubernetes-validations": [
            {"rule": "self['c'] == 1"}, {"rule": "self['b'] + 'abc' == 'x'"}]}}});
    let got = causes(&s, &json!({"val": {"b": 1}}), None);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "val");
    assert!(
        got[0].1.starts_with(
            "Invalid value: \"object\": no such key: c evaluating rule: self['c'] == 1"
        ),
        "{}",
        got[0].1
    );
    assert_eq!(
        got[1].1,
        "Invalid value: \"object\": 'found no matching overload for '_+_' applied to '(int, string)'': call arguments did not match a supported operator, function or macro signature for rule: self['b'] + 'abc' == 'x'"
    );
}

#[test]
fn rules_on_absent_or_null_values_do_not_run() {
    let s = object(
        json!({"a": {"type": "string", "nullable": true, "x-kubernetes-validations": [{"rule": "self == 'x'"}]}}),
        json!([]),
    );
    assert_eq!(causes(&s, &json!({}), None), vec![]);
    assert_eq!(causes(&s, &json!({"a": null}), None), vec![]);
    assert_eq!(
        causes(&s, &json!({"a": "y"}), None),
        pairs(&[("a", "Invalid value: \"string\": failed rule: self == 'x'")])
    );
}

#[test]
fn message_expression_reason_and_field_path_shape_the_cause() {
    let s = object(
        json!({"spec": {"type": "object", "properties": {
          "min": {"type": "integer"}, "max": {"type": "integer"},
          "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [
          {"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' is above max ' + string(self.max)",
           "fieldPath": ".min", "reason": "FieldValueForbidden"},
          {"rule": "self.min <= self.max", "message": "fallback", "messageExpression": "self.min"},
          {"rule": "!('a.b' in self.labels)", "fieldPath": ".labels['a.b']", "reason": "FieldValueRequired", "message": "no a.b"},
          {"rule": "self.min != 7", "reason": "FieldValueDuplicate"},
          {"rule": "!('a.b' in self.labels)", "fieldPath": ".labels", "message": "at the map"},
        ]}}),
        json!([]),
    );
    let obj = json!({"spec": {"min": 7, "max": 3, "labels": {"a.b": "x"}}});
    assert_eq!(
        causes(&s, &obj, None),
        pairs(&[
            ("spec.min", "Forbidden: min 7 is above max 3"),
            ("spec", "Invalid value: \"object\": fallback"),
            ("spec.labels[a.b]", "Required value: no a.b"),
            ("spec", "Duplicate value: \"object\""),
            ("spec.labels", "Invalid value: \"object\": at the map"),
        ])
    );
}

#[test]
fn transition_rules_run_only_on_updates_where_an_old_value_correlates() {
    let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "name is immutable"}]},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "properties": {"port": {"type": "integer"}, "proto": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.proto == oldSelf.proto", "message": "proto is immutable"}]}},
        "tags": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
        "count": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self < 10", "optionalOldSelf": true, "message": "count only grows"}]},
    }}}});
    let new = json!({"spec": {"name": "b", "ports": [{"port": 80, "proto": "UDP"}, {"port": 81, "proto": "TCP"}], "tags": ["x"], "count": 12}});
    // Create: no old value, transition rules skipped; optionalOldSelf runs with none.
    assert_eq!(
        causes(&s, &new, None),
        pairs(&[("spec.count", "Invalid value: \"integer\": count only grows")])
    );
    let old = json!({"spec": {"name": "a", "ports": [{"port": 80, "proto": "TCP"}], "tags": ["y"], "count": 13}});
    assert_eq!(
        causes(&s, &new, Some(&old)),
        pairs(&[
            ("spec.count", "Invalid value: \"integer\": count only grows"),
            ("spec.name", "Invalid value: \"string\": name is immutable"),
            (
                "spec.ports[0]",
                "Invalid value: \"object\": proto is immutable"
            ),
        ])
    );
    let grown = json!({"spec": {"name": "a", "count": 14}});
    assert_eq!(causes(&s, &grown, Some(&old)), vec![]);
}

#[test]
fn int_or_string_and_preserved_unknown_fields_are_visible_to_rules() {
    let s = object(
        json!({"port": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [
            {"rule": "type(self) == int ? self > 0 : self.startsWith('http')"}]},
          "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [{"rule": "!has(self.forbidden)"}]}}),
        json!([]),
    );
    assert_eq!(
        causes(&s, &json!({"port": 8080, "extra": {"a": [1]}}), None),
        vec![]
    );
    assert_eq!(causes(&s, &json!({"port": "http"}), None), vec![]);
    assert_eq!(
        causes(&s, &json!({"port": "ftp", "extra": {"forbidden": 1}}), None),
        pairs(&[
            (
                "extra",
                "Invalid value: \"object\": failed rule: !has(self.forbidden)"
            ),
            (
                "port",
                "Invalid value: \"\": failed rule: type(self) == int ? self > 0 : self.startsWith('http')"
            ),
        ])
    );
}

#[test]
fn property_names_are_escaped_as_the_api_server_escapes_them() {
    assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
    assert_eq!(
        escape("a.b/c__d").as_deref(),
        Some("a__dot__b__slash__c__underscores__d")
    );
    assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
    assert_eq!(escape("a@b"), None);
    let s = object(
        json!({"max-size": {"type": "integer"}}),
        json!([{"rule": "self.max__dash__size < 3"}]),
    );
    assert_eq!(
        causes(&s, &json!({"max-size": 3}), None),
        pairs(&[(
            "<nil>",
            "Invalid value: \"object\": failed rule: self.max__dash__size < 3"
        )])
    );
}

#[test]
fn rules_that_do_not_compile_or_use_unprovided_functions_are_refused_with_their_path() {
    let at = |rule: Value| {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"url": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "true"}, rule]}}});
        Rules::compile(&s).expect_err("refused")
    };
    let e = at(json!({"rule": "self.url =="}));
    assert!(
        e.starts_with("openAPIV3Schema.properties[spec].x-kubernetes-validations[1]: rule \"self.url ==\": compilation failed: "),
        "{e}"
    );
    let e = at(json!({"rule": "url(self.url).getHost() == 'x'"}));
    assert_eq!(
        e,
        "openAPIV3Schema.properties[spec].x-kubernetes-validations[1]: rule \"url(self.url).getHost() == 'x'\": compilation failed: function \"getHost\" is not supported by this API server (docs/apiserver.md lists the CEL functions it provides)"
    );
    let e = at(json!({"rule": "isQuantity(self.url)"}));
    assert!(
        e.contains("function \"isQuantity\" is not supported"),
        "{e}"
    );
    let e = at(json!({"rule": "other.x == 1"}));
    assert!(
        e.ends_with("compilation failed: undeclared reference to \"other\""),
        "{e}"
    );
    let e = at(json!({"rule": "self.url == 'x'", "fieldPath": ".nope"}));
    assert!(
        e.ends_with("fieldPath \".nope\": does not refer to a valid field"),
        "{e}"
    );
    let e = at(json!({"rule": "self.url == 'x'", "reason": "Bogus"}));
    assert!(e.contains("reason: Unsupported value: \"Bogus\""), "{e}");
    let e = at(json!({"rule": "self.url ==\n'x'"}));
    assert!(
        e.ends_with("message must be specified if rule contains line breaks"),
        "{e}"
    );
    let e = at(json!({"rule": "self.url == 'x'", "message": "two\nlines"}));
    assert!(e.ends_with("message must not contain line breaks"), "{e}");
    let e = at(json!({"rule": "self.url == 'x'", "message": " "}));
    assert!(e.ends_with("message must be non-empty if specified"), "{e}");
    let e = at(json!({"rule": "self.url == 'x'", "messageExpression": ""}));
    assert!(
        e.ends_with("messageExpression must be non-empty if specified"),
        "{e}"
    );
    assert!(
        Rules::compile(&json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "self.size() >= 0 &&\n true", "message": "fine"}]}))
        .is_ok()
    );
    let e = at(json!({"rule": "self.url == 'x'", "optionalOldSelf": true}));
    assert!(
        e.ends_with("optionalOldSelf may only be set when the rule uses oldSelf"),
        "{e}"
    );
    // The kind fails to load through `check`, and a kind built without it reports the
    // compile error instead of skipping the rule.
    let s = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.("}]});
    assert!(check(Some(&s)).is_err());
    let got = validate(Some(&s), &json!({}), None);
    assert_eq!(got.len(), 1);
    assert!(got[0].1.starts_with("Invalid value: \"object\": rule compiler initialization error: openAPIV3Schema.x-kubernetes-validations[0]"), "{got:?}");
}

#[test]
fn a_call_whose_cost_bound_passes_the_per_call_limit_stops_validation() {
    let s = object(
        json!({"a": {"type": "array", "items": {"type": "integer"}},
               "b": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'x'"}]}}),
        json!([{"rule": "self.a.all(x, self.a.all(y, self.a.all(z, x + y + z >= 0)))"}]),
    );
    let small = json!({"a": [1, 2, 3], "b": "x"});
    assert_eq!(causes(&s, &small, None), vec![]);
    let big = json!({"a": (0..200).collect::<Vec<i64>>(), "b": "y"});
    assert_eq!(
        causes(&s, &big, None),
        pairs(&[(
            "<nil>",
            "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.a.all(x, self.a.all(y, self.a.all(z, x + y + z >= 0)))"
        )])
    );
}

#[test]
fn an_unchanged_value_keeps_passing_rules_that_do_not_use_old_self() {
    // CRDValidationRatcheting: the stored value already broke the rule; an update that leaves
    // it as it was is not refused for it, one that changes it is.
    let s = object(
        json!({"a": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]},
               "b": {"type": "string"}}),
        json!([]),
    );
    let old = json!({"a": "long", "b": "x"});
    assert_eq!(
        causes(&s, &json!({"a": "long", "b": "y"}), Some(&old)),
        vec![]
    );
    assert_eq!(
        causes(&s, &json!({"a": "longer", "b": "y"}), Some(&old)),
        pairs(&[(
            "a",
            "Invalid value: \"string\": failed rule: self.size() < 3"
        )])
    );
}

#[test]
fn rules_do_not_run_after_a_blocking_schema_error() {
    let s = object(
        json!({"a": {"type": "string"}}),
        json!([{"rule": "self.a == 'x'"}]),
    );
    let schema_causes = vec![("a".to_string(), "Required value".to_string())];
    assert_eq!(
        after_schema(Some(&s), &json!({}), None, &schema_causes),
        pairs(&[(
            "<nil>",
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
        )])
    );
    let invalid = vec![(
        "a".to_string(),
        "Invalid value: \"y\": a in body should match 'x'".to_string(),
    )];
    assert_eq!(
        after_schema(Some(&s), &json!({"a": "y"}), None, &invalid),
        pairs(&[(
            "<nil>",
            "Invalid value: \"object\": failed rule: self.a == 'x'"
        )])
    );
    // A schema without rules adds nothing either way.
    assert_eq!(
        after_schema(
            Some(&json!({"type": "object"})),
            &json!({}),
            None,
            &schema_causes
        ),
        vec![]
    );
}

#[test]
fn a_crd_whose_rule_does_not_compile_fails_to_load() {
    let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"ip": {"type": "string"}},
                            "x-kubernetes-validations": [{"rule": "isIP(self.ip)"}]}}}}}]},
        }))
        .unwrap();
    let e = crate::apiserver::kind::ApiKind::from_crd(&crd, "v1").unwrap_err();
    assert_eq!(
        e,
        "CRD widgets.example.com version v1: openAPIV3Schema.properties[spec].x-kubernetes-validations[0]: rule \"isIP(self.ip)\": compilation failed: function \"isIP\" is not supported by this API server (docs/apiserver.md lists the CEL functions it provides)"
    );
}

#[test]
fn an_interpreter_panic_is_an_internal_error_not_a_crash() {
    let r = guarded(|| panic!("an interpreter bug"));
    assert_eq!(
        r,
        Err(ExecutionError::InternalError(
            "the CEL interpreter failed".into()
        ))
    );
}

#[test]
fn rules_under_all_of_run_at_the_node_and_under_any_of_are_refused() {
    // TestValidationExpressionsAtSchemaLevels: "allOf rule".
    let s = json!({"type": "object", "properties": {"key": {"type": "string"}, "key2": {"type": "string"}},
    "allOf": [
        {"x-kubernetes-validations": [{"rule": "self.key == 'value' && self.key2 == 'value2'",
            "message": "key must be 'value' and key2 must be 'value2'"}]},
        {"x-kubernetes-validations": [{"rule": "self.key != self.key2", "message": "key must not be equal to key2"}]},
    ]});
    assert_eq!(
        causes(&s, &json!({"key": "value", "key2": "value"}), None),
        pairs(&[
            (
                "<nil>",
                "Invalid value: \"object\": key must be 'value' and key2 must be 'value2'"
            ),
            (
                "<nil>",
                "Invalid value: \"object\": key must not be equal to key2"
            ),
        ])
    );
    let mut any = s.clone();
    any["anyOf"] = any["allOf"].take();
    assert_eq!(
        Rules::compile(&any).unwrap_err(),
        "openAPIV3Schema.anyOf: x-kubernetes-validations inside anyOf are not allowed"
    );
    let off_spine = json!({"type": "object", "properties": {"a": {"type": "string"}},
        "allOf": [{"properties": {"b": {"x-kubernetes-validations": [{"rule": "self == 'x'"}]}}}]});
    assert_eq!(
        Rules::compile(&off_spine).unwrap_err(),
        "openAPIV3Schema.allOf[0].properties[b]: x-kubernetes-validations on a field the schema's properties do not declare"
    );
}

#[test]
fn a_field_the_schema_does_not_declare_is_refused_as_the_type_check_refuses_it() {
    // TestValidationExpressions "object access": `has(self.a.z)` is "undefined field 'z'".
    let s = |rule: &str| {
        json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "integer"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "max-size": {"type": "integer"}},
          "x-kubernetes-validations": [{"rule": rule}]})
    };
    for (rule, field) in [
        ("has(self.a.z)", "z"),
        ("self.items.all(x, x.nmae == 'a')", "nmae"),
        ("self.items[0].name == self.a.c", "c"),
        ("self.max_size > 1", "max_size"),
        ("self.metadata.namespace == 'x'", "namespace"),
    ] {
        let e = Rules::compile(&s(rule)).expect_err(rule);
        assert!(
            e.ends_with(&format!("compilation failed: undefined field '{field}'")),
            "{rule}: {e}"
        );
    }
    for rule in [
        "has(self.a.b)",
        "self.items.all(x, x.name != '')",
        "self.labels.anything == 'x' || !has(self.labels.anything)",
        "has(self.free.whatever.deeper)",
        "self.max__dash__size > 0",
        "self.metadata.name != '' && self.kind == 'Widget' && self.apiVersion != ''",
        "self.labels.all(k, k.startsWith('a'))",
    ] {
        assert!(Rules::compile(&s(rule)).is_ok(), "{rule}");
    }
}

#[test]
fn the_bounds_of_an_objects_calls_add_up_against_the_runtime_budget() {
    // Each item's call is under the per-call limit; 200 of them are not under the budget.
    let s = json!({"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.a.all(x, self.a.all(y, x + y >= 0))"}]}}}});
    let item = json!({"a": (0..100).collect::<Vec<i64>>()});
    let few = json!({"items": vec![item.clone(); 2]});
    assert_eq!(causes(&s, &few, None), vec![]);
    let many = json!({"items": vec![item; 60]});
    // Each call's bound is 102^2 (the item, its field, 100 numbers) times the rule's 23
    // expression nodes: 239,292, under the per-call limit. The 10,000,000 budget covers 41
    // calls; the 42nd is refused and stops validation.
    assert_eq!(
        causes(&s, &many, None),
        pairs(&[(
            "items[41]",
            "Invalid value: \"object\": validation failed due to running out of cost budget, no further validation rules will be run"
        )])
    );
}

#[test]
fn a_field_path_to_a_key_of_the_nodes_own_map_is_joined_as_field_path_child_joins_it() {
    let s = object(
        json!({"labels": {"type": "object", "additionalProperties": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "!('a.b' in self)", "fieldPath": "['a.b']"}]}}),
        json!([]),
    );
    assert_eq!(
        causes(&s, &json!({"labels": {"a.b": "x"}}), None),
        pairs(&[(
            "labels.[a.b]",
            "Invalid value: \"object\": failed rule: !('a.b' in self)"
        )])
    );
}
