//! Markers in `#` comment formats (YAML, TOML, Makefiles, Dockerfiles): whole comment lines,
//! outside YAML strings, YAML flow collections over several lines, TOML multi-line strings,
//! Dockerfile heredocs and continued Dockerfile instructions.

use std::path::Path;

use super::dockerfile::{continued_lines, heredoc_lines, is_dockerfile};
use super::is_marker_body;

/// `#` formats: the lines whose whole content is the marker comment, outside YAML block
/// scalars and TOML multi-line strings, and the lines where the text appears otherwise.
pub(super) fn hash_comment_markers(
    path: &Path,
    text: &str,
    marker: &str,
) -> (Vec<usize>, Vec<(usize, &'static str)>) {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let yaml = matches!(ext, "yaml" | "yml");
    let toml = ext == "toml";
    let needle = format!("+kubebuilder:scaffold:{marker}");
    let mut found = Vec::new();
    let mut ignored = Vec::new();
    // YAML: the indentation of the line that opened a block scalar, while inside it.
    let mut block_scalar: Option<usize> = None;
    // TOML: the delimiter of an open multi-line string.
    let mut toml_string: Option<&'static str> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let trimmed = line.trim();
        if let Some(parent) = block_scalar {
            if trimmed.is_empty() || indent > parent {
                if line.contains(&needle) {
                    ignored.push((i, "inside a YAML block scalar (`|` or `>`)"));
                }
                continue;
            }
            block_scalar = None;
        }
        if let Some(delim) = toml_string {
            if line.contains(&needle) {
                ignored.push((i, "inside a TOML multi-line string"));
            }
            if line.matches(delim).count() % 2 == 1 {
                toml_string = None;
            }
            continue;
        }
        if let Some(body) = trimmed.strip_prefix('#') {
            if is_marker_body(body, marker) {
                found.push(i);
            } else if line.contains(&needle) {
                ignored.push((i, "inside a longer comment"));
            }
            continue;
        }
        if line.contains(&needle) {
            ignored.push((i, "after other text on the same line"));
        }
        if yaml && opens_block_scalar(trimmed) {
            block_scalar = Some(indent);
        }
        if toml {
            for delim in ["\"\"\"", "'''"] {
                if line.matches(delim).count() % 2 == 1 {
                    toml_string = Some(delim);
                    break;
                }
            }
        }
    }
    let inside: Vec<(Vec<bool>, &'static str)> = if yaml {
        yaml_inside_lines(text)
            .map(|(scalars, flows)| {
                vec![
                    (scalars, "inside a YAML string"),
                    (flows, "inside a YAML flow collection ([...] or {...})"),
                ]
            })
            .unwrap_or_default()
    } else if is_dockerfile(path) {
        vec![
            (heredoc_lines(text), "inside a Dockerfile heredoc"),
            (
                continued_lines(text),
                "inside a Dockerfile instruction continued from the line before",
            ),
        ]
    } else {
        Vec::new()
    };
    for (inside, why) in inside {
        found.retain(|&i| {
            let keep = !inside.get(i).copied().unwrap_or(false);
            if !keep {
                ignored.push((i, why));
            }
            keep
        });
        ignored.sort();
    }
    (found, ignored)
}

/// For each line of `text` (0-based), whether it lies inside a scalar of the YAML parsed from
/// it, and whether it lies inside a flow collection (`[ ... ]`, `{ ... }`) written over several
/// lines: after the line where the node starts and up to the line where it ends (the end's
/// line only when the node ends after its first column). A comment line inside a flow
/// collection is a real comment, but a block-style line inserted there breaks the YAML.
/// `None` when `text` is not YAML the parser reads (the line rules above still apply).
fn yaml_inside_lines(text: &str) -> Option<(Vec<bool>, Vec<bool>)> {
    use granit_parser::{Event, StructureStyle};
    let lines = text.lines().count();
    let mut scalars = vec![false; lines + 1];
    let mut flows = vec![false; lines + 1];
    // One entry per open collection: the 1-based line of a flow collection's start, `None`
    // for a block collection.
    let mut open: Vec<Option<usize>> = Vec::new();
    for event in granit_parser::Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        // Lines are 1-based in the parser.
        let last = if span.end.col() == 0 {
            span.end.line().saturating_sub(1)
        } else {
            span.end.line()
        };
        let (first, slots) = match event {
            Event::SequenceStart(style, ..) | Event::MappingStart(style, ..) => {
                open.push(matches!(style, StructureStyle::Flow).then(|| span.start.line()));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some(Some(first)) => (first, &mut flows),
                _ => continue,
            },
            Event::Scalar(..) => (span.start.line(), &mut scalars),
            _ => continue,
        };
        // The node's first line holds its key or indicator: a comment there is not a whole
        // line. Lines after it are the node's own.
        for l in first + 1..=last {
            if let Some(slot) = slots.get_mut(l - 1) {
                *slot = true;
            }
        }
    }
    Some((scalars, flows))
}

/// Whether a YAML line (trimmed, not a comment) ends with a block scalar indicator: `key: |`,
/// `- >-`, `key: |2 # comment`.
pub(super) fn opens_block_scalar(trimmed: &str) -> bool {
    let code = match trimmed.find(" #") {
        Some(i) => trimmed[..i].trim_end(),
        None => trimmed,
    };
    let Some(last) = code.rsplit([' ', '\t']).next() else {
        return false;
    };
    let mut chars = last.chars();
    let starts = matches!(chars.next(), Some('|' | '>'));
    // Properties may stand between the key and the indicator: `key: &anchor !!str |`.
    let mut before = code[..code.len() - last.len()].trim_end();
    while let Some(word) = before.rsplit([' ', '\t']).next()
        && !word.is_empty()
        && (word.starts_with('&') || word.starts_with('!'))
    {
        before = before[..before.len() - word.len()].trim_end();
    }
    let before_ok = before.is_empty() || before.ends_with([':', '-', '?']);
    starts && before_ok && chars.all(|c| c.is_ascii_digit() || c == '+' || c == '-')
}
