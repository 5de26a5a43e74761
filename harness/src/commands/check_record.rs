//! `mcp-harness check-record`: a host's recording judged as a run would be.

use crate::{HarnessError, report};
use mcp_results::Status;
use mcp_scenario::TransportName;
use std::path::Path;
use std::time::Instant;

/// `check-record`: judges the recording, prints the verdict as `run` does, returns the exit
/// code.
pub fn check_record(path: &Path, recording: &Path, transport: Option<&str>, strict: bool) -> Result<i32, HarnessError> {
    let started = Instant::now();
    let scenario = crate::load::load(path)?;
    let transport = transport.map(|t| match t {
        "stdio" => TransportName::Stdio,
        "legacy-sse" => TransportName::LegacySse,
        _ => TransportName::Http,
    });
    let mut result = crate::recording::check(path, &scenario, recording, transport, strict)?;
    result.duration_ms = started.elapsed().as_millis() as u64;
    print!("{}", report::summary(std::slice::from_ref(&result), result.duration_ms));
    Ok(if result.status == Status::Passed { 0 } else { 1 })
}
