//! Sequential Streamable HTTP round trips per second of the bundled client: `--n`
//! `tools/call` POSTs to `--url`, one at a time, and the rate alone on stdout. No
//! handshake: the peers (the mock's bench scenario, bare hyper) keep no session.

use clap::Parser;
use mcp_bench::{on_worker, print_rate, time_calls};
use mcp_transports::client::create_transport;
use mcp_transports::config::TransportKind;
use mcp_transports::{Handlers, TransportConfig};

#[derive(Parser)]
struct Cli {
    /// The server's MCP endpoint.
    #[arg(long)]
    url: String,
    /// How many round trips to time.
    #[arg(long, default_value_t = 20_000)]
    n: u64,
}

fn main() {
    let cli = Cli::parse();
    print_rate("http-roundtrips", run(&cli));
}

fn run(cli: &Cli) -> Result<f64, String> {
    let (url, n) = (cli.url.clone(), cli.n);
    on_worker(async move {
        let config = TransportConfig {
            kind: TransportKind::Http,
            url,
            protocol_version: "2025-11-25".into(),
            ..Default::default()
        };
        let transport = create_transport(&config, Handlers::default()).await.map_err(|e| e.to_string())?;
        let rate = time_calls(transport.as_ref(), n).await;
        transport.close().await;
        rate
    })
}
