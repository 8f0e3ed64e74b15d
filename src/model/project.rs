//! The `PROJECT` file: Kubebuilder's project configuration (format version "3"), which `init`
//! writes and every later command reads and updates.
//!
//! Field names and layout match Kubebuilder's (`domain`, `layout`, `projectName`, `repo`,
//! `resources[].{api,controller,domain,group,kind,path,plural,version,webhooks,core}`), so
//! tools that read Kubebuilder's PROJECT understand ours. The layout names rsbuilder's own
//! Rust layout, [`LAYOUT`].
//!
//! Reading checks every value as the command line checks it ([`Project::parse_file`]: the
//! domain, project name, repo, each resource's group, version, kind, plural, type path and
//! webhook paths), refuses duplicate resources, and recognizes a Kubebuilder (Go) project, each
//! error naming `PROJECT:<line>`. Rewriting ([`Project::render`]) keeps what rsbuilder does not
//! own byte for byte: unknown top-level fields, Kubebuilder's `plugins:` map until a command
//! adds a plugin to it, comments, and every resource entry whose value did not change; only
//! changed fields and entries are written anew.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::gvk::{self, Resource};
use super::validate;

/// The layout plugin key written into `PROJECT` for projects rsbuilder scaffolds.
pub const LAYOUT: &str = "rust.rsbuilder.io/v1";

/// Name of the project configuration file at the project root.
pub const FILE_NAME: &str = "PROJECT";

/// The PROJECT field that marks a resource as served by the aggregated API server (a map
/// with `namespaced`), kept by Kubebuilder's PROJECT model as an unknown field.
pub const API_SERVER_FIELD: &str = "apiServer";

/// Whether PROJECT records `r` as served by the aggregated API server (it has the
/// [`API_SERVER_FIELD`] field, which `create apiserver` writes), rather than as a CRD kind.
pub fn is_served(r: &ProjectResource) -> bool {
    r.unknown.contains_key(API_SERVER_FIELD)
}

/// The whole PROJECT file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// Version of the tool that wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// Project domain; the qualified group of an API is `<group>.<domain>`.
    #[serde(default)]
    pub domain: String,
    /// Layout plugin keys (`rust.rsbuilder.io/v1`).
    #[serde(default)]
    pub layout: Vec<String>,
    /// Kubebuilder's `multigroup: true` (`init --multigroup`, `edit --multigroup`): each API
    /// group has directories of its own, `src/api/<group>/<version>/`, `src/controller/<group>/`
    /// and `src/webhook/<group>/<version>/` (see [`crate::model::layout`]).
    #[serde(
        default,
        rename = "multigroup",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub multigroup: bool,
    /// `true` when the manager only watches its own namespace (`init --namespaced`): RBAC is
    /// emitted as Roles instead of ClusterRoles.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespaced: bool,
    /// Kubebuilder's `plugins:` map: the optional plugins applied to the project and their
    /// settings (`grafana.kubebuilder.io/v1-alpha: {}` after `edit --plugins grafana`). Keys
    /// rsbuilder does not know are kept as read; an unchanged map keeps its bytes on rewrite.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plugins: BTreeMap<String, serde_json::Value>,
    /// Project name (DNS-1123 label); prefixes object names in `config/`.
    pub project_name: String,
    /// Repository / module identifier (`example.com/ai-operator`).
    pub repo: String,
    /// APIs and controllers the project holds, in creation order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ProjectResource>,
    /// File format version, always "3".
    pub version: String,
    /// The text this value was read from, so [`Project::render`] can keep what it does not
    /// own; `None` for a project made in memory.
    #[serde(skip)]
    source: Source,
}

/// The PROJECT text a [`Project`] was parsed from, and the value parsed then.
#[derive(Debug, Clone, Default)]
struct Source(Option<Box<(String, Project)>>);

/// Two projects are equal by their values; the text they were read from does not count.
impl PartialEq for Source {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One resource entry of PROJECT.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectResource {
    /// Present when the project defines the API (CRD) itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ResourceApi>,
    /// `true` when the project has a controller for this kind.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub controller: bool,
    /// `true` for built-in Kubernetes types (`core`, `apps`, ...).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub core: bool,
    /// Domain of the API; absent for built-in types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// `true` for a kind another project defines (Kubebuilder's `external`; rsbuilder's
    /// `create api --external-api-crd` / `--external-api-path`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// Short group (`ai`, `core`, `apps`).
    pub group: String,
    /// Kind (`AIJob`).
    pub kind: String,
    /// Where the Rust type lives (`crate::api::v1::AIJob`,
    /// `k8s_openapi::api::core::v1::Pod`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Plural, only when it differs from kube-derive's rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plural: Option<String>,
    /// Version (`v1`).
    pub version: String,
    /// Webhooks scaffolded for this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<ResourceWebhooks>,
    /// Fields rsbuilder does not know (Kubebuilder's `module`, ...), kept through rewrites.
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

/// `resources[].api` of PROJECT.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceApi {
    /// CRD API version, always `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd_version: Option<String>,
    /// Namespaced (`true`) or cluster-scoped (absent).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespaced: bool,
}

/// `resources[].webhooks` of PROJECT.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceWebhooks {
    /// A defaulting (mutating) webhook exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defaulting: bool,
    /// Custom path of the defaulting webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaulting_path: Option<String>,
    /// A validating webhook exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub validation: bool,
    /// Custom path of the validating webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_path: Option<String>,
    /// A conversion webhook exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conversion: bool,
    /// Spoke versions converted through this hub.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spoke: Vec<String>,
    /// AdmissionReview / ConversionReview version, always `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_version: Option<String>,
}

impl ProjectResource {
    /// The plural of the kind: the recorded one, else kube-derive's rule applied to the
    /// lower-case kind (what `crd()` uses without `#[kube(plural)]`).
    pub fn plural_or_default(&self) -> String {
        self.plural
            .clone()
            .unwrap_or_else(|| crate::model::gvk::kube_derive_plural(&self.kind.to_lowercase()))
    }
}

impl Project {
    /// A fresh project as `init` writes it.
    pub fn new(domain: &str, repo: &str, project_name: &str, namespaced: bool) -> Self {
        Self {
            cli_version: Some(env!("CARGO_PKG_VERSION").into()),
            domain: domain.into(),
            layout: vec![LAYOUT.into()],
            multigroup: false,
            namespaced,
            plugins: BTreeMap::new(),
            project_name: project_name.into(),
            repo: repo.into(),
            resources: Vec::new(),
            version: "3".into(),
            source: Source::default(),
        }
    }

    /// Reads `<dir>/PROJECT` and checks it ([`Project::parse_file`]), as [`Project::load_in`]
    /// reads it for a plan on `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_in(&crate::engine::Plan::new(dir, false))
    }

    /// Reads PROJECT through `plan` (rooted at the project, see
    /// [`crate::engine::Plan::read`]) and checks it ([`Project::parse_file`]). Errors: no
    /// file (with the advice to run `rsbuilder init`), a PROJECT that is a link out of the
    /// project or unreadable, or the errors of [`Project::parse_file`].
    pub fn load_in(plan: &crate::engine::Plan) -> Result<Self> {
        let dir = plan.root();
        let path = dir.join(FILE_NAME);
        let Some(text) = plan.read(FILE_NAME)? else {
            anyhow::bail!(
                "no PROJECT file in {}; run `rsbuilder init --domain <domain> --repo <repo>` first",
                dir.display()
            );
        };
        Self::parse_file(&path, &text)
    }

    /// Parses PROJECT text, naming the file `PROJECT` in errors (see [`Project::parse_file`]).
    pub fn parse(text: &str) -> Result<Self> {
        Self::parse_file(Path::new(FILE_NAME), text)
    }

    /// Parses the PROJECT text of the file `path` and checks it. Errors, each starting with
    /// `<path>:<line>:` where the line is known:
    /// - YAML that does not parse as a PROJECT file;
    /// - a Kubebuilder (Go) project (layout `go.kubebuilder.io/...`), explained; any other
    ///   layout than [`LAYOUT`];
    /// - a version other than "3";
    /// - a value the command line would refuse: `domain` as `--domain`, `projectName` as
    ///   `--project-name`, `repo` as `--repo`; per resource `group`, `version`, `kind` and
    ///   `plural` as `create api` checks them (a built-in type must be one k8s-openapi knows),
    ///   `path` a Rust type path, webhook paths and spoke versions as `create webhook`;
    /// - the same group/version/kind listed twice.
    pub fn parse_file(path: &Path, text: &str) -> Result<Self> {
        let at = |line: u64| {
            if line == 0 {
                path.display().to_string()
            } else {
                format!("{}:{line}", path.display())
            }
        };
        let lines: Lines = serde_saphyr::from_str(text)
            .map_err(|e| anyhow::anyhow!("{} is not a valid PROJECT file: {e}", path.display()))?;
        let version = match lines.version.as_ref().map(|v| &v.value) {
            Some(serde_json::Value::String(v)) => v.clone(),
            Some(serde_json::Value::Number(v)) => v.to_string(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        if version != "3" {
            anyhow::bail!(
                "{}: unsupported PROJECT version {version:?}; rsbuilder reads version \"3\"",
                at(line_of(&lines.version)),
            );
        }
        check_layout(&lines, text, &at(line_of(&lines.layout)))?;
        let mut project: Self = serde_saphyr::from_str(text)
            .map_err(|e| anyhow::anyhow!("{} is not a valid PROJECT file: {e}", path.display()))?;
        project.check(&lines, &at)?;
        project.source = Source(Some(Box::new((text.to_owned(), project.clone()))));
        Ok(project)
    }

    /// Every value checked as the command line checks it; see [`Project::parse_file`].
    fn check(&self, lines: &Lines, at: &dyn Fn(u64) -> String) -> Result<()> {
        let bad = |line: u64, field: &str, value: &str, flag: &str, reason: &str| {
            anyhow::anyhow!(
                "{}: invalid {field} {value:?} (checked as {flag} is): {reason}",
                at(line)
            )
        };
        validate::dns1123_subdomain(&self.domain).map_err(|r| {
            bad(
                line_of(&lines.domain),
                "domain",
                &self.domain,
                "--domain",
                &format!("the domain {r}"),
            )
        })?;
        validate::dns1123_label(&self.project_name)
            .map_err(|r| format!("the project name {r}"))
            .and_then(|()| validate::crate_package_name(&self.project_name))
            .map_err(|r| {
                bad(
                    line_of(&lines.project_name),
                    "projectName",
                    &self.project_name,
                    "--project-name",
                    &r,
                )
            })?;
        validate::repo(&self.repo)
            .map_err(|r| bad(line_of(&lines.repo), "repo", &self.repo, "--repo", &r))?;
        if let Some(v) = &self.cli_version {
            validate::single_line(v).map_err(|r| {
                bad(
                    line_of(&lines.cli_version),
                    "cliVersion",
                    v,
                    "a version",
                    &format!("the version {r}"),
                )
            })?;
        }
        let mut seen: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
        for (i, r) in self.resources.iter().enumerate() {
            let l = lines.resources.get(i);
            let line = |f: fn(&ResourceLines) -> &Option<Spanned<IgnoredAny>>| {
                l.map_or(0, |l| line_of(f(&l.value)).max(l.referenced.line()))
            };
            let entry = l.map_or(0, |l| l.referenced.line());
            let gvk = format!("{}/{} {}", r.group, r.version, r.kind);
            if let Some(d) = &r.domain {
                validate::dns1123_subdomain(d).map_err(|reason| {
                    bad(
                        line(|l| &l.domain),
                        "domain",
                        d,
                        "--domain",
                        &format!("the domain {reason}"),
                    )
                })?;
            }
            let checked = if r.core {
                Resource::builtin(&r.group, &r.version, &r.kind).and_then(|found| {
                    found.map(|_| ()).ok_or_else(|| gvk::NameError {
                        flag: "--group".into(),
                        value: r.group.clone(),
                        reason: format!(
                            "{gvk} is marked `core: true` but is not a built-in Kubernetes type"
                        ),
                    })
                })
            } else {
                let domain = r.domain.as_deref().unwrap_or(&self.domain);
                Resource::custom(
                    &r.group,
                    domain,
                    &r.version,
                    &r.kind,
                    r.plural.as_deref(),
                    false,
                )
                .map(|_| ())
            };
            if let Err(e) = checked {
                let (field, l) = match e.flag.as_str() {
                    "--group" => ("group", line(|l| &l.group)),
                    "--version" => ("version", line(|l| &l.version)),
                    "--kind" => ("kind", line(|l| &l.kind)),
                    "--plural" => ("plural", line(|l| &l.plural)),
                    _ => ("resource", entry),
                };
                return Err(bad(
                    l,
                    &format!("{field} of the resource {gvk}"),
                    &e.value,
                    &e.flag,
                    &e.reason,
                ));
            }
            if let Some(v) = r.api.as_ref().and_then(|a| a.crd_version.as_ref())
                && v != "v1"
            {
                return Err(bad(
                    line(|l| &l.api),
                    "api.crdVersion",
                    v,
                    "Kubebuilder's --crd-version",
                    "rsbuilder writes apiextensions.k8s.io/v1 CRDs only, so it must be v1",
                ));
            }
            if let Some(p) = &r.path {
                validate::rust_path(p).map_err(|reason| {
                    bad(line(|l| &l.path), "path", p, "the type path", &reason)
                })?;
            }
            if let Some(w) = &r.webhooks {
                let wl = l.and_then(|l| l.value.webhooks.as_ref());
                let wline = |f: fn(&WebhookLines) -> &Option<Spanned<IgnoredAny>>| {
                    wl.map_or(entry, |w| w.referenced.line().max(line_of(f(&w.value))))
                };
                for (value, flag, field, f) in [
                    (
                        &w.defaulting_path,
                        "--defaulting-path",
                        "defaultingPath",
                        (|w: &WebhookLines| &w.defaulting_path)
                            as fn(&WebhookLines) -> &Option<Spanned<IgnoredAny>>,
                    ),
                    (
                        &w.validation_path,
                        "--validation-path",
                        "validationPath",
                        |w: &WebhookLines| &w.validation_path,
                    ),
                ] {
                    if let Some(v) = value {
                        validate::webhook_path(v)
                            .map_err(|reason| bad(wline(f), field, v, flag, &reason))?;
                    }
                }
                for spoke in &w.spoke {
                    validate::dns1035_label(spoke).map_err(|reason| {
                        bad(
                            wline(|w| &w.spoke),
                            "spoke version",
                            spoke,
                            "--spoke",
                            &format!("the version {reason}"),
                        )
                    })?;
                }
            }
            if let Some(first) = seen.insert((&r.group, &r.version, &r.kind), entry) {
                anyhow::bail!(
                    "{}: the resource {gvk} is listed twice (first at line {first}); keep one entry, \
                     merging what the two record (api, controller, webhooks)",
                    at(entry)
                );
            }
        }
        Ok(())
    }

    /// Serializes to the bytes written on disk.
    ///
    /// A project read from text ([`Project::parse_file`]) is written over that text: unknown
    /// top-level fields (Kubebuilder's `plugins:`), comments and fields whose value did not
    /// change keep their bytes, and so does every resource entry that did not change; changed
    /// fields and entries are serialized anew, new ones placed in key order. A project made in
    /// memory gets a header comment, then its fields in key order.
    pub fn render(&self) -> String {
        let body = serde_saphyr::to_string(self).unwrap_or_default();
        match &self.source.0 {
            Some(source) => render_over(&source.0, &source.1, self, &body),
            None => format!(
                "# Code generated by rsbuilder. DO NOT EDIT.\n\
                 # This file records how the project was scaffolded; rsbuilder commands read and update it.\n\
                 {body}"
            ),
        }
    }

    /// The `resources` list of plugin `key` in `plugins:` (Kubebuilder's shape for optional
    /// plugins: `{key: {resources: [...]}}`); empty when the plugin or its list is absent.
    pub fn plugin_resources(&self, key: &str) -> &[serde_json::Value] {
        self.plugins
            .get(key)
            .and_then(|v| v.get("resources"))
            .and_then(|v| v.as_array())
            .map_or(&[], Vec::as_slice)
    }

    /// Appends `entry` to the `resources` list of plugin `key`, creating both as needed.
    /// Errors: the plugin's value in PROJECT is not a map.
    pub fn push_plugin_resource(
        &mut self,
        key: &str,
        entry: serde_json::Value,
    ) -> anyhow::Result<()> {
        let plugin = self
            .plugins
            .entry(key.to_owned())
            .or_insert_with(|| serde_json::json!({}));
        let Some(map) = plugin.as_object_mut() else {
            anyhow::bail!(
                "PROJECT: plugins.{key} is not a map (Kubebuilder writes {{resources: [...]}})"
            );
        };
        match map.get_mut("resources").and_then(|v| v.as_array_mut()) {
            Some(list) => list.push(entry),
            None => {
                map.insert("resources".into(), serde_json::json!([entry]));
            }
        }
        Ok(())
    }

    /// Finds the entry for a group/version/kind.
    pub fn find(&self, group: &str, version: &str, kind: &str) -> Option<&ProjectResource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }

    /// Mutable access to the entry for a group/version/kind.
    pub fn find_mut(
        &mut self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<&mut ProjectResource> {
        self.resources
            .iter_mut()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }
}

/// Where the values of a PROJECT file stand (1-based lines), read alongside the values.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lines {
    #[serde(default)]
    cli_version: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    domain: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    layout: Option<Spanned<Layout>>,
    #[serde(default)]
    project_name: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    repo: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    resources: Vec<Spanned<ResourceLines>>,
    #[serde(default)]
    version: Option<Spanned<serde_json::Value>>,
}

/// `layout`: a list of plugin keys in PROJECT version 3, a single string in older files.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Layout {
    One(String),
    Many(Vec<String>),
    Other(IgnoredAny),
}

#[derive(Debug, Default, Deserialize)]
struct ResourceLines {
    #[serde(default)]
    api: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    domain: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    group: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    kind: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    path: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    plural: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    version: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    webhooks: Option<Spanned<WebhookLines>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WebhookLines {
    #[serde(default)]
    defaulting_path: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    validation_path: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    spoke: Option<Spanned<IgnoredAny>>,
}

/// The line of a value, 0 when absent or unknown.
fn line_of<T>(value: &Option<Spanned<T>>) -> u64 {
    value.as_ref().map_or(0, |s| s.referenced.line())
}

/// What a Kubebuilder (Go) PROJECT lists, to say how to port it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ForeignProject {
    #[serde(default)]
    domain: Option<String>,
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    resources: Vec<ForeignResource>,
}

#[derive(Debug, Default, Deserialize)]
struct ForeignResource {
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

/// Refuses a PROJECT whose layout is not [`LAYOUT`]; a Kubebuilder (Go) one is explained,
/// with the commands that start a Rust port of it.
fn check_layout(lines: &Lines, text: &str, at: &str) -> Result<()> {
    let layouts: Vec<String> = match lines.layout.as_ref().map(|s| &s.value) {
        Some(Layout::One(one)) => vec![one.clone()],
        Some(Layout::Many(many)) => many.clone(),
        Some(Layout::Other(_)) | None => Vec::new(),
    };
    if layouts.iter().any(|l| l == LAYOUT) {
        return Ok(());
    }
    if let Some(go) = layouts.iter().find(|l| l.starts_with("go.kubebuilder.io/")) {
        let foreign: ForeignProject = serde_saphyr::from_str(text).unwrap_or_default();
        let mut port = format!(
            "  rsbuilder init --domain {} --repo {}",
            foreign.domain.as_deref().unwrap_or("<domain>"),
            foreign.repo.as_deref().unwrap_or("<repo>")
        );
        for r in &foreign.resources {
            if let (Some(g), Some(v), Some(k)) = (&r.group, &r.version, &r.kind) {
                port.push_str(&format!(
                    "\n  rsbuilder create api --group {g} --version {v} --kind {k}"
                ));
            }
        }
        anyhow::bail!(
            "{at}: this PROJECT belongs to a Kubebuilder project written in Go (layout {go}). \
             rsbuilder scaffolds and reads rust.rsbuilder.io/v1 projects only: operators written \
             in Rust on kube-rs. Keep using kubebuilder in this directory; to port the operator \
             to Rust, start a new directory and run:\n{port}"
        );
    }
    if layouts.is_empty() {
        anyhow::bail!(
            "{at}: PROJECT has no `layout`; an rsbuilder project has `layout: [{LAYOUT}]`. If this \
             is an rsbuilder project, restore that line"
        );
    }
    anyhow::bail!(
        "{at}: PROJECT has layout {layouts:?}; rsbuilder scaffolds into {LAYOUT} projects only"
    )
}

/// Top-level fields of PROJECT that rsbuilder owns; everything else is kept as written.
const OWNED: [&str; 10] = [
    "cliVersion",
    "domain",
    "layout",
    "multigroup",
    "namespaced",
    "plugins",
    "projectName",
    "repo",
    "resources",
    "version",
];

/// `text` cut at its top-level keys: the lines before the first key (comments, `---`) with
/// key `None`, then each key's lines up to the next key. Block-style YAML only: a key is a
/// line that starts in column 0 with neither `#`, `-` nor a blank.
fn top_level_blocks(text: &str) -> Vec<(Option<String>, String)> {
    let mut blocks: Vec<(Option<String>, String)> = vec![(None, String::new())];
    for line in text.split_inclusive('\n') {
        let first = line.chars().next().unwrap_or(' ');
        let is_key =
            !matches!(first, ' ' | '\t' | '#' | '-' | '\n' | '\r' | '.') && line.contains(':');
        if is_key {
            let key = line[..line.find(':').unwrap_or(0)]
                .trim()
                .trim_matches(['"', '\''])
                .to_owned();
            blocks.push((Some(key), String::new()));
        }
        if let Some(last) = blocks.last_mut() {
            last.1.push_str(line);
        }
    }
    blocks
}

/// A block's lines cut before its trailing run of blank lines and column-0 comments (which
/// introduce the next key more often than they end this one).
fn split_trailing(block: &str) -> (&str, &str) {
    let lines: Vec<&str> = block.split_inclusive('\n').collect();
    let keep = lines
        .iter()
        .rposition(|l| !(l.trim().is_empty() || l.starts_with('#')))
        .map_or(0, |i| i + 1);
    let cut: usize = lines[..keep].iter().map(|l| l.len()).sum();
    block.split_at(cut)
}

/// `new` written over the PROJECT text it was read from (`text`, parsed as `orig`); `fresh`
/// is `new` serialized whole. See [`Project::render`].
fn render_over(text: &str, orig: &Project, new: &Project, fresh: &str) -> String {
    let src = top_level_blocks(text);
    let fresh_blocks = top_level_blocks(fresh);
    // Text the cutter cannot follow (flow style): every known field must have been found.
    let orig_fresh = serde_saphyr::to_string(orig).unwrap_or_default();
    let found = |k: &str| src.iter().any(|(key, _)| key.as_deref() == Some(k));
    if !top_level_blocks(&orig_fresh)
        .iter()
        .filter_map(|(k, _)| k.as_deref())
        .all(found)
    {
        return fresh.to_owned();
    }
    let unchanged = |key: &str| match key {
        "cliVersion" => orig.cli_version == new.cli_version,
        "domain" => orig.domain == new.domain,
        "layout" => orig.layout == new.layout,
        "multigroup" => orig.multigroup == new.multigroup,
        "namespaced" => orig.namespaced == new.namespaced,
        "plugins" => orig.plugins == new.plugins,
        "projectName" => orig.project_name == new.project_name,
        "repo" => orig.repo == new.repo,
        "resources" => orig.resources == new.resources,
        "version" => orig.version == new.version,
        _ => true,
    };
    let fresh_of = |k: &str| {
        fresh_blocks
            .iter()
            .find(|(key, _)| key.as_deref() == Some(k))
            .map(|(_, t)| t.as_str())
    };
    let mut out: Vec<(Option<String>, String)> = Vec::new();
    for (key, block) in &src {
        let Some(k) = key.as_deref().filter(|k| OWNED.contains(k)) else {
            out.push((key.clone(), block.clone()));
            continue;
        };
        let (body, trailing) = split_trailing(block);
        let text = match fresh_of(k) {
            None => trailing.to_owned(),
            Some(_) if unchanged(k) => block.clone(),
            Some(f) if k == "resources" => {
                format!("{}{trailing}", render_resources(body, orig, new, f))
            }
            Some(f) => format!("{f}{trailing}"),
        };
        out.push((key.clone(), text));
    }
    for (key, f) in &fresh_blocks {
        let Some(k) = key.as_deref() else { continue };
        if !found(k) {
            let at = out
                .iter()
                .position(|(o, _)| o.as_deref().is_some_and(|o| o > k))
                .unwrap_or(out.len());
            out.insert(at, (key.clone(), f.clone()));
        }
    }
    let mut rendered = String::with_capacity(text.len() + 256);
    for (_, t) in out {
        if !rendered.is_empty() && !rendered.ends_with('\n') {
            rendered.push('\n');
        }
        rendered.push_str(&t);
    }
    rendered
}

/// The `resources:` block `body` (as read, for `orig`) rewritten for `new`: entries whose
/// value did not change keep their text; changed and new ones are serialized, indented like
/// the others. `fresh` (the block serialized whole) is used when the entries cannot be cut
/// apart.
fn render_resources(body: &str, orig: &Project, new: &Project, fresh: &str) -> String {
    let mut lines = body.split_inclusive('\n');
    let Some(head) = lines.next() else {
        return fresh.to_owned();
    };
    if !head.trim_end().ends_with(':') {
        return fresh.to_owned();
    }
    let rest: Vec<&str> = lines.collect();
    let Some(first) = rest
        .iter()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    else {
        return fresh.to_owned();
    };
    let indent = first.len() - first.trim_start_matches(' ').len();
    let item_start = |l: &str| {
        l.len() > indent
            && l[..indent].chars().all(|c| c == ' ')
            && (l[indent..].starts_with("- ") || l[indent..].trim_end() == "-")
    };
    if !item_start(first) {
        return fresh.to_owned();
    }
    let mut prefix = String::new();
    let mut items: Vec<String> = Vec::new();
    for l in rest {
        if item_start(l) {
            items.push(String::new());
        }
        match items.last_mut() {
            Some(item) => item.push_str(l),
            None => prefix.push_str(l),
        }
    }
    if items.len() != orig.resources.len() {
        return fresh.to_owned();
    }
    let mut out = format!("{head}{prefix}");
    let pad = " ".repeat(indent);
    for r in &new.resources {
        let same = orig.resources.iter().position(|o| {
            o.group == r.group && o.version == r.version && o.kind == r.kind && o == r
        });
        match same {
            Some(j) => out.push_str(&items[j]),
            None => {
                let entry = serde_saphyr::to_string(&[r]).unwrap_or_default();
                for l in entry.split_inclusive('\n') {
                    if !l.trim().is_empty() {
                        out.push_str(&pad);
                    }
                    out.push_str(l);
                }
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut p = Project::new(
            "ai.example.com",
            "example.com/ai-operator",
            "ai-operator",
            false,
        );
        p.resources.push(ProjectResource {
            api: Some(ResourceApi {
                crd_version: Some("v1".into()),
                namespaced: true,
            }),
            controller: true,
            domain: Some("ai.example.com".into()),
            group: "ai".into(),
            kind: "AIJob".into(),
            path: Some("crate::api::v1::AIJob".into()),
            version: "v1".into(),
            ..Default::default()
        });
        let text = p.render();
        assert!(text.contains("projectName: ai-operator"), "{text}");
        assert!(text.contains("crdVersion: v1"), "{text}");
        assert!(
            text.contains("version: '3'") || text.contains("version: \"3\""),
            "{text}"
        );
        assert_eq!(Project::parse(&text).unwrap(), p);
    }

    #[test]
    fn rejects_other_versions() {
        let err =
            Project::parse("domain: a\nprojectName: x\nrepo: r\nversion: \"2\"\n").unwrap_err();
        assert!(err.to_string().contains("unsupported PROJECT version"));
    }

    const WITH_PLUGINS: &str = "# Code generated by rsbuilder. DO NOT EDIT.
cliVersion: 0.1.0
domain: ai.example.com
layout:
- rust.rsbuilder.io/v1
plugins:
  grafana.kubebuilder.io/v1-alpha: {}
  deploy-image.go.kubebuilder.io/v1-alpha:
    resources:
    - domain: ai.example.com   # odd spacing and a comment
      kind: Busybox
projectName: ai-operator
repo: example.com/ai-operator
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: ai.example.com
  external: false
  group: ai
  kind: AIJob
  path: crate::api::v1::AIJob
  version: v1
version: \"3\"
zzLocal: {keep: [1, 2]}
";

    #[test]
    fn unknown_fields_and_plugins_survive_a_rewrite_byte_for_byte() {
        let mut p = Project::parse(WITH_PLUGINS).unwrap();
        assert_eq!(
            p.render(),
            WITH_PLUGINS,
            "an unchanged project is written back as read"
        );
        p.resources.push(ProjectResource {
            controller: true,
            core: true,
            group: "core".into(),
            kind: "Pod".into(),
            path: Some("k8s_openapi::api::core::v1::Pod".into()),
            version: "v1".into(),
            ..Default::default()
        });
        p.namespaced = true;
        let text = p.render();
        let plugins = &WITH_PLUGINS
            [WITH_PLUGINS.find("plugins:").unwrap()..WITH_PLUGINS.find("projectName:").unwrap()];
        assert!(text.contains(plugins), "{text}");
        assert!(text.contains("  external: false\n  group: ai\n"), "{text}");
        assert!(
            text.ends_with("version: \"3\"\nzzLocal: {keep: [1, 2]}\n"),
            "{text}"
        );
        assert!(
            text.contains("layout:\n- rust.rsbuilder.io/v1\nnamespaced: true\nplugins:"),
            "{text}"
        );
        assert!(
            text.contains(
                "  version: v1\n- controller: true\n  core: true\n  group: core\n  kind: Pod\n"
            ),
            "{text}"
        );
        let back = Project::parse(&text).unwrap();
        assert_eq!(back, p);
        // Kubebuilder's `external` is a field rsbuilder knows (`create api --external-api-crd`).
        assert!(!back.resources[0].external);
    }

    #[test]
    fn a_project_name_with_a_newline_is_refused_with_its_line() {
        let text =
            WITH_PLUGINS.replace("projectName: ai-operator", "projectName: \"ai\\noperator\"");
        let err = format!("{:#}", Project::parse(&text).unwrap_err());
        assert!(
            err.starts_with(
                "PROJECT:12: invalid projectName \"ai\\noperator\" (checked as --project-name is)"
            ),
            "{err}"
        );
    }

    #[test]
    fn resource_values_are_checked_as_on_the_command_line() {
        for (from, to, want) in [
            (
                "kind: AIJob",
                "kind: aijob",
                "PROJECT:22: invalid kind of the resource ai/v1 aijob \"aijob\"",
            ),
            (
                "group: ai\n",
                "group: Ai_x\n",
                "PROJECT:21: invalid group of the resource Ai_x/v1 AIJob \"Ai_x\"",
            ),
            (
                "  version: v1\n",
                "  version: 1v\n",
                "PROJECT:24: invalid version of the resource ai/1v AIJob \"1v\"",
            ),
            (
                "path: crate::api::v1::AIJob",
                "path: \"crate::api; evil\"",
                "PROJECT:23: invalid path",
            ),
            (
                "domain: ai.example.com\n  external",
                "domain: \"a b\"\n  external",
                "PROJECT:19: invalid domain \"a b\"",
            ),
        ] {
            let text = WITH_PLUGINS.replace(from, to);
            assert_ne!(text, WITH_PLUGINS, "{from}");
            let err = format!("{:#}", Project::parse(&text).unwrap_err());
            assert!(err.starts_with(want), "{from}: {err}");
        }
    }

    #[test]
    fn duplicate_resources_are_an_error() {
        let entry = &WITH_PLUGINS
            [WITH_PLUGINS.find("- api:").unwrap()..WITH_PLUGINS.find("version: \"3\"").unwrap()];
        let text = WITH_PLUGINS.replace(entry, &format!("{entry}{entry}"));
        let err = format!("{:#}", Project::parse(&text).unwrap_err());
        assert!(
            err.starts_with(
                "PROJECT:25: the resource ai/v1 AIJob is listed twice (first at line 15)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_kubebuilder_go_project_is_explained() {
        let go = "domain: my.domain\nlayout:\n- go.kubebuilder.io/v4\nprojectName: guestbook\nrepo: github.com/x/guestbook\nresources:\n- api:\n    crdVersion: v1\n  group: webapp\n  kind: Guestbook\n  path: github.com/x/guestbook/api/v1\n  version: v1\nversion: \"3\"\n";
        let err = Project::parse(go).unwrap_err().to_string();
        assert!(err.starts_with("PROJECT:3: this PROJECT belongs to a Kubebuilder project written in Go (layout go.kubebuilder.io/v4)"), "{err}");
        assert!(err.contains("rsbuilder init --domain my.domain --repo github.com/x/guestbook\n  rsbuilder create api --group webapp --version v1 --kind Guestbook"), "{err}");
    }
}
