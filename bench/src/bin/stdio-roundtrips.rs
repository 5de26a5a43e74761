//! Sequential stdio round trips per second: spawns the server command after `--`, sends
//! `--n` `tools/call` requests one at a time (each waits for its reply) and prints the rate
//! alone on stdout. `--client bundled` is mcp-transports' stdio transport (with the MCP
//! handshake when `--handshake`, as the harness's bundled target does); `--client blocking`
//! is a plain std client (write a line, read a line), the ceiling against `stdio-echo`.

use clap::{Parser, ValueEnum};
use mcp_bench::{on_worker, print_rate, time_calls, tools_call};
use mcp_transports::client::{ClientOptions, create_transport, handshake};
use mcp_transports::config::TransportKind;
use mcp_transports::{Handlers, TransportConfig};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Parser)]
struct Cli {
    /// Which client makes the round trips.
    #[arg(long, value_enum)]
    client: Client,
    /// How many round trips to time.
    #[arg(long, default_value_t = 20_000)]
    n: u64,
    /// Run the MCP handshake first (bundled only; the mock expects one, the echo does not).
    #[arg(long)]
    handshake: bool,
    /// The server command.
    #[arg(last = true, required = true)]
    server: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Client {
    /// mcp-transports' stdio transport.
    Bundled,
    /// A blocking std client: no runtime, no correlation, one line out, one line in.
    Blocking,
}

fn main() {
    let cli = Cli::parse();
    let rate = match cli.client {
        Client::Bundled => bundled(&cli),
        Client::Blocking => blocking(&cli),
    };
    print_rate("stdio-roundtrips", rate);
}

fn bundled(cli: &Cli) -> Result<f64, String> {
    let (command, args) = cli.server.split_first().ok_or("no server command")?;
    let (command, args, handshake_first, n) = (command.clone(), args.to_vec(), cli.handshake, cli.n);
    on_worker(async move {
        let config = TransportConfig {
            kind: TransportKind::Stdio,
            command,
            args,
            protocol_version: "2025-11-25".into(),
            ..Default::default()
        };
        let transport = create_transport(&config, Handlers::default()).await.map_err(|e| e.to_string())?;
        if handshake_first {
            handshake(transport.as_ref(), &ClientOptions::default()).await.map_err(|e| e.to_string())?;
        }
        let rate = time_calls(transport.as_ref(), n).await;
        transport.close().await;
        rate
    })
}

fn blocking(cli: &Cli) -> Result<f64, String> {
    let (command, args) = cli.server.split_first().ok_or("no server command")?;
    let mut child = Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    let started = Instant::now();
    for id in 1..=cli.n {
        let mut request = serde_json::to_vec(&tools_call(id)).map_err(|e| e.to_string())?;
        request.push(b'\n');
        stdin.write_all(&request).map_err(|e| e.to_string())?;
        line.clear();
        if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the server closed its stdout".into());
        }
    }
    let rate = cli.n as f64 / started.elapsed().as_secs_f64();
    drop(stdin);
    let _ = child.wait();
    Ok(rate)
}
