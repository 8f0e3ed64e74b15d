//! `rsbuilder create api --image <image>`: a kind whose controller runs a container image as a
//! Deployment it owns, as Kubebuilder's deploy-image plugin (`deploy-image/v1-alpha`) scaffolds
//! it: `spec.size` (1 to 3 Pods) and, with `--image-container-port`, `spec.containerPort`; a
//! controller that applies the Deployment under the restricted Pod Security profile (non-root,
//! `--run-as-user`, no privilege escalation, no capabilities, the default seccomp profile),
//! watches it and sets `Ready` from its available replicas; the image as the manager's
//! `<KIND>_IMAGE` environment variable in config/manager/manager.yaml; and, in PROJECT,
//! Kubebuilder's `plugins: {deploy-image.go.kubebuilder.io/v1-alpha: {resources: [...]}}`
//! entry with the options, which `alpha generate` reads back.

use anyhow::{Result, bail};
use serde_json::json;

use super::ApiOptions;
use crate::model::{NameError, Project, Resource};

/// Kubebuilder's key of the deploy-image plugin in PROJECT's `plugins:` map.
pub const PLUGIN_KEY: &str = "deploy-image.go.kubebuilder.io/v1-alpha";

/// The flags of `create api --image`, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployImage {
    /// `--image`: the operand's image (`memcached:1.6.26-alpine3.19`).
    pub image: String,
    /// `--image-container-command`: the container's command, comma-separated as Kubebuilder
    /// takes it (`memcached,--memory-limit=64,-o,modern,-v`); `None` keeps the image's own.
    pub command: Option<String>,
    /// `--image-container-port`: the port the container listens on.
    pub port: Option<String>,
    /// `--run-as-user`: the container's user id.
    pub run_as_user: Option<String>,
}

/// What the templates fill in, from [`DeployImage`] once checked.
#[derive(Debug, Clone)]
pub struct DeployNames {
    /// The image, as given.
    pub image: String,
    /// The image as a YAML scalar (quoted, so any image reference stays a string).
    pub image_yaml: String,
    /// The manager's environment variable that names the image (`MEMCACHED_IMAGE`).
    pub env: String,
    /// The command as Rust expressions (`"memcached".into(), "-v".into()`); empty for none.
    pub command: String,
    /// The container port.
    pub port: Option<i32>,
    /// The user id.
    pub run_as_user: Option<i64>,
}

fn flag_error(flag: &str, value: &str, reason: impl Into<String>) -> anyhow::Error {
    NameError {
        flag: flag.into(),
        value: value.into(),
        reason: reason.into(),
    }
    .into()
}

/// Checks `--image` and its options for `opts`' kind and turns them into template values.
///
/// Errors: `--image` without a new, namespaced kind of the project with its controller (the
/// Deployment lives in the object's namespace); an empty image or one with characters no image
/// reference has; a port
/// outside 1..=65535; a user id that is not a non-negative integer; an empty command entry.
pub fn check(
    project: &Project,
    opts: &ApiOptions,
    resource: &Resource,
    d: &DeployImage,
) -> Result<DeployNames> {
    if resource.builtin.is_some() || !opts.resource || !opts.controller {
        bail!(
            "--image scaffolds a new kind and its controller: it needs --resource and --controller (the defaults)"
        );
    }
    if project
        .find(&opts.group, &opts.version, &opts.kind)
        .is_some()
    {
        bail!(
            "--image scaffolds a new kind, and {}/{} {} is already in PROJECT",
            opts.group,
            opts.version,
            opts.kind
        );
    }
    if !resource.namespaced {
        bail!(
            "--image needs a namespaced kind (the Deployment lives in the object's namespace): drop --namespaced=false"
        );
    }
    // The characters of an image reference (name, `:tag`, `@sha256:digest`): it goes into a
    // Rust string literal and the manager's YAML as given.
    let reference_char = |c: char| c.is_ascii_alphanumeric() || "._-/:@".contains(c);
    if d.image.is_empty() || !d.image.chars().all(reference_char) {
        return Err(flag_error(
            "--image",
            &d.image,
            "must be an image reference (`memcached:1.6`, `ghcr.io/org/app@sha256:...`): letters, digits and . _ - / : @ only, no whitespace",
        ));
    }
    let port = match &d.port {
        None => None,
        Some(p) => match p.parse::<i32>() {
            Ok(n) if (1..=65535).contains(&n) => Some(n),
            _ => {
                return Err(flag_error(
                    "--image-container-port",
                    p,
                    "must be a port number, 1 to 65535",
                ));
            }
        },
    };
    let run_as_user = match &d.run_as_user {
        None => None,
        Some(u) => match u.parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            _ => {
                return Err(flag_error(
                    "--run-as-user",
                    u,
                    "must be a user id, an integer of 0 or more",
                ));
            }
        },
    };
    let command = match &d.command {
        None => String::new(),
        Some(c) => {
            let parts: Vec<&str> = c.split(',').collect();
            if parts.iter().any(|p| p.is_empty()) {
                return Err(flag_error(
                    "--image-container-command",
                    c,
                    "must be comma-separated words with none empty (`memcached,-m=64,-v`)",
                ));
            }
            parts
                .iter()
                .map(|p| format!("{p:?}.into()"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    Ok(DeployNames {
        image: d.image.clone(),
        image_yaml: serde_json::to_string(&d.image).unwrap_or_default(),
        env: format!("{}_IMAGE", opts.kind.to_uppercase()),
        command,
        port,
        run_as_user,
    })
}

/// Adds the kind to the plugin's entry in PROJECT, as Kubebuilder records it: `{domain,
/// group, kind, version, options: {image, containerCommand, containerPort, runAsUser}}`
/// (options given only). Errors: the plugin's entry is not a map.
pub fn record(
    project: &mut Project,
    resource: &Resource,
    opts: &ApiOptions,
    d: &DeployImage,
) -> Result<()> {
    let mut options = json!({ "image": d.image });
    for (key, value) in [
        ("containerCommand", &d.command),
        ("containerPort", &d.port),
        ("runAsUser", &d.run_as_user),
    ] {
        if let Some(v) = value {
            options[key] = json!(v);
        }
    }
    let entry = json!({
        "domain": resource.domain,
        "group": opts.group,
        "kind": opts.kind,
        "options": options,
        "version": opts.version,
    });
    project.push_plugin_resource(PLUGIN_KEY, entry)?;
    Ok(())
}

/// The `--image` options PROJECT records for `group/version kind` (`alpha generate`), if any.
pub fn recorded(project: &Project, group: &str, version: &str, kind: &str) -> Option<DeployImage> {
    let entry = project.plugin_resources(PLUGIN_KEY).iter().find(|e| {
        e.get("group").and_then(|v| v.as_str()) == Some(group)
            && e.get("version").and_then(|v| v.as_str()) == Some(version)
            && e.get("kind").and_then(|v| v.as_str()) == Some(kind)
    })?;
    let options = entry.get("options")?;
    let field = |k: &str| options.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    Some(DeployImage {
        image: field("image")?,
        command: field("containerCommand"),
        port: field("containerPort"),
        run_as_user: field("runAsUser"),
    })
}
