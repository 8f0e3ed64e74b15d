// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The merge facts of the built-in kinds ([`crate::apiserver::kind::ApiKind::merge_facts`]):
//! per field, the list type and map keys server-side apply merges by, and the strategic merge
//! patch strategy and merge key, as Kubernetes' OpenAPI declares them.
//!
//! `builtin_merge.json` (JSON after two `#` header lines) is written by `scripts/builtin-merge-facts.py` from the Kubernetes 1.37
//! JSON schemas that kubernetes-validate installs (its header says how to regenerate it); the
//! definitions it shares through `{"$ref": name}` are expanded here, once per kind.

use std::sync::LazyLock;

use serde_json::{Map, Value};

const FACTS: &str = include_str!("builtin_merge.json");

/// The facts: the JSON document after the file's `#` header lines (the tool-owned line every
/// runtime file opens with, and where the data comes from). The file is compiled in and
/// checked by the tests below, so a parse failure is a bug of this crate, not an input error.
static PARSED: LazyLock<Value> = LazyLock::new(|| {
    let json: String = FACTS
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).expect("builtin_merge.json holds JSON after its header lines")
});

/// The merge facts of the kind `kind` at `api_version` (`apps/v1`, `Deployment`), definitions
/// expanded; `None` for a kind the file does not hold (a test checks every built-in has one).
pub(crate) fn facts(api_version: &str, kind: &str) -> Option<Value> {
    let name = PARSED
        .get("kinds")?
        .get(format!("{api_version}/{kind}"))?
        .as_str()?;
    let definitions = PARSED.get("definitions")?.as_object()?;
    expand(&serde_json::json!({"$ref": name}), definitions, 0)
}

/// `node` with every `$ref` replaced by its definition (the node's own keys win). `None` on a
/// reference to a missing definition or one nested deeper than 64 (a cycle).
fn expand(node: &Value, definitions: &Map<String, Value>, depth: usize) -> Option<Value> {
    if depth > 64 {
        return None;
    }
    let Value::Object(fields) = node else {
        return Some(node.clone());
    };
    let mut out = match fields.get("$ref").and_then(Value::as_str) {
        Some(name) => match expand(definitions.get(name)?, definitions, depth + 1)? {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        None => Map::new(),
    };
    for (key, value) in fields {
        match key.as_str() {
            "$ref" => {}
            "properties" => {
                let mut props = Map::new();
                for (field, sub) in value.as_object()? {
                    props.insert(field.clone(), expand(sub, definitions, depth + 1)?);
                }
                out.insert(key.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), expand(value, definitions, depth + 1)?);
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_kind_has_its_merge_facts() {
        for b in super::super::builtin::all() {
            assert!(
                b.kind.merge_facts.is_some(),
                "{}/{} has no merge facts in builtin_merge.json",
                b.kind.api_version(),
                b.kind.kind
            );
        }
    }

    #[test]
    fn a_deployment_merges_containers_and_env_by_name_and_retains_strategy_keys() {
        let d = facts("apps/v1", "Deployment").unwrap();
        let spec = &d["properties"]["spec"];
        let pod = &spec["properties"]["template"]["properties"]["spec"];
        let containers = &pod["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(
            containers["x-kubernetes-list-map-keys"],
            serde_json::json!(["name"])
        );
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        let env = &containers["items"]["properties"]["env"];
        assert_eq!(env["x-kubernetes-patch-merge-key"], "name");
        let ports = &containers["items"]["properties"]["ports"];
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            serde_json::json!(["containerPort", "protocol"])
        );
        assert_eq!(ports["items"]["properties"]["protocol"]["default"], "TCP");
        assert_eq!(
            spec["properties"]["strategy"]["x-kubernetes-patch-strategy"],
            "retainKeys"
        );
        assert_eq!(
            spec["properties"]["selector"]["x-kubernetes-map-type"],
            "atomic"
        );
        assert_eq!(facts("example.com/v1", "Database"), None);
    }

    /// The committed file is what the script writes from the installed schemas. Skips with a
    /// message when python3 or kubernetes-validate is missing, and fails then under `CI=true`,
    /// where `.ci/run` installs kubernetes-validate.
    #[test]
    fn the_committed_facts_are_what_the_script_writes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::process::Command::new("python3")
            .arg(root.join("scripts/builtin-merge-facts.py"))
            .output();
        let missing = |what: &str| {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{what} (CI must run this test)");
            }
            eprintln!("skipped: {what}");
        };
        match out {
            Err(e) => missing(&format!("python3 does not run: {e}")),
            Ok(o) if o.status.code() == Some(3) => {
                missing(String::from_utf8_lossy(&o.stderr).trim())
            }
            Ok(o) => {
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                assert!(
                    String::from_utf8_lossy(&o.stdout) == FACTS,
                    "runtime/src/testing/builtin_merge.json is stale: run python3 scripts/builtin-merge-facts.py > runtime/src/testing/builtin_merge.json"
                );
            }
        }
    }
}
