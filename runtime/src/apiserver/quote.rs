// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Strings printed as Go prints them in kube-apiserver's messages: which characters are
//! printable (`unicode.IsPrint`) and the `%q` quoting (`strconv.Quote`).

/// Whether `c` is printable as Go's `unicode.IsPrint` says: a letter, mark, number,
/// punctuation or symbol, or the ASCII space. Not printable: controls, every other space
/// (no-break space, the typographic spaces, line and paragraph separators), format
/// characters (zero-width space and joiners, the bidirectional marks, embeddings,
/// overrides and isolates, the soft hyphen, the byte order mark, tags) and private-use
/// characters. Not told apart: code points Unicode leaves unassigned, which Go also refuses.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2
        | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// A string as Go's `%q` (`strconv.Quote`) prints it: printable characters (Go's
/// `unicode.IsPrint`, [`is_print`]) as they are, `"`
/// and `\` escaped, `\n`-style escapes, other control characters as `\x..`, other
/// non-printable characters as `\u....` or `\U........`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_as_go_unicode_is_print() {
        for c in [
            'a', 'é', 'ж', '中', '1', '-', ':', '€', ' ', '\u{0301}', '😀',
        ] {
            assert!(is_print(c), "{c:?}");
        }
        for c in [
            '\t',
            '\n',
            '\u{7f}',
            '\u{85}',
            '\u{a0}',
            '\u{ad}',
            '\u{2003}',
            '\u{200b}',
            '\u{200d}',
            '\u{200e}',
            '\u{2028}',
            '\u{202e}',
            '\u{2066}',
            '\u{3000}',
            '\u{feff}',
            '\u{e000}',
            '\u{e0041}',
        ] {
            assert!(!is_print(c), "{c:?}");
        }
    }
}
