//! `rsbuilder edit --plugins grafana`: the dashboards it writes, PROJECT's plugin record, the
//! custom metrics dashboard from `config.yaml`, bad input refused with nothing written, and
//! every metric a query names checked against what the runtime's `/metrics` serves
//! (`rsbuilder_runtime::metrics::Metrics::encode`, the body of `GET /metrics`).

use crate::common;
use common::rsbuilder;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

fn init(dir: &Path) {
    rsbuilder(dir)
        .args([
            "init",
            "--domain",
            "ai.example.com",
            "--repo",
            "example.com/ai-operator",
            "--project-name",
            "ai-operator",
        ])
        .assert()
        .success();
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every `expr` of every panel of a dashboard.
fn exprs(board: &serde_json::Value) -> Vec<String> {
    board["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect()
}

/// The metric names a PromQL expression selects: identifiers directly followed by `{`.
fn selected_metrics(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    for (i, _) in expr.match_indices('{') {
        let start = expr[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |p| p + 1);
        if start < i && !bytes[start].is_ascii_digit() {
            names.insert(expr[start..i].to_owned());
        }
    }
    names
}

#[test]
fn dashboards_query_only_what_the_runtime_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    init(dir);
    let out = rsbuilder(dir)
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for file in [
        "grafana/controller-runtime-metrics.json",
        "grafana/controller-resources-metrics.json",
        "grafana/custom-metrics/config.yaml",
    ] {
        assert!(stdout.contains(file), "{file} not reported:\n{stdout}");
        assert!(dir.join(file).is_file(), "{file}");
    }
    assert!(
        !dir.join("grafana/custom-metrics/custom-metrics-dashboard.json")
            .exists(),
        "no custom dashboard while config.yaml lists no metric"
    );

    // What a manager's /metrics serves after a successful and a failed reconcile.
    let metrics = rsbuilder_runtime::metrics::Metrics::default();
    metrics.reconcile("aijob", Duration::from_millis(4), "success");
    metrics.reconcile("aijob", Duration::from_millis(9), "error");
    let served: BTreeSet<String> = metrics
        .encode()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next().map(str::to_owned))
        .collect();

    let mut queried = BTreeSet::new();
    for file in [
        "grafana/controller-runtime-metrics.json",
        "grafana/controller-resources-metrics.json",
    ] {
        let board = read_json(&dir.join(file));
        assert_eq!(board["schemaVersion"], 39, "{file}");
        for expr in exprs(&board) {
            let names = selected_metrics(&expr);
            assert!(!names.is_empty(), "{file}: no metric in `{expr}`");
            queried.extend(names);
        }
    }
    let unserved: Vec<_> = queried.difference(&served).collect();
    assert!(
        unserved.is_empty(),
        "queried but not served: {unserved:?}\nserved: {served:?}"
    );
    // The names the dashboards are for, so a query dropped by mistake fails too.
    for name in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
    ] {
        assert!(queried.contains(name), "{name} not charted: {queried:?}");
    }

    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n"),
        "{project}"
    );

    // A second run changes nothing.
    let before = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    rsbuilder(dir)
        .args(["edit", "--plugins", "grafana.kubebuilder.io/v1-alpha"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(dir.join("PROJECT")).unwrap(),
        before
    );
}

#[test]
fn config_yaml_makes_the_custom_dashboard_and_bad_entries_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    init(dir);
    rsbuilder(dir)
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .success();
    let config = dir.join("grafana/custom-metrics/config.yaml");
    std::fs::write(
        &config,
        "customMetrics:\n  - metric: aijob_gpus_requested\n    type: gauge\n  - metric: aijob_start_seconds\n    type: histogram\n    unit: s\n",
    )
    .unwrap();
    rsbuilder(dir)
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .success();
    let board = read_json(&dir.join("grafana/custom-metrics/custom-metrics-dashboard.json"));
    let titles: Vec<_> = board["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["aijob_gpus_requested", "aijob_start_seconds"]);
    assert_eq!(
        exprs(&board)[1],
        r#"histogram_quantile(0.90, sum(rate(aijob_start_seconds_bucket{job=~"$job", namespace=~"$namespace", pod=~"$pod"}[5m])) by (instance, pod, le))"#
    );
    // config.yaml is the user's: never rewritten.
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .starts_with("customMetrics:\n  - metric: aijob_gpus_requested")
    );

    // A bad entry: the file and line named, exit 1, nothing written.
    std::fs::write(
        &config,
        "customMetrics:\n  - metric: aijob_gpus_requested\n    type: gauge\n  - metric: aijob-bad\n    type: counter\n",
    )
    .unwrap();
    let dash = dir.join("grafana/custom-metrics/custom-metrics-dashboard.json");
    let before = std::fs::read(&dash).unwrap();
    let out = rsbuilder(dir)
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(
            "grafana/custom-metrics/config.yaml:4: `aijob-bad` is not a Prometheus metric name"
        ),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&dash).unwrap(), before);
}

#[test]
fn unknown_plugins_and_missing_projects_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = rsbuilder(tmp.path())
        .args(["edit", "--plugins", "helm"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("unknown plugin `helm`"), "{stderr}");
    rsbuilder(tmp.path())
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .failure();
    assert!(!tmp.path().join("grafana").exists());
}

/// config.yaml shows the exact call that registers a metric with the manager's registry, and
/// that call, made on the runtime's `Metrics`, serves the metric under the name the example
/// entry of config.yaml lists.
#[test]
fn config_yaml_shows_the_registration_call_that_the_runtime_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    init(dir);
    rsbuilder(dir)
        .args(["edit", "--plugins", "grafana"])
        .assert()
        .success();
    let config = std::fs::read_to_string(dir.join("grafana/custom-metrics/config.yaml")).unwrap();
    let call = r#"runner.manager().metrics.register("foo_reconcile_items", "Items reconciled", items.clone());"#;
    assert!(config.contains(call), "{config}");
    assert!(
        config.contains("use rsbuilder_runtime::prometheus_client::metrics::counter::Counter;"),
        "{config}"
    );
    assert!(
        config.contains("#   - metric: foo_reconcile_items_total "),
        "{config}"
    );

    // The same call on the runtime's metrics (`runner.manager().metrics` is an Arc of them).
    let metrics = rsbuilder_runtime::metrics::Metrics::default();
    let items = rsbuilder_runtime::prometheus_client::metrics::counter::Counter::<u64>::default();
    metrics.register("foo_reconcile_items", "Items reconciled", items.clone());
    items.inc();
    let served = metrics.encode();
    assert!(
        served.contains("\nfoo_reconcile_items_total 1\n"),
        "{served}"
    );
}

/// A second `edit --plugins grafana` says what happened: nothing changed, or which dashboards
/// it refreshed.
#[test]
fn a_second_run_says_the_plugin_is_already_there_or_what_it_refreshed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    init(dir);
    let run = || {
        let out = rsbuilder(dir)
            .args(["edit", "--plugins", "grafana"])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let first = run();
    assert!(
        first.contains("grafana/controller-runtime-metrics.json"),
        "{first}"
    );
    assert!(!first.contains("already"), "{first}");
    let second = run();
    assert_eq!(
        second,
        "The grafana plugin is already applied (PROJECT records grafana.kubebuilder.io/v1-alpha) and its dashboards are up to date; nothing changed. List your own metrics in grafana/custom-metrics/config.yaml, then run this again for their dashboard.\n"
    );
    std::fs::write(
        dir.join("grafana/custom-metrics/config.yaml"),
        "customMetrics:\n  - metric: aijob_gpus_requested\n    type: gauge\n",
    )
    .unwrap();
    let third = run();
    assert!(
        third.contains("create  grafana/custom-metrics/custom-metrics-dashboard.json"),
        "{third}"
    );
    assert!(
        third.contains("The grafana plugin was already applied; refreshed 1 dashboard from"),
        "{third}"
    );
}
