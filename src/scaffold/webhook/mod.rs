//! `rsbuilder create webhook`: defaulting and validating admission webhooks (and conversion)
//! for a kind, the HTTPS webhook server of the generated manager, and the kustomize
//! configuration that deploys them with cert-manager.
//!
//! Mirrors Kubebuilder's `create webhook`: the kind's API must exist in PROJECT (unless it is
//! a built-in Kubernetes type), the webhook file is `src/webhook/<version>/<kind>_webhook.rs`,
//! the paths are `/mutate-<group-dashed>-<version>-<kind>` and `/validate-…`, the webhook
//! names `m<kind>-<version>.kb.io` / `v<kind>-<version>.kb.io`, and PROJECT records the
//! webhooks. Where it differs: each webhook type is a section of the kind's file inserted
//! before scaffold markers, so adding a second type later keeps the code already there.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use askama::Template;

use crate::model::layout::{self, KindLayout};
use crate::model::project::{Project, ProjectResource, ResourceWebhooks};
use crate::model::{Resource, gvk};
use crate::scaffold::{File, Plan, render};

pub mod spec_sample;

/// What `create webhook` was asked for (the CLI flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookOptions {
    /// `--group`.
    pub group: String,
    /// `--version`.
    pub version: String,
    /// `--kind`.
    pub kind: String,
    /// `--defaulting`.
    pub defaulting: bool,
    /// `--programmatic-validation`.
    pub validation: bool,
    /// `--conversion`.
    pub conversion: bool,
    /// `--spoke` versions (with `--conversion`).
    pub spoke: Vec<String>,
    /// `--defaulting-path`.
    pub defaulting_path: Option<String>,
    /// `--validation-path`.
    pub validation_path: Option<String>,
    /// `--force`.
    pub force: bool,
}

impl WebhookOptions {
    /// The flags that recreate the webhooks PROJECT entry `r` records (`alpha generate`):
    /// each webhook type, the conversion spokes and custom paths; never `--force`. `None`
    /// when the entry records no webhook.
    pub fn from_project_resource(r: &ProjectResource) -> Option<Self> {
        let w = r.webhooks.as_ref()?;
        if !(w.defaulting || w.validation || w.conversion) {
            return None;
        }
        Some(Self {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            defaulting: w.defaulting,
            validation: w.validation,
            conversion: w.conversion,
            spoke: w.spoke.clone(),
            defaulting_path: w.defaulting_path.clone(),
            validation_path: w.validation_path.clone(),
            force: false,
        })
    }
}

/// Checks the flag combination before anything is read: at least one webhook type, `--spoke`
/// only with `--conversion`, custom paths only with their webhook type and shaped like a
/// URL path that fits in a marker. Returns the usage error to print (exit code 2).
pub fn check_flags(opts: &WebhookOptions) -> Result<(), String> {
    if !(opts.defaulting || opts.validation || opts.conversion) {
        return Err("choose at least one webhook type: --defaulting, --programmatic-validation or --conversion".into());
    }
    if !opts.spoke.is_empty() && !opts.conversion {
        return Err("--spoke is only valid with --conversion".into());
    }
    if opts.conversion && opts.spoke.is_empty() {
        return Err("--conversion needs the spoke versions converted to this hub version: --spoke v2[,v3...]".into());
    }
    for (flag, path, on) in [
        ("--defaulting-path", &opts.defaulting_path, opts.defaulting),
        ("--validation-path", &opts.validation_path, opts.validation),
    ] {
        let Some(path) = path else { continue };
        if !on {
            let needs = if flag == "--defaulting-path" {
                "--defaulting"
            } else {
                "--programmatic-validation"
            };
            return Err(format!("{flag} is only valid with {needs}"));
        }
        check_path(flag, path)?;
    }
    Ok(())
}

fn check_path(flag: &str, path: &str) -> Result<(), String> {
    crate::model::validate::webhook_path(path)
        .map_err(|r| format!("invalid value {path:?} for {flag}: {r}"))
}

/// The names the webhook templates use, computed once from the resource and PROJECT.
#[derive(Debug, Clone)]
pub struct Names {
    /// Kind (`AIJob`).
    pub kind: String,
    /// Lower-case kind (`aijob`): the webhook file stem and the marker name part.
    pub lower: String,
    /// Variable name for an object of the kind in generated code (`ai_job`).
    pub var: String,
    /// Path of the Rust type (`crate::api::v1::AIJob`, `k8s_openapi::api::core::v1::Pod`).
    pub type_path: String,
    /// `apiVersion` of objects (`ai.ai.example.com/v1`).
    pub api_version: String,
    /// API group as the API server spells it (`""` for core).
    pub api_group: String,
    /// `groups=` value of the webhook marker (`""` quoted for core).
    pub marker_group: String,
    /// Plural resource.
    pub plural: String,
    /// Version.
    pub version: String,
    /// Namespaced kind.
    pub namespaced: bool,
    /// A built-in Kubernetes type (no `spec.foo` example field).
    pub builtin: bool,
    /// The spec still has the example field `foo: Option<String>` that `create api`
    /// scaffolds: the webhook functions and tests demonstrate on it. Without it they are
    /// field-free (they change and reject nothing yet).
    pub example_foo: bool,
    /// The smallest `spec` that deserializes into the kind (the spec's required fields with
    /// empty values, see [`spec_sample::minimal_value`]), `{}` for a built-in type.
    pub spec: serde_json::Value,
    /// Path of the defaulting webhook.
    pub defaulting_path: String,
    /// Path of the validating webhook.
    pub validation_path: String,
    /// Project name.
    pub project_name: String,
    /// Rust crate name of the generated project (project name with `-` → `_`).
    pub crate_name: String,
}

impl Names {
    /// The minimal spec as a `json!` argument (`{"hostname": ""}`).
    pub fn spec_json(&self) -> String {
        spec_sample::json_macro_text(&self.spec)
    }

    /// The minimal spec with `"foo"` set to the string `value`, as a `json!` argument.
    pub fn spec_with_foo(&self, value: &str) -> String {
        self.spec_with_foo_expr(&serde_json::Value::String(value.to_string()).to_string())
    }

    /// The minimal spec with `"foo"` set to the Rust expression `expr`, as a `json!` argument.
    pub fn spec_with_foo_expr(&self, expr: &str) -> String {
        let mut fields: Vec<String> = self
            .spec
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "foo")
            .map(|(k, v)| {
                format!(
                    "{}: {}",
                    serde_json::Value::String(k.clone()),
                    spec_sample::json_macro_text(v)
                )
            })
            .collect();
        fields.push(format!("\"foo\": {expr}"));
        format!("{{{}}}", fields.join(", "))
    }
}

/// `src/webhook/mod.rs`: the module tree of the webhooks (the server is the runtime's).
#[derive(Template)]
#[template(path = "webhook/webhook_mod.rs")]
struct WebhookModFile;

#[derive(Template)]
#[template(path = "webhook/version_mod.rs")]
struct VersionMod<'a> {
    version: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/kind_webhook.rs")]
struct KindFile<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/defaulting.rs")]
struct Defaulting<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/defaulting_tests.rs")]
struct DefaultingTests<'a> {
    n: &'a Names,
    /// With the test through the test cluster (the kind file has its registrations marker).
    cluster: bool,
}

#[derive(Template)]
#[template(path = "webhook/validation.rs")]
struct Validation<'a> {
    n: &'a Names,
}

#[derive(Template)]
#[template(path = "webhook/validation_tests.rs")]
struct ValidationTests<'a> {
    n: &'a Names,
    /// With the test through the test cluster (the kind file has its registrations marker).
    cluster: bool,
}

/// A spoke version of a conversion webhook.
#[derive(Debug, Clone)]
struct Spoke {
    version: String,
    ident: String,
    api_version: String,
    type_path: String,
    /// The `spec` of the spoke objects in the conversion tests (`json!` text): the spoke's
    /// minimal spec.
    spec: String,
    /// The required fields of the spoke and the hub differ, so carrying fields over by name
    /// cannot convert the minimal objects: the round-trip tests are generated `#[ignore]`d
    /// until the conversion functions are written (a comment says so, and a note is printed),
    /// so the project's tests pass as scaffolded.
    differs: bool,
}

#[derive(Template)]
#[template(path = "webhook/kind_conversion.rs")]
struct KindConversion<'a> {
    n: &'a Names,
    spokes: &'a [Spoke],
}

#[derive(Template)]
#[template(path = "webhook/config/crd_conversion_patch.yaml")]
struct CrdConversionPatch<'a> {
    crd_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/crd_conversion_replacements.yaml")]
struct CrdConversionReplacements<'a> {
    crd_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/main_webhooks.rs")]
struct MainWebhooks {
    /// `main.rs` has the `certificates` marker, where [`MainWebhookCerts`] loads the
    /// certificate before connecting; without it (a project from an earlier rsbuilder) the
    /// server start loads it itself, after connecting.
    early_certs: bool,
}

/// Loads the webhook serving certificate in `main` before it connects to the cluster.
#[derive(Template)]
#[template(path = "webhook/main_webhook_certs.rs")]
struct MainWebhookCerts;

#[derive(Template)]
#[template(path = "webhook/config/service.yaml")]
struct ServiceYaml<'a> {
    project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/issuer.yaml")]
struct IssuerYaml<'a> {
    project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/certificate.yaml")]
struct CertificateYaml<'a> {
    project_name: &'a str,
}

#[derive(Template)]
#[template(path = "webhook/config/allow-webhook-traffic.yaml")]
struct NetworkPolicyYaml<'a> {
    project_name: &'a str,
}

/// Resolves the kind: a built-in Kubernetes type, or an API of this project that PROJECT
/// lists. Returns the resource and the index of its PROJECT entry (if any).
fn resolve_resource(project: &Project, opts: &WebhookOptions) -> Result<(Resource, Option<usize>)> {
    gvk::validate_kind(&opts.kind)?;
    gvk::validate_version(&opts.version)?;
    let index = project
        .resources
        .iter()
        .position(|r| r.group == opts.group && r.version == opts.version && r.kind == opts.kind);
    // A kind PROJECT lists with an API is the project's own, also in a group named like a
    // built-in one (`batch` CronJob of the Kubebuilder tutorial), as `create api` made it.
    let own = index.filter(|&i| project.resources[i].api.is_some());
    if own.is_none()
        && let Some(builtin) = Resource::builtin(&opts.group, &opts.version, &opts.kind)?
    {
        return Ok((builtin, index));
    }
    if index.is_some_and(|i| crate::model::project::is_served(&project.resources[i])) {
        bail!(
            "{}/{} {} is served by this project's aggregated API server (`rsbuilder create apiserver`, PROJECT's `{}` field), not installed as a CRD: `create webhook` scaffolds admission and conversion webhooks for CRD kinds only. A served kind's admission lives in the API server (src/bin/apiserver.rs), which checks every {} write against the schema of its types in src/apiserver/{}/ (docs/apiserver.md)",
            opts.group,
            opts.version,
            opts.kind,
            crate::model::project::API_SERVER_FIELD,
            opts.kind,
            opts.version
        );
    }
    if index.is_some_and(|i| project.resources[i].external) {
        bail!(
            "{}/{} {} is an external kind (another project defines it, `create api --external-api-crd` / `--external-api-path`): rsbuilder does not scaffold webhooks for external kinds yet; the project that installs its CRD serves its webhooks",
            opts.group,
            opts.version,
            opts.kind
        );
    }
    let Some(i) = own else {
        bail!(
            "the API {}/{} {} is not in PROJECT; create it first with `rsbuilder create api --group {} --version {} --kind {}` (webhooks need the kind's type)",
            opts.group,
            opts.version,
            opts.kind,
            opts.group,
            opts.version,
            opts.kind
        );
    };
    let entry = &project.resources[i];
    let domain = entry
        .domain
        .clone()
        .unwrap_or_else(|| project.domain.clone());
    let namespaced = entry.api.as_ref().is_some_and(|a| a.namespaced);
    let resource = Resource::custom(
        &opts.group,
        &domain,
        &opts.version,
        &opts.kind,
        entry.plural.as_deref(),
        namespaced,
    )?;
    Ok((resource, Some(i)))
}

/// Computes the template names for a resource.
pub fn names(
    project: &Project,
    resource: &Resource,
    entry: Option<&ProjectResource>,
    opts: &WebhookOptions,
) -> Names {
    let suffix = resource.webhook_path_suffix();
    let mut var = resource.snake();
    if crate::model::reserved::KEYWORDS.contains(&var.as_str()) {
        var.push_str("_obj");
    }
    let type_path = match &resource.builtin {
        Some(b) => b.rust_path.to_string(),
        None => entry
            .and_then(|e| e.path.clone())
            .filter(|p| p.starts_with("crate::"))
            .unwrap_or_else(|| KindLayout::of(resource, project.multigroup).type_path()),
    };
    let api_group = resource.qualified_group();
    let marker_group = if api_group.is_empty() {
        "\"\"".to_string()
    } else {
        api_group.clone()
    };
    Names {
        kind: resource.kind.clone(),
        lower: resource.kind.to_lowercase(),
        var,
        type_path,
        api_version: resource.api_version(),
        api_group,
        marker_group,
        plural: resource.plural.clone(),
        version: resource.version.clone(),
        namespaced: resource.namespaced,
        builtin: resource.builtin.is_some(),
        example_foo: false,
        spec: serde_json::Value::Object(Default::default()),
        defaulting_path: opts
            .defaulting_path
            .clone()
            .unwrap_or_else(|| format!("/mutate-{suffix}")),
        validation_path: opts
            .validation_path
            .clone()
            .unwrap_or_else(|| format!("/validate-{suffix}")),
        project_name: project.project_name.clone(),
        crate_name: project.project_name.replace('-', "_"),
    }
}

/// Builds the plan of `create webhook` in the project at `dir`: every file it creates or
/// changes, checked but not written. Errors (nothing written): no PROJECT, invalid names, an
/// API that PROJECT does not list, a webhook type that already exists for the kind without
/// `--force`, spoke versions that are not APIs of the kind.
pub fn plan(dir: &Path, opts: &WebhookOptions) -> Result<Plan> {
    Ok(plan_with_notes(dir, opts)?.0)
}

/// [`plan`], with the notes to print: when the kind's spec cannot be derived from the
/// sources, the generated tests build objects with an empty `spec` and may need a valid one.
pub fn plan_with_notes(dir: &Path, opts: &WebhookOptions) -> Result<(Plan, Vec<String>)> {
    let mut plan = Plan::new(dir, opts.force);
    let mut project = super::load_project_or_explain(&plan, dir)?;
    let (resource, index) = resolve_resource(&project, opts)?;
    if resource.builtin.is_none() {
        crate::model::reserved::check_kind(&resource.kind)?;
    }
    let existing = index
        .and_then(|i| project.resources[i].webhooks.clone())
        .unwrap_or_default();
    if project.multigroup {
        crate::model::layout::check_group_module(&opts.group)?;
    }
    let files = KindLayout::of(&resource, project.multigroup);
    let file = files.webhook().path;
    if !opts.force {
        for (asked, have, what) in [
            (opts.defaulting, existing.defaulting, "defaulting"),
            (opts.validation, existing.validation, "validating"),
            (opts.conversion, existing.conversion, "conversion"),
        ] {
            if asked && have {
                bail!(
                    "the {what} webhook for {}/{} {} already exists (PROJECT, {}); re-run with --force to scaffold {} again",
                    opts.group,
                    opts.version,
                    opts.kind,
                    file.display(),
                    file.display()
                );
            }
        }
    }
    let mut names = names(
        &project,
        &resource,
        index.map(|i| &project.resources[i]),
        opts,
    );
    let mut notes = Vec::new();
    let specs = if resource.builtin.is_none() {
        spec_facts(&plan, &files, &resource, &mut names, &mut notes)?
    } else {
        BTreeMap::new()
    };
    // With --force the kind's file is written again from the templates, with every webhook
    // type the kind has (recorded ones and new ones).
    let defaulting = opts.defaulting || (opts.force && existing.defaulting);
    let validation = opts.validation || (opts.force && existing.validation);

    let header = crate::scaffold::api::rust_header(&plan)?;
    add_server(&mut plan, &header)?;
    add_version_mod(&mut plan, &names, &files, &header)?;
    if defaulting || validation {
        add_kind(
            &mut plan,
            &names,
            &files,
            (defaulting, validation),
            opts.force,
            &header,
        )?;
    }
    add_config(&mut plan, &project)?;
    if opts.conversion {
        let spokes = spokes(&project, &resource, opts, &specs)?;

        for s in spokes.iter().filter(|s| s.differs) {
            notes.push(format!(
                "the required fields of {} {} and {} differ: the round-trip test in {} is ignored until the Convert of {} converts them (then remove its #[ignore])",
                resource.kind, s.version, resource.version, files.conversion().path.display(), s.version
            ));
        }
        add_conversion(&mut plan, &names, &resource, &files, &spokes, &header)?;
    }

    // PROJECT: record the webhooks.
    let webhooks = ResourceWebhooks {
        defaulting: existing.defaulting || opts.defaulting,
        defaulting_path: if opts.defaulting {
            opts.defaulting_path.clone()
        } else {
            existing.defaulting_path.clone()
        },
        validation: existing.validation || opts.validation,
        validation_path: if opts.validation {
            opts.validation_path.clone()
        } else {
            existing.validation_path.clone()
        },
        conversion: existing.conversion || opts.conversion,
        spoke: if opts.conversion {
            opts.spoke.clone()
        } else {
            existing.spoke.clone()
        },
        webhook_version: Some("v1".into()),
    };
    match index {
        Some(i) => project.resources[i].webhooks = Some(webhooks),
        None => {
            let b = resource
                .builtin
                .as_ref()
                .expect("only built-in types may lack a PROJECT entry");
            project.resources.push(ProjectResource {
                core: true,
                group: opts.group.clone(),
                kind: opts.kind.clone(),
                path: Some(b.rust_path.to_string()),
                version: opts.version.clone(),
                webhooks: Some(webhooks),
                ..Default::default()
            });
        }
    }
    plan.add(File::at(layout::owned(layout::PROJECT), project.render()));
    Ok((plan, notes))
}

/// Reads what the generated code may assume about the spec of a custom kind: whether its
/// types file (`src/api/<version>/<kind>_types.rs`) still has the example field `foo`, and
/// the minimal spec of each version of the kind, derived from `src/` as `rsbuilder
/// manifests` derives the CRD. Sets [`Names::example_foo`] and [`Names::spec`]; returns the
/// minimal specs by version (empty, with a note pushed, when the CRD cannot be derived).
fn spec_facts(
    plan: &Plan,
    files: &KindLayout,
    resource: &Resource,
    names: &mut Names,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, serde_json::Value>> {
    let types = files.types().path;
    names.example_foo = plan
        .read(&types)?
        .is_some_and(|text| spec_sample::has_example_foo(&text, &resource.kind));
    let specs = plan
        .read_tree(layout::SRC_DIR, "rs")
        .map_err(|e| e.to_string())
        .and_then(|sources| {
            spec_sample::minimal_specs(
                plan.root(),
                sources,
                &resource.qualified_group(),
                &resource.kind,
            )
        });
    Ok(match specs {
        Ok(specs) => {
            if let Some(spec) = specs.get(&resource.version) {
                names.spec = spec.clone();
            }
            specs
        }
        Err(e) => {
            notes.push(format!(
                "the CRD of {} could not be derived from src/ ({e}); the generated tests build objects with `\"spec\": {{}}` and may need a valid spec",
                resource.kind
            ));
            BTreeMap::new()
        }
    })
}

/// The webhook module tree and its wiring into lib.rs, and the start of the runtime's webhook
/// server in main.rs, with the `webhook-registrations` marker where each kind's webhooks are
/// registered.
fn add_server(plan: &mut Plan, header: &str) -> Result<()> {
    // The webhook server is the runtime's (rsbuilder-runtime/, which `init` writes). A
    // project from an earlier rsbuilder, with no runtime, would get webhooks that do not
    // build: refuse it, writing nothing, until `alpha update` can bring the runtime in.
    let runtime_manifest = format!("{}/Cargo.toml", crate::scaffold::runtime::DIR);
    let by_version = crate::scaffold::runtime::Source::of(&crate::model::Project::load_in(plan)?)
        == crate::scaffold::runtime::Source::Crate;
    if !by_version && !plan.exists(&runtime_manifest)? {
        bail!(
            "this project has no {dir}/ (it was made by an rsbuilder from before the runtime \
             crate): the webhooks are served by the runtime, so nothing was written; \
             re-create the project with `rsbuilder init` and copy your types and \
             controllers over",
            dir = crate::scaffold::runtime::DIR
        );
    }
    plan.add(File::at(
        layout::shared(layout::WEBHOOK_MOD),
        format!("{header}{}", render(&WebhookModFile)?),
    ));
    plan.insert(layout::LIB_RS, "modules", "pub mod webhook;");
    let main = plan.read(layout::MAIN_RS)?.unwrap_or_default();
    // A server start of an earlier rsbuilder called `webhook::serve(` itself.
    if !main.contains(".serve_webhooks(") && !main.contains("rsbuilder_runtime::webhook::serve(") {
        // Found by syntax; a duplicated marker counts as present, so the insertion reports it.
        let early_certs = !matches!(
            crate::engine::marker::locate(Path::new(layout::MAIN_RS), &main, "certificates"),
            Err(crate::engine::marker::MarkerError::Missing { .. })
        );
        if early_certs {
            plan.insert(layout::MAIN_RS, "certificates", render(&MainWebhookCerts)?);
        }
        plan.insert(
            layout::MAIN_RS,
            "webhooks",
            render(&MainWebhooks { early_certs })?,
        );
    }
    Ok(())
}

/// Registers `call` (`defaulting::<K, _>(…)`, `conversion(…)`) with the runtime's webhook
/// registry in main.rs.
fn register(plan: &mut Plan, call: String) {
    plan.insert(
        layout::MAIN_RS,
        "webhook-registrations",
        format!("let webhooks = webhooks.{call};"),
    );
}

/// The kind's type as main.rs names it: `crate::` in the library is the crate's name there.
fn main_path(n: &Names, type_path: &str) -> String {
    match type_path.strip_prefix("crate::") {
        Some(rest) => format!("{}::{rest}", n.crate_name),
        None => type_path.to_string(),
    }
}

/// `src/webhook/<version>/mod.rs` and its module line (in a multigroup project
/// `src/webhook/<group>/<version>/mod.rs`, listed in the group's module, which
/// `src/webhook/mod.rs` lists).
fn add_version_mod(plan: &mut Plan, n: &Names, files: &KindLayout, header: &str) -> Result<()> {
    if let Some(group) = &files.group {
        plan.insert(
            layout::WEBHOOK_MOD,
            "webhook-modules",
            layout::group_line(group),
        );
        plan.add(File::at(
            layout::group_mod(layout::WEBHOOK_DIR, group),
            format!(
                "{header}{}",
                render(&crate::scaffold::api::GroupModRs::webhook(group))?
            ),
        ));
    }
    plan.insert(
        files.webhook_versions_file(),
        "webhook-modules",
        format!("pub mod {};", n.version),
    );
    plan.add(File::at(
        files.webhook_version_mod(),
        format!(
            "{header}{}",
            render(&VersionMod {
                version: &n.version,
            })?
        ),
    ));
    Ok(())
}

/// The spoke versions of `--conversion`: each a valid version other than the hub, whose API
/// PROJECT lists for the same group and kind. Built-in types cannot be converted.
fn spokes(
    project: &Project,
    hub: &Resource,
    opts: &WebhookOptions,
    specs: &BTreeMap<String, serde_json::Value>,
) -> Result<Vec<Spoke>> {
    if hub.builtin.is_some() {
        bail!(
            "--conversion: {} is a built-in Kubernetes type; only custom resources of this project have conversion webhooks",
            hub.kind
        );
    }
    let mut spokes: Vec<Spoke> = Vec::new();
    for version in &opts.spoke {
        gvk::validate_version(version).map_err(|mut e| {
            e.flag = "--spoke".into();
            e
        })?;
        if *version == hub.version {
            bail!(
                "--spoke {version}: the spoke versions must differ from the hub version --version {}",
                hub.version
            );
        }
        if spokes.iter().any(|s| s.version == *version) {
            continue;
        }
        let Some(entry) = project
            .find(&opts.group, version, &opts.kind)
            .filter(|e| e.api.is_some())
        else {
            bail!(
                "--spoke {version}: the API {}/{version} {} is not in PROJECT; create it first with `rsbuilder create api --group {} --version {version} --kind {}`",
                opts.group,
                opts.kind,
                opts.group,
                opts.kind
            );
        };
        let type_path = entry
            .path
            .clone()
            .filter(|p| p.starts_with("crate::"))
            .unwrap_or_else(|| {
                layout::type_path(
                    layout::group_of(project.multigroup, &hub.group),
                    version,
                    &hub.kind,
                )
            });
        let empty = serde_json::Value::Object(Default::default());
        let spec = specs.get(version).unwrap_or(&empty);
        // The scaffolded functions carry fields over by JSON name; when the minimal objects
        // of the two versions do not decode as each other, the round trip needs real code.
        let differs = specs.get(&hub.version).is_some_and(|hub_spec| {
            !spec_sample::carries_over(spec, hub_spec) || !spec_sample::carries_over(hub_spec, spec)
        });
        spokes.push(Spoke {
            version: version.clone(),
            ident: version.replace('-', "_"),
            api_version: format!("{}/{version}", hub.qualified_group()),
            type_path,
            spec: spec_sample::json_macro_text(spec),
            differs,
        });
    }
    Ok(spokes)
}

/// The conversion webhook: the project's `/convert` handler, the kind's hub/spoke functions,
/// the CRD patch that turns conversion on, and its Service and CA replacements.
fn add_conversion(
    plan: &mut Plan,
    n: &Names,
    resource: &Resource,
    files: &KindLayout,
    spokes: &[Spoke],
    header: &str,
) -> Result<()> {
    plan.add(File::at(
        files.conversion(),
        format!("{header}{}", render(&KindConversion { n, spokes })?),
    ));
    plan.insert(
        &files.webhook_version_mod().path,
        "webhook-kinds",
        format!("pub mod {};", files.conversion_module()),
    );
    register(
        plan,
        format!(
            "conversion({}::{}::conversion())",
            n.crate_name,
            files.webhook_module_path(&files.conversion_module())
        ),
    );
    let crd_name = resource.crd_name();
    plan.add(File::at(
        files.conversion_patch(),
        render(&CrdConversionPatch {
            crd_name: &crd_name,
        })?,
    ));
    plan.insert(
        layout::CRD_KUSTOMIZATION,
        "crdkustomizewebhookpatch",
        files.conversion_patch_entry(),
    );
    plan.insert(
        layout::DEFAULT_KUSTOMIZATION,
        "default-replacements",
        render(&CrdConversionReplacements {
            crd_name: &crd_name,
        })?,
    );
    Ok(())
}

/// The kind's webhook file (skeleton plus one section per webhook type, each with its tests),
/// its module and its routes. `force`: the file is written again from the templates.
fn add_kind(
    plan: &mut Plan,
    n: &Names,
    files: &KindLayout,
    (defaulting, validation): (bool, bool),
    force: bool,
    header: &str,
) -> Result<()> {
    plan.insert(
        &files.webhook_version_mod().path,
        "webhook-kinds",
        format!("pub mod {};", files.webhook_module()),
    );
    // Kept when present (a second webhook type adds its section), rendered again with --force.
    let file = files.webhook();
    let path = file.path.clone();
    plan.add(File::at(
        file,
        format!("{header}{}", render(&KindFile { n })?),
    ));
    let module = format!(
        "{}::{}",
        n.crate_name,
        files.webhook_module_path(&files.webhook_module())
    );
    let kind = main_path(n, &n.type_path);
    // A kind file written before the tests through the test cluster has no registrations
    // marker in its tests: its new webhook gets the direct tests only.
    let cluster = force
        || plan
            .read(&path)?
            .is_none_or(|text| text.contains(TEST_REGISTRATIONS_MARKER));
    if cluster {
        crate::scaffold::api::ensure_test_cluster_dependency(plan)?;
    }
    if defaulting {
        plan.insert(&path, "webhook-handlers", Defaulting { n }.render()?);
        let tests = DefaultingTests { n, cluster };
        plan.insert(&path, "webhook-tests", tests.render()?);
        if cluster {
            test_register(
                plan,
                &path,
                format!(
                    "defaulting::<{}, _>(DEFAULTING_PATH, {}Webhook)",
                    n.kind, n.kind
                ),
            );
        }
        register(
            plan,
            format!(
                "defaulting::<{kind}, _>({module}::DEFAULTING_PATH, {module}::{}Webhook)",
                n.kind
            ),
        );
    }
    if validation {
        plan.insert(&path, "webhook-handlers", Validation { n }.render()?);
        let tests = ValidationTests { n, cluster };
        plan.insert(&path, "webhook-tests", tests.render()?);
        if cluster {
            test_register(
                plan,
                &path,
                format!(
                    "validating::<{}, _>(VALIDATION_PATH, {}Webhook)",
                    n.kind, n.kind
                ),
            );
        }
        register(
            plan,
            format!(
                "validating::<{kind}, _>({module}::VALIDATION_PATH, {module}::{}Webhook)",
                n.kind
            ),
        );
    }
    Ok(())
}

/// The marker in the tests of a kind's webhook file before which each webhook is registered
/// for the tests that go through the test cluster, as `src/main.rs` registers it.
const TEST_REGISTRATIONS_MARKER: &str = "+kubebuilder:scaffold:webhook-test-registrations";

/// Registers a webhook (`call`: `defaulting::<K, _>(PATH, KWebhook)`) in the `webhooks()` of
/// the tests of the kind's webhook file `path`.
fn test_register(plan: &mut Plan, path: &Path, call: String) {
    plan.insert(
        path,
        "webhook-test-registrations",
        format!("let webhooks = webhooks.{call};"),
    );
}

/// `config/webhook`, `config/certmanager`, the `config/default` patches and replacements, and
/// the network policy for webhook traffic.
fn add_config(plan: &mut Plan, project: &Project) -> Result<()> {
    let p = project.project_name.as_str();
    let fixed: &[(&str, &str)] = &[
        (
            "config/webhook/kustomization.yaml",
            include_str!("../../../templates/webhook/config/webhook_kustomization.yaml"),
        ),
        (
            "config/webhook/kustomizeconfig.yaml",
            include_str!("../../../templates/webhook/config/webhook_kustomizeconfig.yaml"),
        ),
        (
            layout::WEBHOOK_MANIFESTS,
            include_str!("../../../templates/webhook/config/manifests_placeholder.yaml"),
        ),
        (
            "config/certmanager/kustomization.yaml",
            include_str!("../../../templates/webhook/config/certmanager_kustomization.yaml"),
        ),
        (
            "config/certmanager/kustomizeconfig.yaml",
            include_str!("../../../templates/webhook/config/certmanager_kustomizeconfig.yaml"),
        ),
        (
            "config/default/manager_webhook_patch.yaml",
            include_str!("../../../templates/webhook/config/manager_webhook_patch.yaml"),
        ),
    ];
    for (path, text) in fixed {
        plan.add(File::at(layout::shared(path), *text));
    }
    for (path, text) in [
        (
            "config/webhook/service.yaml",
            render(&ServiceYaml { project_name: p })?,
        ),
        (
            "config/certmanager/issuer.yaml",
            render(&IssuerYaml { project_name: p })?,
        ),
        (
            "config/certmanager/certificate.yaml",
            render(&CertificateYaml { project_name: p })?,
        ),
        (
            "config/network-policy/allow-webhook-traffic.yaml",
            render(&NetworkPolicyYaml { project_name: p })?,
        ),
    ] {
        plan.add(File::at(layout::shared(path), text));
    }
    plan.insert(
        layout::NETWORK_POLICY_KUSTOMIZATION,
        "network-policy-resources",
        "- allow-webhook-traffic.yaml",
    );
    let default = layout::DEFAULT_KUSTOMIZATION;
    plan.insert(default, "default-resources", "- ../webhook");
    plan.insert(default, "default-resources", "- ../certmanager");
    plan.insert(
        default,
        "default-patches",
        "- path: manager_webhook_patch.yaml",
    );
    let block = include_str!("../../../templates/webhook/config/default_replacements.yaml");
    // After `create apiserver`, config/default already has a `replacements:` list: the
    // webhook's entries join it (its comment lines stay above them).
    let items: String = block
        .lines()
        .filter(|l| l.trim_end() != "replacements:")
        .map(|l| format!("{l}\n"))
        .collect();
    let text = plan.read(default)?.unwrap_or_default();
    if !text.contains("name: webhook-service") {
        plan.insert(
            default,
            "default-sections",
            super::default_replacements_fragment(&text, block, &items)?,
        );
    }
    Ok(())
}

/// Plans and applies `create webhook` in `dir` (see [`plan_with_notes`]); returns what
/// happened to each file and the notes to print. Nothing is written when an error is
/// returned.
pub fn run(
    dir: &Path,
    opts: &WebhookOptions,
) -> Result<(Vec<crate::scaffold::Resolved>, Vec<String>)> {
    let (plan, notes) = plan_with_notes(dir, opts)?;
    Ok((plan.apply()?, notes))
}

/// What to do after `create webhook`, printed by the CLI.
pub fn next_steps(opts: &WebhookOptions, multigroup: bool) -> String {
    let group = layout::group_of(multigroup, &opts.group);
    let mut out = String::from("\nNext:\n");
    if opts.defaulting || opts.validation {
        out.push_str(&format!(
            "  edit {}, then run `rsbuilder manifests` to write {}/{};\n",
            layout::webhook_file(group, &opts.version, &opts.kind).display(),
            layout::CONFIG_DIR,
            layout::generated::WEBHOOK_MANIFESTS,
        ));
    }
    if opts.conversion {
        out.push_str(&format!(
            "  edit the hub/spoke functions in {};\n",
            layout::conversion_file(group, &opts.version, &opts.kind).display()
        ));
    }
    out.push_str("  deploying needs cert-manager in the cluster (config/certmanager issues the serving certificate).\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(defaulting: bool, validation: bool, conversion: bool) -> WebhookOptions {
        WebhookOptions {
            group: "ai".into(),
            version: "v1".into(),
            kind: "AIJob".into(),
            defaulting,
            validation,
            conversion,
            ..Default::default()
        }
    }

    #[test]
    fn flags_need_a_webhook_type_and_consistent_extras() {
        let none = check_flags(&opts(false, false, false)).unwrap_err();
        assert!(none.contains("--programmatic-validation"), "{none}");
        assert_eq!(check_flags(&opts(true, false, false)), Ok(()));
        let mut o = opts(false, true, false);
        o.validation_path = Some("/validate-it".into());
        assert_eq!(check_flags(&o), Ok(()));
        o.validation_path = Some("validate it".into());
        assert!(check_flags(&o).unwrap_err().contains("--validation-path"));
        o.validation_path = Some("/a,b".into());
        assert!(
            check_flags(&o).is_err(),
            "a comma would end the marker argument"
        );
        let mut o = opts(false, false, true);
        assert!(check_flags(&o).unwrap_err().contains("--spoke"));
        o.spoke = vec!["v2".into()];
        assert_eq!(check_flags(&o), Ok(()));
    }

    #[test]
    fn names_follow_kubebuilder() {
        let project = Project::new(
            "ai.example.com",
            "example.com/ai-operator",
            "ai-operator",
            false,
        );
        let r = Resource::custom("ai", "ai.example.com", "v1", "AIJob", None, true).unwrap();
        let n = names(&project, &r, None, &opts(true, true, false));
        assert_eq!(n.defaulting_path, "/mutate-ai-ai-example-com-v1-aijob");
        assert_eq!(n.validation_path, "/validate-ai-ai-example-com-v1-aijob");
        assert_eq!(n.type_path, "crate::api::v1::AIJob");
        assert_eq!(n.marker_group, "ai.ai.example.com");
        assert_eq!(n.crate_name, "ai_operator");
        let pod = Resource::builtin("core", "v1", "Pod").unwrap().unwrap();
        let n = names(&project, &pod, None, &opts(true, false, false));
        assert_eq!(n.marker_group, "\"\"");
        assert_eq!(n.type_path, "k8s_openapi::api::core::v1::Pod");
        let mut n = names(&project, &r, None, &opts(true, true, false));
        assert_eq!(n.spec_json(), "{}");
        assert_eq!(n.spec_with_foo("mine"), r#"{"foo": "mine"}"#);
        n.spec = serde_json::json!({"hostname": "", "port": 0});
        assert_eq!(n.spec_json(), r#"{"hostname": "", "port": 0}"#);
        assert_eq!(
            n.spec_with_foo(""),
            r#"{"hostname": "", "port": 0, "foo": ""}"#
        );
        assert_eq!(
            n.spec_with_foo_expr("value"),
            r#"{"hostname": "", "port": 0, "foo": value}"#
        );
        let t = Resource::custom("ai", "ai.example.com", "v1", "Type", None, true).unwrap();
        assert_eq!(
            names(&project, &t, None, &opts(true, false, false)).var,
            "type_obj"
        );
    }
}
