// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! API priority and fairness, as kube-apiserver runs it (k8s.io/apiserver's
//! `util/flowcontrol` and `server/filters/priority-and-fairness.go`), at this server's scale:
//!
//! - [`config`]: FlowSchemas and PriorityLevelConfigurations (`flowcontrol.apiserver.k8s.io/v1`)
//!   from a YAML file, checked at start; the default is kube's bootstrap configuration reduced
//!   to what reaches an aggregated server (`bootstrap.yaml`);
//! - [`matching`]: the schema a request matches (lowest `matchingPrecedence`, then name) and
//!   its flow (`ByUser`, `ByNamespace`);
//! - [`queueset`] and [`shuffle_sharding`]: each limited level's seats and fair queues;
//! - [`filter`]: the axum middleware that classifies, queues, answers 429 and sets the
//!   `X-Kubernetes-PF-*` headers.
//!
//! The server's seats (`--max-requests-inflight` + `--max-mutating-requests-inflight`, as
//! kube-apiserver adds them) are split between the levels by their nominal concurrency
//! shares: a level gets `ceil(seats * shares / sum of all levels' shares)`, as kube computes
//! the nominal concurrency limit. Not done: borrowing and lending seats between levels
//! (`lendablePercent` and `borrowingLimitPercent` are accepted, as kube's bootstrap objects
//! carry them, and change nothing: each level keeps its nominal seats), work estimation
//! (every request takes one seat), reading the objects from the cluster.

pub mod config;
pub mod filter;
pub mod matching;
pub mod queueset;
pub mod shuffle_sharding;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

pub use config::{ConfigError, Configuration};
use config::{LevelKind, Schema};
use matching::RequestDigest;
use queueset::QueueSet;

/// FNV-1a over the concatenated `parts`.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.iter().flat_map(|p| p.iter()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A level as it runs.
pub struct Level {
    /// Its name.
    pub name: String,
    /// Its UID, the `X-Kubernetes-PF-PriorityLevel-UID` header.
    pub uid: String,
    /// Its seats and queues; `None` for the exempt level.
    pub queues: Option<Arc<QueueSet>>,
}

/// The labels of the flow control gauges.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FlowLabels {
    /// The level's name.
    pub priority_level: String,
    /// The schema's name.
    pub flow_schema: String,
}

/// The labels of `apiserver_flowcontrol_rejected_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectedLabels {
    /// The level's name.
    pub priority_level: String,
    /// The schema's name.
    pub flow_schema: String,
    /// `queue-full`, `concurrency-limit` or `time-out`.
    pub reason: String,
}

/// The labels of `apiserver_flowcontrol_request_wait_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WaitLabels {
    /// The level's name.
    pub priority_level: String,
    /// The schema's name.
    pub flow_schema: String,
    /// `true` when the request went on to run, `false` when it was rejected.
    pub execute: String,
}

/// kube's buckets of `apiserver_flowcontrol_request_wait_duration_seconds`.
pub const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

fn wait_histogram() -> Histogram {
    Histogram::new(WAIT_BUCKETS)
}

/// `apiserver_flowcontrol_request_wait_duration_seconds`.
pub type WaitDurations = Family<WaitLabels, Histogram, fn() -> Histogram>;

/// kube's flow control metrics, registered in [`crate::apiserver::metrics`].
#[derive(Clone)]
pub struct FlowMetrics {
    /// `apiserver_flowcontrol_rejected_requests_total`.
    pub rejected: Family<RejectedLabels, Counter>,
    /// `apiserver_flowcontrol_dispatched_requests_total`: requests that went on to run
    /// (exempt ones included, as kube counts them).
    pub dispatched: Family<FlowLabels, Counter>,
    /// `apiserver_flowcontrol_request_wait_duration_seconds`: the time from arrival to run or
    /// rejection (0 for a request run at once, as kube observes it).
    pub wait: WaitDurations,
    /// `apiserver_flowcontrol_current_inqueue_requests`.
    pub inqueue: Family<FlowLabels, Gauge>,
    /// `apiserver_flowcontrol_current_executing_requests`.
    pub executing: Family<FlowLabels, Gauge>,
}

impl Default for FlowMetrics {
    fn default() -> Self {
        Self {
            rejected: Family::default(),
            dispatched: Family::default(),
            wait: Family::new_with_constructor(wait_histogram),
            inqueue: Family::default(),
            executing: Family::default(),
        }
    }
}

/// The flow control of one server: the configuration and every level's queues.
pub struct FlowControl {
    schemas: Vec<Schema>,
    levels: HashMap<String, Level>,
    queue_wait: Duration,
    metrics: FlowMetrics,
}

/// Where a request goes.
pub struct Classification<'a> {
    /// The schema it matched.
    pub schema: &'a Schema,
    /// The schema's level.
    pub level: &'a Level,
    /// Its flow's hash.
    pub flow_hash: u64,
}

impl FlowControl {
    /// Flow control for `config` over `server_seats` seats (at least 1) split by shares;
    /// a request waits in a queue at most `queue_wait` (kube waits a quarter of the request
    /// timeout).
    pub fn new(config: &Configuration, server_seats: usize, queue_wait: Duration) -> Arc<Self> {
        let server_seats = server_seats.max(1) as u64;
        let total: u64 = config
            .levels()
            .iter()
            .map(|l| match l.kind {
                LevelKind::Exempt { shares } | LevelKind::Limited { shares, .. } => {
                    u64::from(shares)
                }
            })
            .sum();
        let levels = config
            .levels()
            .iter()
            .map(|l| {
                let queues = match l.kind {
                    LevelKind::Exempt { .. } => None,
                    LevelKind::Limited { shares, queuing } => {
                        let seats = (server_seats * u64::from(shares)).div_ceil(total.max(1));
                        Some(QueueSet::new(
                            usize::try_from(seats).unwrap_or(usize::MAX),
                            queuing,
                        ))
                    }
                };
                let level = Level {
                    name: l.name.clone(),
                    uid: l.uid.clone(),
                    queues,
                };
                (l.name.clone(), level)
            })
            .collect();
        Arc::new(Self {
            schemas: config.schemas().to_vec(),
            levels,
            queue_wait,
            metrics: FlowMetrics::default(),
        })
    }

    /// The metrics, for [`crate::apiserver::metrics::ApiMetrics::register_flowcontrol`].
    pub fn metrics(&self) -> &FlowMetrics {
        &self.metrics
    }

    /// The longest a request waits in a queue.
    pub fn queue_wait(&self) -> Duration {
        self.queue_wait
    }

    /// The level named `name`.
    pub fn level(&self, name: &str) -> Option<&Level> {
        self.levels.get(name)
    }

    /// The first schema (by precedence, then name) matching `digest`, or the last one (kube's
    /// `catch-all`) when none does; `None` only if the configuration has no schema.
    pub fn classify(&self, digest: &RequestDigest) -> Option<Classification<'_>> {
        let schema = self
            .schemas
            .iter()
            .find(|s| matching::schema_matches(s, digest))
            .or_else(|| self.schemas.last())?;
        let level = self.levels.get(&schema.level)?;
        let distinguisher = matching::flow_distinguisher(schema, digest);
        Some(Classification {
            schema,
            level,
            flow_hash: matching::flow_hash(&schema.name, &distinguisher),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_seats_are_split_by_shares_rounding_up() {
        // kube-apiserver's defaults: 400 + 200 seats; the shares sum to 175 here.
        let fc = FlowControl::new(&Configuration::bootstrap(), 600, Duration::from_secs(15));
        let seats = |name: &str| {
            fc.level(name)
                .unwrap()
                .queues
                .as_ref()
                .map(|q| q.concurrency())
        };
        assert_eq!(seats("exempt"), None);
        assert_eq!(seats("leader-election"), Some(35));
        assert_eq!(seats("workload-high"), Some(138));
        assert_eq!(seats("workload-low"), Some(343));
        assert_eq!(seats("global-default"), Some(69));
        assert_eq!(seats("catch-all"), Some(18));
    }
}
