//! The names the webhook templates use ([`Names`]): paths, marker values, the kind's Rust
//! type and variable, and the minimal `spec` the generated tests build objects from.

use super::options::WebhookOptions;
use super::spec_sample;
use crate::model::Resource;
use crate::model::layout::KindLayout;
use crate::model::project::{Project, ProjectResource};

/// The names the webhook templates use, computed once from the resource and PROJECT.
#[derive(Debug, Clone)]
pub struct Names {
    /// Kind (`AIJob`).
    pub kind: String,
    /// Lower-case kind (`aijob`): the webhook file stem and the marker name part.
    pub lower: String,
    /// Variable name for an object of the kind in generated code (`ai_job`).
    pub var: String,
    /// Path of the Rust type (`crate::api::v1::AIJob`, `k8s_openapi::api::core::v1::Pod`).
    pub type_path: String,
    /// `apiVersion` of objects (`ai.ai.example.com/v1`).
    pub api_version: String,
    /// API group as the API server spells it (`""` for core).
    pub api_group: String,
    /// `groups=` value of the webhook marker (`""` quoted for core).
    pub marker_group: String,
    /// Plural resource.
    pub plural: String,
    /// Version.
    pub version: String,
    /// Namespaced kind.
    pub namespaced: bool,
    /// A built-in Kubernetes type (no `spec.foo` example field).
    pub builtin: bool,
    /// The spec still has the example field `foo: Option<String>` that `create api`
    /// scaffolds: the webhook functions and tests demonstrate on it. Without it they are
    /// field-free (they change and reject nothing yet).
    pub example_foo: bool,
    /// The smallest `spec` that deserializes into the kind (the spec's required fields with
    /// empty values, see [`spec_sample::minimal_value`]), `{}` for a built-in type.
    pub spec: serde_json::Value,
    /// Path of the defaulting webhook.
    pub defaulting_path: String,
    /// Path of the validating webhook.
    pub validation_path: String,
    /// Project name.
    pub project_name: String,
    /// Rust crate name of the generated project (project name with `-` → `_`).
    pub crate_name: String,
}

impl Names {
    /// The minimal spec as a `json!` argument (`{"hostname": ""}`).
    pub fn spec_json(&self) -> String {
        spec_sample::json_macro_text(&self.spec)
    }

    /// The minimal spec with `"foo"` set to the string `value`, as a `json!` argument.
    pub fn spec_with_foo(&self, value: &str) -> String {
        self.spec_with_foo_expr(&serde_json::Value::String(value.to_string()).to_string())
    }

    /// The minimal spec with `"foo"` set to the Rust expression `expr`, as a `json!` argument.
    pub fn spec_with_foo_expr(&self, expr: &str) -> String {
        let mut fields: Vec<String> = self
            .spec
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "foo")
            .map(|(k, v)| {
                format!(
                    "{}: {}",
                    serde_json::Value::String(k.clone()),
                    spec_sample::json_macro_text(v)
                )
            })
            .collect();
        fields.push(format!("\"foo\": {expr}"));
        format!("{{{}}}", fields.join(", "))
    }
}

/// Computes the template names for a resource.
pub fn names(
    project: &Project,
    resource: &Resource,
    entry: Option<&ProjectResource>,
    opts: &WebhookOptions,
) -> Names {
    let suffix = resource.webhook_path_suffix();
    let mut var = resource.snake();
    if crate::model::reserved::KEYWORDS.contains(&var.as_str()) {
        var.push_str("_obj");
    }
    let type_path = match &resource.builtin {
        Some(b) => b.rust_path.to_string(),
        None => entry
            .and_then(|e| e.path.clone())
            .filter(|p| p.starts_with("crate::"))
            .unwrap_or_else(|| KindLayout::of(resource, project.multigroup).type_path()),
    };
    let api_group = resource.qualified_group();
    let marker_group = if api_group.is_empty() {
        "\"\"".to_string()
    } else {
        api_group.clone()
    };
    Names {
        kind: resource.kind.clone(),
        lower: resource.kind.to_lowercase(),
        var,
        type_path,
        api_version: resource.api_version(),
        api_group,
        marker_group,
        plural: resource.plural.clone(),
        version: resource.version.clone(),
        namespaced: resource.namespaced,
        builtin: resource.builtin.is_some(),
        example_foo: false,
        spec: serde_json::Value::Object(Default::default()),
        defaulting_path: opts
            .defaulting_path
            .clone()
            .unwrap_or_else(|| format!("/mutate-{suffix}")),
        validation_path: opts
            .validation_path
            .clone()
            .unwrap_or_else(|| format!("/validate-{suffix}")),
        project_name: project.project_name.clone(),
        crate_name: project.project_name.replace('-', "_"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kubebuilder() {
        let project = Project::new(
            "ai.example.com",
            "example.com/ai-operator",
            "ai-operator",
            false,
        );
        let r = Resource::custom("ai", "ai.example.com", "v1", "AIJob", None, true).unwrap();
        let n = names(&project, &r, None, &WebhookOptions::default());
        assert_eq!(n.defaulting_path, "/mutate-ai-ai-example-com-v1-aijob");
        assert_eq!(n.validation_path, "/validate-ai-ai-example-com-v1-aijob");
        assert_eq!(n.type_path, "crate::api::v1::AIJob");
        assert_eq!(n.marker_group, "ai.ai.example.com");
        assert_eq!(n.crate_name, "ai_operator");
        let pod = Resource::builtin("core", "v1", "Pod").unwrap().unwrap();
        let n = names(&project, &pod, None, &WebhookOptions::default());
        assert_eq!(n.marker_group, "\"\"");
        assert_eq!(n.type_path, "k8s_openapi::api::core::v1::Pod");
        let mut n = names(&project, &r, None, &WebhookOptions::default());
        assert_eq!(n.spec_json(), "{}");
        assert_eq!(n.spec_with_foo("mine"), r#"{"foo": "mine"}"#);
        n.spec = serde_json::json!({"hostname": "", "port": 0});
        assert_eq!(n.spec_json(), r#"{"hostname": "", "port": 0}"#);
        assert_eq!(
            n.spec_with_foo(""),
            r#"{"hostname": "", "port": 0, "foo": ""}"#
        );
        assert_eq!(
            n.spec_with_foo_expr("value"),
            r#"{"hostname": "", "port": 0, "foo": value}"#
        );
        let t = Resource::custom("ai", "ai.example.com", "v1", "Type", None, true).unwrap();
        assert_eq!(
            names(&project, &t, None, &WebhookOptions::default()).var,
            "type_obj"
        );
    }
}
