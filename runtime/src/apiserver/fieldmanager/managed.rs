// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! `metadata.managedFields`: who owns which fields, kept on every write as k8s.io/apiserver's
//! field manager keeps it (`pkg/util/managedfields`, over structured-merge-diff's `Updater`).
//!
//! - An update (create, PUT, merge or JSON patch) by manager `m`: the fields it added or
//!   changed are taken from every other manager and added to `m`'s `Update` entry (its time
//!   set now); the fields it removed leave every manager. A write that changes nothing leaves
//!   the entries as they were.
//! - An apply by `m` ([`apply`]): the applied configuration is merged over the live object;
//!   what `m` applied before and applies no longer is removed unless another manager owns it;
//!   `m`'s `Apply` entry becomes exactly the applied fields; a field the apply changes that
//!   another manager owns is a conflict, unless forced, when it moves to `m`.
//! - Managers are told apart by name, operation, subresource and (for `Update` only) API
//!   version, as `BuildManagerIdentifier` does; entries are sorted as the API server sorts them
//!   (operation, time, manager, apiVersion, subresource).
//! - Reset fields (the strategy's `GetResetFields`) are never owned through the endpoint that
//!   cannot write them: `status` through the object when there is a status subresource;
//!   `metadata` and `spec` through `/status`.
//!
//! `Update` entries are capped at ten ([`cap_updates`]), as k8s.io/apiserver's
//! `capManagersManager` caps them. Not kept: the
//! `kubectl.kubernetes.io/last-applied-configuration` upgrade path.

use serde_json::{Map, Value, json};

use super::apply::{Comparison, compare, merge, prune};
use super::conflicts::{Conflict, print_path};
use super::fields::{applied_fields_of, fields_of};
use super::fieldset::{self, FieldSet};

/// The operation an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The field manager's name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: Operation,
    /// The API version the fields were written at (`example.com/v1`).
    pub api_version: String,
    /// When the manager last changed its fields, RFC 3339.
    pub time: Option<String>,
    /// `status` for writes to `/status`, else empty.
    pub subresource: String,
    /// The fields owned.
    pub fields: FieldSet,
}

impl Entry {
    /// The same manager as `other`, by `BuildManagerIdentifier`'s rule.
    pub fn same_manager(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// The manager as an apply conflict names it (k8s.io/apiserver's `printManager`):
    /// `"name"`, then ` with subresource "status"`, then for an update ` using <apiVersion>`.
    pub fn describe(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("manager".into(), json!(self.manager));
        out.insert("operation".into(), json!(self.operation.as_str()));
        out.insert("apiVersion".into(), json!(self.api_version));
        if let Some(time) = &self.time {
            out.insert("time".into(), json!(time));
        }
        out.insert("fieldsType".into(), json!("FieldsV1"));
        out.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if !self.subresource.is_empty() {
            out.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(out)
    }

    fn from_json(entry: &Value, index: usize) -> Result<Entry, String> {
        let at = |field: &str| format!("metadata.managedFields[{index}].{field}");
        let text = |field: &str| entry.get(field).and_then(Value::as_str).unwrap_or("");
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            other => return Err(format!("{}: unknown operation {other:?}", at("operation"))),
        };
        if text("fieldsType") != "FieldsV1" {
            return Err(format!("{}: must be \"FieldsV1\"", at("fieldsType")));
        }
        let fields = FieldSet::from_fields_v1(entry.get("fieldsV1").unwrap_or(&json!({})))
            .map_err(|e| format!("{}: {e}", at("fieldsV1")))?;
        Ok(Entry {
            manager: text("manager").to_owned(),
            operation,
            api_version: text("apiVersion").to_owned(),
            time: entry.get("time").and_then(Value::as_str).map(str::to_owned),
            subresource: text("subresource").to_owned(),
            fields,
        })
    }
}

/// Who is writing, and through which endpoint.
#[derive(Debug, Clone)]
pub struct Writer<'a> {
    /// The field manager (the `fieldManager` option, else the User-Agent's prefix).
    pub manager: &'a str,
    /// The kind's API version (`example.com/v1`).
    pub api_version: String,
    /// `status` for a write to `/status`, else empty.
    pub subresource: &'static str,
    /// The fields this endpoint cannot write, by top-level name (see the module docs).
    pub reset: &'static [&'static str],
    /// The time to stamp on the writer's entry.
    pub now: String,
}

/// The top-level fields a write cannot own, by the custom-resource strategy's
/// `GetResetFields`: `status` through the object when there is a status subresource;
/// `metadata` and `spec` through `/status`.
pub fn reset_fields(status_subresource: bool, status_write: bool) -> &'static [&'static str] {
    match (status_subresource, status_write) {
        (_, true) => &["metadata", "spec"],
        (true, false) => &["status"],
        (false, false) => &[],
    }
}

/// The entries of `object`'s `metadata.managedFields` (none when absent). Errors: an entry
/// that does not decode, named by its index.
pub fn decode(object: &Value) -> Result<Vec<Entry>, String> {
    let Some(list) = object.pointer("/metadata/managedFields") else {
        return Ok(Vec::new());
    };
    if list.is_null() {
        return Ok(Vec::new());
    }
    let Value::Array(items) = list else {
        return Err("metadata.managedFields: must be a list".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, e)| Entry::from_json(e, i))
        .collect()
}

/// `object` sends `managedFields: []` (or one empty entry), which clears them, as
/// k8s.io/apiserver's `isResetManagedFields` reads it.
pub fn is_reset(object: &Value) -> bool {
    match object.pointer("/metadata/managedFields") {
        Some(Value::Array(items)) => match items.as_slice() {
            [] => true,
            [one] => one.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}

/// Sets `object`'s `metadata.managedFields` to `entries`, sorted as the API server sorts
/// them; removes it when there are none.
pub fn encode(object: &mut Value, mut entries: Vec<Entry>) {
    entries.sort_by(|a, b| {
        (
            a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        let list = entries.iter().map(Entry::to_json).collect();
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

/// The fields `object` sets under `schema`, without `reset`'s top-level fields.
fn owned_fields(object: &Value, schema: &Value, reset: &[&str]) -> Result<FieldSet, String> {
    let mut set = fields_of(object, schema)?;
    for field in reset {
        set.children.remove(&fieldset::field(field));
    }
    Ok(set)
}

fn comparison(
    old: &Value,
    new: &Value,
    schema: &Value,
    reset: &[&str],
) -> Result<Comparison, String> {
    let old_set = owned_fields(old, schema, reset)?;
    let new_set = owned_fields(new, schema, reset)?;
    Ok(compare(old, &old_set, new, &new_set))
}

/// The entries after an update by `writer` from `old` (`Value::Null` for a create) to `new`,
/// starting from `entries`. Errors: a list-map item without its key, in either object.
pub fn record_update(
    mut entries: Vec<Entry>,
    old: &Value,
    new: &Value,
    schema: &Value,
    writer: &Writer<'_>,
) -> Result<Vec<Entry>, String> {
    let diff = comparison(old, new, schema, writer.reset)?;
    let changed = diff.changed();
    for entry in &mut entries {
        entry.fields = entry.fields.difference(&changed).difference(&diff.removed);
    }
    let me = Entry {
        manager: writer.manager.to_owned(),
        operation: Operation::Update,
        api_version: writer.api_version.clone(),
        time: Some(writer.now.clone()),
        subresource: writer.subresource.to_owned(),
        fields: changed.clone(),
    };
    if !changed.is_empty() {
        match entries.iter_mut().find(|e| e.same_manager(&me)) {
            Some(previous) => {
                previous.fields = previous.fields.union(&changed);
                previous.time = me.time;
            }
            None => entries.push(me),
        }
    }
    entries.retain(|e| !e.fields.is_empty());
    cap_updates(&mut entries);
    Ok(entries)
}

/// The most `Update` entries an object keeps (k8s.io/apiserver's `DefaultMaxUpdateManagers`).
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager that older `Update` entries are merged into, one per API version
/// (k8s.io/apiserver's `ancient-changes`).
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// Caps the `Update` entries at [`MAX_UPDATE_MANAGERS`] as k8s.io/apiserver's
/// `capManagersManager` does after every write: the updates are taken oldest first (no time
/// first, then by time, then by identity); the first of each API version is remembered, and
/// each later one of that version is merged (union of fields, its time) into the version's
/// [`ANCIENT_CHANGES`] bucket (the remembered entry becoming the bucket when the bucket is
/// made), until no more than the cap are left. `Apply` entries are never merged.
pub fn cap_updates(entries: &mut Vec<Entry>) {
    let mut updates: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].operation == Operation::Update)
        .collect();
    if updates.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let identity = |e: &Entry| {
        (
            e.manager.clone(),
            e.api_version.clone(),
            e.subresource.clone(),
        )
    };
    updates.sort_by(|&a, &b| {
        let (a, b) = (&entries[a], &entries[b]);
        (a.time.is_some(), &a.time, identity(a)).cmp(&(b.time.is_some(), &b.time, identity(b)))
    });
    let is_bucket = |e: &Entry, version: &str| {
        e.manager == ANCIENT_CHANGES
            && e.operation == Operation::Update
            && e.api_version == version
            && e.subresource.is_empty()
    };
    let mut first_of_version: std::collections::BTreeMap<String, usize> = Default::default();
    let mut removed = vec![false; entries.len()];
    let mut left = updates.len();
    for &i in &updates {
        if left <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        let Some(&first) = first_of_version.get(&version) else {
            first_of_version.insert(version, i);
            continue;
        };
        let bucket =
            match (0..entries.len()).find(|&b| !removed[b] && is_bucket(&entries[b], &version)) {
                Some(b) => b,
                None => {
                    // The remembered entry becomes the bucket.
                    let e = &mut entries[first];
                    e.manager = ANCIENT_CHANGES.to_owned();
                    e.subresource = String::new();
                    first
                }
            };
        let (fields, time) = (entries[i].fields.clone(), entries[i].time.clone());
        entries[bucket].fields = entries[bucket].fields.union(&fields);
        entries[bucket].time = time;
        removed[i] = true;
        left -= 1;
    }
    let mut index = 0;
    entries.retain(|_| {
        index += 1;
        !removed[index - 1]
    });
}

/// Why an apply failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// Fields the apply changes that other managers own (and `force` was not given).
    Conflicts(Vec<Conflict>),
    /// The configuration does not fit the schema (a list-map item without its key).
    Invalid(String),
}

/// Applies `config` by `writer` over `live` (`None`: the object does not exist) whose entries
/// are `entries`, as structured-merge-diff's `Updater.Apply` does (module docs). Out: the new
/// object (its `managedFields` not set) and the entries. Errors: conflicts with other
/// managers unless `force`, in manager then path order; an invalid configuration.
pub fn apply(
    live: Option<&Value>,
    entries: Vec<Entry>,
    config: &Value,
    schema: &Value,
    writer: &Writer<'_>,
    force: bool,
) -> Result<(Value, Vec<Entry>), ApplyError> {
    let mut applied = applied_fields_of(config, schema).map_err(ApplyError::Invalid)?;
    for field in writer.reset {
        applied.children.remove(&fieldset::field(field));
    }
    let mut merged = merge(live, config, schema).map_err(ApplyError::Invalid)?;
    let me = Entry {
        manager: writer.manager.to_owned(),
        operation: Operation::Apply,
        api_version: writer.api_version.clone(),
        time: Some(writer.now.clone()),
        subresource: writer.subresource.to_owned(),
        fields: applied,
    };
    let mut entries = entries;
    let last = entries
        .iter()
        .position(|e| e.same_manager(&me))
        .map(|i| entries.remove(i).fields);
    let owned = entries
        .iter()
        .fold(me.fields.clone(), |all, e| all.union(&e.fields));
    if let Some(last) = &last {
        prune(&mut merged, last, &owned);
    }
    let empty = Value::Null;
    let diff = comparison(live.unwrap_or(&empty), &merged, schema, writer.reset)
        .map_err(ApplyError::Invalid)?;
    let changed = diff.changed();
    // Sorted as the API server lists them: by manager identity (name, operation, the API
    // version of an update, subresource), then by path.
    let mut conflicts: Vec<(Vec<String>, Conflict)> = Vec::new();
    for entry in &entries {
        let identity = [
            entry.manager.clone(),
            entry.operation.as_str().to_owned(),
            match entry.operation {
                Operation::Update => entry.api_version.clone(),
                Operation::Apply => String::new(),
            },
            entry.subresource.clone(),
        ];
        for path in entry.fields.intersection(&changed).paths() {
            let key = identity
                .iter()
                .cloned()
                .chain(path.iter().cloned())
                .collect();
            let conflict = Conflict {
                manager: entry.describe(),
                field: print_path(&path),
            };
            conflicts.push((key, conflict));
        }
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort_by(|a, b| a.0.cmp(&b.0));
        return Err(ApplyError::Conflicts(
            conflicts.into_iter().map(|(_, c)| c).collect(),
        ));
    }
    for entry in &mut entries {
        entry.fields = entry.fields.difference(&changed).difference(&diff.removed);
    }
    entries.push(me);
    entries.retain(|e| !e.fields.is_empty());
    cap_updates(&mut entries);
    Ok((merged, entries))
}

/// The entries `new` should carry: `old`'s when the write changed nothing but the times, so
/// a write that changes nothing else is not a write, as k8s.io/apiserver's
/// `IgnoreManagedFieldsTimestampsTransformer` keeps them.
pub fn keep_times(old: &[Entry], new: Vec<Entry>) -> Vec<Entry> {
    let untimed = |entries: &[Entry]| {
        let mut out: Vec<Entry> = entries
            .iter()
            .cloned()
            .map(|e| Entry { time: None, ..e })
            .collect();
        out.sort_by(|a, b| {
            (a.operation, &a.manager, &a.subresource, &a.api_version).cmp(&(
                b.operation,
                &b.manager,
                &b.subresource,
                &b.api_version,
            ))
        });
        out
    };
    if untimed(old) == untimed(&new) {
        old.to_vec()
    } else {
        new
    }
}

/// The message of a failed apply, as k8s.io/apiserver's `NewConflictError` words it:
/// `Apply failed with 1 conflict: conflict with "m" using v1: .spec.x`, or for several
/// `Apply failed with N conflicts: conflicts with "m":\n- .spec.x\n- .spec.y`, per manager in
/// the order given (see [`apply`]).
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [one] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager, one.field
        );
    }
    let mut lines = Vec::new();
    let mut current: Option<&str> = None;
    for c in conflicts {
        if current != Some(c.manager.as_str()) {
            lines.push(format!("conflicts with {}:", c.manager));
            current = Some(&c.manager);
        }
        lines.push(format!("- {}", c.field));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests;
