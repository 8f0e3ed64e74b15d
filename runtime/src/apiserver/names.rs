// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Object names as the API server checks and generates them (apimachinery
//! `pkg/util/validation` and apiserver `pkg/storage/names`).

/// Whether `s` is a DNS-1123 subdomain: at most 253 characters of lower-case alphanumerics,
/// `-` and `.`, each dot-separated part starting and ending alphanumeric. Custom resource
/// names must be one.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && !s.is_empty() && is_subdomain_shape(s)
}

/// Whether `s` matches the DNS-1123 subdomain regex, whatever its length: dot-separated
/// parts of lower-case alphanumerics and `-`, each starting and ending alphanumeric.
pub fn is_subdomain_shape(s: &str) -> bool {
    s.split('.').all(|part| {
        let b = part.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    })
}

/// Whether `s` is a DNS-1123 label (a namespace name): at most 63 characters of lower-case
/// alphanumerics and `-`, alphanumeric at both ends.
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && !s.contains('.') && is_dns_subdomain(s)
}

/// The characters the API server draws generated name suffixes from (no vowels, no
/// look-alike characters, so a suffix spells no word).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A name for `generateName`: the prefix cut to 58 characters, then 5 random characters, as
/// `names.SimpleNameGenerator` makes them.
pub fn generate(prefix: &str) -> String {
    let cut: String = prefix.chars().take(58).collect();
    let mut bytes = [0u8; 5];
    // getrandom fails only where the OS has no randomness source; fall back to the clock.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes = nanos.to_le_bytes().repeat(2)[..5]
            .try_into()
            .unwrap_or_default();
    }
    let suffix: String = bytes
        .iter()
        .map(|b| ALPHANUMS[*b as usize % ALPHANUMS.len()] as char)
        .collect();
    format!("{cut}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_follow_rfc_1123() {
        for ok in ["a", "my-db", "db.example.com", "0a"] {
            assert!(is_dns_subdomain(ok), "{ok}");
        }
        for bad in ["", "My-db", "-a", "a-", "a..b", "a_b", &"a".repeat(254)] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
        assert!(!is_dns_label("a.b"));
        assert!(!is_dns_label(&"a".repeat(64)));
    }

    #[test]
    fn a_generated_name_is_the_prefix_and_five_suffix_characters() {
        let name = generate("db-");
        assert_eq!(name.len(), 8);
        assert!(name.starts_with("db-"));
        assert!(name[3..].bytes().all(|c| ALPHANUMS.contains(&c)), "{name}");
        assert_eq!(generate(&"x".repeat(70)).len(), 63);
    }
}
