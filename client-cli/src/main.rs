//! `mcp-client`: a thin binary over the `mcp_client` library. See `mcp-client --help`.

use clap::Parser;
use mcp_client::authorization::{self, Identity};
use mcp_client::conformance::{self, Environment};
use mcp_client::revision::DEFAULT_REVISION;
use mcp_client::server::{ConnectOptions, Server};
use mcp_client::session::Session;
use mcp_client::{ClientError, exercise};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

const AFTER_HELP: &str = "Examples:
  mcp-client --url http://127.0.0.1:8080/mcp tools/list
  mcp-client --url http://127.0.0.1:8080/mcp --protocol-version 2026-07-28 tools/call '{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}'
  mcp-client tools/list -- python3 server.py --verbose

Conformance mode: when MCP_CONFORMANCE_SCENARIO is set, as the official MCP conformance
suite's runner sets it, the only argument is the scenario server's URL (the runner appends
it last): `mcp-client [--timeout-ms MS] <URL>`. The client then speaks
MCP_CONFORMANCE_PROTOCOL_VERSION (stateful up to 2025-11-25, stateless 2026-07-28; default
2025-11-25), reads MCP_CONFORMANCE_CONTEXT when the scenario needs it, and takes the steps
the scenario expects of a client (see `make conformance` in README.md).

In conformance mode the client always has an OAuth client: MCP_CONFORMANCE_CONTEXT's
client_id, client_secret and issuer are its pre-registered credentials, its
client_metadata_url (default https://conformance-test.local/client-metadata.json, the
suite's test client identity) its Client ID Metadata Document URL.

Logs go to stderr (MCP_CLIENT_LOG, e.g. `info` or `debug`; default `warn`, `info` in
conformance mode). MCP_TIMEOUT_MS overrides every request timeout.

Exit codes:
  0  the method (or every step of the scenario) succeeded; the result is printed on stdout
  1  connecting, the handshake or the request failed (the error is printed on stderr)
  2  bad usage: no server, two servers, params that are not a JSON object, OAuth options
     for a stdio server";

/// Where a pre-registered client's secret may come from instead of the command line.
const CLIENT_SECRET_ENV: &str = "MCP_CLIENT_SECRET";

/// Sends one MCP method to a server over the bundled transports and prints its result.
#[derive(Parser, Debug)]
#[command(name = "mcp-client", version, after_help = AFTER_HELP)]
struct Cli {
    /// The method to send (e.g. tools/list, tools/call, resources/read, ping).
    method: String,
    /// Its params, a JSON object (default `{}`).
    params: Option<String>,
    /// A Streamable HTTP server at this URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// The URL is a legacy HTTP+SSE (2024-11-05) endpoint.
    #[arg(long, requires = "url")]
    sse: bool,
    /// The revision to speak: 2024-11-05 … 2025-11-25 (stateful: initialize first) or
    /// 2026-07-28 (stateless). Default 2025-11-25 (2024-11-05 with --sse).
    #[arg(long, value_name = "V")]
    protocol_version: Option<String>,
    /// An extra HTTP header, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Per-request timeout in milliseconds (0 disables; MCP_TIMEOUT_MS wins).
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Authorize with OAuth when the server answers 401 (HTTP only): discovery, then the
    /// first registration that applies (--client-id, --client-metadata-url, dynamic
    /// registration), authorization code with PKCE, the token. The authorization step
    /// follows the authorization server's redirect without a browser, so it suits headless
    /// authorization servers only. Implied by the other OAuth options.
    #[arg(long, help_heading = "OAuth")]
    oauth: bool,
    /// A pre-registered OAuth client id.
    #[arg(long, value_name = "ID", help_heading = "OAuth")]
    client_id: Option<String>,
    /// The pre-registered client's secret (better: MCP_CLIENT_SECRET, which keeps it out of
    /// the process list). Sent the way the authorization server's
    /// token_endpoint_auth_methods_supported allows (Basic, in the body, or not at all).
    #[arg(long, value_name = "SECRET", requires = "client_id", help_heading = "OAuth")]
    client_secret: Option<String>,
    /// The issuer that pre-registered --client-id: the client id is used at that
    /// authorization server only.
    #[arg(long, value_name = "URL", requires = "client_id", help_heading = "OAuth")]
    client_issuer: Option<String>,
    /// A Client ID Metadata Document URL (https, with a path), the client id where the
    /// authorization server accepts those (client_id_metadata_document_supported).
    #[arg(long, value_name = "URL", help_heading = "OAuth")]
    client_metadata_url: Option<String>,
    /// A scope to ask for when neither the server's 401 nor its metadata names any
    /// (repeatable, or several separated by spaces).
    #[arg(long = "scope", value_name = "SCOPE", help_heading = "OAuth")]
    scopes: Vec<String>,
    /// A stdio server: the command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The conformance suite's invocation: `mcp-client <url>` (see `mcp-client --help`).
#[derive(Parser, Debug)]
#[command(name = "mcp-client (conformance mode)", version)]
struct ConformanceCli {
    /// The scenario server's URL.
    url: String,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
}

/// Conformance runs end within this, whatever the server does (the suite's own default
/// limit is 30 s; ours ends first so the client reports why).
const CONFORMANCE_DEADLINE_MS: u64 = 20_000;
/// Conformance requests time out sooner than the transports' default.
const CONFORMANCE_REQUEST_TIMEOUT_MS: u64 = 10_000;

fn parse_header(raw: &str) -> Result<(String, String), ClientError> {
    match raw.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_owned(), value.trim().to_owned())),
        _ => Err(ClientError::HeaderNotNameValue { raw: raw.to_owned() }),
    }
}

fn init_logging(default: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MCP_CLIENT_LOG").unwrap_or_else(|_| default.into()),
        )
        .with_writer(std::io::stderr)
        .init();
}

fn main() {
    let environment = match Environment::from_env() {
        Ok(environment) => environment,
        Err(e) => {
            eprintln!("mcp-client: {e}");
            std::process::exit(2);
        }
    };
    let code = match environment {
        Some(environment) => {
            let cli = ConformanceCli::parse();
            init_logging("info,mcp_transports=warn");
            runtime().block_on(conformance_run(cli, environment))
        }
        None => {
            let cli = Cli::parse();
            init_logging("warn");
            match manual_options(&cli) {
                Ok((options, params)) => runtime().block_on(manual_run(options, &cli.method, params)),
                Err(message) => {
                    eprintln!("mcp-client: {message}\n\nFor more information, try '--help'.");
                    2
                }
            }
        }
    };
    std::process::exit(code);
}

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-client: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    }
}

/// The session options and params of a by-hand call, or why the arguments do not fit.
fn manual_options(cli: &Cli) -> Result<(ConnectOptions, Value), ClientError> {
    let server = match (&cli.url, cli.command.split_first()) {
        (Some(url), None) if cli.sse => Server::LegacySse(url.clone()),
        (Some(url), None) => Server::Http(url.clone()),
        (None, Some((program, args))) => Server::Command { program: program.clone(), args: args.to_vec() },
        (None, None) => return Err(ClientError::NoServer),
        (Some(_), Some(_)) => return Err(ClientError::TwoServers),
    };
    let default_revision = if cli.sse { "2024-11-05" } else { DEFAULT_REVISION };
    let mut options = ConnectOptions::new(server, cli.protocol_version.as_deref().unwrap_or(default_revision));
    options.headers = cli.headers.iter().cloned().collect::<BTreeMap<_, _>>();
    options.timeout_ms = cli.timeout_ms;
    if let Some(identity) = oauth_identity(cli)? {
        if matches!(options.server, Server::Command { .. }) {
            return Err(ClientError::OAuthOverStdio);
        }
        let timeout = cli.timeout_ms.filter(|&ms| ms > 0).map(Duration::from_millis);
        options.oauth = Some(authorization::oauth_config(&identity, timeout));
    }
    let params = match &cli.params {
        None => Value::Object(Default::default()),
        Some(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err(ClientError::BadParams { method: cli.method.clone(), reason: "not an object".into() }),
            Err(e) => return Err(ClientError::BadParams { method: cli.method.clone(), reason: e.to_string() }),
        },
    };
    Ok((options, params))
}

/// The OAuth identity the options give, `None` when no OAuth option is set.
fn oauth_identity(cli: &Cli) -> Result<Option<Identity>, ClientError> {
    let secret_env = std::env::var(CLIENT_SECRET_ENV).ok().filter(|s| !s.is_empty());
    if secret_env.is_some() && cli.client_id.is_none() {
        return Err(ClientError::SecretWithoutClientId { env: CLIENT_SECRET_ENV });
    }
    let identity = Identity {
        client_id: cli.client_id.clone(),
        client_secret: cli.client_secret.clone().or(secret_env),
        client_issuer: cli.client_issuer.clone(),
        client_metadata_url: cli.client_metadata_url.clone(),
        scopes: cli.scopes.iter().flat_map(|s| s.split_whitespace()).map(str::to_owned).collect(),
    };
    Ok((cli.oauth || identity != Identity::default()).then_some(identity))
}

async fn manual_run(options: ConnectOptions, method: &str, params: Value) -> i32 {
    let session = match Session::open(options).await {
        Ok(session) => session,
        Err(e) => {
            eprintln!("mcp-client: {e}");
            return 1;
        }
    };
    let outcome = session.request(method, params).await;
    session.close().await;
    match outcome {
        Ok(result) => {
            println!("{}", serde_json::to_string_pretty(&result).unwrap_or_else(|_| result.to_string()));
            0
        }
        Err(e) => {
            eprintln!("mcp-client: {e}");
            1
        }
    }
}

async fn conformance_run(cli: ConformanceCli, environment: Environment) -> i32 {
    let revision = environment.protocol_version.clone().unwrap_or_else(|| DEFAULT_REVISION.to_owned());
    let plan = conformance::plan_for(&environment.scenario);
    tracing::info!(scenario = %plan.scenario, %revision, steps = ?plan.steps, dedicated = plan.dedicated, "conformance run");
    let (identity, unread) = match authorization::from_context(environment.context.as_ref()) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("mcp-client: {}: {e}", plan.scenario);
            return 2;
        }
    };
    if !unread.is_empty() {
        tracing::warn!(members = ?unread, "MCP_CONFORMANCE_CONTEXT members this client does not use (unsupported)");
    }
    let mut options = ConnectOptions::new(Server::Http(cli.url), revision);
    options.timeout_ms = Some(cli.timeout_ms.unwrap_or(CONFORMANCE_REQUEST_TIMEOUT_MS));
    let timeout = options.timeout_ms.filter(|&ms| ms > 0).map(Duration::from_millis);
    options.oauth = Some(authorization::oauth_config(&identity, timeout));
    let run = async {
        let session = Session::open(options).await?;
        let outcome = exercise::run(&session, &plan, environment.context.as_ref()).await;
        session.close().await;
        outcome
    };
    let outcome = match tokio::time::timeout(Duration::from_millis(CONFORMANCE_DEADLINE_MS), run).await {
        Ok(outcome) => outcome,
        Err(_) => Err(ClientError::Deadline(CONFORMANCE_DEADLINE_MS)),
    };
    match outcome {
        Ok(()) => {
            tracing::info!(scenario = %plan.scenario, "done");
            0
        }
        Err(e) => {
            eprintln!("mcp-client: {}: {e}", plan.scenario);
            1
        }
    }
}
