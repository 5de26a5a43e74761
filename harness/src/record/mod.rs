//! `mcp-harness record`: capture a real session between any client and any server and turn
//! it into a scenario whose script replays the server's side and whose checks pin the
//! client's (scenarios/README.md "From a field bug to a scenario").
//!
//! - [`capture`] — what a recording holds, per connection; the capture file kept beside
//!   the scenario.
//! - [`secrets`] — redaction at capture (headers, JSON members, bearer tokens, patterns).
//! - [`stdio`] — the stdio pass-through: spawn the server, relay, record.
//! - [`http`] — the HTTP reverse proxy (Streamable HTTP, legacy SSE), streams passed through.
//! - [`scenario_file`] — the capture written as a scenario.

pub mod capture;
pub mod http;
pub mod scenario_file;
pub mod secrets;
pub mod stdio;

use crate::error::HarnessError;
use std::path::{Path, PathBuf};

/// What `record` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scenario file to write.
    pub out: PathBuf,
    /// Delays (and timeouts) are divided by this (2 = twice as fast).
    pub speed: f64,
    /// Extra regular expressions whose matches are redacted.
    pub redact_patterns: Vec<String>,
    /// Add this connection to the recording already beside `out` (a respawn).
    pub append: bool,
}

/// The scenario name `out` gives (its stem), if it is a valid one.
pub fn scenario_name(out: &Path) -> Result<String, HarnessError> {
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let valid = !stem.is_empty() && stem.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if out.extension().is_none_or(|e| e != "yaml") || !valid {
        return Err(HarnessError::RecordOptions(format!(
            "--out {}: write a .yaml file whose name is lowercase letters, digits and '-' (the scenario's name), e.g. --out scenarios/regressions/my-bug.yaml",
            out.display()
        )));
    }
    Ok(stem.to_owned())
}

/// Checks the options before anything starts, so a typo never costs a session.
pub fn check_options(opts: &Options) -> Result<(String, secrets::Secrets), HarnessError> {
    let name = scenario_name(&opts.out)?;
    if !(opts.speed.is_finite() && opts.speed > 0.0) {
        return Err(HarnessError::RecordOptions(format!(
            "--speed {}: give a positive number (2 replays delays twice as fast)",
            opts.speed
        )));
    }
    let secrets = secrets::Secrets::new(&opts.redact_patterns)?;
    Ok((name, secrets))
}

/// Writes the scenario (and the capture beside it) for `connection`, after the earlier
/// connections of the recording when appending.
pub fn write(opts: &Options, name: &str, connection: capture::ConnectionCapture) -> Result<(), HarnessError> {
    let capture_file = capture::capture_path(&opts.out);
    let mut connections = Vec::new();
    if opts.append && capture_file.exists() {
        connections = capture::read(&capture_file)?;
    }
    connections.push(connection);
    let io = |what: &Path| {
        let what = what.display().to_string();
        move |source| HarnessError::Io { context: format!("writing {what}"), source }
    };
    std::fs::write(&capture_file, capture::render(&connections)).map_err(io(&capture_file))?;
    let o = scenario_file::Options { name: name.to_owned(), speed: opts.speed };
    let text = match connections.last().map(|c| c.transport.as_str()) {
        Some("stdio") | None => scenario_file::stdio(&connections, &o),
        // One HTTP recording is one session: `--append` keeps only stdio respawns.
        _ => scenario_file::http(connections.last().unwrap_or(&Default::default()), &o),
    };
    std::fs::write(&opts.out, text).map_err(io(&opts.out))?;
    Ok(())
}

/// `record --out F -- <server command…>`: relays until the server exits, writes the
/// scenario; returns the exit code (the server's).
pub fn run_stdio(opts: &Options, command: &[String]) -> Result<i32, HarnessError> {
    let (name, secrets) = check_options(opts)?;
    if command.is_empty() {
        return Err(HarnessError::RecordOptions(
            "no server command: put it after `--`, e.g. mcp-harness record --out my-bug.yaml -- python3 server.py"
                .into(),
        ));
    }
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|source| HarnessError::Io { context: "starting the runtime".into(), source })?;
    let (mut capture, code) = runtime
        .block_on(stdio::record(command, secrets))
        .map_err(|source| HarnessError::Io { context: "recording".into(), source })?;
    // The command line may carry a credential too (`--api-key …`).
    if let Ok(mut s) = secrets::Secrets::new(&opts.redact_patterns) {
        capture.source = s.text(&capture.source);
    }
    write(opts, &name, capture)?;
    runtime.shutdown_background();
    Ok(code)
}

/// `record --out F --upstream URL --listen ADDR`: the HTTP reverse proxy, until Ctrl-C /
/// SIGTERM; prints `listening on http://ADDR` on stderr once it accepts connections.
pub fn run_http(opts: &Options, upstream: &str, listen: &str) -> Result<i32, HarnessError> {
    let (name, secrets) = check_options(opts)?;
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|source| HarnessError::Io { context: "starting the runtime".into(), source })?;
    let capture = runtime
        .block_on(http::record(upstream, listen, secrets, |addr| {
            eprintln!("mcp-harness record: listening on http://{addr}")
        }))
        .map_err(|source| HarnessError::Io { context: "recording".into(), source })?;
    write(opts, &name, capture)?;
    runtime.shutdown_background();
    Ok(0)
}
