//! The flags of `create webhook` ([`WebhookOptions`]), the flags that recreate what PROJECT
//! records, and the checks of their combination before anything is read.

use crate::model::project::ProjectResource;

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
}
