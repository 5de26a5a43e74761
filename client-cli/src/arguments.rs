//! Sample values built from a JSON Schema: tool arguments when nothing better is known, and
//! the content of an accepted elicitation.
//!
//! An object gets its `required` properties and every property that has a `default`
//! (2025-11-25 elicitation, SEP-1034: defaults apply to omitted fields); a value is its
//! `default`, else its first `enum` member, else a placeholder of its `type`. `$ref` is
//! never followed: a network `$ref` must not be fetched (2026-07-28, SEP-2106), and a
//! local one only narrows what a placeholder would be.

use serde_json::{Map, Value, json};

/// A value that fits `schema` as far as its `default`, `enum` and `type` tell.
pub fn sample(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    match schema_type(schema) {
        Some("string") => json!("sample"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        Some("object") => Value::Object(sample_object(schema)),
        _ if schema.get("properties").is_some() => Value::Object(sample_object(schema)),
        _ => Value::Null,
    }
}

/// The arguments object for a tool: a sample of its `inputSchema` (always an object).
pub fn tool_arguments(tool: &Value) -> Value {
    Value::Object(tool.get("inputSchema").map(sample_object).unwrap_or_default())
}

/// An object with the schema's required properties and its properties that have defaults.
pub fn sample_object(schema: &Value) -> Map<String, Value> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Map::new() };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .filter(|(name, property)| required.contains(&name.as_str()) || property.get("default").is_some())
        .map(|(name, property)| (name.clone(), sample(property)))
        .collect()
}

/// The schema's `type`, or the first non-null one of a type list.
fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(types) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_placeholders_of_their_type() {
        let tool = json!({"name": "add", "inputSchema": {"type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "integer"}, "s": {"type": "string"},
                           "f": {"type": "boolean"}, "o": {"type": "object", "properties": {}}, "skip": {"type": "string"}},
            "required": ["a", "b", "s", "f", "o"]}});
        assert_eq!(tool_arguments(&tool), json!({"a": 1, "b": 1, "s": "sample", "f": true, "o": {}}));
    }

    #[test]
    fn defaults_enums_and_consts_win_over_placeholders() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "mode": {"type": "string", "enum": ["fast", "slow"]}, "kind": {"const": "k"}, "optional": {"type": "string"}},
            "required": ["mode", "kind"]});
        assert_eq!(
            Value::Object(sample_object(&schema)),
            json!({"name": "John Doe", "age": 30, "status": "active", "mode": "fast", "kind": "k"})
        );
    }

    #[test]
    fn refs_are_never_followed_and_odd_schemas_give_null() {
        let schema = json!({"type": "object", "properties": {"id": {"$ref": "#/$defs/id"},
            "profile": {"$ref": "http://127.0.0.1:1/canary.json"}}, "required": ["id", "profile"]});
        assert_eq!(Value::Object(sample_object(&schema)), json!({"id": null, "profile": null}));
        assert_eq!(sample(&json!({"type": ["null", "string"]})), json!("sample"));
        assert_eq!(tool_arguments(&json!({"name": "no-schema"})), json!({}));
    }
}
