// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! API priority and fairness, as kube-apiserver runs it (k8s.io/apiserver's
//! `util/flowcontrol` and `server/filters/priority-and-fairness.go`), at this server's scale:
//!
//! - [`config`]: FlowSchemas and PriorityLevelConfigurations (`flowcontrol.apiserver.k8s.io/v1`)
//!   from a YAML file, checked at start; the default is kube's bootstrap configuration reduced
//!   to what reaches an aggregated server (`bootstrap.yaml`);
//! - [`cluster`]: the same objects listed and watched in the cluster, each change swapped in
//!   while requests run ([`FlowControl::reconfigure`]);
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
//! (every request takes one seat).

pub mod cluster;
pub mod config;
pub mod filter;
pub mod matching;
pub mod queueset;
pub mod shuffle_sharding;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
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
#[derive(Clone)]
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

/// One configuration as it runs: the schemas in the order they are tried and the levels by
/// name. A request keeps the generation it was classified under until it is answered.
pub struct Generation {
    config: Configuration,
    levels: HashMap<String, Level>,
}

impl Generation {
    /// The configuration it runs.
    pub fn configuration(&self) -> &Configuration {
        &self.config
    }

    /// The level named `name`.
    pub fn level(&self, name: &str) -> Option<&Level> {
        self.levels.get(name)
    }
}

/// The flow control of one server: the configuration running now and every level's queues.
/// [`Self::reconfigure`] swaps in another configuration while requests run.
pub struct FlowControl {
    current: RwLock<Arc<Generation>>,
    server_seats: u64,
    queue_wait: Duration,
    metrics: FlowMetrics,
    applied: tokio::sync::watch::Sender<u64>,
}

/// Where a request goes: its schema and level, in the generation it was classified under.
pub struct Classification {
    generation: Arc<Generation>,
    schema: usize,
    /// Its flow's hash.
    pub flow_hash: u64,
}

impl Classification {
    /// The schema it matched.
    pub fn schema(&self) -> &Schema {
        &self.generation.config.schemas()[self.schema]
    }

    /// The schema's level (it exists: a [`Configuration`] has no schema without its level).
    pub fn level(&self) -> &Level {
        &self.generation.levels[&self.schema().level]
    }
}

/// The seats of a limited level of `shares` out of `total`: kube's nominal concurrency limit,
/// `ceil(server_seats * shares / total)`.
fn nominal_seats(server_seats: u64, shares: u32, total: u64) -> usize {
    let seats = (server_seats * u64::from(shares)).div_ceil(total.max(1));
    usize::try_from(seats).unwrap_or(usize::MAX)
}

impl FlowControl {
    /// Flow control for `config` over `server_seats` seats (at least 1) split by shares;
    /// a request waits in a queue at most `queue_wait` (kube waits a quarter of the request
    /// timeout).
    pub fn new(config: &Configuration, server_seats: usize, queue_wait: Duration) -> Arc<Self> {
        let server_seats = server_seats.max(1) as u64;
        let generation = Self::generation(config, server_seats, None);
        Arc::new(Self {
            current: RwLock::new(Arc::new(generation)),
            server_seats,
            queue_wait,
            metrics: FlowMetrics::default(),
            applied: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The levels of `config` with their seats, reusing the queue sets of `old` as kube's
    /// config controller keeps a level's queues across a change: a limited level of the same
    /// name and the same queuing (limit response, queues, hand size, queue length) keeps its
    /// [`QueueSet`] and takes its new seats; any other level gets a new one.
    fn generation(
        config: &Configuration,
        server_seats: u64,
        old: Option<&Generation>,
    ) -> Generation {
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
                        let seats = nominal_seats(server_seats, shares, total);
                        let kept = old
                            .and_then(|g| g.levels.get(&l.name))
                            .and_then(|o| o.queues.clone())
                            .filter(|q| q.queuing() == queuing);
                        Some(match kept {
                            Some(q) => {
                                q.set_concurrency(seats);
                                q
                            }
                            None => QueueSet::new(seats, queuing),
                        })
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
        Generation {
            config: config.clone(),
            levels,
        }
    }

    /// Runs `config` from now on, as kube's config controller switches to a new
    /// configuration: requests classified after this call match its schemas; requests already
    /// classified keep their schema, their level and their seat or place in a queue until they
    /// are answered. A level that is gone, or whose queuing changed, drains its requests in its
    /// old queues, which are dropped when the last of them ends. Returns `false` (and changes
    /// nothing) when `config` is the one running.
    pub fn reconfigure(&self, config: &Configuration) -> bool {
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        if current.config == *config {
            return false;
        }
        let next = Self::generation(config, self.server_seats, Some(&current));
        *current = Arc::new(next);
        drop(current);
        self.applied.send_modify(|n| *n += 1);
        true
    }

    /// Counts the configurations applied by [`Self::reconfigure`]: the value changes each time
    /// one is (for tests and for callers that wait for a change).
    pub fn applied(&self) -> tokio::sync::watch::Receiver<u64> {
        self.applied.subscribe()
    }

    /// The configuration running now.
    pub fn current(&self) -> Arc<Generation> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The metrics, for [`crate::apiserver::metrics::ApiMetrics::register_flowcontrol`].
    pub fn metrics(&self) -> &FlowMetrics {
        &self.metrics
    }

    /// The longest a request waits in a queue.
    pub fn queue_wait(&self) -> Duration {
        self.queue_wait
    }

    /// The level named `name` in the configuration running now.
    pub fn level(&self, name: &str) -> Option<Level> {
        self.current().level(name).cloned()
    }

    /// The seats of the level named `name` in the configuration running now (`None` for an
    /// exempt level or a level it does not have).
    pub fn seats(&self, name: &str) -> Option<usize> {
        let current = self.current();
        current
            .level(name)?
            .queues
            .as_ref()
            .map(|q| q.concurrency())
    }

    /// The first schema (by precedence, then name) matching `digest` in the configuration
    /// running now, or the last one (kube's `catch-all`) when none does; `None` only if the
    /// configuration has no schema.
    pub fn classify(&self, digest: &RequestDigest) -> Option<Classification> {
        let generation = self.current();
        let schemas = generation.config.schemas();
        let index = schemas
            .iter()
            .position(|s| matching::schema_matches(s, digest))
            .or_else(|| schemas.len().checked_sub(1))?;
        let schema = &schemas[index];
        generation.levels.get(&schema.level)?;
        let distinguisher = matching::flow_distinguisher(schema, digest);
        let flow_hash = matching::flow_hash(&schema.name, &distinguisher);
        Some(Classification {
            generation,
            schema: index,
            flow_hash,
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
        let seats = |name: &str| fc.seats(name);
        assert_eq!(seats("exempt"), None);
        assert_eq!(seats("leader-election"), Some(35));
        assert_eq!(seats("workload-high"), Some(138));
        assert_eq!(seats("workload-low"), Some(343));
        assert_eq!(seats("global-default"), Some(69));
        assert_eq!(seats("catch-all"), Some(18));
    }

    /// Levels `work` (shares `work_shares`, none when 0; queues of `queues`, hands of 1) and
    /// `other` (shares 10, `Reject`); the FlowSchema `alice` (UID `schema_uid`) sends alice's
    /// `get /x` to `level`. `catch-all` (5 shares) is added.
    fn config(work_shares: u32, queues: u32, level: &str, schema_uid: &str) -> Configuration {
        let work = format!(
            r#"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: work, uid: work-uid}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: {work_shares}
    limitResponse: {{type: Queue, queuing: {{queues: {queues}, handSize: 1, queueLengthLimit: 10}}}}
---
"#
        );
        let work = if work_shares == 0 { "" } else { work.as_str() };
        Configuration::from_yaml(&format!(
            r#"{work}
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: other, uid: other-uid}}
spec:
  type: Limited
  limited: {{nominalConcurrencyShares: 10, limitResponse: {{type: Reject}}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: alice, uid: {schema_uid}}}
spec:
  matchingPrecedence: 100
  priorityLevelConfiguration: {{name: {level}}}
  rules:
  - subjects: [{{kind: User, user: {{name: alice}}}}]
    nonResourceRules: [{{verbs: [get], nonResourceURLs: [/x]}}]
"#
        ))
        .unwrap()
    }

    fn alice() -> RequestDigest {
        RequestDigest {
            user: "alice".into(),
            groups: vec!["system:authenticated".into()],
            attributes: crate::apiserver::request::attributes(&axum::http::Method::GET, "/x", None),
        }
    }

    fn seat(c: &Classification) -> queueset::Seat {
        match c
            .level()
            .queues
            .as_ref()
            .unwrap()
            .start(c.flow_hash)
            .unwrap()
        {
            queueset::Admission::Run(seat) => seat,
            queueset::Admission::Queued(_) => panic!("queued"),
        }
    }

    fn queued(c: &Classification) -> queueset::Waiting {
        match c
            .level()
            .queues
            .as_ref()
            .unwrap()
            .start(c.flow_hash)
            .unwrap()
        {
            queueset::Admission::Queued(w) => w,
            queueset::Admission::Run(_) => panic!("ran at once"),
        }
    }

    #[test]
    fn requests_classified_before_a_change_finish_under_the_old_level() {
        // One seat: each level gets ceil(1 * shares / 25) = 1.
        let fc = FlowControl::new(&config(10, 8, "work", "uid-a"), 1, Duration::from_secs(15));
        let mut applied = fc.applied();
        let before = fc.classify(&alice()).unwrap();
        assert_eq!(
            (before.schema().uid.as_str(), before.level().name.as_str()),
            ("uid-a", "work")
        );
        let running = seat(&before);
        let mut waiting = queued(&fc.classify(&alice()).unwrap());
        let old_queues = before.level().queues.clone().unwrap();
        assert_eq!(old_queues.counts(), (1, 1));

        // The schema now sends alice to `other`, under another UID; `work` is gone.
        assert!(fc.reconfigure(&config(0, 8, "other", "uid-b")));
        assert!(fc.level("work").is_none());
        assert!(applied.has_changed().unwrap());
        assert_eq!(*applied.borrow_and_update(), 1);

        let after = fc.classify(&alice()).unwrap();
        assert_eq!(
            (
                after.schema().uid.as_str(),
                after.level().name.as_str(),
                after.level().uid.as_str()
            ),
            ("uid-b", "other", "other-uid")
        );
        // The request classified before keeps its schema, level and queue.
        assert_eq!(
            (before.schema().uid.as_str(), before.level().name.as_str()),
            ("uid-a", "work")
        );
        assert_eq!(old_queues.counts(), (1, 1));
        assert!(waiting.try_seat().is_none());
        drop(running);
        // The freed seat of the old level goes to the request waiting in it.
        let next = waiting.try_seat().expect("the waiting request runs");
        assert_eq!(old_queues.counts(), (0, 1));
        drop(next);
        assert_eq!(old_queues.counts(), (0, 0));
        // `other` is a level of its own, with its own seat.
        let _other = seat(&after);
        assert!(
            fc.classify(&alice())
                .unwrap()
                .level()
                .queues
                .as_ref()
                .unwrap()
                .start(0)
                .is_err()
        );
    }

    #[test]
    fn a_level_that_stays_keeps_its_queues_and_takes_its_new_seats() {
        // Four seats: work gets ceil(4 * 10 / 25) = 2, then ceil(4 * 30 / 45) = 3.
        let fc = FlowControl::new(&config(10, 8, "work", "uid-a"), 4, Duration::from_secs(15));
        let c = fc.classify(&alice()).unwrap();
        let queues = c.level().queues.clone().unwrap();
        let (_a, _b) = (seat(&c), seat(&c));
        let mut waiting = queued(&c);
        assert_eq!(queues.counts(), (1, 2));

        assert!(fc.reconfigure(&config(30, 8, "work", "uid-a")));
        let kept = fc.level("work").unwrap().queues.unwrap();
        assert!(Arc::ptr_eq(&kept, &queues));
        assert_eq!(kept.concurrency(), 3);
        let _c = waiting
            .try_seat()
            .expect("the third seat goes to the waiting request");
        assert_eq!(queues.counts(), (0, 3));

        // Other queuing (16 queues): new queues; the old ones keep their requests.
        assert!(fc.reconfigure(&config(30, 16, "work", "uid-a")));
        let fresh = fc.level("work").unwrap().queues.unwrap();
        assert!(!Arc::ptr_eq(&fresh, &queues));
        assert_eq!((fresh.counts(), queues.counts()), ((0, 0), (0, 3)));

        // The same configuration again changes nothing.
        assert!(!fc.reconfigure(&config(30, 16, "work", "uid-a")));
        assert!(Arc::ptr_eq(
            &fc.level("work").unwrap().queues.unwrap(),
            &fresh
        ));
    }
}
