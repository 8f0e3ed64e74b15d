//! The resource name model: group/version/kind (GVK), domain, qualified group, plural and
//! singular, and the Rust module and file names derived from them.
//!
//! Naming follows Kubebuilder: the qualified group of an API is `<group>.<domain>`; for
//! built-in types (`--resource=false` on `core`, `apps`, `batch`, ...) it is the group the
//! Kubernetes API server uses (`""`, `apps`, `networking.k8s.io`). Plurals follow kube-derive's
//! rule unless overridden, so `#[kube(plural)]`, PROJECT, RBAC and `crd()` agree.

use heck::{ToKebabCase, ToSnakeCase};
use thiserror::Error;

use super::{builtin, validate};

/// A name that failed validation: the flag it came from, the value, and the rule it broke.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid value {value:?} for {flag}: {reason}")]
pub struct NameError {
    /// The CLI flag the value came from (`--kind`).
    pub flag: String,
    /// The offending value as given.
    pub value: String,
    /// Which rule it broke and how to fix it.
    pub reason: String,
}

impl NameError {
    /// The error for `flag`'s `value`, refused for `reason`.
    pub fn new(flag: &str, value: &str, reason: impl Into<String>) -> Self {
        Self {
            flag: flag.into(),
            value: value.into(),
            reason: reason.into(),
        }
    }

    /// The first error of `checks`, its reason followed by the other errors, one per line
    /// (`also: invalid value … for --version: …`); `Ok` when every check passed.
    pub fn all(checks: impl IntoIterator<Item = Result<(), NameError>>) -> Result<(), NameError> {
        let mut errors = checks.into_iter().filter_map(Result::err);
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.reason.push_str(&format!("\n  also: {e}"));
        }
        Err(first)
    }
}

/// Kubebuilder's table of built-in API groups: the short group a user types and the suffix
/// that completes it (`networking` → `networking.k8s.io`, `apps` → `apps`, `core` → `""`).
const CORE_GROUPS: &[(&str, &str)] = &[
    ("admission", "admission.k8s.io"),
    ("admissionregistration", "admissionregistration.k8s.io"),
    ("apiextensions", "apiextensions.k8s.io"),
    ("apps", "apps"),
    ("authentication", "authentication.k8s.io"),
    ("authorization", "authorization.k8s.io"),
    ("autoscaling", "autoscaling"),
    ("batch", "batch"),
    ("certificates", "certificates.k8s.io"),
    ("coordination", "coordination.k8s.io"),
    ("core", ""),
    ("discovery", "discovery.k8s.io"),
    ("events", "events.k8s.io"),
    ("flowcontrol", "flowcontrol.apiserver.k8s.io"),
    ("networking", "networking.k8s.io"),
    ("node", "node.k8s.io"),
    ("policy", "policy"),
    ("rbac", "rbac.authorization.k8s.io"),
    ("resource", "resource.k8s.io"),
    ("scheduling", "scheduling.k8s.io"),
    ("storage", "storage.k8s.io"),
    ("storagemigration", "storagemigration.k8s.io"),
];

/// A warning for `--group` values that already hold the project domain (`--group
/// ai.ai.example.com` with domain `ai.example.com`), which `create api` would qualify again
/// (`ai.ai.example.com.ai.example.com`); `None` for an ordinary short group.
pub fn group_repeats_domain(group: &str, domain: &str) -> Option<String> {
    if domain.is_empty() {
        return None;
    }
    let short = if group == domain {
        ""
    } else {
        group.strip_suffix(domain)?.strip_suffix('.')?
    };
    let advice = if short.is_empty() {
        format!(
            "pass the short group alone, such as `--group {}`",
            domain.split('.').next().unwrap_or("ai")
        )
    } else {
        format!("`--group {short}` gives the API group {short}.{domain}")
    };
    Some(format!(
        "--group {group} already ends with the project domain {domain}, so the API group \
         becomes {group}.{domain}; --group takes the short group: {advice}"
    ))
}

/// Maps a short built-in group (`core`, `apps`, `networking`) to its API group (`""`, `apps`,
/// `networking.k8s.io`). Returns `None` for groups that are not built in.
pub fn core_api_group(group: &str) -> Option<&'static str> {
    CORE_GROUPS
        .iter()
        .find(|(short, full)| *short == group || (!full.is_empty() && *full == group))
        .map(|(_, full)| *full)
}

/// Pluralizes a lower-case kind exactly as kube-derive does when `#[kube(plural)]` is absent:
/// `s`, `x`, `z`, `ch`, `sh` take `es`; a consonant followed by `y` becomes `ies`; anything else
/// takes `s` (`aijob` → `aijobs`, `policy` → `policies`, `box` → `boxes`).
pub fn kube_derive_plural(word: &str) -> String {
    if word.ends_with('s')
        || word.ends_with('x')
        || word.ends_with('z')
        || word.ends_with("ch")
        || word.ends_with("sh")
    {
        return format!("{word}es");
    }
    // kube-derive looks at the char at the *byte* length minus two; kept as is so non-ASCII
    // kinds pluralize exactly as `crd()` does.
    if let Some(stem) = word.strip_suffix('y')
        && let Some(prev) = word.chars().nth(word.len().wrapping_sub(2))
        && !matches!(prev, 'a' | 'e' | 'i' | 'o' | 'u')
    {
        return format!("{stem}ies");
    }
    format!("{word}s")
}

/// A resource the project scaffolds or watches: the validated GVK and everything named after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Short group as given on the command line (`ai`, `core`, `apps`).
    pub group: String,
    /// The project domain (`ai.example.com`); empty for built-in types.
    pub domain: String,
    /// API version (`v1`, `v1beta1`).
    pub version: String,
    /// Kind (`AIJob`).
    pub kind: String,
    /// Plural resource name (`aijobs`).
    pub plural: String,
    /// `true` when the plural was given with `--plural` or differs from kube-derive's rule, so
    /// it must be written into `#[kube(plural = ...)]` and PROJECT.
    pub plural_overridden: bool,
    /// Namespaced (`true`) or cluster-scoped (`false`).
    pub namespaced: bool,
    /// `Some` for a built-in Kubernetes type: its k8s-openapi facts.
    pub builtin: Option<builtin::BuiltinResource>,
}

/// Validates a kind: it must start with an upper-case ASCII letter, and its lower-case form must
/// be a DNS-1035 label (so it can be a file name, a module name and a resource name).
pub fn validate_kind(kind: &str) -> Result<(), NameError> {
    let first = kind.chars().next();
    if !first.is_some_and(|c| c.is_ascii_uppercase()) {
        return Err(NameError::new(
            "--kind",
            kind,
            "the kind must start with an upper-case letter (for example `AIJob`)",
        ));
    }
    if !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(NameError::new(
            "--kind",
            kind,
            "the kind must be CamelCase ASCII letters and digits only (for example `AIJob`)",
        ));
    }
    validate::dns1035_label(&kind.to_lowercase())
        .map_err(|r| NameError::new("--kind", kind, format!("the lower-case kind {r}")))
}

/// Validates an API version: a DNS-1035 label (`v1`, `v1beta1`, `v2alpha3`; the API server
/// rejects `1`).
pub fn validate_version(version: &str) -> Result<(), NameError> {
    validate::dns1035_label(version).map_err(|r| {
        NameError::new(
            "--version",
            version,
            format!("the version {r} (the API server rejects it); use a version like v1, v1beta1 or v2alpha3"),
        )
    })
}

/// Validates a project domain (`--domain`): a DNS-1123 subdomain.
pub fn validate_domain(domain: &str) -> Result<(), NameError> {
    validate::dns1123_subdomain(domain)
        .map_err(|r| NameError::new("--domain", domain, format!("the domain {r}")))
}

/// Validates a project name (`--project-name`, or the directory name): a DNS-1123 label.
pub fn validate_project_name(name: &str) -> Result<(), NameError> {
    validate::dns1123_label(name).map_err(|r| {
        NameError::new(
            "--project-name",
            name,
            format!(
                "the project name {r} (it is the directory's name unless --project-name sets it)"
            ),
        )
    })
}

impl Resource {
    /// Builds and validates a custom resource (`--resource=true`, or a controller for a kind of
    /// this project). `plural` is the `--plural` flag when given.
    ///
    /// Errors name the flag, the value and the rule: kind, version, qualified group
    /// (`<group>.<domain>` must be a DNS-1123 subdomain), plural (a DNS-1123 label).
    pub fn custom(
        group: &str,
        domain: &str,
        version: &str,
        kind: &str,
        plural: Option<&str>,
        namespaced: bool,
    ) -> Result<Self, NameError> {
        let group_check = || match group.is_empty() {
            true => Err(NameError::new(
                "--group",
                group,
                "the group must not be empty",
            )),
            false => {
                let qualified = qualify(group, domain);
                validate::dns1123_subdomain(&qualified).map_err(|r| {
                    NameError::new(
                        "--group",
                        group,
                        format!("the qualified group {qualified:?} (group + \".\" + domain) {r}"),
                    )
                })
            }
        };
        let rule = kube_derive_plural(&kind.to_lowercase());
        let plural_value = plural.map(str::to_owned).unwrap_or_else(|| rule.clone());
        // Every flag is checked, so one run names every bad value.
        NameError::all([
            validate_kind(kind),
            validate_version(version),
            group_check(),
            validate::dns1123_label(&plural_value)
                .map_err(|r| NameError::new("--plural", &plural_value, format!("the plural {r}"))),
        ])?;
        Ok(Self {
            group: group.into(),
            domain: domain.into(),
            version: version.into(),
            kind: kind.into(),
            plural_overridden: plural_value != rule,
            plural: plural_value,
            namespaced,
            builtin: None,
        })
    }

    /// Looks up a built-in Kubernetes type for `--resource=false` (`core/v1/Pod`,
    /// `apps/v1/Deployment`). The plural and scope come from k8s-openapi. Errors when kind or
    /// version are invalid or when k8s-openapi has no such type.
    pub fn builtin(group: &str, version: &str, kind: &str) -> Result<Option<Self>, NameError> {
        validate_kind(kind)?;
        validate_version(version)?;
        let Some(api_group) = core_api_group(group) else {
            return Ok(None);
        };
        let found = builtin::find(api_group, version, kind).ok_or_else(|| {
            let known: Vec<String> = builtin::all()
                .into_iter()
                .filter(|r| r.group == api_group && r.version == version)
                .map(|r| r.kind.to_string())
                .collect();
            NameError::new(
                "--kind",
                kind,
                format!(
                    "k8s-openapi has no built-in type {kind} in {}/{version}{}",
                    if api_group.is_empty() {
                        "core"
                    } else {
                        api_group
                    },
                    if known.is_empty() {
                        String::new()
                    } else {
                        format!(" (known kinds: {})", known.join(", "))
                    }
                ),
            )
        })?;
        Ok(Some(Self {
            group: group.into(),
            domain: String::new(),
            version: version.into(),
            kind: kind.into(),
            plural: found.plural.into(),
            plural_overridden: false,
            namespaced: found.namespaced,
            builtin: Some(found),
        }))
    }

    /// The API group the API server uses: `<group>.<domain>` for custom resources, the
    /// Kubernetes group (`""` for core) for built-in ones.
    pub fn qualified_group(&self) -> String {
        match &self.builtin {
            Some(b) => b.group.to_string(),
            None => qualify(&self.group, &self.domain),
        }
    }

    /// The group as RBAC markers and PROJECT write it (`core` for the core group).
    pub fn rbac_group(&self) -> String {
        let g = self.qualified_group();
        if g.is_empty() { "core".into() } else { g }
    }

    /// `apiVersion` of objects of this kind (`ai.ai.example.com/v1`, `v1` for core).
    pub fn api_version(&self) -> String {
        let g = self.qualified_group();
        if g.is_empty() {
            self.version.clone()
        } else {
            format!("{g}/{}", self.version)
        }
    }

    /// Singular resource name: the lower-cased kind (`aijob`).
    pub fn singular(&self) -> String {
        self.kind.to_lowercase()
    }

    /// Rust module and file stem for this kind: the lower-cased kind, as Kubebuilder names
    /// `aijob_types.go` (`AIJob` → `aijob`, `MyKind` → `mykind`).
    pub fn module(&self) -> String {
        self.kind.to_lowercase()
    }

    /// Snake-case form of the kind for Rust identifiers (`AIJob` → `ai_job`).
    pub fn snake(&self) -> String {
        self.kind.to_snake_case()
    }

    /// The CRD name (`aijobs.ai.ai.example.com`).
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.qualified_group())
    }

    /// The CRD base file name under `config/crd/bases/` (`ai.ai.example.com_aijobs.yaml`).
    pub fn crd_file_name(&self) -> String {
        format!("{}_{}.yaml", self.qualified_group(), self.plural)
    }

    /// Kubebuilder's sample file stem (`ai_v1_aijob`).
    pub fn sample_stem(&self) -> String {
        format!(
            "{}_{}_{}",
            self.group,
            self.version,
            self.kind.to_lowercase()
        )
    }

    /// Kubebuilder's webhook path suffix: the qualified group with dots as dashes, version and
    /// lower-case kind (`ai-ai-example-com-v1-aijob`). The core group is empty, so a Pod gives
    /// `-v1-pod` and the path `/mutate--v1-pod`, exactly as Kubebuilder names it.
    pub fn webhook_path_suffix(&self) -> String {
        let g = self.qualified_group();
        format!(
            "{}-{}-{}",
            g.replace('.', "-"),
            self.version,
            self.kind.to_lowercase()
        )
    }

    /// The kebab-case kind (`AIJob` → `ai-job`), for object names in manifests.
    pub fn kebab(&self) -> String {
        self.kind.to_kebab_case()
    }
}

fn qualify(group: &str, domain: &str) -> String {
    if domain.is_empty() {
        group.to_string()
    } else {
        format!("{group}.{domain}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aijob_names() {
        let r = Resource::custom("ai", "ai.example.com", "v1", "AIJob", None, true).unwrap();
        assert_eq!(r.qualified_group(), "ai.ai.example.com");
        assert_eq!(r.plural, "aijobs");
        assert!(!r.plural_overridden);
        assert_eq!(r.singular(), "aijob");
        assert_eq!(r.crd_name(), "aijobs.ai.ai.example.com");
        assert_eq!(r.crd_file_name(), "ai.ai.example.com_aijobs.yaml");
        assert_eq!(r.module(), "aijob");
        assert_eq!(r.webhook_path_suffix(), "ai-ai-example-com-v1-aijob");
        assert_eq!(r.sample_stem(), "ai_v1_aijob");
        assert_eq!(r.api_version(), "ai.ai.example.com/v1");
    }

    #[test]
    fn plural_rule_matches_kube_derive() {
        assert_eq!(kube_derive_plural("policy"), "policies");
        assert_eq!(kube_derive_plural("day"), "days");
        assert_eq!(kube_derive_plural("box"), "boxes");
        assert_eq!(kube_derive_plural("match"), "matches");
        assert_eq!(kube_derive_plural("status"), "statuses");
        let r = Resource::custom("ai", "x.io", "v1", "Person", Some("people"), true).unwrap();
        assert!(r.plural_overridden);
    }

    #[test]
    fn rejections_name_flag_and_rule() {
        let e = Resource::custom("ai", "x.io", "v1", "aijob", None, true).unwrap_err();
        assert_eq!(e.flag, "--kind");
        assert!(e.reason.contains("upper-case"), "{e}");
        let e = Resource::custom("AI_Group", "x.io", "v1", "AIJob", None, true).unwrap_err();
        assert_eq!(e.flag, "--group");
        assert!(e.reason.contains("DNS-1123 subdomain"), "{e}");
        let e = Resource::custom("ai", "x.io", "1", "AIJob", None, true).unwrap_err();
        assert_eq!(e.flag, "--version");
        assert!(e.reason.contains("DNS-1035"), "{e}");
        let e = Resource::custom("ai", "x.io", "v1", "../../Etc", None, true).unwrap_err();
        assert_eq!(e.flag, "--kind");
        // Every bad flag in one run, the first as the error, the others after it.
        let e = Resource::custom("Database", "x.io", "1", "Database", None, true).unwrap_err();
        assert_eq!(e.flag, "--version");
        let also: Vec<&str> = e.reason.lines().skip(1).collect();
        assert_eq!(also.len(), 1, "{e}");
        assert!(
            also[0].starts_with("  also: invalid value \"Database\" for --group: the qualified group \"Database.x.io\""),
            "{e}"
        );
    }

    #[test]
    fn builtin_types() {
        let pod = Resource::builtin("core", "v1", "Pod").unwrap().unwrap();
        assert_eq!(pod.qualified_group(), "");
        assert_eq!(pod.rbac_group(), "core");
        assert_eq!(pod.api_version(), "v1");
        assert_eq!(pod.plural, "pods");
        assert_eq!(pod.webhook_path_suffix(), "-v1-pod");
        let dep = Resource::builtin("apps", "v1", "Deployment")
            .unwrap()
            .unwrap();
        assert_eq!(dep.api_version(), "apps/v1");
        let ing = Resource::builtin("networking", "v1", "Ingress")
            .unwrap()
            .unwrap();
        assert_eq!(ing.qualified_group(), "networking.k8s.io");
        assert_eq!(ing.plural, "ingresses");
        assert!(Resource::builtin("ai", "v1", "AIJob").unwrap().is_none());
        assert!(Resource::builtin("core", "v1", "Nope").is_err());
    }
}
