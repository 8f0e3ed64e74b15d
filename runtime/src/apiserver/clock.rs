// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The time the registry stamps objects with (`creationTimestamp`, `deletionTimestamp`): the
//! system clock, or a clock a test moves forward ([`Clock::manual`], the test cluster's
//! `advance`). Cheap to clone; clones share the same time.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The registry's clock: the system's, or a manual one whose time only moves when told.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    manual: Option<Arc<Mutex<jiff::Timestamp>>>,
}

impl Clock {
    /// The system clock (what an API server uses).
    pub fn system() -> Self {
        Self::default()
    }

    /// A clock standing at `start` until [`Clock::advance`] moves it.
    pub fn manual(start: jiff::Timestamp) -> Self {
        Self {
            manual: Some(Arc::new(Mutex::new(start))),
        }
    }

    /// The current time.
    pub fn now(&self) -> jiff::Timestamp {
        match &self.manual {
            Some(t) => *t.lock().unwrap_or_else(PoisonError::into_inner),
            None => jiff::Timestamp::now(),
        }
    }

    /// Moves a manual clock forward by `by`. Errors: this is the system clock, which no one
    /// moves, or the time would leave jiff's range.
    pub fn advance(&self, by: Duration) -> Result<(), String> {
        let Some(t) = &self.manual else {
            return Err("the system clock cannot be advanced; use Clock::manual".into());
        };
        let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
        let span = jiff::SignedDuration::try_from(by).map_err(|e| e.to_string())?;
        *t = t.checked_add(span).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The current time as the API server writes timestamps: RFC 3339, UTC, whole seconds.
    pub fn stamp(&self) -> String {
        self.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced_and_clones_share_it() {
        let start: jiff::Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        let clock = Clock::manual(start);
        let copy = clock.clone();
        assert_eq!(clock.stamp(), "2026-01-02T03:04:05Z");
        copy.advance(Duration::from_secs(3600 + 1)).unwrap();
        assert_eq!(clock.stamp(), "2026-01-02T04:04:06Z");
        assert!(Clock::system().advance(Duration::from_secs(1)).is_err());
    }
}
