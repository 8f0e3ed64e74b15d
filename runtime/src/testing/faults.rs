// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Errors a test makes the in-process cluster answer: a verb on a resource fails once, N
//! times, or always, with a Status the test chooses (a 409 Conflict, a 500, a 429), before
//! the request reaches the registry. So a test can show that a reconciler retries a conflict,
//! backs off after an error, or reports a failed write in its status.

use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};

/// A verb as the API server's authorization names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH (any patch type, server-side apply included).
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

/// An injected failure: which requests it hits, how often, and the Status they get.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    verb: Verb,
    resource: String,
    remaining: Option<u32>,
    code: u16,
    reason: String,
    message: String,
}

impl Fault {
    /// Every `verb` on `resource` fails with 500 InternalError until [`Fault::times`] limits
    /// it. `resource` is the plural (`configmaps`), or the plural and a subresource
    /// (`databases/status`): a fault on `databases` does not hit `databases/status`.
    pub fn error(verb: Verb, resource: &str) -> Self {
        Self {
            verb,
            resource: resource.to_string(),
            remaining: None,
            code: 500,
            reason: "InternalError".into(),
            message: format!("Internal error occurred: injected by the test on {resource}"),
        }
    }

    /// A 409 Conflict, worded as the API server answers a write with a stale
    /// resourceVersion (the object's name is filled in per request).
    pub fn conflict(verb: Verb, resource: &str) -> Self {
        Self {
            code: 409,
            reason: "Conflict".into(),
            message: String::new(),
            ..Self::error(verb, resource)
        }
    }

    /// Answers with `code`, `reason` (`TooManyRequests`, `ServiceUnavailable`, ...) and
    /// `message` instead.
    pub fn status(mut self, code: u16, reason: &str, message: &str) -> Self {
        self.code = code;
        self.reason = reason.to_string();
        self.message = message.to_string();
        self
    }

    /// Fails only the next `n` matching requests.
    pub fn times(mut self, n: u32) -> Self {
        self.remaining = Some(n);
        self
    }

    /// Fails only the next matching request.
    pub fn once(self) -> Self {
        self.times(1)
    }
}

/// The faults a cluster holds, consumed as requests hit them.
#[derive(Debug, Default)]
pub(crate) struct Faults(Mutex<Vec<Fault>>);

impl Faults {
    pub(crate) fn add(&self, fault: Fault) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(fault);
    }

    /// The Status (code, body) for a request of `verb` on `resource` (`plural` or
    /// `plural/sub`) naming `name` in `group`, if a fault hits it; the fault's count goes
    /// down, and a spent fault is removed.
    pub(crate) fn hit(
        &self,
        verb: Verb,
        resource: &str,
        group: &str,
        name: &str,
    ) -> Option<(u16, Value)> {
        let mut faults = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = faults
            .iter()
            .position(|f| f.verb == verb && f.resource == resource)?;
        let fault = faults[at].clone();
        match &mut faults[at].remaining {
            Some(n) if *n <= 1 => {
                faults.remove(at);
            }
            Some(n) => *n -= 1,
            None => {}
        }
        let plural = resource.split('/').next().unwrap_or(resource);
        let qualified = if group.is_empty() {
            plural.to_string()
        } else {
            format!("{plural}.{group}")
        };
        let message = if fault.message.is_empty() {
            format!(
                "Operation cannot be fulfilled on {qualified} \"{name}\": {}",
                crate::apiserver::status::ApiError::MODIFIED
            )
        } else {
            fault.message
        };
        Some((
            fault.code,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": fault.reason, "code": fault.code,
                "details": {"name": name, "group": group, "kind": plural},
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_hits_its_verb_and_resource_as_often_as_told() {
        let faults = Faults::default();
        faults.add(Fault::conflict(Verb::Update, "databases").times(2));
        assert_eq!(
            faults.hit(Verb::Update, "databases/status", "example.com", "a"),
            None
        );
        assert_eq!(
            faults.hit(Verb::Patch, "databases", "example.com", "a"),
            None
        );
        let (code, body) = faults
            .hit(Verb::Update, "databases", "example.com", "a")
            .unwrap();
        assert_eq!(code, 409);
        assert_eq!(
            body["message"],
            "Operation cannot be fulfilled on databases.example.com \"a\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert!(
            faults
                .hit(Verb::Update, "databases", "example.com", "a")
                .is_some()
        );
        assert_eq!(
            faults.hit(Verb::Update, "databases", "example.com", "a"),
            None
        );
    }
}
