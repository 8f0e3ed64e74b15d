//! The built-in Kubernetes resources that k8s-openapi (feature `v1_37`) knows, for controllers of
//! existing types (`create api --resource=false`).
//!
//! Every fact here (group, version, kind, plural, scope) is read from k8s-openapi's own
//! `Resource` implementations, so nothing is guessed: `Endpoints` stays `endpoints`, `Ingress`
//! becomes `ingresses`. The list of types was produced from the `ListableResource`
//! implementations of k8s-openapi 0.29 (`v1_37`).

use k8s_openapi::Resource;

/// One built-in resource: its API group (`""` for core), version, kind, plural (the URL path
/// segment), whether it is namespaced, and the Rust path of its k8s-openapi type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinResource {
    /// API group as the API server names it: `""` for core, `apps`, `networking.k8s.io`, ...
    pub group: &'static str,
    /// API version within the group (`v1`, `v2`, `v1beta1`).
    pub version: &'static str,
    /// Kind (`Pod`).
    pub kind: &'static str,
    /// Plural resource name (`pods`).
    pub plural: &'static str,
    /// `true` for namespaced resources, `false` for cluster-scoped ones.
    pub namespaced: bool,
    /// Path of the type in k8s-openapi (`k8s_openapi::api::core::v1::Pod`).
    pub rust_path: &'static str,
}

fn is_namespaced<T: Resource>() -> bool {
    std::any::type_name::<T::Scope>()
        == std::any::type_name::<k8s_openapi::NamespaceResourceScope>()
}

macro_rules! builtins {
    ($($($seg:ident)::+),* $(,)?) => {
        /// Every built-in resource rsbuilder can write a controller for.
        pub fn all() -> Vec<BuiltinResource> {
            vec![$(
                BuiltinResource {
                    group: <k8s_openapi::$($seg)::+ as Resource>::GROUP,
                    version: <k8s_openapi::$($seg)::+ as Resource>::VERSION,
                    kind: <k8s_openapi::$($seg)::+ as Resource>::KIND,
                    plural: <k8s_openapi::$($seg)::+ as Resource>::URL_PATH_SEGMENT,
                    namespaced: is_namespaced::<k8s_openapi::$($seg)::+>(),
                    rust_path: concat!("k8s_openapi", $("::", stringify!($seg)),+),
                },
            )*]
        }
    };
}

builtins!(
    api::admissionregistration::v1::MutatingAdmissionPolicy,
    api::admissionregistration::v1::MutatingAdmissionPolicyBinding,
    api::admissionregistration::v1::MutatingWebhookConfiguration,
    api::admissionregistration::v1::ValidatingAdmissionPolicy,
    api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    api::admissionregistration::v1::ValidatingWebhookConfiguration,
    api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
    api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
    api::admissionregistration::v1beta1::MutatingAdmissionPolicy,
    api::admissionregistration::v1beta1::MutatingAdmissionPolicyBinding,
    api::apiserverinternal::v1alpha1::StorageVersion,
    api::apps::v1::ControllerRevision,
    api::apps::v1::DaemonSet,
    api::apps::v1::Deployment,
    api::apps::v1::ReplicaSet,
    api::apps::v1::StatefulSet,
    api::autoscaling::v1::HorizontalPodAutoscaler,
    api::autoscaling::v2::HorizontalPodAutoscaler,
    api::batch::v1::CronJob,
    api::batch::v1::Job,
    api::certificates::v1::CertificateSigningRequest,
    api::certificates::v1::ClusterTrustBundle,
    api::certificates::v1::PodCertificateRequest,
    api::certificates::v1beta1::ClusterTrustBundle,
    api::certificates::v1beta1::PodCertificateRequest,
    api::coordination::v1::Lease,
    api::coordination::v1alpha2::LeaseCandidate,
    api::coordination::v1beta1::LeaseCandidate,
    api::core::v1::ComponentStatus,
    api::core::v1::ConfigMap,
    api::core::v1::Endpoints,
    api::core::v1::Event,
    api::core::v1::LimitRange,
    api::core::v1::Namespace,
    api::core::v1::Node,
    api::core::v1::PersistentVolume,
    api::core::v1::PersistentVolumeClaim,
    api::core::v1::Pod,
    api::core::v1::PodTemplate,
    api::core::v1::ReplicationController,
    api::core::v1::ResourceQuota,
    api::core::v1::Secret,
    api::core::v1::Service,
    api::core::v1::ServiceAccount,
    api::discovery::v1::EndpointSlice,
    api::events::v1::Event,
    api::flowcontrol::v1::FlowSchema,
    api::flowcontrol::v1::PriorityLevelConfiguration,
    api::lifecycle::v1alpha1::Eviction,
    api::lifecycle::v1alpha1::EvictionRequest,
    api::networking::v1::Ingress,
    api::networking::v1::IngressClass,
    api::networking::v1::IPAddress,
    api::networking::v1::NetworkPolicy,
    api::networking::v1::ServiceCIDR,
    api::node::v1::RuntimeClass,
    api::policy::v1::PodDisruptionBudget,
    api::rbac::v1::ClusterRole,
    api::rbac::v1::ClusterRoleBinding,
    api::rbac::v1::Role,
    api::rbac::v1::RoleBinding,
    api::resource::v1::DeviceClass,
    api::resource::v1::DeviceTaintRule,
    api::resource::v1::ResourceClaim,
    api::resource::v1::ResourceClaimTemplate,
    api::resource::v1::ResourceSlice,
    api::resource::v1alpha3::DeviceTaintRule,
    api::resource::v1alpha3::ResourcePoolStatusRequest,
    api::resource::v1beta1::DeviceClass,
    api::resource::v1beta1::ResourceClaim,
    api::resource::v1beta1::ResourceClaimTemplate,
    api::resource::v1beta1::ResourceSlice,
    api::resource::v1beta2::DeviceClass,
    api::resource::v1beta2::DeviceTaintRule,
    api::resource::v1beta2::ResourceClaim,
    api::resource::v1beta2::ResourceClaimTemplate,
    api::resource::v1beta2::ResourceSlice,
    api::scheduling::v1::PriorityClass,
    api::scheduling::v1alpha3::CompositePodGroup,
    api::scheduling::v1alpha3::PodGroup,
    api::scheduling::v1alpha3::Workload,
    api::scheduling::v1beta1::PodGroup,
    api::scheduling::v1beta1::Workload,
    api::storage::v1::CSIDriver,
    api::storage::v1::CSINode,
    api::storage::v1::CSIStorageCapacity,
    api::storage::v1::StorageClass,
    api::storage::v1::VolumeAttachment,
    api::storage::v1::VolumeAttributesClass,
    api::storagemigration::v1::StorageVersionMigration,
    api::storagemigration::v1beta1::StorageVersionMigration,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    kube_aggregator::pkg::apis::apiregistration::v1::APIService,
);

/// Finds the built-in resource for an API group as the API server names it (`""` for core),
/// a version and a kind. Returns `None` when k8s-openapi has no such type.
pub fn find(group: &str, version: &str, kind: &str) -> Option<BuiltinResource> {
    all()
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_pod() {
        let pod = find("", "v1", "Pod").expect("pod");
        assert_eq!(pod.plural, "pods");
        assert!(pod.namespaced);
        assert_eq!(pod.rust_path, "k8s_openapi::api::core::v1::Pod");
    }

    #[test]
    fn irregular_plurals_come_from_k8s_openapi() {
        assert_eq!(find("", "v1", "Endpoints").unwrap().plural, "endpoints");
        assert_eq!(
            find("networking.k8s.io", "v1", "Ingress").unwrap().plural,
            "ingresses"
        );
        assert!(!find("", "v1", "Namespace").unwrap().namespaced);
        assert_eq!(
            find("apps", "v1", "Deployment").unwrap().plural,
            "deployments"
        );
    }
}
