// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Admission in Rust for a served kind: defaulting, then validation, run by the registry on
//! create, update (a patch is an update) and delete before anything is stored, in the order of
//! kube-apiserver's admission chain (mutating, then the schema and metadata checks, then
//! validating). The trait has the shape of the webhook's `Defaulter` and `Validator`
//! ([`crate::webhook`]) in one; a rejection is answered as k8s.io/apiserver answers a failed
//! validation: 422 Invalid, one `details.causes` entry per field.
//!
//! Register it on the kind in the API server's binary:
//! `ApiKind::of::<Database>()?.admission(DatabaseAdmission)`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A rejection: the fields at fault, each with its message (`("spec.replicas", "must be at
/// most 10")`). The server answers 422 Invalid with these as `details.causes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Invalid {
    /// `(field path, message)` pairs, in the order reported.
    pub causes: Vec<(String, String)>,
}

impl Invalid {
    /// A rejection of one field. Start `message` with `Required value`, `Forbidden` or
    /// `Unsupported value` to give the cause that type (k8s.io/apimachinery's `field.ErrorType`);
    /// anything else is `FieldValueInvalid`.
    pub fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            causes: vec![(path.into(), message.into())],
        }
    }

    /// Adds a cause (to report several fields at once).
    pub fn and(mut self, path: impl Into<String>, message: impl Into<String>) -> Self {
        self.causes.push((path.into(), message.into()));
        self
    }
}

/// The answer of a validating function: admitted, or [`Invalid`].
pub type Admitted = Result<(), Invalid>;

/// Defaulting and validation of objects of kind `K` in the API server. Every function admits
/// (and changes nothing) by default; implement the ones the kind needs.
pub trait Admission<K>: Send + Sync + 'static {
    /// Fills in defaults of an object being created or updated (after pruning, before
    /// validation). On update it sees the whole new object, so set only what is absent.
    fn default(&self, object: &mut K) -> impl Future<Output = Admitted> + Send {
        let _ = object;
        async { Ok(()) }
    }

    /// Checks an object being created (after defaulting and the schema).
    fn validate_create(&self, object: &K) -> impl Future<Output = Admitted> + Send {
        let _ = object;
        async { Ok(()) }
    }

    /// Checks an update from `old` (stored) to `new`; a rejection leaves storage unchanged.
    fn validate_update(&self, old: &K, new: &K) -> impl Future<Output = Admitted> + Send {
        let _ = (old, new);
        async { Ok(()) }
    }

    /// Checks an object being deleted (or marked for deletion, when it has finalizers).
    fn validate_delete(&self, object: &K) -> impl Future<Output = Admitted> + Send {
        let _ = object;
        async { Ok(()) }
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an admission step refused a request: the causes of a Rust [`Admission`] (answered
/// 422 Invalid), or a whole Status, as kube-apiserver answers a webhook's denial (the test
/// cluster's webhooks, [`crate::testing`]).
#[derive(Debug, Clone)]
pub(crate) enum Refused {
    Invalid(Invalid),
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    Status(super::status::ApiError),
}

impl From<Invalid> for Refused {
    fn from(invalid: Invalid) -> Self {
        Self::Invalid(invalid)
    }
}

impl Refused {
    /// The error the client gets for object `name` of `kind`.
    pub(crate) fn into_api_error(
        self,
        kind: &super::kind::ApiKind,
        name: &str,
    ) -> super::status::ApiError {
        match self {
            Self::Invalid(e) => super::status::ApiError::invalid(kind, name, &e.causes),
            Self::Status(e) => e,
        }
    }
}

/// [`Admission`] over JSON objects, so that one [`super::kind::ApiKind`] can hold any kind's.
/// `dry_run` says the request is a dry run (`dryRun=All`), as an AdmissionReview's
/// `request.dryRun` says it: a Rust [`Admission`] has no side effects and runs as usual; the
/// test cluster's webhooks are told, and one that declares side effects refuses the request.
pub(crate) trait Erased: Send + Sync {
    fn default<'a>(
        &'a self,
        obj: &'a mut Value,
        dry_run: bool,
    ) -> BoxFuture<'a, Result<(), Refused>>;
    fn validate<'a>(&'a self, op: Op<'a>, dry_run: bool) -> BoxFuture<'a, Result<(), Refused>>;
}

/// What is being admitted.
pub(crate) enum Op<'a> {
    Create(&'a Value),
    Update { old: &'a Value, new: &'a Value },
    Delete(&'a Value),
}

struct Typed<K, A> {
    admission: A,
    _kind: std::marker::PhantomData<fn() -> K>,
}

/// An object the typed admission cannot read (a field of the wrong type): 422 naming the
/// object, as the schema check would.
fn unreadable(e: serde_json::Error) -> Invalid {
    Invalid::field("<object>", format!("Invalid value: {e}"))
}

fn read<K: DeserializeOwned>(v: &Value) -> Result<K, Invalid> {
    serde_json::from_value(v.clone()).map_err(unreadable)
}

impl<K, A> Erased for Typed<K, A>
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    A: Admission<K>,
{
    fn default<'a>(
        &'a self,
        obj: &'a mut Value,
        _dry_run: bool,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            // An object the type cannot read is left to the schema check, which names the field.
            let Ok(mut typed) = read::<K>(obj) else {
                return Ok(());
            };
            let before = serde_json::to_value(&typed).map_err(unreadable)?;
            self.admission.default(&mut typed).await?;
            let after = serde_json::to_value(&typed).map_err(unreadable)?;
            // Only what `default` changed reaches the object, as the webhook's patch does
            // ([`crate::webhook::patch`]): what the type would write differently (nulls,
            // unknown fields, empty lists) is left as sent.
            *obj = crate::webhook::patch::merge(obj, &before, &after).0;
            Ok(())
        })
    }

    fn validate<'a>(&'a self, op: Op<'a>, _dry_run: bool) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            match op {
                Op::Create(o) => self.admission.validate_create(&read(o)?).await?,
                Op::Update { old, new } => {
                    self.admission
                        .validate_update(&read(old)?, &read(new)?)
                        .await?
                }
                Op::Delete(o) => self.admission.validate_delete(&read(o)?).await?,
            }
            Ok(())
        })
    }
}

/// A kind's registered admission, held by [`super::kind::ApiKind`]. Two are equal when they
/// are the same registration.
#[derive(Clone)]
pub struct Hook(pub(crate) Arc<dyn Erased>);

impl Hook {
    /// Wraps `admission` for kind `K`.
    pub fn new<K, A>(admission: A) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        A: Admission<K>,
    {
        Self(Arc::new(Typed {
            admission,
            _kind: std::marker::PhantomData,
        }))
    }
}

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hook")
    }
}

impl PartialEq for Hook {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
