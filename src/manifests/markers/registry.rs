//! The markers rsbuilder knows: one table that feeds the parser, the generators and
//! `docs/markers.md`.
//!
//! Mirrors controller-tools' marker definitions (`kubebuilder:rbac` → `rbac.Rule`,
//! `kubebuilder:webhook` → `webhook.Config`, `kubebuilder:webhookconfiguration` →
//! `webhook.WebhookConfig`): the same marker names, argument names, types and optional
//! flags. Where rsbuilder differs on purpose: every comment that starts with
//! `+kubebuilder:` must name a marker of this table, and the CRD markers controller-gen reads
//! from Go types are rejected with the kube-derive / schemars attribute to use instead.

use std::fmt::Write as _;

/// The type of one marker argument (controller-tools' `ArgumentType`, restricted to the
/// types the registered markers use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// A string: bare (`name=foo`), double-quoted with Go escapes (`name="a,b"`) or raw in
    /// backticks (`` name=`{"a":1}` ``).
    String,
    /// A signed integer written bare (`timeoutSeconds=10`).
    Int,
    /// `true` or `false`.
    Bool,
    /// A list of strings: `a;b;c` or `{a,b,c}`; a single value is a list of one.
    StringList,
}

impl ArgType {
    /// How the type is named in messages and in the docs.
    pub fn describe(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Int => "integer",
            ArgType::Bool => "bool",
            ArgType::StringList => "list of strings",
        }
    }
}

/// One argument of a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgDef {
    /// Argument name as written in the marker (`resourceNames`).
    pub name: &'static str,
    /// Value type.
    pub ty: ArgType,
    /// `false` when leaving the argument out is an error.
    pub optional: bool,
    /// One-line description for the docs.
    pub help: &'static str,
}

/// What text a marker takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `+name:arg=v,arg2=v2` (the first argument joins the name with `:`).
    Args(&'static [ArgDef]),
    /// `+name=value`: one anonymous argument.
    Value(ArgType),
    /// `+name` alone.
    Flag,
    /// `+name:<anything>`: valid and ignored (scaffold insertion points).
    Ignored,
    /// A controller-gen marker that has no meaning in a Rust project; the string says what
    /// to write instead. Using it is an error.
    Unsupported(&'static str),
}

/// One registered marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerDef {
    /// Marker name without the `+` (`kubebuilder:rbac`). For [`Form::Ignored`] and
    /// [`Form::Unsupported`] every name that starts with `<name>:` or equals `<name>`
    /// matches.
    pub name: &'static str,
    /// Accepted form and arguments.
    pub form: Form,
    /// What the marker does, for the docs.
    pub help: &'static str,
    /// An example line, for the docs (empty when there is none).
    pub example: &'static str,
}

impl MarkerDef {
    /// The argument definitions of an [`Form::Args`] marker (empty for other forms).
    pub fn args(&self) -> &'static [ArgDef] {
        match self.form {
            Form::Args(args) => args,
            _ => &[],
        }
    }
}

const fn arg(name: &'static str, ty: ArgType, help: &'static str) -> ArgDef {
    ArgDef {
        name,
        ty,
        optional: false,
        help,
    }
}

const fn opt(name: &'static str, ty: ArgType, help: &'static str) -> ArgDef {
    ArgDef {
        name,
        ty,
        optional: true,
        help,
    }
}

use ArgType::{Bool, Int, String as Str, StringList as List};

/// Arguments of `kubebuilder:rbac` (controller-tools `rbac.Rule`).
pub const RBAC_ARGS: &[ArgDef] = &[
    opt(
        "groups",
        List,
        "API groups of the resources; `\"\"` or `core` is the core group",
    ),
    opt(
        "resources",
        List,
        "resources, with `/subresource` where needed (`deployments/status`)",
    ),
    opt(
        "resourceNames",
        List,
        "restricts the rule to objects with these names",
    ),
    arg(
        "verbs",
        List,
        "API verbs (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `*`, ...)",
    ),
    opt(
        "urls",
        List,
        "non-resource URLs (`/metrics`); only in the ClusterRole",
    ),
    opt(
        "namespace",
        Str,
        "puts the rule into a Role in this namespace instead of the ClusterRole",
    ),
    opt(
        "roleName",
        Str,
        "name of the ClusterRole / Role that receives the rule (default `manager-role`)",
    ),
];

/// Arguments of `kubebuilder:webhook` (controller-tools `webhook.Config`).
pub const WEBHOOK_ARGS: &[ArgDef] = &[
    arg(
        "mutating",
        Bool,
        "`true`: MutatingWebhookConfiguration; `false`: ValidatingWebhookConfiguration",
    ),
    arg(
        "failurePolicy",
        Str,
        "`Fail` or `Ignore` (any letter case): what the API server does when the webhook cannot be called",
    ),
    opt(
        "matchPolicy",
        Str,
        "`Exact` or `Equivalent` (any letter case)",
    ),
    opt(
        "sideEffects",
        Str,
        "`None` or `NoneOnDryRun`; required by admissionregistration.k8s.io/v1",
    ),
    opt(
        "timeoutSeconds",
        Int,
        "seconds the API server waits for an answer, 1 to 30",
    ),
    arg(
        "groups",
        List,
        "API groups of the objects; `core` means `\"\"`",
    ),
    arg(
        "resources",
        List,
        "resources of the objects (`aijobs`, `pods/status`)",
    ),
    arg(
        "verbs",
        List,
        "operations: `create`, `update`, `delete`, `connect` or `*`",
    ),
    arg("versions", List, "API versions of the objects"),
    arg(
        "name",
        Str,
        "webhook name, a domain of at least three segments (`maijob-v1.kb.io`)",
    ),
    opt(
        "serviceName",
        Str,
        "Service in front of the webhook server (default `webhook-service`)",
    ),
    opt(
        "serviceNamespace",
        Str,
        "namespace of that Service (default `system`, replaced by kustomize)",
    ),
    opt(
        "servicePort",
        Int,
        "port of that Service (default: the API server's default, 443)",
    ),
    opt(
        "path",
        Str,
        "URL path served by the webhook server; exactly one of `path` and `url`",
    ),
    opt(
        "url",
        Str,
        "`https://` URL of a webhook outside the cluster; exactly one of `path` and `url`",
    ),
    opt(
        "webhookVersions",
        List,
        "versions of the configuration objects to write; only `v1`",
    ),
    arg(
        "admissionReviewVersions",
        List,
        "AdmissionReview versions the server understands, in order of preference (`v1`)",
    ),
    opt(
        "reinvocationPolicy",
        Str,
        "`Never` or `IfNeeded`; mutating webhooks only",
    ),
    opt(
        "patch",
        Str,
        "JSON object merged into the webhook (RFC 7386 merge patch) for fields without an argument, such as `namespaceSelector`; write it in backticks",
    ),
];

/// Arguments of `kubebuilder:webhookconfiguration` (controller-tools `webhook.WebhookConfig`).
pub const WEBHOOK_CONFIGURATION_ARGS: &[ArgDef] = &[
    arg(
        "mutating",
        Bool,
        "which configuration object this marker names",
    ),
    opt(
        "name",
        Str,
        "object name (defaults: `mutating-webhook-configuration`, `validating-webhook-configuration`)",
    ),
];

/// Every marker rsbuilder knows. Looked up by [`lookup`]; rendered by [`reference_markdown`].
pub static MARKERS: &[MarkerDef] = &[
    MarkerDef {
        name: "kubebuilder:rbac",
        form: Form::Args(RBAC_ARGS),
        help: "A permission of the manager. All rbac markers of the sources become \
               `config/rbac/role.yaml`: the ClusterRole `manager-role` (a Role in namespaced \
               projects), plus one Role per `namespace`/`roleName`, merged and sorted as \
               controller-gen does.",
        example: "// +kubebuilder:rbac:groups=apps,resources=deployments;deployments/status,verbs=get;list;watch",
    },
    MarkerDef {
        name: "kubebuilder:webhook",
        form: Form::Args(WEBHOOK_ARGS),
        help: "An admission webhook served by the manager. All webhook markers become \
               `config/webhook/manifests.yaml`: a MutatingWebhookConfiguration, then a \
               ValidatingWebhookConfiguration, webhooks sorted by name.",
        example: "// +kubebuilder:webhook:path=/mutate-ai-ai-example-com-v1-aijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ai.ai.example.com,resources=aijobs,verbs=create;update,versions=v1,name=maijob-v1.kb.io,admissionReviewVersions=v1",
    },
    MarkerDef {
        name: "kubebuilder:webhookconfiguration",
        form: Form::Args(WEBHOOK_CONFIGURATION_ARGS),
        help: "Names the MutatingWebhookConfiguration (`mutating=true`) or the \
               ValidatingWebhookConfiguration (`mutating=false`); at most one of each.",
        example: "// +kubebuilder:webhookconfiguration:mutating=true,name=ai-operator-mutating",
    },
    MarkerDef {
        name: "rsbuilder:allow",
        form: Form::Value(ArgType::StringList),
        help: "Acknowledges a `manifests` warning about a dangerous grant or webhook \
               (docs/markers.md, \"Dangerous manifests\"): the checks it names stay quiet for \
               the next `+kubebuilder:rbac` or `+kubebuilder:webhook` marker of the same file, \
               also under `--strict`. Write it once a human has decided the grant is needed.",
        example: "// +rsbuilder:allow=secrets",
    },
    MarkerDef {
        name: "kubebuilder:scaffold",
        form: Form::Ignored,
        help: "Insertion point for `rsbuilder create` (`// +kubebuilder:scaffold:imports`). \
               Valid anywhere; `manifests` ignores it.",
        example: "// +kubebuilder:scaffold:controllers",
    },
    MarkerDef {
        name: "kubebuilder:validation",
        form: Form::Unsupported(
            "write the constraint as an attribute kube-derive reads: `#[schemars(range(min = 1, max = 100))]`, `#[schemars(length(max = 63))]`, `#[schemars(regex(pattern = \"...\"))]`, or a CEL rule with `#[x_kube(validation = \"...\")]`",
        ),
        help: "CRD validation markers of Go types. rsbuilder derives the schema from the \
               attributes kube-derive and schemars read instead.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:default",
        form: Form::Unsupported(
            "use `#[serde(default)]` / `#[serde(default = \"path\")]` on the field; the schema default is its value",
        ),
        help: "Field defaults of Go types.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:subresource",
        form: Form::Unsupported(
            "use `#[kube(status = \"...Status\")]` or `#[kube(scale(...))]` on the CustomResource",
        ),
        help: "Status and scale subresources of Go types.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:printcolumn",
        form: Form::Unsupported("use `#[kube(printcolumn = r#\"{...}\"#)]` on the CustomResource"),
        help: "Printer columns of Go types.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:resource",
        form: Form::Unsupported(
            "use `#[kube(namespaced, shortname = \"...\", category = \"...\", plural = \"...\")]` on the CustomResource",
        ),
        help: "Scope, short names, categories and plural of Go types.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:storageversion",
        form: Form::Unsupported("use `#[kube(storage)]` on the version that is stored"),
        help: "Storage version of Go types.",
        example: "",
    },
    MarkerDef {
        name: "kubebuilder:object",
        form: Form::Unsupported(
            "a Rust type needs no generated object code; `#[derive(CustomResource)]` makes the root type",
        ),
        help: "Go object / deepcopy generation.",
        example: "",
    },
];

/// The Rust attribute or type that replaces one controller-gen validation marker, by the
/// marker's last part (`Enum` of `+kubebuilder:validation:Enum=a;b`), as kube-derive and
/// schemars derive the schema from it.
const VALIDATION_INSTEAD: &[(&[&str], &str)] = &[
    (
        &["Enum"],
        "make the field's type a Rust enum of unit variants deriving `JsonSchema` (`enum Engine { Mysql, Postgres }`, with `#[serde(rename_all = \"lowercase\")]` for lowercase values): its variants become the schema's `enum`",
    ),
    (
        &["Pattern"],
        "`#[schemars(regex(pattern = r\"^[0-9]+$\"))]` on the field",
    ),
    (
        &["Minimum", "Maximum"],
        "`#[schemars(range(min = 1, max = 100))]` on the field (either bound alone works)",
    ),
    (
        &["ExclusiveMinimum", "ExclusiveMaximum", "MultipleOf"],
        "a CEL rule on the field: `#[x_kube(validation = \"self > 0\")]`",
    ),
    (
        &["MinLength", "MaxLength"],
        "`#[schemars(length(min = 1, max = 63))]` on the `String` field",
    ),
    (
        &["MinItems", "MaxItems"],
        "`#[schemars(length(min = 1, max = 10))]` on the `Vec` field",
    ),
    (
        &["Required"],
        "nothing to write: a field is required unless its type is an `Option` or it has `#[serde(default)]`",
    ),
    (
        &["Optional"],
        "make the field an `Option<T>`, or give it `#[serde(default)]`",
    ),
    (
        &["XValidation"],
        "`#[x_kube(validation = \"<CEL rule>\")]` on the field or the struct",
    ),
];

/// What to write instead of the unsupported marker `name` (its name without arguments,
/// `kubebuilder:validation:Enum`) whose definition says `general`: the attribute for that
/// one validation marker where [`VALIDATION_INSTEAD`] has it, else `general`.
pub fn instead_of(name: &str, general: &'static str) -> &'static str {
    let Some(part) = name.strip_prefix("kubebuilder:validation:") else {
        return general;
    };
    let part = part.split([':', '=']).next().unwrap_or_default();
    VALIDATION_INSTEAD
        .iter()
        .find(|(names, _)| names.contains(&part))
        .map_or(general, |(_, instead)| instead)
}

/// Finds the definition for a marker name: an exact name, or a name under an
/// [`Form::Ignored`] / [`Form::Unsupported`] prefix (`kubebuilder:validation:Maximum`).
pub fn lookup(name: &str) -> Option<&'static MarkerDef> {
    MARKERS.iter().find(|d| match d.form {
        Form::Args(_) | Form::Value(_) | Form::Flag => d.name == name,
        Form::Ignored | Form::Unsupported(_) => {
            name == d.name
                || name
                    .strip_prefix(d.name)
                    .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('='))
        }
    })
}

/// The registered marker whose name is nearest to `name` or to one of its `:`-separated
/// prefixes (`kubebuilder:scafold:imports` → `kubebuilder:scaffold`), by optimal string
/// alignment distance (Levenshtein plus adjacent transpositions), when it is near enough to be
/// a likely misspelling, or that it is a truncation of.
pub fn suggest(name: &str) -> Option<&'static str> {
    let prefixes = name
        .match_indices(':')
        .map(|(i, _)| &name[..i])
        .chain(std::iter::once(name));
    let limit = |cand: &str| (cand.len() / 8).max(2);
    prefixes
        .flat_map(|p| {
            MARKERS.iter().filter_map(move |d| {
                // A truncated name (`kubebuilder:webhookconfig`) is a near miss too.
                let truncated = d.name.starts_with(p) && p.len() > "kubebuilder:".len() + 2;
                let dist = if truncated {
                    1
                } else if p.len().abs_diff(d.name.len()) > limit(d.name) {
                    // The distance is at least the length difference: too far, and computing
                    // it for long lines is quadratic.
                    return None;
                } else {
                    distance(p, d.name)
                };
                Some((dist, d.name))
            })
        })
        .filter(|(dist, cand)| *dist > 0 && *dist <= limit(cand))
        .min_by_key(|(dist, _)| *dist)
        .map(|(_, cand)| cand)
}

/// `strsim::osa_distance` of `a` and `b` after their common prefix (usually `kubebuilder:`),
/// which does not change the distance and keeps the quadratic part short.
fn distance(a: &str, b: &str) -> usize {
    let common: usize = a
        .char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .map(|((_, x), _)| x.len_utf8())
        .sum();
    strsim::osa_distance(&a[common..], &b[common..])
}

/// The marker reference of `docs/markers.md`, rendered from [`MARKERS`]. The doc embeds this
/// text between `<!-- markers:begin -->` and `<!-- markers:end -->`, and a test checks that
/// it is current.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    for def in MARKERS {
        let _ = writeln!(out, "### `+{}`\n", def.name);
        let _ = writeln!(out, "{}\n", def.help);
        match def.form {
            Form::Args(args) => {
                let _ = writeln!(out, "| argument | type | required | meaning |");
                let _ = writeln!(out, "|---|---|---|---|");
                for a in args {
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} | {} |",
                        a.name,
                        a.ty.describe(),
                        if a.optional { "no" } else { "yes" },
                        a.help
                    );
                }
                out.push('\n');
            }
            Form::Value(ty) => {
                let _ = writeln!(
                    out,
                    "Takes one {} value: `+{}=<value>`.\n",
                    ty.describe(),
                    def.name
                );
            }
            Form::Flag => {
                let _ = writeln!(out, "Takes no value.\n");
            }
            Form::Ignored => {
                let _ = writeln!(out, "Any `+{}:<name>` is accepted and ignored.\n", def.name);
            }
            Form::Unsupported(instead) => {
                let _ = writeln!(
                    out,
                    "`+{}` and every `+{}:...` marker is an error in rsbuilder: {instead}.\n",
                    def.name, def.name
                );
                if def.name == "kubebuilder:validation" {
                    let _ = writeln!(out, "| controller-gen marker | in Rust |\n|---|---|");
                    for (names, instead) in VALIDATION_INSTEAD {
                        let names: Vec<String> = names
                            .iter()
                            .map(|n| format!("`+{}:{n}`", def.name))
                            .collect();
                        let _ = writeln!(out, "| {} | {instead} |", names.join(", "));
                    }
                    out.push('\n');
                }
            }
        }
        if !def.example.is_empty() {
            let _ = writeln!(out, "```rust\n{}\n```\n", def.example);
        }
    }
    out
}
