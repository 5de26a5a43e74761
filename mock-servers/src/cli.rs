//! The `mcp-mock` command line. All configuration comes through argv, because several SDK
//! clients give the server they spawn no environment. `mcp-harness mock …` runs the same code.
//!
//! This is the process edge: the mocks return an [`ExitReason`], and [`run`] turns it into
//! a self-signal (after the mock has flushed its record) and the exit code the binaries
//! (`src/bin/`, the harness's `main`) exit with.

use crate::error::MockError;
use crate::http::Flavour;
use crate::shutdown::{ExitReason, Shutdown};
use crate::stdio::Pipes;
use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::TcpListener;

/// Scriptable mock MCP servers that replay scenario files and record the wire.
///
/// Exit codes: 0 normal end (stdin EOF, script exit 0); the script's own `exit` code;
/// 2 bad usage or an invalid scenario; 124 the mock's own deadline expired; 128+N killed
/// by signal N.
#[derive(Parser, Debug)]
#[command(name = "mcp-mock", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve one scenario's script on stdin/stdout (one connection per process; a respawned
    /// mock with the same --run-dir serves the next connection's part of the script).
    Stdio {
        /// The scenario file.
        #[arg(long)]
        scenario: PathBuf,
        /// Where to write the wire record (conn-<n>.jsonl); created if missing.
        #[arg(long)]
        run_dir: PathBuf,
        /// Exit on our own after this many ms even if nobody closes us, so a leaked mock
        /// never outlives its run for long.
        #[arg(long, default_value_t = 30_000)]
        deadline_ms: u64,
    },
    /// Serve one scenario over Streamable HTTP on 127.0.0.1. Prints exactly one line,
    /// `listening http://127.0.0.1:<port>/mcp`, once bound; serves until killed (SIGTERM
    /// flushes the record) or the deadline.
    Http(HttpArgs),
    /// Serve one scenario over legacy HTTP+SSE (2024-11-05) on 127.0.0.1: a GET stream that
    /// sends the `endpoint` event, and the POST endpoint. Prints
    /// `listening http://127.0.0.1:<port>/sse` once bound.
    LegacySse(HttpArgs),
    /// Load and validate scenario files; print each error as file:line:column: message.
    Check {
        /// Scenario files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format.
    Schema,
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

fn serve_http(args: HttpArgs, flavour: Flavour) -> i32 {
    let scenario = match crate::load::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => return fail(&e),
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
    if let Err(e) = std::fs::create_dir_all(&args.run_dir) {
        return fail(&MockError::io(format!("creating run dir {}", args.run_dir.display()), e));
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4))
        .max(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&MockError::io("starting the runtime", e)),
    };
    let served = runtime.block_on(async {
        // Signal handlers go in before the `listening` line: whoever reads it may stop us at once.
        let shutdown = Shutdown::process(Duration::from_millis(args.deadline_ms));
        let addr = format!("127.0.0.1:{}", args.port);
        let listener = TcpListener::bind(&addr).await.map_err(|source| MockError::Bind { addr, source })?;
        let server = crate::http::Server::start(&scenario, &args.run_dir, flavour, listener)?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening http://127.0.0.1:{}{}", server.port(), flavour.path())
            .and_then(|()| out.flush())
            .map_err(|e| MockError::io("writing the listening line", e))?;
        drop(out);
        server.serve(shutdown).await
    });
    finish(runtime, served)
}

fn serve_stdio(scenario: PathBuf, run_dir: PathBuf, deadline_ms: u64) -> i32 {
    let scenario = match crate::load::load(&scenario) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if let Err(e) = std::fs::create_dir_all(&run_dir) {
        return fail(&MockError::io(format!("creating run dir {}", run_dir.display()), e));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&MockError::io("starting the runtime", e)),
    };
    let served = runtime.block_on(async {
        let shutdown = Shutdown::process(Duration::from_millis(deadline_ms));
        crate::stdio::serve(&scenario, &run_dir, Pipes::process(), shutdown).await
    });
    finish(runtime, served)
}

/// The process edge: drops the runtime without waiting for its tasks (the stdin reader is
/// a blocking read that never returns by itself), raises the signal the mock ended with,
/// if any, and returns the exit code.
fn finish(runtime: tokio::runtime::Runtime, served: Result<ExitReason, MockError>) -> i32 {
    runtime.shutdown_background();
    let reason = match served {
        Ok(reason) => reason,
        Err(e) => return fail(&e),
    };
    if let Some(sig) = reason.signal {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), sig);
        // A signal the process catches (SIGTERM has a handler) does not end it: exit then.
        std::thread::sleep(Duration::from_millis(100));
    }
    reason.code
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
    match cli.command {
        Command::Stdio { scenario, run_dir, deadline_ms } => serve_stdio(scenario, run_dir, deadline_ms),
        Command::Http(args) => serve_http(args, Flavour::StreamableHttp),
        Command::LegacySse(args) => serve_http(args, Flavour::LegacySse),
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
