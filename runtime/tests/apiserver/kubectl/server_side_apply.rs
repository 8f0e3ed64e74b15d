//! `kubectl apply --server-side` by two field managers: the second one's change of a field
//! the first owns is a conflict, worded as kube-apiserver words it, until `--force-conflicts`
//! moves the field to it; `managedFields` then name who owns what.

use std::path::Path;

use super::{Server, kubectl, ok, write};

const ALICE: &str = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: ssa\nspec:\n  engine: postgres\n  version: \"16\"\n  replicas: 1\n";

/// `(manager, operation)` of each `managedFields` entry of Database `name`, and the fields
/// each owns under `spec`.
fn owners(k: &Path, name: &str) -> Vec<(String, String, Vec<String>)> {
    let json = ok(
        k,
        &["get", "db", name, "-o", "json", "--show-managed-fields"],
    );
    let obj: serde_json::Value = serde_json::from_str(&json).unwrap();
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let spec = e["fieldsV1"]["f:spec"].as_object();
            let fields = spec.into_iter().flatten().map(|(f, _)| f.clone()).collect();
            (
                e["manager"].as_str().unwrap().to_owned(),
                e["operation"].as_str().unwrap().to_owned(),
                fields,
            )
        })
        .collect()
}

pub fn two_managers_conflict_until_forced(s: &Server) {
    let k = s.kubeconfig.as_path();
    let alice = write(s.dir.path(), "alice.yaml", ALICE);
    let apply_as = |manager: &str, file: &str, extra: &[&str]| {
        let mut args = vec![
            "apply",
            "--server-side",
            "--field-manager",
            manager,
            "-f",
            file,
        ];
        args.extend_from_slice(extra);
        kubectl(k, &args)
    };
    let (success, out, err) = apply_as("alice", &alice, &[]);
    assert!(success, "{out}{err}");
    assert_eq!(out.trim(), "database.example.com/ssa serverside-applied");
    let rv = ok(
        k,
        &[
            "get",
            "db",
            "ssa",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
    );
    // The same apply again changes nothing, not even the resourceVersion.
    let (success, out, err) = apply_as("alice", &alice, &[]);
    assert!(success, "{out}{err}");
    assert_eq!(
        ok(
            k,
            &[
                "get",
                "db",
                "ssa",
                "-o",
                "jsonpath={.metadata.resourceVersion}"
            ]
        ),
        rv
    );

    let bob = write(
        s.dir.path(),
        "bob.yaml",
        "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: ssa\nspec:\n  engine: postgres\n  version: \"16\"\n  replicas: 3\n",
    );
    let (success, out, err) = apply_as("bob", &bob, &[]);
    assert!(!success, "{out}");
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "alice": .spec.replicas"#),
        "{err}"
    );
    assert!(err.contains("--force-conflicts"), "kubectl's hint: {err}");
    assert_eq!(
        ok(k, &["get", "db", "ssa", "-o", "jsonpath={.spec.replicas}"]),
        "1"
    );

    let (success, out, err) = apply_as("bob", &bob, &["--force-conflicts"]);
    assert!(success, "{out}{err}");
    assert_eq!(
        ok(
            k,
            &[
                "get",
                "db",
                "ssa",
                "-o",
                "jsonpath={.spec.replicas} {.metadata.generation}"
            ]
        ),
        "3 2"
    );
    // Both applied the same engine and version: they share them; replicas is bob's alone.
    assert_eq!(
        owners(k, "ssa"),
        vec![
            (
                "alice".to_owned(),
                "Apply".to_owned(),
                vec!["f:engine".to_owned(), "f:version".to_owned()]
            ),
            (
                "bob".to_owned(),
                "Apply".to_owned(),
                vec![
                    "f:engine".to_owned(),
                    "f:replicas".to_owned(),
                    "f:version".to_owned()
                ]
            ),
        ]
    );

    // A later edit by another client takes the field it changes, recorded as an Update.
    ok(
        k,
        &[
            "patch",
            "db",
            "ssa",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":4}}"#,
        ],
    );
    let after = owners(k, "ssa");
    assert_eq!(
        after
            .last()
            .map(|(m, o, f)| (m.as_str(), o.as_str(), f.clone())),
        Some(("kubectl-patch", "Update", vec!["f:replicas".to_owned()])),
        "{after:?}"
    );
    // kubectl 1.32's `apply --subresource=scale` sends the file's object (a Database: kubectl
    // cannot map a Scale file to a resource) to `/scale`, which takes only a Scale: refused
    // as kube-apiserver refuses it.
    let (success, out, err) = apply_as("alice", &alice, &["--subresource=scale"]);
    assert!(!success, "{out}");
    assert!(
        err.contains("invalid object type: example.com/v1, Kind=Database"),
        "{err}"
    );
    ok(k, &["delete", "db", "ssa"]);
}

/// What kube-rs controllers send: `Patch::Apply` with a field manager (`PatchParams::apply`),
/// forced or not, and dry runs (`PostParams`/`PatchParams` `dry_run`), over HTTP to the
/// server. The apply creates the object, records the manager's Apply entry, and conflicts with
/// another manager until forced; the dry runs answer without storing.
pub fn kube_rs_applies_and_dry_runs(s: &Server) {
    use kube::api::{Api, Patch, PatchParams, PostParams};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let api: Api<super::Database> =
            Api::namespaced(super::list_under_writes::client(s).await, "default");
        let mut db = super::list_under_writes::database("kube-rs");
        db.spec.replicas = 2;
        let applied = api
            .patch(
                "kube-rs",
                &PatchParams::apply("operator"),
                &Patch::Apply(&db),
            )
            .await
            .unwrap();
        assert_eq!(applied.spec.replicas, 2);
        let managers: Vec<(String, String)> = applied
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                (
                    m.manager.unwrap_or_default(),
                    m.operation.unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(managers, [("operator".to_string(), "Apply".to_string())]);

        db.spec.replicas = 3;
        let conflict = api
            .patch("kube-rs", &PatchParams::apply("other"), &Patch::Apply(&db))
            .await
            .unwrap_err();
        match conflict {
            kube::Error::Api(e) => assert_eq!((e.code, e.reason.as_str()), (409, "Conflict")),
            other => panic!("{other}"),
        }
        let forced = api
            .patch(
                "kube-rs",
                &PatchParams::apply("other").force(),
                &Patch::Apply(&db),
            )
            .await
            .unwrap();
        assert_eq!(forced.spec.replicas, 3);

        let dry_post = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let would = api
            .create(
                &dry_post,
                &super::list_under_writes::database("kube-rs-dry"),
            )
            .await
            .unwrap();
        assert_eq!(would.metadata.resource_version, None);
        assert!(api.get_opt("kube-rs-dry").await.unwrap().is_none());
        db.spec.replicas = 9;
        let dry_apply = api
            .patch(
                "kube-rs",
                &PatchParams::apply("other").force().dry_run(),
                &Patch::Apply(&db),
            )
            .await
            .unwrap();
        assert_eq!(dry_apply.spec.replicas, 9);
        assert_eq!(api.get("kube-rs").await.unwrap().spec.replicas, 3);

        // An autoscaler's apply to the Scale (kube-rs `patch_scale`): the replicas, owned by
        // "other" through the object, move to it when forced, recorded on the object.
        let scale = serde_json::json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "kube-rs"}, "spec": {"replicas": 5}});
        let conflict = api
            .patch_scale(
                "kube-rs",
                &PatchParams::apply("autoscaler"),
                &Patch::Apply(&scale),
            )
            .await
            .unwrap_err();
        match conflict {
            kube::Error::Api(e) => assert_eq!(
                (e.code, e.message.as_str()),
                (
                    409,
                    r#"Apply failed with 1 conflict: conflict with "other": .spec.replicas"#
                )
            ),
            other => panic!("{other}"),
        }
        let scaled = api
            .patch_scale(
                "kube-rs",
                &PatchParams::apply("autoscaler").force(),
                &Patch::Apply(&scale),
            )
            .await
            .unwrap();
        assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
        let db = api.get("kube-rs").await.unwrap();
        assert_eq!(db.spec.replicas, 5);
        let autoscaler = db
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .find(|m| m.manager.as_deref() == Some("autoscaler"))
            .unwrap();
        assert_eq!(
            (
                autoscaler.operation.as_deref(),
                autoscaler.subresource.as_deref(),
                autoscaler.fields_v1.map(|f| f.0)
            ),
            (
                Some("Apply"),
                Some("scale"),
                Some(serde_json::json!({"f:spec": {"f:replicas": {}}}))
            )
        );
    });
}
