//! `rsbuilder manifests` on marker input, end to end through the binary: RBAC and webhook
//! files from `// +kubebuilder:` markers, and the marker rows of case D (message, exit code 1,
//! nothing written).

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn project(main_rs: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main_rs).unwrap();
    dir
}

fn manifests(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("rsbuilder").unwrap();
    cmd.current_dir(dir).arg("manifests");
    cmd
}

const CONTROLLER: &str = "\
use std::sync::Arc;

// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ai.ai.example.com,resources=aijobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// +kubebuilder:webhook:path=/mutate-ai-ai-example-com-v1-aijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ai.ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=maijob-v1.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ai-ai-example-com-v1-aijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ai.ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=vaijob-v1.kb.io,admissionReviewVersions=v1

fn main() {
    let _ = Arc::new(());
    // +kubebuilder:scaffold:controllers
}
";

const CASE_A_ROLE: &str = "\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs/finalizers
  verbs:
  - update
- apiGroups:
  - ai.ai.example.com
  resources:
  - aijobs/status
  verbs:
  - get
  - patch
  - update
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
";

#[test]
fn role_and_webhook_manifests_are_written_from_markers() {
    let dir = project(CONTROLLER);
    manifests(dir.path()).assert().success();
    let role = std::fs::read_to_string(dir.path().join("config/rbac/role.yaml")).unwrap();
    assert_eq!(role, CASE_A_ROLE);
    let hooks = std::fs::read_to_string(dir.path().join("config/webhook/manifests.yaml")).unwrap();
    let kinds: Vec<&str> = hooks
        .lines()
        .filter_map(|l| l.strip_prefix("kind: "))
        .collect();
    assert_eq!(
        kinds,
        [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration"
        ]
    );
    let paths: Vec<&str> = hooks
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path: "))
        .collect();
    assert_eq!(
        paths,
        [
            "/mutate-ai-ai-example-com-v1-aijob",
            "/validate-ai-ai-example-com-v1-aijob"
        ]
    );
    // Same bytes again: --check finds nothing to change.
    manifests(dir.path()).arg("--check").assert().success();
}

#[test]
fn no_markers_no_rbac_or_webhook_files() {
    let dir = project("fn main() {}\n");
    manifests(dir.path()).assert().success();
    assert!(!dir.path().join("config/rbac/role.yaml").exists());
    assert!(!dir.path().join("config/webhook/manifests.yaml").exists());
}

#[test]
fn namespaced_project_gets_a_role() {
    let dir = project(CONTROLLER);
    std::fs::write(
        dir.path().join("PROJECT"),
        "domain: ai.example.com\nlayout:\n- rust.rsbuilder.io/v1\nnamespaced: true\nprojectName: ai-operator\nrepo: example.com/ai-operator\nversion: \"3\"\n",
    )
    .unwrap();
    manifests(dir.path()).assert().success();
    let role = std::fs::read_to_string(dir.path().join("config/rbac/role.yaml")).unwrap();
    assert_eq!(role, CASE_A_ROLE.replace("kind: ClusterRole", "kind: Role"));
}

/// Case D: `// +kubebuilder:rbac:groups=apps,resources=deployments` (no verbs).
#[test]
fn missing_verbs_fails_with_file_and_line_and_writes_nothing() {
    let dir = project("fn main() {}\n\n// +kubebuilder:rbac:groups=apps,resources=deployments\n");
    manifests(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/main.rs:3:4: +kubebuilder:rbac is missing the required argument `verbs`",
        ));
    assert!(!dir.path().join("config").exists());
}

/// A misspelt verb grants nothing: a warning with the near miss; the role is still written
/// (an aggregated API server may define verbs of its own), also under `--check`.
#[test]
fn unknown_verb_is_a_warning_naming_the_near_miss() {
    let dir = project(
        "fn main() {}\n\n// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;lsit\n",
    );
    let warning = "warning: src/main.rs:3:56: unknown verb `lsit`: it grants nothing\n  help: did you mean `list`?\n";
    manifests(dir.path())
        .assert()
        .code(0)
        .stderr(predicate::str::contains(warning));
    let role = std::fs::read_to_string(dir.path().join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("  - get\n  - lsit\n"), "{role}");
    manifests(dir.path())
        .arg("--check")
        .assert()
        .code(0)
        .stderr(predicate::str::contains(warning));
}

/// Case D: `// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get`.
#[test]
fn misspelled_marker_fails_with_the_near_miss_and_writes_nothing() {
    let dir = project(
        "// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get\n// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get\nfn main() {}\n",
    );
    manifests(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/main.rs:2:4: unknown marker +kubebuilder:rbca",
        ))
        .stderr(predicate::str::contains("did you mean +kubebuilder:rbac?"));
    assert!(!dir.path().join("config").exists());
}

/// A bad webhook marker writes nothing: the exit code is 1, and neither the webhook
/// configurations nor the RBAC role (whose markers changed too) nor a CRD changes.
#[test]
fn invalid_webhook_marker_writes_nothing() {
    let dir = project(CONTROLLER);
    manifests(dir.path()).assert().success();
    let webhooks = dir.path().join("config/webhook/manifests.yaml");
    let webhooks_before = std::fs::read_to_string(&webhooks).unwrap();
    let broken = CONTROLLER
        .replace("sideEffects=None", "sideEffects=Some")
        .replace(
            "verbs=get;list;watch;create;update;patch;delete",
            "verbs=get",
        );
    std::fs::write(dir.path().join("src/main.rs"), broken).unwrap();
    manifests(dir.path())
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("src/main.rs:8:").and(predicate::str::contains(
                "sideEffects `Some` is not allowed",
            )),
        );
    assert_eq!(
        std::fs::read_to_string(&webhooks).unwrap(),
        webhooks_before,
        "the webhook configurations must not change on a webhook marker error"
    );
    let role = std::fs::read_to_string(dir.path().join("config/rbac/role.yaml")).unwrap();
    assert!(
        !role.contains("  - aijobs\n  verbs:\n  - get\n- apiGroups"),
        "role.yaml must not follow the edited rbac marker:\n{role}"
    );
}

/// A marker error in a project with a kind: exit 1, and the CRD is not written either.
#[test]
fn a_marker_error_writes_no_crd() {
    let kind = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]\n#[kube(group = \"ai.example.com\", version = \"v1\", kind = \"AIJob\", namespaced)]\npub struct AIJobSpec {\n    pub size: i32,\n}\n";
    for marker in [
        "// +kubebuilder:rbac:groups=apps,resources=deployments",
        "// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get",
        "// +kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=fail,groups=ai.example.com,resources=aijobs,verbs=create,versions=v1,name=v.ai.example.com,admissionReviewVersions=v1",
    ] {
        let dir = project(&format!("{kind}\n{marker}\nfn main() {{}}\n"));
        manifests(dir.path())
            .assert()
            .code(1)
            .stderr(predicate::str::contains("nothing was written"));
        assert!(!dir.path().join("config").exists(), "{marker}");
    }
}

/// The generated role and webhook configurations pass `kubernetes-validate --strict`
/// (installed by `.ci/run`); skipped with a message when the tool is not on PATH (a failure under `CI=true`).
#[test]
fn generated_manifests_pass_kubernetes_validate() {
    let probe = std::process::Command::new("kubernetes-validate")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::missing("kubernetes-validate is not installed (pip install kubernetes-validate)");
        return;
    }
    let dir = project(&CONTROLLER.replace(
        "// +kubebuilder:rbac:groups=events.k8s.io",
        "// +kubebuilder:rbac:urls=/metrics,verbs=get\n// +kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=get,namespace=ops\n// +kubebuilder:rbac:groups=events.k8s.io",
    ));
    manifests(dir.path()).assert().success();
    let out = std::process::Command::new("kubernetes-validate")
        .arg("--strict")
        .arg("config/rbac/role.yaml")
        .arg("config/webhook/manifests.yaml")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}");
    for resource in [
        "clusterrole/manager-role",
        "role/manager-role",
        "mutatingwebhookconfiguration/mutating-webhook-configuration",
        "validatingwebhookconfiguration/validating-webhook-configuration",
    ] {
        assert!(
            report.contains(&format!("passed for resource {resource}")),
            "{report}"
        );
    }
}

/// A grant that reads every Secret is written with a warning at its marker (check name, how
/// to narrow it); `--strict` makes it an error and writes nothing; `+rsbuilder:allow` above
/// the marker acknowledges it, also under `--strict`.
#[test]
fn a_dangerous_grant_is_a_warning_an_error_under_strict_and_quiet_once_allowed() {
    let src = "fn main() {}\n\n// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list\n";
    let dir = project(src);
    let warning = "warning: src/main.rs:3:34: the rule reads Secrets: every credential in its scope [secrets]\n  help: narrow it with resourceNames";
    manifests(dir.path())
        .assert()
        .code(0)
        .stderr(predicate::str::contains(warning));
    assert!(dir.path().join("config/rbac/role.yaml").is_file());

    let dir = project(src);
    manifests(dir.path())
        .arg("--strict")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "src/main.rs:3:34: the rule reads Secrets: every credential in its scope [secrets]",
        ))
        .stderr(predicate::str::contains("nothing was written"));
    assert!(!dir.path().join("config").exists());

    let allowed = src.replace(
        "// +kubebuilder:rbac",
        "// The operator copies a password Secret.\n// +rsbuilder:allow=secrets\n// +kubebuilder:rbac",
    );
    let dir = project(&allowed);
    manifests(dir.path())
        .arg("--strict")
        .assert()
        .code(0)
        .stderr(predicate::str::contains("[secrets]").not());
    assert!(dir.path().join("config/rbac/role.yaml").is_file());
}

/// A kind made by a macro (a `macro_rules!` that derives `CustomResource`, or a macro given
/// the derive in its tokens) is named at the macro call; when PROJECT records that kind, its
/// warning names the call, not "restore the derive". No CRD is written for it (exit 0).
#[test]
fn a_kind_made_by_a_macro_is_named_at_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = &tmp.path().join("op");
    std::fs::create_dir(dir).unwrap();
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("rsbuilder")
            .unwrap()
            .current_dir(dir)
            .env("XDG_STATE_HOME", dir.join(".state-home"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    run(&[
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/op",
    ]);
    run(&[
        "create",
        "api",
        "--group",
        "ai",
        "--version",
        "v1",
        "--kind",
        "Gen",
    ]);
    std::fs::write(
        dir.join("src/api/v1/gen_types.rs"),
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! make_kind {
    ($spec:ident, $kind:literal) => {
        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
        #[kube(group = "ai.example.com", version = "v1", kind = $kind, namespaced)]
        pub struct $spec { pub a: String }
    };
}
make_kind!(GenSpec, "Gen");

macro_rules! wrap { ($($t:tt)*) => { $($t)* }; }
wrap! {
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
    #[kube(group = "ai.example.com", version = "v1", kind = "Wrapped", namespaced)]
    pub struct WrappedSpec { pub a: String }
}

macro_rules! outer { ($s:ident, $k:literal) => { make_kind!($s, $k); }; }
outer!(NestedSpec, "Nested");
use kube::CustomResource as Cr;
#[derive(Cr, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(group = "ai.example.com", version = "v1", kind = "Alpha", namespaced)]
pub struct AlphaSpec { pub a: String }
include!("beta.in");
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("src/api/v1/beta.in"),
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]\n#[kube(group = \"ai.example.com\", version = \"v1\", kind = \"Beta\", namespaced)]\npub struct BetaSpec { pub a: String }\n",
    )
    .unwrap();
    let out = run(&["manifests", "--evaluate", "static"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("src/api/v1/gen_types.rs:12:1: `make_kind!` makes a kind with `#[derive(CustomResource)]` inside a macro; `manifests` reads the sources without expanding macros"),
        "{said}"
    );
    assert!(
        said.contains("src/api/v1/gen_types.rs:15:1: `wrap!` makes the kind Wrapped with `#[derive(CustomResource)]` inside a macro"),
        "{said}"
    );
    // kube's derive under another name.
    assert!(
        said.contains("src/api/v1/gen_types.rs:26:12: `AlphaSpec` derives `Cr`, which this file imports as kube's `CustomResource` renamed"),
        "{said}"
    );
    // A file of the crate brought in with include!.
    assert!(
        said.contains("src/api/v1/gen_types.rs:27:1: `include!` makes the kind Beta with `#[derive(CustomResource)]` inside a macro"),
        "{said}"
    );
    // A macro that calls one that makes kinds makes them too.
    assert!(
        said.contains("src/api/v1/gen_types.rs:22:1: `outer!` makes a kind with `#[derive(CustomResource)]` inside a macro"),
        "{said}"
    );
    assert!(
        said.contains(
            "PROJECT records the kind Gen (ai.example.com), which `make_kind!` makes at "
        ) && !said.contains("restore the derive"),
        "{said}"
    );
    let bases: Vec<_> = std::fs::read_dir(dir.join("config/crd/bases"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(bases.is_empty(), "{bases:?}");
}
