//! The loader every part of the harness calls: [`mcp_scenario`]'s strict parsing and
//! format rules, plus each server op's own rules ([`crate::ops::validate_script`]), all
//! reported as file:line:column and the field.

use crate::error::MockError;
use mcp_scenario::Scenario;
use std::path::Path;

/// Loads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario, MockError> {
    Ok(mcp_scenario::load::load_with(path, &crate::ops::validate_script)?)
}

/// Parses and validates scenario text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, MockError> {
    Ok(mcp_scenario::load::parse_with(path, text, &crate::ops::validate_script)?)
}
