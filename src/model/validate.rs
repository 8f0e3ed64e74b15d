//! Kubernetes name validation rules, as the API server applies them
//! (`k8s.io/apimachinery/pkg/util/validation`).
//!
//! Each function takes the value and returns `Ok(())` or a human-readable reason
//! (`Err(String)`) that callers wrap with the flag name and value.

/// Maximum length of a DNS-1123 label and a DNS-1035 label (63 characters).
pub const LABEL_MAX: usize = 63;
/// Maximum length of a DNS-1123 subdomain (253 characters).
pub const SUBDOMAIN_MAX: usize = 253;

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Checks a DNS-1123 label: at most 63 characters of `[a-z0-9-]`, starting and ending with an
/// alphanumeric character (`my-name`, `123-abc`).
pub fn dns1123_label(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > LABEL_MAX {
        return Err(format!("must be no more than {LABEL_MAX} characters"));
    }
    if !value.chars().all(|c| is_lower_alnum(c) || c == '-') {
        return Err(
            "must consist of lower case alphanumeric characters or '-' (a DNS-1123 label)".into(),
        );
    }
    let first = value.chars().next().unwrap_or('-');
    let last = value.chars().last().unwrap_or('-');
    if !is_lower_alnum(first) || !is_lower_alnum(last) {
        return Err("must start and end with an alphanumeric character (a DNS-1123 label)".into());
    }
    Ok(())
}

/// Checks a DNS-1123 subdomain: at most 253 characters, dot-separated DNS-1123 labels
/// (`example.com`, `ai.ai.example.com`).
pub fn dns1123_subdomain(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > SUBDOMAIN_MAX {
        return Err(format!("must be no more than {SUBDOMAIN_MAX} characters"));
    }
    for part in value.split('.') {
        if dns1123_label(part).is_err() {
            return Err(format!(
                "must be a DNS-1123 subdomain: lower case alphanumeric characters, '-' or '.', \
                 each dot-separated part starting and ending with an alphanumeric character \
                 (offending part: {part:?})"
            ));
        }
    }
    Ok(())
}

/// Checks a DNS-1035 label: like a DNS-1123 label but it must start with a letter
/// (`v1`, `v1beta1`; not `1`). The API server requires CRD version names to be DNS-1035 labels.
pub fn dns1035_label(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > LABEL_MAX {
        return Err(format!("must be no more than {LABEL_MAX} characters"));
    }
    let first = value.chars().next().unwrap_or('0');
    let last = value.chars().last().unwrap_or('-');
    if !first.is_ascii_lowercase()
        || !is_lower_alnum(last)
        || !value.chars().all(|c| is_lower_alnum(c) || c == '-')
    {
        return Err(
            "must be a DNS-1035 label: lower case alphanumeric characters or '-', \
             starting with a letter and ending with an alphanumeric character"
                .into(),
        );
    }
    Ok(())
}

/// Words a Cargo package name cannot be (Rust keywords and reserved names), which would
/// otherwise pass as DNS-1123 labels.
pub const RESERVED_NAMES: &[&str] = &[
    "abstract",
    "as",
    "async",
    "await",
    "become",
    "box",
    "break",
    "const",
    "continue",
    "crate",
    "do",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "final",
    "fn",
    "for",
    "gen",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "macro",
    "match",
    "mod",
    "move",
    "mut",
    "override",
    "priv",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "try",
    "type",
    "typeof",
    "unsafe",
    "unsized",
    "use",
    "virtual",
    "where",
    "while",
    "yield",
    "alloc",
    "core",
    "proc-macro",
    "std",
    "test",
];

/// Checks a project name beyond the DNS-1123 label rule: it becomes the Cargo package and the
/// Rust crate name, so it starts with a letter and is not a Rust keyword or a reserved crate
/// name ([`RESERVED_NAMES`]).
pub fn crate_package_name(value: &str) -> Result<(), String> {
    if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(
            "the project name must start with a letter, because it becomes the Cargo \
                    package and Rust crate name"
                .into(),
        );
    }
    if RESERVED_NAMES.contains(&value) {
        return Err(
            "the project name is a Rust keyword or a reserved crate name, which Cargo \
                    rejects as a package name"
                .into(),
        );
    }
    Ok(())
}

/// Checks a repository path (`example.com/ai-operator`): non-empty, without whitespace,
/// control characters, quotes or backslashes, since it is written into Cargo.toml and YAML.
pub fn repo(value: &str) -> Result<(), String> {
    if value.is_empty()
        || value
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\')
    {
        return Err(
            "the repository path must be non-empty, without whitespace, quotes or \
                    backslashes (like example.com/ai-operator)"
                .into(),
        );
    }
    Ok(())
}

/// Checks that a value is one line of text (no newline or other control character).
pub fn single_line(value: &str) -> Result<(), String> {
    if value.chars().any(char::is_control) {
        return Err("must be a single line of text, without control characters".into());
    }
    Ok(())
}

/// Checks a Rust type path as PROJECT records it (`crate::api::v1::AIJob`,
/// `k8s_openapi::api::core::v1::Pod`): identifiers separated by `::`.
pub fn rust_path(value: &str) -> Result<(), String> {
    let ident = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if value.split("::").all(ident) {
        Ok(())
    } else {
        Err("must be a Rust type path such as crate::api::v1::AIJob".into())
    }
}

/// Checks a webhook path (`/mutate-my-path`): starts with `/`, holds only letters, digits,
/// `/`, `-`, `_` and `.`, and no empty segment.
pub fn webhook_path(value: &str) -> Result<(), String> {
    let ok_chars = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
    if !value.starts_with('/') || value.len() < 2 || !ok_chars || value.contains("//") {
        return Err(
            "a webhook path starts with `/` and holds only letters, digits, `/`, `-`, \
                    `_` and `.` (for example /mutate-my-path)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(dns1123_label("ai-operator").is_ok());
        assert!(dns1123_label("1abc").is_ok());
        assert!(dns1123_label("-abc").is_err());
        assert!(dns1123_label("abc-").is_err());
        assert!(dns1123_label("Abc").is_err());
        assert!(dns1123_label("a_b").is_err());
        assert!(dns1123_label(&"a".repeat(64)).is_err());
        assert!(dns1123_label(&"a".repeat(63)).is_ok());
        assert!(dns1123_label("").is_err());
    }

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain("ai.ai.example.com").is_ok());
        assert!(dns1123_subdomain("ai_group.example.com").is_err());
        assert!(dns1123_subdomain("a..b").is_err());
        assert!(dns1123_subdomain(".a").is_err());
        assert!(dns1123_subdomain(&format!("{}.com", "a".repeat(250))).is_err());
    }

    #[test]
    fn dns1035() {
        for ok in ["v1", "v1beta1", "v2alpha3", "a", "aijob"] {
            assert!(dns1035_label(ok).is_ok(), "{ok}");
        }
        for bad in ["1", "1v", "V1", "v1-", "v_1", "", "../etc"] {
            assert!(dns1035_label(bad).is_err(), "{bad}");
        }
    }
}
