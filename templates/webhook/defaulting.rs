
// +kubebuilder:webhook:path={{ n.defaulting_path }},mutating=true,failurePolicy=fail,sideEffects=None,groups={{ n.marker_group }},resources={{ n.plural }},verbs=create;update,versions={{ n.version }},name=m{{ n.lower }}-{{ n.version }}.kb.io,admissionReviewVersions=v1

/// Path of the defaulting webhook; equal to the `path` of the marker above.
pub const DEFAULTING_PATH: &str = "{{ n.defaulting_path }}";

impl Defaulter<{{ n.kind }}> for {{ n.kind }}Webhook {
    /// Sets default values on the `{{ n.kind }}` being created or updated. Fill in only what
    /// is absent: the API server calls this again on every update. The answer patches only
    /// what changed here; an `Err` rejects the request.
{%- if !n.builtin %}
    /// A field with a serde default (which gives the CRD a `default:`) is never absent here:
    /// the API server fills the CRD's defaults before it calls this webhook, so that default
    /// wins (`rsbuilder manifests` warns about such fields).
{%- endif %}
{%- if n.builtin %}
    ///
    /// This example sets the `app.kubernetes.io/managed-by` label when the object has none.
    async fn default(&self, {{ n.var }}: &mut {{ n.kind }}) -> Result<(), Denied> {
        let labels = {{ n.var }}.metadata.labels.get_or_insert_with(Default::default);
        labels
            .entry("app.kubernetes.io/managed-by".to_string())
            .or_insert_with(|| "{{ n.project_name }}".to_string());
        Ok(())
    }
{%- else if n.example_foo %}
    ///
    /// This example fills in `spec.foo`. With a `replicas: Option<i32>` field (the tutorial's
    /// AIJob): `if {{ n.var }}.spec.replicas.is_none() { {{ n.var }}.spec.replicas = Some(1); }`.
    async fn default(&self, {{ n.var }}: &mut {{ n.kind }}) -> Result<(), Denied> {
        if {{ n.var }}.spec.foo.is_none() {
            {{ n.var }}.spec.foo = Some("default".to_string());
        }
        Ok(())
    }
{%- else %}
    ///
    /// It sets nothing for now. With a `replicas: Option<i32>` field (the tutorial's AIJob):
    /// `if {{ n.var }}.spec.replicas.is_none() { {{ n.var }}.spec.replicas = Some(1); }`.
    async fn default(&self, _{{ n.var }}: &mut {{ n.kind }}) -> Result<(), Denied> {
        // TODO(user): set the defaults of absent fields here (rename the parameter).
        Ok(())
    }
{%- endif %}
}
