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

//! Conversion of `CronJob` between its API versions, through the runtime's `Convert`
//! (`rsbuilder_runtime::webhook`, which serves the ConversionReview and keeps, byte for byte,
//! what a conversion does not change). `v1` is the hub: `v2` converts to it and back. The
//! versions differ only in `spec.schedule` (one string in `v1`, its five fields in `v2`);
//! every other field carries over by name.

use anyhow::bail;
use rsbuilder_runtime::webhook::{Conversion, Convert, carry_over};

use crate::api::v2::CronSchedule;

/// The hub version's type.
pub type Hub = crate::api::v1::CronJob;

/// The conversions of `CronJob`, which `src/main.rs` registers.
pub fn conversion() -> Conversion<Hub> {
    Conversion::new().spoke::<crate::api::v2::CronJob>()
}

impl Convert<Hub> for crate::api::v2::CronJob {
    fn to_hub(self) -> anyhow::Result<Hub> {
        let schedule = join(&self.spec.schedule);
        let mut value = serde_json::to_value(&self)?;
        value["spec"]["schedule"] = schedule.into();
        carry_over(&value)
    }

    fn from_hub(hub: Hub) -> anyhow::Result<Self> {
        let schedule = split(&hub.spec.schedule)?;
        let mut value = serde_json::to_value(&hub)?;
        value["spec"]["schedule"] = serde_json::to_value(schedule)?;
        carry_over(&value)
    }
}

/// The `v1` schedule of `v2`'s fields: the five joined by spaces, `*` for an absent one.
fn join(schedule: &CronSchedule) -> String {
    let field = |f: &Option<String>| f.clone().unwrap_or_else(|| "*".into());
    [
        field(&schedule.minute),
        field(&schedule.hour),
        field(&schedule.day_of_month),
        field(&schedule.month),
        field(&schedule.day_of_week),
    ]
    .join(" ")
}

/// The `v2` fields of a `v1` schedule. A nickname (`@hourly`) becomes the five fields it
/// stands for, so it comes back from `v2` as those fields. Errors: a schedule that is
/// neither five fields nor a known nickname (the validating webhook admits no other).
fn split(schedule: &str) -> anyhow::Result<CronSchedule> {
    let expanded = match schedule.trim().to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *".to_string(),
        "@monthly" => "0 0 1 * *".to_string(),
        "@weekly" => "0 0 * * 0".to_string(),
        "@daily" | "@midnight" => "0 0 * * *".to_string(),
        "@hourly" => "0 * * * *".to_string(),
        _ => schedule.to_string(),
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    let [minute, hour, day_of_month, month, day_of_week] = fields[..] else {
        bail!(
            "spec.schedule {schedule:?}: v2 holds a schedule of five fields, this one has {}",
            fields.len()
        );
    };
    let field = |f: &str| Some(f.to_string());
    Ok(CronSchedule {
        minute: field(minute),
        hour: field(hour),
        day_of_month: field(day_of_month),
        month: field(month),
        day_of_week: field(day_of_week),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spoke(schedule: serde_json::Value) -> crate::api::v2::CronJob {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v2",
            "kind": "CronJob",
            "metadata": {"name": "sample"},
            "spec": {
                "schedule": schedule,
                "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox"}]}}}},
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 60,
            },
            "status": {"lastScheduleTime": "2026-01-01T10:00:00Z"},
        }))
        .unwrap()
    }

    #[test]
    fn v2_round_trips_through_the_hub() {
        let v2 = spoke(serde_json::json!({
            "minute": "*/5", "hour": "9-17", "dayOfMonth": "*", "month": "*", "dayOfWeek": "1-5"
        }));
        let hub = v2.clone().to_hub().unwrap();
        assert_eq!(hub.spec.schedule, "*/5 9-17 * * 1-5");
        assert_eq!(hub.metadata.name.as_deref(), Some("sample"));
        assert_eq!(hub.spec.starting_deadline_seconds, Some(60));
        assert_eq!(
            hub.spec.concurrency_policy,
            Some(crate::api::v1::ConcurrencyPolicy::Forbid)
        );
        assert!(hub.status.as_ref().unwrap().last_schedule_time.is_some());
        let back = crate::api::v2::CronJob::from_hub(hub).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&v2).unwrap()
        );
    }

    #[test]
    fn absent_fields_are_every_value_in_v1() {
        let hub = spoke(serde_json::json!({"minute": "0"})).to_hub().unwrap();
        assert_eq!(hub.spec.schedule, "0 * * * *");
    }

    #[test]
    fn a_nickname_reads_as_its_five_fields_in_v2() {
        let mut hub = spoke(serde_json::json!({})).to_hub().unwrap();
        hub.spec.schedule = "@daily".into();
        let v2 = crate::api::v2::CronJob::from_hub(hub).unwrap();
        assert_eq!(join(&v2.spec.schedule), "0 0 * * *");
        assert_eq!(v2.spec.schedule.hour.as_deref(), Some("0"));
    }

    #[test]
    fn a_schedule_of_other_than_five_fields_does_not_convert() {
        let mut hub = spoke(serde_json::json!({})).to_hub().unwrap();
        hub.spec.schedule = "0 0 * * * *".into();
        let err = crate::api::v2::CronJob::from_hub(hub).unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.schedule \"0 0 * * * *\": v2 holds a schedule of five fields, this one has 6"
        );
    }
}
