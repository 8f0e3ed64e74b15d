// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The CRD conversion webhook: the API server posts a ConversionReview
//! (`apiextensions.k8s.io/v1`) with objects to convert to `desiredAPIVersion`, and reads back
//! the converted objects in the same order, or a failure.
//!
//! Versions convert hub and spoke, as in controller-runtime: one version of a kind is the
//! hub, every other version (a spoke) converts to the hub and back ([`Convert`]), so any
//! version reaches any other through the hub. The converted object is the received one with
//! only what the conversion changed (see [`super::patch::merge`]): `metadata`, which the API
//! server requires unchanged apart from labels and annotations, and everything else the
//! versions share stay as they were sent.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use serde::Serialize;
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::admission::read_body;
use super::{WebhookKind, patch};
use crate::routes::{self, Request, Response};

/// Path of the conversion webhook, as the CRD's `spec.conversion.webhook.clientConfig`
/// names it (`config/crd/patches/webhook_in_<plural>.yaml`).
pub const CONVERSION_PATH: &str = "/convert";

/// A spoke version `Self` of the kind whose hub version is `Hub`: both conversions, for
/// example `impl Convert<v1::AIJob> for v2::AIJob`. They must be lossless together (what
/// the hub cannot hold goes into an annotation and comes back from it), because the API
/// server stores one version and serves the others by converting.
pub trait Convert<Hub>: Sized {
    /// Converts this spoke object to the hub version. Errors fail the whole review with
    /// the message.
    fn to_hub(self) -> anyhow::Result<Hub>;
    /// Converts a hub object to this spoke version.
    fn from_hub(hub: Hub) -> anyhow::Result<Self>;
}

type ToHub<H> = fn(&Value) -> Result<(Value, H), String>;
type FromHub<H> = fn(H) -> Result<Value, String>;

struct Spoke<H> {
    api_version: String,
    kind: String,
    to_hub: ToHub<H>,
    from_hub: FromHub<H>,
}

/// The conversions of one kind: its hub version `H` and the spokes added with
/// [`Conversion::spoke`]. Register it with [`super::Webhooks::conversion`].
pub struct Conversion<H> {
    spokes: Vec<Spoke<H>>,
}

impl<H: WebhookKind> Default for Conversion<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: WebhookKind> Conversion<H> {
    /// The hub `H` with no spokes yet.
    pub fn new() -> Self {
        Self { spokes: Vec::new() }
    }

    /// Adds the spoke version `S`, converted by its [`Convert<H>`] implementation.
    pub fn spoke<S: WebhookKind + Convert<H>>(mut self) -> Self {
        self.spokes.push(Spoke {
            api_version: S::api_version(&()).to_string(),
            kind: S::kind(&()).to_string(),
            to_hub: spoke_to_hub::<H, S>,
            from_hub: hub_to_spoke::<H, S>,
        });
        self
    }

    /// Spokes that cannot belong to this hub: another kind, or the hub's own version.
    pub(super) fn problems(&self) -> Vec<String> {
        let (hub_version, hub_kind) = (H::api_version(&()), H::kind(&()));
        self.spokes
            .iter()
            .filter(|s| s.kind != hub_kind || s.api_version == hub_version)
            .map(|s| {
                format!(
                    "the spoke {} {} cannot convert to the hub {hub_version} {hub_kind}",
                    s.api_version, s.kind
                )
            })
            .collect()
    }

    fn versions(&self) -> String {
        std::iter::once(H::api_version(&()).to_string())
            .chain(self.spokes.iter().map(|s| s.api_version.clone()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads `from` as the version `B`: every field with the same JSON name carries over, and
/// `apiVersion` becomes `B`'s. What a scaffolded [`Convert`] does until the versions' fields
/// differ. Errors: `from` does not read as a `B` (a field `B` requires is missing, or has
/// another type), with serde's message naming the field.
pub fn carry_over<A: Serialize, B: WebhookKind>(from: &A) -> anyhow::Result<B> {
    let mut value = serde_json::to_value(from)?;
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "apiVersion".into(),
            Value::String(B::api_version(&()).into_owned()),
        );
    }
    B::deserialize(value).map_err(|e| {
        anyhow::anyhow!(
            "cannot carry the fields over to {} {}: {e}",
            B::api_version(&()),
            B::kind(&())
        )
    })
}

fn spoke_to_hub<H, S: WebhookKind + Convert<H>>(raw: &Value) -> Result<(Value, H), String> {
    let spoke: S = read(raw)?;
    let before = json(&spoke)?;
    let hub = spoke
        .to_hub()
        .map_err(|e| format!("{} {}: {e:#}", S::api_version(&()), S::kind(&())))?;
    Ok((before, hub))
}

fn hub_to_spoke<H, S: WebhookKind + Convert<H>>(hub: H) -> Result<Value, String> {
    let spoke = S::from_hub(hub)
        .map_err(|e| format!("to {} {}: {e:#}", S::api_version(&()), S::kind(&())))?;
    json(&spoke)
}

fn read<K: WebhookKind>(raw: &Value) -> Result<K, String> {
    K::deserialize(raw).map_err(|e| {
        format!(
            "cannot read the object as {} {}: {e}",
            K::api_version(&()),
            K::kind(&())
        )
    })
}

fn json<K: WebhookKind>(object: &K) -> Result<Value, String> {
    serde_json::to_value(object).map_err(|e| format!("cannot serialize {}: {e}", K::kind(&())))
}

/// One kind's conversions with the hub type erased, for the server's table.
pub(super) trait KindConversion: Send + Sync {
    fn group(&self) -> String;
    fn kind(&self) -> String;
    /// `raw` (of this kind, in its `apiVersion`) in `desired`. Takes the object, so that an
    /// object already in `desired` is answered without a copy.
    fn convert(&self, raw: Value, desired: &str) -> Result<Value, String>;
}

impl<H: WebhookKind> KindConversion for Conversion<H> {
    fn group(&self) -> String {
        H::group(&()).to_string()
    }

    fn kind(&self) -> String {
        H::kind(&()).to_string()
    }

    fn convert(&self, raw: Value, desired: &str) -> Result<Value, String> {
        if raw["apiVersion"].as_str() == Some(desired) {
            return Ok(raw);
        }
        let from = raw["apiVersion"].as_str().unwrap_or_default();
        let hub_version = H::api_version(&());
        let unknown = |v: &str| {
            format!(
                "{} has no version {v:?} here (conversions: {})",
                H::kind(&()),
                self.versions()
            )
        };
        let (before, hub) = if from == hub_version {
            let hub: H = read(&raw)?;
            (json(&hub)?, hub)
        } else {
            let spoke = self.spokes.iter().find(|s| s.api_version == from);
            (spoke.ok_or_else(|| unknown(from))?.to_hub)(&raw)?
        };
        let mut after = if desired == hub_version {
            json(&hub)?
        } else {
            let spoke = self.spokes.iter().find(|s| s.api_version == desired);
            (spoke.ok_or_else(|| unknown(desired))?.from_hub)(hub)?
        };
        if let Some(object) = after.as_object_mut() {
            object.insert("apiVersion".into(), Value::String(desired.to_string()));
        }
        Ok(patch::merge(&raw, &before, &after).0)
    }
}

/// Reads a ConversionReview (`apiVersion`, `request` with `uid`, `desiredAPIVersion` and
/// `objects`; other fields are ignored) and converts each object as soon as it is read,
/// writing it to `out` (JSON, comma-separated), so that only one decoded object is held at
/// a time. kube-apiserver writes `desiredAPIVersion` before `objects`; a review that has
/// them the other way round is read whole, then converted.
struct ReviewReader<'a> {
    conversions: &'a [Arc<dyn KindConversion>],
    api_version: Option<String>,
    /// `uid` of the request, once it has been read whole.
    uid: Option<String>,
    /// The converted objects written so far.
    out: Vec<u8>,
    /// Why the conversion failed, naming the object: the rest is read and dropped.
    failure: Option<String>,
}

impl ReviewReader<'_> {
    /// Converts object `i` to `desired` and writes it, or records the failure.
    fn take(&mut self, i: usize, object: Value, desired: &str) {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match convert_one(self.conversions, object, desired) {
            Ok(converted) => {
                if i > 0 {
                    self.out.push(b',');
                }
                write_json(&mut self.out, &converted);
            }
            Err(e) => self.failure = Some(format!("object {i} ({name:?}): {e}")),
        }
    }
}

impl<'de> DeserializeSeed<'de> for &mut ReviewReader<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(ReviewVisitor(self))
    }
}

struct ReviewVisitor<'r, 'a>(&'r mut ReviewReader<'a>);

impl<'de> Visitor<'de> for ReviewVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a ConversionReview")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => self.0.api_version = map.next_value()?,
                "request" => map.next_value_seed(RequestSeed(&mut *self.0))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `request`: absent or `null` leaves [`ReviewReader::uid`] unset.
struct RequestSeed<'r, 'a>(&'r mut ReviewReader<'a>);

impl<'de> DeserializeSeed<'de> for RequestSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for RequestSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a ConversionRequest")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let reader = self.0;
        let (mut uid, mut desired, mut unconverted) = (None, None::<String>, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "uid" => uid = Some(map.next_value::<String>()?),
                "desiredAPIVersion" => desired = Some(map.next_value()?),
                "objects" => match &desired {
                    Some(desired) => map.next_value_seed(ObjectsSeed {
                        reader: &mut *reader,
                        desired,
                    })?,
                    None => unconverted = Some(map.next_value::<Vec<Value>>()?),
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let uid = uid.ok_or_else(|| A::Error::missing_field("uid"))?;
        let desired = desired.ok_or_else(|| A::Error::missing_field("desiredAPIVersion"))?;
        for (i, object) in unconverted.into_iter().flatten().enumerate() {
            if reader.failure.is_some() {
                break;
            }
            reader.take(i, object, &desired);
        }
        reader.uid = Some(uid);
        Ok(())
    }
}

/// `objects`, converted to `desired` one by one as they are read.
struct ObjectsSeed<'r, 'a, 'd> {
    reader: &'r mut ReviewReader<'a>,
    desired: &'d str,
}

impl<'de> DeserializeSeed<'de> for ObjectsSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ObjectsSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while self.reader.failure.is_none() {
            let Some(object) = seq.next_element::<Value>()? else {
                return Ok(());
            };
            self.reader.take(i, object, self.desired);
            i += 1;
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversionAnswer {
    api_version: String,
    kind: &'static str,
    response: ConversionResponse,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversionResponse {
    uid: String,
    converted_objects: Vec<Value>,
    result: ConversionResult,
}

#[derive(Serialize)]
struct ConversionResult {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn answer(
    api_version: Option<String>,
    uid: String,
    converted: Result<Vec<Value>, String>,
) -> ConversionAnswer {
    let (converted_objects, result) = match converted {
        Ok(objects) => (
            objects,
            ConversionResult {
                status: "Success",
                message: None,
            },
        ),
        Err(message) => (
            Vec::new(),
            ConversionResult {
                status: "Failure",
                message: Some(message),
            },
        ),
    };
    ConversionAnswer {
        api_version: api_version.unwrap_or_else(|| "apiextensions.k8s.io/v1".to_string()),
        kind: "ConversionReview",
        response: ConversionResponse {
            uid,
            converted_objects,
            result,
        },
    }
}

/// What bounds the conversion webhook's memory: the largest body read, and the bytes of
/// bodies handled at once (see [`super::Webhooks::conversion_bytes_in_flight`]).
pub(super) struct Limits {
    /// Largest body read; a larger one is answered 413.
    pub(super) body: usize,
    /// One permit per byte of the bodies being handled, `in_flight` in all.
    pub(super) permits: Arc<Semaphore>,
    /// The permits there are (1 to [`MAX_IN_FLIGHT`]): a review takes its body's length, at
    /// most all of them.
    pub(super) in_flight: usize,
}

/// The most bytes in flight: a review takes its share in one call, which counts in `u32`,
/// and the semaphore holds at most `Semaphore::MAX_PERMITS`.
pub(super) const MAX_IN_FLIGHT: usize = if (u32::MAX as usize) < Semaphore::MAX_PERMITS {
    u32::MAX as usize
} else {
    Semaphore::MAX_PERMITS
};

/// The semaphore of [`Limits::permits`] for `in_flight` bytes (at least 1, at most
/// [`MAX_IN_FLIGHT`]).
pub(super) fn permits(in_flight: usize) -> Arc<Semaphore> {
    Arc::new(Semaphore::new(in_flight.clamp(1, MAX_IN_FLIGHT)))
}

/// A review at least this long is followed by [`release_free_memory`].
const RELEASE_AFTER: usize = 1024 * 1024;

/// Answers one ConversionReview POST: every object converted to `desiredAPIVersion` with the
/// conversion of its group and kind, in order, or a `Failure` naming the first object that
/// could not be converted. A body that cannot be read or is not a ConversionReview gets
/// HTTP 400 (413 over `limits.body`) with a `Failure` review saying why.
///
/// Memory: the review waits until its body's length (its `Content-Length`; the whole budget
/// when it has none) fits in the bytes in flight, so that reviews handled at once hold at
/// most `limits.in_flight` bytes of bodies (one larger review runs alone). The objects are
/// decoded from the body one at a time, each converted and written to the answer before the
/// next is read (see [`ReviewReader`]); after a large review the allocator's free memory is
/// returned to the system.
pub(super) async fn serve(
    request: Request,
    conversions: Arc<Vec<Arc<dyn KindConversion>>>,
    limits: Arc<Limits>,
) -> Response {
    let declared = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    // A body over the limit is refused unread, without waiting.
    let _permit = match declared {
        Some(length) if length > limits.body => None,
        _ => {
            let share = declared
                .unwrap_or(limits.in_flight)
                .clamp(1, limits.in_flight);
            // The semaphore is never closed.
            limits
                .permits
                .clone()
                .acquire_many_owned(share as u32)
                .await
                .ok()
        }
    };
    let body = match read_body(request, limits.body).await {
        Ok(body) => body,
        Err((code, message)) => return failure(code, message),
    };
    let size = body.len();
    let response = convert_review(body, &conversions);
    if size >= RELEASE_AFTER {
        release_free_memory();
    }
    response
}

/// An HTTP `code` answer with a `Failure` review carrying `message`.
fn failure(code: u16, message: String) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
    routes::json(status, &answer(None, String::new(), Err(message)))
}

/// The answer to the review in `body`; see [`serve`].
fn convert_review(body: Bytes, conversions: &[Arc<dyn KindConversion>]) -> Response {
    let mut reader = ReviewReader {
        conversions,
        api_version: None,
        uid: None,
        // The converted objects take about as many bytes as the ones sent.
        out: Vec::with_capacity(body.len() + body.len() / 8 + 1024),
        failure: None,
    };
    let mut deserializer = serde_json::Deserializer::from_slice(&body);
    let read = reader
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    drop(body);
    if let Err(e) = read {
        return failure(
            400,
            format!("the request body is not a ConversionReview: {e}"),
        );
    }
    let Some(uid) = reader.uid else {
        return failure(400, "the ConversionReview has no request".to_string());
    };
    if let Some(message) = reader.failure {
        drop(reader.out);
        return routes::json(
            StatusCode::OK,
            &answer(reader.api_version, uid, Err(message)),
        );
    }
    // The answer around the converted objects, in the shape of `ConversionAnswer`.
    let mut head = br#"{"apiVersion":"#.to_vec();
    let version = reader.api_version.as_deref();
    write_json(&mut head, version.unwrap_or("apiextensions.k8s.io/v1"));
    head.extend_from_slice(br#","kind":"ConversionReview","response":{"uid":"#);
    write_json(&mut head, &uid);
    head.extend_from_slice(br#","convertedObjects":["#);
    let mut out = reader.out;
    // In place: the objects move up within the buffer, which has room for the head.
    out.splice(0..0, head);
    out.extend_from_slice(br#"],"result":{"status":"Success"}}}"#);
    routes::answer(StatusCode::OK, "application/json", out)
}

/// Appends `value` as JSON. Strings and JSON values always serialize.
fn write_json(out: &mut Vec<u8>, value: &(impl Serialize + ?Sized)) {
    serde_json::to_writer(out, value).expect("a string or a JSON value serializes");
}

/// Returns the allocator's free memory to the system. glibc's malloc (the manager's image,
/// `distroless/cc`, uses it) keeps what a large review freed in its arenas, one per worker
/// thread, so the resident memory would stay at the sum of the largest reviews each thread
/// handled; `malloc_trim` gives back the free pages of every arena. Elsewhere a no-op.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    unsafe extern "C" {
        // glibc's `int malloc_trim(size_t pad)`: thread-safe, no precondition.
        safe fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    malloc_trim(0);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

fn convert_one(
    conversions: &[Arc<dyn KindConversion>],
    object: Value,
    desired: &str,
) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let desired_group = desired.rsplit_once('/').map_or("", |(g, _)| g);
    if group != desired_group {
        return Err(format!(
            "cannot convert {kind} from {api_version} to {desired}: another API group"
        ));
    }
    let conversion = conversions
        .iter()
        .find(|c| c.group() == group && c.kind() == kind)
        .ok_or_else(|| format!("no conversion for {kind} of {group:?} is served here"))?;
    conversion.convert(object, desired)
}
