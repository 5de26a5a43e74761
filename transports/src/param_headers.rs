//! `x-mcp-header` (2026-07-28, Streamable HTTP): tool parameters a server asks to be
//! mirrored into `Mcp-Param-{Name}` headers. [`annotations`] reads and validates a tool's
//! `inputSchema` (an invalid annotation makes the whole tool invalid: the client leaves it
//! out of `tools/list`); [`values`] extracts a call's header values from its arguments.
//! Rules: `mcp-spec/2026-07-28/basic/transports/streamable-http.mdx`, "Custom Headers from
//! Tool Parameters".

use serde_json::Value;
use std::collections::HashSet;

/// The schema keyword.
pub const KEYWORD: &str = "x-mcp-header";
/// JavaScript's safe integer bound: integers beyond it are not permitted.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One annotated parameter: the chain of `properties` keys to it and the header's name part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// The property path from the schema root.
    pub path: Vec<String>,
    /// The `{Name}` of `Mcp-Param-{Name}`.
    pub name: String,
}

/// Why a tool's `x-mcp-header` annotations make it invalid; `at` is the dotted property
/// path of the annotated parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidAnnotation {
    /// The keyword's value is not a string.
    #[error("x-mcp-header on {at} is not a string")]
    NotAString {
        /// The parameter's path.
        at: String,
    },
    /// The name is empty or not an RFC 9110 token.
    #[error("x-mcp-header {name:?} on {at} is not an HTTP field-name token")]
    NotAToken {
        /// The name as written.
        name: String,
        /// The parameter's path.
        at: String,
    },
    /// The parameter is not a string, integer or boolean.
    #[error(
        "x-mcp-header on {at} annotates a parameter of type {}; only string, integer and boolean are allowed",
        parameter_type.as_deref().unwrap_or("(none)")
    )]
    UnmirroredType {
        /// The parameter's path.
        at: String,
        /// Its `type`, when it has a string one.
        parameter_type: Option<String>,
    },
    /// The keyword stands somewhere other than a property reached through `properties`.
    #[error(
        "x-mcp-header may only annotate properties reached through `properties` keys (not items, oneOf/anyOf/allOf/not, if/then/else, $ref or the root)"
    )]
    OutsideProperties,
    /// Two annotations name the same header.
    #[error("x-mcp-header {name:?} is used twice (names are case-insensitive)")]
    UsedTwice {
        /// The second use's name.
        name: String,
    },
}

/// The annotations of one tool's `inputSchema`, or why the tool definition is invalid.
pub fn annotations(input_schema: &Value) -> Result<Vec<Annotation>, InvalidAnnotation> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), &mut found)?;
    let total = count_keyword(input_schema);
    if total != found.len() {
        return Err(InvalidAnnotation::OutsideProperties);
    }
    let mut seen = HashSet::new();
    for a in &found {
        if !seen.insert(a.name.to_ascii_lowercase()) {
            return Err(InvalidAnnotation::UsedTwice { name: a.name.clone() });
        }
    }
    Ok(found)
}

/// Follows `properties` chains only, validating each annotation it meets.
fn walk(schema: &Value, path: &mut Vec<String>, found: &mut Vec<Annotation>) -> Result<(), InvalidAnnotation> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Ok(()) };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(raw) = sub.get(KEYWORD) {
            let at = path.join(".");
            let Some(name) = raw.as_str() else { return Err(InvalidAnnotation::NotAString { at }) };
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(InvalidAnnotation::NotAToken { name: name.to_owned(), at });
            }
            match sub.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(InvalidAnnotation::UnmirroredType { at, parameter_type: other.map(str::to_owned) });
                }
            }
            found.push(Annotation { path: path.clone(), name: name.to_owned() });
        }
        walk(sub, path, found)?;
        path.pop();
    }
    Ok(())
}

fn count_keyword(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.iter().map(|(k, v)| usize::from(k == KEYWORD) + count_keyword(v)).sum(),
        Value::Array(a) => a.iter().map(count_keyword).sum(),
        _ => 0,
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The header values of one call: `(name part, text)` for every annotation whose value is
/// present (not absent, not null) in `arguments`; strings as is, integers in decimal,
/// booleans `true` / `false`. Values of other types are left out.
pub fn values(annotations: &[Annotation], arguments: &Value) -> Vec<(String, String)> {
    annotations
        .iter()
        .filter_map(|a| {
            let v = a.path.iter().try_fold(arguments, |v, key| v.get(key))?;
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) if n.as_i64().is_some_and(|i| i.abs() <= MAX_SAFE_INTEGER) => n.to_string(),
                _ => return None,
            };
            Some((a.name.clone(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_nested_annotations_and_values() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "Count"}}},
            "query": {"type": "string"}}});
        let a = annotations(&schema).expect("valid");
        assert_eq!(a.len(), 2);
        let args = json!({"region": "us-west1", "opts": {"n": 42}});
        assert_eq!(
            values(&a, &args),
            vec![("Region".to_owned(), "us-west1".to_owned()), ("Count".to_owned(), "42".to_owned())]
        );
        assert_eq!(values(&a, &json!({"region": null})), vec![]);
    }

    #[test]
    fn refuses_invalid_annotations() {
        let bad = [
            json!({"properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
            json!({"properties": {"x": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"x": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"x": {"type": "string", "x-mcp-header": "A"}, "y": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"x": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}),
            json!({"oneOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
        ];
        let refusals: Vec<InvalidAnnotation> =
            bad.iter().map(|schema| annotations(schema).expect_err("invalid")).collect();
        let at = || "x".to_owned();
        assert_eq!(
            refusals,
            [
                InvalidAnnotation::UnmirroredType { at: at(), parameter_type: Some("number".into()) },
                InvalidAnnotation::NotAToken { name: String::new(), at: at() },
                InvalidAnnotation::NotAToken { name: "A B".into(), at: at() },
                InvalidAnnotation::UsedTwice { name: "a".into() },
                InvalidAnnotation::OutsideProperties,
                InvalidAnnotation::OutsideProperties,
            ]
        );
        assert_eq!(
            refusals[0].to_string(),
            "x-mcp-header on x annotates a parameter of type number; only string, integer and boolean are allowed"
        );
    }
}
