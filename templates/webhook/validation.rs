
// +kubebuilder:webhook:path={{ n.validation_path }},mutating=false,failurePolicy=fail,sideEffects=None,groups={{ n.marker_group }},resources={{ n.plural }},verbs=create;update,versions={{ n.version }},name=v{{ n.lower }}-{{ n.version }}.kb.io,admissionReviewVersions=v1

/// Path of the validating webhook; equal to the `path` of the marker above.
pub const VALIDATION_PATH: &str = "{{ n.validation_path }}";

/// `Ok(warnings)` admits the object (kubectl prints the warnings); `Err(Denied)` rejects it
/// with the message (403). Name the field and the rule in the message.
impl Validator<{{ n.kind }}> for {{ n.kind }}Webhook {
    async fn validate_create(&self, {{ n.var }}: &{{ n.kind }}) -> Validation {
        validate_spec({{ n.var }})
    }

{%- if n.builtin %}

    async fn validate_update(&self, old: &{{ n.kind }}, new: &{{ n.kind }}) -> Validation {
        let mut warnings = validate_spec(new)?;
        let managed_by = |o: &{{ n.kind }}| {
            let labels = o.metadata.labels.as_ref();
            labels.and_then(|l| l.get("app.kubernetes.io/managed-by").cloned())
        };
        if managed_by(old) != managed_by(new) {
            warnings.push("metadata.labels[app.kubernetes.io/managed-by] changed".to_string());
        }
        Ok(warnings)
    }
{%- else if n.example_foo %}

    async fn validate_update(&self, old: &{{ n.kind }}, new: &{{ n.kind }}) -> Validation {
        let mut warnings = validate_spec(new)?;
        if old.spec.foo != new.spec.foo {
            warnings.push(format!("spec.foo changed from {:?} to {:?}", old.spec.foo, new.spec.foo));
        }
        Ok(warnings)
    }
{%- else %}

    async fn validate_update(&self, _old: &{{ n.kind }}, new: &{{ n.kind }}) -> Validation {
        // TODO(user): compare `_old` with `new`, e.g. warn about a changed field.
        validate_spec(new)
    }
{%- endif %}

    /// Called only when the marker's `verbs` include `delete`.
    async fn validate_delete(&self, _{{ n.var }}: &{{ n.kind }}) -> Validation {
        Ok(Vec::new())
    }
}

/// Rules that hold on create and on update.
{%- if n.builtin %} This example rejects an empty
/// `app.kubernetes.io/managed-by` label.
fn validate_spec({{ n.var }}: &{{ n.kind }}) -> Validation {
    let labels = {{ n.var }}.metadata.labels.as_ref();
    if labels.and_then(|l| l.get("app.kubernetes.io/managed-by")).is_some_and(String::is_empty) {
        return Err(Denied::new("metadata.labels[app.kubernetes.io/managed-by]: must not be empty when set"));
    }
    Ok(Vec::new())
}
{%- else if n.example_foo %} This example rejects an empty `spec.foo`;
/// with a `replicas` field (the tutorial's AIJob), capping it is `if replicas > 100 { return
/// Err(Denied::new(format!("spec.replicas: must be at most 100, got {replicas}"))); }`.
fn validate_spec({{ n.var }}: &{{ n.kind }}) -> Validation {
    if {{ n.var }}.spec.foo.as_deref() == Some("") {
        return Err(Denied::new("spec.foo: must not be empty when set"));
    }
    Ok(Vec::new())
}
{%- else %} It admits every object for now; with a
/// `replicas` field (the tutorial's AIJob), capping it is `if replicas > 100 { return
/// Err(Denied::new(format!("spec.replicas: must be at most 100, got {replicas}"))); }`.
fn validate_spec(_{{ n.var }}: &{{ n.kind }}) -> Validation {
    // TODO(user): reject invalid specs here (rename the parameter).
    Ok(Vec::new())
}
{%- endif %}
