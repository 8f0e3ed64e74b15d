// Copyright 2026.
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

//! The `CronJob` controller: runs each `CronJob`'s Job template on its schedule.
//!
//! Each reconciliation lists the Jobs the `CronJob` owns, records the running ones and the
//! latest schedule time in its status, deletes finished Jobs beyond the history limits, and,
//! unless suspended, starts the run that is due (if its starting deadline has not passed and
//! the concurrency policy lets it), then asks to be reconciled again at the next run.
//!
//! The decisions are plain functions of the `CronJob`, its Jobs and the time ([`plan`]), so
//! the tests below check them without a cluster; [`CronJobReconciler::apply`] only reads and
//! writes. The runtime ([`rsbuilder_runtime::controller`]) runs it with the retry policy,
//! events and metrics.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::tz::TimeZone;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use rsbuilder_runtime::controller::{Context, Reconciler};

use crate::api::v1::{ConcurrencyPolicy, CronJob};

// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/// The annotation on each Job that records the time it was scheduled for (RFC 3339). The
/// controller reads it back to know the latest run, since it never trusts its own status.
pub const SCHEDULED_AT: &str = "batch.tutorial.kubebuilder.io/scheduled-at";

/// More missed runs than this since the last one (or the starting deadline) is an error: the
/// clock jumped, or the controller was away for long; set `startingDeadlineSeconds`.
pub const MAX_MISSED_RUNS: usize = 100;

/// Succeeded Jobs kept when `successfulJobsHistoryLimit` is absent.
pub const DEFAULT_SUCCESSFUL_HISTORY: i32 = 3;
/// Failed Jobs kept when `failedJobsHistoryLimit` is absent.
pub const DEFAULT_FAILED_HISTORY: i32 = 1;

/// Reconciles `CronJob` objects.
pub struct CronJobReconciler;

impl Reconciler for CronJobReconciler {
    type Kind = CronJob;
    const NAME: &'static str = "cronjob-controller";
    // Nothing outside the cluster to release: the Jobs are owned and garbage-collected.
    const FINALIZER: Option<&'static str> = None;

    async fn apply(&self, cron_job: Arc<CronJob>, ctx: &Context) -> anyhow::Result<Action> {
        let namespace = cron_job
            .namespace()
            .context("a CronJob is namespaced, but this one has no namespace")?;
        let uid = cron_job.uid().unwrap_or_default();
        let jobs = Api::<Job>::namespaced(ctx.client.clone(), &namespace);
        let children: Vec<Job> = jobs
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|job| is_owned_by(job, &uid))
            .collect();
        let now = Timestamp::now();
        let plan = plan(&cron_job, &children, now)?;

        // The running Jobs and the latest run, as observed before acting (a Job created
        // below shows up at the next reconciliation, which its watch event starts).
        let cron_jobs = Api::<CronJob>::namespaced(ctx.client.clone(), &namespace);
        let status = serde_json::json!({"status": {
            "active": plan.active,
            "lastScheduleTime": plan.last_schedule_time,
        }});
        let params = PatchParams {
            field_manager: Some(Self::NAME.into()),
            ..PatchParams::default()
        };
        cron_jobs
            .patch_status(&cron_job.name_any(), &params, &Patch::Merge(&status))
            .await?;

        for name in &plan.delete {
            delete_job(&jobs, name).await?;
        }

        let ready = cron_job
            .status
            .as_ref()
            .and_then(|status| status.conditions.iter().find(|c| c.type_ == "Ready"));
        let (is_ready, reason, message, action) = match plan.run {
            Run::Suspended => (
                true,
                "Suspended",
                "suspended: no new runs".to_string(),
                Action::await_change(),
            ),
            Run::Unschedulable(why) => (false, "InvalidSchedule", why, Action::await_change()),
            Run::Wait { next } => (
                true,
                "Scheduled",
                format!("next run at {next}"),
                requeue_at(now, next),
            ),
            Run::Skip { missed, next, why } => (
                true,
                "Skipped",
                format!("the run of {missed} was skipped: {why}; next run at {next}"),
                requeue_at(now, next),
            ),
            Run::Start { job, replace, next } => {
                for name in &replace {
                    delete_job(&jobs, name).await?;
                }
                let name = job.name_any();
                let post = PostParams {
                    field_manager: Some(Self::NAME.into()),
                    ..PostParams::default()
                };
                match jobs.create(&post, &job).await {
                    // Created by an earlier reconciliation whose status write was lost.
                    Err(kube::Error::Api(status)) if status.is_already_exists() => {}
                    result => {
                        result.with_context(|| format!("creating the Job {name}"))?;
                    }
                }
                (
                    true,
                    "Started",
                    format!("started the Job {name}; next run at {next}"),
                    requeue_at(now, next),
                )
            }
        };
        ctx.set_ready(cron_job.as_ref(), ready, is_ready, reason, &message)
            .await?;
        Ok(action)
    }

    // Reconcile a `CronJob` again when one of its Jobs changes (Kubebuilder's `Owns()`).
    fn watches(
        &self,
        controller: kube::runtime::Controller<CronJob>,
        mgr: &rsbuilder_runtime::Manager,
    ) -> kube::runtime::Controller<CronJob> {
        controller.owns(mgr.api::<Job>(), Default::default())
    }
}

/// What one reconciliation does, decided by [`plan`].
#[derive(Debug)]
pub struct Plan {
    /// References to the Jobs still running, for `status.active`.
    pub active: Vec<ObjectReference>,
    /// The latest `SCHEDULED_AT` of the Jobs, for `status.lastScheduleTime`.
    pub last_schedule_time: Option<Time>,
    /// Finished Jobs beyond the history limits, oldest first.
    pub delete: Vec<String>,
    /// Whether a run starts now.
    pub run: Run,
}

/// The decision about the run that may be due.
#[derive(Debug)]
pub enum Run {
    /// `spec.suspend` is true: nothing starts, and only a change of the object wakes it.
    Suspended,
    /// The schedule cannot be evaluated (the message says why); fix the object.
    Unschedulable(String),
    /// No run is due; the next one is at `next`.
    Wait { next: Timestamp },
    /// The run due at `missed` does not start, for the reason `why` (policy `Forbid`).
    Skip {
        missed: Timestamp,
        next: Timestamp,
        why: String,
    },
    /// Create `job`, after deleting the running Jobs `replace` (policy `Replace`).
    Start {
        job: Box<Job>,
        replace: Vec<String>,
        next: Timestamp,
    },
}

/// Decides what to do with `cron_job`, whose Jobs are `children`, at the time `now`.
/// Errors: only a `CronJob` without name or UID, which the API server never sends.
pub fn plan(cron_job: &CronJob, children: &[Job], now: Timestamp) -> anyhow::Result<Plan> {
    let mut active = Vec::new();
    let mut active_names = Vec::new();
    let mut succeeded = Vec::new();
    let mut failed = Vec::new();
    for job in children {
        match finished(job) {
            None => {
                active.push(reference(job));
                active_names.push(job.name_any());
            }
            Some(Finished::Complete) => succeeded.push(job),
            Some(Finished::Failed) => failed.push(job),
        }
    }
    let last_schedule_time = children.iter().filter_map(scheduled_time).max().map(Time);

    let spec = &cron_job.spec;
    let mut delete = beyond_limit(
        &failed,
        spec.failed_jobs_history_limit
            .unwrap_or(DEFAULT_FAILED_HISTORY),
    );
    delete.extend(beyond_limit(
        &succeeded,
        spec.successful_jobs_history_limit
            .unwrap_or(DEFAULT_SUCCESSFUL_HISTORY),
    ));

    let run = if spec.suspend == Some(true) {
        Run::Suspended
    } else {
        match decide_run(cron_job, last_schedule_time.as_ref(), &active_names, now)? {
            Ok(run) => run,
            Err(why) => Run::Unschedulable(why),
        }
    };
    Ok(Plan {
        active,
        last_schedule_time,
        delete,
        run,
    })
}

/// The run decision for a `CronJob` that is not suspended: the outer error is a malformed
/// object, the inner one a schedule that cannot be evaluated.
fn decide_run(
    cron_job: &CronJob,
    last_schedule_time: Option<&Time>,
    active: &[String],
    now: Timestamp,
) -> anyhow::Result<Result<Run, String>> {
    let spec = &cron_job.spec;
    let cron = match parse_schedule(&spec.schedule) {
        Ok(cron) => cron,
        Err(why) => return Ok(Err(why)),
    };
    // Runs are counted from the last one, or from the object's creation. A starting
    // deadline bounds how far back a missed run still counts, so a run older than the
    // deadline is never found, and never starts.
    let mut earliest = last_schedule_time
        .or(cron_job.metadata.creation_timestamp.as_ref())
        .map_or(now, |time| time.0);
    let deadline = spec
        .starting_deadline_seconds
        .map(SignedDuration::from_secs);
    if let Some(deadline) = deadline
        && let Ok(bound) = now.checked_sub(deadline)
    {
        earliest = earliest.max(bound);
    }
    let (missed, next) = match runs_between(&cron, earliest, now) {
        Ok(runs) => runs,
        Err(why) => return Ok(Err(why)),
    };
    let Some(missed) = missed else {
        return Ok(Ok(Run::Wait { next }));
    };
    let policy = spec.concurrency_policy.unwrap_or_default();
    if policy == ConcurrencyPolicy::Forbid && !active.is_empty() {
        let why = format!(
            "the policy Forbid and the running Job {}",
            active.join(", ")
        );
        return Ok(Ok(Run::Skip { missed, next, why }));
    }
    let replace = if policy == ConcurrencyPolicy::Replace {
        active.to_vec()
    } else {
        Vec::new()
    };
    Ok(Ok(Run::Start {
        job: Box::new(job_for(cron_job, missed)?),
        replace,
        next,
    }))
}

/// Parses a schedule as the controller and the validating webhook read it: five fields
/// (minute, hour, day of month, month, day of week) or a nickname (`@hourly`, `@daily`, ...),
/// without seconds or years. Errors: croner's message, with the schedule.
pub fn parse_schedule(schedule: &str) -> Result<Cron, String> {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(schedule)
        .map_err(|e| format!("cannot parse the schedule {schedule:?}: {e}"))
}

/// The latest run of `cron` after `earliest` and at or before `now` (none if no run fell in
/// between), and the first run after `now`, all in UTC. Errors: more than
/// [`MAX_MISSED_RUNS`] runs in between, or a schedule with no next run.
pub fn runs_between(
    cron: &Cron,
    earliest: Timestamp,
    now: Timestamp,
) -> Result<(Option<Timestamp>, Timestamp), String> {
    let next_after = |time: Timestamp| {
        cron.find_next_occurrence(&time.to_zoned(TimeZone::UTC), false)
            .map(|zoned| zoned.timestamp())
            .map_err(|e| format!("no run after {time}: {e}"))
    };
    let mut missed = None;
    let mut count = 0;
    let mut time = next_after(earliest)?;
    while time <= now {
        count += 1;
        if count > MAX_MISSED_RUNS {
            return Err(format!(
                "more than {MAX_MISSED_RUNS} runs were missed since {earliest}: set or lower \
                 spec.startingDeadlineSeconds, or check the clock"
            ));
        }
        missed = Some(time);
        time = next_after(time)?;
    }
    Ok((missed, time))
}

/// The Job of the run scheduled at `scheduled`: the template's metadata and spec, named
/// `<cronjob>-<unix seconds>` (so a run is created once), with the [`SCHEDULED_AT`]
/// annotation and `cron_job` as its controlling owner. Errors: `cron_job` has no name or UID.
pub fn job_for(cron_job: &CronJob, scheduled: Timestamp) -> anyhow::Result<Job> {
    let template = &cron_job.spec.job_template;
    let owner = cron_job
        .controller_owner_ref(&())
        .context("the CronJob has no name or UID")?;
    let mut metadata = template.metadata.clone().unwrap_or_default();
    metadata.name = Some(format!("{}-{}", cron_job.name_any(), scheduled.as_second()));
    metadata.namespace = cron_job.namespace();
    metadata
        .annotations
        .get_or_insert_default()
        .insert(SCHEDULED_AT.into(), scheduled.to_string());
    metadata.owner_references = Some(vec![owner]);
    Ok(Job {
        metadata,
        spec: template.spec.clone(),
        status: None,
    })
}

/// How a Job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    Complete,
    Failed,
}

/// Whether `job` has finished: its `Complete` or `Failed` condition is `True`. `None`: it
/// still runs.
pub fn finished(job: &Job) -> Option<Finished> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .filter(|c| c.status == "True")
        .find_map(|c| match c.type_.as_str() {
            "Complete" => Some(Finished::Complete),
            "Failed" => Some(Finished::Failed),
            _ => None,
        })
}

/// The time `job` was scheduled for, from its [`SCHEDULED_AT`] annotation; `None` when the
/// annotation is absent or not an RFC 3339 time.
pub fn scheduled_time(job: &Job) -> Option<Timestamp> {
    job.annotations().get(SCHEDULED_AT)?.parse().ok()
}

/// The names of the oldest `jobs` (by start time; never started counts as oldest) beyond
/// the newest `limit`.
fn beyond_limit(jobs: &[&Job], limit: i32) -> Vec<String> {
    let keep = usize::try_from(limit).unwrap_or(0);
    let mut jobs = jobs.to_vec();
    jobs.sort_by_key(|job| job.status.as_ref().and_then(|s| s.start_time.clone()));
    let excess = jobs.len().saturating_sub(keep);
    jobs[..excess].iter().map(|job| job.name_any()).collect()
}

fn is_owned_by(job: &Job, uid: &str) -> bool {
    job.owner_references()
        .iter()
        .any(|owner| owner.controller == Some(true) && owner.uid == uid)
}

fn reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".into()),
        kind: Some("Job".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

fn requeue_at(now: Timestamp, next: Timestamp) -> Action {
    Action::requeue(Duration::try_from(now.duration_until(next)).unwrap_or_default())
}

/// Deletes a Job and, in the background, its Pods; a Job already gone is fine.
async fn delete_job(jobs: &Api<Job>, name: &str) -> anyhow::Result<()> {
    match jobs.delete(name, &DeleteParams::background()).await {
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        result => result
            .map(|_| ())
            .with_context(|| format!("deleting the Job {name}")),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};

    use super::*;
    use crate::api::v1::CronJobSpec;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// A `CronJob` created at 10:00 that runs at minute 0 of every hour.
    fn new_cron_job(spec: CronJobSpec) -> CronJob {
        let mut cron_job = CronJob::new("nightly", spec);
        cron_job.metadata.namespace = Some("default".into());
        cron_job.metadata.uid = Some("uid-1".into());
        cron_job.metadata.creation_timestamp = Some(Time(at("2026-01-01T10:00:00Z")));
        cron_job
    }

    fn hourly() -> CronJobSpec {
        CronJobSpec {
            schedule: "0 * * * *".into(),
            ..CronJobSpec::default()
        }
    }

    /// A Job of `cron_job` scheduled at `scheduled`, started then, ended as `end` says.
    fn job(cron_job: &CronJob, scheduled: &str, end: Option<&str>) -> Job {
        let mut job = job_for(cron_job, at(scheduled)).unwrap();
        let conditions = end.map(|type_| {
            vec![JobCondition {
                type_: type_.into(),
                status: "True".into(),
                ..JobCondition::default()
            }]
        });
        job.status = Some(JobStatus {
            start_time: Some(Time(at(scheduled))),
            conditions,
            ..JobStatus::default()
        });
        job
    }

    #[test]
    fn the_schedule_takes_five_fields_or_a_nickname() {
        assert!(parse_schedule("*/5 * * * *").is_ok());
        assert!(parse_schedule("@hourly").is_ok());
        let err = parse_schedule("0 0 * * * *").unwrap_err();
        assert!(
            err.starts_with(r#"cannot parse the schedule "0 0 * * * *": "#),
            "{err}"
        );
        assert!(parse_schedule("61 * * * *").is_err());
        assert!(parse_schedule("").is_err());
    }

    #[test]
    fn the_next_run_follows_the_schedule() {
        let cron = parse_schedule("30 9 * * *").unwrap();
        let (missed, next) = runs_between(
            &cron,
            at("2026-01-01T09:31:00Z"),
            at("2026-01-01T12:00:00Z"),
        )
        .unwrap();
        assert_eq!(missed, None);
        assert_eq!(next, at("2026-01-02T09:30:00Z"));
    }

    #[test]
    fn the_latest_missed_run_is_the_one_to_start() {
        let cron = parse_schedule("0 * * * *").unwrap();
        let (missed, next) = runs_between(
            &cron,
            at("2026-01-01T10:00:00Z"),
            at("2026-01-01T13:20:00Z"),
        )
        .unwrap();
        assert_eq!(missed, Some(at("2026-01-01T13:00:00Z")));
        assert_eq!(next, at("2026-01-01T14:00:00Z"));
    }

    #[test]
    fn more_than_a_hundred_missed_runs_is_an_error() {
        let cron = parse_schedule("* * * * *").unwrap();
        let err = runs_between(
            &cron,
            at("2026-01-01T10:00:00Z"),
            at("2026-01-01T11:41:00Z"),
        )
        .unwrap_err();
        assert!(err.starts_with("more than 100 runs were missed since 2026-01-01T10:00:00Z"));
        let (missed, _) = runs_between(
            &cron,
            at("2026-01-01T10:00:00Z"),
            at("2026-01-01T11:40:00Z"),
        )
        .unwrap();
        assert_eq!(missed, Some(at("2026-01-01T11:40:00Z")));
    }

    #[test]
    fn a_due_run_creates_an_owned_job_named_after_its_time() {
        let cron_job = new_cron_job(hourly());
        let plan = plan(&cron_job, &[], at("2026-01-01T11:00:05Z")).unwrap();
        let Run::Start { job, replace, next } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert_eq!(job.name_any(), "nightly-1767265200");
        assert_eq!(job.annotations()[SCHEDULED_AT], "2026-01-01T11:00:00Z");
        let owner = &job.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("CronJob", "uid-1")
        );
        assert_eq!(owner.controller, Some(true));
        assert!(replace.is_empty());
        assert_eq!(next, at("2026-01-01T12:00:00Z"));
    }

    #[test]
    fn no_run_is_due_right_after_the_last_one() {
        let cron_job = new_cron_job(hourly());
        let done = job(&cron_job, "2026-01-01T11:00:00Z", Some("Complete"));
        let plan = plan(&cron_job, &[done], at("2026-01-01T11:30:00Z")).unwrap();
        assert_eq!(
            plan.last_schedule_time,
            Some(Time(at("2026-01-01T11:00:00Z")))
        );
        assert!(plan.active.is_empty());
        let Run::Wait { next } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert_eq!(next, at("2026-01-01T12:00:00Z"));
        assert_eq!(
            requeue_at(at("2026-01-01T11:30:00Z"), next),
            Action::requeue(Duration::from_secs(30 * 60))
        );
    }

    #[test]
    fn a_run_older_than_the_starting_deadline_does_not_start() {
        let cron_job = new_cron_job(CronJobSpec {
            starting_deadline_seconds: Some(30),
            ..hourly()
        });
        // The window [now - 30 s, now] holds the run of 11:00:00 until 11:00:30.
        let plan = plan(&cron_job, &[], at("2026-01-01T11:00:20Z")).unwrap();
        assert!(matches!(plan.run, Run::Start { .. }), "{:?}", plan.run);
        let plan = super::plan(&cron_job, &[], at("2026-01-01T11:00:40Z")).unwrap();
        let Run::Wait { next } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert_eq!(next, at("2026-01-01T12:00:00Z"));
    }

    #[test]
    fn forbid_skips_a_run_while_a_job_runs_and_replace_deletes_it() {
        let now = at("2026-01-01T12:00:05Z");
        let mut cron_job = new_cron_job(CronJobSpec {
            concurrency_policy: Some(ConcurrencyPolicy::Forbid),
            ..hourly()
        });
        let running = job(&cron_job, "2026-01-01T11:00:00Z", None);
        let plan = plan(&cron_job, std::slice::from_ref(&running), now).unwrap();
        assert_eq!(plan.active.len(), 1);
        assert_eq!(plan.active[0].name.as_deref(), Some("nightly-1767265200"));
        let Run::Skip { missed, why, .. } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert_eq!(missed, at("2026-01-01T12:00:00Z"));
        assert_eq!(
            why,
            "the policy Forbid and the running Job nightly-1767265200"
        );

        cron_job.spec.concurrency_policy = Some(ConcurrencyPolicy::Replace);
        let plan = super::plan(&cron_job, std::slice::from_ref(&running), now).unwrap();
        let Run::Start { job, replace, .. } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert_eq!(replace, ["nightly-1767265200"]);
        assert_eq!(job.name_any(), "nightly-1767268800");

        cron_job.spec.concurrency_policy = None;
        let plan = super::plan(&cron_job, &[running], now).unwrap();
        let Run::Start { replace, .. } = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert!(replace.is_empty(), "Allow runs Jobs side by side");
    }

    #[test]
    fn a_suspended_cron_job_starts_nothing_but_still_cleans_up() {
        let cron_job = new_cron_job(CronJobSpec {
            suspend: Some(true),
            failed_jobs_history_limit: Some(0),
            ..hourly()
        });
        let failed = job(&cron_job, "2026-01-01T11:00:00Z", Some("Failed"));
        let plan = plan(&cron_job, &[failed], at("2026-01-01T12:00:05Z")).unwrap();
        assert!(matches!(plan.run, Run::Suspended), "{:?}", plan.run);
        assert_eq!(plan.delete, ["nightly-1767265200"]);
    }

    #[test]
    fn history_keeps_the_newest_finished_jobs_up_to_the_limits() {
        let cron_job = new_cron_job(hourly());
        let children: Vec<Job> = (1..=5)
            .map(|hour| {
                let end = if hour % 2 == 0 { "Failed" } else { "Complete" };
                job(&cron_job, &format!("2026-01-01T0{hour}:00:00Z"), Some(end))
            })
            .collect();
        let plan = plan(&cron_job, &children, at("2026-01-01T05:30:00Z")).unwrap();
        // Failed at 2 and 4: the default limit 1 keeps 4. Succeeded at 1, 3, 5: 3 are kept.
        assert_eq!(
            plan.delete,
            [format!(
                "nightly-{}",
                at("2026-01-01T02:00:00Z").as_second()
            )]
        );
        assert_eq!(
            plan.last_schedule_time,
            Some(Time(at("2026-01-01T05:00:00Z")))
        );
    }

    #[test]
    fn an_unparsable_schedule_is_reported_not_retried() {
        let cron_job = new_cron_job(CronJobSpec {
            schedule: "every hour".into(),
            ..CronJobSpec::default()
        });
        let plan = plan(&cron_job, &[], at("2026-01-01T12:00:00Z")).unwrap();
        let Run::Unschedulable(why) = plan.run else {
            panic!("{:?}", plan.run)
        };
        assert!(
            why.starts_with(r#"cannot parse the schedule "every hour""#),
            "{why}"
        );
    }
}
