// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The uniqueness rules of `x-kubernetes-list-type: set` and `map` lists, as the apiextensions
//! server checks them after the schema (`pkg/apiserver/schema/listtype`): a set may not hold
//! an item twice, a map list may not hold two items with the same `x-kubernetes-list-map-keys`
//! values. Errors are `Duplicate value: ...` at the second and later copies (each value
//! reported once), the value printed as Go prints it (`"a"`, `1`,
//! `map[string]interface {}{"name":"a"}`).

use serde_json::{Map, Value};

/// The duplicates in the set and map lists of the object `obj` under `schema`, its fields at
/// `path` (empty at the root). Out: `(field, message)` causes, appended to `causes`.
pub fn validate(
    schema: &Value,
    obj: &Map<String, Value>,
    path: &str,
    causes: &mut Vec<(String, String)>,
) {
    if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        for (k, v) in obj {
            walk(extra, v, &format!("{path}[{k}]"), causes);
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in obj {
            if let Some(sub) = props.get(k) {
                let field = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(sub, v, &field, causes);
            }
        }
    }
}

fn walk(schema: &Value, v: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    match v {
        Value::Array(items) => {
            match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => {
                    for i in repeated(items.iter().map(Some)) {
                        causes.push((
                            format!("{path}[{i}]"),
                            format!("Duplicate value: {}", go_value(&items[i])),
                        ));
                    }
                }
                Some("map") => map_list(schema, items, path, causes),
                _ => {}
            }
            if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), causes);
                }
            }
        }
        Value::Object(map) => validate(schema, map, path, causes),
        _ => {}
    }
}

/// The indices of the items equal to an earlier one, the first repeat of each value only
/// (as `validateListSet`). `None` is a key that is not there, equal only to another `None`.
fn repeated<'a>(items: impl Iterator<Item = Option<&'a Value>>) -> Vec<usize> {
    let mut seen: Vec<(Option<&Value>, usize)> = Vec::new();
    let mut out = Vec::new();
    for (i, x) in items.enumerate() {
        match seen.iter_mut().find(|(v, _)| *v == x) {
            Some((_, times)) => {
                *times += 1;
                if *times == 2 {
                    out.push(i);
                }
            }
            None => seen.push((x, 1)),
        }
    }
    out
}

fn map_list(schema: &Value, items: &[Value], path: &str, causes: &mut Vec<(String, String)>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            causes.push((
                format!("{path}[{i}]"),
                format!(
                    "Invalid value: {}: must be an object for an array of list-type map",
                    go_value(x)
                ),
            ));
            return;
        }
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let [key] = keys.as_slice() {
        let values: Vec<Option<&Value>> = items.iter().map(|x| x.get(*key)).collect();
        for i in repeated(values.iter().copied()) {
            let mut shown = Map::new();
            if let Some(v) = values[i] {
                shown.insert(key.to_string(), v.clone());
            }
            causes.push((
                format!("{path}[{i}]"),
                format!("Duplicate value: {}", go_value(&Value::Object(shown))),
            ));
        }
        return;
    }
    let tuples: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for k in &keys {
                if let Some(v) = x.get(*k) {
                    m.insert(k.to_string(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in repeated(tuples.iter().map(Some)) {
        causes.push((
            format!("{path}[{i}]"),
            format!("Duplicate value: {}", go_value(&tuples[i])),
        ));
    }
}

/// A value as apimachinery's `field.Error` prints a bad value: `null`, strings quoted (`%q`),
/// numbers and booleans plain (`%v`), objects and arrays in Go syntax (`%#v` of the decoded
/// `map[string]interface {}` / `[]interface {}`).
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Object(_) | Value::Array(_) => go_syntax(v),
        Value::Number(n) => go_number(n),
        _ => v.to_string(),
    }
}

/// A JSON number as Go prints the int64 or float64 it decodes to (`1`, `1.5`, `1e+06`).
pub fn go_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        n.to_string()
    } else {
        go_float(n.as_f64().unwrap_or(0.0))
    }
}

/// A float64 as Go's `%v` prints it (`strconv`'s shortest `'g'`): plain digits for decimal
/// exponents from -4 to 5 (`10`, `0.5`, `123456`), else `d.ddde±dd` (`1e+06`, `1.5e-05`).
pub fn go_float(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        format!("{x}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// `%#v` of a decoded JSON value: `map[string]interface {}{"a":1, "b":"c"}` (keys sorted),
/// `[]interface {}{"a", 1}`, `interface {}(nil)`.
fn go_syntax(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), go_syntax(&m[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Number(n) => go_number(n),
        _ => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, obj: Value) -> Vec<(String, String)> {
        let mut causes = Vec::new();
        validate(&schema, obj.as_object().unwrap(), "", &mut causes);
        causes
    }

    fn set_of(items: Value) -> Value {
        json!({"type": "array", "x-kubernetes-list-type": "set", "items": items})
    }

    /// apiextensions-apiserver's `TestValidateListSetsAndMaps` set cases (fields), with the
    /// messages the API server writes for them.
    #[test]
    fn a_set_may_not_hold_an_item_twice() {
        let schema = json!({"type": "object", "properties": {
            "array": {"type": "array", "x-kubernetes-list-type": "set"}}});
        assert_eq!(run(schema.clone(), json!({"array": ["a"]})), vec![]);
        assert_eq!(run(schema.clone(), json!({"array": ["a", "b"]})), vec![]);
        assert_eq!(
            run(schema.clone(), json!({"array": ["a", "a"]})),
            [("array[1]".to_string(), "Duplicate value: \"a\"".to_string())]
        );
        let fields: Vec<String> = run(schema, json!({"array": ["a", "a", "b", "c", "d", "c"]}))
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(fields, ["array[1]", "array[5]"]);
        // A plain list may repeat.
        let plain =
            json!({"properties": {"array": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(run(plain, json!({"array": ["a", "b", "a"]})), vec![]);
        // Under additionalProperties the key is written in brackets.
        let extra = json!({"additionalProperties": set_of(json!({"type": "string"}))});
        assert_eq!(
            run(extra, json!({"array": ["a", "b", "a"]})),
            [(
                "[array][2]".to_string(),
                "Duplicate value: \"a\"".to_string()
            )]
        );
        // Sets in sets.
        let nested = json!({"properties": {"array": set_of(set_of(json!({"type": "string"})))}});
        let fields: Vec<String> = run(nested, json!({"array": [["a", "b", "a"], ["b", "b", "a"]]}))
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(fields, ["array[0][2]", "array[1][1]"]);
    }

    #[test]
    fn numbers_print_as_go_prints_them() {
        let cases = [
            (10.0, "10"),
            (0.5, "0.5"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
        ];
        for (x, want) in cases {
            assert_eq!(go_float(x), want);
        }
    }

    #[test]
    fn set_items_of_every_kind_are_compared_whole() {
        let any = json!({});
        let schema = json!({"properties": {
            "strings": set_of(any.clone()), "integers": set_of(any.clone()),
            "booleans": set_of(any.clone()), "nil": set_of(any.clone()),
            "maps": set_of(any.clone()), "arrays": set_of(any.clone()),
            "multiple": set_of(any),
        }});
        let causes = run(
            schema,
            json!({
                "strings": ["a", "b", "a"], "integers": [1, 2, 1], "booleans": [false, true, true],
                "nil": ["a", null, null], "maps": [{"a": "b"}, {"a": "c"}, {"a": "b"}],
                "arrays": [[], ["a"], ["b"], ["a"]],
                "multiple": [{"a": "b"}, {"a": "c"}, {"a": "b"}, {"a": "c"}, {"a": "c"}],
            }),
        );
        let got: Vec<(&str, &str)> = causes
            .iter()
            .map(|(f, m)| (f.as_str(), m.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("arrays[3]", "Duplicate value: []interface {}{\"a\"}"),
                ("booleans[2]", "Duplicate value: true"),
                ("integers[2]", "Duplicate value: 1"),
                (
                    "maps[2]",
                    "Duplicate value: map[string]interface {}{\"a\":\"b\"}"
                ),
                (
                    "multiple[2]",
                    "Duplicate value: map[string]interface {}{\"a\":\"b\"}"
                ),
                (
                    "multiple[3]",
                    "Duplicate value: map[string]interface {}{\"a\":\"c\"}"
                ),
                ("nil[2]", "Duplicate value: null"),
                ("strings[2]", "Duplicate value: \"a\""),
            ]
        );
    }

    /// The map-list cases of `TestValidateListSetsAndMaps`, with the API server's messages.
    #[test]
    fn a_map_list_may_not_hold_two_items_with_the_same_keys() {
        let one = json!({"type": "array", "x-kubernetes-list-type": "map",
                         "x-kubernetes-list-map-keys": ["a"]});
        let two = json!({"type": "array", "x-kubernetes-list-type": "map",
                         "x-kubernetes-list-map-keys": ["a", "b"]});
        let schema = json!({"properties": {
            "one key": one.clone(), "two keys": two.clone(), "undefined key": two.clone(),
            "compound key": one.clone(), "nil item": one.clone(), "strings": one,
        }});
        let causes = run(
            schema,
            json!({
                "one key": [{"a": "0", "c": "2"}, {"a": "1", "c": "1"}, {"a": "1", "c": "2"}, {}],
                "two keys": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "b": "2", "c": "2"},
                             {"a": "1", "b": "2", "c": "3"}, {}],
                "undefined key": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "c": "2"},
                                  {"a": "1", "c": "3"}, {}],
                "compound key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                                 {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]}],
                "nil item": [null, {"a": "0", "c": "1"}, {"a": null}, {"c": "1"}],
                "strings": ["a"],
            }),
        );
        let got: Vec<(&str, &str)> = causes
            .iter()
            .map(|(f, m)| (f.as_str(), m.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "compound key[4]",
                    "Duplicate value: map[string]interface {}{\"a\":[]interface {}{\"a\", 42}}"
                ),
                ("nil item[3]", "Duplicate value: map[string]interface {}{}"),
                (
                    "one key[2]",
                    "Duplicate value: map[string]interface {}{\"a\":\"1\"}"
                ),
                (
                    "strings[0]",
                    "Invalid value: \"a\": must be an object for an array of list-type map"
                ),
                (
                    "two keys[2]",
                    "Duplicate value: map[string]interface {}{\"a\":\"1\", \"b\":\"2\"}"
                ),
                (
                    "undefined key[2]",
                    "Duplicate value: map[string]interface {}{\"a\":\"1\"}"
                ),
            ]
        );
    }
}
