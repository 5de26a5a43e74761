//! Every field of the scenario format is documented in `scenarios/README.md`: this walks the
//! committed `scenarios/schema.json` and fails naming each field the README does not
//! mention where a reader looks for it — a plan step's or server op's field in a README line
//! that names the op, a check's field in a line that names the check, a top-level field
//! anywhere (as `field` or `field:`), a nested type's field anywhere.

use serde_json::Value;

const README: &str = include_str!("../../../scenarios/README.md");
const SCHEMA: &str = include_str!("../../../scenarios/schema.json");

/// Whether `line` mentions field `f` as a field: the name after `` ` ``, `{`, `,` + space or
/// at the line's start, and before `` ` ``, `:`, `}`, `,`, ` (` or the line's end.
fn mentions(line: &str, f: &str) -> bool {
    line.match_indices(f).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = &line[i + f.len()..];
        let starts = match before {
            None => true,
            Some('`' | '{') => true,
            Some(' ') => line[..i].ends_with(", ") || line[..i].trim().is_empty(),
            _ => false,
        };
        let ends = after.is_empty() || after.starts_with(['`', ':', '}', ',']) || after.starts_with(" (");
        starts && ends
    })
}

/// The README lines naming `` `name` `` (a plan op, server op or check kind).
fn lines_naming<'a>(name: &str) -> Vec<&'a str> {
    README.lines().filter(|l| l.contains(&format!("`{name}`")) || l.contains(&format!("`{name}:"))).collect()
}

fn properties(v: &Value) -> Vec<String> {
    v.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// The fields of the README's undocumented places, as `where: field` lines.
fn missing() -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema.json is JSON");
    let defs = &schema["$defs"];
    let mut missing = Vec::new();
    for f in properties(&schema) {
        if !README.contains(&format!("`{f}`")) && !README.contains(&format!("\n{f}:")) {
            missing.push(format!("top-level field `{f}`"));
        }
    }
    for (part, def) in [("client op", "ClientStep"), ("server op", "ServerStep")] {
        for variant in defs[def]["oneOf"].as_array().expect("oneOf") {
            let op = variant["properties"]["op"]["const"].as_str().expect("op const").to_string();
            let lines = lines_naming(&op);
            for f in properties(variant).into_iter().filter(|f| f != "op") {
                if !lines.iter().any(|l| mentions(l, &f)) {
                    missing.push(format!("{part} `{op}`: field `{f}`"));
                }
            }
        }
    }
    for variant in defs["CheckEntry"]["oneOf"].as_array().expect("oneOf") {
        for kind in properties(variant)
            .into_iter()
            .filter(|k| !["must", "should", "project", "driver", "robustness"].contains(&k.as_str()))
        {
            let lines = lines_naming(&kind);
            if lines.is_empty() {
                missing.push(format!("check `{kind}`"));
            }
            let reference = variant["properties"][&kind]["$ref"].as_str().unwrap_or_default();
            let def = &defs[reference.trim_start_matches("#/$defs/")];
            for f in properties(def) {
                if !lines.iter().any(|l| mentions(l, &f)) {
                    missing.push(format!("check `{kind}`: field `{f}`"));
                }
            }
        }
    }
    for nested in ["Managed", "Generate", "HttpFilter"] {
        for f in properties(&defs[nested]) {
            if !README.lines().any(|l| mentions(l, &f)) {
                missing.push(format!("{nested}: field `{f}`"));
            }
        }
    }
    missing
}

#[test]
fn every_schema_field_is_in_the_scenarios_readme() {
    let missing = missing();
    assert!(missing.is_empty(), "scenarios/README.md does not document:\n  {}", missing.join("\n  "));
}

#[test]
fn the_walk_sees_every_part_of_the_format() {
    // A walk that found nothing would pass everything: it must see the ops and the checks.
    let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
    assert!(schema["$defs"]["ServerStep"]["oneOf"].as_array().is_some_and(|v| v.len() > 25));
    assert!(schema["$defs"]["CheckEntry"]["oneOf"].as_array().is_some_and(|v| v.len() > 15));
    assert!(mentions("| `expect_get` | `as`, `close` |", "close"));
    assert!(!mentions("| `expect_get` | `as` | close the stream", "close"));
    assert!(mentions("breaker_window_ms (60000)}` runs", "breaker_window_ms"));
    assert!(mentions("`generate: {size, fill, newline}`", "newline"));
}
