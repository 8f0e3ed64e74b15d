//! `rsbuilder edit --plugins grafana`: Grafana dashboards for the manager's metrics, as
//! Kubebuilder's `grafana.kubebuilder.io/v1-alpha` plugin writes them for a Go manager.
//!
//! Writes, under `grafana/`:
//! - `controller-runtime-metrics.json`: reconciliations per controller and result, errors, and
//!   the reconcile time's percentiles and mean;
//! - `controller-resources-metrics.json`: the manager's CPU, resident memory and open file
//!   descriptors;
//! - `custom-metrics/config.yaml`, the user's list of their own metrics (written once, never
//!   overwritten), and, when that list is not empty, `custom-metrics/custom-metrics-dashboard.json`
//!   with one panel per metric.
//!
//! The queries use only the names the runtime's `/metrics` serves
//! (`rsbuilder_runtime::metrics::Metrics`; `tests/cli/grafana.rs` checks every name of every
//! query against it). Kubebuilder's dashboards also chart controller-runtime's work-queue
//! metrics (`workqueue_*`), which a kube-rs controller does not have; they are left out rather
//! than drawn empty. The JSON files are derived output, like the CRDs of `rsbuilder manifests`:
//! every run writes them anew (edit `config.yaml`, not the JSON), and PROJECT records the plugin
//! as `plugins: {grafana.kubebuilder.io/v1-alpha: {}}`, Kubebuilder's key.

use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{File, Plan};
use crate::model::Project;
use crate::model::layout::{self, FileSpec, IfExists};

/// The plugin key PROJECT records, Kubebuilder's.
pub const PLUGIN_KEY: &str = "grafana.kubebuilder.io/v1-alpha";
/// The runtime metrics dashboard.
pub const RUNTIME_DASHBOARD: &str = "grafana/controller-runtime-metrics.json";
/// The resources (CPU, memory, descriptors) dashboard.
pub const RESOURCES_DASHBOARD: &str = "grafana/controller-resources-metrics.json";
/// The user's list of custom metrics.
pub const CUSTOM_CONFIG: &str = "grafana/custom-metrics/config.yaml";
/// The dashboard made from [`CUSTOM_CONFIG`].
pub const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// What `config.yaml` holds when `edit --plugins grafana` first writes it: Kubebuilder's
/// format, every field explained, no metric listed.
const CUSTOM_CONFIG_TEMPLATE: &str = "\
# Custom metrics for grafana/custom-metrics/custom-metrics-dashboard.json, which
# `rsbuilder edit --plugins grafana` writes from this list (one panel per metric).
# Register each metric with the manager's registry in src/main.rs, after `Runner::start`
# (keep a clone to update it; prometheus-client adds `_total` to a counter's name):
#
#   use rsbuilder_runtime::prometheus_client::metrics::counter::Counter;
#   let items = Counter::<u64>::default();
#   runner.manager().metrics.register(\"foo_reconcile_items\", \"Items reconciled\", items.clone());
#
# then list them:
#
# customMetrics:
#   - metric: foo_reconcile_items_total # the metric's name as /metrics serves it (required)
#     type: counter                     # counter, gauge or histogram (required)
#     expr: sum(rate(foo_reconcile_items_total[5m])) # the panel's PromQL (optional)
#     unit: none                        # Grafana's unit: s, bytes, percent, none... (optional)
---
customMetrics: []
";

/// One entry of `config.yaml`'s `customMetrics`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomMetric {
    metric: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    expr: Option<String>,
    #[serde(default)]
    unit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CustomConfig {
    #[serde(default)]
    custom_metrics: Vec<CustomMetric>,
}

/// Plans `edit --plugins grafana` in `dir`: the dashboards, the custom metrics list when
/// missing, the custom dashboard when the list names metrics, and the plugin in PROJECT.
///
/// Errors: no or bad PROJECT; a `config.yaml` that does not parse, or that names a metric
/// whose name is not a Prometheus metric name, or whose type is not counter, gauge or
/// histogram (each with `config.yaml:<line>`).
pub fn plan(dir: &Path) -> Result<Plan> {
    let mut plan = Plan::new(dir, false);
    let mut project = Project::load_in(&plan)?;
    let derived = |path: &str| FileSpec::new(path, IfExists::Overwrite);
    plan.add(File::at(
        derived(RUNTIME_DASHBOARD),
        to_json(&runtime_dashboard()),
    ));
    plan.add(File::at(
        derived(RESOURCES_DASHBOARD),
        to_json(&resources_dashboard()),
    ));
    let config = match plan.read(CUSTOM_CONFIG)? {
        Some(text) => text,
        None => {
            plan.add(File::at(
                FileSpec::new(CUSTOM_CONFIG, IfExists::Skip),
                CUSTOM_CONFIG_TEMPLATE,
            ));
            CUSTOM_CONFIG_TEMPLATE.to_owned()
        }
    };
    let metrics = parse_custom(&dir.join(CUSTOM_CONFIG), &config)?;
    if !metrics.is_empty() {
        plan.add(File::at(
            derived(CUSTOM_DASHBOARD),
            to_json(&custom_dashboard(&metrics)),
        ));
    }
    if !project.plugins.contains_key(PLUGIN_KEY) {
        project.plugins.insert(PLUGIN_KEY.into(), json!({}));
        plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    }
    Ok(plan)
}

/// What `edit --plugins grafana` prints after applying [`plan`]: the files it created or
/// updated, and, when PROJECT already recorded the plugin (a second run), that it refreshed
/// them or that everything was already up to date.
pub fn report(resolved: &[super::Resolved]) -> String {
    let mut out = super::report(resolved);
    let changed = |path: &str| {
        resolved
            .iter()
            .any(|r| r.path == Path::new(path) && r.action != super::Action::Unchanged)
    };
    if changed(layout::PROJECT) {
        return out;
    }
    let dashboards = [RUNTIME_DASHBOARD, RESOURCES_DASHBOARD, CUSTOM_DASHBOARD]
        .into_iter()
        .filter(|p| changed(p))
        .count();
    if dashboards == 0 {
        out.push_str(&format!(
            "The grafana plugin is already applied (PROJECT records {PLUGIN_KEY}) and its dashboards are up to date; nothing changed. List your own metrics in {CUSTOM_CONFIG}, then run this again for their dashboard.\n"
        ));
    } else {
        out.push_str(&format!(
            "The grafana plugin was already applied; refreshed {} from this rsbuilder and {CUSTOM_CONFIG}.\n",
            super::count(dashboards, "dashboard")
        ));
    }
    out
}

fn to_json(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a json! value serializes");
    text.push('\n');
    text
}

/// A Prometheus metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, the data model's rule).
fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The metrics `config.yaml` lists, checked. `path` names the file in errors.
fn parse_custom(path: &Path, text: &str) -> Result<Vec<CustomMetric>> {
    // The file may start with `---` after its comments: take the last document.
    let config: CustomConfig = serde_saphyr::from_str(text)
        .map_err(|e| anyhow::anyhow!("{}: not a custom metrics list: {e}", path.display()))?;
    let line_of = |needle: &str| {
        text.lines()
            .position(|l| !l.trim_start().starts_with('#') && l.contains(needle))
            .map_or(String::new(), |i| format!(":{}", i + 1))
    };
    for m in &config.custom_metrics {
        if !is_metric_name(&m.metric) {
            bail!(
                "{}{}: `{}` is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)",
                path.display(),
                line_of(&m.metric),
                m.metric
            );
        }
        if !matches!(m.kind.as_str(), "counter" | "gauge" | "histogram") {
            bail!(
                "{}{}: metric `{}` has type `{}`; use counter, gauge or histogram",
                path.display(),
                line_of(&m.metric),
                m.metric,
                m.kind
            );
        }
    }
    Ok(config.custom_metrics)
}

/// The label matchers every query carries: the dashboard's job, namespace and pod variables.
const SELECT: &str = r#"job=~"$job", namespace=~"$namespace", pod=~"$pod""#;

/// A time-series panel at grid row `y`, left or right half, with one query per
/// `(expr, legend)`.
fn panel(id: u32, title: &str, unit: &str, half: u32, y: u32, targets: &[(String, &str)]) -> Value {
    let targets: Vec<Value> = targets
        .iter()
        .zip('A'..)
        .map(|((expr, legend), ref_id)| {
            json!({
                "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
                "expr": expr,
                "legendFormat": legend,
                "refId": ref_id.to_string(),
            })
        })
        .collect();
    json!({
        "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "gridPos": {"h": 8, "w": 12, "x": half * 12, "y": y},
        "id": id,
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": true}},
        "targets": targets,
        "title": title,
        "type": "timeseries",
    })
}

/// A dashboard with the datasource, job, namespace and pod variables (their values read from
/// `variable_metric`'s labels).
fn dashboard(uid: &str, title: &str, variable_metric: &str, panels: Vec<Value>) -> Value {
    let query = |label: &str, filter: &str| {
        json!({
            "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
            "definition": format!("label_values({variable_metric}{filter}, {label})"),
            "includeAll": true,
            "multi": true,
            "name": label,
            "query": {"query": format!("label_values({variable_metric}{filter}, {label})"), "refId": label},
            "refresh": 2,
            "type": "query",
        })
    };
    json!({
        "__inputs": [{
            "name": "DS_PROMETHEUS",
            "label": "Prometheus",
            "type": "datasource",
            "pluginId": "prometheus",
            "pluginName": "Prometheus",
        }],
        "editable": true,
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["rsbuilder", "kube-rs"],
        "templating": {"list": [
            {"name": "DS_PROMETHEUS", "label": "Data source", "query": "prometheus", "type": "datasource"},
            query("job", ""),
            query("namespace", r#"{job=~"$job"}"#),
            query("pod", r#"{job=~"$job", namespace=~"$namespace"}"#),
        ]},
        "time": {"from": "now-1h", "to": "now"},
        "title": title,
        "uid": uid,
    })
}

/// `controller-runtime-metrics.json`.
fn runtime_dashboard() -> Value {
    let quantile = |q: &str| {
        format!(
            "histogram_quantile({q}, sum(rate(controller_runtime_reconcile_time_seconds_bucket{{{SELECT}}}[5m])) by (controller, le))"
        )
    };
    let panels = vec![
        panel(
            1,
            "Reconciliations per second, by controller and result",
            "ops",
            0,
            0,
            &[(
                format!(
                    "sum(rate(controller_runtime_reconcile_total{{{SELECT}}}[5m])) by (controller, result)"
                ),
                "{{controller}} {{result}}",
            )],
        ),
        panel(
            2,
            "Reconciliation errors per second, by controller",
            "ops",
            1,
            0,
            &[(
                format!(
                    "sum(rate(controller_runtime_reconcile_errors_total{{{SELECT}}}[5m])) by (controller)"
                ),
                "{{controller}}",
            )],
        ),
        panel(
            3,
            "Reconcile time, 50th, 90th and 99th percentile",
            "s",
            0,
            8,
            &[
                (quantile("0.5"), "{{controller}} p50"),
                (quantile("0.9"), "{{controller}} p90"),
                (quantile("0.99"), "{{controller}} p99"),
            ],
        ),
        panel(
            4,
            "Mean reconcile time",
            "s",
            1,
            8,
            &[(
                format!(
                    "sum(rate(controller_runtime_reconcile_time_seconds_sum{{{SELECT}}}[5m])) by (controller) / sum(rate(controller_runtime_reconcile_time_seconds_count{{{SELECT}}}[5m])) by (controller)"
                ),
                "{{controller}}",
            )],
        ),
    ];
    dashboard(
        "rsbuilder-controller-runtime",
        "Controller Runtime Metrics",
        "controller_runtime_reconcile_total",
        panels,
    )
}

/// `controller-resources-metrics.json`.
fn resources_dashboard() -> Value {
    let panels = vec![
        panel(
            1,
            "CPU usage (cores)",
            "none",
            0,
            0,
            &[(
                format!("rate(process_cpu_seconds_total{{{SELECT}}}[5m])"),
                "{{pod}}",
            )],
        ),
        panel(
            2,
            "Resident memory",
            "bytes",
            1,
            0,
            &[(
                format!("process_resident_memory_bytes{{{SELECT}}}"),
                "{{pod}}",
            )],
        ),
        panel(
            3,
            "Open file descriptors, and the limit",
            "none",
            0,
            8,
            &[
                (format!("process_open_fds{{{SELECT}}}"), "{{pod}} open"),
                (format!("process_max_fds{{{SELECT}}}"), "{{pod}} limit"),
            ],
        ),
    ];
    dashboard(
        "rsbuilder-controller-resources",
        "Controller Resources Metrics",
        "process_resident_memory_bytes",
        panels,
    )
}

/// `custom-metrics-dashboard.json`: one panel per metric, two per row; the query is the
/// entry's `expr`, or by type: a counter's rate, a gauge's value, a histogram's 90th
/// percentile (Kubebuilder's defaults).
fn custom_dashboard(metrics: &[CustomMetric]) -> Value {
    let panels = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let name = &m.metric;
            let expr = m.expr.clone().unwrap_or_else(|| match m.kind.as_str() {
                "counter" => format!("sum(rate({name}{{{SELECT}}}[5m])) by (instance, pod)"),
                "gauge" => format!("{name}{{{SELECT}}}"),
                _ => format!(
                    "histogram_quantile(0.90, sum(rate({name}_bucket{{{SELECT}}}[5m])) by (instance, pod, le))"
                ),
            });
            let i = i as u32;
            panel(
                i + 1,
                name,
                m.unit.as_deref().unwrap_or("none"),
                i % 2,
                (i / 2) * 8,
                &[(expr, "{{pod}}")],
            )
        })
        .collect();
    let variable = metrics
        .first()
        .map(|m| match m.kind.as_str() {
            "histogram" => format!("{}_bucket", m.metric),
            _ => m.metric.clone(),
        })
        .unwrap_or_default();
    dashboard(
        "rsbuilder-custom-metrics",
        "Custom Metrics",
        &variable,
        panels,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_follow_the_data_model() {
        for good in ["a", "_a", "ns:rule_total", "x9"] {
            assert!(is_metric_name(good), "{good}");
        }
        for bad in ["", "9a", "a-b", "a b", "ä"] {
            assert!(!is_metric_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_template_lists_no_metric() {
        let metrics = parse_custom(Path::new("config.yaml"), CUSTOM_CONFIG_TEMPLATE).unwrap();
        assert!(metrics.is_empty());
    }

    #[test]
    fn a_bad_entry_names_the_file_and_line() {
        let text = "customMetrics:\n  - metric: ok_total\n    type: counter\n  - metric: bad-name\n    type: gauge\n";
        let err = parse_custom(Path::new("g/config.yaml"), text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "g/config.yaml:4: `bad-name` is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)"
        );
        let text = "customMetrics:\n  - metric: depth\n    type: summary\n";
        let err = parse_custom(Path::new("c.yaml"), text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.yaml:2: metric `depth` has type `summary`; use counter, gauge or histogram"
        );
        let err = parse_custom(
            Path::new("c.yaml"),
            "customMetrics:\n  - metric: a\n    kind: x\n",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("c.yaml: not a custom metrics list"),
            "{err}"
        );
    }

    #[test]
    fn custom_panels_query_by_type_or_by_expr() {
        let text = "customMetrics:\n  - metric: jobs_total\n    type: counter\n  - metric: queue_depth\n    type: gauge\n    unit: short\n  - metric: step_seconds\n    type: histogram\n  - metric: odd\n    type: gauge\n    expr: max(odd)\n";
        let metrics = parse_custom(Path::new("c.yaml"), text).unwrap();
        let board = custom_dashboard(&metrics);
        let exprs: Vec<&str> = board["panels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["targets"][0]["expr"].as_str().unwrap())
            .collect();
        assert_eq!(
            exprs,
            [
                r#"sum(rate(jobs_total{job=~"$job", namespace=~"$namespace", pod=~"$pod"}[5m])) by (instance, pod)"#,
                r#"queue_depth{job=~"$job", namespace=~"$namespace", pod=~"$pod"}"#,
                r#"histogram_quantile(0.90, sum(rate(step_seconds_bucket{job=~"$job", namespace=~"$namespace", pod=~"$pod"}[5m])) by (instance, pod, le))"#,
                "max(odd)",
            ]
        );
        assert_eq!(
            board["panels"][1]["fieldConfig"]["defaults"]["unit"],
            "short"
        );
        assert_eq!(
            board["panels"][3]["gridPos"],
            json!({"h": 8, "w": 12, "x": 12, "y": 8})
        );
    }
}
