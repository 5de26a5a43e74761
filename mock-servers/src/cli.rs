//! The `mcp-mock` command line. All configuration comes through argv, because several SDK
//! clients give the server they spawn no environment. `mcp-harness mock …` runs the same code.
//!
//! This is the process edge: the mocks return an [`ExitReason`], and [`run`] turns it into
//! a self-signal (after the mock has flushed its record) and the exit code the binaries
//! (`src/bin/`, the harness's `main`) exit with.

use crate::error::MockError;
use crate::http::Flavour;
use crate::live::{Live, RunDir};
use crate::shutdown::{ExitReason, Shutdown};
use crate::stdio::Pipes;
use clap::{Parser, Subcommand};
use mcp_scenario::TransportName;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Scriptable mock MCP servers that replay scenario files and record the wire.
///
/// Point a real MCP host at a scenario: `mcp-mock stdio <scenario>` as the server command
/// in its configuration, or `mcp-mock serve <scenario>` and give it the printed URL; add
/// `--record FILE` and judge the recording with `mcp-harness check-record <scenario> FILE`.
///
/// Exit codes: 0 normal end (stdin EOF, script exit 0; a person's run — `serve`, or `stdio`
/// without --run-dir — stopped by SIGTERM, SIGINT or SIGHUP); the script's own `exit`
/// code; 2 bad usage or an invalid scenario; 124 the mock's own deadline expired; 128+N
/// the harness's mocks (`http`, `legacy-sse`, `stdio --run-dir`) stopped by signal N.
#[derive(Parser, Debug)]
#[command(
    name = "mcp-mock",
    version,
    after_help = "Examples:
  a host's server command, recorded:
    mcp-mock stdio /abs/scenarios/stdio/close-sequence.yaml --record /tmp/s.txt
  serve over HTTP; give a host the URL it prints:
    mcp-mock serve scenarios/http/session-id-on-initialized.yaml --port 8931
  validate scenario files:
    mcp-mock check scenarios/"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve one scenario's script on stdin/stdout: the server command of an MCP host.
    ///
    /// For a host's configuration: `{"command": "mcp-mock", "args": ["stdio", "<scenario>"]}`.
    /// Without --run-dir it is a person's run: no deadline (it ends at stdin EOF, when the
    /// host closes it, or on a signal, exit 0), one connection per process, and a note on
    /// stderr once the script has run to its end (the mock keeps answering unscripted
    /// requests with its defaults). The harness passes --scenario, --run-dir and
    /// --deadline-ms: one connection per process, and a respawned mock with the same
    /// --run-dir serves the next connection's part of the script.
    #[command(after_help = "Examples:
  mcp-mock stdio scenarios/stdio/handshake-order.yaml                  a host's server command
  mcp-mock stdio scenarios/stdio/handshake-order.yaml --record /tmp/host.jsonl
      then: mcp-harness check-record scenarios/stdio/handshake-order.yaml /tmp/host.jsonl")]
    Stdio(StdioArgs),
    /// Serve one scenario over HTTP to an MCP host that connects by URL, until stopped.
    ///
    /// The transport is the scenario's (Streamable HTTP or legacy HTTP+SSE; --transport when
    /// it lists both). Binds 127.0.0.1 (--port, default a free one), prints its URL alone
    /// on one line of stdout (`http://127.0.0.1:<port>/mcp`, legacy `…/sse`) and serves until
    /// Ctrl-C or SIGTERM, which flush the record and exit 0. No deadline unless
    /// --deadline-ms. Once a connection's script has run to its end a note says so on
    /// stderr and the mock keeps answering unscripted requests with its defaults (ping and
    /// tools/list; other methods -32601).
    #[command(after_help = "Examples:
  mcp-mock serve scenarios/http/json-reply.yaml                        prints the URL to give a host
  mcp-mock serve scenarios/http/session-capture-and-resend.yaml --port 9000 --record /tmp/h.jsonl")]
    Serve(ServeArgs),
    /// Serve one scenario over Streamable HTTP on 127.0.0.1, for the harness. Prints exactly
    /// one line, `listening http://127.0.0.1:<port>/mcp`, once bound; serves until killed
    /// (SIGTERM flushes the record and exits 143) or the deadline.
    #[command(after_help = "Examples (what the harness runs; a person wants `serve`):
  mcp-mock http --scenario scenarios/http/json-reply.yaml --run-dir /tmp/run --deadline-ms 10000")]
    Http(HttpArgs),
    /// Serve one scenario over legacy HTTP+SSE (2024-11-05) on 127.0.0.1, for the harness:
    /// a GET stream that sends the `endpoint` event, and the POST endpoint. Prints
    /// `listening http://127.0.0.1:<port>/sse` once bound.
    #[command(after_help = "Examples (what the harness runs; a person wants `serve`):
  mcp-mock legacy-sse --scenario scenarios/legacy-sse/endpoint-relative-path.yaml --run-dir /tmp/run")]
    LegacySse(HttpArgs),
    /// Load and validate scenario files; print each error as file:line:column: message.
    #[command(after_help = "Examples:
  mcp-mock check scenarios/stdio/*.yaml")]
    Check {
        /// Scenario files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format.
    #[command(after_help = "Examples:
  mcp-mock schema > scenarios/schema.json")]
    Schema,
}

/// Arguments of the stdio server.
#[derive(clap::Args, Debug)]
struct StdioArgs {
    /// The scenario file.
    #[arg(value_name = "SCENARIO", required_unless_present = "scenario", conflicts_with = "scenario")]
    file: Option<PathBuf>,
    /// The scenario file (the harness's spelling of the positional SCENARIO).
    #[arg(long, value_name = "SCENARIO")]
    scenario: Option<PathBuf>,
    /// Where to write the wire record (conn-<n>.jsonl); created if missing. Without it the
    /// record goes to FILE.wire/ of --record, or to a temp dir removed at exit.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    #[command(flatten)]
    record: RecordArgs,
    /// Exit on our own after this many ms even if nobody closes us (the harness passes one,
    /// so a leaked mock never outlives its run for long). Default: no deadline.
    #[arg(long)]
    deadline_ms: Option<u64>,
}

/// `--record`, shared by `stdio` and `serve`.
#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// Keep FILE rendered as the wire transcript, in the snapshot rendering (the text a
    /// .snap holds, redacted alike), rewritten whole after every event; the structured
    /// record goes beside it in FILE.wire/, for `mcp-harness check-record <scenario> FILE`.
    /// Each start of the mock begins a new recording.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
}

/// The HTTP transports `serve` can pick.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum HttpTransport {
    /// Streamable HTTP (`…/mcp`).
    Http,
    /// Legacy HTTP+SSE, 2024-11-05 (`…/sse`).
    LegacySse,
}

/// Arguments of `serve`.
#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// The scenario file.
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// Which of the scenario's HTTP transports to serve, when it lists both.
    #[arg(long, value_enum)]
    transport: Option<HttpTransport>,
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    #[command(flatten)]
    record: RecordArgs,
    /// Where to write the wire record (conn-<n>.jsonl); created if missing. Without it the
    /// record goes to FILE.wire/ of --record, or to a temp dir removed at exit.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Exit on our own after this many ms (exit 124). Default: serve until stopped.
    #[arg(long)]
    deadline_ms: Option<u64>,
    /// Worker threads (default: the number of cores, at most 4).
    #[arg(long)]
    threads: Option<usize>,
}

/// Arguments of the HTTP servers.
#[derive(clap::Args, Debug)]
struct HttpArgs {
    /// The scenario file.
    #[arg(long)]
    scenario: PathBuf,
    /// Where to write the wire record (conn-<n>.jsonl); created if missing.
    #[arg(long)]
    run_dir: PathBuf,
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Exit on our own after this many ms, so a leaked mock never outlives its run for long.
    #[arg(long, default_value_t = 30_000)]
    deadline_ms: u64,
    /// Worker threads (default: the number of cores, at most 4).
    #[arg(long)]
    threads: Option<usize>,
}

/// Who runs an HTTP mock, and so how it announces itself and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// The harness: `listening <url>`, exit 128+N on a signal.
    Harness,
    /// A person (`serve`): the URL alone, notes on stderr, exit 0 when stopped.
    Person,
}

/// One HTTP mock to start, whoever asked for it.
struct HttpServe {
    scenario: PathBuf,
    run_dir: Option<PathBuf>,
    record: Option<PathBuf>,
    port: u16,
    deadline: Option<Duration>,
    threads: Option<usize>,
    runner: Runner,
}

impl HttpServe {
    fn harness(args: HttpArgs) -> Self {
        HttpServe {
            scenario: args.scenario,
            run_dir: Some(args.run_dir),
            record: None,
            port: args.port,
            deadline: Some(Duration::from_millis(args.deadline_ms)),
            threads: args.threads,
            runner: Runner::Harness,
        }
    }
}

fn serve_http(args: HttpServe, flavour: Option<Flavour>) -> i32 {
    let scenario = match crate::load::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let flavour = match flavour.map(Ok).unwrap_or_else(|| pick_flavour(&scenario)) {
        Ok(f) => f,
        Err(why) => {
            eprintln!("mcp-mock: {}: {why}", args.scenario.display());
            return 2;
        }
    };
    let wanted = flavour.transport();
    if !scenario.transport.to_vec().contains(&wanted) {
        eprintln!(
            "mcp-mock: {}: the scenario does not run over {} (its `transport` field lists {:?}); serve it with the matching subcommand",
            args.scenario.display(),
            wanted.as_str(),
            scenario.transport.to_vec().iter().map(|t| t.as_str()).collect::<Vec<_>>()
        );
        return 2;
    }
    let run_dir = match RunDir::new(args.run_dir.as_deref(), args.record.as_deref()) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4))
        .max(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&MockError::io("starting the runtime", e)),
    };
    let person = args.runner == Runner::Person;
    let served = runtime.block_on(async {
        // Signal handlers go in before the URL is printed: whoever reads it may stop us at once.
        let shutdown = Shutdown::process(args.deadline);
        let addr = format!("127.0.0.1:{}", args.port);
        let listener = TcpListener::bind(&addr).await.map_err(|source| MockError::Bind { addr, source })?;
        let server = crate::http::Server::start(&scenario, run_dir.path(), flavour, listener)?;
        let live = Live::new(&scenario, wanted, run_dir.path(), args.record.as_deref(), person)?;
        let url = format!("http://127.0.0.1:{}{}", server.port(), flavour.path());
        let mut out = std::io::stdout().lock();
        match args.runner {
            Runner::Harness => writeln!(out, "listening {url}"),
            Runner::Person => writeln!(out, "{url}"),
        }
        .and_then(|()| out.flush())
        .map_err(|e| MockError::io("writing the listening line", e))?;
        drop(out);
        if person {
            eprintln!(
                "mcp-mock: serving {} over {} at {url}{}; Ctrl-C to stop",
                args.scenario.display(),
                wanted.as_str(),
                recording_note(args.record.as_deref())
            );
        }
        live_served(live, server.serve(shutdown)).await
    });
    finish(runtime, served, person)
}

fn serve_stdio(args: StdioArgs) -> i32 {
    let Some(path) = args.file.or(args.scenario) else {
        eprintln!("mcp-mock: stdio: give the scenario file (mcp-mock stdio <scenario>)");
        return 2;
    };
    let scenario = match crate::load::load(&path) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let person = args.run_dir.is_none();
    let record = args.record.record;
    let run_dir = match RunDir::new(args.run_dir.as_deref(), record.as_deref()) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&MockError::io("starting the runtime", e)),
    };
    let served = runtime.block_on(async {
        let shutdown = Shutdown::process(args.deadline_ms.map(Duration::from_millis));
        let live = Live::new(&scenario, TransportName::Stdio, run_dir.path(), record.as_deref(), person)?;
        if person {
            eprintln!("mcp-mock: serving {} on stdio{}", path.display(), recording_note(record.as_deref()));
        }
        live_served(live, crate::stdio::serve(&scenario, run_dir.path(), Pipes::process(), shutdown)).await
    });
    finish(runtime, served, person)
}

/// `; recording to FILE (…)`, or nothing.
fn recording_note(record: Option<&std::path::Path>) -> String {
    match record {
        Some(file) => format!(
            "; recording to {} (check it with `mcp-harness check-record <scenario> {}`)",
            file.display(),
            file.display()
        ),
        None => String::new(),
    }
}

/// Serves with the live rendering kept current beside it, and renders once more after
/// the mock has flushed its record, so the recording ends whole.
async fn live_served(
    live: Live,
    served: impl Future<Output = Result<ExitReason, MockError>>,
) -> Result<ExitReason, MockError> {
    if live.is_idle() {
        return served.await;
    }
    let live = Arc::new(live);
    let watcher = tokio::spawn(live.clone().watch());
    let reason = served.await;
    watcher.abort();
    live.refresh()?;
    reason
}

/// The HTTP transport a `serve` of this scenario speaks: its only HTTP one.
fn pick_flavour(scenario: &mcp_scenario::Scenario) -> Result<Flavour, MockError> {
    let listed = scenario.transport.to_vec();
    let http: Vec<Flavour> =
        [Flavour::StreamableHttp, Flavour::LegacySse].into_iter().filter(|f| listed.contains(&f.transport())).collect();
    match http.as_slice() {
        [one] => Ok(*one),
        [] => Err(MockError::StdioOnly),
        _ => Err(MockError::TwoHttpTransports),
    }
}

/// The process edge: drops the runtime without waiting for its tasks (the stdin reader is
/// a blocking read that never returns by itself), raises the signal the mock ended with,
/// if any, and returns the exit code.
/// A person's run that was stopped (Ctrl-C, the host's SIGTERM) ends normally: exit 0.
fn finish(runtime: tokio::runtime::Runtime, served: Result<ExitReason, MockError>, person: bool) -> i32 {
    runtime.shutdown_background();
    let reason = match served {
        Ok(reason) => reason,
        Err(e) => return fail(&e),
    };
    if person && reason.stopped() {
        return 0;
    }
    if let Some(sig) = reason.signal {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), sig);
        // A signal the process catches (SIGTERM has a handler) does not end it: exit then.
        std::thread::sleep(Duration::from_millis(100));
    }
    reason.code
}

/// The mock's own log lines (a record file it cannot write, a failed accept) go to stderr —
/// for a host's stdio server, its server log — at `warn` and above, or as `MCP_MOCK_LOG`
/// says (an `EnvFilter`, e.g. `MCP_MOCK_LOG=debug`). Never to stdout: that is the wire.
fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCP_MOCK_LOG").unwrap_or_else(|_| "warn".into());
    // Already set (the mock run inside another program's process): that one's stays.
    use std::io::IsTerminal as _;
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour).try_init();
}

/// Runs the CLI with the given arguments (the first is the program name) and returns the
/// process exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    log_to_stderr();
    match cli.command {
        Command::Stdio(args) => serve_stdio(args),
        Command::Serve(args) => serve_http(
            HttpServe {
                scenario: args.scenario,
                run_dir: args.run_dir,
                record: args.record.record,
                port: args.port,
                deadline: args.deadline_ms.map(Duration::from_millis),
                threads: args.threads,
                runner: Runner::Person,
            },
            args.transport.map(|t| match t {
                HttpTransport::Http => Flavour::StreamableHttp,
                HttpTransport::LegacySse => Flavour::LegacySse,
            }),
        ),
        Command::Http(args) => serve_http(HttpServe::harness(args), Some(Flavour::StreamableHttp)),
        Command::LegacySse(args) => serve_http(HttpServe::harness(args), Some(Flavour::LegacySse)),
        Command::Check { paths } => {
            let mut code = 0;
            for p in paths {
                match crate::load::load(&p) {
                    Ok(_) => println!("ok {}", p.display()),
                    Err(e) => code = fail(&e),
                }
            }
            code
        }
        Command::Schema => {
            println!("{}", mcp_scenario::schema::schema_json());
            0
        }
    }
}

fn fail(e: &MockError) -> i32 {
    eprintln!("mcp-mock: {e}");
    2
}
