//! `x-kubernetes-validations` (`#[x_kube(validation = ...)]`, `#[kube(validation = ...)]`):
//! the checks that need no CEL compiler. A rule is not blank; a message is not blank and has no
//! line breaks, and a rule with line breaks has one; a reason is one of the four the API server
//! knows; a field path is not blank, has no line breaks and names a field of the schema; a rule
//! that reads `oldSelf` is not inside a list whose items cannot be paired between the old and
//! the new object; `optionalOldSelf` only with `oldSelf`. Type errors and cost limits need the
//! compiler and are not judged.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use super::place::Ctx;
use super::{Sink, additional, is_true};

/// The reasons a rule may give.
const REASONS: [&str; 4] = [
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueDuplicate",
];

pub(super) fn node(s: &JSONSchemaProps, ctx: &Ctx, sink: &mut Sink<'_>) {
    let p = &ctx.path;
    for (i, r) in s.x_kubernetes_validations.iter().flatten().enumerate() {
        let rule = r.rule.trim();
        let message = r.message.as_deref().unwrap_or_default();
        let say = |what: String| format!("x-kubernetes-validations[{i}]: {what}");
        if rule.is_empty() {
            sink.schema(p, say("the rule is empty".into()));
        } else if !message.is_empty() && message.trim().is_empty() {
            sink.schema(p, say("the message must not be blank".into()));
        } else if message.trim().contains(['\n', '\r']) {
            sink.schema(p, say("the message must not contain line breaks".into()));
        } else if rule.contains(['\n', '\r']) && message.trim().is_empty() {
            sink.schema(p, say("a rule with line breaks needs a message".into()))
                .help("give the rule a message: Rule::new(\"...\").message(\"...\")");
        }
        if r.message_expression
            .as_deref()
            .is_some_and(|m| !m.is_empty() && m.trim().is_empty())
        {
            sink.schema(p, say("the messageExpression must not be blank".into()));
        }
        if let Some(reason) = &r.reason
            && !REASONS.contains(&reason.as_str())
        {
            sink.schema(
                p,
                say(format!(
                    "the reason {reason:?} is not one of {}",
                    REASONS.join(", ")
                )),
            );
        }
        if let Some(fp) = &r.field_path {
            if !fp.is_empty() && fp.trim().is_empty() {
                sink.schema(p, say("the fieldPath must not be blank".into()));
            } else if fp.contains(['\n', '\r']) {
                sink.schema(p, say("the fieldPath must not contain line breaks".into()));
            } else if let Some(missing) = missing_field(s, fp) {
                sink.schema(
                    p,
                    say(format!(
                        "the fieldPath {fp:?} names `{missing}`, which is not a field of the schema"
                    )),
                );
            }
        }
        let old_self = reads_old_self(rule);
        if old_self {
            if let Some(list) = &ctx.uncorrelatable {
                sink.schema(p, say(format!("the rule reads oldSelf, but the list {list} is not of type map, so its items cannot be paired between the old and the new object")))
                    .help("make the list a list of type map (#[x_kube(merge_strategy = ListMerge::Map(...))]), or move the rule above the list");
            }
        } else if r.optional_old_self.is_some() {
            sink.schema(
                p,
                say("optionalOldSelf may only be set when the rule reads oldSelf".into()),
            );
        }
    }
}

/// The first segment of a dotted field path (`.spec.name`, `.a['b-c']`) that `s` does not
/// specify; `None` when every segment is a field, or when the path has a shape this check does
/// not read (list indexes, escapes), which is left to the API server.
fn missing_field(s: &JSONSchemaProps, path: &str) -> Option<String> {
    let mut node = s;
    let mut rest = path.trim();
    while !rest.is_empty() {
        let (seg, tail) = if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (r[..end].to_string(), &r[end..])
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            let key = &r[..end];
            if key.contains('\\') {
                return None;
            }
            (key.to_string(), &r[end + 2..])
        } else {
            return None;
        };
        if seg.is_empty()
            || !seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '/'))
        {
            return None;
        }
        match node.properties.as_ref().and_then(|p| p.get(&seg)) {
            Some(next) => node = next,
            None => {
                if additional(node).is_some()
                    || node.additional_properties.is_some()
                    || is_true(node.x_kubernetes_preserve_unknown_fields)
                {
                    return None;
                }
                return Some(seg);
            }
        }
        rest = tail;
    }
    None
}

/// Whether the CEL expression `rule` names the variable `oldSelf` (outside string literals,
/// not as a field after `.`).
pub fn reads_old_self(rule: &str) -> bool {
    let b = rule.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            // A string literal, maybe triple-quoted or raw (r"..."), skipped whole.
            let triple = b[i..].starts_with(&[c, c, c]);
            let raw = i > 0 && matches!(b[i - 1], b'r' | b'R');
            let close: &[u8] = if triple { &b[i..i + 3] } else { &b[i..i + 1] };
            i += close.len();
            while i < b.len() && !b[i..].starts_with(close) {
                if b[i] == b'\\' && !raw {
                    i += 1;
                }
                i += 1;
            }
            i += close.len();
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let after_dot = rule[..start].trim_end().ends_with('.');
            if &rule[start..i] == "oldSelf" && !after_dot {
                return true;
            }
            continue;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::test_support::spec_violations;
    use super::reads_old_self;
    use serde_json::json;

    #[test]
    fn old_self_is_found_outside_strings() {
        assert!(reads_old_self("self == oldSelf"));
        assert!(reads_old_self("oldSelf.x < self.x"));
        assert!(!reads_old_self("self.name != 'oldSelf'"));
        assert!(!reads_old_self("self.oldSelf == 1"));
        assert!(!reads_old_self(r#"self.a == """oldSelf" """"#));
    }

    #[test]
    fn rules_messages_reasons_and_paths_are_checked() {
        let got = spec_violations(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "  "},
                {"rule": "self.a != ''\n&& true"},
                {"rule": "true", "message": "bad\nmessage"},
                {"rule": "true", "reason": "Nope"},
                {"rule": "true", "fieldPath": ".b"},
                {"rule": "true", "fieldPath": ".a"},
                {"rule": "true", "optionalOldSelf": true},
            ]}),
        );
        assert_eq!(
            got,
            [
                ".spec: x-kubernetes-validations[0]: the rule is empty",
                ".spec: x-kubernetes-validations[1]: a rule with line breaks needs a message",
                ".spec: x-kubernetes-validations[2]: the message must not contain line breaks",
                ".spec: x-kubernetes-validations[3]: the reason \"Nope\" is not one of FieldValueRequired, FieldValueForbidden, FieldValueInvalid, FieldValueDuplicate",
                ".spec: x-kubernetes-validations[4]: the fieldPath \".b\" names `b`, which is not a field of the schema",
                ".spec: x-kubernetes-validations[6]: optionalOldSelf may only be set when the rule reads oldSelf",
            ]
        );
    }

    #[test]
    fn old_self_needs_correlatable_items() {
        let list = |list_type: &str| {
            spec_violations(json!({"type": "object", "properties": {"items": {
                "type": "array", "x-kubernetes-list-type": list_type, "x-kubernetes-list-map-keys": if list_type == "map" { json!(["k"]) } else { json!(null) },
                "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}},
                          "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]},
            }}}))
        };
        assert!(list("map").is_empty(), "{:?}", list("map"));
        let got = list("atomic");
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].contains("the list .spec.items is not of type map"),
            "{got:?}"
        );
    }
}
