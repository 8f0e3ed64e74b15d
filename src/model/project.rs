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
//!
//! This file holds the values and the queries on them; reading and checking are in `parse`,
//! rewriting in `render`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod parse;
mod render;

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

    /// A PROJECT with a plugin, comments, odd spacing and an unknown field, as read.
    pub(super) const WITH_PLUGINS: &str = "# Code generated by rsbuilder. DO NOT EDIT.
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
}
