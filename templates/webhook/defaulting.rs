
// +kubebuilder:webhook:path={{ n.defaulting_path }},mutating=true,failurePolicy=fail,sideEffects=None,groups={{ n.marker_group }},resources={{ n.plural }},verbs=create;update,versions={{ n.version }},name=m{{ n.lower }}-{{ n.version }}.kb.io,admissionReviewVersions=v1

/// Path of the defaulting webhook; equal to the `path` of the marker above.
pub const DEFAULTING_PATH: &str = "{{ n.defaulting_path }}";

/// The defaulting webhook's handler: decodes the AdmissionReview, calls [`default`] and
/// answers with the JSON patch of what it changed.
pub async fn mutate(body: Bytes) -> ReviewResponse {
    crate::webhook::mutate::<{{ n.kind }}>(&body, default)
}

/// Sets default values on the `{{ n.kind }}` object that is being created or updated. Fill in
/// only what is absent: the API server calls this again on every update.
{%- if n.builtin %}
///
/// This example sets the `app.kubernetes.io/managed-by` label when the object has none.
pub fn default({{ n.var }}: &mut {{ n.kind }}) {
    let labels = {{ n.var }}.metadata.labels.get_or_insert_with(Default::default);
    labels
        .entry("app.kubernetes.io/managed-by".to_string())
        .or_insert_with(|| "{{ n.project_name }}".to_string());
}
{%- else if n.example_foo %}
///
/// This example fills in `spec.foo`. With a `replicas: Option<i32>` field in the spec (the
/// AIJob of the tutorial), defaulting it to one replica is:
///
/// ```text
/// if {{ n.var }}.spec.replicas.is_none() {
///     {{ n.var }}.spec.replicas = Some(1);
/// }
/// ```
pub fn default({{ n.var }}: &mut {{ n.kind }}) {
    if {{ n.var }}.spec.foo.is_none() {
        {{ n.var }}.spec.foo = Some("default".to_string());
    }
}
{%- else %}
///
/// It sets nothing for now. With a `replicas: Option<i32>` field in the spec (the AIJob of the
/// tutorial), defaulting it to one replica is:
///
/// ```text
/// if {{ n.var }}.spec.replicas.is_none() {
///     {{ n.var }}.spec.replicas = Some(1);
/// }
/// ```
pub fn default(_{{ n.var }}: &mut {{ n.kind }}) {
    // TODO: set the defaults of absent fields here (rename the parameter to `{{ n.var }}`).
}
{%- endif %}
