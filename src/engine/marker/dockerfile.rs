//! Dockerfile lines that belong to an instruction: heredoc bodies and lines continued from
//! the line before.

use std::path::Path;

/// Whether `path` is a Dockerfile (`Dockerfile`, `Dockerfile.<x>`, `<x>.Dockerfile`).
pub(super) fn is_dockerfile(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "Dockerfile" || name.starts_with("Dockerfile.") || name.ends_with(".Dockerfile")
}

/// For each line of a Dockerfile (0-based), whether it is inside a heredoc: the lines after
/// an instruction line holding `<<WORD` (also `<<-WORD`, `<<"WORD"`, `<<'WORD'`), up to and
/// including the line that is `WORD` (leading tabs allowed after `<<-`). Several heredocs of
/// one line follow each other.
pub(super) fn heredoc_lines(text: &str) -> Vec<bool> {
    let lines: Vec<&str> = text.lines().collect();
    let mut inside = vec![false; lines.len()];
    let mut pending: std::collections::VecDeque<(String, bool)> = Default::default();
    for (i, line) in lines.iter().enumerate() {
        if let Some((word, dash)) = pending.front() {
            inside[i] = true;
            let candidate = if *dash {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if candidate == word {
                pending.pop_front();
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        let mut rest = *line;
        while let Some(at) = rest.find("<<") {
            rest = &rest[at + 2..];
            let dash = rest.starts_with('-');
            let word_part = rest.trim_start_matches('-');
            let word: String = word_part
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| !c.is_whitespace() && !"\"'<>|&;()".contains(*c))
                .collect();
            if !word.is_empty() {
                pending.push_back((word, dash));
            }
        }
    }
    inside
}

/// For each line of a Dockerfile (0-based), whether it continues the instruction of a line
/// before it: the line before (skipping comment and blank lines, which Docker drops inside a
/// continued instruction) ends with the escape character, `\` or the one a `# escape=`
/// parser directive at the top of the file names. A marker there would have its insert
/// joined to that instruction.
pub(super) fn continued_lines(text: &str) -> Vec<bool> {
    let lines: Vec<&str> = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .collect();
    let escape = escape_char(text);
    let mut inside = vec![false; lines.len()];
    let mut continued = false;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if continued {
            inside[i] = true;
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
        }
        continued = !trimmed.starts_with('#') && trimmed.ends_with(escape);
    }
    inside
}

/// The Dockerfile's escape character: `\` or the one a `# escape=` parser directive names
/// among the comments at the top of the file (a leading byte order mark skipped, as Docker
/// skips it).
pub(super) fn escape_char(text: &str) -> char {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for line in text.lines() {
        let Some(directive) = line.trim().strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = directive.split_once('=') else {
            break;
        };
        let key = key.trim().to_ascii_lowercase();
        if key == "escape" {
            if let Some(c @ ('\\' | '`')) = value.trim().chars().next() {
                return c;
            }
        } else if key != "syntax" && key != "check" {
            break;
        }
    }
    '\\'
}
