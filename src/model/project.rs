//! The `PROJECT` file: Kubebuilder's project configuration (format version "3"), which `init`
//! writes and every later command reads and updates.
//!
//! Field names and layout match Kubebuilder's (`domain`, `layout`, `projectName`, `repo`,
//! `resources[].{api,controller,domain,group,kind,path,plural,version,webhooks,core}`), so
//! tools that read Kubebuilder's PROJECT understand ours. The layout names rsbuilder's own
//! Rust layout, [`LAYOUT`].

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The layout plugin key written into `PROJECT` for projects rsbuilder scaffolds.
pub const LAYOUT: &str = "rust.rsbuilder.io/v1";

/// Name of the project configuration file at the project root.
pub const FILE_NAME: &str = "PROJECT";

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
    /// `true` when the manager only watches its own namespace (`init --namespaced`): RBAC is
    /// emitted as Roles instead of ClusterRoles.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespaced: bool,
    /// Project name (DNS-1123 label); prefixes object names in `config/`.
    pub project_name: String,
    /// Repository / module identifier (`example.com/ai-operator`).
    pub repo: String,
    /// APIs and controllers the project holds, in creation order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ProjectResource>,
    /// File format version, always "3".
    pub version: String,
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
            namespaced,
            project_name: project_name.into(),
            repo: repo.into(),
            resources: Vec::new(),
            version: "3".into(),
        }
    }

    /// Reads `<dir>/PROJECT`. Errors: no file (with the advice to run `rsbuilder init`), or
    /// YAML that does not parse as a PROJECT file (with the position).
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
                "no PROJECT file in {}; run `rsbuilder init --domain <domain> --repo <repo>` first",
                dir.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Self::parse(&text)
            .with_context(|| format!("{} is not a valid PROJECT file", path.display()))
    }

    /// Parses PROJECT text.
    pub fn parse(text: &str) -> Result<Self> {
        let project: Self = serde_saphyr::from_str(text)?;
        if project.version != "3" {
            anyhow::bail!(
                "unsupported PROJECT version {:?}; rsbuilder reads version \"3\"",
                project.version
            );
        }
        Ok(project)
    }

    /// Serializes to the bytes written on disk: a header comment, then sorted keys.
    pub fn render(&self) -> String {
        let body = serde_saphyr::to_string(self).unwrap_or_default();
        format!(
            "# Code generated by rsbuilder. DO NOT EDIT.\n\
             # This file records how the project was scaffolded; rsbuilder commands read and update it.\n\
             {body}"
        )
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

    #[test]
    fn rejects_other_versions() {
        let err =
            Project::parse("domain: a\nprojectName: x\nrepo: r\nversion: \"2\"\n").unwrap_err();
        assert!(err.to_string().contains("unsupported PROJECT version"));
    }
}
