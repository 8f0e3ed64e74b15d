// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Apply conflicts: fields an apply would change that another field manager owns, as
//! structured-merge-diff reports them, with paths printed as `.spec.ports[port=80].name`.

use serde_json::Value;

use super::fieldset::FieldSet;

/// One field owned by another manager that an apply would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The manager owning the field.
    pub manager: String,
    /// The field, printed as kube prints it (`.spec.replicas`).
    pub field: String,
}

/// The conflicts of an apply: each path of `changed` (the fields the applied configuration sets to
/// a value other than the live one) that a manager of `others` (name, owned fields) owns.
pub fn conflicts(changed: &FieldSet, others: &[(String, FieldSet)]) -> Vec<Conflict> {
    let mut out = Vec::new();
    for (manager, owned) in others {
        for path in changed.intersection(owned).paths() {
            out.push(Conflict {
                manager: manager.clone(),
                field: print_path(&path),
            });
        }
    }
    out
}

/// A path of encoded elements printed as kube prints a field: `.name` for `f:`, `[k=v,..]` for
/// `k:` (string values quoted: `[name="web"]`), `[=value]` for `v:`, `[index]` for `i:`.
pub fn print_path(path: &[String]) -> String {
    let mut out = String::new();
    for element in path {
        if let Some(name) = element.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(json) = element.strip_prefix("k:") {
            let keys: Vec<String> = match serde_json::from_str::<Value>(json) {
                Ok(Value::Object(map)) => map
                    .iter()
                    .map(|(k, v)| format!("{k}={}", scalar(v)))
                    .collect(),
                _ => vec![json.to_owned()],
            };
            out.push_str(&format!("[{}]", keys.join(",")));
        } else if let Some(json) = element.strip_prefix("v:") {
            out.push_str(&format!("[={json}]"));
        } else if let Some(index) = element.strip_prefix("i:") {
            out.push_str(&format!("[{index}]"));
        }
    }
    out
}

/// A key value as structured-merge-diff's `value.ToString` prints it: strings quoted.
fn scalar(value: &Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn conflicts_are_changed_fields_another_manager_owns() {
        let changed = FieldSet::from_fields_v1(&json!({"f:spec": {
            "f:replicas": {}, "f:ports": {"k:{\"port\":80}": {"f:name": {}}}}}))
        .unwrap();
        let named = FieldSet::from_fields_v1(&json!({"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {"f:image": {}}}}}))
        .unwrap();
        assert_eq!(
            named
                .paths()
                .iter()
                .map(|p| print_path(p))
                .collect::<Vec<_>>(),
            vec![r#".spec.containers[name="web"].image"#]
        );
        let owner = FieldSet::from_fields_v1(&json!({"f:spec": {
            "f:replicas": {}, "f:paused": {}, "f:ports": {"k:{\"port\":80}": {"f:name": {}}}}}))
        .unwrap();
        let found = conflicts(&changed, &[("kubectl".to_owned(), owner)]);
        let fields: Vec<&str> = found.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, vec![".spec.ports[port=80].name", ".spec.replicas"]);
        assert!(found.iter().all(|c| c.manager == "kubectl"));
        let unrelated = FieldSet::from_fields_v1(&json!({"f:spec": {"f:paused": {}}})).unwrap();
        assert!(conflicts(&changed, &[("other".to_owned(), unrelated)]).is_empty());
    }
}
