// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Field manager names: the checks of the `fieldManager` option (apimachinery's
//! `ValidateFieldManager`) and the name taken from the `User-Agent` when the option is not
//! given (k8s.io/apiserver's `prefixFromUserAgent`).

use crate::apiserver::quote::{go_quote, is_print};

/// The longest field manager name, in bytes (apimachinery's `FieldManagerMaxLength`).
pub const MAX_LENGTH: usize = 128;

/// The causes `ValidateFieldManager` finds in `manager`, on field `fieldManager`: longer than
/// [`MAX_LENGTH`] bytes ("Too long: may not be more than 128 bytes"); a character that is
/// not [`is_print`], each as `Invalid value: "<manager>": invalid character U+200B (at
/// position <byte offset>)`.
pub fn causes(manager: &str) -> Vec<(String, String)> {
    let mut causes = Vec::new();
    if manager.len() > MAX_LENGTH {
        causes.push((
            "fieldManager".into(),
            format!("Too long: may not be more than {MAX_LENGTH} bytes"),
        ));
    }
    for (i, c) in manager.char_indices() {
        if !is_print(c) {
            causes.push((
                "fieldManager".into(),
                format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {i})",
                    go_quote(manager),
                    c as u32
                ),
            ));
        }
    }
    causes
}

/// The manager name of a request without `fieldManager`, from its `User-Agent` header's
/// bytes as `prefixFromUserAgent` takes it: the text before the first `/`, without the
/// characters that are not [`is_print`], cut before the character that would pass
/// [`MAX_LENGTH`] bytes. Bytes that are not UTF-8 read as U+FFFD, as Go ranges over them.
pub fn from_user_agent(agent: &[u8]) -> String {
    let agent = String::from_utf8_lossy(agent);
    let prefix = agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| is_print(*c)) {
        if out.len() + c.len_utf8() > MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_manager_causes_name_each_character_and_the_length() {
        assert!(causes("kubectl-client-side-apply").is_empty());
        assert!(causes("gestionnaire é").is_empty());
        assert_eq!(
            causes("a\u{200b}b"),
            vec![(
                "fieldManager".to_owned(),
                r#"Invalid value: "a\u200bb": invalid character U+200B (at position 1)"#.to_owned()
            )]
        );
        assert_eq!(
            causes("x\u{202e}y")[0].1,
            r#"Invalid value: "x\u202ey": invalid character U+202E (at position 1)"#
        );
        assert_eq!(
            causes(&"m".repeat(129)),
            vec![(
                "fieldManager".to_owned(),
                "Too long: may not be more than 128 bytes".to_owned()
            )]
        );
        assert!(causes(&"m".repeat(128)).is_empty());
        assert_eq!(go_quote("a\"\\\t\u{e0041}é"), r#""a\"\\\t\U000e0041é""#);
    }

    #[test]
    fn user_agent_prefix_keeps_printable_characters_up_to_128_bytes() {
        assert_eq!(from_user_agent(b"kubectl/v1.31.1 (linux/amd64)"), "kubectl");
        assert_eq!(from_user_agent("outil-été/1.0".as_bytes()), "outil-été");
        assert_eq!(from_user_agent("a\u{200b}b\tc/x".as_bytes()), "abc");
        assert_eq!(from_user_agent(b"bad\xffbyte"), "bad\u{fffd}byte");
        // 127 ASCII bytes and a 2-byte character: the character does not fit.
        let long = format!("{}é", "m".repeat(127));
        assert_eq!(from_user_agent(long.as_bytes()), "m".repeat(127));
        assert_eq!(from_user_agent(&[b'm'; 300]), "m".repeat(128));
    }
}
