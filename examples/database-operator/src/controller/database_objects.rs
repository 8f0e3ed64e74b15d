// Copyright 2026 The rsbuilder authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The objects a `Database` owns, built from its spec without talking to the API server:
//! the Secret with the root password, the headless Service, the StatefulSet; and the phase
//! read back from the StatefulSet and its Pods.
//!
//! Everything here is a pure function, so the unit tests below pin each engine's image, port
//! and environment.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, Pod, PodSpec, PodTemplateSpec, Probe, Secret, SecretKeySelector,
    Service, ServicePort, ServiceSpec, TCPSocketAction, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Resource, ResourceExt};
use rand::distr::{Alphanumeric, SampleString};

use crate::api::v1::{Database, Engine, Phase};

/// Key of the generated password in the credentials Secret.
pub const PASSWORD_KEY: &str = "password";
/// Key of the engine's administrator user name in the credentials Secret.
pub const USERNAME_KEY: &str = "username";
/// Name of the data volume (and of the StatefulSet's volume claim template).
pub const DATA_VOLUME: &str = "data";
/// Length of a generated password: 32 letters and digits, about 190 bits.
pub const PASSWORD_LENGTH: usize = 32;
/// The `app.kubernetes.io/managed-by` value on everything this operator creates; the
/// controller watches only StatefulSets and Services carrying it.
pub const MANAGED_BY: &str = "database-operator";

/// What goes wrong while reading a `Database`.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The object has no `metadata.uid`, so nothing can name it as owner; the API server
    /// always sets it, so this is a `Database` built by hand.
    #[error("the Database has no uid; it was not read from the API server")]
    MissingUid,
}

/// The image repository of an engine's official image: `mysql`, `postgres`, `mongo`.
///
/// The Go operator this example is ported from builds the image as `<engine>:<version>`. That works
/// for MySQL only: there is no `postgresql` or `mongodb` official image.
pub fn image_repository(engine: Engine) -> &'static str {
    match engine {
        Engine::Mysql => "mysql",
        Engine::Postgresql => "postgres",
        Engine::Mongodb => "mongo",
    }
}

/// The container image of a database: the engine's official image tagged with `version`
/// (`mysql:8.0`, `postgres:16.4`, `mongo:7.0`).
pub fn image(engine: Engine, version: &str) -> String {
    format!("{}:{version}", image_repository(engine))
}

/// The port an engine listens on: 3306 (MySQL), 5432 (PostgreSQL), 27017 (MongoDB).
pub fn port(engine: Engine) -> i32 {
    match engine {
        Engine::Mysql => 3306,
        Engine::Postgresql => 5432,
        Engine::Mongodb => 27017,
    }
}

/// The name of the engine's port and container: the engine as written in the manifest.
pub fn port_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Mysql => "mysql",
        Engine::Postgresql => "postgresql",
        Engine::Mongodb => "mongodb",
    }
}

/// The administrator the engine's image creates with the generated password.
pub fn root_user(engine: Engine) -> &'static str {
    match engine {
        Engine::Mysql | Engine::Mongodb => "root",
        Engine::Postgresql => "postgres",
    }
}

/// Where the engine's image keeps its data: the mount path of the data volume.
pub fn data_dir(engine: Engine) -> &'static str {
    match engine {
        Engine::Mysql => "/var/lib/mysql",
        Engine::Postgresql => "/var/lib/postgresql/data",
        Engine::Mongodb => "/data/db",
    }
}

/// The environment that hands the engine's image its administrator credentials, every
/// value a `secretKeyRef` into `secret` (never the password itself):
/// `MYSQL_ROOT_PASSWORD`; `POSTGRES_PASSWORD` (plus `PGDATA` in a subdirectory of the
/// volume, which PostgreSQL needs to start on a fresh filesystem with `lost+found`);
/// `MONGO_INITDB_ROOT_USERNAME` and `MONGO_INITDB_ROOT_PASSWORD` (the image creates the
/// user only when both are set).
pub fn credential_env(engine: Engine, secret: &str) -> Vec<EnvVar> {
    let from_secret = |name: &str, key: &str| EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: key.into(),
                optional: Some(false),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    };
    match engine {
        Engine::Mysql => vec![from_secret("MYSQL_ROOT_PASSWORD", PASSWORD_KEY)],
        Engine::Postgresql => vec![
            from_secret("POSTGRES_PASSWORD", PASSWORD_KEY),
            EnvVar {
                name: "PGDATA".into(),
                value: Some(format!("{}/pgdata", data_dir(engine))),
                ..EnvVar::default()
            },
        ],
        Engine::Mongodb => vec![
            from_secret("MONGO_INITDB_ROOT_USERNAME", USERNAME_KEY),
            from_secret("MONGO_INITDB_ROOT_PASSWORD", PASSWORD_KEY),
        ],
    }
}

/// The name of a database's credentials Secret: `<database>-credentials`.
pub fn secret_name(db: &Database) -> String {
    format!("{}-credentials", db.name_any())
}

/// The name of the headless Service and of the StatefulSet: the database's own name, so pod
/// `<db>-0` is reachable as `<db>-0.<db>.<namespace>.svc`.
pub fn service_name(db: &Database) -> String {
    db.name_any()
}

/// The labels that select a database's pods (and the PVCs of its volume claim template).
pub fn selector_labels(db: &Database) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "database".to_string()),
        ("app.kubernetes.io/instance".to_string(), db.name_any()),
    ])
}

/// `selector_labels` as a label selector string for list calls.
pub fn label_selector(db: &Database) -> String {
    selector_labels(db)
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The labels on every object created for a database: the selector labels, the engine and
/// `app.kubernetes.io/managed-by`.
pub fn labels(db: &Database) -> BTreeMap<String, String> {
    let mut labels = selector_labels(db);
    labels.insert(
        "app.kubernetes.io/component".into(),
        port_name(db.spec.engine).into(),
    );
    labels.insert("app.kubernetes.io/managed-by".into(), MANAGED_BY.into());
    labels
}

/// The metadata of an object named `name` that `db` owns: same namespace, [`labels`], and
/// an owner reference with `controller: true` (so Kubernetes deletes it with the database and
/// the controller is woken when it changes).
///
/// Errors with [`ObjectError::MissingUid`] when `db` has no uid.
fn owned_metadata(db: &Database, name: String) -> Result<ObjectMeta, ObjectError> {
    let owner: OwnerReference = db
        .controller_owner_ref(&())
        .ok_or(ObjectError::MissingUid)?;
    Ok(ObjectMeta {
        name: Some(name),
        namespace: db.namespace(),
        labels: Some(labels(db)),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    })
}

/// A new random password: [`PASSWORD_LENGTH`] ASCII letters and digits from the thread-local
/// generator of `rand` (a ChaCha CSPRNG seeded by the operating system). Letters and digits
/// only, so it needs no quoting in a shell, a URL or a connection string.
pub fn generate_password() -> String {
    Alphanumeric.sample_string(&mut rand::rng(), PASSWORD_LENGTH)
}

/// The credentials Secret of a new database: the engine's administrator name and `password`,
/// marked immutable so that nothing rewrites a password the data directory was initialised
/// with. The controller creates it once, when it does not exist, and never updates it.
///
/// Errors with [`ObjectError::MissingUid`] when `db` has no uid.
pub fn secret(db: &Database, password: String) -> Result<Secret, ObjectError> {
    Ok(Secret {
        metadata: owned_metadata(db, secret_name(db))?,
        type_: Some("Opaque".into()),
        immutable: Some(true),
        string_data: Some(BTreeMap::from([
            (
                USERNAME_KEY.to_string(),
                root_user(db.spec.engine).to_string(),
            ),
            (PASSWORD_KEY.to_string(), password),
        ])),
        ..Secret::default()
    })
}

/// Whether an existing credentials Secret has the key the pods read the password from.
pub fn secret_has_password(secret: &Secret) -> bool {
    let in_data = secret
        .data
        .as_ref()
        .and_then(|data| data.get(PASSWORD_KEY))
        .is_some_and(|value| !value.0.is_empty());
    let in_string_data = secret
        .string_data
        .as_ref()
        .and_then(|data| data.get(PASSWORD_KEY))
        .is_some_and(|value| !value.is_empty());
    in_data || in_string_data
}

/// The headless Service (`clusterIP: None`) that gives each database pod a stable DNS name;
/// the StatefulSet's `serviceName`.
///
/// Errors with [`ObjectError::MissingUid`] when `db` has no uid.
pub fn headless_service(db: &Database) -> Result<Service, ObjectError> {
    let engine = db.spec.engine;
    Ok(Service {
        metadata: owned_metadata(db, service_name(db))?,
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".into()),
            selector: Some(selector_labels(db)),
            ports: Some(vec![ServicePort {
                name: Some(port_name(engine).into()),
                port: port(engine),
                target_port: Some(IntOrString::String(port_name(engine).into())),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    })
}

/// The StatefulSet that runs the database: `spec.replicas` pods of `<image>:<version>`
/// listening on the engine's port, with the credentials from the Secret, the database's
/// `resources`, a TCP readiness probe, and — when `spec.storage` is set — a volume claim
/// template of that size mounted at the engine's data directory.
///
/// Errors with [`ObjectError::MissingUid`] when `db` has no uid.
pub fn stateful_set(db: &Database) -> Result<StatefulSet, ObjectError> {
    let engine = db.spec.engine;
    let name = port_name(engine);
    let mut container = Container {
        name: name.into(),
        image: Some(image(engine, &db.spec.version)),
        ports: Some(vec![ContainerPort {
            name: Some(name.into()),
            container_port: port(engine),
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        env: Some(credential_env(engine, &secret_name(db))),
        resources: db.spec.resources.clone(),
        readiness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::String(name.into()),
                ..TCPSocketAction::default()
            }),
            initial_delay_seconds: Some(5),
            period_seconds: Some(10),
            ..Probe::default()
        }),
        ..Container::default()
    };
    let mut claims = None;
    if let Some(size) = &db.spec.storage {
        container.volume_mounts = Some(vec![VolumeMount {
            name: DATA_VOLUME.into(),
            mount_path: data_dir(engine).into(),
            ..VolumeMount::default()
        }]);
        claims = Some(vec![PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some(DATA_VOLUME.into()),
                labels: Some(selector_labels(db)),
                ..ObjectMeta::default()
            },
            spec: Some(PersistentVolumeClaimSpec {
                access_modes: Some(vec!["ReadWriteOnce".into()]),
                resources: Some(VolumeResourceRequirements {
                    requests: Some(BTreeMap::from([("storage".to_string(), size.clone())])),
                    ..VolumeResourceRequirements::default()
                }),
                ..PersistentVolumeClaimSpec::default()
            }),
            ..PersistentVolumeClaim::default()
        }]);
    }
    Ok(StatefulSet {
        metadata: owned_metadata(db, db.name_any())?,
        spec: StatefulSetSpec {
            replicas: Some(db.spec.replicas),
            service_name: Some(service_name(db)),
            selector: LabelSelector {
                match_labels: Some(selector_labels(db)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(db)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            volume_claim_templates: claims,
            ..StatefulSetSpec::default()
        },
        ..StatefulSet::default()
    })
}

/// Whether the PVC `name` was made from the claim template of `db`'s StatefulSet: its name is
/// `data-<database>-<ordinal>`.
pub fn is_data_claim(db: &Database, name: &str) -> bool {
    name.strip_prefix(&format!("{DATA_VOLUME}-{}-", db.name_any()))
        .is_some_and(|ordinal| !ordinal.is_empty() && ordinal.bytes().all(|b| b.is_ascii_digit()))
}

/// The sorted names of `pods`: the database's `status.nodes`.
pub fn node_names(pods: &[Pod]) -> Vec<String> {
    let mut names: Vec<String> = pods.iter().map(|pod| pod.name_any()).collect();
    names.sort();
    names
}

/// Container waiting reasons after which a pod will not become ready without a change to the
/// spec (a wrong version, a missing Secret) or to the image.
const FAILING_REASONS: [&str; 5] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CrashLoopBackOff",
    "CreateContainerConfigError",
];

/// The first pod whose container is stuck, as `"<pod>: <reason>: <message>"`.
pub fn failing_pod(pods: &[Pod]) -> Option<String> {
    pods.iter().find_map(|pod| {
        let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
        statuses.iter().find_map(|status| {
            let waiting = status.state.as_ref()?.waiting.as_ref()?;
            let reason = waiting.reason.as_deref()?;
            FAILING_REASONS.contains(&reason).then(|| {
                let message = waiting.message.as_deref().unwrap_or_default();
                format!("{}: {reason}: {message}", pod.name_any())
                    .trim_end_matches([' ', ':'])
                    .to_string()
            })
        })
    })
}

/// The phase of a database and a sentence saying why, from its StatefulSet (as last applied,
/// with the status the API server returned) and its pods:
/// - `Failed` when a pod is stuck ([`failing_pod`]);
/// - `Pending` when no pod exists yet;
/// - `Running` when the StatefulSet controller has seen the current spec and `desired` pods
///   exist, are up to date and ready;
/// - `Creating` otherwise (starting, scaling or rolling out a new version).
pub fn phase(desired: i32, sts: &StatefulSet, pods: &[Pod]) -> (Phase, String) {
    if let Some(failure) = failing_pod(pods) {
        return (Phase::Failed, failure);
    }
    if pods.is_empty() {
        return (Phase::Pending, "waiting for the first pod".into());
    }
    let status = sts.status.clone().unwrap_or_default();
    let seen = status.observed_generation >= sts.metadata.generation;
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    if seen && status.replicas == desired && ready == desired && updated == desired {
        (Phase::Running, format!("{ready}/{desired} pods ready"))
    } else {
        (
            Phase::Creating,
            format!("{ready}/{desired} pods ready, {} exist", status.replicas),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::v1::DatabaseSpec;
    use k8s_openapi::api::apps::v1::StatefulSetStatus;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateWaiting, ContainerStatus, PodStatus,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    const ENGINES: [Engine; 3] = [Engine::Mysql, Engine::Postgresql, Engine::Mongodb];

    fn database(engine: Engine, version: &str, replicas: i32) -> Database {
        let mut db = Database::new(
            "orders",
            DatabaseSpec {
                engine,
                version: version.into(),
                replicas,
                storage: None,
                resources: None,
            },
        );
        db.metadata.namespace = Some("shop".into());
        db.metadata.uid = Some("0b1c2d3e".into());
        db
    }

    /// `(name, value, secret name, secret key)` of a variable.
    type EnvSummary = (String, Option<String>, Option<String>, Option<String>);

    fn env_summary(env: &[EnvVar]) -> Vec<EnvSummary> {
        env.iter()
            .map(|var| {
                let key_ref = var
                    .value_from
                    .as_ref()
                    .and_then(|from| from.secret_key_ref.as_ref());
                (
                    var.name.clone(),
                    var.value.clone(),
                    key_ref.map(|r| r.name.clone()),
                    key_ref.map(|r| r.key.clone()),
                )
            })
            .collect()
    }

    fn pod(name: &str, waiting: Option<(&str, &str)>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        if let Some((reason, message)) = waiting {
            pod.status = Some(PodStatus {
                container_statuses: Some(vec![ContainerStatus {
                    name: "mysql".into(),
                    state: Some(ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some(reason.into()),
                            message: Some(message.into()),
                        }),
                        ..ContainerState::default()
                    }),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            });
        }
        pod
    }

    fn sts_with(generation: i64, status: StatefulSetStatus) -> StatefulSet {
        let mut sts = StatefulSet::default();
        sts.metadata.generation = Some(generation);
        sts.status = Some(status);
        sts
    }

    #[test]
    fn images_are_the_official_ones_tagged_with_the_version() {
        assert_eq!(image(Engine::Mysql, "8.0"), "mysql:8.0");
        assert_eq!(image(Engine::Postgresql, "16.4"), "postgres:16.4");
        assert_eq!(image(Engine::Mongodb, "7.0.12"), "mongo:7.0.12");
    }

    #[test]
    fn ports_are_the_engines_defaults() {
        let ports: Vec<(i32, &str)> = ENGINES.iter().map(|&e| (port(e), port_name(e))).collect();
        assert_eq!(
            ports,
            [(3306, "mysql"), (5432, "postgresql"), (27017, "mongodb")]
        );
    }

    #[test]
    fn mysql_reads_the_root_password_from_the_secret() {
        assert_eq!(
            env_summary(&credential_env(Engine::Mysql, "orders-credentials")),
            [(
                "MYSQL_ROOT_PASSWORD".to_string(),
                None,
                Some("orders-credentials".to_string()),
                Some("password".to_string())
            )]
        );
    }

    #[test]
    fn postgresql_reads_the_password_from_the_secret_and_keeps_pgdata_in_a_subdirectory() {
        assert_eq!(
            env_summary(&credential_env(Engine::Postgresql, "orders-credentials")),
            [
                (
                    "POSTGRES_PASSWORD".to_string(),
                    None,
                    Some("orders-credentials".to_string()),
                    Some("password".to_string())
                ),
                (
                    "PGDATA".to_string(),
                    Some("/var/lib/postgresql/data/pgdata".to_string()),
                    None,
                    None
                ),
            ]
        );
    }

    #[test]
    fn mongodb_reads_user_and_password_from_the_secret() {
        assert_eq!(
            env_summary(&credential_env(Engine::Mongodb, "orders-credentials")),
            [
                (
                    "MONGO_INITDB_ROOT_USERNAME".to_string(),
                    None,
                    Some("orders-credentials".to_string()),
                    Some("username".to_string())
                ),
                (
                    "MONGO_INITDB_ROOT_PASSWORD".to_string(),
                    None,
                    Some("orders-credentials".to_string()),
                    Some("password".to_string())
                ),
            ]
        );
    }

    #[test]
    fn no_engine_gets_a_password_inline() {
        for engine in ENGINES {
            for var in credential_env(engine, "s") {
                if var.name.contains("PASSWORD") {
                    assert_eq!(var.value, None, "{engine:?} {}", var.name);
                    assert!(var.value_from.is_some(), "{engine:?} {}", var.name);
                }
            }
        }
    }

    #[test]
    fn passwords_are_long_alphanumeric_and_differ() {
        let (a, b) = (generate_password(), generate_password());
        assert_eq!(a.len(), PASSWORD_LENGTH);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn secret_holds_the_engine_user_and_the_password_and_is_owned() {
        let db = database(Engine::Postgresql, "16.4", 1);
        let secret = secret(&db, "s3cret".into()).unwrap();
        assert_eq!(secret.metadata.name.as_deref(), Some("orders-credentials"));
        assert_eq!(secret.metadata.namespace.as_deref(), Some("shop"));
        assert_eq!(secret.immutable, Some(true));
        let data = secret.string_data.as_ref().unwrap();
        assert_eq!(data["username"], "postgres");
        assert_eq!(data["password"], "s3cret");
        let owner = &secret.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("Database", "0b1c2d3e")
        );
        assert_eq!(owner.controller, Some(true));
        assert!(secret_has_password(&secret));
        assert!(!secret_has_password(&Secret::default()));
    }

    #[test]
    fn objects_need_a_uid() {
        let mut db = database(Engine::Mysql, "8.0", 1);
        db.metadata.uid = None;
        assert_eq!(headless_service(&db).unwrap_err(), ObjectError::MissingUid);
        assert_eq!(stateful_set(&db).unwrap_err(), ObjectError::MissingUid);
    }

    #[test]
    fn service_is_headless_on_the_engine_port() {
        let svc = headless_service(&database(Engine::Mongodb, "7.0", 1)).unwrap();
        let spec = svc.spec.unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some("None"));
        assert_eq!(spec.ports.as_ref().unwrap()[0].port, 27017);
        assert_eq!(
            spec.selector.unwrap()["app.kubernetes.io/instance"],
            "orders"
        );
    }

    #[test]
    fn stateful_set_follows_the_spec() {
        let mut db = database(Engine::Mysql, "8.0.36", 3);
        db.spec.storage = Some(Quantity("10Gi".into()));
        let sts = stateful_set(&db).unwrap();
        let spec = sts.spec;
        assert_eq!(spec.replicas, Some(3));
        assert_eq!(spec.service_name.as_deref(), Some("orders"));
        let pod = spec.template.spec.unwrap();
        let container = &pod.containers[0];
        assert_eq!(container.image.as_deref(), Some("mysql:8.0.36"));
        assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 3306);
        let mount = &container.volume_mounts.as_ref().unwrap()[0];
        assert_eq!(
            (mount.name.as_str(), mount.mount_path.as_str()),
            ("data", "/var/lib/mysql")
        );
        let claim = &spec.volume_claim_templates.unwrap()[0];
        let requests = claim.spec.as_ref().unwrap().resources.as_ref().unwrap();
        assert_eq!(requests.requests.as_ref().unwrap()["storage"].0, "10Gi");
        // The template's labels include the selector's.
        let template_labels = spec.template.metadata.unwrap().labels.unwrap();
        for (key, value) in spec.selector.match_labels.unwrap() {
            assert_eq!(template_labels[&key], value);
        }
    }

    #[test]
    fn stateful_set_without_storage_has_no_volume() {
        let sts = stateful_set(&database(Engine::Postgresql, "16.4", 1)).unwrap();
        let spec = sts.spec;
        assert_eq!(spec.volume_claim_templates, None);
        assert_eq!(
            spec.template.spec.unwrap().containers[0].volume_mounts,
            None
        );
    }

    #[test]
    fn label_selector_lists_the_selector_labels() {
        assert_eq!(
            label_selector(&database(Engine::Mysql, "8.0", 1)),
            "app.kubernetes.io/instance=orders,app.kubernetes.io/name=database"
        );
    }

    #[test]
    fn data_claims_are_the_claim_template_ones_of_this_database() {
        let db = database(Engine::Mysql, "8.0", 1);
        assert!(is_data_claim(&db, "data-orders-0"));
        assert!(is_data_claim(&db, "data-orders-12"));
        assert!(!is_data_claim(&db, "data-orders-archive-0"));
        assert!(!is_data_claim(&db, "data-orders-"));
        assert!(!is_data_claim(&db, "logs-orders-0"));
    }

    #[test]
    fn nodes_are_the_sorted_pod_names() {
        let pods = [pod("orders-1", None), pod("orders-0", None)];
        assert_eq!(node_names(&pods), ["orders-0", "orders-1"]);
    }

    #[test]
    fn phase_is_pending_without_pods() {
        let sts = sts_with(1, StatefulSetStatus::default());
        assert_eq!(phase(1, &sts, &[]).0, Phase::Pending);
    }

    #[test]
    fn phase_is_running_when_every_replica_is_ready_and_current() {
        let status = StatefulSetStatus {
            observed_generation: Some(2),
            replicas: 2,
            ready_replicas: Some(2),
            updated_replicas: Some(2),
            ..StatefulSetStatus::default()
        };
        let pods = [pod("orders-0", None), pod("orders-1", None)];
        assert_eq!(
            phase(2, &sts_with(2, status.clone()), &pods),
            (Phase::Running, "2/2 pods ready".to_string())
        );
        // A spec the StatefulSet controller has not seen yet (scaled to 3): still converging.
        assert_eq!(
            phase(3, &sts_with(3, status.clone()), &pods).0,
            Phase::Creating
        );
        // One pod not ready.
        let one_ready = StatefulSetStatus {
            ready_replicas: Some(1),
            ..status
        };
        assert_eq!(
            phase(2, &sts_with(2, one_ready), &pods),
            (Phase::Creating, "1/2 pods ready, 2 exist".to_string())
        );
    }

    #[test]
    fn phase_is_failed_when_a_pod_cannot_pull_its_image() {
        let sts = sts_with(1, StatefulSetStatus::default());
        let pods = [
            pod("orders-0", None),
            pod(
                "orders-1",
                Some(("ImagePullBackOff", "Back-off pulling image \"mysql:8.99\"")),
            ),
        ];
        assert_eq!(
            phase(2, &sts, &pods),
            (
                Phase::Failed,
                "orders-1: ImagePullBackOff: Back-off pulling image \"mysql:8.99\"".to_string()
            )
        );
        // A pod that is merely starting is not failing.
        let starting = [pod("orders-0", Some(("ContainerCreating", "")))];
        assert_eq!(phase(1, &sts, &starting).0, Phase::Creating);
    }
}
