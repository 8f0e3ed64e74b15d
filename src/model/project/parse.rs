//! Reading PROJECT: the file through a plan, its YAML, and every value checked as the command
//! line checks it, each error naming `PROJECT:<line>` (the lines are read alongside the
//! values). A Kubebuilder (Go) project is recognized and explained.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;

use super::{FILE_NAME, LAYOUT, Project, Source};
use crate::model::gvk::{self, Resource};
use crate::model::validate;

impl Project {
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

#[cfg(test)]
mod tests {
    use super::super::tests::WITH_PLUGINS;
    use super::*;

    #[test]
    fn rejects_other_versions() {
        let err =
            Project::parse("domain: a\nprojectName: x\nrepo: r\nversion: \"2\"\n").unwrap_err();
        assert!(err.to_string().contains("unsupported PROJECT version"));
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
