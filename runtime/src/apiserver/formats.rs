// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The string `format`s a custom resource's schema is checked against, as the apiextensions
//! server checks them: the formats of kube-openapi's `strfmt.Default` registry that
//! `pkg/apiserver/validation/formats.go` keeps for CRDs (`uuid`, `date-time`, `ipv4`, `cidr`,
//! `byte`, ...); any other format is dropped from the schema there, so it is not checked here
//! either. Names are compared with their dashes taken out, as strfmt normalizes them
//! (`date-time` = `datetime`).

use regex::Regex;
use std::net::IpAddr;
use std::sync::OnceLock;

/// Whether `value` is valid for `format`. Out: `None` for a format the apiextensions server
/// does not check (unknown names, `int32` and the other number formats, which kube-openapi
/// registers no string check for), else `Some(valid)`.
pub fn check(format: &str, value: &str) -> Option<bool> {
    let name = format.replace('-', "");
    let ok = match name.as_str() {
        "bsonobjectid" => value.len() == 24 && value.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(value),
        "email" => is_email(value),
        "hostname" => is_hostname(value),
        "ipv4" => value.parse::<IpAddr>().is_ok() && value.contains('.'),
        "ipv6" => value.parse::<IpAddr>().is_ok() && value.contains(':'),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "uuid" => rx(0, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
            .is_match(value),
        "uuid3" => rx(1, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
            .is_match(value),
        "uuid4" => rx(
            2,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
        )
        .is_match(value),
        "uuid5" => rx(
            3,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
        )
        .is_match(value),
        "isbn" => is_isbn10(value) || is_isbn13(value),
        "isbn10" => is_isbn10(value),
        "isbn13" => is_isbn13(value),
        "creditcard" => is_credit_card(value),
        "ssn" => value.len() == 11 && rx(4, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").is_match(value),
        "hexcolor" => rx(5, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(value),
        "rgbcolor" => rx(
            6,
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
        )
        .is_match(value),
        "byte" => rx(
            7,
            r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
        )
        .is_match(value),
        "password" => true,
        "date" => is_date(value),
        "datetime" => is_date_time(value),
        "duration" => is_duration(value),
        "quantity" => rx(
            8,
            r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$",
        )
        .is_match(value),
        "k8sshortname" => {
            value.len() <= 63 && rx(9, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").is_match(value)
        }
        "k8slongname" => {
            value.len() <= 253
                && rx(
                    10,
                    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                )
                .is_match(value)
        }
        _ => return None,
    };
    Some(ok)
}

/// The compiled pattern number `slot` (each pattern is compiled once; the patterns are
/// constants, so compiling cannot fail).
fn rx(slot: usize, pattern: &str) -> &'static Regex {
    static CACHE: [OnceLock<Regex>; 18] = [const { OnceLock::new() }; 18];
    CACHE[slot].get_or_init(|| Regex::new(pattern).expect("a constant pattern"))
}

/// As Go's `url.ParseRequestURI` accepts: an absolute URI (a scheme, then no spaces or
/// control characters) or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    s.starts_with('/') || rx(11, r"^[A-Za-z][A-Za-z0-9+.\-]*:.+$").is_match(s)
}

/// An address as Go's `mail.ParseAddress` reads the common forms: `local@domain` or
/// `Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let addr = match (s.rfind('<'), s.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => s,
    };
    rx(12, r"^[^\s@<>()\[\],;:]+@[^\s@<>()\[\],;:]+$").is_match(addr)
}

/// strfmt's `IsHostname`: its pattern, at most 255 characters, labels of at most 63.
fn is_hostname(s: &str) -> bool {
    rx(
        13,
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$",
    )
    .is_match(s)
        && s.len() <= 255
        && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `net.ParseCIDR`: an address, `/`, a prefix length that fits it.
fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(ip) = ip.parse::<IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|n| n <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as hex pairs joined by `:` or `-`, or as groups of
/// four hex digits joined by `.`.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let octets = |parts: Vec<&str>, size: usize, per: usize| {
        matches!(parts.len() * per, 6 | 8 | 20) && parts.iter().all(|p| hex(p, size))
    };
    if s.contains(':') {
        octets(s.split(':').collect(), 2, 1)
    } else if s.contains('-') {
        octets(s.split('-').collect(), 2, 1)
    } else if s.contains('.') {
        octets(s.split('.').collect(), 4, 2)
    } else {
        false
    }
}

/// govalidator's `IsISBN10`: spaces and dashes dropped, nine digits then a digit or `X`, with
/// the weighted checksum.
fn is_isbn10(s: &str) -> bool {
    let d: Vec<char> = s.chars().filter(|c| *c != ' ' && *c != '-').collect();
    if d.len() != 10 || !d[..9].iter().all(char::is_ascii_digit) {
        return false;
    }
    if !(d[9].is_ascii_digit() || d[9] == 'X') {
        return false;
    }
    let sum: u32 = d[..9]
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * c.to_digit(10).unwrap_or(0))
        .sum::<u32>()
        + if d[9] == 'X' {
            100
        } else {
            10 * d[9].to_digit(10).unwrap_or(0)
        };
    sum.is_multiple_of(11)
}

/// govalidator's `IsISBN13`: thirteen digits (spaces and dashes dropped), weights 1 and 3.
fn is_isbn13(s: &str) -> bool {
    let d: Vec<u32> = s
        .chars()
        .filter(|c| *c != ' ' && *c != '-')
        .map(|c| c.to_digit(10).unwrap_or(99))
        .collect();
    if d.len() != 13 || d.iter().any(|x| *x > 9) {
        return false;
    }
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, x)| if i % 2 == 0 { *x } else { 3 * x })
        .sum();
    (10 - sum % 10) % 10 == d[12]
}

/// govalidator's `IsCreditCard`: the digits (other characters dropped) match a card number
/// pattern and pass the Luhn check.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let pattern = rx(
        17,
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$",
    );
    if !pattern.is_match(&digits) {
        return false;
    }
    let sum: u32 = digits
        .chars()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let x = c.to_digit(10).unwrap_or(0);
            if i % 2 == 1 {
                let y = 2 * x;
                if y > 9 { y - 9 } else { y }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// RFC 3339 `full-date` (`2006-01-02`), a real day.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|p| p.parse::<i16>().ok());
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) if s[..4].bytes().all(|c| c.is_ascii_digit()) => {
            i8::try_from(m).is_ok_and(|m| {
                i8::try_from(d).is_ok_and(|d| jiff::civil::Date::new(y, m, d).is_ok())
            })
        }
        _ => false,
    }
}

/// strfmt's `IsDateTime`: lower-cased and split at `t`, a [`is_date`] date, then
/// `hh:mm:ss`, optional fraction, and `z` or an offset, with hours to 23 and minutes and
/// seconds to 59.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let re = rx(
        14,
        r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$",
    );
    match re.captures(parts[1]) {
        Some(c) => &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59",
        None => false,
    }
}

/// strfmt's `ParseDuration` accepts it: a Go duration (`1h30m`, `-1.5s`, `0`), or else any
/// `<digits><unit>` run with a unit strfmt names (`3 days`, `1 week`).
fn is_duration(s: &str) -> bool {
    if rx(15, r"^[-+]?(0|((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$").is_match(s) {
        return true;
    }
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    rx(16, r"(\d+)\s*([A-Za-zµ]+)").captures_iter(s).any(|c| {
        let unit = c[2].trim().to_lowercase();
        c[1].parse::<i64>().is_ok()
            && UNITS.iter().any(|variants| {
                let last = variants.len() - 1;
                variants
                    .iter()
                    .enumerate()
                    .any(|(i, v)| (i == last && unit.starts_with(v)) || unit == *v)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::check;

    /// Cases from kube-openapi's strfmt tests (`default_test.go`, `duration_test.go`) and
    /// apiextensions-apiserver's `TestValidateCustomResource` format cases.
    #[test]
    fn the_formats_kube_checks_accept_and_refuse_as_strfmt_does() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "uuid",
                &[
                    "a8098c1a-f86e-11da-bd1a-00112444be1e",
                    "A8098C1AF86E11DABD1A00112444BE1E",
                ],
                &["zzz", "a8098c1a-f86e-11da-bd1a-00112444be1"],
            ),
            (
                "uuid3",
                &["bcd02e22-68f0-3046-a512-327cca9def8f"],
                &["a8098c1a-f86e-11da-bd1a-00112444be1e"],
            ),
            (
                "uuid4",
                &["025b0d74-00a2-4048-bf57-227c5111bb34"],
                &["a8098c1a-f86e-11da-bd1a-00112444be1e"],
            ),
            (
                "uuid5",
                &["886313e1-3b8a-5372-9b90-0c9aee199e5d"],
                &["a8098c1a-f86e-11da-bd1a-00112444be1e"],
            ),
            (
                "ipv4",
                &["192.168.254.1", "::ffff:192.168.1.1"],
                &["192.168.254.256", "2001:db8::1", "1.2.3"],
            ),
            (
                "ipv6",
                &["::1", "2001:db8:85a3::8a2e:370:7334"],
                &["127.0.0.1", "::g"],
            ),
            (
                "cidr",
                &["192.168.254.1/24", "2001:db8::/32"],
                &["192.168.254.1", "1.2.3.4/33"],
            ),
            (
                "mac",
                &[
                    "01:02:03:04:05:06",
                    "01-02-03-04-05-06",
                    "0102.0304.0506",
                    "01:02:03:04:05:06:07:08",
                ],
                &["01:02:03:04:05", "0g:02:03:04:05:06"],
            ),
            (
                "hostname",
                &["somewhere.com", "localhost", "a.b-c.io"],
                &["somewhere.com!", "-a.com", "a..com"],
            ),
            (
                "email",
                &["blah@blah.com", "Name <blah@blah.com>"],
                &["blah", "a@", "@b.com"],
            ),
            (
                "uri",
                &["http://somewhere.com", "/path/only", "mailto:a@b.c"],
                &["somewhere.com", "http://a b"],
            ),
            (
                "byte",
                &["ZWxpemFiZXRocG9zZXk=", "YWJj"],
                &["ZWxpemFiZXRocG9zZXk", "!!!!", ""],
            ),
            (
                "date",
                &["2014-12-15", "2024-02-29"],
                &["2014-12-15T19:30:20Z", "2023-02-29", "2014-1-15"],
            ),
            (
                "date-time",
                &["2014-12-15T19:30:20Z", "2014-12-15t19:30:20.000+01:00"],
                &["2014-12-15", "2014-12-15T25:30:20Z", "2014-12-15T19:30:20"],
            ),
            (
                "duration",
                &["1h30m", "-1.5s", "0", "3 days", "1 week", "15 s"],
                &["three days", "1y", ""],
            ),
            (
                "hexcolor",
                &["#FFF", "#ffffff", "fff"],
                &["#FFFF", "#gggggg"],
            ),
            (
                "rgbcolor",
                &["rgb(255,255,255)", "rgb( 0 , 1 , 2 )"],
                &["rgb(256,0,0)", "rgb(1,2)"],
            ),
            (
                "ssn",
                &["111-11-1111", "111 11 1111"],
                &["111111111", "11-111-1111"],
            ),
            (
                "isbn10",
                &["3836221195", "3-8362-2119-5", "020161622X"],
                &["3836221196"],
            ),
            (
                "isbn13",
                &["9783836221191", "978-3-8362-2119-1"],
                &["9783836221190"],
            ),
            ("isbn", &["3836221195", "9783836221191"], &["123"]),
            (
                "creditcard",
                &["4111111111111111", "4111-1111-1111-1111"],
                &["4111111111111112", "123"],
            ),
            (
                "bsonobjectid",
                &["507f1f77bcf86cd799439011"],
                &["507f1f77bcf86cd79943901z"],
            ),
            ("password", &["anything at all"], &[]),
            (
                "quantity",
                &["10Gi", "1.5", "500m", "1e3"],
                &["10 Gi", "Gi", "1.2.3"],
            ),
            (
                "k8s-short-name",
                &["my-name", "a1"],
                &["My-name", "-a", "a.b"],
            ),
            (
                "k8s-long-name",
                &["my.name-1.example"],
                &["My.name", "a..b", "-a"],
            ),
        ];
        for (format, good, bad) in cases {
            for v in *good {
                assert_eq!(check(format, v), Some(true), "{format} {v:?}");
            }
            for v in *bad {
                assert_eq!(check(format, v), Some(false), "{format} {v:?}");
            }
        }
        assert_eq!(check("int32", "x"), None);
        assert_eq!(check("my-own-format", "x"), None);
    }
}
