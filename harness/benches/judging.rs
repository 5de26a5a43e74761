//! How long judging one run takes when its client sent very many messages: the record read
//! once, every check and always-on rule, whether the run earned its verdict, the snapshot
//! rendering and the redacted wire ([`mcp_harness::runner::judge`], what ends every run).
//! Judging must be linear in the recorded events: a client that re-sent one request 5,561
//! times within a 5 s run deadline once took 23 s to judge (issue 41).
//!
//! The record is generated in the shape the stdio mock writes for the library's
//! `stdio/late-response-dropped` (its handshake, script marks, labelled request, late reply,
//! the closing `tools/list`), with a client that re-sends the timed-out `tools/call` with
//! fresh ids in between: the mock answers every other re-send (unscripted, -32601), the rest
//! stay in flight to the end, and every fourth message cancels the unanswered one before it.
//!
//! `cargo bench -p mcp-harness --bench judging [-- --messages N --rounds R]` (defaults:
//! 100 000 client messages, 5 rounds); `make bench` runs it as its `judging` section. Prints
//! each round's time and the median. A figure, never a test: nothing here fails on speed.

use mcp_harness::Target;
use mcp_harness::runner::{self, RunConfig};
use mcp_results::{ClientOutcome, DiagnosticCounters, StepOutcome, StepStatus};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::{Value, json};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let (messages, rounds) = arguments();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/stdio/late-response-dropped.yaml");
    let scenario = mcp_harness::load(&path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail(&format!("a temp dir: {e}")));
    let events = write_record(dir.path(), messages).unwrap_or_else(|e| fail(&format!("writing the record: {e}")));
    let config = RunConfig::new(Target::bundled(None), Vec::new());
    let job = runner::jobs(vec![(path, scenario)], &config.target).remove(0);
    println!("judging a record of {messages} client messages ({events} events) against {}", job.scenario.name);
    let mut times = Vec::new();
    for round in 1..=rounds {
        let started = Instant::now();
        let result = runner::judge(&job, &config, outcome(), dir.path());
        let ms = started.elapsed().as_millis();
        println!(
            "round {round}: {ms} ms ({:?}; {} failures, {} warnings; transcript {} bytes)",
            result.status,
            result.failures.len(),
            result.warnings.len(),
            result.transcript.len()
        );
        times.push(ms);
    }
    times.sort_unstable();
    if let Some(median) = times.get(times.len() / 2) {
        println!("judging median: {median} ms for {messages} client messages");
    }
}

/// `--messages N` and `--rounds R`; anything else (cargo's own `--bench`) is ignored.
fn arguments() -> (u64, usize) {
    let (mut messages, mut rounds) = (100_000, 5);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |what: &str| {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail(&format!("{what} takes a number")))
        };
        match arg.as_str() {
            "--messages" => messages = number("--messages"),
            "--rounds" => rounds = number("--rounds") as usize,
            _ => {}
        }
    }
    (messages, rounds)
}

fn fail(why: &str) -> ! {
    eprintln!("judging bench: {why}");
    std::process::exit(2)
}

/// What the bundled client reports for the scenario's plan: connected, the call timed out,
/// the closing `tools/list` answered.
fn outcome() -> ClientOutcome {
    let step = |step: usize, what: &str, status, result: Option<Value>, error: Option<&str>| StepOutcome {
        step,
        what: what.into(),
        status,
        result,
        error: error.map(String::from),
        elapsed_ms: 1,
    };
    ClientOutcome {
        steps: vec![
            step(1, "connect", StepStatus::Ok, None, None),
            step(2, "request tools/call", StepStatus::Error, None, Some("Request timeout after 50ms")),
            step(3, "request tools/list", StepStatus::Ok, Some(json!({"tools": []})), None),
        ],
        diagnostics: Some(DiagnosticCounters { late_responses: 1, ..DiagnosticCounters::default() }),
        ..ClientOutcome::default()
    }
}

/// Writes `conn-1.jsonl` into `dir` (see the module docs); returns how many events it holds.
fn write_record(dir: &Path, messages: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::new(std::fs::File::create(dir.join("conn-1.jsonl"))?);
    let mut written = 0u64;
    let mut t_us = 0u64;
    let mut put = |e: WireEvent| -> std::io::Result<()> {
        serde_json::to_writer(&mut out, &e)?;
        out.write_all(b"\n")?;
        written += 1;
        Ok(())
    };
    let mut tick = || {
        t_us += 20;
        t_us
    };
    let from_client = |t_us, message: Value| WireEvent::FromClient {
        t_us,
        bytes: Recorded::of(message.to_string().as_bytes()),
        json: Some(message),
        terminated: true,
    };
    let to_client = |t_us, message: Value, why: &str| WireEvent::ToClient {
        t_us,
        bytes: Recorded::of(format!("{message}\n").as_bytes()),
        why: why.into(),
    };
    let script =
        |t_us, reached, finished| WireEvent::Script { t_us, reached, total: 6, finished, output_follows: false };
    put(WireEvent::Started { pid: 1, stderr_shared: true, origin_unix_us: Some(1_700_000_000_000_000) })?;
    put(from_client(
        tick(),
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "judging-bench", "version": "1"}}}),
    ))?;
    put(script(tick(), 1, false))?;
    put(to_client(
        tick(),
        json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcp-mock", "version": "1.0.0"}}}),
        "reply initialize",
    ))?;
    put(from_client(tick(), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})))?;
    let call = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
    put(from_client(tick(), call(1)))?;
    put(script(tick(), 2, false))?;
    put(WireEvent::Labelled { label: "call".into(), id: json!(1), method: "tools/call".into() })?;
    put(script(tick(), 3, false))?;
    let cancel = |id: u64| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "timeout"}});
    put(from_client(tick(), cancel(1)))?;
    // The re-sends: ids from 3 (2 is the closing tools/list's).
    for i in 1..=messages.saturating_sub(4) {
        let id = i + 2;
        if i % 4 == 0 {
            put(from_client(tick(), cancel(id - 1)))?;
        } else {
            put(from_client(tick(), call(id)))?;
            if i % 2 == 0 {
                let unscripted = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                    "message": "Method not found: tools/call (unscripted)"}});
                put(to_client(tick(), unscripted, "auto -32601"))?;
            }
        }
    }
    put(script(tick(), 4, false))?;
    put(to_client(
        tick(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "too late"}]}}),
        "reply",
    ))?;
    put(script(tick(), 5, false))?;
    put(from_client(tick(), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})))?;
    put(WireEvent::Script { t_us: tick(), reached: 6, total: 6, finished: true, output_follows: true })?;
    put(to_client(tick(), json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}), "reply"))?;
    put(script(tick(), 6, true))?;
    put(WireEvent::StdinEof { t_us: tick(), parent_exiting: false })?;
    put(WireEvent::Exit { t_us: tick(), code: Some(0), signal: None, why: "stdin EOF".into() })?;
    out.flush()?;
    Ok(written)
}
