//! What the `make bench` programs share: the one request they all send, the one reply the
//! bare peers give, and reading the process's memory. The programs print figures; `bench/run.sh`
//! repeats them, interleaves the contenders and takes medians.
//!
//! # Layout
//!
//! - this module — [`tools_call`], [`reply_to`], [`rss_kib`], [`listening`], [`runtime`],
//!   [`time_calls`], [`print_rate`].
//! - `src/bin/` — one program per thing measured, each named after it:
//!   `stdio-roundtrips` (the bundled client or a blocking std client over stdio),
//!   `stdio-echo` (the JSONL echo: the ceiling), `stdio-recording-floor` (the least a
//!   recording server does: the mock's floor), `http-roundtrips` (the bundled Streamable
//!   HTTP client), `http-bare-hyper` and `http-wiremock` (the peers the HTTP mock is held
//!   against), `hostile-input` (a 1 GiB line / SSE event, and the client's peak RSS).

use serde_json::{Value, json};

/// The arguments of the benchmark call, chosen so that the request line is ~120 bytes.
pub fn tools_call_params() -> Value {
    json!({"name": "echo", "arguments": {"text": "the quick brown fox jumps"}})
}

/// The `tools/call` request every stdio and HTTP round trip sends (~120 bytes with its id).
pub fn tools_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": tools_call_params()})
}

/// The reply the bare peers (hyper, wiremock) give to a request body: a `tools/call` result
/// carrying the request's id, the same work (parse, answer with the id) the mock does.
pub fn reply_to(body: &[u8]) -> Vec<u8> {
    let id = serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get("id").cloned()).unwrap_or(Value::Null);
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}});
    serde_json::to_vec(&reply).unwrap_or_default()
}

/// A line of `/proc/self/status` in KiB: `VmRSS` (now) or `VmHWM` (peak).
pub fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

/// Announces a bound server the way the mock does (`listening <url>`, one line, flushed),
/// so `bench/run.sh` starts every HTTP peer alike.
pub fn listening(url: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "listening {url}");
    let _ = out.flush();
}

/// The runtime the HTTP peers serve on: as many workers as the HTTP mock's (`mcp-mock`
/// defaults to the number of cores, at most 4), so no contender gets more threads.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    tokio::runtime::Builder::new_multi_thread().worker_threads(cores.min(4)).enable_all().build()
}

/// Runs a round-trip client on a fresh runtime's worker, as the harness runs each scenario
/// (its runner spawns them): a future under `block_on` lives on the main thread, so every
/// wake-up would cross threads.
pub fn on_worker<F>(client: F) -> Result<f64, String>
where
    F: std::future::Future<Output = Result<f64, String>> + Send + 'static,
{
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let run = runtime.spawn(client);
    runtime.block_on(run).map_err(|e| e.to_string())?
}

/// Times `n` sequential `tools/call` round trips through `transport` (each waits for its
/// reply); any error ends the run. Returns round trips per second.
pub async fn time_calls(transport: &dyn mcp_transports::Transport, n: u64) -> Result<f64, String> {
    let started = std::time::Instant::now();
    for _ in 0..n {
        transport
            .request("tools/call", Some(tools_call_params()), mcp_transports::RequestOptions::default())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// Prints a rate alone on stdout (what `bench/run.sh` reads), or the error on stderr and
/// exits 1.
pub fn print_rate(program: &str, rate: Result<f64, String>) {
    match rate {
        Ok(rate) => println!("{rate:.0}"),
        Err(e) => {
            eprintln!("{program}: {e}");
            std::process::exit(1);
        }
    }
}
