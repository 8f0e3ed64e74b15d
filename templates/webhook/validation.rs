
// +kubebuilder:webhook:path={{ n.validation_path }},mutating=false,failurePolicy=fail,sideEffects=None,groups={{ n.marker_group }},resources={{ n.plural }},verbs=create;update,versions={{ n.version }},name=v{{ n.lower }}-{{ n.version }}.kb.io,admissionReviewVersions=v1

/// Path of the validating webhook; equal to the `path` of the marker above.
pub const VALIDATION_PATH: &str = "{{ n.validation_path }}";

/// The validating webhook's handler: decodes the AdmissionReview and calls
/// [`validate_create`], [`validate_update`] or [`validate_delete`] by operation.
pub async fn validate(body: Bytes) -> ReviewResponse {
    crate::webhook::validate(&body, &validator())
}

/// The validating functions of `{{ n.kind }}`, by operation.
pub fn validator() -> Validator<{{ n.kind }}> {
    Validator {
        create: validate_create,
        update: validate_update,
        delete: validate_delete,
    }
}

/// Checks the `{{ n.kind }}` object being created. `Ok(warnings)` admits it (kubectl prints the
/// warnings); `Err(Denied)` rejects it with the message.
pub fn validate_create({{ n.var }}: &{{ n.kind }}) -> Validation {
    validate_spec({{ n.var }})
}

/// Checks an update from `old` to `new`.
{%- if n.builtin || n.example_foo %}
pub fn validate_update(old: &{{ n.kind }}, new: &{{ n.kind }}) -> Validation {
    let mut warnings = validate_spec(new)?;
{%- endif %}
{%- if n.builtin %}
    let managed_by = |o: &{{ n.kind }}| {
        o.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app.kubernetes.io/managed-by").cloned())
    };
    if managed_by(old) != managed_by(new) {
        warnings.push(format!(
            "metadata.labels[app.kubernetes.io/managed-by] changed from {:?} to {:?}",
            managed_by(old),
            managed_by(new)
        ));
    }
    Ok(warnings)
{%- else if n.example_foo %}
    if old.spec.foo != new.spec.foo {
        warnings.push(format!(
            "spec.foo changed from {:?} to {:?}",
            old.spec.foo, new.spec.foo
        ));
    }
    Ok(warnings)
{%- else %}
pub fn validate_update(_old: &{{ n.kind }}, new: &{{ n.kind }}) -> Validation {
    // TODO: compare the old and the new object here (rename `_old` to `old`), for example
    // warn about a changed field:
    //
    //     let mut warnings = validate_spec(new)?;
    //     if old.spec.replicas != new.spec.replicas {
    //         warnings.push(format!("spec.replicas changed to {:?}", new.spec.replicas));
    //     }
    //     Ok(warnings)
    validate_spec(new)
{%- endif %}
}

/// Checks the `{{ n.kind }}` object being deleted. The API server calls the webhook for deletions only
/// when the marker's `verbs` include `delete` (`verbs=create;update;delete`).
pub fn validate_delete(_{{ n.var }}: &{{ n.kind }}) -> Validation {
    Ok(Vec::new())
}

/// Rules that hold on create and on update. Name the field and the rule in the message.
{%- if n.builtin %}
///
/// This example rejects an empty `app.kubernetes.io/managed-by` label.
pub fn validate_spec({{ n.var }}: &{{ n.kind }}) -> Validation {
    let labels = {{ n.var }}.metadata.labels.as_ref();
    let managed_by = labels.and_then(|l| l.get("app.kubernetes.io/managed-by"));
    if managed_by.is_some_and(String::is_empty) {
        return Err(Denied::new(
            "metadata.labels[app.kubernetes.io/managed-by]: must not be empty when set",
        ));
    }
    Ok(Vec::new())
}
{%- else if n.example_foo %}
///
/// This example rejects an empty `spec.foo`. With a `replicas: Option<i32>` field in the spec
/// (the AIJob of the tutorial), capping it at 100 is:
///
/// ```text
/// if let Some(replicas) = {{ n.var }}.spec.replicas
///     && replicas > 100
/// {
///     return Err(Denied::new(format!(
///         "spec.replicas: must be at most 100, got {replicas}"
///     )));
/// }
/// ```
pub fn validate_spec({{ n.var }}: &{{ n.kind }}) -> Validation {
    if {{ n.var }}.spec.foo.as_deref() == Some("") {
        return Err(Denied::new("spec.foo: must not be empty when set"));
    }
    Ok(Vec::new())
}
{%- else %}
///
/// It admits every object for now. With a `replicas: Option<i32>` field in the spec (the AIJob
/// of the tutorial), capping it at 100 is (`Denied` is `crate::webhook::Denied`):
///
/// ```text
/// if let Some(replicas) = {{ n.var }}.spec.replicas
///     && replicas > 100
/// {
///     return Err(Denied::new(format!(
///         "spec.replicas: must be at most 100, got {replicas}"
///     )));
/// }
/// ```
pub fn validate_spec(_{{ n.var }}: &{{ n.kind }}) -> Validation {
    // TODO: reject invalid specs here (rename the parameter to `{{ n.var }}`).
    Ok(Vec::new())
}
{%- endif %}
