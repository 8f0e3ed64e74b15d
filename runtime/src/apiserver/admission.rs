// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Admission in Rust for a served kind: defaulting, then validation, run by the registry on
//! create, update (a patch is an update) and delete before anything is stored, in the order of
//! kube-apiserver's admission chain (mutating, then the schema and metadata checks, then
//! validating). A kind's admission implements the webhook's traits ([`crate::webhook`]'s
//! [`Defaulter`] and [`Validator`]) with this module's answers: [`Invalid`] for a rejection,
//! [`Admitted`] for a validation. A rejection is answered as k8s.io/apiserver answers a failed
//! validation: 422 Invalid, one `details.causes` entry per field.
//!
//! Register it on the kind in the API server's binary:
//! `ApiKind::of::<Database>()?.admission(DatabaseAdmission)` (both traits), or
//! `.defaulting(..)` or `.validating(..)` (one of them).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::webhook::{Defaulter, Validator, Verdict};

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

/// The API server's answer: admitted.
impl Verdict for Admitted {
    fn admitted() -> Self {
        Ok(())
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an admission step refused a request: the causes of a Rust [`Invalid`] (answered
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
        kind: &impl super::status::Subject,
        name: &str,
    ) -> super::status::ApiError {
        match self {
            Self::Invalid(e) => super::status::ApiError::invalid(kind, name, &e.causes),
            Self::Status(e) => e,
        }
    }
}

/// A kind's admission over JSON objects, so that one [`super::kind::ApiKind`] can hold any
/// kind's.
/// `dry_run` says the request is a dry run (`dryRun=All`), as an AdmissionReview's
/// `request.dryRun` says it: a Rust admission has no side effects and runs as usual; the
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

/// A kind's defaulting `D` and validation `V`, on objects read as `K`.
struct Typed<K, D, V> {
    defaulter: D,
    validator: V,
    _kind: std::marker::PhantomData<fn() -> K>,
}

/// The side of a [`Hook`] not registered: admits and changes nothing.
struct Nothing;

impl<K: Send> Defaulter<K, Invalid> for Nothing {
    async fn default(&self, _: &mut K) -> Admitted {
        Ok(())
    }
}

impl<K> Validator<K, Admitted> for Nothing {}

/// An object the typed admission cannot read (a field of the wrong type): 422 naming the
/// object, as the schema check would.
fn unreadable(e: serde_json::Error) -> Invalid {
    Invalid::field("<object>", format!("Invalid value: {e}"))
}

fn read<K: DeserializeOwned>(v: &Value) -> Result<K, Invalid> {
    serde_json::from_value(v.clone()).map_err(unreadable)
}

impl<K, D, V> Erased for Typed<K, D, V>
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: Defaulter<K, Invalid>,
    V: Validator<K, Admitted>,
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
            self.defaulter.default(&mut typed).await?;
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
                Op::Create(o) => self.validator.validate_create(&read(o)?).await?,
                Op::Update { old, new } => {
                    self.validator
                        .validate_update(&read(old)?, &read(new)?)
                        .await?
                }
                Op::Delete(o) => self.validator.validate_delete(&read(o)?).await?,
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
    /// Wraps `defaulter` and `validator` for kind `K`.
    fn typed<K, D, V>(defaulter: D, validator: V) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K, Invalid>,
        V: Validator<K, Admitted>,
    {
        Self(Arc::new(Typed {
            defaulter,
            validator,
            _kind: std::marker::PhantomData,
        }))
    }

    /// `admission`'s defaulting and validation for kind `K`.
    pub fn new<K, A>(admission: A) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        A: Defaulter<K, Invalid> + Validator<K, Admitted>,
    {
        let admission = Arc::new(admission);
        Self::typed::<K, _, _>(Shared(admission.clone()), Shared(admission))
    }

    /// `defaulter`'s defaulting for kind `K`, and no validation.
    pub fn defaulting<K, D>(defaulter: D) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K, Invalid>,
    {
        Self::typed::<K, _, _>(defaulter, Nothing)
    }

    /// `validator`'s validation for kind `K`, and no defaulting.
    pub fn validating<K, V>(validator: V) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        V: Validator<K, Admitted>,
    {
        Self::typed::<K, _, _>(Nothing, validator)
    }
}

/// One admission that is both the defaulter and the validator of a [`Hook`].
struct Shared<A>(Arc<A>);

impl<K, A: Defaulter<K, Invalid>> Defaulter<K, Invalid> for Shared<A> {
    fn default(&self, object: &mut K) -> impl Future<Output = Admitted> + Send {
        self.0.default(object)
    }
}

impl<K, A: Validator<K, Admitted>> Validator<K, Admitted> for Shared<A> {
    fn validate_create(&self, object: &K) -> impl Future<Output = Admitted> + Send {
        self.0.validate_create(object)
    }

    fn validate_update(&self, old: &K, new: &K) -> impl Future<Output = Admitted> + Send {
        self.0.validate_update(old, new)
    }

    fn validate_delete(&self, object: &K) -> impl Future<Output = Admitted> + Send {
        self.0.validate_delete(object)
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
