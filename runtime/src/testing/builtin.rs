// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The built-in kinds the test cluster serves beside the project's CRDs: the ones operators
//! create, own and watch (Pods, Services, ConfigMaps, Secrets, Deployments, StatefulSets,
//! Jobs, Leases, Events, ...).
//!
//! Schema: none is served for them. Instead every write is decoded into the k8s-openapi type
//! and encoded again, as kube-apiserver decodes a body into its Go type: a field of the wrong
//! type is refused, an unknown field is dropped, and what is stored is what the typed client
//! reads back. (A schema from `schemars::schema_for!` of the k8s-openapi types would be a
//! second, hand-made copy of the same rules, and differs from the Go types' decoding at the
//! edges: int-or-string, quantities, byte strings.) What is not checked: the Go types'
//! validation functions (a Pod without containers is accepted; docs/testing.md).

use k8s_openapi::api::{apps, batch, coordination, core, events, networking, policy, rbac};
use serde_json::Value;

use crate::apiserver::kind::{ApiKind, ScalePaths};

/// Decodes a body into a built-in kind's k8s-openapi type and encodes it again. Errors:
/// serde's message (a field of the wrong type).
pub(crate) type Decode = fn(&Value) -> Result<Value, String>;

/// A built-in kind: how it is served, and how a body is decoded into its type.
pub(crate) struct Builtin {
    pub(crate) kind: ApiKind,
    /// Decodes a body into the k8s-openapi type and encodes it again.
    pub(crate) decode: Decode,
}

fn round_trip<K>(value: &Value) -> Result<Value, String>
where
    K: serde::Serialize + serde::de::DeserializeOwned,
{
    let typed: K = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// A Secret's decoding: as [`round_trip`], then `stringData` merged into `data` (base64, a
/// `stringData` key winning over the same `data` key) and dropped, and an empty `type`
/// defaulted to `Opaque`, as kube-apiserver's v1 conversion (`Convert_v1_Secret_To_core_Secret`)
/// and defaulting (`SetDefaults_Secret`) do on every write: `stringData` is never stored nor
/// answered. Errors: as [`round_trip`].
fn secret(value: &Value) -> Result<Value, String> {
    use base64::Engine as _;
    let mut out = round_trip::<core::v1::Secret>(value)?;
    let Some(obj) = out.as_object_mut() else {
        return Ok(out);
    };
    if let Some(Value::Object(strings)) = obj.remove("stringData")
        && !strings.is_empty()
    {
        let data = obj
            .entry("data")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(data) = data.as_object_mut() {
            for (k, v) in strings {
                let text = v.as_str().unwrap_or_default();
                data.insert(
                    k,
                    Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    if obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        obj.insert("type".into(), Value::String("Opaque".into()));
    }
    Ok(out)
}

/// How a built-in kind is served besides its names.
struct Shape {
    namespaced: bool,
    status: bool,
    scale: bool,
    short_names: &'static [&'static str],
    all: bool,
}

const fn shape(namespaced: bool, status: bool) -> Shape {
    Shape {
        namespaced,
        status,
        scale: false,
        short_names: &[],
        all: false,
    }
}

fn builtin<K>(shape: Shape) -> Builtin
where
    K: k8s_openapi::Resource + serde::Serialize + serde::de::DeserializeOwned,
{
    let scale = shape.scale.then(|| ScalePaths {
        spec_replicas: ".spec.replicas".into(),
        status_replicas: ".status.replicas".into(),
        // The Scale's `status.selector` of these kinds is `spec.selector` printed as a label
        // selector string, which no path of the object holds; it is left out (docs/testing.md).
        label_selector: None,
    });
    let kind = ApiKind {
        group: K::GROUP.to_string(),
        version: K::VERSION.to_string(),
        kind: K::KIND.to_string(),
        list_kind: format!("{}List", K::KIND),
        plural: K::URL_PATH_SEGMENT.to_string(),
        singular: K::KIND.to_lowercase(),
        short_names: shape.short_names.iter().map(|s| s.to_string()).collect(),
        categories: if shape.all { vec!["all".into()] } else { vec![] },
        namespaced: shape.namespaced,
        columns: vec![k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition {
            name: "Age".into(),
            type_: "date".into(),
            json_path: ".metadata.creationTimestamp".into(),
            description: Some(crate::apiserver::kind::CREATION_TIMESTAMP_DOC.into()),
            ..Default::default()
        }],
        status_subresource: shape.status,
        scale,
        schema: None,
        merge_facts: super::builtin_merge::facts(&api_version(K::GROUP, K::VERSION), K::KIND),
        admission: None,
    };
    Builtin {
        kind,
        decode: round_trip::<K>,
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// Every built-in kind the test cluster serves, core group first.
pub(crate) fn all() -> Vec<Builtin> {
    let namespaced = |status| shape(true, status);
    vec![
        builtin::<core::v1::Pod>(Shape {
            short_names: &["po"],
            all: true,
            ..namespaced(true)
        }),
        builtin::<core::v1::Service>(Shape {
            short_names: &["svc"],
            all: true,
            ..namespaced(true)
        }),
        builtin::<core::v1::ConfigMap>(Shape {
            short_names: &["cm"],
            ..namespaced(false)
        }),
        Builtin {
            decode: secret,
            ..builtin::<core::v1::Secret>(namespaced(false))
        },
        builtin::<core::v1::ServiceAccount>(Shape {
            short_names: &["sa"],
            ..namespaced(false)
        }),
        builtin::<core::v1::Event>(Shape {
            short_names: &["ev"],
            ..namespaced(false)
        }),
        builtin::<core::v1::Endpoints>(Shape {
            short_names: &["ep"],
            ..namespaced(false)
        }),
        builtin::<core::v1::PersistentVolumeClaim>(Shape {
            short_names: &["pvc"],
            ..namespaced(true)
        }),
        builtin::<core::v1::Namespace>(Shape {
            short_names: &["ns"],
            ..shape(false, true)
        }),
        builtin::<core::v1::Node>(Shape {
            short_names: &["no"],
            ..shape(false, true)
        }),
        builtin::<apps::v1::Deployment>(Shape {
            short_names: &["deploy"],
            all: true,
            scale: true,
            ..namespaced(true)
        }),
        builtin::<apps::v1::StatefulSet>(Shape {
            short_names: &["sts"],
            all: true,
            scale: true,
            ..namespaced(true)
        }),
        builtin::<apps::v1::ReplicaSet>(Shape {
            short_names: &["rs"],
            all: true,
            scale: true,
            ..namespaced(true)
        }),
        builtin::<apps::v1::DaemonSet>(Shape {
            short_names: &["ds"],
            all: true,
            ..namespaced(true)
        }),
        builtin::<batch::v1::Job>(Shape {
            all: true,
            ..namespaced(true)
        }),
        builtin::<batch::v1::CronJob>(Shape {
            short_names: &["cj"],
            all: true,
            ..namespaced(true)
        }),
        builtin::<coordination::v1::Lease>(namespaced(false)),
        builtin::<events::v1::Event>(Shape {
            short_names: &["ev"],
            ..namespaced(false)
        }),
        builtin::<networking::v1::Ingress>(Shape {
            short_names: &["ing"],
            ..namespaced(true)
        }),
        builtin::<networking::v1::NetworkPolicy>(Shape {
            short_names: &["netpol"],
            ..namespaced(false)
        }),
        builtin::<policy::v1::PodDisruptionBudget>(Shape {
            short_names: &["pdb"],
            ..namespaced(true)
        }),
        builtin::<rbac::v1::Role>(namespaced(false)),
        builtin::<rbac::v1::RoleBinding>(namespaced(false)),
        builtin::<rbac::v1::ClusterRole>(shape(false, false)),
        builtin::<rbac::v1::ClusterRoleBinding>(shape(false, false)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_core_group_and_the_api_groups_carry_their_real_resource_names() {
        let kinds: Vec<(String, String, String, bool)> = all()
            .into_iter()
            .map(|b| {
                (
                    b.kind.api_version(),
                    b.kind.plural,
                    b.kind.kind,
                    b.kind.namespaced,
                )
            })
            .collect();
        assert!(kinds.contains(&("v1".into(), "pods".into(), "Pod".into(), true)));
        assert!(kinds.contains(&("v1".into(), "endpoints".into(), "Endpoints".into(), true)));
        assert!(kinds.contains(&("v1".into(), "namespaces".into(), "Namespace".into(), false)));
        assert!(kinds.contains(&(
            "apps/v1".into(),
            "statefulsets".into(),
            "StatefulSet".into(),
            true
        )));
        assert!(kinds.contains(&(
            "coordination.k8s.io/v1".into(),
            "leases".into(),
            "Lease".into(),
            true
        )));
        assert!(kinds.contains(&(
            "events.k8s.io/v1".into(),
            "events".into(),
            "Event".into(),
            true
        )));
    }

    #[test]
    fn decoding_drops_unknown_fields_and_refuses_wrong_types() {
        let cm = all()
            .into_iter()
            .find(|b| b.kind.plural == "configmaps")
            .unwrap();
        let out = (cm.decode)(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"k": "v"}, "colour": "blue"}))
        .unwrap();
        assert_eq!(
            out,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}})
        );
        let err = (cm.decode)(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"k": 1}}))
        .unwrap_err();
        assert!(
            err.contains("invalid type: integer `1`, expected a string"),
            "{err}"
        );
    }
}
