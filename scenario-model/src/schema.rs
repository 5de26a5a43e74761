//! The JSON Schema of the scenario format, generated from the Rust types and committed as
//! `scenarios/schema.json` so editors can complete scenario files.

use crate::scenario::Scenario;

/// The schema as pretty-printed JSON with a trailing newline.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
