//! Finding the line whose indentation does not line up with its siblings, so a structural
//! error names the line that causes it. serde-saphyr reports the symptom at the enclosing
//! mapping (a 3-space key under 4-space siblings ends the mapping early, so the loader says
//! `missing field `method`` at the step's first line); this scan says where and why.
//!
//! Written here rather than taken from a crate: the question is about the source text's
//! layout, which YAML parsers (serde-saphyr included) discard once a line is parsed. The scan
//! is deliberately simple — block mappings and sequences, skipping block scalars and
//! multi-line flow collections — and is only consulted once parsing has already failed.

use std::fmt;

/// A line that does not line up with the lines it sits among.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misaligned {
    /// 1-based line of the offending text.
    pub line: u32,
    /// 1-based column where its text starts.
    pub column: u32,
    /// The key (or text) the line starts with.
    pub key: String,
    /// The sibling it should line up with: its line, its column (1-based), its key.
    pub sibling: (u32, u32, String),
    /// Deeper than the sibling (read as a continuation of its value) rather than between
    /// two levels.
    pub deeper: bool,
}

impl fmt::Display for Misaligned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column, key) = &self.sibling;
        let spaces = |c: u32| c.saturating_sub(1);
        if self.deeper {
            write!(
                f,
                "`{}` is indented {} spaces, deeper than `{key}` on line {line} ({} spaces), whose value is already given: YAML reads this line as a continuation of that value. If `{}` belongs beside `{key}`, indent it {} spaces",
                self.key,
                spaces(self.column),
                spaces(*column),
                self.key,
                spaces(*column)
            )
        } else {
            write!(
                f,
                "`{}` is indented {} spaces, which does not line up with its siblings (`{key}` on line {line} is at {} spaces): YAML ends that mapping before this line. Indent it {} spaces like `{key}`",
                self.key,
                spaces(self.column),
                spaces(*column),
                spaces(*column)
            )
        }
    }
}

/// One open block level: the column its keys start at, and the line and key that opened it.
struct Level {
    indent: usize,
    line: usize,
    key: String,
}

/// The first line of `text` whose indentation does not line up, if any.
pub fn misaligned(text: &str) -> Option<Misaligned> {
    let mut levels: Vec<Level> = vec![Level { indent: 0, line: 0, key: String::new() }];
    // The previous line opened a nested block (`key:` with nothing after it).
    let mut opener = true;
    // Lines deeper than this belong to a block scalar (`|`, `>`) and are not YAML structure.
    let mut scalar_above: Option<usize> = None;
    let mut flow_depth = 0i32;
    for (i, raw) in text.lines().enumerate() {
        let content = strip_comment(raw);
        let trimmed = content.trim();
        if trimmed.is_empty() || trimmed == "---" || trimmed == "..." {
            continue;
        }
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        if let Some(above) = scalar_above {
            if indent > above {
                continue;
            }
            scalar_above = None;
        }
        if flow_depth > 0 {
            flow_depth += flow_balance(trimmed);
            continue;
        }
        let key = first_key(trimmed);
        let top = levels.last().map_or(0, |l| l.indent);
        if indent > top {
            // A deeper line that is not `key: value` continues a plain scalar (prose).
            if !opener && value_of(trimmed).is_none() && !trimmed.starts_with("- ") {
                continue;
            }
            if !opener {
                return levels.last().map(|l| found(i, indent, key, l, true));
            }
            levels.push(Level { indent, line: i, key: key.clone() });
        } else if indent < top {
            let mut closed = None;
            while levels.last().is_some_and(|l| l.indent > indent) {
                closed = levels.pop();
            }
            if levels.last().map_or(0, |l| l.indent) != indent {
                return closed.map(|l| found(i, indent, key, &l, false));
            }
        }
        // A sequence item's own mapping starts after `- `.
        // This line is now the latest sibling at its level: the one a deeper line continues.
        if let Some(level) = levels.last_mut().filter(|l| l.indent == indent) {
            (level.line, level.key) = (i, key.clone());
        }
        let mut body = trimmed;
        let mut body_indent = indent;
        while let Some(rest) = body.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with(' ')) {
            let inner = rest.trim_start();
            body_indent += body.len() - inner.len();
            body = inner;
            if body.is_empty() {
                break;
            }
            levels.push(Level { indent: body_indent, line: i, key: first_key(body) });
        }
        let value = value_of(body);
        opener = body.is_empty() || value.is_some_and(str::is_empty);
        match value {
            Some(v) if matches!(v.trim_end_matches(['-', '+']), "|" | ">") => scalar_above = Some(body_indent),
            Some(v) if v.starts_with('{') || v.starts_with('[') => flow_depth = flow_balance(v).max(0),
            _ => {}
        }
    }
    None
}

/// Line `index` (0-based), indented `indent`, starting with `key`, does not line up with
/// `sibling`'s level.
fn found(index: usize, indent: usize, key: String, sibling: &Level, deeper: bool) -> Misaligned {
    Misaligned {
        line: index as u32 + 1,
        column: indent as u32 + 1,
        key,
        sibling: (sibling.line as u32 + 1, sibling.indent as u32 + 1, sibling.key.clone()),
        deeper,
    }
}

/// The key a line starts with (or its first word), for messages.
fn first_key(line: &str) -> String {
    let line = line.trim_start_matches(['-', ' ']);
    let end = line.find(|c: char| c == ':' || c.is_whitespace()).unwrap_or(line.len());
    line[..end].to_string()
}

/// What follows `key:` on a mapping line (`Some("")` when nothing does); `None` when the
/// line is not `key: value`.
fn value_of(body: &str) -> Option<&str> {
    if body.starts_with(['"', '\'', '{', '[']) {
        return None;
    }
    if let Some(v) = body.strip_suffix(':') {
        return (!v.contains(": ")).then_some("");
    }
    body.split_once(": ").map(|(_, v)| v.trim())
}

/// Opening minus closing brackets outside quoted strings.
fn flow_balance(text: &str) -> i32 {
    let (mut depth, mut quote, mut escaped) = (0, None, false);
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                _ => {}
            },
        }
    }
    depth
}

/// The line without a trailing `# comment` (a `#` after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return &line[..i],
            None => {}
        }
        previous = c;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name: t\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\n    params: {\"a\": [1,\n      2]}\n  - op: wait\n    ms: 5\nserver:\n- op: send\n  text: |\n      indented\n   less\n  more: x\n";

    #[test]
    fn a_well_indented_file_has_no_misaligned_line() {
        assert_eq!(misaligned(GOOD), None);
    }

    #[test]
    fn a_key_between_two_levels_names_its_sibling() {
        let text = GOOD.replace("    method: tools/list", "   method: tools/list");
        let m = misaligned(&text).expect("found");
        assert_eq!((m.line, m.column, m.key.as_str(), m.deeper), (5, 4, "method", false));
        assert_eq!(m.sibling, (4, 5, "op".to_string()));
        assert!(m.to_string().contains("does not line up with its siblings"), "{m}");
    }

    #[test]
    fn a_key_deeper_than_its_siblings_is_a_continuation() {
        let m = misaligned(&GOOD.replace("    method: tools/list", "     method: tools/list")).expect("found");
        assert_eq!((m.line, m.column, m.deeper), (5, 6, true));
    }

    /// A hand-made fuzz regression named the top level's sibling `` on line 1.
    #[test]
    fn a_top_level_key_too_deep_names_the_key_above() {
        let m = misaligned("name: t\nsummary: s\n  client: []\n").expect("found");
        assert_eq!((m.line, m.column, m.deeper), (3, 3, true));
        assert_eq!(m.sibling, (2, 1, "summary".to_string()));
    }

    #[test]
    fn every_library_scenario_lines_up() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
        let mut stack = vec![std::path::PathBuf::from(dir)];
        let mut seen = 0;
        while let Some(p) = stack.pop() {
            for entry in std::fs::read_dir(&p).expect("readable").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&path).expect("readable");
                    assert_eq!(misaligned(&text), None, "{}", path.display());
                    seen += 1;
                }
            }
        }
        assert!(seen > 100, "{seen}");
    }
}
