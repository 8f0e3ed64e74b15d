//! The `{{ n.kind }}` controller: runs the operand image as a Deployment that each
//! `{{ n.kind }}` (`{{ n.api_version }}`) owns, with `spec.size` Pods under the restricted Pod
//! Security profile, and reports in the `Ready` condition whether they are available
//! (scaffolded by `rsbuilder create api --image`, as Kubebuilder's deploy-image plugin does).
//!
//! The image is the manager's `{{ d.env }}` environment variable (config/manager/manager.yaml),
//! so a new operand version is a change of the deployment, not of this code. The machinery
//! around `apply` is the runtime's ([`rsbuilder_runtime::controller`], tool-owned): the
//! finalizer, retries after 409 Conflict, backoff, events and metrics.

use std::sync::Arc;
use std::time::Duration;

// The Kubernetes types by their API group's module (as Go's appsv1 / corev1 / metav1), so no
// name here can clash with a kind of the project.
use k8s_openapi::api::apps::v1 as appsv1;
use k8s_openapi::api::core::v1 as corev1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kube::Resource as _;
use kube::ResourceExt;
use kube::runtime::controller::Action;
use rsbuilder_runtime::controller::{Context, Reconciler};

use {{ n.type_path }};

// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }},verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/status,verbs=get;update;patch
// +kubebuilder:rbac:groups={{ n.rbac_group }},resources={{ n.plural }}/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// How long to wait before reconciling an available operand again, even without a change.
const RESYNC: Duration = Duration::from_secs(5 * 60);
/// How soon to look again while the operand's Pods are starting.
const STARTING: Duration = Duration::from_secs(10);
/// The manager's environment variable that names the operand's image.
pub const IMAGE_ENV: &str = "{{ d.env }}";
/// The image when [`IMAGE_ENV`] is unset (`create api --image`).
pub const DEFAULT_IMAGE: &str = "{{ d.image }}";

/// Reconciles `{{ n.kind }}` objects.
pub struct {{ n.reconciler }};

impl Reconciler for {{ n.reconciler }} {
    type Kind = {{ n.kind }};
    const NAME: &'static str = "{{ n.controller_name }}";
    const FINALIZER: Option<&'static str> = Some("{{ n.finalizer }}");

    /// Applies the operand's Deployment (server-side, field manager `Self::NAME`), then sets
    /// `Ready` from its available replicas. An error is retried with backoff.
    async fn apply(&self, obj: Arc<{{ n.kind }}>, ctx: &Context) -> anyhow::Result<Action> {
        let image = std::env::var(IMAGE_ENV).unwrap_or_else(|_| DEFAULT_IMAGE.to_owned());
        let wanted = deployment(&obj, &image)?;
        let api = kube::Api::<appsv1::Deployment>::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default());
        let applied = api
            .patch(
                &obj.name_any(),
                &kube::api::PatchParams::apply(Self::NAME).force(),
                &kube::api::Patch::Apply(&wanted),
            )
            .await?;
        let available = applied
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        let ready = available >= obj.spec.size;
        let previous = obj
            .status
            .as_ref()
            .and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
        let message = format!("{available} of {} Pods available", obj.spec.size);
        let reason = if ready { "Available" } else { "Progressing" };
        ctx.set_ready(obj.as_ref(), previous, ready, reason, &message)
            .await?;
        Ok(Action::requeue(if ready { RESYNC } else { STARTING }))
    }

    /// Reconciles a `{{ n.kind }}` again when its Deployment changes (Kubebuilder's `Owns()`).
    fn watches(
        &self,
        controller: kube::runtime::Controller<{{ n.kind }}>,
        mgr: &rsbuilder_runtime::Manager,
    ) -> kube::runtime::Controller<{{ n.kind }}> {
        controller.owns(mgr.api::<appsv1::Deployment>(), Default::default())
    }
}

/// The Deployment that runs `image` for `obj`: named and labelled after it, owned by it (so
/// it is deleted with it), `spec.size` replicas, non-root with no privilege escalation, all
/// capabilities dropped and the runtime's default seccomp profile (the restricted Pod Security
/// profile). Errors: `obj` has no uid yet (it was never stored).
pub fn deployment(obj: &{{ n.kind }}, image: &str) -> anyhow::Result<appsv1::Deployment> {
    let owner = obj
        .controller_owner_ref(&())
        .ok_or_else(|| anyhow::anyhow!("{{ n.kind }} {} has no uid", obj.name_any()))?;
    let labels = std::collections::BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "{{ n.module }}".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), obj.name_any()),
        ("app.kubernetes.io/managed-by".to_owned(), "{{ n.controller_name }}".to_owned()),
    ]);
    let container = corev1::Container {
        name: "{{ n.module }}".into(),
        image: Some(image.to_owned()),
        image_pull_policy: Some("IfNotPresent".into()),
{%- if !d.command.is_empty() %}
        command: Some(vec![{{ d.command }}]),
{%- endif %}
{%- if d.port.is_some() %}
        ports: Some(vec![corev1::ContainerPort {
            container_port: obj.spec.container_port,
            ..Default::default()
        }]),
{%- endif %}
        security_context: Some(corev1::SecurityContext {
            run_as_non_root: Some(true),
{%- if let Some(uid) = d.run_as_user %}
            run_as_user: Some({{ uid }}),
{%- endif %}
            allow_privilege_escalation: Some(false),
            capabilities: Some(corev1::Capabilities {
                drop: Some(vec!["ALL".into()]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    Ok(appsv1::Deployment {
        metadata: metav1::ObjectMeta {
            name: Some(obj.name_any()),
            namespace: obj.namespace(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: appsv1::DeploymentSpec {
            replicas: Some(obj.spec.size),
            selector: metav1::LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: corev1::PodTemplateSpec {
                metadata: Some(metav1::ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(corev1::PodSpec {
                    containers: vec![container],
                    security_context: Some(corev1::PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(corev1::SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(size: i32) -> {{ n.kind }} {
        let mut obj = {{ n.kind }}::new(
            "sample",
            {{ n.type_path }}Spec {
                size,
{%- if d.port.is_some() %}
                ..Default::default()
{%- endif %}
            },
        );
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("0b1c".into());
        obj
    }

    #[test]
    fn the_deployment_is_owned_sized_and_locked_down() {
        let d = deployment(&stored(2), DEFAULT_IMAGE).unwrap();
        assert_eq!(d.metadata.owner_references.unwrap()[0].uid, "0b1c");
        let spec = d.spec;
        assert_eq!(spec.replicas, Some(2));
        let pod = spec.template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some(DEFAULT_IMAGE));
        let sc = c.security_context.as_ref().unwrap();
        assert_eq!(sc.allow_privilege_escalation, Some(false));
        assert_eq!(sc.run_as_non_root, Some(true));
        let seccomp = pod.security_context.unwrap().seccomp_profile.unwrap();
        assert_eq!(seccomp.type_, "RuntimeDefault");
    }

    #[test]
    fn an_object_never_stored_is_an_error() {
        let mut obj = stored(1);
        obj.metadata.uid = None;
        assert!(deployment(&obj, DEFAULT_IMAGE).is_err());
    }
}
