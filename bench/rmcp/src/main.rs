//! rmcp's client, sequential stdio round trips per second: spawns the server command after
//! `--` through `TokioChildProcess`, runs rmcp's handshake, then `--n` `call_tool`s one at a
//! time (the same ~120-byte request as `stdio-roundtrips`), and prints the rate alone on
//! stdout.

use clap::Parser;
use rmcp::ServiceExt;
use rmcp::model::ClientRequest;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use std::time::Instant;

#[derive(Parser)]
struct Cli {
    /// How many round trips to time.
    #[arg(long, default_value_t = 20_000)]
    n: u64,
    /// The server command.
    #[arg(last = true, required = true)]
    server: Vec<String>,
}

#[tokio::main]
async fn main() {
    match run(Cli::parse()).await {
        Ok(rate) => println!("{rate:.0}"),
        Err(e) => {
            eprintln!("stdio-roundtrips-rmcp: {e}");
            std::process::exit(1);
        }
    }
}

async fn run(cli: Cli) -> Result<f64, String> {
    let (program, args) = cli.server.split_first().ok_or("no server command")?;
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let transport = TokioChildProcess::new(command).map_err(|e| e.to_string())?;
    let client = ().serve(transport).await.map_err(|e| e.to_string())?;
    // Through rmcp's own request type, as an application's call_tool would build it.
    let request =
        json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "the quick brown fox jumps"}}});
    let ClientRequest::CallToolRequest(call) = serde_json::from_value(request).map_err(|e| e.to_string())? else {
        return Err("rmcp did not read the request as tools/call".into());
    };
    let started = Instant::now();
    for _ in 0..cli.n {
        client.call_tool(call.params.clone()).await.map_err(|e| e.to_string())?;
    }
    let rate = cli.n as f64 / started.elapsed().as_secs_f64();
    let _ = client.cancel().await;
    Ok(rate)
}
