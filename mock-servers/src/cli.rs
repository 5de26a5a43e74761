//! The `mcp-mock` command line. All configuration comes through argv, because several SDK
//! clients give the server they spawn no environment. `mcp-harness mock …` runs the same code.

use crate::error::MockError;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

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
    /// Load and validate scenario files; print each error as file:line:column: message.
    Check {
        /// Scenario files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format.
    Schema,
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
        Command::Stdio { scenario, run_dir, deadline_ms } => {
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
            match runtime.block_on(crate::stdio::serve(&scenario, &run_dir, Duration::from_millis(deadline_ms))) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
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
            println!("{}", crate::schema::schema_json());
            0
        }
    }
}

fn fail(e: &MockError) -> i32 {
    eprintln!("mcp-mock: {e}");
    2
}
